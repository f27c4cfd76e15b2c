#!/bin/sh
# The accuracy gate of `make validate`: a fresh validation report against
# the committed baseline.
#
#   sh tests/validate-compare.sh BASELINE REPORT      compare, exit 1 on a regression
#   sh tests/validate-compare.sh -w BASELINE REPORT   write BASELINE from REPORT
#
# REPORT is what tests/validate.sh writes (validation-report.tsv: suite,
# case, metric, measured, predicted, error_pct, source); BASELINE is
# tests/validation/baseline.tsv, whose format this script alone writes and
# reads.  Against the baseline, a regression is
#   - a suite whose median |error| over the baseline's cases rises by more
#     than 0.5 percentage points;
#   - a case whose |error| rises by more than 2 percentage points;
#   - a baseline case missing from the report, measuring another metric,
#     or no longer simulated (nan);
#   - a suite with fewer cases than the baseline counts.
# Cases that improved and new cases are listed but do not fail: an
# improvement is recorded by rewriting the baseline in the same commit
# (make validate-baseline).  Exit status: 0 no regression, 1 a regression,
# 2 a file that cannot be read or written, or a baseline that is not what
# -w writes (edited by hand).
MEDIAN_PTS=0.5
CASE_PTS=2

usage() {
    echo "usage: validate-compare.sh [-w] BASELINE REPORT" >&2
    exit 2
}
write=0
[ "${1-}" = -w ] && { write=1; shift; }
[ $# -eq 2 ] || usage
base=$1 report=$2
stats=$(cat "$(dirname "$0")/validate-stats.awk") || exit 2

# A report is a header line, then rows of seven columns.
if ! awk -F'\t' 'FNR == 1 { if ($1 != "suite" || $6 != "error_pct") bad = "no header line"; next }
    NF != 7 { bad = "line " FNR ": " NF " columns, expected 7"; exit }
    END { if (FNR == 0) bad = "empty"
        if (bad != "") { print "validate-compare: " FILENAME ": " bad; exit 1 } }' "$report" >&2; then
    [ -r "$report" ] || echo "validate-compare: cannot read the report $report" >&2
    exit 2
fi

if [ "$write" = 1 ]; then
    tmp=$(mktemp "$base.tmp.XXXXXX") || exit 2
    trap 'rm -f "$tmp"' EXIT
    {
        cat <<'EOF'
# The accuracy gate's baseline: `make validate` fails when its fresh
# validation-report.tsv is worse than this: the median |error| of a suite
# up by more than 0.5 percentage points, the |error| of a case up by more
# than 2, a case missing or no longer simulated, or a suite with fewer
# cases (tests/validate-compare.sh).
#
# Made by `make validate-baseline` (tests/validate-compare.sh -w) from a
# fresh run of every case; never edit it by hand.  Rewrite it in the same
# commit as a change that moves the errors: a change that improves
# accuracy records the improvement here (make validate lists what
# improved), so that a later change cannot silently give it back; a change
# that makes a case worse on purpose says why in its commit message.
#
# One row per case: error_pct as the report gives it (signed percent, nan
# when llmsim gave nothing), cases "-".  Then one row per suite, case "*":
# its median |error| over the cases that were simulated, and its number of
# cases.
EOF
        printf 'suite\tcase\tmetric\terror_pct\tcases\n'
        awk -F'\t' "$stats"'
        FNR == 1 { next }
        {
            printf "%s\t%s\t%s\t%s\t-\n", $1, $2, $3, $6
            if (!($1 in n)) suite[++ns] = $1
            n[$1]++
            if (simulated($6)) e[$1, ++k[$1]] = abs($6)
        }
        END {
            for (i = 1; i <= ns; i++) {
                s = suite[i]
                for (j = 1; j <= k[s]; j++) v[j] = e[s, j]
                printf "%s\t*\tmedian_abs_error_pct\t%s\t%d\n", s,
                    k[s] ? sprintf("%.2f", median(v, k[s])) : "nan", n[s]
            }
        }' "$report"
    } >"$tmp" && mv "$tmp" "$base" || exit 2
    awk -F'\t' -v b="$base" '/^#/ || $1 == "suite" { next } $2 == "*" { s++; next } { c++ }
        END { printf "baseline: %s rewritten, %d cases in %d suites\n", b, c, s }' "$base"
    exit 0
fi

if [ ! -r "$base" ]; then
    echo "validate-compare: no baseline $base (make validate-baseline writes one)" >&2
    exit 2
fi
awk -F'\t' -v mpts="$MEDIAN_PTS" -v cpts="$CASE_PTS" -v bname="$base" "$stats"'
# errors have one decimal: a smaller difference is no change
function same(a, b) { return abs(a - b) < 1e-6 }
function pct(e) { return simulated(e) ? sprintf("%.1f%%", abs(e)) : "nan" }
function say(tag, what, msg) { printf "%-10s %s: %s\n", tag, what, msg }
function fail(what, msg) { say("REGRESSION", what, msg); nfail++ }
function inconsistent(msg) {
    printf "validate-compare: %s: %s; rewrite it with make validate-baseline\n", bname, msg | "cat 1>&2"
    broken = 1
    exit 2
}
function row_ok() { return NF == 5 && (simulated($4) || $4 == "nan") }

phase == "base" && (/^#/ || $1 == "suite" && $2 == "case") { next }
phase == "base" && $2 == "*" {
    if (!row_ok()) inconsistent("line " FNR ": not a suite row")
    suite[++ns] = $1; bmed[$1] = $4; bn[$1] = $5
    next
}
phase == "base" {
    if (!row_ok() || $5 != "-") inconsistent("line " FNR ": not a case row")
    key = $1 SUBSEP $2
    border[++nb] = key; bsuite[key] = $1; bcase[key] = $2; bmetric[key] = $3; berr[key] = $4
    bcount[$1]++
    if (simulated($4)) be[$1, ++bk[$1]] = abs($4)
    next
}
phase == "report" && FNR == 1 { next }
phase == "report" {
    key = $1 SUBSEP $2
    if (key in rerr) { fail($1 " " $2 " (" $3 ")", "twice in the report: case ids must be unique"); next }
    rorder[++nr] = key; rsuite[key] = $1; rcase[key] = $2; rmetric[key] = $3; rerr[key] = $6
    rcount[$1]++
    next
}

END {
    if (broken) exit 2
    # the suite rows must be what -w derives from the case rows
    for (s in bcount)
        if (!(s in bmed)) inconsistent("suite " s " has cases but no suite row")
    for (i = 1; i <= ns; i++) {
        s = suite[i]
        for (j = 1; j <= bk[s]; j++) v[j] = be[s, j]
        m = bk[s] ? sprintf("%.2f", median(v, bk[s])) : "nan"
        if (m != bmed[s] || bcount[s] + 0 != bn[s] + 0)
            inconsistent("suite " s ": its row says median " bmed[s] " over " bn[s] \
                         " cases, its case rows give " m " over " bcount[s] + 0)
    }

    # a case that cannot be compared (missing, another metric, nan) fails on
    # its own and counts at its baseline error in the median of its suite
    for (i = 1; i <= nb; i++) {
        key = border[i]; b = berr[key]; m = bmetric[key]; s = bsuite[key]
        what = s " " bcase[key] " (" m ")"
        if (simulated(b)) now[s, ++nk[s]] = abs(b)
        if (!(key in rerr)) { fail(what, "missing from the report (baseline |error| " pct(b) ")"); continue }
        if (rmetric[key] != m) { fail(what, "the report has metric " rmetric[key] " instead"); continue }
        r = rerr[key]
        if (!simulated(r)) {
            if (simulated(b)) fail(what, "could not be simulated (nan); baseline |error| " pct(b))
            else say("nan", what, "could not be simulated, nor in the baseline")
            continue
        }
        if (!simulated(b)) { say("improved", what, "simulated now, |error| " pct(r) "; baseline nan"); nbetter++; continue }
        now[s, nk[s]] = abs(r)
        d = abs(r) - abs(b)
        msg = sprintf("|error| %s -> %s, %+.1f points", pct(b), pct(r), d)
        if (d > cpts + 1e-6) fail(what, msg " (limit +" cpts ")")
        else if (same(d, 0)) continue
        else if (d < 0) { say("improved", what, msg); nbetter++ }
        else { say("worse", what, msg " (within the limit of +" cpts ")"); nworse++ }
    }

    for (i = 1; i <= ns; i++) {
        s = suite[i]
        what = "suite " s
        if (rcount[s] + 0 < bn[s] + 0)
            fail(what, sprintf("%d cases, baseline %d", rcount[s], bn[s]))
        if (nk[s] + 0 == 0 || bmed[s] == "nan") continue
        for (j = 1; j <= nk[s]; j++) v[j] = now[s, j]
        d = median(v, nk[s]) - bmed[s]
        msg = sprintf("median |error| of its baseline cases %.2f%% -> %.2f%%, %+.2f points",
                      bmed[s], bmed[s] + d, d)
        if (d > mpts + 1e-6) fail(what, msg " (limit +" mpts ")")
        else if (same(d, 0)) continue
        else if (d < 0) say("improved", what, msg)
        else say("worse", what, msg " (within the limit of +" mpts ")")
    }

    for (i = 1; i <= nr; i++) {
        key = rorder[i]
        if (key in berr) continue
        say("new", rsuite[key] " " rcase[key] " (" rmetric[key] ")", "|error| " pct(rerr[key]) ", not in the baseline")
        nnew++
    }

    printf "accuracy gate: %d cases against %s, ", nr, bname
    if (nfail) {
        printf "%d regression%s (REGRESSION above)\n", nfail, nfail == 1 ? "" : "s"
        print "accuracy gate: fix them; or, if the change means it, make validate-baseline and say why in the commit message"
        exit 1
    }
    printf "no regression"
    if (nbetter) printf ", %d improved", nbetter
    if (nworse) printf ", %d worse within the limits", nworse
    if (nnew) printf ", %d new", nnew
    printf "\n"
    if (nbetter || nworse || nnew)
        print "accuracy gate: record the new errors with make validate-baseline, in the same commit"
}' phase=base "$base" phase=report "$report"
