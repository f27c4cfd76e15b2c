#!/usr/bin/env python3
"""torch_memops.py - kernel times of a transformer layer's memory-bound ops as PyTorch runs
them (bf16), over token counts from 1 to 16,384: the kinds of tests/validation/kernel-ops.tsv
measured on a GPU at hand, 8 KB to 1.9 GB per call.

Kinds (hidden h in {4096, 8192}; intermediate f in {14336, 28672}):
  norm        F.rms_norm(x[T, h], (h,), w)           row h
  add         x[T, h] + y[T, h]                     reads 2, row 0
  activation  F.glu(x[T, 2f])  (a * sigmoid(b): the memory traffic of a gated SiLU) row f, reads 2
  embedding   F.embedding(ids[T], W[128256, h])      row h

Each shape: 5 warm-up calls, then 20 calls under torch.profiler; time_us is the CUDA kernel
time per call (the profiler's device time of every kernel the calls ran, over 20, as Vidur's
traces count it), kernels the kernels per call. A shape that fails is skipped with a note.

    torch_memops.py --out FILE [--gpu-name NAME]

Output: '#' comment lines, then kind tokens row elems reads kernels time_us source.
"""
import argparse
import datetime
import sys

import torch
import torch.nn.functional as F

TOKENS = [1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
CALLS = 20


def kernel_time(fn):
    """(kernel us per call, kernels per call) from the profiler's device events."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(CALLS):
            fn()
        torch.cuda.synchronize()
    total_us, count = 0.0, 0
    for e in prof.key_averages():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = e.self_cuda_time_total
        total_us += t
        count += e.count
    return total_us / CALLS, count / CALLS


def shapes():
    dt = torch.bfloat16
    for h, f in ((4096, 14336), (8192, 28672)):
        w = torch.rand(h, device="cuda", dtype=dt)
        emb = torch.rand(128256, h, device="cuda", dtype=dt)
        for t in TOKENS:
            x = torch.rand(t, h, device="cuda", dtype=dt)
            y = torch.rand(t, h, device="cuda", dtype=dt)
            yield "norm", t, h, t * h, 1, lambda x=x, w=w, h=h: F.rms_norm(x, (h,), w, 1e-5)
            yield "add", t, 0, t * h, 2, lambda x=x, y=y: x + y
            ids = torch.randint(0, 128256, (t,), device="cuda")
            yield "embedding", t, h, t * h, 1, lambda ids=ids, emb=emb: F.embedding(ids, emb)
            g = torch.rand(t, 2 * f, device="cuda", dtype=dt)
            yield "activation", t, f, t * f, 2, lambda g=g: F.glu(g, dim=-1)
            del x, y, ids, g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu-name", default="(not given)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_memops.py: no CUDA GPU visible", file=sys.stderr)
        return 2
    dev = torch.cuda.get_device_name(0)
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    src = f"measured torch_memops {day} {dev} torch {torch.__version__} CUDA {torch.version.cuda}"
    rows = 0
    with open(a.out, "w") as out:
        out.write("# torch_memops.py: memory-bound ops of a transformer layer through PyTorch, bf16,"
                  f" kernel time per call from torch.profiler over {CALLS} calls\n")
        out.write(f"# device {dev}; llmsim gpu {a.gpu_name}; activation = F.glu (a gated SiLU's traffic)\n")
        out.write("kind\ttokens\trow\telems\treads\tkernels\ttime_us\tsource\n")
        for kind, t, row, elems, reads, fn in shapes():
            try:
                us, k = kernel_time(fn)
            except Exception as e:  # one shape's failure keeps the others
                print(f"torch_memops.py: skip {kind} {t}x{row}: {e}", file=sys.stderr)
                continue
            out.write(f"{kind}\t{t}\t{row}\t{elems}\t{reads}\t{k:.2f}\t{us:.3f}\t{src}\n")
            out.flush()
            rows += 1
    print(f"torch_memops.py: {rows} rows -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
