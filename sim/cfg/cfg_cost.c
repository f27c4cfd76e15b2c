/* Compute-cost calibration tables: calib/<gpu>/gemm.tsv, hbm.tsv,
 * attention.tsv, launch.tsv, the PCIe row of calib/links.tsv and the GPU's
 * kernel ratios in calib/kernels.tsv (its rows, else the '*' rows).  A GPU
 * without its own directory borrows the tables of the closest calibrated
 * GPU (same compute capability, else same architecture, else the nearest
 * compute capability), and every prediction says so. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg/cfg.h"
#include "cfg/cfg_tsv.h"
#include "base/tsv.h"
#include "base/util.h"

static bool has_tables(const char *datadir, const char *gpu)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/calib/%s/gemm.tsv", datadir, gpu);
    return access(p, R_OK) == 0;
}

static const gpu_spec *closest(const char *datadir, const gpu_catalog *cat,
                               const gpu_spec *g)
{
    const gpu_spec *best = NULL;
    int best_score = INT_MAX;
    for (int i = 0; i < cat->n; i++) {
        const gpu_spec *c = &cat->gpus[i];
        if (!has_tables(datadir, c->name))
            continue;
        int score = c->sm == g->sm ? 0
                    : strcmp(c->architecture, g->architecture) == 0
                        ? 100
                        : 1000 + abs(c->sm - g->sm) * 10;
        if (score < best_score) {
            best_score = score;
            best = c;
        }
    }
    return best;
}

/* Roofline time of a GEMM on g, for turning measured times into
 * efficiencies. */
static double gemm_roof(const gpu_spec *g, dtype d, double m, double n,
                        double k)
{
    double ob = dtype_bytes(d) < 2 ? 2 : dtype_bytes(d);
    double fl = 2 * m * n * k / g->peak_flops[d];
    double by = ((m * k + k * n) * dtype_bytes(d) + m * n * ob) / g->mem_bw_Bps;
    return fl > by ? fl : by;
}

