#!/bin/sh
# sweep.sh — the fine sweeps beside run.sh's grids: a Llama layer's GEMMs over token counts
# (calib/cuda/llama-gemms*.txt) through cuBLASLt's first heuristic algorithm, the same shapes
# (every 4th) through PyTorch's F.linear when torch is installed, and hbm_bench.
#
#   calib/cuda/sweep.sh GPU_NAME OUTDIR PEAK_BF16 PEAK_FP8 HBM_GBps PCIE_GBps
#
# Writes OUTDIR/gemm-llama-bf16.tsv, gemm-llama-fp8.tsv (PEAK_FP8 > 0), torch-linear-bf16.tsv,
# hbm.tsv and launch.tsv. Each step has a time limit (SWEEP_LIMIT_S, default 200 s for the bf16
# GEMMs, a quarter of it for the others); a step cut short keeps the rows it wrote.
set -u
if [ $# -ne 6 ]; then
    echo "usage: $0 GPU_NAME OUTDIR PEAK_BF16 PEAK_FP8 HBM_GBps PCIE_GBps" >&2
    exit 2
fi
GPU=$1 OUT=$2 P_BF16=$3 P_FP8=$4 HBM=$5 PCIE=$6
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$HERE/build
LIM=${SWEEP_LIMIT_S:-200}
SHORT=$((LIM / 4))
mkdir -p "$OUT" || exit 2
[ -x "$BIN/gemm_bench" ] || make -C "$HERE" || exit 1
rc=0
step() { echo "sweep.sh: $*"; "$@" || { echo "sweep.sh: failed or cut short ($?): $*" >&2; rc=1; }; }
step timeout "$SHORT" "$BIN/hbm_bench" --peak-GBps "$HBM" --pcie-GBps "$PCIE" --gpu-name "$GPU" \
    --out "$OUT/hbm.tsv" --launch-out "$OUT/launch.tsv"
step timeout "$LIM" "$BIN/gemm_bench" --dtype bf16 --peak-tflops "$P_BF16" --gpu-name "$GPU" \
    --shapes "$HERE/llama-gemms.txt" --algo first --run-ms 3 --runs 3 --out "$OUT/gemm-llama-bf16.tsv"
if awk -v x="$P_FP8" 'BEGIN { exit !(x > 0) }'; then
    step timeout "$SHORT" "$BIN/gemm_bench" --dtype fp8 --peak-tflops "$P_FP8" --gpu-name "$GPU" \
        --shapes "$HERE/llama-gemms-fp8.txt" --algo first --run-ms 3 --runs 3 \
        --out "$OUT/gemm-llama-fp8.tsv"
fi
if python3 -c 'import torch' 2>/dev/null; then
    step timeout "$SHORT" python3 "$HERE/torch_linear.py" --shapes "$HERE/llama-gemms.txt" \
        --every 4 --peak-tflops "$P_BF16" --gpu-name "$GPU" --out "$OUT/torch-linear-bf16.tsv"
else
    echo "sweep.sh: no PyTorch: torch-linear-bf16.tsv not written"
fi
exit $rc
