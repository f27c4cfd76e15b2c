/* Hardware and software figures from data files: keyed figure tables (a
 * '*' default row and optional per-GPU rows) and the PCIe generations. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_tsv.h"
#include "base/tsv.h"
#include "base/util.h"

/* ---- keyed figure tables -------------------------------------------------- */

static int key_index(const cfg_key *want, int n, const char *k)
{
    for (int i = 0; i < n; i++)
        if (strcmp(want[i].key, k) == 0)
            return i;
    return -1;
}

static int unknown_key(const tsv *t, int r, const char *k,
                       const cfg_key *want, int n, llm_err *e)
{
    const char *names[32];
    char list[512] = "", hint[128];
    int m = n < 32 ? n : 32;
    for (int i = 0; i < m; i++) {
        names[i] = want[i].key;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "",
                 want[i].key);
    }
    util_did_you_mean(hint, sizeof hint, k, names, m);
    return err_at(e, t->path, t->line[r], k, "unknown key%s (expected %s)",
                  hint, list);
}

static int key_value(const tsv *t, int r, int cv, const cfg_key *k,
                     double *out, llm_err *e)
{
    const char *s = tsv_get(t, r, cv);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v))
        return err_at(e, t->path, t->line[r], k->key, "value \"%s\" is not "
                      "a number (expected %g..%g %s)", s, k->lo, k->hi,
                      k->unit);
    if (v < k->lo || v > k->hi)
        return err_at(e, t->path, t->line[r], k->key, "%g is out of range "
                      "(expected %g..%g %s)", v, k->lo, k->hi, k->unit);
    *out = v;
    return 0;
}

/* An earlier row with the same gpu and key: its index, or -1. */
static int earlier_row(const tsv *t, int r, int cg, int ck)
{
    for (int q = 0; q < r; q++)
        if (strcmp(tsv_get(t, q, ck), tsv_get(t, r, ck)) == 0 &&
            (cg < 0 || strcmp(tsv_get(t, q, cg), tsv_get(t, r, cg)) == 0))
            return q;
    return -1;
}

/* Checks row r (key known, value in range, a source, not a duplicate) and
 * notes it in own[] or star[] when it is the GPU's or the default. */
static int keyed_row(const tsv *t, int r, const int c[4], const char *col,
                     const char *gpu, const cfg_key *want, int n, int *own,
                     int *star, llm_err *e)
{
    const char *k = tsv_get(t, r, c[1]);
    int i = key_index(want, n, k);
    double v;
    if (i < 0)
        return unknown_key(t, r, k, want, n, e);
    if (key_value(t, r, c[2], &want[i], &v, e))
        return -1;
    if (!tsv_get(t, r, c[3])[0])
        return err_at(e, t->path, t->line[r], k, "empty source (expected "
                      "where the figure comes from)");
    int q = earlier_row(t, r, c[0], c[1]);
    if (q >= 0)
        return err_at(e, t->path, t->line[r], k, "a second row%s%s (the "
                      "first is line %d; expected one per %s%s)",
                      c[0] >= 0 ? " for " : "",
                      c[0] >= 0 ? tsv_get(t, r, c[0]) : "", t->line[q],
                      c[0] >= 0 ? col : "key", c[0] >= 0 ? " and key" : "");
    const char *g = c[0] >= 0 ? tsv_get(t, r, c[0]) : "*";
    if (strcmp(g, "*") == 0)
        star[i] = r;
    else if (gpu && strcmp(g, gpu) == 0)
        own[i] = r;
    return 0;
}

int cfg_keyed_load(const char *path, const char *gpu, const cfg_key *want,
                   int n, llm_err *e)
{
    return cfg_keyed_load_by(path, "gpu", gpu, want, n, e);
}

int cfg_keyed_load_by(const char *path, const char *col, const char *gpu,
                      const cfg_key *want, int n, llm_err *e)
{
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    int rc = -1, c[4] = {-1, -1, -1, -1};
    int *own = malloc(sizeof(int) * (size_t)(n + 1));
    int *star = malloc(sizeof(int) * (size_t)(n + 1));
    if (!own || !star) {
        err_set(e, "%s: out of memory", path);
        goto out;
    }
    for (int i = 0; i < n; i++)
        own[i] = star[i] = -1;
    if ((gpu && (c[0] = tsv_col(&t, col, e)) < 0) ||
        (c[1] = tsv_col(&t, "key", e)) < 0 ||
        (c[2] = tsv_col(&t, "value", e)) < 0 ||
        (c[3] = tsv_col(&t, "source", e)) < 0)
        goto out;
    for (int r = 0; r < t.rows; r++)
        if (keyed_row(&t, r, c, col, gpu, want, n, own, star, e))
            goto out;
    for (int i = 0; i < n; i++) {
        int r = own[i] >= 0 ? own[i] : star[i];
        if (r < 0 && gpu) {
            err_at(e, path, 0, want[i].key, "no row for %s and no '*' row "
                   "(expected a row with %s '*' giving the default)", gpu,
                   col);
            goto out;
        }
        if (r < 0) {
            err_at(e, path, 0, want[i].key, "missing (expected a row with "
                   "this key)");
            goto out;
        }
        if (key_value(&t, r, c[2], &want[i], want[i].out, e))
            goto out;
        if (want[i].src)
            snprintf(want[i].src, want[i].srclen, "%s",
                     tsv_get(&t, r, c[3]));
    }
    rc = 0;
out:
    free(own);
    free(star);
    tsv_free(&t);
    return rc;
}

