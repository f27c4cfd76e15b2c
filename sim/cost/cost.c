#include "cost/cost.h"

#include "model/model.h"

#include <gsl/gsl_interp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[OP_KIND_COUNT] = {
    "gemm",    "attention_prefill", "attention_decode", "norm",
    "softmax", "elementwise",       "embedding",        "optimizer",
    "memcpy_h2d", "memcpy_d2h"};

const char *cost_kind_name(cost_kind k) { return kind_names[k]; }

const char *const cost_mem_kind_names[MEM_KIND_COUNT] = {
    "elementwise", "norm", "activation", "rope", "embedding"};

int cost_attn_kernel_find(const cost_calib *c, const char *name)
{
    for (int i = 0; i < c->nattn_k; i++)
        if (strcmp(c->attn_k[i].name, name) == 0)
            return i + 1;
    return 0;
}

int cost_attn_kernel_need(const cost_calib *c, const gpu_spec *g,
                          const char *name, llm_err *e)
{
    int i = cost_attn_kernel_find(c, name);
    if (i == 0)
        return err_set(e, "--attention-kernel %s: calib/attention-kernels.tsv "
                          "has no row for it on %s (sm %d)",
                       name, g->name, g->sm);
    return i;
}

void cost_calib_free(cost_calib *c)
{
    for (int d = 0; d < DT_COUNT; d++) {
        free(c->gemm[d].lm);
        free(c->gemm[d].ln);
        free(c->gemm[d].lk);
        free(c->gemm[d].eff);
    }
    for (int k = 0; k < MEM_KIND_COUNT; k++) {
        free(c->hbm[k].lbytes);
        free(c->hbm[k].eff);
    }
    memset(c, 0, sizeof *c);
}

/* Between two grid values a step apart: linear, unless the second is
 * more than 1 + ln 4 times the first, where a linear efficiency would
 * outgrow the work of a 4x step and make more work take less time; there
 * geometric (such steps are where efficiency grows as a power of the size,
 * which the geometric mean follows).  The GEMM grid's m axis also has 2x
 * steps, where a smaller rise can dip; price_gemm's running max covers
 * those. */
static double blend(double a, double b, double w)
{
    double lo = a < b ? a : b, hi = a < b ? b : a;
    if (lo > 0 && hi > lo * (1 + M_LN2 * 2))
        return a * pow(b / a, w);
    return a + w * (b - a);
}

/* Linear interpolation at x over (xs, ys) with GSL, clamped to the ends so
 * that values never leave the range of their neighbours. */
static double interp1(const double *xs, const double *ys, int n, double x)
{
    if (n == 1 || x <= xs[0])
        return ys[0];
    if (x >= xs[n - 1])
        return ys[n - 1];
    gsl_interp *it = gsl_interp_alloc(gsl_interp_linear, (size_t)n);
    double y = ys[0];
    if (it && gsl_interp_init(it, xs, ys, (size_t)n) == 0)
        y = gsl_interp_eval(it, xs, ys, x, NULL);
    gsl_interp_free(it);
    return y;
}

/* Where x (log2) falls on axis ax of n points: the bracketing indices and
 * the weight of the upper one, clamped to the ends. */
static void bracket(const double *ax, int n, double x, int *lo, int *hi,
                    double *w)
{
    int i = 0;
    while (i + 1 < n && ax[i + 1] <= x)
        i++;
    *lo = i;
    *hi = i + 1 < n ? i + 1 : i;
    double span = ax[*hi] - ax[*lo];
    *w = span > 0 ? (x - ax[*lo]) / span : 0;
    if (*w < 0)
        *w = 0;
    if (*w > 1)
        *w = 1;
}

/* A grid's point of view at fixed (n, k): their brackets and weights. */
typedef struct grid_nk {
    int lo[2], hi[2]; /* n, k */
    double w[2];
} grid_nk;