static int axis_index(double *ax, int *n, double v)
{
    for (int i = 0; i < *n; i++)
        if (ax[i] == v)
            return i;
    ax[(*n)++] = v;
    return *n - 1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int find_sorted(const double *ax, int n, double v)
{
    for (int i = 0; i < n; i++)
        if (ax[i] == v)
            return i;
    return -1;
}

typedef struct gcols {
    int dt, m, n, k, eff, time, src;
} gcols;

static int row_eff(const tsv *t, int r, const gcols *c, const gpu_spec *g,
                   dtype d, double m, double n, double k, double *eff,
                   llm_err *e)
{
    if (c->time >= 0 && strcmp(tsv_get(t, r, c->time), "-") != 0) {
        double us;
        if (tsv_num(t, r, c->time, 1e-6, 1e12, &us, e))
            return -1;
        if (g->peak_flops[d] <= 0)
            return err_at(e, t->path, t->line[r], "dtype", "%s has no %s "
                          "peak in the catalog", g->name, dtype_name(d));
        *eff = gemm_roof(g, d, m, n, k) / (us * 1e-6);
        if (*eff > 1.05)
            return err_at(e, t->path, t->line[r], "time_us",
                          "%.3g us beats the roofline of %s by %.0f%% "
                          "(expected a measured time >= FLOPs/peak)",
                          us, g->name, (*eff - 1) * 100);
        if (*eff > 1)
            *eff = 1; /* within measurement noise of the peak */
        return 0;
    }
    return tsv_num(t, r, c->eff, 1e-15, 1, eff, e);
}

static int gemm_columns(const tsv *t, gcols *c, llm_err *e)
{
    llm_err ignore;
    if ((c->dt = tsv_col(t, "dtype", e)) < 0 || (c->m = tsv_col(t, "m", e)) < 0 ||
        (c->n = tsv_col(t, "n", e)) < 0 || (c->k = tsv_col(t, "k", e)) < 0 ||
        (c->src = tsv_col(t, "source", e)) < 0)
        return -1;
    c->eff = tsv_col(t, "efficiency", &ignore);
    c->time = tsv_col(t, "time_us", &ignore);
    if (c->eff < 0 && c->time < 0)
        return err_at(e, t->path, 1, "efficiency", "missing column (expected "
                      "efficiency or time_us)");
    return 0;
}

/* The distinct m, n and k values of dtype d's rows (unsorted), its first
 * row and its row count; first -1 when d has none. */
typedef struct gaxes {
    double *m, *n, *k;
    int nm, nn, nk, first, count;
} gaxes;

static void gaxes_free(gaxes *a)
{
    free(a->m);
    free(a->n);
    free(a->k);
    memset(a, 0, sizeof *a);
}

static int gemm_axes(const tsv *t, const gcols *c, dtype d, gaxes *a,
                     llm_err *e)
{
    memset(a, 0, sizeof *a);
    a->first = -1;
    a->m = malloc(sizeof(double) * (size_t)(t->rows + 1));
    a->n = malloc(sizeof(double) * (size_t)(t->rows + 1));
    a->k = malloc(sizeof(double) * (size_t)(t->rows + 1));
    if (!a->m || !a->n || !a->k)
        return err_set(e, "%s: out of memory", t->path);
    for (int r = 0; r < t->rows; r++) {
        dtype rd;
        if (dtype_parse(tsv_get(t, r, c->dt), &rd) != 0)
            return err_at(e, t->path, t->line[r], "dtype", "unknown dtype "
                          "\"%s\" (expected %s)", tsv_get(t, r, c->dt),
                          dtype_choices());
        if (rd != d)
            continue;
        double m, n, k;
        if (tsv_num(t, r, c->m, 1, 1e9, &m, e) ||
            tsv_num(t, r, c->n, 1, 1e9, &n, e) ||
            tsv_num(t, r, c->k, 1, 1e9, &k, e))
            return -1;
        if (a->first < 0)
            a->first = r;
        a->count++;
        axis_index(a->m, &a->nm, m);
        axis_index(a->n, &a->nn, n);
        axis_index(a->k, &a->nk, k);
    }
    /* a complete grid has a row per combination, so more combinations
     * than rows is an incomplete one (and nm * nn * nk stays an int) */
    if (a->first >= 0 && (long long)a->nm * a->nn * a->nk > a->count)
        return err_at(e, t->path, t->line[a->first], "m", "the %s grid misses "
                      "combinations: %d m, %d n and %d k values need %lld "
                      "rows, it has %d (expected every combination of the m, "
                      "n and k values)", dtype_name(d), a->nm, a->nn, a->nk,
                      (long long)a->nm * a->nn * a->nk, a->count);
    qsort(a->m, (size_t)a->nm, sizeof *a->m, cmp_d);
    qsort(a->n, (size_t)a->nn, sizeof *a->n, cmp_d);
    qsort(a->k, (size_t)a->nk, sizeof *a->k, cmp_d);
    return 0;
}

/* Dtype d's efficiency at every point of its axes into gr (which takes
 * the axes, as log2, on success). */
static int gemm_fill(const tsv *t, const gcols *c, const gpu_spec *g, dtype d,
                     gaxes *a, cost_grid *gr, llm_err *e)
{
    int cells = a->nm * a->nn * a->nk;
    double *eff = malloc(sizeof(double) * (size_t)cells);
    if (!eff)
        return err_set(e, "%s: out of memory", t->path);
    for (int i = 0; i < cells; i++)
        eff[i] = -1;
    for (int r = a->first; r < t->rows; r++) {
        dtype rd;
        dtype_parse(tsv_get(t, r, c->dt), &rd);
        if (rd != d)
            continue;
        double m = atof(tsv_get(t, r, c->m)), n = atof(tsv_get(t, r, c->n));
        double k = atof(tsv_get(t, r, c->k)), v;
        if (row_eff(t, r, c, g, rd, m, n, k, &v, e)) {
            free(eff);
            return -1;
        }
        eff[(find_sorted(a->m, a->nm, m) * a->nn + find_sorted(a->n, a->nn, n)) *
                a->nk + find_sorted(a->k, a->nk, k)] = v;
    }
    for (int i = 0; i < cells; i++)
        if (eff[i] < 0) {
            err_at(e, t->path, t->line[a->first], "m", "the %s grid misses "
                   "(m %.0f, n %.0f, k %.0f) (expected every combination of "
                   "the m, n and k values)", dtype_name(d),
                   a->m[i / (a->nn * a->nk)], a->n[(i / a->nk) % a->nn],
                   a->k[i % a->nk]);
            free(eff);
            return -1;
        }
    for (int i = 0; i < a->nm; i++)
        a->m[i] = log2(a->m[i]);
    for (int i = 0; i < a->nn; i++)
        a->n[i] = log2(a->n[i]);
    for (int i = 0; i < a->nk; i++)
        a->k[i] = log2(a->k[i]);
    *gr = (cost_grid){.nm = a->nm, .nn = a->nn, .nk = a->nk, .lm = a->m,
                      .ln = a->n, .lk = a->k, .eff = eff,
                      .line0 = t->line[a->first]};
    snprintf(gr->source, sizeof gr->source, "%s", tsv_get(t, a->first, c->src));
    memset(a, 0, sizeof *a); /* the grid owns the axes */
    return 0;
}

/* gemm.tsv: one (m, n, k) grid of efficiencies per dtype it has rows of. */
static int load_gemm(const char *path, const gpu_spec *g, cost_calib *cc,
                     llm_err *e)
{
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    gcols c;
    int rc = gemm_columns(&t, &c, e);
    for (int d = 0; rc == 0 && d < DT_COUNT; d++) {
        gaxes a;
        rc = gemm_axes(&t, &c, (dtype)d, &a, e);
        if (rc == 0 && a.first >= 0)
            rc = gemm_fill(&t, &c, g, (dtype)d, &a, &cc->gemm[d], e);
        gaxes_free(&a);
    }
    tsv_free(&t);
    return rc;
}

static int mem_kind_of(const char *s)
{
    static const char *const streaming[] = {"copy", "triad", "read", "stream"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, streaming[i]) == 0)
            return MEM_ELEMENTWISE;
    for (int k = 0; k < MEM_KIND_COUNT; k++)
        if (strcmp(s, cost_mem_kind_names[k]) == 0)
            return k;
    return -1;
}

