/* llmsim calibrate — fit the cost model to measured kernels (--fit), or
 * measure this machine's GPU with the CUDA microbenchmarks (--run). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_roots.h>

#include "cost/calib_fit.h"
#include "cfg/cfg.h"
#include "cli/cmd.h"
#include "cost/cost.h"
#include "base/tsv.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim calibrate --fit [--traces DIR] [--out DIR]\n"
    "       llmsim calibrate --run --gpu NAME [--out DIR]\n\n"
    "--fit  fits each GPU's GEMM and memory-bandwidth efficiency to the real\n"
    "       kernel times in calib/vidur/<gpu>/ (A100 and H100: Vidur's\n"
    "       per-operator traces, Llama shapes, TP 1-8, 1-32,768 tokens) with\n"
    "       GSL nonlinear least squares, writes calib/<gpu>/gemm.tsv and\n"
    "       hbm.tsv, then predicts every measured operator through those\n"
    "       tables and reports the median and worst error per operator.\n"
    "--run  runs the CUDA microbenchmarks (make calib builds them where nvcc\n"
    "       exists) on this machine's GPU and writes a new table set in\n"
    "       calib/<gpu>/ (the previous one is kept as calib/<gpu>.prev).\n";

#define NOPS 10
static const char *const ops[NOPS] = {
    "attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj",
    "input_layernorm", "post_attention_layernorm", "mlp_act", "add",
    "attn_rope", "emb"};
#define NGEMM 4

typedef struct points {
    fit_point *p;
    int n, cap;
} points;

static int push(points *s, fit_point x)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 4096;
        fit_point *q = realloc(s->p, sizeof *q * (size_t)cap);
        if (!q)
            return -1;
        s->p = q;
        s->cap = cap;
    }
    s->p[s->n++] = x;
    return 0;
}

/* The shapes of one Vidur row (a layer of a Llama model at TP tp); a
 * GEMM's point is the GEMM its kernel computes, m padded to whole tiles
 * (kr's calib/kernels.tsv gemm_tile_rows; kr NULL: as measured), so the fit
 * and cost.c's pricing agree. */
static void row_points(const tsv *t, int r, const int *col, const int *opc,
                       const cost_calib *kr, points *gemm, points *mem)
{
    double M = atof(tsv_get(t, r, col[0])), tp = atof(tsv_get(t, r, col[1]));
    double heads = atof(tsv_get(t, r, col[2])), kv = atof(tsv_get(t, r, col[3]));
    double h = atof(tsv_get(t, r, col[4])), f = atof(tsv_get(t, r, col[5]));
    bool gated = atoi(tsv_get(t, r, col[7])) != 0;
    double hd = h / heads, q = heads * hd / tp;
    double kvw = (kv >= tp ? kv / tp : 1) * hd;
    const double shape[NGEMM][3] = {
        {M, q + 2 * kvw, h}, {M, h, q}, {M, (gated ? 2 : 1) * f / tp, h},
        {M, h, f / tp}};
    for (int o = 0; o < NOPS; o++) {
        double ms = atof(tsv_get(t, r, opc[o]));
        if (ms <= 0)
            continue;
        fit_point x = {.op = o, .t_s = ms * 1e-3, .tokens = M};
        if (o < NGEMM) {
            x.m = kr ? cost_gemm_rows(shape[o][0], kr->gemm_tile_rows,
                                      kr->gemm_small_rows)
                     : shape[o][0];
            x.n = shape[o][1], x.k = shape[o][2];
            x.flops = 2 * x.m * x.n * x.k;
            x.bytes = 2 * (x.m * x.k + x.k * x.n + x.m * x.n);
            push(gemm, x);
            continue;
        }
        /* 16-bit values read and written by each memory-bound op */
        double vals = o <= 5 ? 2 * M * h                       /* norms */
                      : o == 6 ? (gated ? 3 : 2) * M * f / tp  /* act */
                      : o == 7 ? 3 * M * h                     /* add */
                      : o == 8 ? 2 * M * (q + kvw)             /* rope */
                               : 2 * M * h;                    /* emb */
        x.bytes = 2 * vals;
        /* the row one thread block loops over: a norm's or an embedding's
         * hidden vector, a gated activation's intermediate one, rope's q
         * and k heads of a token; the residual add and a GELU are flat */
        x.row = o <= 5 || o == 9 ? h
                : o == 6            ? (gated ? f / tp : 0)
                : o == 8            ? q + kvw
                                    : 0;
        push(mem, x);
    }
}

static int is_tsv(const struct dirent *de)
{
    return util_ends_with(de->d_name, ".tsv");
}

/* byte order, whatever the locale: the fit sums the points in file order */
static int name_order(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int load_traces(const char *dir, const cost_calib *kr, points *gemm,
                       points *mem, int *files, llm_err *e)
{
    struct dirent **names;
    int n = scandir(dir, &names, is_tsv, name_order);
    if (n < 0)
        return err_set(e, "%s: cannot open: %s (expected Vidur trace tables)",
                       dir, strerror(errno));
    int rc = 0;
    *files = 0;
    for (int f = 0; rc == 0 && f < n; f++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, names[f]->d_name);
        tsv t;
        if (tsv_load(p, &t, e)) {
            rc = -1;
            break;
        }
        static const char *const shape[8] = {
            "num_tokens", "tp", "n_head", "n_kv_head", "n_embd",
            "n_expanded_embd", "vocab_size", "gated"};
        int col[8], opc[NOPS];
        for (int i = 0; rc == 0 && i < 8; i++)
            rc = (col[i] = tsv_col(&t, shape[i], e)) < 0 ? -1 : 0;
        for (int o = 0; rc == 0 && o < NOPS; o++) {
            char name[64];
            snprintf(name, sizeof name, "%s_ms", ops[o]);
            rc = (opc[o] = tsv_col(&t, name, e)) < 0 ? -1 : 0;
        }
        for (int r = 0; rc == 0 && r < t.rows; r++)
            row_points(&t, r, col, opc, kr, gemm, mem);
        tsv_free(&t);
        (*files)++;
    }
    for (int f = 0; f < n; f++)
        free(names[f]);
    free(names);
    return rc;
}

static const double grid[] = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536};
#define NGRID ((int)(sizeof grid / sizeof grid[0]))
static const double grid_m[] = {1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 16384, 65536};
#define NGRID_M ((int)(sizeof grid_m / sizeof grid_m[0]))

/* One dtype's grid: the fitted shape times scale, and no shape above cap
 * (a fraction of the dtype's peak FLOP/s; 0: no cap) where the published
 * figure is the best of a search over shapes. */
typedef struct grid_spec {
    dtype dt;
    double scale, cap;
    char src[1024]; /* the words that say so */
    double size;    /* the fitted shape's n0, k0 times this (a sweep
                       fitted it); 0: as fitted */
} grid_spec;

/* Bytes a GEMM in dt moves: inputs in dt, outputs in 16-bit for 8-bit and
 * narrower dtypes (sim/cost/cost.c counts them so; a grid's efficiency is a
 * fraction of the roofline that count gives). */
static double gemm_bytes(dtype dt, double m, double n, double k)
{
    double ob = dtype_bytes(dt) < 2 ? 2 : dtype_bytes(dt);
    return (m * k + k * n) * dtype_bytes(dt) + m * n * ob;
}

static double grid_peak(const gpu_spec *g, dtype dt)
{
    return g->peak_flops[dt] > 0 ? g->peak_flops[dt] : g->peak_flops[DT_FP16];
}

/* A grid's kernel time at one shape: the fitted shape with its compute
 * term scaled, never faster than the best measured throughput.  Only the
 * compute term: a GEMM throughput measurement says how fast the tensor
 * cores run, not how fast a small GEMM streams its weights, which stays at
 * the fitted fraction of the GPU's own bandwidth (before, an RTX 4090
 * MAMF scale of 1.32 let the L40S stream decode weights at 100% of its
 * datasheet bandwidth, and the A40 at 1.14 x A100's fraction). */
static double grid_time(const gemm_fit *f, const gpu_spec *g,
                        const grid_spec *gs, double m, double n, double k,
                        double bytes)
{
    double peak = grid_peak(g, gs->dt), fl = 2 * m * n * k;
    gemm_fit sized = gemm_fit_sized(f, gs->size > 0 ? gs->size : 1);
    double t = gemm_fit_time(&sized, g, peak * gs->scale, n, k, fl, bytes);
    return gs->cap > 0 && fl / t > gs->cap * peak ? fl / (gs->cap * peak) : t;
}