static grid_nk grid_at_nk(const cost_grid *g, double n, double k)
{
    grid_nk a;
    bracket(g->ln, g->nn, log2(n), &a.lo[0], &a.hi[0], &a.w[0]);
    bracket(g->lk, g->nk, log2(k), &a.lo[1], &a.hi[1], &a.w[1]);
    return a;
}

/* The efficiency at m index im and a's (n, k): blended along k for the
 * two bracketing n, then along n. */
static double grid_column(const cost_grid *g, const grid_nk *a, int im)
{
    double e[2];
    for (int b = 0; b < 2; b++) {
        int in = b ? a->hi[0] : a->lo[0];
        const double *row = g->eff + ((size_t)im * g->nn + in) * g->nk;
        e[b] = blend(row[a->lo[1]], row[a->hi[1]], a->w[1]);
    }
    return blend(e[0], e[1], a->w[0]);
}

/* In log2 space, blended (blend) along k for the bracketing (m, n)
 * corners, then along n, then along m. */
double cost_grid_eff(const cost_grid *g, double m, double n, double k)
{
    grid_nk a = grid_at_nk(g, n, k);
    int lo, hi;
    double w;
    bracket(g->lm, g->nm, log2(m), &lo, &hi, &w);
    return blend(grid_column(g, &a, lo), grid_column(g, &a, hi), w);
}

/* A kind without its own curve streams like an elementwise kernel. */
static const struct cost_curve *curve(const cost_calib *c, cost_mem_kind k)
{
    return c->hbm[k].n ? &c->hbm[k] : &c->hbm[MEM_ELEMENTWISE];
}

double cost_hbm_eff(const cost_calib *c, cost_mem_kind k, double bytes)
{
    const struct cost_curve *cv = curve(c, k);
    if (cv->n == 0)
        return 1;
    return interp1(cv->lbytes, cv->eff, cv->n, log2(bytes > 1 ? bytes : 1));
}

/* ---- capabilities -------------------------------------------------------- */

static int check_caps(const gpu_spec *g, const cost_op *op, unsigned fb,
                      cost_result *r, llm_err *e)
{
    const char *why = NULL;
    r->dt = op->dt;
    if (!gpu_supports_dtype(g, op->dt, &why) || g->peak_flops[op->dt] <= 0) {
        if (!(fb & COST_FALLBACK_DTYPE))
            return err_set(e, "%s on %s: %s (allow the fallback with "
                              "--fallback dtype)",
                           dtype_name(op->dt), g->name, why ? why : "no peak");
        dtype to = gpu_has(g, GPU_CAP_BF16) ? DT_BF16 : DT_FP16;
        snprintf(r->fallback, sizeof r->fallback,
                 "%s -> %s: %s has %s", dtype_name(op->dt), dtype_name(to),
                 g->name, why ? why : "no peak for it");
        r->dt = to;
    }
    bool attn = op->kind == OP_ATTN_PREFILL || op->kind == OP_ATTN_DECODE;
    if (attn && op->flash && !gpu_has(g, GPU_CAP_FLASH_ATTN)) {
        if (!(fb & COST_FALLBACK_UNFUSED))
            return err_set(e, "FlashAttention on %s: needs sm_80 or newer "
                              "(allow the unfused fallback with --fallback "
                              "unfused)",
                           g->name);
        size_t l = strlen(r->fallback);
        snprintf(r->fallback + l, sizeof r->fallback - l,
                 "%sFlashAttention -> unfused attention (%s is sm_%d)",
                 l ? "; " : "", g->name, g->sm);
    }
    return 0;
}

/* ---- FLOPs and bytes ---------------------------------------------------- */

static double in_bytes(dtype d) { return dtype_bytes(d); }
/* outputs of 8-bit GEMMs are written in 16-bit */
static double out_bytes(dtype d) { return dtype_bytes(d) < 2 ? 2 : dtype_bytes(d); }
/* activations around an op computing in d: d's size, 16-bit for 8-bit
 * (and narrower) dtypes, whose kernels read and write 16-bit */