/* Adds a point to a curve, averaging kinds that share a size (copy,
 * triad and read of one microbenchmark). */
static void curve_add(struct cost_curve *cv, int *cnt, double lb, double eff)
{
    int i = find_sorted(cv->lbytes, cv->n, lb);
    if (i < 0) {
        i = cv->n++;
        cv->lbytes[i] = lb;
        cv->eff[i] = 0;
        cnt[i] = 0;
    }
    cv->eff[i] = (cv->eff[i] * cnt[i] + eff) / (cnt[i] + 1);
    cnt[i]++;
}

static void curve_sort(struct cost_curve *cv)
{
    for (int i = 1; i < cv->n; i++)
        for (int j = i; j > 0 && cv->lbytes[j - 1] > cv->lbytes[j]; j--) {
            double x = cv->lbytes[j];
            cv->lbytes[j] = cv->lbytes[j - 1], cv->lbytes[j - 1] = x;
            x = cv->eff[j];
            cv->eff[j] = cv->eff[j - 1], cv->eff[j - 1] = x;
        }
}

static int hbm_row_eff(const tsv *t, int r, int ce, int cg, const gpu_spec *g,
                       double *eff, llm_err *e)
{
    if (cg >= 0 && strcmp(tsv_get(t, r, cg), "-") != 0) {
        double gbps;
        if (tsv_num(t, r, cg, 1e-6, 1e6, &gbps, e))
            return -1;
        *eff = gbps * 1e9 / g->mem_bw_Bps;
        if (*eff > 1.05)
            return err_at(e, t->path, t->line[r], "GBps", "%g GB/s beats the "
                          "datasheet %g GB/s of %s", gbps, g->mem_bw_Bps / 1e9,
                          g->name);
        if (*eff > 1)
            *eff = 1;
        return 0;
    }
    return tsv_num(t, r, ce, 1e-6, 1, eff, e);
}

