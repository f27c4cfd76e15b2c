#!/usr/bin/env python3
"""torch_linear.py - time torch.nn.functional.linear (y = x W^T, no bias) on the GPU for the
shapes of a gemm_bench --shapes file, as a framework's layer calls it, to check that the
cuBLASLt heuristic's first algorithm (gemm_bench --algo first) is what a PyTorch run gets.

Each shape: x [m, k] and W [n, k] in the dtype, values in [-1, 1]; 20 calls captured in one
CUDA graph (no host launch cost between them), the graph replayed after a warm-up, timed with
CUDA events until a run lasts >= 3 ms; the median of 3 runs divided by the calls is time_us.
Every --every-th shape of the file is timed (default 4).

    torch_linear.py --shapes FILE --out FILE [--dtype bf16|fp16] [--every N]
                    [--peak-tflops X] [--gpu-name NAME]

Output: the gemm_bench columns, dtype m n k time_us tflops efficiency source.
"""
import argparse
import datetime
import statistics
import sys

import torch


def time_us(fn, calls=20, min_ms=3.0, runs=3):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = 1
    while True:
        start.record()
        for _ in range(reps):
            g.replay()
        end.record()
        end.synchronize()
        if start.elapsed_time(end) >= min_ms:
            break
        reps *= 2
    times = []
    for _ in range(runs):
        start.record()
        for _ in range(reps):
            g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / (reps * calls))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--peak-tflops", type=float, default=0.0)
    ap.add_argument("--gpu-name", default="(not given)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_linear.py: no CUDA GPU visible", file=sys.stderr)
        return 2
    dt = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    shapes = []
    with open(a.shapes) as f:
        for line in f:
            line = line.split("#")[0].split()
            if line:
                shapes.append(tuple(int(v) for v in line))
    shapes = shapes[:: a.every]
    dev = torch.cuda.get_device_name(0)
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    src = f"measured torch_linear {day} {dev} torch {torch.__version__} CUDA {torch.version.cuda}"
    with open(a.out, "w") as out:
        out.write(f"# torch_linear.py: torch.nn.functional.linear, no bias, {a.dtype}, CUDA graph of 20 calls\n")
        out.write(f"# device {dev}; llmsim gpu {a.gpu_name}; peak {a.peak_tflops} TFLOPS; shapes {a.shapes} (every {a.every})\n")
        out.write("dtype\tm\tn\tk\ttime_us\ttflops\tefficiency\tsource\n")
        for m, n, k in shapes:
            x = torch.rand(m, k, device="cuda", dtype=dt) * 2 - 1
            w = torch.rand(n, k, device="cuda", dtype=dt) * 2 - 1
            us = time_us(lambda: torch.nn.functional.linear(x, w))
            tf = 2.0 * m * n * k / (us * 1e-6) / 1e12
            eff = tf / a.peak_tflops if a.peak_tflops > 0 else 0.0
            out.write(f"{a.dtype}\t{m}\t{n}\t{k}\t{us:.3f}\t{tf:.3f}\t{eff:.4f}\t{src}\n")
            out.flush()
            del x, w
    return 0


if __name__ == "__main__":
    sys.exit(main())