static double act_bytes(dtype d) { return out_bytes(d); }

static void gemm_work(const cost_op *op, dtype d, double *flops, double *bytes)
{
    double b = op->batch > 0 ? op->batch : 1;
    *flops = 2 * b * op->m * op->n * op->k;
    double wb = op->w_bytes > 0 ? op->w_bytes : in_bytes(d);
    *bytes = b * (op->m * op->k * in_bytes(d) + op->k * op->n * wb +
                  op->m * op->n * out_bytes(d));
}

/* FlashAttention reads Q, K, V and writes O once; the unfused path also
 * writes the scores, reads them for softmax, writes probabilities and reads
 * them for P·V (4 passes over b·h·q·kv values).  A fused causal prefill
 * does half the score work; the unfused one computes the whole square and
 * adds the mask to it, a read and a write more (PyTorch's reference
 * attention: github:Dao-AILab/flash-attention@c082294e:
 * benchmarks/benchmark_flash_attention.py attention_pytorch, baddbmm, then
 * scores + causal_mask, softmax, einsum). */
static void attn_work(const cost_op *op, dtype d, bool flash, bool skip,
                      double bwd_ratio, double *flops, double *bytes)
{
    double b = op->batch > 0 ? op->batch : 1;
    double q = op->kind == OP_ATTN_DECODE ? 1 : op->q_len;
    double vd = op->v_head_dim > 0 ? op->v_head_dim : op->head_dim;
    bool masked = op->causal && op->kind == OP_ATTN_PREFILL;
    double frac = masked ? 0.5 : 1.0;
    double kv = op->kv_len;
    if (flash && op->window > 0 && op->kind == OP_ATTN_DECODE)
        kv = fmin(kv, op->window);
    else if (flash && op->window > 0 && op->window < op->kv_len && q > 0)
        frac = model_causal_pairs(q, op->kv_len, op->window) /
               (q * op->kv_len);
    /* a kernel that masks after computing does the whole square */
    if ((!flash || !skip) && op->kind == OP_ATTN_PREFILL)
        frac = 1.0;
    *flops = 2 * b * op->heads * q * kv * (op->head_dim + vd) * frac;
    if (op->backward)
        *flops *= bwd_ratio;
    double s = act_bytes(d);
    double kvs = op->kv_bytes > 0 ? op->kv_bytes : s;
    *bytes = b * (s * q * op->heads * (op->head_dim + vd) +
                  kvs * kv * op->kv_heads * (op->head_dim + vd));
    if (!flash)
        *bytes += (masked ? 6 : 4) * s * b * op->heads * q * op->kv_len;
}

/* ---- prediction --------------------------------------------------------- */

static void note(cost_result *r, const char *fmt, const char *a, double x)
{
    if (!r->explain)
        return;
    size_t l = strlen(r->calibration);
    snprintf(r->calibration + l, sizeof r->calibration - l, fmt, a, x);
}

double cost_gemm_rows(double m, double tile_rows, double small_rows)
{
    if (tile_rows <= 0 || m <= 0)
        return m;
    if (m <= small_rows)
        return small_rows;
    return ceil(m / tile_rows) * tile_rows;
}

static double roof_s(double flops, double bytes, double peak, double bw)
{
    double c = flops / peak, m = bytes / bw;
    return c > m ? c : m;
}

/* The grid along m at one (n, k): its columns computed once each (a GEMM's
 * running max over tile counts looks up a few m points many times). */
typedef struct grid_m {
    const cost_grid *g;
    grid_nk at;
    int idx[8];
    double eff[8];
    int n;
} grid_m;

static double grid_m_column(grid_m *c, int im)
{
    for (int i = 0; i < c->n; i++)
        if (c->idx[i] == im)
            return c->eff[i];
    double e = grid_column(c->g, &c->at, im);
    if (c->n < 8) {
        c->idx[c->n] = im;
        c->eff[c->n++] = e;
    }
    return e;
}