/* A grid's efficiency (roofline time / kernel time) at one shape. */
static double grid_eff(const gemm_fit *f, const gpu_spec *g,
                       const grid_spec *gs, double m, double n, double k,
                       double bytes)
{
    double peak = grid_peak(g, gs->dt), fl = 2 * m * n * k;
    double roof = fl / peak > bytes / g->mem_bw_Bps ? fl / peak
                                                    : bytes / g->mem_bw_Bps;
    double eff = roof / grid_time(f, g, gs, m, n, k, bytes);
    return eff > 1 ? 1 : eff;
}

static int write_gemm(const char *path, const gpu_spec *g, const gemm_fit *f,
                      dtype fitted, bool measured_here, const grid_spec *gs,
                      int ngs, llm_err *e)
{
    util_outfile o;
    if (util_out_open(&o, path, e))
        return -1;
    fprintf(o.fp, "# GEMM efficiency of %s = roofline time / kernel time, on "
            "a grid of m, n, k\n# (C[m x n] = A[m x k] B[k x n]), tabulated "
            "by `llmsim calibrate --fit` from the model fitted to %s kernels:"
            "\n#   emax %.4f, n0 %.1f, k0 %.1f, bandwidth fraction "
            "%.4f, fixed %.2f us (%d measured GEMMs)\n# Other grids: the same "
            "shape, scaled to %s (source column).\n",
            g->name, dtype_name(fitted), f->emax, f->n0, f->k0, f->em,
            f->t0 * 1e6, f->n, measured_here ? "measurements"
                                             : "a published measurement");
    fprintf(o.fp, "dtype\tm\tn\tk\tefficiency\tsource\n");
    for (int d = 0; d < ngs; d++)
        for (int a = 0; a < NGRID_M; a++)
            for (int b = 0; b < NGRID; b++)
                for (int c = 0; c < NGRID; c++) {
                    double m = grid_m[a], n = grid[b], k = grid[c];
                    double by = gemm_bytes(gs[d].dt, m, n, k);
                    fprintf(o.fp, "%s\t%.0f\t%.0f\t%.0f\t%.6g\t%s\n",
                            dtype_name(gs[d].dt), m, n, k,
                            grid_eff(f, g, &gs[d], m, n, k, by), gs[d].src);
                }
    return util_out_commit(&o, e);
}

static int write_hbm(const char *path, const gpu_spec *g, const mem_fit *f,
                     double scale, const char *src, llm_err *e)
{
    util_outfile o;
    if (util_out_open(&o, path, e))
        return -1;
    fprintf(o.fp, "# Achieved fraction of %s's datasheet memory bandwidth by "
            "bytes a memory-bound kernel\n# moves, per kind of kernel, from "
            "the fitted model e(B) = emax B/(B+b0)%s:\n", g->name,
            scale != 1 ? ", scaled to a published measurement" : "");
    for (int k = 0; k < MEM_KIND_COUNT; k++)
        fprintf(o.fp, "#   %-11s emax %.4f, b0 %.0f bytes (%d measured "
                "kernels)\n", cost_mem_kind_names[k], f[k].emax * scale,
                f[k].b0, f[k].n);
    fprintf(o.fp, "kind\tbytes\tefficiency\tsource\n");
    for (int k = 0; k < MEM_KIND_COUNT; k++)
        for (double b = 4096; b <= 4.0 * (1 << 30); b *= 4) {
            double eff = f[k].emax * b / (b + f[k].b0) * scale;
            fprintf(o.fp, "%s\t%.0f\t%.5f\t%s\n", cost_mem_kind_names[k], b,
                    eff > 1 ? 1 : eff, src);
        }
    return util_out_commit(&o, e);
}

/* Vidur's memory-bound operators by kind of kernel. */
static cost_mem_kind mem_kind_of_op(int op)
{
    switch (op) {
    case 4: case 5: return MEM_NORM;
    case 6: return MEM_ACTIVATION;
    case 8: return MEM_ROPE;
    case 9: return MEM_EMBEDDING;
    default: return MEM_ELEMENTWISE;
    }
}

/* calib/published.tsv: measurements on GPUs or dtypes without traces. */
typedef struct pub {
    char gpu[48], kind[24], src[400];
    dtype dt;
    double m, n, k, value;
} pub;

static int load_published(const char *path, pub **out, int *n, llm_err *e)
{
    tsv t;
    *out = NULL;
    *n = 0;
    if (access(path, R_OK) != 0)
        return 0;
    if (tsv_load(path, &t, e))
        return -1;
    const char *names[] = {"gpu", "kind", "dtype", "m", "n", "k", "value",
                           "source"};
    int c[8], rc = 0;
    for (int i = 0; rc == 0 && i < 8; i++)
        rc = (c[i] = tsv_col(&t, names[i], e)) < 0 ? -1 : 0;
    *out = calloc((size_t)t.rows + 1, sizeof **out);
    for (int r = 0; rc == 0 && *out && r < t.rows; r++) {
        pub *p = &(*out)[*n];
        snprintf(p->gpu, sizeof p->gpu, "%s", tsv_get(&t, r, c[0]));
        snprintf(p->kind, sizeof p->kind, "%s", tsv_get(&t, r, c[1]));
        snprintf(p->src, sizeof p->src, "%s", tsv_get(&t, r, c[7]));
        p->dt = DT_COUNT;
        dtype_parse(tsv_get(&t, r, c[2]), &p->dt);
        p->m = atof(tsv_get(&t, r, c[3]));
        p->n = atof(tsv_get(&t, r, c[4]));
        p->k = atof(tsv_get(&t, r, c[5]));
        if (tsv_num(&t, r, c[6], 1e-9, 1e9, &p->value, e))
            rc = -1;
        else
            (*n)++;
    }
    tsv_free(&t);
    return rc;
}

/* A grid's time at one shape minus a measured time, as a function of the
 * logarithm of its compute scale (for GSL's root finder). */
typedef struct scale_ctx {
    const gemm_fit *f;
    const gpu_spec *g;
    const pub *p;
    double bytes, measured_s;
} scale_ctx;

static double scale_miss(double log_scale, void *arg)
{
    const scale_ctx *c = arg;
    grid_spec gs = {c->p->dt, exp(log_scale), 0, "", 0};
    return grid_time(c->f, c->g, &gs, c->p->m, c->p->n, c->p->k, c->bytes) -
           c->measured_s;
}

/* The compute scale that makes the fitted shape reproduce a published GEMM
 * on GPU g (Brent's method on its logarithm; the time falls as it grows). */
static double solve_scale(const gemm_fit *f, const gpu_spec *g, const pub *p)
{
    scale_ctx c = {f, g, p, gemm_bytes(p->dt, p->m, p->n, p->k),
                   2 * p->m * p->n * p->k / (p->value * 1e12)};
    double lo = log(1e-3), hi = log(1e3);
    if (scale_miss(hi, &c) >= 0) /* faster than its memory term allows */
        return exp(hi);
    if (scale_miss(lo, &c) <= 0)
        return exp(lo);
    gsl_function fn = {scale_miss, &c};
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!s)
        return 1;
    gsl_root_fsolver_set(s, &fn, lo, hi);
    for (int i = 0; i < 200; i++) {
        gsl_root_fsolver_iterate(s);
        if (gsl_root_test_interval(gsl_root_fsolver_x_lower(s),
                                   gsl_root_fsolver_x_upper(s), 1e-12,
                                   0) == GSL_SUCCESS)
            break;
    }
    double x = gsl_root_fsolver_root(s);
    gsl_root_fsolver_free(s);
    return exp(x);
}

/* The factor that makes the fitted shape reproduce a published GEMM on
 * GPU g, capped so that no shape beats the datasheet peak. */
static double gemm_scale(const gemm_fit *f, const gpu_spec *g, const pub *p)
{
    const grid_spec fit = {p->dt, 1, 0, "", 0};
    double s = solve_scale(f, g, p);
    /* never so far that the largest shapes would beat the roofline: a
     * measurement above the datasheet peak (a GeForce card boosting past
     * its rated clock) saturates there instead of spreading to every shape */
    double big = 65536;
    double best = grid_eff(f, g, &fit, big, big, big,
                           gemm_bytes(p->dt, big, big, big));
    return s * best > 1 ? 1 / best : s;
}

