#include "serve/infer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mem/mem.h"

typedef struct part {
    double s, flops, bytes;
} part;

/* what depends only on the batch's token count: one dense layer, one MoE
 * layer, the TP all-reduces of a layer, the embedding */
typedef struct per_tokens {
    bool have;
    part dense, moe, embed;
    double tp_s;
} per_tokens;

struct infer {
    infer_setup s;
    int *ranks;
    dtype gemm_dt, act_dt;
    double w_bytes;
    per_tokens *tok;     /* [max_tokens + 1] */
    part *head;          /* [max_tokens + 1]: final norm + LM head by logits */
    bool *have_head;
    double **p2p;        /* [pp - 1][max_tokens + 1], < 0 = not yet */
    int *dense_layers, *moe_layers; /* per stage */
    double *weights;     /* per stage, one GPU */
    double windowed;     /* share of the layers with a sliding window */
};

static void add(part *p, const cost_result *r)
{
    p->s += r->time_s;
    p->flops += r->flops;
    p->bytes += r->bytes;
}

/* A serving engine keeps the GPU busy for as long as requests come, so its
 * compute-bound kernels run at the tensor rate a sustained load holds, as
 * a training run's do (calib/training-load.tsv, fitted to training runs
 * only: every serving case checks it); memory-bound ones are unchanged. */
static int price(infer *x, const cost_op *op, part *p, llm_err *e)
{
    cost_result r;
    cost_op o = *op;
    o.sustained = true;
    if (cost_predict(x->s.cost, x->s.gpu, &o, COST_FALLBACK_DTYPE, &r, e))
        return -1;
    add(p, &r);
    return 0;
}

static int gemm(infer *x, double m, double n, double k, double batch, part *p,
                llm_err *e)
{
    cost_op op = {.kind = OP_GEMM, .dt = x->gemm_dt, .m = m, .n = n, .k = k,
                  .batch = batch, .w_bytes = x->w_bytes};
    return price(x, &op, p, e);
}

/* row: the elements of one token that a thread block loops over (0: a
 * flat kernel, the residual add) */
static int elementwise(infer *x, cost_mem_kind kind, double elems, int reads,
                       double row, part *p, llm_err *e)
{
    cost_op op = {.kind = OP_ELEMENTWISE, .mem = kind, .dt = x->act_dt,
                  .elems = elems, .reads = reads, .writes = 1,
                  .row_elems = row};
    return price(x, &op, p, e);
}

/* Attention projections, MLP or experts, norms, rotary embedding and
 * residual adds of one layer over T tokens (attention itself apart). */
static int layer_part(infer *x, double T, bool moe, part *p, llm_err *e)
{
    const model_spec *m = x->s.m;
    double h = m->hidden, t = x->s.tp;
    double qd = m->heads * (double)model_qk_head_dim(m);
    double kvh = m->mla ? m->heads : m->kv_heads;
    double kvd = kvh * (m->mla ? model_qk_head_dim(m) : m->head_dim);
    double kv_div = kvh >= t ? t : kvh;
    double vd = m->heads * (double)model_v_head_dim(m);
    double per_ffn = m->mlp == MLP_SWIGLU ? 2 : 1;
    memset(p, 0, sizeof *p);
    if (gemm(x, T, qd / t + 2 * kvd / kv_div, h, 1, p, e) ||
        gemm(x, T, h, vd / t, 1, p, e))
        return -1;
    double qk = qd / t + kvd / kv_div; /* rope's q and k of one token */
    if (m->pos == POS_ROPE && elementwise(x, MEM_ROPE, T * qk, 1, qk, p, e))
        return -1;
    double f = m->ffn / t;
    if (moe) {
        /* every routed expert with at least one of the T·k assignments
         * reads its weights: E(1 - (1 - k/E)^T) of them on average */
        double E = m->moe_experts, k = m->moe_active;
        double touched = E * (1 - pow(1 - k / E, T));
        if (touched < 1)
            touched = 1;
        double tok = T * k / touched, ef = m->moe_expert_ffn / t;
        if (gemm(x, tok, per_ffn * ef, h, touched, p, e) ||
            gemm(x, tok, h, ef, touched, p, e) ||
            elementwise(x, MEM_ACTIVATION, T * k * ef, (int)per_ffn, ef, p,
                        e))
            return -1;
        cost_op router = {.kind = OP_GEMM, .dt = x->act_dt, .m = T, .n = E,
                          .k = h, .batch = 1};
        if (price(x, &router, p, e))
            return -1;
        f = m->moe_shared * (double)m->moe_expert_ffn / t;
    }
    if (f > 0 && (gemm(x, T, per_ffn * f, h, 1, p, e) ||
                  gemm(x, T, h, f, 1, p, e) ||
                  elementwise(x, MEM_ACTIVATION, T * f, (int)per_ffn, f, p,
                              e)))
        return -1;
    cost_op norm = {.kind = OP_NORM, .dt = x->act_dt, .elems = T * h,
                    .row_elems = h};
    for (int i = 0; i < 2; i++)
        if (price(x, &norm, p, e) ||
            elementwise(x, MEM_ELEMENTWISE, T * h, 2, 0, p, e))
            return -1;
    return 0;
}