/* ---- topologies/pcie.tsv -------------------------------------------------- */

static int pcie_row(const tsv *t, int r, const int c[5], cfg_pcie *p,
                    llm_err *e)
{
    double gen, gt, pay, line;
    if (tsv_num(t, r, c[0], 1, CFG_PCIE_GENS, &gen, e))
        return -1;
    if (gen != floor(gen))
        return err_at(e, t->path, t->line[r], "gen", "%g is not a whole "
                      "number (expected a PCIe generation 1..%d)", gen,
                      CFG_PCIE_GENS);
    int g = (int)gen;
    if (p->GTps[g] > 0)
        return err_at(e, t->path, t->line[r], "gen", "a second row for "
                      "generation %d (expected one per generation)", g);
    if (tsv_num(t, r, c[1], 0.1, 1e4, &gt, e) ||
        tsv_num(t, r, c[2], 1, 1e4, &pay, e) ||
        tsv_num(t, r, c[3], pay, 1e4, &line, e))
        return -1;
    if (!tsv_get(t, r, c[4])[0])
        return err_at(e, t->path, t->line[r], "source", "empty (expected "
                      "where the figures come from)");
    p->GTps[g] = gt;
    p->encoding[g] = pay / line;
    return 0;
}

int cfg_pcie_load(const char *datadir, cfg_pcie *p, llm_err *e)
{
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s/topologies/pcie.tsv", datadir);
    tsv t;
    if (tsv_load(p->path, &t, e))
        return -1;
    static const char *const names[5] = {"gen", "lane_GTps", "payload_bits",
                                         "line_bits", "source"};
    int c[5], rc = 0;
    for (int i = 0; rc == 0 && i < 5; i++)
        rc = (c[i] = tsv_col(&t, names[i], e)) < 0 ? -1 : 0;
    for (int r = 0; rc == 0 && r < t.rows; r++)
        rc = pcie_row(&t, r, c, p, e);
    tsv_free(&t);
    return rc;
}

/* ---- calib/overhead.tsv --------------------------------------------------- */

int cfg_load_overhead(const char *datadir, const gpu_spec *g, mem_overhead *o,
                      llm_err *e)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/calib/overhead.tsv", datadir);
    double ctx, nccl, reserve;
    const cfg_key want[] = {
        {"cuda_context", 0, 1024, "GiB", &ctx, NULL, 0},
        {"nccl_per_communicator", 0, 1e6, "MiB", &nccl, NULL, 0},
        {"allocator_reserve", 0, 0.9, "fraction", &reserve, NULL, 0},
    };
    if (cfg_keyed_load(path, g ? g->name : "*", want, 3, e))
        return -1;
    o->cuda_context_bytes = ctx * GiB;
    o->nccl_bytes_per_group = nccl * MiB;
    o->reserve_frac = reserve;
    return 0;
}

/* ---- calib/economics.tsv -------------------------------------------------- */

int cfg_load_econ(const char *datadir, econ_params *p, llm_err *e)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/calib/economics.tsv", datadir);
    /* the bounds of a compare file's economics group */
    const cfg_key want[] = {
        {"amortization_years", 0.01, 100, "years", &p->amortization_years,
         NULL, 0},
        {"usd_per_kwh", 0, 100, "USD/kWh", &p->usd_per_kwh, NULL, 0},
        {"pue", 1, 10, "ratio", &p->pue, NULL, 0},
        {"hosting_usd_per_kw_month", 0, 1e6, "USD/kW-month",
         &p->hosting_usd_per_kw_month, NULL, 0},
    };
    return cfg_keyed_load(path, NULL, want, 4, e);
}