static int load_hbm(const char *path, cost_calib *cc, const gpu_spec *g,
                    llm_err *e)
{
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    llm_err ignore;
    int ck = tsv_col(&t, "kind", e), cb = ck < 0 ? -1 : tsv_col(&t, "bytes", e);
    int ce = tsv_col(&t, "efficiency", &ignore), cg = tsv_col(&t, "GBps", &ignore);
    int cs = cb < 0 ? -1 : tsv_col(&t, "source", e);
    int rc = ck < 0 || cb < 0 || cs < 0 ? -1 : 0;
    if (rc == 0 && ce < 0 && cg < 0)
        rc = err_at(e, path, 1, "efficiency", "missing column (expected "
                    "efficiency or GBps)");
    int *cnt = calloc((size_t)t.rows + 1, sizeof(int) * MEM_KIND_COUNT);
    bool ok = cnt != NULL;
    for (int k = 0; k < MEM_KIND_COUNT; k++) {
        cc->hbm[k].lbytes = malloc(sizeof(double) * (size_t)(t.rows + 1));
        cc->hbm[k].eff = malloc(sizeof(double) * (size_t)(t.rows + 1));
        ok = ok && cc->hbm[k].lbytes && cc->hbm[k].eff;
    }
    if (rc == 0 && !ok)
        rc = err_set(e, "%s: out of memory", path);
    for (int r = 0; rc == 0 && r < t.rows; r++) {
        const char *kind = tsv_get(&t, r, ck);
        if (strcmp(kind, "h2d") == 0 || strcmp(kind, "d2h") == 0)
            continue;
        int k = mem_kind_of(kind);
        if (k < 0) {
            rc = err_at(e, path, t.line[r], "kind", "unknown kind \"%s\" "
                        "(expected copy, triad, read, stream, elementwise, "
                        "norm, activation, rope, embedding, h2d, d2h)", kind);
            break;
        }
        double b, eff;
        if (tsv_num(&t, r, cb, 1, 1e15, &b, e) ||
            hbm_row_eff(&t, r, ce, cg, g, &eff, e)) {
            rc = -1;
            break;
        }
        struct cost_curve *cv = &cc->hbm[k];
        if (cv->n == 0)
            snprintf(cv->source, sizeof cv->source, "%s", tsv_get(&t, r, cs));
        curve_add(cv, cnt + (size_t)k * (t.rows + 1), log2(b), eff);
    }
    free(cnt);
    for (int k = 0; k < MEM_KIND_COUNT; k++)
        curve_sort(&cc->hbm[k]);
    if (rc == 0 && cc->hbm[MEM_ELEMENTWISE].n == 0)
        rc = err_at(e, path, 1, "kind", "no streaming rows (expected copy, "
                    "triad, read, stream or elementwise rows)");
    tsv_free(&t);
    return rc;
}

/* A single-value table: the first row of `kind` in column `col`. */
static int load_value(const char *path, const char *kind, const char *col,
                      double lo, double hi, double *out, char *src,
                      size_t srclen, llm_err *e)
{
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    int ck = tsv_col(&t, "kind", e), cv = ck < 0 ? -1 : tsv_col(&t, col, e);
    int cs = cv < 0 ? -1 : tsv_col(&t, "source", e);
    int rc = ck < 0 || cv < 0 || cs < 0 ? -1 : 1;
    for (int r = 0; rc == 1 && r < t.rows; r++)
        if (strcmp(tsv_get(&t, r, ck), kind) == 0) {
            rc = tsv_num(&t, r, cv, lo, hi, out, e);
            snprintf(src, srclen, "%s", tsv_get(&t, r, cs));
        }
    if (rc == 1)
        rc = err_at(e, path, 1, "kind", "no \"%s\" row", kind);
    tsv_free(&t);
    return rc;
}

/* The achievable share of g's PCIe generation (calib/links.tsv; 1 when
 * the table has no row for it). */
static int pcie_eff(const char *datadir, const gpu_spec *g, double *eff,
                    llm_err *e)
{
    char p[PATH_MAX], key[16];
    snprintf(p, sizeof p, "%s/calib/links.tsv", datadir);
    snprintf(key, sizeof key, "gen%d", g->pcie_gen);
    tsv t;
    *eff = 1;
    if (tsv_load(p, &t, e))
        return -1;
    int cl, ca = -1, ce = -1;
    int rc = (cl = tsv_col(&t, "link", e)) < 0 ||
                     (ca = tsv_col(&t, "arch", e)) < 0 ||
                     (ce = tsv_col(&t, "efficiency", e)) < 0
                 ? -1
                 : 0;
    for (int r = 0; rc == 0 && r < t.rows; r++)
        if (strcmp(tsv_get(&t, r, cl), "pcie") == 0 &&
            strcmp(tsv_get(&t, r, ca), key) == 0)
            rc = tsv_num(&t, r, ce, 1e-3, 1, eff, e);
    tsv_free(&t);
    return rc;
}

/* calib/attention-kernels.tsv: the rows for the GPU's compute capability.
 * A kernel named twice for one sm, a fraction outside (0, 1] or an empty
 * source is an error at its line. */