static int tp_allreduce_s(infer *x, double T, double *out, llm_err *e)
{
    *out = 0;
    if (x->s.tp == 1 || x->s.free_comm)
        return 0;
    coll_req q = {.op = COLL_ALL_REDUCE, .algo = ALGO_AUTO,
                  .proto = PROTO_AUTO, .ranks = x->ranks, .n = x->s.tp,
                  .bytes = T * x->s.m->hidden * 2};
    coll_result r;
    if (coll_time_alone(x->s.routes, x->s.coll, &q, &r, e))
        return -1;
    *out = r.time_s;
    return 0;
}

static int tokens_part(infer *x, int T, per_tokens *pt, llm_err *e)
{
    const model_spec *m = x->s.m;
    memset(pt, 0, sizeof *pt);
    if (layer_part(x, T, false, &pt->dense, e) ||
        (m->moe_experts > 0 && layer_part(x, T, true, &pt->moe, e)) ||
        tp_allreduce_s(x, T, &pt->tp_s, e))
        return -1;
    cost_op emb = {.kind = OP_EMBEDDING, .dt = x->act_dt,
                   .elems = (double)T * m->hidden, .row_elems = m->hidden};
    if (price(x, &emb, &pt->embed, e))
        return -1;
    pt->have = true;
    return 0;
}

static int get_tokens(infer *x, int T, per_tokens *tmp, const per_tokens **out,
                      llm_err *e)
{
    if (T <= x->s.max_tokens) {
        per_tokens *c = &x->tok[T];
        if (!c->have && tokens_part(x, T, c, e))
            return -1;
        *out = c;
        return 0;
    }
    if (tokens_part(x, T, tmp, e))
        return -1;
    *out = tmp;
    return 0;
}

static int head_part(infer *x, int n, part *p, llm_err *e)
{
    const model_spec *m = x->s.m;
    memset(p, 0, sizeof *p);
    if (n == 0)
        return 0;
    cost_op norm = {.kind = OP_NORM, .dt = x->act_dt,
                    .elems = (double)n * m->hidden, .row_elems = m->hidden};
    /* the LM head stays 16-bit in quantized checkpoints */
    cost_op lm = {.kind = OP_GEMM, .dt = x->act_dt, .m = n,
                  .n = (double)m->vocab / x->s.tp, .k = m->hidden, .batch = 1};
    return price(x, &norm, p, e) || price(x, &lm, p, e) ? -1 : 0;
}

static int get_head(infer *x, int n, part *tmp, const part **out, llm_err *e)
{
    if (n <= x->s.max_tokens) {
        if (!x->have_head[n] && head_part(x, n, &x->head[n], e))
            return -1;
        x->have_head[n] = true;
        *out = &x->head[n];
        return 0;
    }
    if (head_part(x, n, tmp, e))
        return -1;
    *out = tmp;
    return 0;
}

/* Attention of one layer for the whole batch: one kernel per prefill
 * chunk (its queries over its context, causal) and one over every
 * decoding sequence's cache (paged attention reads each sequence's KV);
 * through a sliding window of `window` keys when it is > 0. */