/* The throughput a gemm_ratio row stands for, for its grid's note: the
 * base's grid at the row's shape times the ratio. */
static double ratio_tflops(const pub *r, const gemm_fit *f,
                           const gpu_spec *base, const grid_spec *bgs)
{
    double by = gemm_bytes(r->dt, r->m, r->n, r->k);
    return r->value * 2 * r->m * r->n * r->k /
           grid_time(f, base, bgs, r->m, r->n, r->k, by) / 1e12;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Predicts every measured op through the written tables. */
static void report(const char *gpu, const gpu_spec *g, const cost_calib *c,
                   const points *gemm, const points *mem, double *all,
                   int *nall)
{
    printf("\n%s: error of every measured operator, predicted through the "
           "tables (kernel time, no launch;\n  the memory-bound rows through "
           "hbm.tsv's curves, which price only a GPU without sm_count and\n"
           "  boost_clock_mhz: memory-kernels.tsv's model, which prices the "
           "others, is reported last)\n", gpu);
    printf("  %-26s %7s %10s %10s %10s\n", "operator", "kernels", "median",
           "p90", "worst");
    for (int o = 0; o < NOPS; o++) {
        const points *s = o < NGEMM ? gemm : mem;
        double *err = malloc(sizeof(double) * (size_t)(s->n + 1));
        int n = 0;
        for (int i = 0; i < s->n; i++) {
            const fit_point *p = &s->p[i];
            if (p->op != o)
                continue;
            cost_op op = {.dt = DT_FP16};
            if (o < NGEMM) {
                op.kind = OP_GEMM, op.m = p->m, op.n = p->n, op.k = p->k;
                op.batch = 1;
            } else {
                op.kind = OP_ELEMENTWISE, op.elems = p->bytes / 4;
                op.reads = op.writes = 1; /* bytes = 4 x elems */
                op.mem = mem_kind_of_op(o);
            }
            cost_result r;
            llm_err e;
            if (cost_predict(c, g, &op, 0, &r, &e))
                continue;
            double x = fabs(r.kernel_s / p->t_s - 1) * 100;
            err[n++] = x;
            all[(*nall)++] = x;
        }
        qsort(err, (size_t)n, sizeof *err, cmp_d);
        if (n)
            printf("  %-26s %7d %9.1f%% %9.1f%% %9.1f%%\n", ops[o], n,
                   err[n / 2], err[(int)(n * 0.9)], err[n - 1]);
        free(err);
    }
    /* the large GEMMs (>= 100 GFLOP: compute-bound, tensor cores busy),
     * whose throughput the tables must reproduce within 10% */
    double *err = malloc(sizeof(double) * (size_t)(gemm->n + 1));
    int n = 0;
    for (int i = 0; i < gemm->n; i++) {
        const fit_point *p = &gemm->p[i];
        if (p->flops < 1e11)
            continue;
        cost_op op = {.kind = OP_GEMM, .dt = DT_FP16, .m = p->m, .n = p->n,
                      .k = p->k, .batch = 1};
        cost_result r;
        llm_err e;
        if (cost_predict(c, g, &op, 0, &r, &e) == 0)
            err[n++] = fabs(r.kernel_s / p->t_s - 1) * 100;
    }
    qsort(err, (size_t)n, sizeof *err, cmp_d);
    if (n)
        printf("  %-26s %7d %9.1f%% %9.1f%% %9.1f%%\n", "GEMMs >= 100 GFLOP", n,
               err[n / 2], err[(int)(n * 0.9)], err[n - 1]);
    free(err);
}

/* GPUs without kernel traces (calib/fit.tsv rows with derived_from):
 * tables derived from their traced GPU and scaled to published
 * measurements (calib/published.tsv). */
typedef struct fit_list {
    const cfg_fit_gpu *g;
    int n;
} fit_list;

static int write_text(const char *path, const char *text, llm_err *e)
{
    util_outfile o;
    if (util_out_open(&o, path, e))
        return -1;
    fputs(text, o.fp);
    return util_out_commit(&o, e);
}

/* Host-side launch cost is not added: the traces' kernel times already hold
 * each kernel's fixed GPU-side cost (the fits' t0 and b0), and with
 * asynchronous launches the host's cost overlaps the previous kernel. */
static int write_support(const char *dir, double attn, const char *attn_src,
                         llm_err *e)
{
    char p[PATH_MAX + 32], text[2048];
    snprintf(p, sizeof p, "%s/attention.tsv", dir);
    snprintf(text, sizeof text,
             "# FlashAttention forward: the fraction of the dense FP16/BF16 "
             "peak a fused kernel reaches\n# on long sequences; the cost "
             "model scales it down for short ones by the GEMM grid.\n"
             "kind\tpeak_fraction\tsource\nflash_fwd\t%.2f\t%s\n", attn,
             attn_src);
    if (write_text(p, text, e))
        return -1;
    snprintf(p, sizeof p, "%s/launch.tsv", dir);
    return write_text(p,
                      "# Launch overhead added to every kernel's time.  0: the "
                      "GEMM and bandwidth tables are fitted to kernel\n# times "
                      "that already contain each kernel's fixed GPU-side cost "
                      "(t0, b0 in their headers), and\n# with asynchronous "
                      "launches the host-side cost overlaps the previous "
                      "kernel.  `llmsim calibrate\n# --run` measures it on a "
                      "real GPU (kinds launch and sync).\n"
                      "kind\ttime_us\tsource\nlaunch\t0\tfolded into the "
                      "fitted kernel times (see header)\n",
                      e);
}

/* The base GPU's grids, which a derived GPU's gemm_ratio rows scale. */
typedef struct base_grids {
    const gpu_spec *g;
    const grid_spec *gs;
    int n;
} base_grids;

static bool is_kind(const pub *p, const char *kind)
{
    return strcmp(p->kind, kind) == 0;
}

static bool is_gemm_row(const pub *p, const char *gpu)
{
    return strcmp(p->gpu, gpu) == 0 &&
           (is_kind(p, "gemm_tflops") || is_kind(p, "gemm_max_tflops") ||
            is_kind(p, "gemm_ratio"));
}

/* The source column of a grid: the shape it scales, what it was scaled
 * to, and the cap that holds it. */
static void grid_note(char *buf, size_t size, const char *shape,
                      const grid_spec *x, const pub *row, double ratio_tflops,
                      const char *base)
{
    char what[200], cap[160] = "";
    if (is_kind(row, "gemm_ratio"))
        snprintf(what, sizeof what, "%.4f x %s's grid (%.1f TFLOP/s) at "
                 "%.0fx%.0fx%.0f, a ratio timed by one harness on both",
                 row->value, base, ratio_tflops, row->m, row->n, row->k);
    else
        snprintf(what, sizeof what, "%.1f TFLOP/s at %.0fx%.0fx%.0f",
                 row->value, row->m, row->n, row->k);
    if (x->cap > 0)
        snprintf(cap, sizeof cap, ", no shape above %.1f%% of peak (%s)",
                 x->cap * 100, is_kind(row, "gemm_ratio")
                                   ? "the base's cap times the ratio"
                                   : "the best of a search over shapes");
    snprintf(buf, size, "%s x %.3f to match %s%s: %s", shape, x->scale, what,
             cap, row->src);
}

/* One published row as a grid: scaled to match it at its shape, and
 * capped there where it is the best of a search over shapes (MAMF,
 * gpu_benchmark's Optuna search: no shape beats it); a ratio is the base's
 * grid times the ratio at every shape, its cap included, so the derived
 * grid keeps the base's basis (H200 FP8: Azure's cuBLASLt run on ND H200
 * v5 and ND H100 v5, against H100's MAMF-scaled grid).  bg is NULL for a
 * traced GPU. */
static int grid_from_row(const pub *row, const gemm_fit *gf,
                         const gpu_spec *g, const base_grids *bg,
                         const char *shape, grid_spec *x, llm_err *e)
{
    double peak = grid_peak(g, row->dt), tflops = 0;
    x->dt = row->dt;
    x->size = 0;
    if (is_kind(row, "gemm_ratio")) {
        const grid_spec *bgs = NULL;
        for (int i = 0; bg && i < bg->n; i++)
            if (bg->gs[i].dt == row->dt)
                bgs = &bg->gs[i];
        if (!bgs)
            return err_set(e, "calib/published.tsv: gemm_ratio for %s %s "
                              "needs a %s grid of the GPU it derives from",
                           row->gpu, dtype_name(row->dt), dtype_name(row->dt));
        double r = row->value * grid_peak(bg->g, row->dt) / peak;
        x->scale = bgs->scale * r;
        x->cap = bgs->cap * r;
        tflops = ratio_tflops(row, gf, bg->g, bgs);
    } else {
        x->scale = gemm_scale(gf, g, row);
        x->cap = is_kind(row, "gemm_max_tflops") ? row->value * 1e12 / peak
                                                  : 0;
    }
    grid_note(x->src, sizeof x->src, shape, x, row, tflops,
              bg ? bg->g->name : "");
    return 0;
}

/* The published GEMM throughputs of one dtype on GPU g (gemm_tflops rows
 * only: a sweep's points); returns how many. */
static int sweep_rows(const pub *pubs, int npub, const char *gpu, dtype dt,
                      const pub **out, int max)
{
    int n = 0;
    for (int i = 0; i < npub && n < max; i++)
        if (strcmp(pubs[i].gpu, gpu) == 0 && pubs[i].dt == dt &&
            is_kind(&pubs[i], "gemm_tflops"))
            out[n++] = &pubs[i];
    return n;
}

#define SWEEP_MAX 32

/* Several published GEMMs of one dtype (a sweep over shapes, one harness):
 * the base's shape with its compute scale and its size factor fitted to
 * them all (fit_gemm_sweep), never past the roofline at the largest
 * shape; the note gives both and the worst point's error. */
/* One dtype's GEMMs of one sweep as a grid: the shape gf with its compute
 * scale and size factor fitted to them all (fit_gemm_sweep), never past
 * the roofline at the largest shape; *worst is the worst point's error. */
static int sweep_grid(const fit_point *pt, int n, dtype dt,
                      const gemm_fit *gf, const gpu_spec *g, grid_spec *x,
                      double *worst, llm_err *e)
{
    double scale, size;
    if (fit_gemm_sweep(pt, n, g, grid_peak(g, dt), gf, &scale, &size, e))
        return -1;
    *x = (grid_spec){dt, scale, 0, "", size};
    double big = 65536;
    double best = grid_eff(gf, g, x, big, big, big,
                           gemm_bytes(x->dt, big, big, big));
    if (best >= 1)
        x->scale /= best;
    *worst = 0;
    for (int i = 0; i < n; i++) {
        double t = grid_time(gf, g, x, pt[i].m, pt[i].n, pt[i].k,
                             pt[i].bytes);
        double err = fabs(t / pt[i].t_s - 1);
        *worst = err > *worst ? err : *worst;
    }
    return 0;
}

/* Several published GEMMs of one dtype (a sweep over shapes, one harness)
 * as a grid (sweep_grid); the note gives the scale, the size and the worst
 * point's error. */
static int grid_from_sweep(const pub *const *rows, int n, const gemm_fit *gf,
                           const gpu_spec *g, const char *shape, grid_spec *x,
                           llm_err *e)
{
    fit_point pt[SWEEP_MAX];
    for (int i = 0; i < n; i++) {
        const pub *r = rows[i];
        double fl = 2 * r->m * r->n * r->k;
        pt[i] = (fit_point){.m = r->m, .n = r->n, .k = r->k, .flops = fl,
                            .bytes = gemm_bytes(r->dt, r->m, r->n, r->k),
                            .t_s = fl / (r->value * 1e12)};
    }
    double worst;
    if (sweep_grid(pt, n, rows[0]->dt, gf, g, x, &worst, e))
        return -1;
    snprintf(x->src, sizeof x->src, "%s, sizes x %.3f, compute x %.3f, "
             "fitted to %d published %s GEMMs of one sweep (worst point "
             "%.0f%% off): %s", shape, x->size, x->scale, n,
             dtype_name(x->dt), worst * 100, rows[0]->src);
    return 0;
}

/* GEMM times measured on one GPU (calib/fit.tsv gemm_measured): per dtype,
 * its points (m in whole tiles, as row_points pads a trace's) and where
 * they come from. */
typedef struct measured {
    points by_dt[DT_COUNT];
    char src[DT_COUNT][400];
} measured;

static void measured_free(measured *ms)
{
    for (int d = 0; d < DT_COUNT; d++) {
        free(ms->by_dt[d].p);
        ms->by_dt[d] = (points){0};
    }
}

static int measured_file(const char *file, const cost_calib *kr, measured *ms,
                         llm_err *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", cfg_datadir(), file);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    static const char *const names[6] = {"dtype", "m", "n", "k", "time_us",
                                         "source"};
    int c[6], rc = 0;
    for (int i = 0; rc == 0 && i < 6; i++)
        rc = (c[i] = tsv_col(&t, names[i], e)) < 0 ? -1 : 0;
    for (int r = 0; rc == 0 && r < t.rows; r++) {
        dtype dt;
        double m, n, k, us;
        if (dtype_parse(tsv_get(&t, r, c[0]), &dt) != 0) {
            rc = err_at(e, path, t.line[r], "dtype", "\"%s\" (expected a "
                        "dtype such as bf16 or fp8)", tsv_get(&t, r, c[0]));
            break;
        }
        if (tsv_num(&t, r, c[1], 1, 1e7, &m, e) ||
            tsv_num(&t, r, c[2], 1, 1e7, &n, e) ||
            tsv_num(&t, r, c[3], 1, 1e7, &k, e) ||
            tsv_num(&t, r, c[4], 1e-3, 1e9, &us, e)) {
            rc = -1;
            break;
        }
        double mp = cost_gemm_rows(m, kr->gemm_tile_rows, kr->gemm_small_rows);
        fit_point x = {.m = mp, .n = n, .k = k, .t_s = us * 1e-6,
                       .tokens = m, .flops = 2 * mp * n * k,
                       .bytes = gemm_bytes(dt, mp, n, k)};
        if (push(&ms->by_dt[dt], x)) {
            rc = err_set(e, "%s: out of memory", path);
            break;
        }
        if (!ms->src[dt][0])
            snprintf(ms->src[dt], sizeof ms->src[dt], "%s (%s)", file,
                     tsv_get(&t, r, c[5]));
    }
    tsv_free(&t);
    return rc;
}