static int load_attn_kernels(const char *datadir, const gpu_spec *g,
                             cost_calib *cc, llm_err *e)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/calib/attention-kernels.tsv", datadir);
    tsv t;
    if (tsv_load(p, &t, e))
        return -1;
    enum { KERNEL, SM, FWD, FWD_CAUSAL, BWD, TILE, TILE_CAUSAL, SKIP, SOURCE,
           NCOL };
    static const char *const names[NCOL] = {
        "kernel", "sm", "fwd", "fwd_causal", "bwd", "tile_tokens",
        "tile_tokens_causal", "causal_skip", "source"};
    int col[NCOL], rc = 0;
    for (int i = 0; i < NCOL && rc == 0; i++)
        if ((col[i] = tsv_col(&t, names[i], e)) < 0)
            rc = -1;
    for (int r = 0; rc == 0 && r < t.rows; r++) {
        double sm;
        const char *name = tsv_get(&t, r, col[KERNEL]);
        const char *src = tsv_get(&t, r, col[SOURCE]);
        if (tsv_num(&t, r, col[SM], 10, 1000, &sm, e)) {
            rc = -1;
            break;
        }
        if (!name[0] || strlen(name) >= sizeof cc->attn_k[0].name || !src[0]) {
            rc = err_set(e, "%s:%d: %s: expected a kernel name of at most %zu "
                            "characters and a source",
                         p, t.line[r], name[0] ? name : "kernel",
                         sizeof cc->attn_k[0].name - 1);
            break;
        }
        if ((int)sm != g->sm)
            continue;
        if (cost_attn_kernel_find(cc, name)) {
            rc = err_set(e, "%s:%d: %s: a second row for sm %d (expected one "
                            "per kernel and sm)", p, t.line[r], name, g->sm);
            break;
        }
        if (cc->nattn_k == COST_MAX_ATTN_KERNELS) {
            rc = err_set(e, "%s:%d: more than %d kernels for sm %d", p,
                         t.line[r], COST_MAX_ATTN_KERNELS, g->sm);
            break;
        }
        struct cost_attn_kernel *k = &cc->attn_k[cc->nattn_k];
        if (tsv_num(&t, r, col[FWD], 1e-3, 1, &k->fwd, e) ||
            tsv_num(&t, r, col[FWD_CAUSAL], 1e-3, 1, &k->fwd_causal, e) ||
            tsv_num(&t, r, col[BWD], 1e-3, 1, &k->bwd, e) ||
            tsv_num(&t, r, col[TILE], 0, 65536, &k->tile_tokens, e) ||
            tsv_num(&t, r, col[TILE_CAUSAL], 0, 65536,
                    &k->tile_tokens_causal, e)) {
            rc = -1;
            break;
        }
        const char *skip = tsv_get(&t, r, col[SKIP]);
        if (strcmp(skip, "yes") != 0 && strcmp(skip, "no") != 0) {
            rc = err_set(e, "%s:%d: %s: causal_skip \"%s\" (expected yes or "
                            "no)", p, t.line[r], name, skip);
            break;
        }
        k->causal_skip = skip[0] == 'y';
        snprintf(k->name, sizeof k->name, "%s", name);
        snprintf(k->source, sizeof k->source, "%s", src);
        k->line = t.line[r];
        cc->nattn_k++;
    }
    tsv_free(&t);
    return rc;
}

/* calib/memory-kernels.tsv: three figures per kind of memory-bound
 * kernel, named <kind>_fixed_cycles, _row_cycles, _bytes_per_sm_cycle. */
static int load_memk(const char *datadir, const gpu_spec *g, cost_calib *cc,
                     llm_err *e)
{
    enum { PER = 3 };
    static const char *const what[PER] = {"fixed_cycles", "row_cycles",
                                          "bytes_per_sm_cycle"};
    static const char *const unit[PER] = {"cycles", "cycles per 1024",
                                          "bytes per SM cycle"};
    char names[MEM_KIND_COUNT * PER][48];
    cfg_key want[MEM_KIND_COUNT * PER];
    for (int k = 0; k < MEM_KIND_COUNT; k++) {
        struct cost_memk *m = &cc->memk[k];
        double *out[PER] = {&m->fixed_cycles, &m->row_cycles,
                            &m->bytes_per_sm_cycle};
        for (int i = 0; i < PER; i++) {
            int j = k * PER + i;
            snprintf(names[j], sizeof names[j], "%s_%s",
                     cost_mem_kind_names[k], what[i]);
            want[j] = (cfg_key){names[j], 0, i == 0 ? 1e6 : 1e5, unit[i],
                                out[i], j ? NULL : cc->memk_source,
                                j ? 0 : sizeof cc->memk_source};
        }
    }
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/calib/memory-kernels.tsv", datadir);
    return cfg_keyed_load(p, g->name, want, MEM_KIND_COUNT * PER, e);
}

