/*
 * hbm_bench.cu — device memory bandwidth over transfer size, kernel launch overhead and
 * pinned host<->device copy bandwidth, for llmsim calibration.
 *
 * What it measures:
 *   - kinds copy (b[i] = a[i]), triad (a[i] = b[i] + s*c[i]) and read (sum of a[i], one
 *     atomicAdd per block), on fp32 arrays of N bytes each, N = 64 KiB, 256 KiB, ..., 4 GiB
 *     (x4 steps; a size is skipped when its arrays exceed 85% of the free device memory).
 *     Bytes moved per call: copy 2N, triad 3N, read N; GBps = bytes / time / 1e9;
 *     efficiency = GBps / --peak-GBps (datasheet HBM/GDDR bandwidth, passed by llmsim).
 *     The calls run back to back on one stream, so arrays that fit in L2 stay resident
 *     there: the small sizes show L2 bandwidth plus launch cost, as a short kernel in a
 *     real step does.
 *   - h2d and d2h: cudaMemcpyAsync of 256 MiB between pinned host memory (cudaMallocHost)
 *     and device memory; efficiency = GBps / --pcie-GBps when given, else 0.
 *   - launch overhead (second file, --launch-out): `launch` = mean time per launch of an
 *     empty kernel<<<1,1>>> over 20000 back-to-back launches followed by one stream
 *     synchronize (host wall clock; the launch rate a stream sustains); `sync` = mean time of
 *     one launch + cudaDeviceSynchronize over 5000 rounds (the round-trip latency).
 *
 * How: kernels are float4-vectorized grid-stride loops, 256 threads per block, as many
 * blocks as fit on the device at full occupancy (fewer for small arrays). Each kernel or copy
 * is warmed up, then timed with cudaEvents over enough back-to-back calls for >= 20 ms; the
 * median of 5 such runs is reported. Launch rows: median of 5 runs of the loops above.
 *
 * Usage: hbm_bench --peak-GBps X --out FILE --launch-out FILE [--pcie-GBps X]
 *                  [--gpu-name NAME]     (device 0; choose with CUDA_VISIBLE_DEVICES)
 * Output (TSV): '#' comment lines, then
 *   --out:        kind	bytes	time_us	GBps	efficiency	source      (kinds copy triad read h2d d2h)
 *   --launch-out: kind	time_us	source                                  (kinds launch sync)
 */
#include <stdint.h>

#include "common.h"

#define THREADS 256

__global__ void k_copy(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n4)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

__global__ void k_triad(float4 *__restrict__ a, const float4 *__restrict__ b,
                        const float4 *__restrict__ c, float s, size_t n4)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 x = b[i], y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

__global__ void k_read(const float4 *__restrict__ a, size_t n4, float *out)
{
    __shared__ float warp_sum[THREADS / 32];
    float acc = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 x = a[i];
        acc += (x.x + x.y) + (x.z + x.w);
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < THREADS / 32; w++) t += warp_sum[w];
        atomicAdd(out, t);
    }
}

__global__ void k_init(float4 *a, size_t n4, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x)
        a[i] = make_float4(v, v, v, v);
}

__global__ void k_empty(void) {}

enum { K_COPY, K_TRIAD, K_READ, K_H2D, K_D2H };

typedef struct {
    int kind;
    float4 *a, *b, *c;
    float *sum;
    void *host;
    size_t n4, bytes;
    int blocks;
} mem_ctx;

static void mem_op(void *p, cudaStream_t s)
{
    mem_ctx *m = (mem_ctx *)p;
    switch (m->kind) {
    case K_COPY: k_copy<<<m->blocks, THREADS, 0, s>>>(m->a, m->b, m->n4); break;
    case K_TRIAD: k_triad<<<m->blocks, THREADS, 0, s>>>(m->a, m->b, m->c, 0.5f, m->n4); break;
    case K_READ: k_read<<<m->blocks, THREADS, 0, s>>>(m->a, m->n4, m->sum); break;
    case K_H2D: CK(cudaMemcpyAsync(m->a, m->host, m->bytes, cudaMemcpyHostToDevice, s)); break;
    default: CK(cudaMemcpyAsync(m->host, m->a, m->bytes, cudaMemcpyDeviceToHost, s)); break;
    }
}

static int blocks_for(const void *kernel, int sms, size_t n4)
{
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, 0));
    if (per_sm < 1) per_sm = 1;
    size_t need = (n4 + THREADS - 1) / THREADS;
    size_t full = (size_t)per_sm * (size_t)sms;
    return (int)(need < full ? need : full);
}

static void row(FILE *f, const char *kind, size_t bytes, double us, double peak, const char *src)
{
    double gbps = (double)bytes / (us * 1e-6) / 1e9;
    fprintf(f, "%s\t%zu\t%.3f\t%.2f\t%.4f\t%s\n", kind, bytes, us, gbps, peak > 0.0 ? gbps / peak : 0.0,
            src);
    fflush(f);
}