/* Every file of a comma-separated list (fit.tsv's gemm_measured cell). */
static int load_measured(const char *list, const cost_calib *kr,
                         measured *ms, llm_err *e)
{
    memset(ms, 0, sizeof *ms);
    char buf[sizeof ((cfg_fit_gpu *)0)->gemm_measured];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save))
        if (measured_file(f, kr, ms, e)) {
            measured_free(ms);
            return -1;
        }
    return 0;
}

/* The 16-bit dtype a GPU's measurements give its shape in: bf16 where
 * there are bf16 rows, else fp16 (also with no measurements: the traces'). */
static dtype measured_base(const measured *ms)
{
    return ms->by_dt[DT_BF16].n ? DT_BF16 : DT_FP16;
}

/* GPU g's gemm_measured files (fit.tsv row d), m padded to g's tiles, with
 * enough 16-bit rows to fit a shape; *ms empty on failure. */
static int load_gpu_measured(const cfg_fit_gpu *d, const gpu_spec *g,
                             measured *ms, llm_err *e)
{
    cost_calib kr;
    memset(&kr, 0, sizeof kr);
    memset(ms, 0, sizeof *ms);
    if (cfg_load_kernel_ratios(cfg_datadir(), g->name, &kr, e) ||
        load_measured(d->gemm_measured, &kr, ms, e))
        return -1;
    int n16 = ms->by_dt[measured_base(ms)].n;
    if (n16 >= 8)
        return 0;
    measured_free(ms);
    return err_set(e, "calib/fit.tsv: %s: gemm_measured has %d bf16 or fp16 "
                      "GEMMs (expected at least 8 to fit a shape)", g->name,
                   n16);
}

/* A derived GPU's own GEMM grids from its measured GEMMs (load_gpu_measured):
 * the 16-bit rows fitted as a traced GPU's are (fit_gemm), the shape every
 * grid scales; each other dtype's rows a sweep of that shape.  gs gets the
 * grids, own the shape, done[dt] which dtypes they cover. */