int cfg_load_kernel_ratios(const char *datadir, const char *gpu,
                           cost_calib *cc, llm_err *e)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/calib/kernels.tsv", datadir);
    const cfg_key want[] = {
        {"flash_bwd_over_fwd", 0.1, 100, "ratio", &cc->flash_bwd_ratio,
         cc->flash_bwd_source, sizeof cc->flash_bwd_source},
        {"dropout_mask_bytes", 0.125, 8, "bytes", &cc->dropout_mask_bytes,
         NULL, 0},
        {"gemm_tile_rows", 0, 1024, "rows", &cc->gemm_tile_rows, NULL, 0},
        {"gemm_small_rows", 0, 1024, "rows", &cc->gemm_small_rows, NULL, 0},
        {"flash_tile_tokens", 0, 65536, "tokens", &cc->flash_tile_tokens,
         NULL, 0},
        {"flash_tile_tokens_causal", 0, 65536, "tokens",
         &cc->flash_tile_tokens_causal, NULL, 0},
        {"sfu_exp_per_sm_cycle", 0, 1024, "per SM per cycle",
         &cc->sfu_exp_per_sm_cycle, NULL, 0},
    };
    return cfg_keyed_load(p, gpu, want, 7, e);
}

int cfg_load_cost_calib(const char *datadir, const gpu_catalog *cat,
                        const gpu_spec *g, cost_calib *cc, llm_err *e)
{
    const gpu_spec *src = g;
    if (!has_tables(datadir, g->name)) {
        src = closest(datadir, cat, g);
        if (!src)
            return err_set(e, "no calibration tables in %s/calib/ for %s or "
                              "any GPU (expected calib/<gpu>/gemm.tsv)",
                           datadir, g->name);
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/calib/%s", datadir, src->name);
    if (cfg_load_cost_dir(dir, src, true, cc, e))
        return -1;
    snprintf(cc->gpu, sizeof cc->gpu, "%s", g->name);
    if (src != g)
        snprintf(cc->derived_from, sizeof cc->derived_from, "%s", src->name);
    char q[PATH_MAX];
    snprintf(q, sizeof q, "%s/calib/training-load.tsv", datadir);
    const cfg_key load[] = {
        {"tensor_16bit", 0.3, 1, "fraction", &cc->train_tensor_16bit,
         cc->train_load_source, sizeof cc->train_load_source},
        {"tensor_fp8", 0.3, 1, "fraction", &cc->train_tensor_fp8, NULL, 0},
    };
    if (pcie_eff(datadir, g, &cc->pcie_eff, e) ||
        cfg_load_kernel_ratios(datadir, g->name, cc, e) ||
        cfg_keyed_load(q, g->name, load, 2, e) ||
        load_memk(datadir, g, cc, e) ||
        load_attn_kernels(datadir, g, cc, e)) {
        cost_calib_free(cc);
        return -1;
    }
    return 0;
}

int cfg_load_cost_dir(const char *dir, const gpu_spec *src, bool all,
                      cost_calib *cc, llm_err *e)
{
    memset(cc, 0, sizeof *cc);
    snprintf(cc->gpu, sizeof cc->gpu, "%s", src->name);
    snprintf(cc->dir, sizeof cc->dir, "%s", dir);
    char p[PATH_MAX + 32];
    /* efficiencies from measured times are taken against the GPU the
     * tables belong to; they then apply to the target's own roofline */
    snprintf(p, sizeof p, "%s/gemm.tsv", cc->dir);
    if (load_gemm(p, src, cc, e))
        goto fail;
    snprintf(p, sizeof p, "%s/hbm.tsv", cc->dir);
    if (load_hbm(p, cc, src, e))
        goto fail;
    if (!all)
        return 0;
    snprintf(p, sizeof p, "%s/attention.tsv", cc->dir);
    if (load_value(p, "flash_fwd", "peak_fraction", 1e-3, 1, &cc->attn_eff,
                   cc->attn_source, sizeof cc->attn_source, e))
        goto fail;
    double us;
    snprintf(p, sizeof p, "%s/launch.tsv", cc->dir);
    if (load_value(p, "launch", "time_us", 0, 1e4, &us, cc->launch_source,
                   sizeof cc->launch_source, e))
        goto fail;
    cc->launch_s = us * 1e-6;
    return 0;
fail:
    cost_calib_free(cc);
    return -1;
}
