/*
 * gemm_bench.cu — cuBLASLt GEMM throughput sweep, for llmsim calibration.
 *
 * What it measures: the time of one dense GEMM C[MxN] = A[MxK] B[KxN] (alpha = 1, beta = 0)
 * through cuBLASLt, for M, N, K each in {64, 128, ..., 16384} (powers of two; --quick:
 * {256, 1024, 4096, 8192}), and the resulting TFLOPS = 2MNK / time and efficiency =
 * TFLOPS / --peak-tflops (the datasheet dense peak of that dtype, passed by llmsim).
 *
 * How:
 *   - dtypes: bf16 and fp16 (inputs and output 16-bit, fp32 accumulate, CUBLAS_COMPUTE_32F);
 *     fp8 (E4M3 inputs, bf16 output, fp32 accumulate, unit scales, no fast-accumulate mode;
 *     needs sm_89+, else the table is written with no rows); tf32 (fp32 storage,
 *     CUBLAS_COMPUTE_32F_FAST_TF32); fp32 (CUBLAS_COMPUTE_32F).
 *   - layout: the "TN" form every dtype (fp8 included) supports, the one a linear layer
 *     y = x W^T uses: in cuBLASLt's column-major terms D(m x n) = A^T B with A stored k x m
 *     and B stored k x n. FLOPs do not depend on the layout.
 *   - operands are filled with pseudo-random values in [-1, 1] (zeros would draw less power
 *     and run faster than real data); 32 MiB cuBLASLt workspace.
 *   - algorithm: the heuristic is asked for its top 8 algorithms; each is timed briefly
 *     (>= 5 ms of back-to-back calls, after a warm-up call) and the fastest is kept.
 *   - timing of the kept algorithm: 3 warm-up calls, then back-to-back calls on one stream
 *     timed with cudaEvents, the iteration count grown until one run lasts >= 20 ms; the
 *     median of 5 such runs, divided by the iteration count, is time_us.
 *   - a shape is skipped (stderr note) when A + B + C + workspace exceed 40% of the free
 *     device memory at start, or when cuBLASLt offers no algorithm for it.
 *
 *   - --shapes FILE replaces the grid by the shapes listed in FILE, one "m n k" per line
 *     ('#' starts a comment), e.g. a model's layer GEMMs over a fine sweep of token counts
 *     (calib/cuda/llama-gemms.txt) where the power-of-two grid cannot show tile and wave steps.
 *   - --algo first times the heuristic's first algorithm that runs instead of the fastest of
 *     the top 8 (a framework takes one algorithm per call; PyTorch's F.linear is timed by
 *     torch_linear.py beside this file).
 *   - --fast-accum (fp8 only) sets CUBLASLT_MATMUL_DESC_FAST_ACCUM: the tensor cores'
 *     faster, less precise accumulation that inference engines and Transformer Engine's
 *     forward GEMMs use (the default keeps cuBLAS's full-precision accumulation).
 *   - --run-ms X and --runs N change the timing loop's 20 ms and 5 runs (a fine sweep of
 *     thousands of shapes uses shorter runs).
 *
 * Usage: gemm_bench --dtype bf16|fp16|fp8|tf32|fp32 --peak-tflops X --out FILE [--quick]
 *                   [--shapes FILE] [--algo best|first] [--run-ms X] [--runs N]
 *                   [--fast-accum] [--gpu-name NAME]     (device 0; choose with CUDA_VISIBLE_DEVICES)
 * Output (TSV): '#' comment lines, then
 *   dtype	m	n	k	time_us	tflops	efficiency	source
 */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "common.h"

#define CKB(call)                                                                     \
    do {                                                                              \
        cublasStatus_t ckb_st_ = (call);                                              \
        if (ckb_st_ != CUBLAS_STATUS_SUCCESS) {                                       \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, \
                    (int)ckb_st_);                                                    \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

enum { T_F32 = 0, T_F16 = 1, T_BF16 = 2, T_F8 = 3 };

/* Fill n elements of type `t` with hash-based values in [-1, 1]. */
__global__ void fill_kernel(void *p, size_t n, int t, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        float v = (float)(h & 0xffffu) / 32767.5f - 1.0f;
        switch (t) {
        case T_F32: ((float *)p)[i] = v; break;
        case T_F16: ((__half *)p)[i] = __float2half(v); break;
        case T_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v); break;
        default: ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(v); break;
        }
    }
}