static double grid_m_eff(grid_m *c, double m)
{
    int lo, hi;
    double w;
    bracket(c->g->lm, c->g->nm, log2(m), &lo, &hi, &w);
    return blend(grid_m_column(c, lo), grid_m_column(c, hi), w);
}

/* Seconds the grid gives a GEMM of op's shape computed as `rows` rows. */
static double rows_time_s(grid_m *gm, const cost_op *op, dtype d,
                          double rows, double peak, double bw)
{
    cost_op x = *op;
    x.m = rows;
    double fl, by;
    gemm_work(&x, d, &fl, &by);
    double eff = grid_m_eff(gm, rows * (op->batch > 1 ? op->batch : 1));
    return roof_s(fl, by, peak, bw) / (eff > 0 ? eff : 1e-3);
}

/* How far back along m price_gemm's running max looks, in tiles (2,048
 * rows): the grid's dips lie past its points, where the efficiency rises
 * fastest, and past 16 tiles it has flattened (test_cost.c checks every
 * catalog GPU in steps of 8 rows, and by doubling to 16,384). */
#define TILE_LOOKBACK 16

/* A GEMM: its efficiency from the dtype's (m, n, k) grid, which prices
 * the GEMM the kernel runs: m padded to whole tiles of rows
 * (cost_gemm_rows), so a GEMM just past a tile boundary takes the next
 * tile's time; and never less than a GEMM of fewer tiles takes (the
 * grid's interpolation between its points can dip where the efficiency
 * grows fast along m).  Its efficiency is over the op's own roofline. */
static int price_gemm(const cost_calib *c, const cost_op *op, dtype d,
                      double peak, double bw, cost_result *r, double *eff,
                      llm_err *e)
{
    gemm_work(op, d, &r->flops, &r->bytes);
    const cost_grid *gr = &c->gemm[d];
    if (gr->nm == 0)
        gr = c->gemm[DT_BF16].nm ? &c->gemm[DT_BF16] : &c->gemm[DT_FP16];
    if (gr->nm == 0)
        return err_set(e, "no GEMM table for %s in %s", dtype_name(d),
                       c->dir);
    double tile = c->gemm_tile_rows, small = c->gemm_small_rows;
    double rows = cost_gemm_rows(op->m, tile, small);
    grid_m gm = {.g = gr, .at = grid_at_nk(gr, op->n, op->k), .n = 0};
    /* a strided batch launches batch x the tiles of one GEMM, so it
     * fills the GPU as one GEMM of batch x m rows would (rows_time_s) */
    double t = rows_time_s(&gm, op, d, rows, peak, bw);
    if (tile > 0)
        for (int i = 1; i <= TILE_LOOKBACK && rows - (i - 1) * tile > small;
             i++) {
            double q = rows - i * tile > small ? rows - i * tile : small;
            double tq = rows_time_s(&gm, op, d, q, peak, bw);
            t = tq > t ? tq : t;
        }
    double roof = roof_s(r->flops, r->bytes, peak, bw);
    *eff = t > 0 && roof > 0 ? roof / t : 1;
    note(r, "gemm.tsv %s grid", gr == &c->gemm[d] ? dtype_name(d)
                                                    : "bf16 (nearest)", 0);
    note(r, " (%s) -> efficiency %.3f", gr->source, *eff);
    if (rows > op->m) {
        char m[32];
        snprintf(m, sizeof m, "%.0f", op->m);
        note(r, "; %s rows computed as %.0f (whole tiles of kernels.tsv "
                "gemm_tile_rows)", m, rows);
    }
    return 0;
}

/* A fused attention kernel gives each (query tile, head) block to one SM,
 * which loops over the keys a tile at a time; loading the block's queries,
 * the softmax epilogue and writing its output are a fixed cost worth
 * `tokens` keys of that loop (under a causal mask also the diagonal tiles
 * it computes in part), so the loop's share of the time is
 * kv / (kv + tokens).  calib/attention-kernels.tsv fits `tokens` per kernel
 * to the FlashAttention-3 paper's sequence sweeps. */
