#!/bin/sh
# Fits calib/attention-kernels.tsv tile_tokens and tile_tokens_causal, the
# fixed work of one (query tile, head) block of a fused attention kernel in
# keys of its inner loop (sim/cost/cost.c cost_attn_tile_share), to the
# sequence sweeps in tests/validation/kernels.tsv that are marked fit (the
# FlashAttention-3 paper's head-dim-128 panels; the other head dims are
# check cases, only reported by make validate).  At q = kv = s tokens the
# rate is E s / (s + tokens), so 1/rate = 1/E + (tokens/E)/s: a least-squares
# line of 1/rate on 1/s (the closed form, in awk)
# gives tokens = slope / intercept, per kernel,
# without and with the mask.  Prints one line per kernel; with --write, also
# writes the values into every row of that kernel.  Run from the repository
# root:
#
#   sh calib/fit-attention-tiles.sh [--write]
set -u
tsv=calib/attention-kernels.tsv
cases=tests/validation/kernels.tsv
fit=$(awk -F'\t' '
!/^#/ && $1 != "id" && $4 == "attention_fwd" && $15 != "-" && $15 != "none" &&
$21 ~ /NOT independent of calibration/ {
    g = $15 SUBSEP $14; x = 1 / $12; y = 1 / $18
    n[g]++; sx[g] += x; sy[g] += y; sxx[g] += x * x; sxy[g] += x * y
    if (!($15 in seen)) { seen[$15] = 1; order[++k] = $15 }
}
END {
    for (i = 1; i <= k; i++) {
        printf "%s", order[i]
        for (c = 0; c <= 1; c++) {
            g = order[i] SUBSEP c
            if (n[g] < 3) { printf "\t-"; continue }
            b = (n[g] * sxy[g] - sx[g] * sy[g]) / (n[g] * sxx[g] - sx[g] * sx[g])
            a = (sy[g] - b * sx[g]) / n[g]
            printf "\t%.0f", b / a
        }
        printf "\n"
    }
}' "$cases")
[ -n "$fit" ] || { echo "fit-attention-tiles: no fit rows in $cases" >&2; exit 1; }
echo "$fit" | awk -F'\t' '{ printf "%s: tile_tokens = %s, tile_tokens_causal = %s\n", $1, $2, $3 }'
[ "${1-}" = --write ] || exit 0
tmp=$(mktemp) || exit 1
echo "$fit" | awk -F'\t' -v OFS='\t' '
NR == FNR { t[$1] = $2; tc[$1] = $3; next }
/^#/ { print; next }
$1 == "kernel" { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
($1 in t) && t[$1] != "-" { $col["tile_tokens"] = t[$1]; $col["tile_tokens_causal"] = tc[$1] }
{ print }' - "$tsv" >"$tmp" && mv "$tmp" "$tsv"