static void fill(void *p, size_t n, int t, uint32_t seed)
{
    fill_kernel<<<1024, 256>>>(p, n, t, seed);
    CK(cudaGetLastError());
}

typedef struct {
    const char *name;
    cudaDataType_t ab, cd;   /* A/B type, C/D type */
    int ab_t, cd_t;          /* fill types */
    size_t ab_sz, cd_sz;     /* element bytes */
    cublasComputeType_t compute;
} dtype_info;

static const dtype_info DTYPES[] = {
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, T_BF16, T_BF16, 2, 2, CUBLAS_COMPUTE_32F},
    {"fp16", CUDA_R_16F, CUDA_R_16F, T_F16, T_F16, 2, 2, CUBLAS_COMPUTE_32F},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, T_F8, T_BF16, 1, 2, CUBLAS_COMPUTE_32F},
    {"tf32", CUDA_R_32F, CUDA_R_32F, T_F32, T_F32, 4, 4, CUBLAS_COMPUTE_32F_FAST_TF32},
    {"fp32", CUDA_R_32F, CUDA_R_32F, T_F32, T_F32, 4, 4, CUBLAS_COMPUTE_32F},
};

typedef struct {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    const cublasLtMatmulAlgo_t *algo;
    void *a, *b, *c, *ws;
    size_t ws_size;
    cublasStatus_t status;
} gemm_ctx;

/* one GEMM; a failing call is remembered in g->status (the first failure) instead of aborting,
   so that an algorithm the heuristic offered but cannot run is just passed over */
static void gemm_op(void *p, cudaStream_t s)
{
    gemm_ctx *g = (gemm_ctx *)p;
    float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t st = cublasLtMatmul(g->lt, g->op, &alpha, g->a, g->la, g->b, g->lb, &beta, g->c,
                                       g->lc, g->c, g->lc, g->algo, g->ws, g->ws_size, s);
    if (st != CUBLAS_STATUS_SUCCESS && g->status == CUBLAS_STATUS_SUCCESS) g->status = st;
}

static void usage(void)
{
    fprintf(stderr, "usage: gemm_bench --dtype bf16|fp16|fp8|tf32|fp32 --peak-tflops X --out FILE "
                    "[--quick] [--shapes FILE] [--algo best|first] [--run-ms X] [--runs N] "
                    "[--fast-accum] [--gpu-name NAME]\n");
    exit(2);
}

typedef struct {
    int m, n, k;
} shape;

static shape *grow(shape *v, int n, int *cap)
{
    if (n < *cap) return v;
    *cap = *cap ? 2 * *cap : 256;
    v = (shape *)realloc(v, sizeof *v * (size_t)*cap);
    if (!v) {
        fprintf(stderr, "gemm_bench: out of memory\n");
        exit(1);
    }
    return v;
}

/* the shapes of a --shapes file: "m n k" per line, '#' comments; exits 2 on a bad line */
static shape *read_shapes(const char *path, int *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gemm_bench: %s: cannot open\n", path);
        exit(2);
    }
    shape *v = NULL;
    int n = 0, cap = 0, line = 0;
    char buf[256];
    while (fgets(buf, sizeof buf, f)) {
        line++;
        char *hash = strchr(buf, '#');
        if (hash) *hash = 0;
        shape x;
        char extra;
        int got = sscanf(buf, "%d %d %d %c", &x.m, &x.n, &x.k, &extra);
        if (got <= 0) continue; /* blank */
        if (got != 3 || x.m <= 0 || x.n <= 0 || x.k <= 0) {
            fprintf(stderr, "gemm_bench: %s:%d: expected three positive integers m n k\n", path, line);
            exit(2);
        }
        v = grow(v, n, &cap);
        v[n++] = x;
    }
    fclose(f);
    *count = n;
    return v;
}

/* the power-of-two grid: every m, n, k of dims */
static shape *grid_shapes(const int *dims, int nd, int *count)
{
    shape *v = NULL;
    int n = 0, cap = 0;
    for (int im = 0; im < nd; im++)
        for (int in = 0; in < nd; in++)
            for (int ik = 0; ik < nd; ik++) {
                v = grow(v, n, &cap);
                v[n++] = (shape){dims[im], dims[in], dims[ik]};
            }
    *count = n;
    return v;
}

