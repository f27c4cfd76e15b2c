#!/bin/sh
# llama-gemms.sh — write the GEMM shapes of a Llama layer's four linear layers (QKV, output
# projection, MLP up (gate and up fused), MLP down) for Llama-2-7B, Llama-2-70B, Llama-3-8B
# and Llama-3-70B at tensor parallel 1, 2, 4 and 8, over a fine sweep of token counts: the
# shapes of calib/vidur's traces (cmd_calibrate.c row_points), on a grid dense enough to show
# where cuBLAS's tile and wave steps fall.  One "m n k" per line for `gemm_bench --shapes`;
# with --fp8, only the largest and smallest layers (Llama-3-70B at TP 8, Llama-3-8B at TP 1).
#
#   calib/cuda/llama-gemms.sh [--fp8 | --fp8-tp1] > FILE
set -eu
models='llama-2-7b 4096 32 32 11008
llama-2-70b 8192 64 8 28672
llama-3-8b 4096 32 8 14336
llama-3-70b 8192 64 8 28672'
tps='1 2 4 8'
if [ "${1:-}" = --fp8 ]; then
    models='llama-3-8b 4096 32 8 14336 1
llama-3-70b 8192 64 8 28672 8'
fi
# --fp8-tp1: Llama-3-8B and Llama-2-70B at TP 1, tokens in multiples of 16 (FP8 needs them)
# up to 8,192: the decode batches and prefill chunks of an FP8 serving engine
if [ "${1:-}" = --fp8-tp1 ]; then
    models='llama-3-8b 4096 32 8 14336 1
llama-2-70b 8192 64 8 28672 1'
    tokens() { echo 16 32 64 128 256 384 512 768 1024 2048 4096 8192; }
else
tokens() {
    echo 1 2 4 8 16 24 32 48 64
    seq 80 16 512
    seq 544 32 1024
    seq 1088 64 2048
    seq 2304 256 4096
    echo 6144 8192 12288 16384
}
fi
# a shape two models share is listed once, under the first
echo "$models" | while read -r name h heads kv f only_tp; do
    for tp in ${only_tp:-$tps}; do
        hd=$((h / heads)) q=$((h / tp))
        if [ "$kv" -ge "$tp" ]; then kvw=$((kv / tp * hd)); else kvw=$hd; fi
        echo "# $name tp $tp: qkv, out, up (gate+up), down"
        for m in $(tokens); do
            echo "$m $((q + 2 * kvw)) $h"
            echo "$m $h $q"
            echo "$m $((2 * f / tp)) $h"
            echo "$m $h $((f / tp))"
        done
    done
done | awk '/^#/ || !seen[$0]++'
