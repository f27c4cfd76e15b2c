#!/bin/sh
# Scaling efficiency from a `llmsim sweep` CSV whose grid varies the GPU
# count (nodes), one series per interconnect, for plots/scaling.gp:
#   ./llmsim sweep configs/sweep-scaling-interconnect.cfg
#   plots/scaling.sh plots/scaling-llama2-13b-dgx-a100.csv scaling.dat
# Columns are found by their header names.  Rows whose status is not ok
# are skipped.  A series is one (net.nvlink_GBps, net.ib_gbps) pair, plus
# any other varied axis but nodes, gpus and parallel.dp (so different
# configurations never share a line).  For each series, sorted by GPUs:
#   gpus efficiency tokens_per_s_per_gpu nvlink_GBps ib_gbps
# efficiency = (tokens_per_s / gpus) / the best tokens/s per GPU of the
# whole sweep's smallest GPU count: ideal linear scaling from the fastest
# small run, so a slower interconnect's loss shows from its first point
# (normalizing each series to its own start would hide it); nvlink_GBps
# and ib_gbps are 0 where the CSV lacks the axis.
# Each series starts with a comment line naming it, then a header line
# whose 2nd column is that name in quotes (gnuplot's columnheader(2));
# series are separated by two blank lines (gnuplot's index).
in=$1 out=$2
[ -n "$in" ] && [ -n "$out" ] && [ $# -eq 2 ] || {
    echo "usage: plots/scaling.sh IN.csv OUT.dat" >&2
    exit 1
}
[ -r "$in" ] || { echo "scaling.sh: cannot read $in" >&2; exit 1; }
tmp=$(mktemp "$out.tmp.XXXXXX") || exit 1
rows=$(mktemp) || { rm -f "$tmp"; exit 1; }
trap 'rm -f "$tmp" "$rows"' EXIT
tab=$(printf '\t')

# 1. one tab-separated line per ok row: nvlink ib other gpus tokens/s/GPU
awk -v src="$in" '
# a CSV line into f[1..n], undoing "quoting" (llmsim quotes fields that
# hold commas or quotes, e.g. the error column)
function csvsplit(s, f,    n, i, c, cur, q) {
    sub(/\r$/, "", s)
    if (index(s, "\"") == 0)
        return split(s, f, ",")
    n = 0; cur = ""; q = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (q) {
            if (c != "\"") cur = cur c
            else if (substr(s, i + 1, 1) == "\"") { cur = cur c; i++ }
            else q = 0
        } else if (c == "\"") q = 1
        else if (c == ",") { f[++n] = cur; cur = "" }
        else cur = cur c
    }
    f[++n] = cur
    return n
}
NR == 1 {
    nh = csvsplit($0, h)
    for (i = 1; i <= nh; i++) col[h[i]] = i
    if (!("status" in col) || !("gpus" in col) || !("tokens_per_s" in col)) {
        print "scaling.sh: " src " lacks a status, gpus or tokens_per_s column" \
            " (not a training sweep?)" > "/dev/stderr"
        exit 2
    }
    # the varied axes sit between point (and the sweep fingerprint) and status
    nx = 0
    for (i = 2; i < col["status"]; i++)
        if (h[i] != "sweep" && h[i] != "nodes" && h[i] != "gpus" && h[i] != "parallel.dp" &&
            h[i] != "net.nvlink_GBps" && h[i] != "net.ib_gbps")
            extra[++nx] = i
    next
}
{
    csvsplit($0, f)
    if (f[col["status"]] != "ok") next
    g = f[col["gpus"]] + 0; t = f[col["tokens_per_s"]]
    if (g <= 0 || t == "") next
    nv = ("net.nvlink_GBps" in col) ? f[col["net.nvlink_GBps"]] : ""
    ib = ("net.ib_gbps" in col) ? f[col["net.ib_gbps"]] : ""
    o = ""
    for (k = 1; k <= nx; k++)
        o = o (k > 1 ? ", " : "") h[extra[k]] "=" f[extra[k]]
    printf "%s\t%s\t%s\t%d\t%.17g\n", nv, ib, o, g, t / g
}' "$in" >"$rows" || exit 1
[ -s "$rows" ] || { echo "scaling.sh: no row of $in has status ok" >&2; exit 1; }

# the reference: the best tokens/s per GPU at the smallest GPU count
base=$(awk -F "$tab" 'NR == 1 || $4 < g { g = $4; b = $5; next }
    $4 == g && $5 > b { b = $5 } END { printf "%.17g", b }' "$rows")

# 2. sorted: fastest NVLink first, then slowest IB first, then GPUs up
sort -t "$tab" -k1,1nr -k2,2n -k3,3 -k4,4n "$rows" | awk -F "$tab" -v src="$in" -v base="$base" '
BEGIN {
    print "# scaling efficiency from " src
    print "# columns: gpus efficiency tokens_per_s_per_gpu nvlink_GBps ib_gbps"
}
{
    key = $1 FS $2 FS $3
    if (key != last) {
        name = ""
        if ($1 != "") name = "NVLink " $1 " GB/s"
        if ($2 != "") name = name (name != "" ? ", " : "") "IB " $2 " Gb/s"
        if ($3 != "") name = name (name != "" ? ", " : "") $3
        if (name == "") name = "all points"
        gsub(/"/, "", name)
        printf "%s# %s\n", (NR > 1 ? "\n\n" : ""), name
        printf "gpus \"%s\" tokens_per_s_per_gpu nvlink_GBps ib_gbps\n", name
        last = key
    }
    printf "%d %.6f %.3f %s %s\n", $4, (base > 0 ? $5 / base : 0), $5,
        ($1 != "" ? $1 : 0), ($2 != "" ? $2 : 0)
}' >"$tmp" || exit 1
chmod 644 "$tmp"
mv "$tmp" "$out"