int cfg_load_node_econ(const char *datadir, const char *node, const char *gpu,
                       econ_params *p, econ_sources *s, llm_err *e)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/calib/node-economics.tsv", datadir);
    const cfg_key node_keys[] = {
        {"server_usd_per_gpu", 0, 1e9, "USD", &p->server_usd_per_gpu,
         s->server, sizeof s->server},
        {"network_usd_per_gpu", 0, 1e9, "USD", &p->network_usd_per_gpu,
         s->network, sizeof s->network},
        {"host_w_per_gpu", 0, 1e5, "W", &p->host_w_per_gpu, s->host_w,
         sizeof s->host_w},
        {"network_w_per_gpu", 0, 1e5, "W", &p->network_w_per_gpu,
         s->network_w, sizeof s->network_w},
    };
    if (cfg_keyed_load_by(path, "node", node, node_keys, 4, e))
        return -1;
    snprintf(path, sizeof path, "%s/calib/cloud-prices.tsv", datadir);
    const cfg_key gpu_keys[] = {
        {"rent_usd_per_gpu_hour", 0, 1e4, "USD/GPU-hour",
         &p->rent_usd_per_gpu_hour, s->rent, sizeof s->rent},
    };
    return cfg_keyed_load_by(path, "gpu", gpu, gpu_keys, 1, e);
}

/* ---- calib/fit.tsv -------------------------------------------------------- */

/* A name column: "-" is "", otherwise 1..len-1 characters. */
static int name_cell(const tsv *t, int r, int c, char *out, size_t len,
                     llm_err *e)
{
    const char *s = tsv_get(t, r, c);
    if (!s[0] || strlen(s) >= len)
        return err_at(e, t->path, t->line[r], t->head[c], "\"%s\" (expected "
                      "a name of 1 to %zu characters, or -)", s, len - 1);
    snprintf(out, len, "%s", strcmp(s, "-") == 0 ? "" : s);
    return 0;
}

static int fit_row(const tsv *t, int r, const int c[6], cfg_fit_gpu *out,
                   llm_err *e)
{
    cfg_fit_gpu *g = &out[r];
    if (name_cell(t, r, c[0], g->gpu, sizeof g->gpu, e) ||
        name_cell(t, r, c[1], g->traces, sizeof g->traces, e) ||
        name_cell(t, r, c[2], g->derived_from, sizeof g->derived_from, e) ||
        name_cell(t, r, c[3], g->gemm_measured, sizeof g->gemm_measured, e) ||
        tsv_num(t, r, c[4], 1e-3, 1, &g->flash_fwd, e))
        return -1;
    if (g->gemm_measured[0] && !g->derived_from[0])
        return err_at(e, t->path, t->line[r], "gemm_measured", "%s (expected "
                      "- for a GPU with traces: measured GEMMs replace a "
                      "derived GPU's GEMM shape)", g->gemm_measured);
    const char *src = tsv_get(t, r, c[5]);
    if (!src[0] || strlen(src) >= sizeof g->flash_src)
        return err_at(e, t->path, t->line[r], "source", "%s (expected where "
                      "the fraction comes from, under %zu characters)",
                      src[0] ? "too long" : "empty", sizeof g->flash_src);
    snprintf(g->flash_src, sizeof g->flash_src, "%s", src);
    if (!g->gpu[0] || !g->traces[0] == !g->derived_from[0])
        return err_at(e, t->path, t->line[r], "traces", "%s (expected a GPU "
                      "with either traces or derived_from, the other -)",
                      g->gpu[0] ? g->gpu : "-");
    for (int q = 0; q < r; q++)
        if (strcmp(out[q].gpu, g->gpu) == 0)
            return err_at(e, t->path, t->line[r], "gpu", "%s again (line %d "
                          "has it; expected one row per GPU)", g->gpu,
                          t->line[q]);
    return 0;
}

int cfg_load_fit_gpus(const char *datadir, cfg_fit_gpu **out, int *n,
                      llm_err *e)
{
    *out = NULL;
    *n = 0;
    char path[1100];
    snprintf(path, sizeof path, "%s/calib/fit.tsv", datadir);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    static const char *const names[6] = {"gpu", "traces", "derived_from",
                                         "gemm_measured",
                                         "flash_fwd_peak_fraction", "source"};
    int c[6], rc = 0;
    for (int i = 0; rc == 0 && i < 6; i++)
        rc = (c[i] = tsv_col(&t, names[i], e)) < 0 ? -1 : 0;
    cfg_fit_gpu *g = calloc((size_t)t.rows + 1, sizeof *g);
    if (rc == 0 && !g)
        rc = err_set(e, "%s: out of memory", path);
    for (int r = 0; rc == 0 && r < t.rows; r++)
        rc = fit_row(&t, r, c, g, e);
    /* a derived GPU's base must be fitted, not derived itself */
    for (int r = 0; rc == 0 && r < t.rows; r++) {
        int base = -1;
        for (int q = 0; g[r].derived_from[0] && q < t.rows; q++)
            if (strcmp(g[q].gpu, g[r].derived_from) == 0 && g[q].traces[0])
                base = q;
        if (g[r].derived_from[0] && base < 0)
            rc = err_at(e, path, t.line[r], "derived_from", "%s is not a "
                        "traced row of this table (expected a GPU with "
                        "traces)", g[r].derived_from);
    }
    if (rc == 0) {
        *out = g;
        *n = t.rows;
    } else {
        free(g);
    }
    tsv_free(&t);
    return rc;
}