static int measured_grids(const gpu_spec *g, const measured *ms,
                          gemm_fit *own, grid_spec *gs, int *ngs,
                          bool *done, llm_err *e)
{
    dtype base = measured_base(ms);
    const points *b = &ms->by_dt[base];
    if (fit_gemm(b->p, b->n, g, grid_peak(g, base), own, e))
        return -1;
    gs[0] = (grid_spec){DT_FP16, 1, 0, "", 0};
    snprintf(gs[0].src, sizeof gs[0].src, "fit to %d %s GEMMs measured on "
             "this GPU: %s", b->n, dtype_name(base), ms->src[base]);
    gs[1] = gs[0];
    gs[1].dt = DT_BF16;
    done[DT_FP16] = done[DT_BF16] = true;
    *ngs = 2;
    for (int d = 0; d < DT_COUNT; d++) {
        const points *p = &ms->by_dt[d];
        double worst;
        if (done[d] || p->n == 0 || g->peak_flops[d] <= 0)
            continue;
        grid_spec *x = &gs[(*ngs)++];
        if (sweep_grid(p->p, p->n, (dtype)d, own, g, x, &worst, e))
            return -1;
        snprintf(x->src, sizeof x->src, "shape of this GPU's %s fit, sizes x "
                 "%.3f, compute x %.3f, fitted to %d %s GEMMs measured on "
                 "this GPU (worst point %.0f%% off): %s", dtype_name(base),
                 x->size, x->scale, p->n, dtype_name((dtype)d), worst * 100,
                 ms->src[d]);
        done[d] = true;
    }
    return 0;
}

/* A derived GPU's 16-bit grids with no measurements of its own: the base's
 * shape, scaled to a published bf16/fp16 GEMM where there is one. */
static int base_grids16(const gpu_spec *g, const base_grids *bg,
                        const gemm_fit *gf, const char *src, const char *shape,
                        const pub *pubs, int npub, grid_spec *gs, llm_err *e)
{
    gs[0] = (grid_spec){DT_FP16, 1, 0, "", 0};
    snprintf(gs[0].src, sizeof gs[0].src, "shape and efficiency of %s (%s); "
             "no published %s measurement", bg->g->name, src, g->name);
    for (int i = 0; i < npub; i++) /* a published bf16/fp16 GEMM sets both */
        if (is_gemm_row(&pubs[i], g->name) &&
            (pubs[i].dt == DT_BF16 || pubs[i].dt == DT_FP16) &&
            grid_from_row(&pubs[i], gf, g, bg, shape, &gs[0], e))
            return -1;
    gs[0].dt = DT_FP16;
    gs[1] = gs[0];
    gs[1].dt = DT_BF16;
    return 0;
}

/* The grids of the other dtypes from the published rows of g, for the
 * dtypes not done yet (a sweep of 3 or more rows, else one row). */
static int published_grids(const gpu_spec *g, const base_grids *bg,
                           const gemm_fit *gf, const char *shape,
                           const pub *pubs, int npub, grid_spec *gs, int *ngs,
                           bool *done, llm_err *e)
{
    for (int i = 0; i < npub; i++) {
        const pub *r = &pubs[i];
        if (!is_gemm_row(r, g->name) || r->dt == DT_FP16 ||
            r->dt == DT_BF16 || r->dt >= DT_COUNT ||
            g->peak_flops[r->dt] <= 0 || done[r->dt])
            continue;
        const pub *rows[SWEEP_MAX];
        int n = sweep_rows(pubs, npub, g->name, r->dt, rows, SWEEP_MAX);
        if (n >= 3) { /* a sweep: one grid fitted to every point */
            done[r->dt] = true;
            if (grid_from_sweep(rows, n, gf, g, shape, &gs[(*ngs)++], e))
                return -1;
        } else if (grid_from_row(r, gf, g, bg, shape, &gs[(*ngs)++], e)) {
            return -1;
        }
    }
    return 0;
}

/* A derived GPU's bandwidth curves: the base's, scaled to a published
 * streaming bandwidth of g where there is one; *sh is the scale. */
static void derived_hbm(const gpu_spec *g, const gpu_spec *base,
                        const mem_fit *mf, const char *src, const pub *pubs,
                        int npub, double *sh, char *hsrc, size_t size)
{
    *sh = 1;
    snprintf(hsrc, size, "curves of %s (%s); no published %s bandwidth",
             base->name, src, g->name);
    for (int i = 0; i < npub; i++)
        if (strcmp(pubs[i].gpu, g->name) == 0 &&
            strcmp(pubs[i].kind, "hbm_GBps") == 0) {
            double big = 4.0 * (1 << 30);
            double e_base = mf[MEM_ELEMENTWISE].emax * big /
                            (big + mf[MEM_ELEMENTWISE].b0);
            *sh = pubs[i].value * 1e9 / g->mem_bw_Bps / e_base;
            snprintf(hsrc, size, "curves of %s x %.3f to match %.0f GB/s "
                     "streaming: %s", base->name, *sh, pubs[i].value,
                     pubs[i].src);
        }
}

/* The measured GEMMs of a GPU predicted back through the tables written
 * in dir: the median error per dtype, by tokens (the tables read back, as
 * fit_one's report reads a traced GPU's). */
static int report_measured(const gpu_spec *g, const char *dir,
                           const measured *ms, llm_err *e)
{
    cost_calib c;
    memset(&c, 0, sizeof c);
    if (cfg_load_cost_dir(dir, g, false, &c, e))
        return -1;
    int rc = 0;
    for (int d = 0; rc == 0 && d < DT_COUNT; d++) {
        const points *s = &ms->by_dt[d];
        if (!s->n)
            continue;
        double *err = malloc(sizeof(double) * (size_t)s->n * 4);
        if (!err) {
            rc = err_set(e, "out of memory reporting %d GEMMs", s->n);
            break;
        }
        int nb[4] = {0};
        for (int i = 0; i < s->n; i++) {
            const fit_point *p = &s->p[i];
            cost_op op = {.kind = OP_GEMM, .dt = (dtype)d, .m = p->tokens,
                          .n = p->n, .k = p->k, .batch = 1};
            cost_result r;
            llm_err pe;
            if (cost_predict(&c, g, &op, 0, &r, &pe))
                continue;
            int b = p->tokens <= 64 ? 1 : p->tokens <= 512 ? 2 : 3;
            double x = fabs(r.kernel_s / p->t_s - 1) * 100;
            err[(size_t)b * (size_t)s->n + (size_t)nb[b]++] = x;
            err[nb[0]++] = x;
        }
        printf("  %s: %d measured %s GEMMs through the tables, median "
               "|error|", g->name, nb[0], dtype_name((dtype)d));
        static const char *const band[4] = {"all", "1-64 tokens", "65-512",
                                            "> 512"};
        for (int b = 0; b < 4; b++) {
            double *v = err + (size_t)b * (size_t)s->n;
            qsort(v, (size_t)nb[b], sizeof *v, cmp_d);
            if (nb[b])
                printf("%s %s %.1f%%", b ? "," : "", band[b], v[nb[b] / 2]);
        }
        printf("\n");
        free(err);
    }
    cost_calib_free(&c);
    return rc;
}

