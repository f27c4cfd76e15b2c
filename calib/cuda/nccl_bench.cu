/*
 * nccl_bench.cu — NCCL all_reduce bandwidth over message size, for llmsim calibration.
 * Built only when nccl.h and libnccl are found.
 *
 * What it measures: one process drives all visible GPUs (ncclCommInitAll, one stream per
 * GPU, the n calls of one collective inside ncclGroupStart/End) and times out-of-place
 * ncclAllReduce (sum, fp32) of size_bytes = 1 KiB, 4 KiB, ..., 1 GiB per GPU.
 *   algbw = size_bytes / time; busbw = algbw * 2(n-1)/n (the nccl-tests convention, which
 *   makes busbw comparable to the link bandwidth for every GPU count); both in 1e9 B/s.
 * With a single visible GPU an all_reduce moves nothing: the table is written with no rows.
 *
 * How: 5 warm-up collectives, then back-to-back collectives timed on the host wall clock
 * (start after all streams are idle, stop after all streams finished), the iteration count
 * grown until one run lasts >= 20 ms; time_us = median of 5 runs / iterations. Sizes whose
 * two buffers exceed 40% of a GPU's free memory are skipped.
 *
 * Usage: nccl_bench --out FILE [--gpus N] [--gpu-name NAME]   (--gpus: the first N visible GPUs)
 * Output (TSV): '#' comment lines, then
 *   op	gpus	size_bytes	time_us	algbw_GBps	busbw_GBps	source
 */
#include <nccl.h>

#include "common.h"

#define NCK(call)                                                                           \
    do {                                                                                    \
        ncclResult_t nck_r_ = (call);                                                       \
        if (nck_r_ != ncclSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
                    ncclGetErrorString(nck_r_));                                            \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#define MAXG 64

typedef struct {
    int n;
    ncclComm_t comm[MAXG];
    cudaStream_t st[MAXG];
    float *send[MAXG], *recv[MAXG];
    size_t count;
} ar_ctx;

static void all_reduce(ar_ctx *c)
{
    NCK(ncclGroupStart());
    for (int i = 0; i < c->n; i++)
        NCK(ncclAllReduce(c->send[i], c->recv[i], c->count, ncclFloat, ncclSum, c->comm[i], c->st[i]));
    NCK(ncclGroupEnd());
}

static void sync_all(ar_ctx *c)
{
    for (int i = 0; i < c->n; i++) {
        CK(cudaSetDevice(i));
        CK(cudaStreamSynchronize(c->st[i]));
    }
}

/* seconds for `iters` back-to-back all_reduces */
static double run(ar_ctx *c, long iters)
{
    sync_all(c);
    double t0 = cal_now_s();
    for (long k = 0; k < iters; k++) all_reduce(c);
    sync_all(c);
    return cal_now_s() - t0;
}

__global__ void k_fill(float *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)(i % 1024) * (1.0f / 1024.0f);
}

static void usage(void)
{
    fprintf(stderr, "usage: nccl_bench --out FILE [--gpus N] [--gpu-name NAME]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *gpu_name = NULL;
    int want = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cal_opt(argc, argv, &i, "--out"))) out = v;
        else if ((v = cal_opt(argc, argv, &i, "--gpus"))) want = (int)cal_atof(v, "--gpus");
        else if ((v = cal_opt(argc, argv, &i, "--gpu-name"))) gpu_name = v;
        else usage();
    }
    if (!out) usage();

    cal_require_gpu("nccl_bench");
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (want > 0 && want < ndev) ndev = want;
    if (ndev > MAXG) ndev = MAXG;
    cal_env env;
    cal_env_init(&env, "nccl_bench", 0);
    int nv = 0;
    NCK(ncclGetVersion(&nv));

    char extra[512];
    snprintf(extra, sizeof extra,
             "# llmsim gpu: %s; %d GPUs, single process (ncclCommInitAll); NCCL %d; fp32 sum, out of place\n"
             "# algbw = size_bytes / time, busbw = algbw * 2(n-1)/n, 1e9 B/s; median of 5 runs >= 20 ms\n",
             gpu_name ? gpu_name : "(not given)", ndev, nv);
    FILE *f = cal_open_tsv(out, &env, "NCCL all_reduce", extra,
                           "op\tgpus\tsize_bytes\ttime_us\talgbw_GBps\tbusbw_GBps\tsource");
    if (ndev < 2) {
        fprintf(f, "# skipped: only 1 GPU visible, an all_reduce moves no data\n");
        fclose(f);
        fprintf(stderr, "nccl_bench: only 1 GPU visible: wrote %s with no rows\n", out);
        return 0;
    }

    ar_ctx c;
    memset(&c, 0, sizeof c);
    c.n = ndev;
    /* largest size (x4 steps from 1 KiB, at most 1 GiB) whose two buffers fit every GPU */
    size_t max_bytes = (size_t)1 << 30;
    for (int i = 0; i < ndev; i++) {
        size_t fr = 0, tot = 0;
        CK(cudaSetDevice(i));
        CK(cudaMemGetInfo(&fr, &tot));
        while (max_bytes > 1024 && 2.0 * (double)max_bytes > 0.4 * (double)fr) max_bytes /= 4;
    }
    int devs[MAXG];
    for (int i = 0; i < ndev; i++) devs[i] = i;
    NCK(ncclCommInitAll(c.comm, ndev, devs));
    for (int i = 0; i < ndev; i++) {
        CK(cudaSetDevice(i));
        CK(cudaStreamCreateWithFlags(&c.st[i], cudaStreamNonBlocking));
        CK(cudaMalloc(&c.send[i], max_bytes));
        CK(cudaMalloc(&c.recv[i], max_bytes));
        k_fill<<<256, 256>>>(c.send[i], max_bytes / sizeof(float));
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }

    int rows = 0;
    for (size_t bytes = 1024; bytes <= ((size_t)1 << 30); bytes *= 4) {
        if (bytes > max_bytes) {
            fprintf(stderr, "nccl_bench: skip %zu B: buffers do not fit\n", bytes);
            continue;
        }
        c.count = bytes / sizeof(float);
        for (int w = 0; w < 5; w++) all_reduce(&c);
        long iters = 1;
        double t = run(&c, iters);
        while (t < 0.020 && iters < (1L << 20)) {
            long grow = t > 0.0 ? (long)(1.25 * 0.020 / t) + 1 : 100;
            if (grow < 2) grow = 2;
            if (grow > 100) grow = 100;
            iters *= grow;
            t = run(&c, iters);
        }
        double ts[5];
        ts[0] = t / iters;
        for (int r = 1; r < 5; r++) ts[r] = run(&c, iters) / iters;
        qsort(ts, 5, sizeof ts[0], cal_cmp_double);
        double us = ts[2] * 1e6;
        double algbw = (double)bytes / (us * 1e-6) / 1e9;
        double busbw = algbw * 2.0 * (ndev - 1) / ndev;
        fprintf(f, "all_reduce\t%d\t%zu\t%.3f\t%.3f\t%.3f\t%s\n", ndev, bytes, us, algbw, busbw, env.source);
        fflush(f);
        rows++;
    }
    fclose(f);
    for (int i = 0; i < ndev; i++) {
        CK(cudaSetDevice(i));
        CK(cudaFree(c.send[i]));
        CK(cudaFree(c.recv[i]));
        CK(cudaStreamDestroy(c.st[i]));
        NCK(ncclCommDestroy(c.comm[i]));
    }
    fprintf(stderr, "nccl_bench: %d GPUs, %d rows -> %s\n", ndev, rows, out);
    return 0;
}
