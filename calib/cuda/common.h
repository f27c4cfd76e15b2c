/*
 * common.h — shared helpers of llmsim's CUDA calibration microbenchmarks
 * (gemm_bench, hbm_bench, attn_bench, nccl_bench).
 *
 *   CK(call)            abort with file:line and the CUDA error string
 *   cal_env             device name, driver / runtime CUDA versions, UTC date
 *   cal_source()        the `source` column: "measured <prog> <YYYY-MM-DD> <device> driver <x.y> CUDA <x.y>"
 *   cal_open_tsv()      open --out, write the '#' comment lines and the header line
 *   cal_time_us()       time one operation: warm up, grow the iteration count until one timed run
 *                       lasts >= min_ms, then the median of `repeats` runs of that many iterations,
 *                       timed with cudaEvents on one stream; returns microseconds per operation
 *
 * Plain C-style CUDA C++: header-only (static functions), no classes.
 */
#ifndef LLMSIM_CALIB_COMMON_H
#define LLMSIM_CALIB_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                   \
    do {                                                                           \
        cudaError_t ck_err_ = (call);                                              \
        if (ck_err_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,          \
                    cudaGetErrorString(ck_err_));                                  \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

typedef struct {
    char prog[32];
    char device[256];
    char date[16];  /* YYYY-MM-DD, UTC */
    char driver[16]; /* x.y: highest CUDA version the driver supports (cudaDriverGetVersion) */
    char runtime[16]; /* x.y: CUDA runtime version (cudaRuntimeGetVersion) */
    int cc_major, cc_minor, sms;
    char source[512];
} cal_env;

static inline void cal_ver(int v, char *out, size_t n)
{
    snprintf(out, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Fill `e` for device `dev` (which must exist) and make it current. */
static inline void cal_env_init(cal_env *e, const char *prog, int dev)
{
    memset(e, 0, sizeof *e);
    snprintf(e->prog, sizeof e->prog, "%s", prog);
    CK(cudaSetDevice(dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    snprintf(e->device, sizeof e->device, "%s", p.name);
    /* the name goes into a TSV cell: no tabs or newlines */
    for (char *c = e->device; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
    e->cc_major = p.major;
    e->cc_minor = p.minor;
    e->sms = p.multiProcessorCount;
    int dv = 0, rv = 0;
    CK(cudaDriverGetVersion(&dv));
    CK(cudaRuntimeGetVersion(&rv));
    cal_ver(dv, e->driver, sizeof e->driver);
    cal_ver(rv, e->runtime, sizeof e->runtime);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(e->date, sizeof e->date, "%Y-%m-%d", &tmv);
    snprintf(e->source, sizeof e->source, "measured %s %s %s driver %s CUDA %s", e->prog,
             e->date, e->device, e->driver, e->runtime);
}

/* The CUDA runtime these programs were built with needs a driver of the same major CUDA version. */
static inline void cal_driver_hint(cudaError_t err)
{
    if (err == cudaErrorInsufficientDriver) {
        int rv = 0;
        cudaRuntimeGetVersion(&rv);
        fprintf(stderr, "  (built with CUDA runtime %d.%d: the NVIDIA driver is missing or older than that "
                        "runtime needs; rebuild with the CUDA toolkit that matches the driver: "
                        "make -C calib/cuda clean all NVCC=/usr/local/cuda-X.Y/bin/nvcc)\n",
                rv / 1000, (rv % 1000) / 10);
    }
}

/* Exit 2 with a clear message when no CUDA device is visible. */
static inline void cal_require_gpu(const char *prog)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        fprintf(stderr, "%s: no CUDA GPU visible (%s)\n", prog,
                err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        cal_driver_hint(err);
        exit(2);
    }
}

/* Open `path` and write the comment lines (what, device, versions, date, extra lines given
   in `extra`, already '#'-prefixed and newline-terminated, may be NULL) and `header`. */
static inline FILE *cal_open_tsv(const char *path, const cal_env *e, const char *what, const char *extra,
                          const char *header)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s\n", e->prog, path);
        exit(1);
    }
    fprintf(f, "# %s: %s\n", e->prog, what);
    fprintf(f, "# device: %s (sm_%d%d, %d SMs)\n", e->device, e->cc_major, e->cc_minor, e->sms);
    fprintf(f, "# driver (cudaDriverGetVersion): CUDA %s; runtime (cudaRuntimeGetVersion): CUDA %s\n",
            e->driver, e->runtime);
    fprintf(f, "# date (UTC): %s\n", e->date);
    if (extra) fputs(extra, f);
    fprintf(f, "%s\n", header);
    return f;
}

typedef void (*cal_op_fn)(void *ctx, cudaStream_t s);

static inline int cal_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Microseconds per call of `op` (median of `repeats` runs, each >= min_ms of back-to-back calls). */
static inline double cal_time_us(cal_op_fn op, void *ctx, cudaStream_t s, int warmup, double min_ms,
                          int repeats)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < warmup; i++) op(ctx, s);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));

    long iters = 1;
    float ms = 0.0f;
    for (;;) {
        CK(cudaEventRecord(a, s));
        for (long i = 0; i < iters; i++) op(ctx, s);
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        CK(cudaEventElapsedTime(&ms, a, b));
        if (ms >= min_ms || iters >= (1L << 22)) break;
        long grow = ms > 0.0f ? (long)(1.25 * min_ms / ms) + 1 : 100;
        if (grow < 2) grow = 2;
        if (grow > 100) grow = 100;
        iters *= grow;
        if (iters > (1L << 22)) iters = 1L << 22;
    }

    double t[16];
    if (repeats < 1) repeats = 1;
    if (repeats > 16) repeats = 16;
    t[0] = 1000.0 * ms / (double)iters; /* the sizing run counts as the first repeat */
    for (int r = 1; r < repeats; r++) {
        CK(cudaEventRecord(a, s));
        for (long i = 0; i < iters; i++) op(ctx, s);
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        CK(cudaEventElapsedTime(&ms, a, b));
        t[r] = 1000.0 * ms / (double)iters;
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    qsort(t, (size_t)repeats, sizeof t[0], cal_cmp_double);
    return t[repeats / 2];
}

/* Wall-clock seconds (CLOCK_MONOTONIC). */
static inline double cal_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Value of option `name` ("--x") in argv, or NULL; `i` is advanced past a consumed value. */
static inline const char *cal_opt(int argc, char **argv, int *i, const char *name)
{
    if (strcmp(argv[*i], name) != 0) return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "option %s needs a value\n", name);
        exit(2);
    }
    *i += 1;
    return argv[*i];
}

static inline double cal_atof(const char *s, const char *name)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || v < 0.0) {
        fprintf(stderr, "%s: not a non-negative number: %s\n", name, s);
        exit(2);
    }
    return v;
}

#endif