static int attention_layer(infer *x, const infer_batch *b, double window,
                           part *p, llm_err *e)
{
    const model_spec *m = x->s.m;
    double t = x->s.tp;
    double kvh = m->mla ? m->heads : m->kv_heads;
    double kv_div = kvh >= t ? t : kvh;
    cost_op a = {.dt = x->act_dt, .batch = 1,
                 .heads = (int)fmax(1, m->heads / t),
                 .kv_heads = (int)fmax(1, kvh / kv_div),
                 .head_dim = model_qk_head_dim(m),
                 .v_head_dim = model_v_head_dim(m), .causal = true,
                 .flash = x->s.flash, .kv_bytes = dtype_bytes(x->s.kv_dt)};
    memset(p, 0, sizeof *p);
    for (int i = 0; i < b->prefill_n; i++) {
        const infer_chunk *c = &b->prefill[i];
        a.kind = OP_ATTN_PREFILL;
        a.q_len = c->q_tokens;
        /* a chunk's queries see the earlier context in full and
         * themselves causally: q(ctx - q/2) scores, the causal kernel's
         * q·kv/2 with kv = 2 ctx - q; through a window shorter than the
         * context the kernel counts the chunk's pairs as the last q of
         * ctx positions */
        bool through = window > 0 && window < c->context;
        a.window = through ? window : 0;
        a.kv_len = through ? c->context : 2.0 * c->context - c->q_tokens;
        if (price(x, &a, p, e))
            return -1;
    }
    if (b->decode_n > 0) {
        a.kind = OP_ATTN_DECODE;
        a.window = window;
        /* a kernel without GQA grouping reads each KV head once for every
         * query head that shares it */
        if (x->s.decode_kv_per_q_head)
            a.kv_heads = a.heads;
        a.batch = b->decode_n;
        a.q_len = 1;
        a.kv_len = (window > 0 && b->decode_window_sum > 0
                        ? b->decode_window_sum
                        : b->decode_context_sum) /
                   b->decode_n;
        if (price(x, &a, p, e))
            return -1;
    }
    return 0;
}

/* The mean layer's attention: windowed and full layers in their shares. */
static int attention(infer *x, const infer_batch *b, part *p, llm_err *e)
{
    const model_spec *m = x->s.m;
    double w = x->windowed;
    if (w <= 0)
        return attention_layer(x, b, 0, p, e);
    part win, full = {0, 0, 0};
    if (attention_layer(x, b, m->sliding_window, &win, e) ||
        (w < 1 && attention_layer(x, b, 0, &full, e)))
        return -1;
    p->s = w * win.s + (1 - w) * full.s;
    p->flops = w * win.flops + (1 - w) * full.flops;
    p->bytes = w * win.bytes + (1 - w) * full.bytes;
    return 0;
}

int infer_batch_time(infer *x, const infer_batch *b, infer_time *out,
                     llm_err *e)
{
    int T = b->decode_n;
    for (int i = 0; i < b->prefill_n; i++)
        T += b->prefill[i].q_tokens;
    per_tokens tmp;
    part htmp, att;
    const per_tokens *pt = NULL;
    const part *head = NULL;
    if (T < 1)
        return err_set(e, "internal: an empty batch was priced");
    if (get_tokens(x, T, &tmp, &pt, e) || get_head(x, b->logits, &htmp, &head, e) ||
        attention(x, b, &att, e))
        return -1;
    for (int s = 0; s < x->s.pp; s++) {
        int nd = x->dense_layers[s], nm = x->moe_layers[s], L = nd + nm;
        infer_time *o = &out[s];
        o->compute_s = nd * pt->dense.s + nm * pt->moe.s + L * att.s;
        o->flops = nd * pt->dense.flops + nm * pt->moe.flops + L * att.flops;
        o->bytes = nd * pt->dense.bytes + nm * pt->moe.bytes + L * att.bytes;
        if (s == 0) {
            o->compute_s += pt->embed.s;
            o->bytes += pt->embed.bytes;
        }
        if (s == x->s.pp - 1) {
            o->compute_s += head->s;
            o->flops += head->flops;
            o->bytes += head->bytes;
        }
        o->tp_s = 2.0 * L * pt->tp_s;
        o->total_s = o->compute_s + o->tp_s;
    }
    return 0;
}

int infer_p2p_s(infer *x, int s, int tokens, double *out_s, llm_err *e)
{
    *out_s = 0;
    if (x->s.free_comm || s < 0 || s >= x->s.pp - 1)
        return 0;
    double *c = tokens <= x->s.max_tokens ? &x->p2p[s][tokens] : NULL;
    if (c && *c >= 0) {
        *out_s = *c;
        return 0;
    }
    /* every TP rank sends the stage's hidden states to its peer, together */
    int tp = x->s.tp;
    coll_req q[64];
    int pair[64][2];
    int n = tp < 64 ? tp : 64;
    for (int i = 0; i < n; i++) {
        pair[i][0] = x->ranks[s * tp + i];
        pair[i][1] = x->ranks[(s + 1) * tp + i];
        q[i] = (coll_req){.op = COLL_SEND_RECV, .algo = ALGO_DIRECT,
                          .proto = PROTO_SIMPLE, .ranks = pair[i], .n = 2,
                          .bytes = (double)tokens * x->s.m->hidden * 2};
    }
    double t;
    if (coll_time_together(x->s.routes, x->s.coll, q, n, &t, NULL, NULL, e))
        return -1;
    if (c)
        *c = t;
    *out_s = t;
    return 0;
}

