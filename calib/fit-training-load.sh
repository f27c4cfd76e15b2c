#!/bin/sh
# Fits calib/training-load.tsv to the published training runs: for each group
# of GPUs in the file, tensor_16bit on the group's 16-bit fit cases, then
# tensor_fp8 on its FP8 fit cases (tests/validation/training.tsv, role fit;
# a case belongs to the group of its cluster's GPU).  Each value is bisected
# in [0.3, 1] until the Hodges-Lehmann centre (hl below) of the signed log
# errors of those cases is zero (the throughput sense: positive = llmsim too
# fast), then written to every row of the group with the number of cases
# behind it.  The check cases are only reported, never fitted.  Run from the repository root after `make`:
#
#   sh calib/fit-training-load.sh            every group
#   sh calib/fit-training-load.sh hopper     one group
set -u
tsv=calib/training-load.tsv
cases=tests/validation/training.tsv
. calib/fit-setup.sh

# cluster_gpu CLUSTER: the GPU model of the cluster's topology
cluster_gpu() {
    sed -n 's/.*kind *= *"gpu";.*model *= *"\([^"]*\)".*/\1/p' \
        "topologies/$1.cfg" | head -n 1
}

# cases_of GROUP ROLE PREC: the ids of the group's cases of that role and
# precision (fp8 or 16bit), one a line
cases_of() {
    gpus=$(awk -F'\t' -v g="$1" '$5 == g { print $1 }' "$tsv" | sort -u)
    grep -v '^#' "$cases" | tail -n +2 | while IFS='	' read -r id suite stack role model cluster args rest; do
        [ "$role" = "$2" ] || continue
        case " $args " in
        *" --precision fp8 "*) p=fp8 ;;
        *) p=16bit ;;
        esac
        [ "$p" = "$3" ] || continue
        echo "$gpus" | grep -qx "$(cluster_gpu "$cluster")" && echo "$id"
    done
}

# set_value GROUP KEY VALUE CASES: rewrite the group's rows of KEY in the
# working copy (rows that borrow the value keep 0 cases)
set_value() {
    awk -F'\t' -v OFS='\t' -v g="$1" -v k="$2" -v v="$3" -v n="$4" '
        !/^#/ && $5 == g && $2 == k {
            $3 = v
            if ($7 !~ /^borrowed/) $6 = n
        }
        { print }' "$data/$tsv" >"$work/t" && cp "$work/t" "$data/$tsv"
}

# errors IDS: one signed log error (throughput sense) a case, from the
# training suite run on the working copy
errors() {
    LLMSIM_DATA=$data REPORT=$work/report.tsv ONLY=$1 \
        sh tests/validate.sh --training-only 2>/dev/null
    awk -F'\t' 'NR > 1 && $5 != "nan" {
        r = log($5 / $4)
        if ($3 == "step_s") r = -r
        print r }' "$work/report.tsv"
}

# hl: the Hodges-Lehmann estimate of a sample's centre, the median of the
# means of every pair (i <= j).  The fit zeroes it rather than the median:
# with a handful of cases split into two clusters the median sits in the
# gap and jumps from one cluster to the other when one case changes (a
# corrected FP8 case moved the median's value from 0.685 to 0.835); the
# pairwise means move by a share of what the case moved, and a far case
# (Meta's 405B runs, 40-60% off) still moves them little (the estimate
# holds until 29% of the cases are far).
hl() {
    awk '{ a[NR] = $1 } END {
        for (i = 1; i <= NR; i++) for (j = i; j <= NR; j++)
            print (a[i] + a[j]) / 2 }' | median
}

median() {
    sort -g | awk '{ a[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# summary IDS: "N cases, median |error| X%" in percent of throughput
summary() {
    if ! grep -q . "$1"; then
        printf "no cases"
        return
    fi
    errors "$1" | awk '{ print ($1 < 0 ? -$1 : $1) }' | median |
        awk -v n="$(grep -c . "$1")" '{
            printf "%d cases, median |error| %.1f%%", n, (exp($1) - 1) * 100 }'
}

fit() {
    ids=$work/ids
    cases_of "$1" fit "$3" >"$ids"
    n=$(grep -c . "$ids")
    if [ "$n" -eq 0 ]; then
        echo "$1 $2: no fit cases, value kept"
        return
    fi
    lo=0.3 hi=1
    set_value "$1" "$2" 1 "$n"
    if [ "$(errors "$ids" | hl | awk '{ print ($1 <= 0) }')" = 1 ]; then
        v=1
    else
        i=0
        while [ "$i" -lt 10 ]; do
            v=$(awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.4f", (a + b) / 2 }')
            set_value "$1" "$2" "$v" "$n"
            if [ "$(errors "$ids" | hl | awk '{ print ($1 > 0) }')" = 1 ]; then
                hi=$v
            else
                lo=$v
            fi
            i=$((i + 1))
        done
        v=$(awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.3f", (a + b) / 2 }')
    fi
    set_value "$1" "$2" "$v" "$n"
    cases_of "$1" check "$3" >"$work/check"
    echo "$1 $2 = $v: fit $(summary "$ids"); check $(summary "$work/check")"
}

groups=${*:-$(awk -F'\t' '!/^#/ && NR > 1 && $5 != "-" && $5 != "group" { print $5 }' "$tsv" | sort -u)}
for g in $groups; do
    fit "$g" tensor_16bit 16bit
    fit "$g" tensor_fp8 fp8
done
cp "$data/$tsv" "$tsv"