static int derive(const cfg_fit_gpu *d, const base_grids *bg,
                  const gemm_fit *gf, const mem_fit *mf, const char *src,
                  const char *out, gpu_catalog *cat, const pub *pubs, int npub,
                  llm_err *e)
{
    const gpu_spec *base = bg->g;
    const gpu_spec *g = gpu_find(cat, d->gpu);
    if (!g)
        return err_set(e, "GPU %s missing from the catalog", d->gpu);
    grid_spec gs[DT_COUNT];
    int ngs = 2;
    char shape[160];
    bool done[DT_COUNT] = {false};
    gemm_fit own;
    measured ms;
    memset(&ms, 0, sizeof ms);
    int rc = 0;
    if (d->gemm_measured[0]) {
        /* measured on the GPU itself: its own shape, and published rows
         * only for the dtypes the measurements lack */
        rc = load_gpu_measured(d, g, &ms, e) ||
             measured_grids(g, &ms, &own, gs, &ngs, done, e);
        gf = &own;
        snprintf(shape, sizeof shape, "shape of %s's own fit", g->name);
    } else {
        snprintf(shape, sizeof shape, "shape of %s fit", base->name);
        rc = base_grids16(g, bg, gf, src, shape, pubs, npub, gs, e);
    }
    if (rc == 0)
        rc = published_grids(g, bg, gf, shape, pubs, npub, gs, &ngs, done, e);
    double sh;
    char hsrc[600], dir[PATH_MAX], p[PATH_MAX + 32];
    derived_hbm(g, base, mf, src, pubs, npub, &sh, hsrc, sizeof hsrc);
    snprintf(dir, sizeof dir, "%s/%s", out, g->name);
    if (rc == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
        rc = err_set(e, "%s: cannot create: %s", dir, strerror(errno));
    snprintf(p, sizeof p, "%s/gemm.tsv", dir);
    rc = rc ? rc : write_gemm(p, g, gf, measured_base(&ms),
                              d->gemm_measured[0] != 0, gs, ngs, e);
    snprintf(p, sizeof p, "%s/hbm.tsv", dir);
    rc = rc ? rc : write_hbm(p, g, mf, sh, hsrc, e);
    rc = rc ? rc : write_support(dir, d->flash_fwd, d->flash_src, e);
    if (rc == 0 && d->gemm_measured[0]) {
        printf("%s: GEMMs fitted to its own measurements (emax %.3f, half "
               "efficiency at n %.0f, k %.0f; weights stream at %.3f; "
               "%.2f us per kernel); bandwidth derived from %s x %.3f\n",
               g->name, gf->emax, gf->n0, gf->k0, gf->em,
               gf->t0 * 1e6, base->name, sh);
        rc = report_measured(g, dir, &ms, e);
    } else if (rc == 0) {
        printf("%s: derived from %s; GEMM x %.3f, bandwidth x %.3f\n",
               g->name, base->name, gs[0].scale, sh);
    }
    measured_free(&ms);
    return rc;
}

/* Fits the traced GPU fits->g[me], then writes its derived GPUs. */
static int fit_one(const char *traces, const char *out, const fit_list *fits,
                   int me, gpu_catalog *cat, const pub *pubs, int npub,
                   llm_err *e)
{
    const char *shortname = fits->g[me].traces, *gpu = fits->g[me].gpu;
    const gpu_spec *g = gpu_find(cat, gpu);
    if (!g)
        return err_set(e, "GPU %s missing from the catalog", gpu);
    char dir[PATH_MAX], odir[PATH_MAX], p[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/%s", traces, shortname);
    points gemm = {0}, mem = {0};
    cost_calib kr;
    memset(&kr, 0, sizeof kr);
    int files = 0;
    int rc = cfg_load_kernel_ratios(cfg_datadir(), gpu, &kr, e) ||
             load_traces(dir, &kr, &gemm, &mem, &files, e);
    gemm_fit gf;
    mem_fit mf[MEM_KIND_COUNT];
    if (rc == 0)
        rc = fit_gemm(gemm.p, gemm.n, g, g->peak_flops[DT_FP16], &gf, e);
    for (int k = 0; rc == 0 && k < MEM_KIND_COUNT; k++) {
        /* each kind of kernel fitted on its own operators */
        points sub = {0};
        for (int i = 0; i < mem.n; i++)
            if (mem_kind_of_op(mem.p[i].op) == (cost_mem_kind)k)
                push(&sub, mem.p[i]);
        rc = fit_mem(sub.p, sub.n, g, &mf[k], e);
        free(sub.p);
    }
    char src[400];
    snprintf(src, sizeof src, "fit to Vidur kernel traces calib/vidur/%s "
             "(%d files, %d GEMMs, %d memory-bound kernels; microsoft/vidur@"
             "7d47513, MIT)", shortname, files, gemm.n, mem.n);
    snprintf(odir, sizeof odir, "%s/%s", out, gpu);
    if (rc == 0 && mkdir(odir, 0755) != 0 && errno != EEXIST)
        rc = err_set(e, "%s: cannot create: %s", odir, strerror(errno));
    grid_spec gs[DT_COUNT];
    int ngs = 0;
    gs[ngs++] = (grid_spec){DT_FP16, 1, 0, "", 0};
    gs[ngs++] = (grid_spec){DT_BF16, 1, 0, "", 0};
    snprintf(gs[0].src, sizeof gs[0].src, "%s", src);
    snprintf(gs[1].src, sizeof gs[1].src, "%s; bf16 = fp16 (same peak)", src);
    for (int i = 0; rc == 0 && i < npub; i++) /* ratios: check_ratios */
        if (is_gemm_row(&pubs[i], gpu) && pubs[i].dt != DT_FP16 &&
            pubs[i].dt != DT_BF16 && pubs[i].dt < DT_COUNT &&
            g->peak_flops[pubs[i].dt] > 0)
            rc = grid_from_row(&pubs[i], &gf, g, NULL, "fp16 fit shape",
                               &gs[ngs++], e);
    if (rc == 0) {
        snprintf(p, sizeof p, "%s/gemm.tsv", odir);
        rc = write_gemm(p, g, &gf, DT_FP16, false, gs, ngs, e);
    }
    if (rc == 0) {
        snprintf(p, sizeof p, "%s/hbm.tsv", odir);
        rc = write_hbm(p, g, mf, 1, src, e);
    }
    for (int k = 0; rc == 0 && k < fits->n; k++)
        if (strcmp(fits->g[k].derived_from, gpu) == 0)
            rc = derive(&fits->g[k], &(base_grids){g, gs, ngs}, &gf, mf,
                        src, out, cat, pubs, npub, e);
    if (rc == 0)
        rc = write_support(odir, fits->g[me].flash_fwd, fits->g[me].flash_src,
                           e);
    if (rc == 0) {
        printf("%s (%s): GEMM emax %.3f of %.0f TFLOP/s, half efficiency at "
               "n %.0f, k %.0f;\n  weights stream at %.3f of %.0f GB/s, "
               "%.2f us per GEMM kernel (smooth max p %.1f); streaming kernels: %.3f of the bandwidth, fixed cost "
               "%.2f us\n",
               gpu, shortname, gf.emax, g->peak_flops[DT_FP16] / 1e12,
               gf.n0, gf.k0, gf.em, g->mem_bw_Bps / 1e9, gf.t0 * 1e6, gf.p, mf[0].emax,
               mf[0].b0 / (g->mem_bw_Bps * mf[0].emax) * 1e6);
        cost_calib c;
        memset(&c, 0, sizeof c);
        /* read back what was written: the report tests the tables */
        if (cfg_load_cost_dir(odir, g, false, &c, e) == 0) {
            double *all = malloc(sizeof(double) * (size_t)(gemm.n + mem.n + 1));
            int nall = 0;
            report(gpu, g, &c, &gemm, &mem, all, &nall);
            qsort(all, (size_t)nall, sizeof *all, cmp_d);
            if (nall)
                printf("  %-26s %7d %9.1f%% %9.1f%% %9.1f%%\n", "all", nall,
                       all[nall / 2], all[(int)(nall * 0.9)], all[nall - 1]);
            free(all);
            cost_calib_free(&c);
        } else {
            rc = -1;
        }
    }
    free(gemm.p);
    free(mem.p);
    return rc;
}

/* ---- memory-bound kernels over all traced GPUs ---------------------------
 * calib/memory-kernels.tsv.  Two steps, each a GSL linear fit:
 * 1. the latency of a kernel with few rows (<= 16 tokens), in cycles of
 *    each GPU's clock, is fixed + row_cycles x row/1024, pooled over the
 *    traced GPUs (a latency in cycles carries to another clock);
 * 2. with many rows (>= 512 tokens) the time less that fixed part is bytes
 *    x (1/(DRAM rate) + 1/(issue rate)), through the origin, weighted by
 *    1/t^2 (relative error); DRAM at the GPU's hbm.tsv streaming
 *    efficiency, the issue rate per SM cycle per GPU, and its geometric
 *    mean over the traced GPUs as the '*' row for every other GPU. */
#define SMALL_TOKENS 16
#define LARGE_TOKENS 512

typedef struct memk_gpu {
    const gpu_spec *g;
    points mem;
    double dram_Bps;
    double rate[MEM_KIND_COUNT]; /* bytes per SM cycle; 0 = DRAM alone */
} memk_gpu;

static int fit_latency(const memk_gpu *mg, int ng, cost_mem_kind k,
                       struct cost_memk *out, llm_err *e)
{
    int cap = 0;
    for (int j = 0; j < ng; j++)
        cap += mg[j].mem.n;
    double *x = malloc(sizeof(double) * 2 * (size_t)(cap + 1));
    if (!x)
        return err_set(e, "out of memory");
    double *y = x + cap + 1;
    int n = 0;
    for (int j = 0; j < ng; j++)
        for (int i = 0; i < mg[j].mem.n; i++) {
            const fit_point *p = &mg[j].mem.p[i];
            if (mem_kind_of_op(p->op) != k || p->tokens > SMALL_TOKENS)
                continue;
            x[n] = p->row / 1024;
            y[n++] = p->t_s * mg[j].g->boost_clock_hz;
        }
    double c0 = 0, c1 = 0, v00, v01, v11, ss;
    if (n >= 2)
        gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &v00, &v01, &v11, &ss);
    if (n && (n < 2 || c1 < 0 || !isfinite(c1))) { /* no row effect */
        c1 = 0, c0 = 0;
        for (int i = 0; i < n; i++)
            c0 += y[i] / n;
    }
    out->fixed_cycles = c0 > 1 ? c0 : 1;
    out->row_cycles = c1;
    free(x);
    return 0;
}

/* rate: bytes per SM cycle, 0 when DRAM alone explains the times */
static int fit_rate(const memk_gpu *m, cost_mem_kind k, double fixed,
                    double *rate, llm_err *e)
{
    size_t cap = (size_t)m->mem.n + 1;
    double *x = malloc(sizeof(double) * 3 * cap);
    if (!x)
        return err_set(e, "out of memory");
    double *y = x + cap, *w = y + cap;
    int n = 0;
    double f = m->g->boost_clock_hz, c1 = 0, v, ss;
    for (int i = 0; i < m->mem.n; i++) {
        const fit_point *p = &m->mem.p[i];
        double t = p->t_s - fixed / f;
        if (mem_kind_of_op(p->op) != k || p->tokens < LARGE_TOKENS || t <= 0)
            continue;
        x[n] = p->bytes, y[n] = t, w[n++] = 1 / (t * t);
    }
    if (n)
        gsl_fit_wmul(x, 1, w, 1, y, 1, (size_t)n, &c1, &v, &ss);
    free(x);
    double issue = c1 - 1 / m->dram_Bps; /* seconds per byte beyond DRAM */
    *rate = n && issue > 1e-15 ? 1 / (issue * m->g->sm_count * f) : 0;
    return 0;
}

static int write_memk(const char *path, const memk_gpu *mg, int ng,
                      const struct cost_memk *star, const char *src,
                      llm_err *e)
{
    util_outfile o;
    if (util_out_open(&o, path, e))
        return -1;
    fprintf(o.fp,
            "# memory-kernels.tsv: memory-bound kernels (norms, activations, residual adds, rope, embedding\n"
            "# gathers) as the cost model prices them (sim/cost/cost.c membound_time_s):\n"
            "#   t = fixed / f + max(row_cycles x row/1024 / f,  B / (e x BW) + B / (bytes_per_sm_cycle x SMs x f))\n"
            "# f the GPU's boost clock and SMs its sm_count (topologies/gpus.cfg), BW its datasheet memory\n"
            "# bandwidth and e the streaming efficiency of its hbm.tsv, B the bytes the kernel moves, row the\n"
            "# elements one thread block loops over.  A kernel with few rows waits on one block's chain of\n"
            "# memory round trips (latency, in cycles, so it carries to another clock); one with many rows\n"
            "# on DRAM and on the SMs' load/store issue.  bytes_per_sm_cycle 0: DRAM alone.\n"
            "# Written by `llmsim calibrate --fit` (two GSL linear fits, see sim/cli/cmd_calibrate.c\n"
            "# fit_memory_kernels); a GPU's own row wins over the '*' row, which holds the latencies pooled\n"
            "# over the traced GPUs and the geometric mean of their issue rates: every other GPU is\n"
            "# predicted from its datasheet with them.\n"
            "gpu\tkey\tvalue\tunit\tsource\n");
    static const char *const unit[3] = {"cycles", "cycles per 1024",
                                        "bytes per SM cycle"};
    for (int k = 0; k < MEM_KIND_COUNT; k++) {
        const char *kn = cost_mem_kind_names[k];
        fprintf(o.fp, "*\t%s_fixed_cycles\t%.0f\t%s\t%s\n", kn,
                star[k].fixed_cycles, unit[0], src);
        fprintf(o.fp, "*\t%s_row_cycles\t%.0f\t%s\t%s\n", kn,
                star[k].row_cycles, unit[1], src);
        fprintf(o.fp, "*\t%s_bytes_per_sm_cycle\t%.3f\t%s\t%s (geometric "
                "mean of the traced GPUs)\n", kn, star[k].bytes_per_sm_cycle,
                unit[2], src);
        for (int j = 0; j < ng; j++)
            fprintf(o.fp, "%s\t%s_bytes_per_sm_cycle\t%.3f\t%s\t%s\n",
                    mg[j].g->name, kn, mg[j].rate[k], unit[2], src);
    }
    return util_out_commit(&o, e);
}

/* Median |error| of the fitted model per kind and token band. */
static void report_memk(const memk_gpu *m, const cost_calib *c)
{
    static const char *const band[3] = {"1-64", "65-512", ">512"};
    printf("%s memory-bound kernels, median |error| by tokens:\n  %-12s",
           m->g->name, "kind");
    for (int b = 0; b < 3; b++)
        printf(" %10s", band[b]);
    printf("\n");
    double *err = malloc(sizeof(double) * (size_t)(m->mem.n + 1));
    for (int k = 0; err && k < MEM_KIND_COUNT; k++) {
        printf("  %-12s", cost_mem_kind_names[k]);
        for (int b = 0; b < 3; b++) {
            int n = 0;
            for (int i = 0; i < m->mem.n; i++) {
                const fit_point *p = &m->mem.p[i];
                int pb = p->tokens <= 64 ? 0 : p->tokens <= 512 ? 1 : 2;
                if (mem_kind_of_op(p->op) != (cost_mem_kind)k || pb != b)
                    continue;
                double t = cost_membound_time_s(c, m->g, (cost_mem_kind)k,
                                                p->bytes, p->row);
                err[n++] = fabs(t / p->t_s - 1) * 100;
            }
            qsort(err, (size_t)n, sizeof *err, cmp_d);
            if (n)
                printf(" %9.1f%%", err[n / 2]);
            else
                printf(" %10s", "-");
        }
        printf("\n");
    }
    free(err);
}

static int fit_memory_kernels(const char *traces, const char *out,
                              const fit_list *fits, const gpu_catalog *cat,
                              llm_err *e)
{
    memk_gpu *mg = calloc((size_t)fits->n + 1, sizeof *mg);
    cost_calib *cc = calloc((size_t)fits->n + 1, sizeof *cc);
    int ng = 0, files = 0, rc = 0;
    if (!mg || !cc)
        rc = err_set(e, "out of memory");
    for (int i = 0; rc == 0 && i < fits->n; i++) {
        if (!fits->g[i].traces[0])
            continue;
        const gpu_spec *g = gpu_find(cat, fits->g[i].gpu);
        if (!g || g->sm_count <= 0 || g->boost_clock_hz <= 0) {
            rc = err_set(e, "%s: expected sm_count and boost_clock_mhz in "
                            "topologies/gpus.cfg (the memory-bound kernel fit "
                            "works in its cycles)", fits->g[i].gpu);
            break;
        }
        char dir[PATH_MAX], odir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", traces, fits->g[i].traces);
        snprintf(odir, sizeof odir, "%s/%s", out, g->name);
        points gemm = {0};
        int nf = 0;
        mg[ng].g = g;
        rc = load_traces(dir, NULL, &gemm, &mg[ng].mem, &nf, e) ||
             cfg_load_cost_dir(odir, g, false, &cc[ng], e);
        free(gemm.p);
        if (rc) {
            free(mg[ng].mem.p);
            break;
        }
        mg[ng].dram_Bps = cost_stream_Bps(&cc[ng], g);
        files += nf;
        ng++;
    }
    struct cost_memk star[MEM_KIND_COUNT];
    for (int k = 0; rc == 0 && k < MEM_KIND_COUNT; k++) {
        rc = fit_latency(mg, ng, (cost_mem_kind)k, &star[k], e);
        double lsum = 0;
        int npos = 0;
        for (int j = 0; rc == 0 && j < ng; j++) {
            rc = fit_rate(&mg[j], (cost_mem_kind)k, star[k].fixed_cycles,
                          &mg[j].rate[k], e);
            if (mg[j].rate[k] > 0)
                lsum += log(mg[j].rate[k]), npos++;
        }
        /* DRAM alone on any traced GPU: DRAM alone everywhere */
        star[k].bytes_per_sm_cycle = npos == ng && ng ? exp(lsum / ng) : 0;
    }
    if (rc == 0) {
        char src[300], p[PATH_MAX];
        snprintf(src, sizeof src, "fit to Vidur kernel traces calib/vidur "
                 "(%d GPUs, %d files; microsoft/vidur@7d47513, MIT)", ng,
                 files);
        snprintf(p, sizeof p, "%s/memory-kernels.tsv", out);
        rc = write_memk(p, mg, ng, star, src, e);
    }
    for (int j = 0; j < ng; j++) {
        if (rc == 0) {
            for (int k = 0; k < MEM_KIND_COUNT; k++) {
                cc[j].memk[k] = star[k];
                cc[j].memk[k].bytes_per_sm_cycle = mg[j].rate[k];
            }
            report_memk(&mg[j], &cc[j]);
        }
        cost_calib_free(&cc[j]);
        free(mg[j].mem.p);
    }
    free(mg);
    free(cc);
    return rc;
}

/* A gemm_ratio row must scale a grid that will exist: its GPU derived
 * from a traced one, which has a grid of that dtype (16-bit always; any
 * other from a published row of its own).  Checked before any table is
 * written, so a bad row leaves the tables as they were. */
static int check_ratios(const pub *pubs, int npub, const fit_list *fits,
                        llm_err *e)
{
    for (int i = 0; i < npub; i++) {
        if (!is_kind(&pubs[i], "gemm_ratio"))
            continue;
        const char *base = NULL;
        for (int k = 0; k < fits->n; k++)
            if (strcmp(fits->g[k].gpu, pubs[i].gpu) == 0 &&
                fits->g[k].derived_from[0])
                base = fits->g[k].derived_from;
        if (!base)
            return err_set(e, "calib/published.tsv: gemm_ratio for %s: "
                              "expected a GPU derived from another in "
                              "calib/fit.tsv (a ratio scales its base's grid)",
                           pubs[i].gpu);
        bool has = pubs[i].dt == DT_FP16 || pubs[i].dt == DT_BF16;
        for (int k = 0; !has && k < npub; k++)
            has = strcmp(pubs[k].gpu, base) == 0 && pubs[k].dt == pubs[i].dt &&
                  (is_kind(&pubs[k], "gemm_tflops") ||
                   is_kind(&pubs[k], "gemm_max_tflops"));
        if (!has)
            return err_set(e, "calib/published.tsv: gemm_ratio for %s %s: "
                              "%s has no %s grid to scale (expected a "
                              "gemm_tflops or gemm_max_tflops row for it)",
                           pubs[i].gpu,
                           dtype_name(pubs[i].dt), base,
                           dtype_name(pubs[i].dt));
    }
    return 0;
}

/* Every gemm_measured file read before anything is fitted or written: a
 * bad one refuses the whole run, with no table half rewritten. */
static int check_measured(const fit_list *fits, gpu_catalog *cat, llm_err *e)
{
    for (int k = 0; k < fits->n; k++) {
        const cfg_fit_gpu *d = &fits->g[k];
        if (!d->gemm_measured[0])
            continue;
        const gpu_spec *g = gpu_find(cat, d->gpu);
        if (!g)
            return err_set(e, "GPU %s missing from the catalog", d->gpu);
        measured ms;
        if (load_gpu_measured(d, g, &ms, e))
            return -1;
        measured_free(&ms);
    }
    return 0;
}

static int run_bench(const char *gpu_name, gpu_catalog *cat, const char *out,
                     llm_err *e)
{
    const gpu_spec *g = cfg_find_gpu(cat, gpu_name, e);
    if (!g)
        return -1;
    char script[PATH_MAX], bin[PATH_MAX], dir[PATH_MAX], cmd[PATH_MAX * 3];
    snprintf(script, sizeof script, "%s/calib/cuda/run.sh", cfg_datadir());
    snprintf(bin, sizeof bin, "%s/calib/cuda/build/gemm_bench", cfg_datadir());
    if (access(bin, X_OK) != 0)
        return err_set(e, "%s: not built (run `make calib` on a machine with "
                          "nvcc and an NVIDIA GPU)", bin);
    snprintf(dir, sizeof dir, "%s/%s.new", out, g->name);
    mkdir(dir, 0755);
    snprintf(cmd, sizeof cmd, "sh '%s' '%s' '%s' %.1f %.1f %.1f %.1f %.1f %.1f "
             "%.1f", script, g->name, dir, g->peak_flops[DT_BF16] / 1e12,
             g->peak_flops[DT_FP16] / 1e12, g->peak_flops[DT_FP8] / 1e12,
             g->peak_flops[DT_TF32] / 1e12, g->peak_flops[DT_FP32] / 1e12,
             g->mem_bw_Bps / 1e9, gpu_pcie_Bps(g) / 1e9);
    if (system(cmd) != 0)
        return err_set(e, "the microbenchmarks failed; %s holds what they "
                          "wrote", dir);
    char cur[PATH_MAX], prev[PATH_MAX + 8];
    snprintf(cur, sizeof cur, "%s/%s", out, g->name);
    snprintf(prev, sizeof prev, "%s.prev", cur);
    rename(cur, prev);
    if (rename(dir, cur) != 0)
        return err_set(e, "%s: cannot move into place: %s", cur,
                       strerror(errno));
    printf("new tables in %s (previous ones in %s)\n", cur, prev);
    return 0;
}

static int run(int argc, char **argv, llm_err *e)
{
    static const struct option opts[] = {
        {"fit", no_argument, 0, 'f'},   {"run", no_argument, 0, 'r'},
        {"gpu", required_argument, 0, 'g'},
        {"traces", required_argument, 0, 't'},
        {"out", required_argument, 0, 'o'},
        {0, 0, 0, 0},
    };
    int fit = 0, runb = 0, ch;
    const char *gpu = NULL, *traces = NULL, *out = NULL;
    optind = 0; /* glibc: a full reset, a half-read "-xy" included */
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (ch) {
        case 'f': fit = 1; break;
        case 'r': runb = 1; break;
        case 'g': gpu = optarg; break;
        case 't': traces = optarg; break;
        case 'o': out = optarg; break;
        case ':':
            return err_set(e, "option %s needs a value", argv[optind - 1]),
                   EXIT_BAD_INPUT;
        default:
            return cmd_bad_option("calibrate", argv[optind - 1], opts, e),
                   EXIT_BAD_INPUT;
        }
    }
    if (fit == runb)
        return err_set(e, "expected --fit or --run (see `llmsim help "
                          "calibrate`)"),
               EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    char tdir[PATH_MAX], odir[PATH_MAX];
    snprintf(tdir, sizeof tdir, "%s", traces ? traces : "");
    if (!traces)
        snprintf(tdir, sizeof tdir, "%s/calib/vidur", cfg_datadir());
    snprintf(odir, sizeof odir, "%s", out ? out : "");
    if (!out)
        snprintf(odir, sizeof odir, "%s/calib", cfg_datadir());
    gpu_catalog cat;
    if (cfg_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    int rc;
    if (runb) {
        rc = gpu ? run_bench(gpu, &cat, odir, e)
                 : err_set(e, "--run needs --gpu NAME");
    } else {
        char pp[PATH_MAX];
        pub *pubs = NULL;
        int npub = 0;
        cfg_fit_gpu *fg = NULL;
        fit_list fits = {NULL, 0};
        snprintf(pp, sizeof pp, "%s/calib/published.tsv", cfg_datadir());
        rc = load_published(pp, &pubs, &npub, e) ||
             cfg_load_fit_gpus(cfg_datadir(), &fg, &fits.n, e);
        fits.g = fg;
        if (rc == 0)
            rc = check_ratios(pubs, npub, &fits, e) ||
                 check_measured(&fits, &cat, e);
        for (int i = 0; rc == 0 && i < fits.n; i++)
            if (fg[i].traces[0])
                rc = fit_one(tdir, odir, &fits, i, &cat, pubs, npub, e);
        if (rc == 0)
            rc = fit_memory_kernels(tdir, odir, &fits, &cat, e);
        free(fg);
        free(pubs);
    }
    gpu_catalog_free(&cat);
    return rc ? EXIT_BAD_INPUT : EXIT_OK;
}

const cmd_def cmd_calibrate_def = {
    "calibrate", "fit the cost model to measured kernels, or measure this GPU",
    usage, run, 0, NULL};