int infer_stage_layers(const infer *x, int s)
{
    return x->dense_layers[s] + x->moe_layers[s];
}

double infer_weight_bytes(const infer *x, int s)
{
    return x->weights[s];
}

static int alloc(infer *x)
{
    int n = x->s.max_tokens + 1, pp = x->s.pp;
    x->ranks = malloc(sizeof *x->ranks * (size_t)(x->s.tp * pp));
    x->tok = calloc((size_t)n, sizeof *x->tok);
    x->head = calloc((size_t)n, sizeof *x->head);
    x->have_head = calloc((size_t)n, sizeof *x->have_head);
    x->p2p = calloc((size_t)pp, sizeof *x->p2p);
    x->dense_layers = calloc((size_t)pp, sizeof(int));
    x->moe_layers = calloc((size_t)pp, sizeof(int));
    x->weights = calloc((size_t)pp, sizeof(double));
    if (!x->ranks || !x->tok || !x->head || !x->have_head || !x->p2p ||
        !x->dense_layers || !x->moe_layers || !x->weights)
        return -1;
    for (int s = 0; s + 1 < pp; s++) {
        x->p2p[s] = malloc(sizeof(double) * (size_t)n);
        if (!x->p2p[s])
            return -1;
        for (int i = 0; i < n; i++)
            x->p2p[s][i] = -1;
    }
    return 0;
}

infer *infer_create(const infer_setup *s, llm_err *e)
{
    infer *x = calloc(1, sizeof *x);
    if (!x) {
        err_set(e, "out of memory");
        return NULL;
    }
    x->s = *s;
    x->windowed = model_windowed_share(s->m);
    if (x->s.max_tokens < 1)
        x->s.max_tokens = 1;
    if (alloc(x)) {
        infer_destroy(x);
        err_set(e, "out of memory for the batch cost caches");
        return NULL;
    }
    memcpy(x->ranks, s->ranks, sizeof *x->ranks * (size_t)(s->tp * s->pp));
    x->s.ranks = x->ranks;
    dtype w = s->weight_dt;
    x->act_dt = w == DT_BF16 ? DT_BF16 : DT_FP16;
    x->gemm_dt = w == DT_FP4 || w == DT_FP8 || w == DT_FP16 ||
                         w == DT_BF16 || w == DT_FP32
                     ? w : x->act_dt;
    /* FP8/FP4 weights are read at their own size even where the GPU lacks
     * their tensor cores and the GEMM falls back to 16-bit (weight-only,
     * as vLLM's Marlin kernels run them on Ampere and Hopper) */
    if (w == DT_FP8 || w == DT_FP4)
        x->w_bytes = dtype_bytes(w);
    else if (w == DT_INT8)
        x->w_bytes = 1;
    else if (w == DT_INT4)
        x->w_bytes = 0.5 + 4.0 / (s->quant_group > 0 ? s->quant_group : 128);
    /* only the stage's weights are read from the memory model: the rest of
     * the plan and the overheads do not change them */
    plan_infer mi = {.tp = s->tp, .pp = s->pp, .batch = 1, .context = 1,
                     .weight_dtype = w, .kv_dtype = DT_COUNT, .block_size = 1,
                     .max_batched_tokens = 1,
                     .quant_group = s->quant_group > 0 ? s->quant_group : 128};
    const mem_overhead o = {0};
    for (int st = 0; st < s->pp; st++) {
        int l0, l1;
        mem_stage_layers(s->m->layers, s->pp, st, &l0, &l1);
        for (int l = l0; l < l1; l++) {
            bool moe = s->m->moe_experts > 0 && l >= s->m->moe_dense_layers;
            (moe ? x->moe_layers : x->dense_layers)[st]++;
        }
        mem_result r;
        mem_infer_stage(s->m, &mi, &o, st, &r);
        x->weights[st] = r.weights;
    }
    return x;
}

void infer_destroy(infer *x)
{
    if (!x)
        return;
    if (x->p2p)
        for (int s = 0; s + 1 < x->s.pp; s++)
            free(x->p2p[s]);
    free(x->p2p);
    free(x->ranks);
    free(x->tok);
    free(x->head);
    free(x->have_head);
    free(x->dense_layers);
    free(x->moe_layers);
    free(x->weights);
    free(x);
}