double cost_attn_tile_share(double kv, double tokens)
{
    return tokens > 0 && kv > 0 ? kv / (kv + tokens) : 1;
}

/* A fused forward computes one exponential per score on the SMs'
 * special-function units, which the kernels do not hide behind the tensor
 * cores (FlashAttention-3 paper, Sec. 3.2: 989 TFLOP/s of FP16 matmul
 * against 3.9 T exponentials/s on H100; its forward's fall from head dim
 * 128 to 64 is that cost, unhidden).  The tables' fractions hold at head
 * dim 128 (128 + 128 per score): the rest of a score's time there is its
 * matmuls, which scale with the head dims.  The factor that moves a
 * fraction from 128 to this op's head dims; 1 where the GPU gives no SM
 * count or clock. */
static double head_dim_factor(const cost_calib *c, const gpu_spec *g,
                              const cost_op *op, dtype d, double frac)
{
    double vd = op->v_head_dim > 0 ? op->v_head_dim : op->head_dim;
    double dims = op->head_dim + vd, ref = 256;
    double p16 = g->peak_flops[DT_BF16], pd = g->peak_flops[d];
    if (c->sfu_exp_per_sm_cycle <= 0 || g->sm_count <= 0 ||
        g->boost_clock_hz <= 0 || !(p16 > 0) || !(pd > 0) || frac <= 0 ||
        (dims == ref && pd == p16))
        return 1;
    double exp_s = 1 / (c->sfu_exp_per_sm_cycle * g->sm_count *
                        g->boost_clock_hz);
    /* a score's 16-bit matmuls at the reference dims; they never beat the
     * tensor peak */
    double mm_s = fmax(2 * ref / (frac * p16) - exp_s, 2 * ref / p16);
    /* this op's: its dims, at its dtype's tensor rate (FP8's matmuls take
     * half the time, its exponentials the same: the paper's "worse in
     * FP8") */
    double at = mm_s * dims / ref * p16 / pd + exp_s;
    return 2 * dims / (pd * at) / frac;
}

/* Attention, prefill or decode: fused at the published fraction of peak
 * scaled by length and head dims, or as its two GEMMs. */
