#!/bin/sh
# Memory per GPU, by kind, from a training `llmsim sweep` CSV, for
# plots/memory.gp:
#   ./llmsim sweep configs/train-llama3-70b-64xh100.cfg \
#       --vary parallel.zero=0,1,2,3 \
#       --vary parallel.recompute=none,selective,full --out mem.csv -j 2
#   plots/memory.sh mem.csv memory.dat
# Columns are found by their header names.  Rows whose status is not ok
# are skipped.  One line per row, in the CSV's order, sizes in GiB:
#   label1 label2 weights gradients optimizer activations overhead
#   total capacity gpu
# label1 and label2 (quoted) name the point from the sweep's varied axes:
# parallel.zero as "ZeRO-z", parallel.recompute as its value, any other
# axis as "key=value"; the first axis is label1, the rest, joined by
# ", ", label2 ("-" when there is no second axis).  total is the sum of
# the five kinds (the peak, memory_peak_bytes); capacity is
# gpu_memory_bytes; gpu is the GPU's name.
in=$1 out=$2
[ -n "$in" ] && [ -n "$out" ] && [ $# -eq 2 ] || {
    echo "usage: plots/memory.sh IN.csv OUT.dat" >&2
    exit 1
}
[ -r "$in" ] || { echo "memory.sh: cannot read $in" >&2; exit 1; }
tmp=$(mktemp "$out.tmp.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT

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
# one varied value as a tick label
function axis(k, v) {
    if (k == "parallel.zero") return "ZeRO-" v
    if (k == "parallel.recompute") return v
    sub(/^.*\./, "", k)
    return k "=" v
}
function gib(x) { return x / 1073741824 }
BEGIN {
    nk = split("weights gradients optimizer activations overhead", kind, " ")
}
NR == 1 {
    nh = csvsplit($0, h)
    for (i = 1; i <= nh; i++) col[h[i]] = i
    need = "status gpu_memory_bytes"
    for (k = 1; k <= nk; k++) need = need " memory_breakdown_bytes." kind[k]
    nn = split(need, want, " ")
    for (k = 1; k <= nn; k++)
        if (!(want[k] in col)) {
            print "memory.sh: " src " has no " want[k] " column" \
                " (not a training sweep?)" > "/dev/stderr"
            bad = 1; exit 2
        }
    first = ("point" in col) ? col["point"] + 1 : 1
    print "# memory per GPU (GiB) from " src
    print "# label1 label2 weights gradients optimizer activations overhead total capacity gpu"
    next
}
{
    csvsplit($0, f)
    if (f[col["status"]] != "ok") next
    l1 = ""; l2 = ""
    for (i = first; i < col["status"]; i++) if (h[i] != "sweep")
        if (l1 == "") l1 = axis(h[i], f[i])
        else l2 = l2 (l2 != "" ? ", " : "") axis(h[i], f[i])
    if (l1 == "") l1 = "point " f[1]
    if (l2 == "") l2 = "-"
    gsub(/"/, "", l1); gsub(/"/, "", l2)
    line = "\"" l1 "\" \"" l2 "\""
    tot = 0
    for (k = 1; k <= nk; k++) {
        v = gib(f[col["memory_breakdown_bytes." kind[k]]])
        tot += v
        line = line sprintf(" %.4f", v)
    }
    g = ("gpu" in col) ? f[col["gpu"]] : ""
    gsub(/[" ]/, "", g)
    if (g == "") g = "GPU"
    print line sprintf(" %.4f %.4f", tot, gib(f[col["gpu_memory_bytes"]])) " \"" g "\""
    rows++
}
END {
    if (bad) exit 2
    if (!rows) {
        print "memory.sh: no row of " src " has status ok" > "/dev/stderr"
        exit 1
    }
}' "$in" >"$tmp" || exit 1
chmod 644 "$tmp"
mv "$tmp" "$out"
