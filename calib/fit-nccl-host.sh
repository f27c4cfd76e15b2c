#!/bin/sh
# Fits calib/nccl-host.tsv call_us, the host time of one collective call for
# one GPU, to the published nccl-tests runs that one thread drove for several
# GPUs (tests/validation/collectives.tsv: role fit, launch > 1, size at most
# 64 KiB, where the host can set the pace).  The GPUs' time of each case is
# simulated once with call_us = 0; the predicted time is then
# max(GPU time, launch x call_us), and call_us is bisected in [0, 50] us
# until the median signed log error of those cases is zero.  The check cases
# of the same kind are only reported.  Prints the value; with --write, also
# writes it into calib/nccl-host.tsv.  Run from the repository root after make:
#
#   sh calib/fit-nccl-host.sh [--write]
set -u
tsv=calib/nccl-host.tsv
cases=tests/validation/collectives.tsv
. calib/fit-setup.sh
# the GPUs' time alone: call_us = 0 in the copy
awk -F'\t' -v OFS='\t' '!/^#/ && $1 == "call_us" { $2 = 0 } { print }' "$tsv" >"$data/$tsv"

# the host-boundable cases: id, role, launch, GPUs, metric, measured
awk -F'\t' '!/^#/ && $1 != "id" && $1 != "" && $11 > 1 && $10 <= 65536 {
    print $1 "\t" $4 "\t" $11 "\t" $5 "\t" $12 "\t" $13 "\t" $10 }' "$cases" >"$work/cases"
cut -f1 "$work/cases" >"$work/ids"
LLMSIM_DATA=$data REPORT=$work/report.tsv ONLY=$work/ids \
    sh tests/validate.sh --collectives-only 2>/dev/null

# the fit and its report, in time (a busbw row's time is size / algbw)
awk -F'\t' "$(cat tests/validate-stats.awk)"'
function t_of(metric, v, size, n) {
    return metric == "time_us" ? v : size / (v / (2 * (n - 1) / n)) / 1e3 }
# the errors of the cases of one role at call_us = c, one per case in v[1..k]
# (log ratio, or |ratio - 1|); returns k
function errs(role, c, logs, v,    k, i, p, x) {
    k = 0
    for (i = 1; i <= m; i++) if (ro[i] == role) {
        p = dev[i] > g[i] * c ? dev[i] : g[i] * c
        x = p / meas[i]
        v[++k] = logs ? log(x) : abs(x - 1) }
    return k }
function medlog(role, c,    v) { nk = errs(role, c, 1, v); return median(v, nk) }
function medabs(role, c,    v, k) { k = errs(role, c, 0, v); return median(v, k) }
FILENAME == ARGV[1] { role[$1] = $2; launch[$1] = $3; n[$1] = $4; metric[$1] = $5; size[$1] = $7; next }
FNR > 1 && $5 != "nan" {
    m++; id = $2; ro[m] = role[id]; g[m] = launch[id]
    meas[m] = t_of(metric[id], $4, size[id], n[id])
    dev[m] = t_of(metric[id], $5, size[id], n[id]) }
END {
    lo = 0; hi = 50
    for (it = 0; it < 40; it++) {
        c = (lo + hi) / 2
        if (medlog("fit", c) > 0) hi = c; else lo = c }
    c = sprintf("%.2f", (lo + hi) / 2)
    medlog("fit", c); nf = nk; medlog("check", c); nc = nk
    printf "call_us = %s: fit %d cases, median |error| %.1f%%; check %d cases, median |error| %.1f%%\n",
        c, nf, medabs("fit", c) * 100, nc, medabs("check", c) * 100
    print c > "/dev/stderr" }' "$work/cases" "$work/report.tsv" 2>"$work/value"
v=$(cat "$work/value")
if [ "${1-}" = --write ]; then
    awk -F'\t' -v OFS='\t' -v v="$v" '!/^#/ && $1 == "call_us" { $2 = v } { print }' "$tsv" >"$work/t" &&
        cp "$work/t" "$tsv"
fi