static void price_attention(const cost_calib *c, const gpu_spec *g,
                            const cost_op *op, dtype d, bool flash,
                            cost_result *r, double *eff)
{
    const struct cost_attn_kernel *k =
        flash && op->attn_kernel > 0 && op->attn_kernel <= c->nattn_k
            ? &c->attn_k[op->attn_kernel - 1]
            : NULL;
    /* a table read without calib/kernels.tsv (one directory's, for
     * calibrate) has no backward ratio: count the forward's FLOPs */
    attn_work(op, d, flash, !k || k->causal_skip,
              c->flash_bwd_ratio > 0 ? c->flash_bwd_ratio : 1, &r->flops,
              &r->bytes);
    double q = op->kind == OP_ATTN_DECODE ? 1 : op->q_len;
    /* a fused decode through a sliding window is the kernel over the
     * window's keys */
    double kv = flash && op->window > 0 && op->kind == OP_ATTN_DECODE
                    ? fmin(op->kv_len, op->window)
                    : op->kv_len;
    const cost_grid *gr = c->gemm[d].nm ? &c->gemm[d] : &c->gemm[DT_BF16];
    if (flash) {
        /* the published fraction of peak a fused kernel reaches at the
         * tables' reference length (its row's, else the GPU's
         * attention.tsv), scaled by the share of its time the inner loop
         * over keys takes at this length against that one (a causal kv
         * counts the square, as attn_work does) and moved to the op's head
         * dims (forward only) */
        bool masked = op->causal && op->kind == OP_ATTN_PREFILL;
        bool skips = masked && (!k || k->causal_skip);
        double f = !k             ? c->attn_eff
                   : op->backward ? k->bwd
                   : masked       ? k->fwd_causal
                                  : k->fwd;
        double tok = k ? (skips ? k->tile_tokens_causal : k->tile_tokens)
                       : (skips ? c->flash_tile_tokens_causal
                                : c->flash_tile_tokens);
        double shape = cost_attn_tile_share(kv, tok) /
                       cost_attn_tile_share(COST_ATTN_REF_TOKENS, tok);
        double hd = op->kind == OP_ATTN_PREFILL && !op->backward
                        ? head_dim_factor(c, g, op, d, f)
                        : 1;
        *eff = f * shape * hd;
        if (k) {
            note(r, "attention-kernels.tsv %s", k->name, 0);
            note(r, " (%s)", k->source, 0);
            if (masked && !k->causal_skip)
                note(r, "; computes the whole square under the mask%s", "",
                     0);
        } else {
            note(r, "attention.tsv flash_fwd %s", c->attn_source, 0);
        }
        note(r, " x tile share %.3f of the reference length's", "", shape);
        if (hd != 1)
            note(r, " x %.3f for the head dims (one unhidden exponential per "
                    "score, kernels.tsv sfu_exp_per_sm_cycle)", "", hd);
    } else {
        /* two strided-batch GEMMs over every (batch, head), which fill the
         * GPU as one GEMM of batch x heads x queries rows (as a batch of
         * GEMMs does), plus the score traffic */
        double b = op->batch > 0 ? op->batch : 1;
        *eff = gr->nm ? cost_grid_eff(gr, b * op->heads * q, op->kv_len,
                                      op->head_dim)
                      : 1;
        note(r, "gemm.tsv grid at (batch x heads x queries, keys, "
                "head_dim) %s", "", 0);
    }
}

double cost_stream_Bps(const cost_calib *c, const gpu_spec *g)
{
    return g->mem_bw_Bps * cost_hbm_eff(c, MEM_ELEMENTWISE, 0x1p50);
}

/* A memory-bound kernel's time: a fixed cost (launch to finish of a
 * grid), then the longer of the latency chain of one thread block, which
 * loops over its row 1,024 elements at a time with a memory round trip
 * each, and the throughput of the whole grid, where every byte passes
 * DRAM at the streaming efficiency of the GPU's hbm.tsv and the SMs'
 * load/store issue at the kind's bytes per SM cycle.  Latencies are in
 * cycles, so they carry to a GPU with another clock; bytes go at its own
 * datasheet bandwidth (calib/memory-kernels.tsv). */
static double membound_time_s(const cost_calib *c, const gpu_spec *g,
                              cost_mem_kind k, double bytes, double row)
{
    const struct cost_memk *m = &c->memk[k];
    double f = g->boost_clock_hz;
    double thr = bytes / cost_stream_Bps(c, g);
    if (m->bytes_per_sm_cycle > 0)
        thr += bytes / (m->bytes_per_sm_cycle * g->sm_count * f);
    double chain = m->row_cycles * (row > 0 ? row : 0) / 1024 / f;
    return m->fixed_cycles / f + (chain > thr ? chain : thr);
}

/* The latency model needs the GPU's SMs and clock and the kind's row of
 * calib/memory-kernels.tsv; without them the hbm.tsv curve prices it. */
static bool latency_model(const cost_calib *c, const gpu_spec *g,
                          cost_mem_kind k)
{
    return g->sm_count > 0 && g->boost_clock_hz > 0 &&
           c->memk[k].fixed_cycles > 0;
}

double cost_membound_time_s(const cost_calib *c, const gpu_spec *g,
                            cost_mem_kind k, double bytes, double row_elems)
{
    if (!latency_model(c, g, k))
        return bytes / (g->mem_bw_Bps * cost_hbm_eff(c, k, bytes));
    return membound_time_s(c, g, k, bytes, row_elems);
}