int main(int argc, char **argv)
{
    const char *dtype = NULL, *out = NULL, *gpu_name = NULL, *shapes_path = NULL;
    const char *algo = "best";
    double peak = 0.0, run_ms = 20.0;
    int quick = 0, runs = 5, fast_accum = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cal_opt(argc, argv, &i, "--dtype"))) dtype = v;
        else if ((v = cal_opt(argc, argv, &i, "--peak-tflops"))) peak = cal_atof(v, "--peak-tflops");
        else if ((v = cal_opt(argc, argv, &i, "--out"))) out = v;
        else if ((v = cal_opt(argc, argv, &i, "--gpu-name"))) gpu_name = v;
        else if ((v = cal_opt(argc, argv, &i, "--shapes"))) shapes_path = v;
        else if ((v = cal_opt(argc, argv, &i, "--algo"))) algo = v;
        else if ((v = cal_opt(argc, argv, &i, "--run-ms"))) run_ms = cal_atof(v, "--run-ms");
        else if ((v = cal_opt(argc, argv, &i, "--runs"))) runs = (int)cal_atof(v, "--runs");
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--fast-accum") == 0) fast_accum = 1;
        else usage();
    }
    if (!dtype || !out) usage();
    bool first_algo = strcmp(algo, "first") == 0;
    if (!first_algo && strcmp(algo, "best") != 0) usage();
    if (run_ms <= 0.0 || runs < 1) usage();
    if (fast_accum && strcmp(dtype, "fp8") != 0) {
        fprintf(stderr, "gemm_bench: --fast-accum is for --dtype fp8\n");
        return 2;
    }
    const dtype_info *dt = NULL;
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (strcmp(DTYPES[i].name, dtype) == 0) dt = &DTYPES[i];
    if (!dt) usage();
    if (peak <= 0.0)
        fprintf(stderr, "gemm_bench: no --peak-tflops: efficiency column written as 0\n");

    cal_require_gpu("gemm_bench");
    cal_env env;
    cal_env_init(&env, "gemm_bench", 0);

    int nshapes = 0;
    shape *shapes = NULL;
    static const int full[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    static const int small[] = {256, 1024, 4096, 8192};
    if (shapes_path) shapes = read_shapes(shapes_path, &nshapes);
    else if (quick) shapes = grid_shapes(small, 4, &nshapes);
    else shapes = grid_shapes(full, 9, &nshapes);

    char extra[1024];
    snprintf(extra, sizeof extra,
             "# llmsim gpu: %s; dtype %s; peak %.1f TFLOPS (--peak-tflops); grid %s%s\n"
             "# cuBLASLt TN GEMM, alpha 1 beta 0, %s, median of %d runs >= %g ms%s\n",
             gpu_name ? gpu_name : "(not given)", dt->name, peak,
             shapes_path ? "from " : (quick ? "quick" : "full"), shapes_path ? shapes_path : "",
             first_algo ? "the heuristic's first algorithm that runs" : "fastest of the heuristic's top 8",
             runs, run_ms, fast_accum ? ", fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM)" : "");
    FILE *f = cal_open_tsv(out, &env, "cuBLASLt GEMM C[MxN] = A[MxK] B[KxN]", extra,
                           "dtype\tm\tn\tk\ttime_us\ttflops\tefficiency\tsource");
    if (dt->ab == CUDA_R_8F_E4M3 && env.cc_major * 10 + env.cc_minor < 89) {
        fprintf(f, "# skipped: fp8 GEMM needs sm_89 or newer, this device is sm_%d%d\n",
                env.cc_major, env.cc_minor);
        fclose(f);
        fprintf(stderr, "gemm_bench: fp8 needs sm_89+: wrote %s with no rows\n", out);
        return 0;
    }

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasLtHandle_t lt;
    CKB(cublasLtCreate(&lt));
    size_t ws_size = 32u << 20;
    void *ws = NULL;
    CK(cudaMalloc(&ws, ws_size));
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    double budget = 0.4 * (double)(free_b + ws_size);

    int rows = 0, skipped = 0;
    for (int si = 0; si < nshapes; si++) {
        int m = shapes[si].m, n = shapes[si].n, k = shapes[si].k;
        size_t sa = (size_t)m * k * dt->ab_sz, sb = (size_t)k * n * dt->ab_sz;
        size_t sc = (size_t)m * n * dt->cd_sz;
        if ((double)(sa + sb + sc + ws_size) > budget) {
            fprintf(stderr, "gemm_bench: skip %s %dx%dx%d: %.2f GiB > 40%% of free memory\n",
                    dt->name, m, n, k, (double)(sa + sb + sc + ws_size) / (1u << 30));
            skipped++;
            continue;
        }
        gemm_ctx g;
        memset(&g, 0, sizeof g);
        g.lt = lt;
        g.ws = ws;
        g.ws_size = ws_size;
        CK(cudaMalloc(&g.a, sa));
        CK(cudaMalloc(&g.b, sb));
        CK(cudaMalloc(&g.c, sc));
        fill(g.a, (size_t)m * k, dt->ab_t, 0x1234u);
        fill(g.b, (size_t)k * n, dt->ab_t, 0x9876u);
        CK(cudaMemset(g.c, 0, sc));
        CK(cudaDeviceSynchronize()); /* fills ran on the legacy stream, s does not wait for it */

        /* D(m x n, ld m) = A^T B; A stored k x m (ld k), B stored k x n (ld k) */
        CKB(cublasLtMatmulDescCreate(&g.op, dt->compute, CUDA_R_32F));
        cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        CKB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        CKB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        if (fast_accum) {
            int8_t on = 1;
            CKB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &on, sizeof on));
        }
        CKB(cublasLtMatrixLayoutCreate(&g.la, dt->ab, (uint64_t)k, (uint64_t)m, (int64_t)k));
        CKB(cublasLtMatrixLayoutCreate(&g.lb, dt->ab, (uint64_t)k, (uint64_t)n, (int64_t)k));
        CKB(cublasLtMatrixLayoutCreate(&g.lc, dt->cd, (uint64_t)m, (uint64_t)n, (int64_t)m));

        cublasLtMatmulPreference_t pref;
        CKB(cublasLtMatmulPreferenceCreate(&pref));
        CKB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws_size, sizeof ws_size));
        cublasLtMatmulHeuristicResult_t res[8];
        int nres = 0;
        cublasStatus_t hst = cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.la, g.lb, g.lc, g.lc,
                                                            pref, 8, res, &nres);
        double best = -1.0;
        int best_i = -1;
        if (hst == CUBLAS_STATUS_SUCCESS) {
            for (int r = 0; r < nres; r++) {
                if (res[r].state != CUBLAS_STATUS_SUCCESS || res[r].workspaceSize > ws_size)
                    continue;
                g.algo = &res[r].algo;
                g.status = CUBLAS_STATUS_SUCCESS;
                gemm_op(&g, s); /* fails fast, before any timing loop */
                if (g.status != CUBLAS_STATUS_SUCCESS) continue;
                if (first_algo) { /* the one a framework's call gets */
                    best_i = r;
                    break;
                }
                double t = cal_time_us(gemm_op, &g, s, 1, 5.0, 1);
                if (g.status != CUBLAS_STATUS_SUCCESS) continue;
                if (best_i < 0 || t < best) {
                    best = t;
                    best_i = r;
                }
            }
        }
        if (best_i < 0) {
            fprintf(stderr, "gemm_bench: skip %s %dx%dx%d: no cuBLASLt algorithm (status %d)\n",
                    dt->name, m, n, k, (int)hst);
            skipped++;
        } else {
            g.algo = &res[best_i].algo;
            g.status = CUBLAS_STATUS_SUCCESS;
            double us = cal_time_us(gemm_op, &g, s, 3, run_ms, runs);
            if (g.status != CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr, "gemm_bench: %s %dx%dx%d: cublasLtMatmul failed (status %d)\n",
                        dt->name, m, n, k, (int)g.status);
                exit(1);
            }
            double tflops = 2.0 * m * (double)n * k / (us * 1e-6) / 1e12;
            fprintf(f, "%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.4f\t%s\n", dt->name, m, n, k, us, tflops,
                    peak > 0.0 ? tflops / peak : 0.0, env.source);
            fflush(f);
            rows++;
        }
        CKB(cublasLtMatmulPreferenceDestroy(pref));
        CKB(cublasLtMatrixLayoutDestroy(g.la));
        CKB(cublasLtMatrixLayoutDestroy(g.lb));
        CKB(cublasLtMatrixLayoutDestroy(g.lc));
        CKB(cublasLtMatmulDescDestroy(g.op));
        CK(cudaFree(g.a));
        CK(cudaFree(g.b));
        CK(cudaFree(g.c));
    }
    fclose(f);
    free(shapes);
    CK(cudaFree(ws));
    CKB(cublasLtDestroy(lt));
    CK(cudaStreamDestroy(s));
    fprintf(stderr, "gemm_bench: %s: %d rows, %d shapes skipped -> %s\n", dt->name, rows, skipped, out);
    return 0;
}
