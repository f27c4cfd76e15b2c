#!/bin/sh
# run.sh — run llmsim's CUDA calibration microbenchmarks on this machine's GPU(s).
#
#   calib/cuda/run.sh GPU_NAME OUTDIR PEAK_BF16 PEAK_FP16 PEAK_FP8 PEAK_TF32 PEAK_FP32 HBM_GBps PCIE_GBps
#
# GPU_NAME is llmsim's catalog name (recorded in the tables' comments); the peaks are the
# datasheet dense TFLOPS of each dtype (0 = the GPU does not support it: skipped), HBM_GBps
# and PCIE_GBps the datasheet memory and host-link bandwidths (1e9 B/s). `llmsim calibrate
# --run --gpu NAME` fills these in from the GPU catalog.
#
# Writes, for what was built (make -C calib/cuda) and what the GPU supports:
#   OUTDIR/gemm.tsv       gemm_bench, one run per supported dtype, merged into one table
#   OUTDIR/hbm.tsv        hbm_bench (copy/triad/read over size, h2d/d2h)
#   OUTDIR/launch.tsv     hbm_bench (launch, sync)
#   OUTDIR/attention.tsv  attn_bench (bf16, or fp16 when the GPU has no bf16)
#   OUTDIR/nccl.tsv       nccl_bench over all visible GPUs (no rows with one GPU)
# Benchmarks use device 0 (nccl_bench: all devices); pick with CUDA_VISIBLE_DEVICES.
# CALIB_QUICK=1 runs the smaller GEMM and attention grids.
# Exit status: 0 all ran, 1 some benchmark failed (the others' tables are still written),
# 2 usage error or no GPU visible.
set -u

if [ $# -ne 9 ]; then
    echo "usage: $0 GPU_NAME OUTDIR PEAK_BF16 PEAK_FP16 PEAK_FP8 PEAK_TF32 PEAK_FP32 HBM_GBps PCIE_GBps" >&2
    exit 2
fi
GPU=$1 OUT=$2 P_BF16=$3 P_FP16=$4 P_FP8=$5 P_TF32=$6 P_FP32=$7 HBM=$8 PCIE=$9
for v in "$P_BF16" "$P_FP16" "$P_FP8" "$P_TF32" "$P_FP32" "$HBM" "$PCIE"; do
    case $v in
    '' | *[!0-9.]* | *.*.*) echo "run.sh: not a non-negative number: '$v'" >&2; exit 2 ;;
    esac
done

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$HERE/build
QUICK=
[ "${CALIB_QUICK:-0}" = 1 ] && QUICK=--quick

# positive number?
pos() { awk -v x="$1" 'BEGIN { exit !(x + 0 > 0) }'; }

if [ ! -x "$BIN/hbm_bench" ]; then
    echo "run.sh: benchmarks not built; building: make -C $HERE"
    make -C "$HERE" || { echo "run.sh: build failed" >&2; exit 1; }
    if [ ! -x "$BIN/hbm_bench" ]; then
        echo "run.sh: no benchmark was built (is nvcc installed?)" >&2
        exit 1
    fi
fi

# Is a GPU visible? The probe uses the CUDA runtime the benchmarks use; nvidia-smi otherwise.
if [ -x "$BIN/gpu_probe" ]; then
    if ! "$BIN/gpu_probe"; then
        echo "run.sh: no CUDA GPU visible: nothing measured" >&2
        exit 2
    fi
elif command -v nvidia-smi >/dev/null 2>&1; then
    if ! nvidia-smi -L | grep -q '^GPU'; then
        echo "run.sh: no CUDA GPU visible (nvidia-smi -L lists none): nothing measured" >&2
        exit 2
    fi
else
    echo "run.sh: no CUDA GPU visible (no gpu_probe, no nvidia-smi): nothing measured" >&2
    exit 2
fi

mkdir -p "$OUT" || exit 2
FAILED=
WROTE=
fail() { FAILED="$FAILED $1"; echo "run.sh: $1 failed" >&2; }

# merge TSVs of the same header: every distinct comment line first, then the header, then rows
merge() {
    dst=$1; shift
    { for f in "$@"; do grep '^#' "$f"; done | awk '!seen[$0]++'
      grep -v '^#' "$1" | head -n 1
      for f in "$@"; do grep -v '^#' "$f" | tail -n +2; done; } >"$dst.tmp" && mv "$dst.tmp" "$dst"
}

# --- GEMM, one run per supported dtype
if [ -x "$BIN/gemm_bench" ]; then
    parts=
    for spec in "bf16 $P_BF16" "fp16 $P_FP16" "fp8 $P_FP8" "tf32 $P_TF32" "fp32 $P_FP32"; do
        # shellcheck disable=SC2086
        set -- $spec
        if ! pos "$2"; then
            echo "run.sh: gemm $1: peak 0, not supported by $GPU: skipped"
            continue
        fi
        echo "run.sh: gemm_bench --dtype $1 $QUICK"
        if "$BIN/gemm_bench" --dtype "$1" --peak-tflops "$2" --gpu-name "$GPU" $QUICK \
            --out "$OUT/.gemm-$1.tsv"; then
            parts="$parts $OUT/.gemm-$1.tsv"
        else
            fail "gemm_bench --dtype $1"
        fi
    done
    if [ -n "$parts" ]; then
        # shellcheck disable=SC2086
        merge "$OUT/gemm.tsv" $parts && WROTE="$WROTE gemm.tsv"
        # shellcheck disable=SC2086
        rm -f $parts
    fi
else
    echo "run.sh: gemm_bench not built (no cuBLASLt): gemm.tsv not written"
fi

# --- memory bandwidth, launch overhead, PCIe
echo "run.sh: hbm_bench"
if "$BIN/hbm_bench" --peak-GBps "$HBM" --pcie-GBps "$PCIE" --gpu-name "$GPU" \
    --out "$OUT/hbm.tsv" --launch-out "$OUT/launch.tsv"; then
    WROTE="$WROTE hbm.tsv launch.tsv"
else
    fail hbm_bench
fi

# --- attention
if [ -x "$BIN/attn_bench" ]; then
    if pos "$P_BF16"; then ADT=bf16 APEAK=$P_BF16
    elif pos "$P_FP16"; then ADT=fp16 APEAK=$P_FP16
    else ADT=
    fi
    if [ -z "$ADT" ]; then
        echo "run.sh: attention: no bf16 or fp16 peak for $GPU: skipped"
    else
        echo "run.sh: attn_bench --dtype $ADT $QUICK"
        if "$BIN/attn_bench" --dtype "$ADT" --peak-tflops "$APEAK" --gpu-name "$GPU" $QUICK \
            --out "$OUT/attention.tsv"; then
            WROTE="$WROTE attention.tsv"
        else
            fail attn_bench
        fi
    fi
fi

# --- NCCL
if [ -x "$BIN/nccl_bench" ]; then
    echo "run.sh: nccl_bench"
    if "$BIN/nccl_bench" --gpu-name "$GPU" --out "$OUT/nccl.tsv"; then
        WROTE="$WROTE nccl.tsv"
    else
        fail nccl_bench
    fi
else
    echo "run.sh: nccl_bench not built (no NCCL): nccl.tsv not written"
fi

echo "run.sh: wrote in $OUT:${WROTE:- nothing}"
if [ -n "$FAILED" ]; then
    echo "run.sh: failed:$FAILED" >&2
    exit 1
fi
exit 0