/* A memory-bound kernel (norm, softmax, elementwise, embedding, the
 * optimizer's update): its bytes and FLOPs, and the achieved bandwidth of
 * its kind at its size.  *peak becomes the FP32 vector rate. */
static void price_membound(const cost_calib *c, const gpu_spec *g,
                           const cost_op *op, dtype d, cost_result *r,
                           double *eff, double *peak)
{
    double el = op->elems, a = act_bytes(d);
    /* optimizer: its step's bytes per parameter (op->bytes; 0: Adam's fp32
     * p, m, v read and written, the gradient read); embedding: a row read,
     * an activation written; norm, softmax: read and write one activation */
    double per = op->kind == OP_OPTIMIZER ? (op->bytes > 0 ? op->bytes : 28.0)
                 : op->kind == OP_ELEMENTWISE
                     ? a * ((op->reads ? op->reads : 1) +
                            (op->writes ? op->writes : 1))
                     : 2 * a;
    double fl = op->kind == OP_OPTIMIZER ? 12 : op->kind == OP_EMBEDDING ? 0
                                                                         : 5;
    r->flops = fl * el;
    r->bytes = per * el;
    *peak = g->peak_flops[DT_FP32] > 0 ? g->peak_flops[DT_FP32] : *peak;
    cost_mem_kind mk = op->kind == OP_NORM || op->kind == OP_SOFTMAX
                           ? MEM_NORM
                       : op->kind == OP_EMBEDDING ? MEM_EMBEDDING
                                                  : op->mem;
    if (latency_model(c, g, mk)) {
        /* a gated activation (silu-and-mul: two inputs) runs a block per
         * token over its row; a GELU or ReLU (one input) is a flat grid */
        bool flat = mk == MEM_ACTIVATION && op->reads < 2;
        double t = membound_time_s(c, g, mk, r->bytes,
                                   flat ? 0 : op->row_elems);
        double roof = r->bytes / g->mem_bw_Bps, cr = r->flops / *peak;
        *eff = (cr > roof ? cr : roof) / t;
        note(r, "memory-kernels.tsv %s: fixed latency, row latency and "
                "issue rate in cycles of this GPU's clock, DRAM at the hbm.tsv "
                "streaming efficiency -> %.3f of the roofline",
             cost_mem_kind_names[mk], *eff);
        return;
    }
    *eff = cost_hbm_eff(c, mk, r->bytes);
    note(r, "hbm.tsv %s curve", cost_mem_kind_names[curve(c, mk) ==
                                                    &c->hbm[mk]
                                                ? mk
                                                : MEM_ELEMENTWISE], 0);
    note(r, " (%s)", curve(c, mk)->source, 0);
    note(r, " at this size -> efficiency %.3f", "", *eff);
}

double cost_tensor_load(const cost_calib *c, dtype d)
{
    double f = d == DT_FP8 || d == DT_FP4 ? c->train_tensor_fp8
                                          : c->train_tensor_16bit;
    return f > 0 ? f : 1;
}

