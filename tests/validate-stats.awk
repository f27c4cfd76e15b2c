# Functions shared by the awk programs of tests/validate-compare.sh and
# tests/validate-doc.sh, which put this file's text in front of their own
# (POSIX awk has no include).  Errors are percentages, as
# validation-report.tsv gives them: "-11.0", "200.0", or "nan" when llmsim
# gave nothing.

function abs(x) {
    return x < 0 ? -x : x
}

# 1 when e is an error llmsim gave (a number), 0 for "nan" or anything else
function simulated(e) {
    return e ~ /^[-+]?[0-9]+(\.[0-9]*)?$/
}

# Median of v[1..k], k >= 1.  Sorts v in place: insertion sort, O(k^2) on
# a suite's cases (at most a few hundred).
function median(v, k,    i, j, x) {
    for (i = 2; i <= k; i++) {
        x = v[i]
        for (j = i - 1; j > 0 && v[j] > x; j--)
            v[j + 1] = v[j]
        v[j + 1] = x
    }
    return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