static void usage(void)
{
    fprintf(stderr, "usage: hbm_bench --peak-GBps X --out FILE --launch-out FILE [--pcie-GBps X] "
                    "[--gpu-name NAME]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *launch_out = NULL, *gpu_name = NULL;
    double peak = 0.0, pcie = 0.0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cal_opt(argc, argv, &i, "--peak-GBps"))) peak = cal_atof(v, "--peak-GBps");
        else if ((v = cal_opt(argc, argv, &i, "--pcie-GBps"))) pcie = cal_atof(v, "--pcie-GBps");
        else if ((v = cal_opt(argc, argv, &i, "--out"))) out = v;
        else if ((v = cal_opt(argc, argv, &i, "--launch-out"))) launch_out = v;
        else if ((v = cal_opt(argc, argv, &i, "--gpu-name"))) gpu_name = v;
        else usage();
    }
    if (!out || !launch_out) usage();
    if (peak <= 0.0) fprintf(stderr, "hbm_bench: no --peak-GBps: device-kind efficiency written as 0\n");

    cal_require_gpu("hbm_bench");
    cal_env env;
    cal_env_init(&env, "hbm_bench", 0);

    char extra[512];
    snprintf(extra, sizeof extra,
             "# llmsim gpu: %s; peak %.1f GBps (--peak-GBps); PCIe %.1f GBps (--pcie-GBps, 0 = not given)\n"
             "# bytes = bytes moved per call (copy 2N, triad 3N, read N, h2d/d2h N); GBps = 1e9 B/s; "
             "median of 5 runs >= 20 ms\n",
             gpu_name ? gpu_name : "(not given)", peak, pcie);
    FILE *f = cal_open_tsv(out, &env, "device memory bandwidth (float4 grid-stride kernels) and pinned "
                           "host<->device copies", extra,
                           "kind\tbytes\ttime_us\tGBps\tefficiency\tsource");

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *sum = NULL;
    CK(cudaMalloc(&sum, sizeof(float)));

    static const char *names[] = {"copy", "triad", "read"};
    static const int arrays[] = {2, 3, 1};
    static const int moved[] = {2, 3, 1};
    int rows = 0;
    for (int kind = K_COPY; kind <= K_READ; kind++) {
        for (size_t n = (size_t)64 << 10; n <= ((size_t)4 << 30); n *= 4) {
            size_t free_b = 0, total_b = 0;
            CK(cudaMemGetInfo(&free_b, &total_b));
            if ((double)n * arrays[kind] > 0.85 * (double)free_b) {
                fprintf(stderr, "hbm_bench: skip %s at %zu B per array: does not fit\n", names[kind], n);
                continue;
            }
            mem_ctx m;
            memset(&m, 0, sizeof m);
            m.kind = kind;
            m.n4 = n / sizeof(float4);
            m.sum = sum;
            float4 **bufs[3] = {&m.a, &m.b, &m.c};
            for (int j = 0; j < arrays[kind]; j++) {
                CK(cudaMalloc((void **)bufs[j], n));
                k_init<<<1024, THREADS, 0, s>>>(*bufs[j], m.n4, 1.0f + j);
                CK(cudaGetLastError());
            }
            const void *kern = kind == K_COPY ? (const void *)k_copy
                               : kind == K_TRIAD ? (const void *)k_triad
                                                 : (const void *)k_read;
            m.blocks = blocks_for(kern, env.sms, m.n4);
            double us = cal_time_us(mem_op, &m, s, 3, 20.0, 5);
            row(f, names[kind], n * moved[kind], us, peak, env.source);
            rows++;
            for (int j = 0; j < arrays[kind]; j++) CK(cudaFree(*bufs[j]));
        }
    }

    /* pinned host <-> device, 256 MiB */
    {
        mem_ctx m;
        memset(&m, 0, sizeof m);
        m.bytes = (size_t)256 << 20;
        CK(cudaMalloc((void **)&m.a, m.bytes));
        CK(cudaMallocHost(&m.host, m.bytes));
        memset(m.host, 1, m.bytes);
        CK(cudaMemset(m.a, 0, m.bytes));
        CK(cudaDeviceSynchronize());
        m.kind = K_H2D;
        row(f, "h2d", m.bytes, cal_time_us(mem_op, &m, s, 2, 20.0, 5), pcie, env.source);
        m.kind = K_D2H;
        row(f, "d2h", m.bytes, cal_time_us(mem_op, &m, s, 2, 20.0, 5), pcie, env.source);
        rows += 2;
        CK(cudaFreeHost(m.host));
        CK(cudaFree(m.a));
    }
    fclose(f);

    /* launch overhead */
    snprintf(extra, sizeof extra,
             "# llmsim gpu: %s; launch = mean per launch of 20000 back-to-back empty kernels + 1 sync; "
             "sync = mean of 5000 (launch + cudaDeviceSynchronize); host wall clock, median of 5 runs\n",
             gpu_name ? gpu_name : "(not given)");
    FILE *fl = cal_open_tsv(launch_out, &env, "kernel launch overhead", extra, "kind\ttime_us\tsource");
    for (int i = 0; i < 100; i++) k_empty<<<1, 1, 0, s>>>();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    double t[5];
    for (int r = 0; r < 5; r++) {
        const int n = 20000;
        double t0 = cal_now_s();
        for (int i = 0; i < n; i++) k_empty<<<1, 1, 0, s>>>();
        CK(cudaStreamSynchronize(s));
        t[r] = (cal_now_s() - t0) / n * 1e6;
    }
    CK(cudaGetLastError());
    qsort(t, 5, sizeof t[0], cal_cmp_double);
    fprintf(fl, "launch\t%.3f\t%s\n", t[2], env.source);
    for (int r = 0; r < 5; r++) {
        const int n = 5000;
        double t0 = cal_now_s();
        for (int i = 0; i < n; i++) {
            k_empty<<<1, 1, 0, s>>>();
            CK(cudaDeviceSynchronize());
        }
        t[r] = (cal_now_s() - t0) / n * 1e6;
    }
    CK(cudaGetLastError());
    qsort(t, 5, sizeof t[0], cal_cmp_double);
    fprintf(fl, "sync\t%.3f\t%s\n", t[2], env.source);
    fclose(fl);

    CK(cudaFree(sum));
    CK(cudaStreamDestroy(s));
    fprintf(stderr, "hbm_bench: %d rows -> %s; 2 rows -> %s\n", rows, out, launch_out);
    return 0;
}