/* The roofline of the priced work over its efficiency, plus the launch. */
static void roofline(const cost_calib *c, const cost_op *op, double peak,
                     double bw, double eff, bool fused, cost_result *r)
{
    r->compute_s = isfinite(peak) && peak > 0 ? r->flops / peak : 0;
    if (op->sustained &&
        (op->kind == OP_GEMM || op->kind == OP_ATTN_PREFILL)) {
        /* power-limited clocks slow the tensor cores, not the memory, in
         * every dtype: the 16-bit value, the GPU's.  The FP8 value's further
         * drop belongs to training's FP8 recipe (amax and scaling, casts),
         * which a serving engine's static scales do not run */
        double f = cost_tensor_load(c, DT_BF16);
        r->compute_s /= f;
        if (f < 1)
            note(r, "%s; tensor rate x %.3f under a sustained load "
                    "(training-load.tsv)", "", f);
    }
    r->memory_s = r->bytes / bw;
    double roof = r->compute_s > r->memory_s ? r->compute_s : r->memory_s;
    r->bound = r->compute_s > r->memory_s ? "compute" : "memory";
    if (eff <= 0 || eff > 1)
        eff = eff <= 0 ? 1e-3 : 1;
    bool attn = op->kind == OP_ATTN_PREFILL || op->kind == OP_ATTN_DECODE;
    if (attn || (op->kind == OP_GEMM && op->batch > 1)) {
        /* Priced apart: the math at the kernel's own efficiency, the bytes
         * at the HBM streaming rate.  A fused attention's efficiency is a
         * fraction of the tensor peak, so it binds whenever the math does,
         * however few its bytes (a short prefill is not faster than its
         * kernel's FLOP rate because its roofline leans to memory); a
         * decode streams its KV cache.  A strided batch fills the GPU with
         * its tiles as one GEMM of batch x m rows (that grid's efficiency,
         * for the tensor cores), but streams batch distinct B matrices (an
         * MoE layer's experts) at the HBM rate, not at the efficiency of a
         * GEMM that would read one B.  Overlapped in one kernel, the slower
         * of the two sets the time; unfused attention runs its GEMMs and
         * its passes over the scores as kernels of their own, one after
         * another, so the two add. */
        bool apart = attn && !fused;
        double stream = cost_hbm_eff(c, MEM_ELEMENTWISE, r->bytes);
        double tc = r->compute_s / eff, tm = r->memory_s / stream;
        r->kernel_s = apart ? tc + tm : tc > tm ? tc : tm;
        r->bound = tc > tm ? "compute" : "memory";
        r->efficiency = roof / r->kernel_s;
        note(r, !attn    ? "%s; batch of distinct B matrices: bytes at the "
                           "hbm.tsv streaming efficiency %.3f"
                : apart ? "%s; unfused: GEMMs, then the scores' passes at the "
                          "hbm.tsv streaming efficiency %.3f"
                        : "%s; bytes at the hbm.tsv streaming efficiency %.3f",
             "", stream);
    } else {
        r->efficiency = eff;
        r->kernel_s = roof / eff;
    }
    r->launch_s = c->launch_s;
    r->time_s = r->kernel_s + r->launch_s;
    if (c->derived_from[0] && r->explain) {
        size_t l = strlen(r->calibration);
        snprintf(r->calibration + l, sizeof r->calibration - l,
                 "; tables of %s (closest calibrated architecture)",
                 c->derived_from);
    }
}

int cost_predict(const cost_calib *c, const gpu_spec *g, const cost_op *op,
                 unsigned fallbacks, cost_result *r, llm_err *e)
{
    memset(r, 0, sizeof *r);
    r->explain = op->explain;
    if (check_caps(g, op, fallbacks, r, e))
        return -1;
    dtype d = r->dt;
    bool flash = op->flash && gpu_has(g, GPU_CAP_FLASH_ATTN);
    double peak = g->peak_flops[d], bw = g->mem_bw_Bps, eff = 1;
    switch (op->kind) {
    case OP_GEMM:
        if (price_gemm(c, op, d, peak, bw, r, &eff, e))
            return -1;
        break;
    case OP_ATTN_PREFILL:
    case OP_ATTN_DECODE:
        price_attention(c, g, op, d, flash, r, &eff);
        break;
    case OP_MEMCPY_H2D:
    case OP_MEMCPY_D2H:
        r->bytes = op->bytes;
        bw = gpu_pcie_Bps(g);
        eff = c->pcie_eff > 0 ? c->pcie_eff : 1;
        peak = INFINITY;
        note(r, "links.tsv pcie %s efficiency %.3f", "", eff);
        break;
    default:
        price_membound(c, g, op, d, r, &eff, &peak);
    }
    roofline(c, op, peak, bw, eff, flash, r);
    return 0;
}
