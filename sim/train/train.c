#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "engine/engine.h"
#include "hw/net.h"
#include "train/sched.h"
#include "train/zero3.h"
#include "base/util.h"

const char *const train_rec_comm_names[REC_COMM] = {"tp", "cp", "ep",
                                                    "fsdp"};
const char *const train_comm_names[COMM_KINDS] = {"tp", "pp", "dp", "cp", "ep"};

double train_dp_bytes(const plan_train *p, double params, double bytes_each)
{
    double n = (double)p->dp * p->cp;
    if (n <= 1)
        return 0;
    double per = params * bytes_each * (n - 1) / n;
    return p->zero >= 3 ? 3 * per : 2 * per;
}

/* ---- the cost of one microbatch on one virtual stage -------------------- */

typedef struct ctx {
    const train_input *in;
    const model_spec *m;
    const plan_train *p;   /* p_own */
    plan_train p_own;      /* the input's, with the stack's gradient bucket
                              when it names none */
    int P, V, M;           /* stages, chunks per stage, microbatches */
    double tokens;         /* per microbatch per GPU (seq / cp x mb) */
    dtype dt;
    double act_b;          /* bytes per activation element (plan_act_dtype) */
    const stack_spec *st;  /* the framework's profile */
    stack_spec st_own;     /* the input's, as compiled when asked */
    int attn_k;            /* its fused attention kernel (cost_op) */
    dtype attn_dt;         /* attention's dtype: 16-bit under FP8 unless
                              --fp8-attention and the stack offers it */
    dtype head_dt;         /* the output layer's: 16-bit under FP8 (only
                              the blocks' linears run in FP8) */
    llm_err *e;
    int failed;
    /* a collective of stage 0's representative group: NCCL's choice of
     * algorithm and protocol alone on the idle network, and its time
     * (with --full, data-parallel ones with every group at once) */
    struct cached {
        int op, group;
        double bytes, s;
        coll_algo algo;
        coll_proto proto;
    } cache[64], spill;
    int ncache;
    uint64_t net_events; /* the collectives' simulations, all of them */
    double op_total_s, op_mem_s; /* kernels priced so far; memory-bound */
} ctx;

static double op_s(ctx *c, const cost_op *op)
{
    cost_result r;
    if (cost_predict(c->in->cost, c->in->gpu, op, COST_FALLBACK_DTYPE, &r,
                     c->e)) {
        c->failed = 1;
        return 0;
    }
    /* the tables come from short kernel timings; published training runs
     * of every stack on Hopper sustain about four fifths of their tensor
     * rate in 16-bit and less in FP8 (calib/training-load.tsv) */
    if (op->kind == OP_GEMM || op->kind == OP_ATTN_PREFILL)
        r.time_s /= cost_tensor_load(c->in->cost, op->dt);
    c->op_total_s += r.time_s;
    if (op->kind != OP_GEMM && op->kind != OP_ATTN_PREFILL &&
        op->kind != OP_ATTN_DECODE)
        c->op_mem_s += r.time_s;
    return r.time_s;
}

static double gemm_dt(ctx *c, dtype dt, double m, double n, double k)
{
    cost_op f = {.kind = OP_GEMM, .dt = dt, .m = m, .n = n, .k = k, .batch = 1};
    return op_s(c, &f);
}

static double gemm3(ctx *c, double m, double n, double k)
{
    /* forward, and the data-gradient and weight-gradient GEMMs */
    return gemm_dt(c, c->dt, m, n, k);
}

/* A memory-bound pass moving `bytes` (a cast, a copy) at the streaming
 * curve's bandwidth: one 16-bit read and write moves 4 bytes. */
static double bytes_s(ctx *c, double bytes)
{
    if (bytes <= 0)
        return 0;
    cost_op o = {.kind = OP_ELEMENTWISE, .dt = DT_BF16, .elems = bytes / 4,
                 .reads = 1, .writes = 1, .mem = MEM_ELEMENTWISE};
    return op_s(c, &o);
}

static double gemm_bwd(ctx *c, double m, double n, double k)
{
    return gemm3(c, m, k, n) + gemm3(c, k, n, m);
}

/* A base linear's backward.  Under LoRA its weight is frozen: only the
 * data gradient, one GEMM of the forward's size instead of two (the
 * weight gradients are the adapters', lora_cost). */
static double lin_bwd(ctx *c, double m, double n, double k)
{
    if (c->p->lora_rank > 0)
        return gemm3(c, m, k, n);
    return gemm_bwd(c, m, n, k);
}

/* The LoRA adapters of one linear, in -> out on this TP rank: x·A (T x r)
 * then ·B, beside the base GEMM (Hu et al. 2021, eq. 3), and both
 * factors' data and weight gradients backward.  Unfused, as PEFT and
 * NeMo run them: skinny GEMMs (r columns or rows) that the cost model
 * finds memory- or latency-bound, which is what they are.  The full rank
 * r on every TP rank: NeMo splits a column-parallel linear's A over r,
 * but reading x (T x in) bounds that GEMM either way; the gather of the
 * T x r product is not modelled.  Under TP the adapters weigh more
 * against the base GEMMs, which TP divides and reading x does not. */
static void lora_cost(ctx *c, double in, double out, double *fwd,
                      double *bwd)
{
    double T = c->tokens, r = c->p->lora_rank;
    *fwd += gemm3(c, T, r, in) + gemm3(c, T, out, r);
    *bwd += gemm_bwd(c, T, r, in) + gemm_bwd(c, T, out, r);
}

static int rank_of(const plan_train *p, int tp, int cp, int dp, int pp)
{
    return plan_gpu_rank(p, tp, cp, dp, pp);
}

/* Member i of the g-th group of a kind (0 TP, 1 DP, 2 EP, 3 CP) on stage
 * 0; groups_of() of them.  EP groups run across data-parallel ranks. */
static int groups_of(const plan_train *p, int group)
{
    return group == 0 ? p->dp * p->cp : group == 3 ? p->tp * p->dp
                                                   : p->tp * p->cp;
}

static int group_size(const plan_train *p, int group)
{
    return group == 0 ? p->tp : group == 1 ? p->dp : group == 2 ? p->ep : p->cp;
}

static int group_rank(const plan_train *p, int group, int g, int i)
{
    switch (group) {
    case 0: return rank_of(p, i, g / p->dp, g % p->dp, 0);
    case 3: return rank_of(p, g % p->tp, i, g / p->tp, 0);
    default: return rank_of(p, g % p->tp, g / p->tp, i, 0);
    }
}

/* The nodes stage s's data-parallel group spans. */
static int dp_nodes(const ctx *c, int s)
{
    const plan_train *p = c->p;
    const topo *t = c->in->t;
    int first = rank_of(p, 0, 0, 0, s), last = rank_of(p, 0, 0, p->dp - 1, s);
    return t->gpus_per_node > 0
               ? last / t->gpus_per_node - first / t->gpus_per_node + 1
               : 1;
}

/* What one NCCL channel of stage s's data-parallel ring moves (NCCL's
 * per-channel ring throughput at the group's node count). */
static double dp_channel_Bps(const ctx *c, int s)
{
    int nodes = dp_nodes(c, s);
    return c->in->coll->ring_ch_Bps[nodes <= 1 ? 0 : nodes == 2 ? 1 : 2];
}

/* The first `groups` groups of a kind run `op` together with the given
 * algorithm and protocol; their time in *s, the bytes on each link added
 * to link_bytes. */
static int groups_together(ctx *c, coll_op op, int group, double bytes,
                           coll_algo algo, coll_proto proto, int groups,
                           double *s, double *link_bytes)
{
    int n = group_size(c->p, group);
    coll_req *rq = calloc((size_t)groups, sizeof *rq);
    int *all = malloc(sizeof(int) * (size_t)groups * n);
    if (!rq || !all) {
        free(rq);
        free(all);
        return err_set(c->e, "out of memory");
    }
    for (int g = 0; g < groups; g++) {
        for (int i = 0; i < n; i++)
            all[g * n + i] = group_rank(c->p, group, g, i);
        rq[g] = (coll_req){.op = op, .algo = algo, .proto = proto,
                           .ranks = all + g * n, .n = n, .bytes = bytes};
    }
    uint64_t ev = 0;
    int rc = coll_time_together(c->in->routes, c->in->coll, rq, groups, s,
                                link_bytes, &ev, c->e);
    c->net_events += ev;
    free(rq);
    free(all);
    return rc;
}

/* A collective on a group (0 TP, 1 DP, 2 EP, 3 CP, of at least 2 ranks)
 * of stage 0: NCCL's tuner choice and its time, simulated once per
 * (op, group, bytes); NULL when it cannot be simulated. */
static const struct cached *coll_choose(ctx *c, coll_op op, int group,
                                        double bytes)
{
    for (int i = 0; i < c->ncache; i++)
        if (c->cache[i].op == (int)op && c->cache[i].group == group &&
            c->cache[i].bytes == bytes)
            return &c->cache[i];
    int n = group_size(c->p, group);
    int *ranks = malloc(sizeof(int) * (size_t)n);
    if (!ranks) {
        err_set(c->e, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        ranks[i] = group_rank(c->p, group, 0, i);
    coll_req q = {.op = op, .algo = ALGO_AUTO, .proto = PROTO_AUTO,
                  .ranks = ranks, .n = n, .bytes = bytes};
    coll_result r;
    int rc = coll_time_alone(c->in->routes, c->in->coll, &q, &r, c->e);
    free(ranks);
    if (rc)
        return NULL;
    c->net_events += r.events;
    struct cached *k = c->ncache < 64 ? &c->cache[c->ncache++] : &c->spill;
    *k = (struct cached){(int)op, group, bytes, r.time_s, r.algo, r.proto};
    /* --full: every (TP rank, CP rank) group of stage 0 reduces at once */
    if (group == 1 && c->in->full &&
        groups_together(c, op, 1, bytes, r.algo, r.proto, groups_of(c->p, 1),
                        &k->s, NULL))
        return NULL;
    return k;
}

/* Time of a collective on a group of stage 0 (coll_choose); 0 when the
 * group is one GPU or communication is free. */
static double coll_s(ctx *c, coll_op op, int group, double bytes)
{
    if (c->in->free_comm || bytes <= 0 || group_size(c->p, group) < 2)
        return 0;
    const struct cached *k = coll_choose(c, op, group, bytes);
    if (!k) {
        c->failed = 1;
        return 0;
    }
    return k->s;
}

typedef struct vcost {
    double fwd, bwd;     /* compute stream time of one microbatch */
    double tp, ep, cp;   /* communication inside them (exposed) */
    double re_fwd;       /* forward compute the backward replays
                            (recompute), one microbatch */
    double tp_re, ep_re, cp_re; /* communication the replay repeats */
    double params;       /* parameters per GPU on this virtual stage that
                            are trained (gradients, optimizer, DP
                            reduction): all of them, or under LoRA only
                            the adapters */
    double frozen;       /* LoRA: the frozen base's parameters per GPU,
                            which ZeRO-3 still gathers; 0 otherwise */
    double mem_frac;     /* share of kernel time in memory-bound kernels */
    double fsdp;         /* ZeRO-3: exposed gathers and reduce-scatters,
                            and the slowdown of the compute they overlap */
    double fsdp_first;   /* the first layer's gather, each way */
    double fsdp_fwd_part; /* the forward's share of fsdp */
} vcost;

/* One transformer layer, one microbatch, one TP rank. */
/* K and V of one context-parallel chunk, as ring attention passes it on. */
static double cp_kv_bytes(const ctx *c)
{
    const model_spec *m = c->m;
    const plan_train *p = c->p;
    double kvh = m->mla ? m->heads : m->kv_heads;
    double kvd = kvh * (m->mla ? model_qk_head_dim(m) : m->head_dim);
    double kv_div = kvh >= p->tp ? p->tp : kvh;
    return (double)p->seq_len / p->cp * p->micro_batch * 2 * kvd / kv_div *
           c->act_b;
}

static void fsdp_layer(ctx *c, int layer, double f_fwd, double f_bwd,
                       double mem_frac, vcost *v);

/* Attention without a fused kernel, as Megatron-LM ran it before
 * FlashAttention: per (sequence, head) a Q·Kᵀ GEMM over the whole s x s
 * square (the causal mask is applied, not skipped), the fused
 * scale-mask-softmax, dropout on the probabilities when the model has it,
 * and a P·V GEMM, each its own kernel.  Backward: two GEMMs for each
 * forward GEMM, dropout and softmax backward over the same square. */
static void unfused_attention(ctx *c, const cost_op *a, double *fwd,
                              double *bwd)
{
    double bh = (double)a->batch * a->heads, q = a->q_len, kv = a->kv_len;
    double d = a->head_dim, dv = a->v_head_dim > 0 ? a->v_head_dim : d;
    cost_op qk = {.kind = OP_GEMM, .dt = c->dt, .m = q, .n = kv, .k = d,
                  .batch = bh};
    cost_op pv = {.kind = OP_GEMM, .dt = c->dt, .m = q, .n = dv, .k = kv,
                  .batch = bh};
    cost_op qk_b1 = {.kind = OP_GEMM, .dt = c->dt, .m = q, .n = d, .k = kv,
                     .batch = bh}; /* dQ = dS·K */
    cost_op qk_b2 = {.kind = OP_GEMM, .dt = c->dt, .m = kv, .n = d, .k = q,
                     .batch = bh}; /* dK = dSᵀ·Q */
    cost_op pv_b1 = {.kind = OP_GEMM, .dt = c->dt, .m = q, .n = kv, .k = dv,
                     .batch = bh}; /* dP = dO·Vᵀ */
    cost_op pv_b2 = {.kind = OP_GEMM, .dt = c->dt, .m = kv, .n = dv, .k = q,
                     .batch = bh}; /* dV = Pᵀ·dO */
    double sq = bh * q * kv;
    cost_op sm = {.kind = OP_SOFTMAX, .dt = c->dt, .elems = sq,
                  .row_elems = kv};
    cost_op sm_b = {.kind = OP_ELEMENTWISE, .dt = c->dt, .elems = sq,
                    .reads = 2, .writes = 1, .mem = MEM_ACTIVATION};
    *fwd = op_s(c, &qk) + op_s(c, &sm) + op_s(c, &pv);
    *bwd = op_s(c, &qk_b1) + op_s(c, &qk_b2) + op_s(c, &pv_b1) +
           op_s(c, &pv_b2) + op_s(c, &sm_b);
    if (c->m->dropout > 0) {
        /* the probabilities in and out (two activation passes) and the
         * mask (kernels.tsv dropout_mask_bytes per element: 1 byte makes
         * 1.25 x the passes in 16-bit); backward reads the gradient and
         * the mask */
        cost_op dr = {.kind = OP_ELEMENTWISE, .dt = c->dt, .elems = sq,
                      .reads = 1, .writes = 1, .mem = MEM_ACTIVATION};
        double mask = (2 * c->act_b + c->in->cost->dropout_mask_bytes) /
                      (2 * c->act_b);
        double x = op_s(c, &dr) * mask;
        *fwd += x;
        *bwd += x;
    }
}

/* The time of a layer's kernels, forward and backward, as they add up in
 * the order the layer runs them. */
typedef struct ltime {
    double fwd, bwd;
    double mem_fwd; /* memory-bound forward kernels: norms, residual adds,
                       activation functions */
} ltime;

/* The head widths of a layer on one TP rank. */
typedef struct lshape {
    double T, h, t;          /* tokens, hidden size, TP degree */
    double qd, kvh, kvd, kv_div, vd;
    double qkv_out;          /* QKV's output width on one TP rank */
    double per_ffn;          /* up-projections per MLP: 2 SwiGLU, 1 GELU */
    double f;                /* the dense MLP's width on one TP rank */
} lshape;

static lshape layer_shape(const ctx *c)
{
    const model_spec *m = c->m;
    lshape s = {.T = c->tokens, .h = m->hidden, .t = c->p->tp};
    s.qd = m->heads * (double)model_qk_head_dim(m);
    s.kvh = m->mla ? m->heads : m->kv_heads;
    s.kvd = s.kvh * (m->mla ? model_qk_head_dim(m) : m->head_dim);
    s.kv_div = s.kvh >= s.t ? s.t : s.kvh;
    s.vd = m->heads * (double)model_v_head_dim(m);
    s.qkv_out = s.qd / s.t + 2 * s.kvd / s.kv_div;
    s.per_ffn = m->mlp == MLP_SWIGLU ? 2 : 1;
    s.f = m->ffn / s.t;
    return s;
}

/* QKV and the output projection (and their LoRA adapters). */
static void proj_cost(ctx *c, const lshape *s, ltime *x)
{
    x->fwd += gemm3(c, s->T, s->qkv_out, s->h);
    x->bwd += lin_bwd(c, s->T, s->qkv_out, s->h);
    x->fwd += gemm3(c, s->T, s->h, s->vd / s->t);
    x->bwd += lin_bwd(c, s->T, s->h, s->vd / s->t);
    if (c->p->lora_rank > 0) {
        /* adapters on Q, K, V and O (MLA priced at the same widths as its
         * base GEMMs above) */
        lora_cost(c, s->h, s->qd / s->t, &x->fwd, &x->bwd);
        lora_cost(c, s->h, s->kvd / s->kv_div, &x->fwd, &x->bwd);
        lora_cost(c, s->h, s->kvd / s->kv_div, &x->fwd, &x->bwd);
        lora_cost(c, s->vd / s->t, s->h, &x->fwd, &x->bwd);
    }
}

/* Attention over the whole sequence (context parallel: local queries),
 * through the sliding window on a layer that has one; returns its forward
 * time. */
static double attention_cost(ctx *c, int layer, const lshape *s, ltime *x)
{
    const model_spec *m = c->m;
    const plan_train *p = c->p;
    cost_op a = {.kind = OP_ATTN_PREFILL, .dt = c->attn_dt,
                 .batch = p->micro_batch, .attn_kernel = c->attn_k,
                 .heads = (int)(m->heads / s->t),
                 .kv_heads = (int)(s->kvh / s->kv_div),
                 .head_dim = model_qk_head_dim(m),
                 .v_head_dim = model_v_head_dim(m),
                 .q_len = (double)p->seq_len / p->cp, .kv_len = p->seq_len,
                 .causal = true, .flash = p->flash_attn,
                 .window = model_layer_windowed(m, layer) ? m->sliding_window
                                                          : 0};
    if (a.heads < 1)
        a.heads = 1;
    if (a.kv_heads < 1)
        a.kv_heads = 1;
    double at, at_bwd;
    if (p->flash_attn && c->attn_k > 0) {
        /* the stack's kernel: its own backward rate */
        at = op_s(c, &a);
        cost_op b = a;
        b.backward = true;
        at_bwd = op_s(c, &b);
    } else if (p->flash_attn) {
        at = op_s(c, &a);
        at_bwd = c->in->cost->flash_bwd_ratio * at; /* kernels.tsv */
    } else {
        unfused_attention(c, &a, &at, &at_bwd);
    }
    x->fwd += at;
    x->bwd += at_bwd;
    return at;
}

/* The routed (and shared) experts of an MoE layer and their all-to-all. */
static void moe_cost(ctx *c, const lshape *s, ltime *x, vcost *v)
{
    const model_spec *m = c->m;
    const plan_train *p = c->p;
    double per_ffn = s->per_ffn;
    double E = m->moe_experts / p->ep, k = m->moe_active;
    /* tokens per local expert on the busiest rank: the mean times the
     * routing imbalance, which every rank of the layer waits for */
    double imb = p->moe_imbalance > 1 ? p->moe_imbalance : 1;
    double tok = s->T * k / E * imb;
    cost_op up = {.kind = OP_GEMM, .dt = c->dt, .m = tok,
                  .n = per_ffn * m->moe_expert_ffn / s->t, .k = s->h,
                  .batch = E};
    cost_op dn = {.kind = OP_GEMM, .dt = c->dt, .m = tok, .n = s->h,
                  .k = m->moe_expert_ffn / s->t, .batch = E};
    double y = op_s(c, &up) + op_s(c, &dn);
    x->fwd += y;
    /* LoRA: frozen experts (no adapters, mem.c), data gradients only */
    x->bwd += (p->lora_rank > 0 ? 1 : 2) * y;
    if (m->moe_shared > 0) {
        double sf = m->moe_shared * (double)m->moe_expert_ffn / s->t;
        x->fwd += gemm3(c, s->T, per_ffn * sf, s->h) + gemm3(c, s->T, s->h, sf);
        x->bwd += lin_bwd(c, s->T, per_ffn * sf, s->h) +
                  lin_bwd(c, s->T, s->h, sf);
    }
    /* dispatch and combine, forward and backward */
    double a2a = coll_s(c, COLL_ALL_TO_ALL, 2, s->T * k * s->h * c->act_b * imb);
    v->ep += 4 * a2a;
}

/* A dense MLP (GELU or SwiGLU), its adapters and its activation. */
static void mlp_cost(ctx *c, const lshape *s, ltime *x)
{
    const plan_train *p = c->p;
    double per_ffn = s->per_ffn, f = s->f;
    x->fwd += gemm3(c, s->T, per_ffn * f, s->h) + gemm3(c, s->T, s->h, f);
    x->bwd += lin_bwd(c, s->T, per_ffn * f, s->h) + lin_bwd(c, s->T, s->h, f);
    /* adapters on gate and up (SwiGLU) or fc1, and on down */
    for (int i = 0; p->lora_rank > 0 && i < (int)per_ffn; i++)
        lora_cost(c, s->h, f, &x->fwd, &x->bwd);
    if (p->lora_rank > 0)
        lora_cost(c, f, s->h, &x->fwd, &x->bwd);
    cost_op act = {.kind = OP_ELEMENTWISE, .dt = c->dt, .elems = s->T * f,
                   .reads = (int)per_ffn, .writes = 1, .mem = MEM_ACTIVATION,
                   .row_elems = f};
    double y = op_s(c, &act) * c->st->act_passes;
    x->fwd += y;
    x->mem_fwd += y;
    x->bwd += 2 * y;
}

/* Two norms and two residual adds (over the sequence shard with SP). */
static void norm_add_cost(ctx *c, const lshape *s, ltime *x)
{
    double rows = c->p->sp ? s->T / s->t : s->T;
    cost_op norm = {.kind = OP_NORM, .dt = c->dt, .elems = rows * s->h,
                    .row_elems = s->h};
    cost_op add = {.kind = OP_ELEMENTWISE, .dt = c->dt, .elems = rows * s->h,
                   .reads = 2, .writes = 1};
    double y = 2 * op_s(c, &norm) * c->st->norm_passes + 2 * op_s(c, &add);
    x->fwd += y;
    x->mem_fwd += y;
    x->bwd += 2 * y;
}

/* What the stack runs beside the fused kernels the cost model prices:
 * RoPE over Q and K and layout copies over the hidden activation (each a
 * read and a write, forward; twice backward), and under FP8 the casts of
 * the blocks' linears (stack.h): their input activations (unless the norm
 * writes FP8 itself, for QKV and FC1), their output gradients, and their
 * weights (once a step when cached, else every microbatch). */
static void stack_extra_cost(ctx *c, const lshape *s, ltime *x)
{
    const stack_spec *st = c->st;
    double qk = s->qd / s->t + s->kvd / s->kv_div; /* of one token */
    cost_op rope = {.kind = OP_ELEMENTWISE, .dt = c->dt, .elems = s->T * qk,
                    .reads = 1, .writes = 1, .mem = MEM_ROPE,
                    .row_elems = qk};
    double y = st->rope_passes > 0 && c->m->pos == POS_ROPE
                   ? op_s(c, &rope) * st->rope_passes
                   : 0;
    y += bytes_s(c, st->copy_passes * s->T * s->h * 2 * c->act_b);
    x->fwd += y;
    x->bwd += 2 * y;
    if (c->dt != DT_FP8)
        return;
    double per_ffn = s->per_ffn, f = s->f, qkv_out = s->qkv_out;
    /* inputs of QKV, proj, FC1, FC2; outputs likewise */
    double in_norm = 2 * s->T * s->h, in_other = s->T * (s->vd / s->t + f);
    double out = s->T * (qkv_out + s->h + per_ffn * f + s->h);
    double w = s->h * (qkv_out + s->vd / s->t + per_ffn * f + f);
    double act = st->fp8_act_cast_bytes *
                 (in_other + (st->fp8_norm_fused ? 0 : in_norm));
    /* cached: once a step; FSDP's FP8 all-gather: each rank casts its
     * shard */
    double wcast = st->fp8_weight_cast_bytes * w /
                   (st->fp8_weight_cache ? c->M : 1) /
                   (c->p->fsdp_fp8_allgather && c->p->zero >= 3 ? c->p->dp
                                                                : 1);
    x->fwd += bytes_s(c, act) + bytes_s(c, wcast);
    x->bwd += bytes_s(c, st->fp8_grad_cast_bytes * out);
}

/* Megatron TP: an all-reduce after attention and after the MLP, each way;
 * with SP a reduce-scatter + all-gather pair instead.  Context parallel:
 * K and V of each chunk go round the cp ring while attention (at_s
 * forward) runs (ring attention); only what outlasts it shows. */
static void layer_comm(ctx *c, const lshape *s, double at_s, double lin_s,
                       vcost *v)
{
    const plan_train *p = c->p;
    double bytes = s->T * s->h * c->act_b;
    double tp = p->sp ? coll_s(c, COLL_REDUCE_SCATTER, 0, bytes) +
                            coll_s(c, COLL_ALL_GATHER, 0, bytes)
                      : coll_s(c, COLL_ALL_REDUCE, 0, bytes);
    if (p->tp_overlap) {
        /* userbuffers / AsyncTP split each GEMM beside a TP collective
         * into chunks that hide it: only what outlasts the layer's linear
         * GEMMs shows (lin_s forward, twice that backward), of the share
         * the stack's overlap reaches; the rest shows as without it */
        double h = c->st->tp_overlap_hidden;
        double f = 2 * tp - lin_s, b = 2 * tp - 2 * lin_s;
        v->tp += h * ((f > 0 ? f : 0) + (b > 0 ? b : 0)) + (1 - h) * 4 * tp;
    } else {
        v->tp += 4 * tp;
    }
    if (p->cp > 1) {
        double ring = (p->cp - 1) * coll_s(c, COLL_SEND_RECV, 3, cp_kv_bytes(c));
        double exp_cp = ring > at_s ? ring - at_s : 0;
        v->cp += 3 * exp_cp; /* forward, and twice the traffic backward */
    }
}

/* What the backward of layer `layer` replays of its forward x (attention
 * at_s of it) and of its communication (tp, ep, cp: the layer's, forward
 * and backward):
 *   checkpointed (full, every:K's turn): the whole forward, and the
 *     forward's half of the communication;
 *   selective: the attention core;
 *   op: the matmuls torchtitan's policy does not save (their share of
 *     the layer's matmul FLOPs, mem_op_replayed_share, priced at the
 *     layer's average GEMM rate), every memory-bound kernel, not
 *     FlashAttention (saved), and half the forward's TP communication:
 *     with SP the two all-gathers (the reduce-scatters are saved),
 *     without it the first all-reduce, whose output the next norm's
 *     backward needs (the second's, after the MLP, nothing needs; the
 *     non-reentrant checkpoint stops before it); the MoE all-to-alls are
 *     saved. */
static void layer_replay(ctx *c, int layer, const ltime *x, double at_s,
                         double tp, double ep, double cp, vcost *v)
{
    const plan_train *p = c->p;
    if (plan_layer_checkpointed(c->m, p, layer)) {
        v->re_fwd += x->fwd;
        v->tp_re += tp / 2;
        v->ep_re += ep / 2;
        v->cp_re += cp / 2;
    } else if (p->recompute == RECOMPUTE_SELECTIVE) {
        v->re_fwd += at_s;
    } else if (p->recompute == RECOMPUTE_OP) {
        double gemm = x->fwd - at_s - x->mem_fwd;
        v->re_fwd += mem_op_replayed_share(c->m, p, layer) * gemm +
                     x->mem_fwd + (p->flash_attn ? 0 : at_s);
        v->tp_re += tp / 4;
    }
}

static void layer_cost(ctx *c, int layer, vcost *v)
{
    const model_spec *m = c->m;
    lshape s = layer_shape(c);
    ltime x = {0, 0, 0};
    double total0 = c->op_total_s, mem0 = c->op_mem_s;
    double tp0 = v->tp, ep0 = v->ep, cp0 = v->cp;
    proj_cost(c, &s, &x);
    double lin = x.fwd;
    double at = attention_cost(c, layer, &s, &x);
    double f0 = x.fwd;
    if (m->moe_experts > 0 && layer >= m->moe_dense_layers)
        moe_cost(c, &s, &x, v);
    else
        mlp_cost(c, &s, &x);
    lin += x.fwd - f0;
    norm_add_cost(c, &s, &x);
    stack_extra_cost(c, &s, &x);
    layer_comm(c, &s, at, lin, v);
    if (c->p->zero >= 3) {
        double priced = c->op_total_s - total0;
        fsdp_layer(c, layer, x.fwd, x.bwd,
                   priced > 0 ? (c->op_mem_s - mem0) / priced : 0, v);
    }
    layer_replay(c, layer, &x, at, v->tp - tp0, v->ep - ep0, v->cp - cp0, v);
    v->fwd += x.fwd;
    v->bwd += x.bwd;
}

/* The gather stream of a per-module ZeRO-3 pass: all-gathers of `params`
 * elements of `bytes_each` on the data-parallel group. */
typedef struct z3_gather_ctx {
    ctx *c;
    double bytes_each;
} z3_gather_ctx;

/* A ZeRO-3 collective of `bytes` on the data-parallel group:
 * NCCL's time, and across nodes never less than the stack's published
 * runs took to move each GPU's share, (dp - 1) / dp of it
 * (stack_spec.z3_internode_Bps). */
static double z3_coll_s(ctx *c, coll_op op, double bytes)
{
    double s = coll_s(c, op, 1, bytes);
    double rate = c->st->z3_internode_Bps;
    if (rate > 0 && dp_nodes(c, 0) > 1) {
        double floor_s = bytes * (c->p->dp - 1) / c->p->dp / rate;
        s = floor_s > s ? floor_s : s;
    }
    return s;
}

static double z3_gather_s(void *p, double params)
{
    z3_gather_ctx *g = p;
    double s = z3_coll_s(g->c, COLL_ALL_GATHER, params * g->bytes_each);
    return g->c->failed ? -1 : s;
}

/* The module a tensor belongs to, by name: a bias joins its linear
 * ("kv_bias" the K projection), and under a fused QKV the K and V
 * projections join Q.  -1: a module of its own. */
static int z3_module_of(const model_tensor *tt, int i, const int *mod_of,
                        bool qkv_fused)
{
    const char *name = tt[i].name;
    size_t len = strlen(name);
    char want[32] = "";
    if (qkv_fused && (!strcmp(name, "k") || !strcmp(name, "v") ||
                      !strcmp(name, "kv_bias") || !strcmp(name, "q_bias")))
        snprintf(want, sizeof want, "q");
    else if (!strcmp(name, "kv_bias"))
        snprintf(want, sizeof want, "k");
    else if (len > 5 && !strcmp(name + len - 5, "_bias"))
        snprintf(want, sizeof want, "%.*s", (int)(len - 5), name);
    if (!want[0])
        return -1;
    for (int j = 0; j < i; j++)
        if (!strcmp(tt[j].name, want))
            return mod_of[j];
    return -1;
}

/* A layer's modules in forward order for DeepSpeed's coordinator: each
 * linear's elements gathered (scaled by `scale`: LoRA's adapters ride
 * along; a parameter under `persist` elements is never partitioned), and
 * as compute_s its share of the layer's linear FLOPs. */
static int z3_modules(const ctx *c, const model_tensor *tt, int n,
                      double persist, double scale, z3_module *out)
{
    const plan_train *p = c->p;
    int mod_of[MODEL_MAX_TENSORS], nm = 0;
    double flops[Z3_MAX_MODULES] = {0}, total = 0;
    for (int i = 0; i < n && i < MODEL_MAX_TENSORS; i++) {
        double numel = model_tensor_numel_per_gpu(c->m, &tt[i], p->tp, p->ep);
        int k = z3_module_of(tt, i, mod_of, c->st->z3_qkv_fused);
        if (k < 0) {
            if (nm == Z3_MAX_MODULES)
                k = nm - 1;
            else {
                k = nm++;
                out[k] = (z3_module){0};
            }
        }
        mod_of[i] = k;
        if (numel / (double)tt[i].copies >= persist)
            out[k].params += numel * scale;
        if (tt[i].matmul) {
            double f = numel * (double)tt[i].active / (double)tt[i].copies;
            flops[k] += f;
            total += f;
        }
    }
    for (int k = 0; k < nm; k++)
        out[k].compute_s = total > 0 ? flops[k] / total : 0;
    return nm;
}

/* A per-module ZeRO-3 layer (DeepSpeed): the forward's and the
 * backward's gathers as the coordinator issues them (train/zero3.h), the
 * gradients reduce-scattered in buckets on their own stream. */
static void fsdp_modules(ctx *c, const model_tensor *tt, int n, double params,
                         double pb, double trained, double gb, double f_fwd,
                         double f_bwd, double mem_frac, vcost *v)
{
    const plan_train *p = c->p;
    double base = 0;
    for (int i = 0; i < n; i++)
        base += model_tensor_numel_per_gpu(c->m, &tt[i], p->tp, p->ep);
    stack_z3 sz = stack_z3_sizes(c->st, c->m->hidden, p->z3_prefetch_params,
                                 p->z3_max_live_params, p->z3_reduce_params);
    z3_module fm[Z3_MAX_MODULES], bm[Z3_MAX_MODULES];
    double scale = base > 0 ? params / base : 1;
    int nm = z3_modules(c, tt, n, sz.persist, scale, fm);
    for (int k = 0; k < nm; k++) { /* the backward meets them in reverse */
        bm[nm - 1 - k] = (z3_module){fm[k].params, fm[k].compute_s * f_bwd};
        fm[k].compute_s *= f_fwd;
    }
    z3_gather_ctx g = {c, params > 0 ? pb / params : 0};
    z3_rule rule = {sz.prefetch, sz.max_live};
    z3_result f = {0}, b = {0};
    if (z3_pass(fm, nm, rule, z3_gather_s, &g, &f) ||
        z3_pass(bm, nm, rule, z3_gather_s, &g, &b)) {
        c->failed = 1;
        return;
    }
    double rs = 0;
    if (trained > 0 && sz.reduce > 0)
        rs = trained / sz.reduce *
             z3_coll_s(c, COLL_REDUCE_SCATTER, sz.reduce * gb / trained);
    for (int k = 0; k < nm && v->fsdp_first == 0; k++)
        if (fm[k].params > 0)
            v->fsdp_first = z3_gather_s(&g, fm[k].params);
    train_interference fi, bi;
    double scale_bw = coll_busbw_factor(COLL_ALL_GATHER, p->dp);
    double ch = dp_channel_Bps(c, 0);
    train_interfere(c->in->gpu, f.gather_s > 0 ? pb / f.gather_s * scale_bw : 0,
                    ch, 2, mem_frac, f_fwd, f.gather_s, &fi);
    double busy = b.gather_s + rs;
    train_interfere(c->in->gpu, busy > 0 ? (pb + gb) / busy * scale_bw : 0, ch,
                    2.5, mem_frac, f_bwd, busy, &bi);
    double eb = busy - f_bwd > b.exposed_s ? busy - f_bwd : b.exposed_s;
    v->fsdp += f.exposed_s + eb + fi.extra_s + bi.extra_s;
    v->fsdp_fwd_part += f.exposed_s + fi.extra_s;
}

/* ZeRO-3 / FSDP (full shard): every microbatch gathers each layer's
 * parameters before its forward and again before its backward, and
 * reduce-scatters its gradients after it (PyTorch FSDP FULL_SHARD,
 * DeepSpeed ZeRO-3).  A stack that gathers per layer (FSDP) prefetches
 * the next layer's gather while this layer computes, so only what
 * outlasts the compute shows, plus the slowdown the running collectives
 * cause (train_interfere); one that gathers per module (DeepSpeed) runs
 * its coordinator (fsdp_modules).  The first layer's gather of each pass
 * waits in full (vstage_cost). */
static void fsdp_layer(ctx *c, int layer, double f_fwd, double f_bwd,
                       double mem_frac, vcost *v)
{
    const plan_train *p = c->p;
    if (p->dp < 2 || c->in->free_comm)
        return;
    model_tensor tt[MODEL_MAX_TENSORS];
    int n = model_layer_tensors(c->m, layer, tt);
    double params = 0, trained = 0;
    for (int i = 0; i < n; i++) {
        params += model_tensor_numel_per_gpu(c->m, &tt[i], p->tp, p->ep);
        trained += mem_lora_tensor_params(c->m, p->lora_rank, layer, &tt[i],
                                          p->tp, p->ep);
    }
    /* LoRA: every weight is gathered, the adapters' too; only the
     * adapters' gradients are reduce-scattered */
    if (p->lora_rank > 0)
        params += trained;
    else
        trained = params;
    /* torchao's FP8 all-gather moves the FP8 shards (1 byte), cast
     * before it on each shard: the casts divide over the dp ranks */
    bool fp8_ag = p->fsdp_fp8_allgather && c->dt == DT_FP8;
    double pb = params * (fp8_ag           ? 1
                          : c->dt == DT_FP8 ? dtype_bytes(plan_act_dtype(p))
                                            : mem_weight_bytes_per_param(
                                                  p->precision));
    double gb = trained * (c->st->fsdp_reduce_bytes > 0
                               ? c->st->fsdp_reduce_bytes
                               : mem_grad_bytes_per_param(p));
    if (c->st->z3_gather == STACK_GATHER_MODULE) {
        fsdp_modules(c, tt, n, params, pb, trained, gb, f_fwd, f_bwd,
                     mem_frac, v);
        return;
    }
    double ag = z3_coll_s(c, COLL_ALL_GATHER, pb);
    double rs = z3_coll_s(c, COLL_REDUCE_SCATTER, gb);
    if (v->fsdp_first == 0)
        v->fsdp_first = ag;
    train_interference fi, bi;
    double scale = coll_busbw_factor(COLL_ALL_GATHER, p->dp);
    double ch = dp_channel_Bps(c, 0);
    train_interfere(c->in->gpu, ag > 0 ? pb / ag * scale : 0, ch, 2, mem_frac,
                    f_fwd, ag, &fi);
    double ef = ag > f_fwd ? ag - f_fwd : 0;
    /* what runs under the backward's gradients: the next block's gather
     * and this block's reduce-scatter, or after the gradients (POST) the
     * reduce-scatter alone while the gather waits in full */
    bool post = c->st->fsdp_backward_prefetch == STACK_PREFETCH_POST;
    double under = post ? rs : ag + rs, under_b = post ? gb : pb + gb;
    train_interfere(c->in->gpu, under > 0 ? under_b / under * scale : 0, ch,
                    2.5, mem_frac, f_bwd, under, &bi);
    double eb = (post ? ag : 0) + (under > f_bwd ? under - f_bwd : 0);
    v->fsdp += ef + eb + fi.extra_s + bi.extra_s;
    v->fsdp_fwd_part += ef + fi.extra_s;
}

/* Parameters a virtual stage holds: trained ones, or under LoRA frozen
 * ones (whose adapters are added apart). */
static void add_params(const ctx *c, vcost *v, double x)
{
    if (c->p->lora_rank > 0)
        v->frozen += x;
    else
        v->params += x;
}

/* One microbatch's forward and backward on stage 0: the sum over its model
 * chunks (one of them, the embedding alone, may hold no layer). */
static void stage0_pass(const vcost *vc, int P, int V, double *fwd,
                        double *bwd)
{
    *fwd = *bwd = 0;
    for (int k = 0; k < V; k++) {
        *fwd += vc[k * P].fwd;
        *bwd += vc[k * P].bwd;
    }
}

double train_host_us_per_kernel(const stack_spec *st, const topo_nodespec *ns)
{
    return st->host_us_per_kernel / topo_host_speed(ns);
}

static void vstage_cost(ctx *c, int vs, vcost *v)
{
    const model_spec *m = c->m;
    const plan_train *p = c->p;
    memset(v, 0, sizeof *v);
    double total0 = c->op_total_s, mem0 = c->op_mem_s;
    int l0, l1;
    plan_vstage_layers(m, p, vs, &l0, &l1);
    double T = c->tokens, h = m->hidden;
    model_tensor tt[MODEL_MAX_TENSORS];
    for (int l = l0; l < l1; l++) {
        layer_cost(c, l, v);
        int n = model_layer_tensors(m, l, tt);
        for (int i = 0; i < n; i++) {
            add_params(c, v, model_tensor_numel_per_gpu(m, &tt[i], p->tp,
                                                        p->ep));
            if (p->lora_rank > 0)
                v->params += mem_lora_tensor_params(m, p->lora_rank, l,
                                                    &tt[i], p->tp, p->ep);
        }
    }
    if (vs == 0) {
        cost_op emb = {.kind = OP_EMBEDDING, .dt = c->dt, .elems = T * h,
                       .row_elems = h};
        double x = op_s(c, &emb);
        v->fwd += x;
        /* LoRA: a frozen embedding takes no gradient, and nothing before
         * it needs one */
        v->bwd += p->lora_rank > 0 ? 0 : 2 * x;
        add_params(c, v, (double)m->vocab * h / p->tp);
    }
    if (vs == c->P * c->V - 1) {
        double vocab = m->vocab / (double)p->tp;
        v->fwd += gemm_dt(c, c->head_dt, T, vocab, h);
        v->bwd += p->lora_rank > 0 ? gemm_dt(c, c->head_dt, T, h, vocab)
                                   : gemm_dt(c, c->head_dt, T, h, vocab) +
                                         gemm_dt(c, c->head_dt, h, vocab, T);
        cost_op ce = {.kind = OP_SOFTMAX, .dt = c->dt, .elems = T * vocab,
                      .row_elems = vocab};
        v->fwd += op_s(c, &ce);
        v->bwd += op_s(c, &ce);
        if (!m->tied_embeddings || c->P * c->V > 1)
            add_params(c, v, vocab * h);
    }
    double priced = c->op_total_s - total0;
    v->mem_frac = priced > 0 ? (c->op_mem_s - mem0) / priced : 0;
    /* the host launches every kernel; without CUDA graphs a pass takes at
     * least the time the framework spends launching it (the backward
     * launches about twice the forward's kernels) */
    const stack_spec *st = c->st;
    if (!st->cuda_graphs && st->host_us_per_kernel > 0) {
        double us = train_host_us_per_kernel(st, &c->in->t->spec);
        double host = (l1 - l0) * st->kernels_per_layer * us * 1e-6;
        if (v->fwd < host)
            v->fwd = host;
        if (v->bwd < 2 * host)
            v->bwd = 2 * host;
    }
    /* recompute replays forward work of the layers inside the backward
     * (layer_replay); never the embedding, the output layer or the loss */
    v->bwd += v->re_fwd;
    /* TP, EP and CP communication sit inside the ops, on the critical
     * path: half in the forward, half in the backward, plus what the
     * replay repeats */
    double fwd_comm = (v->tp + v->ep + v->cp) / 2;
    v->fwd += fwd_comm;
    v->bwd += fwd_comm + v->tp_re + v->ep_re + v->cp_re;
    /* ZeRO-3: each pass first waits for its first layer's gather */
    v->fwd += v->fsdp_fwd_part + v->fsdp_first;
    v->bwd += v->fsdp - v->fsdp_fwd_part + v->fsdp_first;
}

/* ---- pipeline transfers ------------------------------------------------- */

static void ignore_done(engine *e, void *c, uint64_t a)
{
    (void)e;
    (void)c;
    (void)a;
}

/* One microbatch's activations (or gradients) from stage a to stage b:
 * every TP rank sends its 1/t slice at once (Megatron's scatter-gather). */
static double p2p_s(ctx *c, int a, int b, double *link_bytes)
{
    const plan_train *p = c->p;
    if (c->in->free_comm || a == b)
        return 0;
    double bytes = c->tokens * c->m->hidden * c->act_b / p->tp;
    engine *eng;
    net *n = coll_idle_net(c->in->routes, c->in->coll, &eng);
    if (!n) {
        c->failed = 1;
        err_set(c->e, "out of memory");
        return 0;
    }
    for (int i = 0; i < p->tp; i++)
        net_flow(n, c->in->t->gpu_dev[rank_of(p, i, 0, 0, a)],
                 c->in->t->gpu_dev[rank_of(p, i, 0, 0, b)], bytes, (uint32_t)i,
                 ignore_done, NULL, 0);
    engine_run(eng, INT64_MAX);
    if (engine_failed(eng)) {
        c->failed = 1;
        err_set(c->e, "out of memory");
    }
    double s = engine_now(eng) * 1e-9;
    for (int l = 0; link_bytes && l < c->in->t->nlink; l++)
        link_bytes[l] += net_link(n, l).bytes;
    net_give(n);
    engine_destroy(eng);
    return s;
}

/* ---- the step, event by event --------------------------------------------- */

typedef struct sim {
    ctx *c;
    engine *eng;
    vcost *vc;             /* [V·P] by virtual stage */
    double *p2p_fwd;       /* [P]: stage s -> its next virtual stage's */
    double *p2p_bwd;       /* [P]: stage s -> its previous virtual stage's */
    bool free_p2p;         /* pipeline transfers take no time (this run) */
    sched_item **order;    /* [P][2·M·V] */
    int *n_items, *next;   /* per stage */
    bool *busy;
    int64_t *fwd_in, *bwd_in; /* [V·P·M] arrival times, -1 = not yet */
    int64_t *busy_ns, *end_ns, *last_bwd_start;
    /* the input pipeline: Q = prefetch x workers microbatches ahead */
    int W, Q;
    int64_t t_pipe_no_input; /* the pipeline with data always ready */
    int64_t item_ns, copy_ns;
    int64_t *ready;        /* [M + Q] when microbatch i's input is on GPU */
    int64_t *wfree, copy_free;  /* workers and the copy engine */
    int64_t *carry, *wcarry, copy_carry; /* state at the step's start */
    int *held, *held_max;  /* chunks whose activations a stage holds */
    int64_t *held_at;      /* when held_max was first reached */
    train_record *rec; /* every op, when recording */
    bool rec_failed;   /* the record ran out of memory */
#ifdef LLMSIM_CHECK
    bool oom; /* the run reports that the plan does not fit */
#endif
} sim;

static void try_start(sim *S, int s);

static int64_t ns(double s) { return (int64_t)llround(s * 1e9); }

#ifdef LLMSIM_CHECK
/* Stage s reached a new peak of activations held.  Its GPU memory as the
 * schedule runs (mem.c's breakdown with the chunks held now) is never
 * negative, never over the GPU's capacity unless the run reports that the
 * plan does not fit, and never over the stage's peak the run reports
 * (mem.c's in-flight count from the schedule's shape): a schedule holding
 * more than that would make "fits" a wrong answer. */
static void check_memory(const sim *S, int s, const sched_item *it)
{
    const ctx *c = S->c;
    const gpu_spec *g = c->in->gpu;
    if (!g || !c->in->overhead)
        return;
    mem_result now, peak;
    mem_train_stage(c->m, c->p, c->in->overhead, s, S->held[s], &now);
    mem_train_stage(c->m, c->p, c->in->overhead, s, -1, &peak);
    const char *ev = CHECK_EVENT("stage %d forward of microbatch %d chunk %d",
                                 s, it->mb, it->chunk);
    int64_t t = engine_now(S->eng);
    CHECK(now.total >= 0, ev, t,
          "GPU memory of pipeline stage %d is %.6g GiB with %d chunks of "
          "activations held", s, now.total / GiB, S->held[s]);
    CHECK(now.total <= g->memory_bytes || S->oom, ev, t,
          "GPU memory of pipeline stage %d is %.6g GiB with %d chunks of "
          "activations held, over its %.6g GiB, and the run reports that "
          "the plan fits", s, now.total / GiB, S->held[s],
          g->memory_bytes / GiB);
    CHECK(CHECK_LE_REL(now.total, peak.total, 1e-9), ev, t,
          "pipeline stage %d holds %d chunks of activations, %.6g GiB, over "
          "the peak the memory model reports for its schedule, %.6g GiB "
          "(%d microbatches in flight)",
          s, S->held[s], now.total / GiB, peak.total / GiB, peak.in_flight);
}
#endif

static void record_xfer(sim *S, int s, int to, const sched_item *it,
                        int64_t t0, int64_t at);

static void on_arrive(engine *eng, void *ctx_, uint64_t arg)
{
    (void)eng;
    try_start(ctx_, (int)arg);
}

static void on_finish(engine *eng, void *ctx_, uint64_t arg)
{
    sim *S = ctx_;
    ctx *c = S->c;
    int s = (int)arg, V = c->P * c->V;
    const sched_item *it = &S->order[s][S->next[s]];
    int vs = it->chunk * c->P + s;
    int64_t now = engine_now(eng);
    S->busy[s] = false;
    S->next[s]++;
    S->end_ns[s] = now;
    if (it->bwd) {
        S->held[s]--; /* its activations are freed */
        CHECK(S->held[s] >= 0,
              CHECK_EVENT("stage %d backward of microbatch %d chunk %d", s,
                          it->mb, it->chunk),
              now, "stage %d freed activations it did not hold (%d chunks "
              "held)", s, S->held[s]);
    } else if (S->held[s] > S->held_max[s]) {
        S->held_max[s] = S->held[s];
        S->held_at[s] = now;
    }
    if (!it->bwd && vs + 1 < V) {
        int64_t at = now + (S->free_p2p ? 0 : ns(S->p2p_fwd[s]));
        S->fwd_in[(size_t)(vs + 1) * c->M + it->mb] = at;
        record_xfer(S, s, (vs + 1) % c->P, it, now, at);
        engine_at(eng, at, on_arrive, S, (uint64_t)((vs + 1) % c->P));
    } else if (!it->bwd) { /* the last virtual stage turns around */
        S->bwd_in[(size_t)vs * c->M + it->mb] = now;
    } else if (vs > 0) {
        int64_t at = now + (S->free_p2p ? 0 : ns(S->p2p_bwd[s]));
        S->bwd_in[(size_t)(vs - 1) * c->M + it->mb] = at;
        record_xfer(S, s, (vs - 1) % c->P, it, now, at);
        engine_at(eng, at, on_arrive, S, (uint64_t)((vs - 1) % c->P));
    }
    try_start(S, s);
}

/* Room for one more entry of size sz in *v (n used of *cap); false, and
 * the record marked failed, when memory runs out. */
static bool record_room(sim *S, void **v, int n, int *cap, size_t sz)
{
    if (S->rec_failed)
        return false;
    if (n < *cap)
        return true;
    int c = *cap ? 2 * *cap : 256;
    void *g = realloc(*v, sz * (size_t)c);
    if (!g) {
        S->rec_failed = true;
        return false;
    }
    *v = g;
    *cap = c;
    return true;
}

/* Records an op that starts (train_input.record): the report layer turns
 * them into the trace and the timeline. */
static void record_op(sim *S, int s, const sched_item *it, int64_t t0,
                      int64_t dur)
{
    train_record *r = S->rec;
    if (r && record_room(S, (void **)&r->ops, r->nops, &r->cap,
                         sizeof *r->ops))
        r->ops[r->nops++] =
            (train_op_rec){s, it->mb, it->chunk, it->bwd, t0, dur};
}

/* Records a pipeline transfer from stage s that arrives at `at`. */
static void record_xfer(sim *S, int s, int to, const sched_item *it,
                        int64_t t0, int64_t at)
{
    train_record *r = S->rec;
    if (r && record_room(S, (void **)&r->xfers, r->nxfers, &r->xcap,
                         sizeof *r->xfers))
        r->xfers[r->nxfers++] = (train_xfer_rec){s, to, it->mb, it->chunk,
                                                 it->bwd, t0, at};
}

/* Records the first stage waiting for its input from t0 to t1. */
static void record_wait(sim *S, int64_t t0, int64_t t1)
{
    train_record *r = S->rec;
    if (r && record_room(S, (void **)&r->waits, r->nwaits, &r->wcap,
                         sizeof *r->waits))
        r->waits[r->nwaits++] = (train_wait_rec){t0, t1};
}

/* The first stage took microbatch i - Q's input at `now`: a worker
 * starts loading microbatch i into the freed slot. */
static void produce(sim *S, int i, int64_t now)
{
    int w = 0;
    for (int k = 1; k < S->W; k++)
        if (S->wfree[k] < S->wfree[w])
            w = k;
    int64_t start = now > S->wfree[w] ? now : S->wfree[w];
    int64_t built = start + S->item_ns;
    int64_t copy = built > S->copy_free ? built : S->copy_free;
    S->wfree[w] = built;
    S->copy_free = S->ready[i] = copy + S->copy_ns;
    if (i < S->c->M)
        engine_at(S->eng, S->ready[i], on_arrive, S, 0);
}

static void try_start(sim *S, int s)
{
    ctx *c = S->c;
    if (S->busy[s] || S->next[s] >= S->n_items[s])
        return;
    const sched_item *it = &S->order[s][S->next[s]];
    int vs = it->chunk * c->P + s;
    int64_t now = engine_now(S->eng);
    int64_t in = it->bwd ? S->bwd_in[(size_t)vs * c->M + it->mb]
                 : vs == 0 ? (S->W ? S->ready[it->mb] : 0)
                           : S->fwd_in[(size_t)vs * c->M + it->mb];
    if (in < 0 || in > now)
        return; /* its input's arrival will call again */
    if (S->W && vs == 0 && !it->bwd) {
        if (in > S->end_ns[s]) /* idle since its last op: for the data */
            record_wait(S, S->end_ns[s], in);
        produce(S, it->mb + S->Q, now);
    }
    const vcost *v = &S->vc[vs];
    int64_t dur = ns(it->bwd ? v->bwd : v->fwd);
    S->busy[s] = true;
    S->busy_ns[s] += dur;
    if (!it->bwd)
        S->held[s]++; /* a forward allocates its activations */
#ifdef LLMSIM_CHECK
    if (!it->bwd && S->held[s] > S->held_max[s])
        check_memory(S, s, it); /* once per new peak: held_max follows */
#endif
    if (it->bwd && S->next[s] == S->n_items[s] - 1)
        S->last_bwd_start[s] = now;
    record_op(S, s, it, now, dur);
    engine_after(S->eng, dur, on_finish, S, (uint64_t)s);
}

/* Runs the pipeline once; *end_ns gets the time the last stage finishes.
 * -1 with the message in c->e when memory runs out or a dependency never
 * resolves (a deadlock: an internal error). */
static int run_pipeline(sim *S, int64_t *end_ns)
{
    ctx *c = S->c;
    size_t cells = (size_t)c->P * c->V * c->M;
    for (size_t i = 0; i < cells; i++)
        S->fwd_in[i] = S->bwd_in[i] = -1;
    for (int s = 0; s < c->P; s++) {
        S->next[s] = 0;
        S->busy[s] = false;
        S->busy_ns[s] = S->end_ns[s] = S->last_bwd_start[s] = 0;
        S->held[s] = S->held_max[s] = 0;
        S->held_at[s] = 0;
    }
    engine_destroy(S->eng);
    S->eng = engine_create(1024);
    if (!S->eng)
        return err_set(c->e, "out of memory");
    for (int s = 0; s < c->P; s++)
        engine_at(S->eng, 0, on_arrive, S, (uint64_t)s);
    if (S->W) { /* the queue and the workers as the last step left them */
        for (int i = 0; i < c->M + S->Q; i++)
            S->ready[i] = i < S->Q ? S->carry[i] : -1;
        for (int i = 0; i < S->Q && i < c->M; i++)
            engine_at(S->eng, S->ready[i], on_arrive, S, 0);
        memcpy(S->wfree, S->wcarry, sizeof(int64_t) * (size_t)S->W);
        S->copy_free = S->copy_carry;
    }
    engine_run(S->eng, INT64_MAX);
    if (engine_failed(S->eng) || S->rec_failed)
        return err_set(c->e, "out of memory");
    *end_ns = 0;
    for (int s = 0; s < c->P; s++) {
        if (S->next[s] != S->n_items[s])
            return err_set(c->e, "the pipeline deadlocked (internal error)");
        if (S->end_ns[s] > *end_ns)
            *end_ns = S->end_ns[s];
    }
    return 0;
}

static void sim_free(sim *S)
{
    if (S->order)
        for (int s = 0; s < S->c->P; s++)
            free(S->order[s]);
    free(S->order);
    free(S->vc);
    free(S->p2p_fwd);
    free(S->p2p_bwd);
    free(S->n_items);
    free(S->next);
    free(S->busy);
    free(S->fwd_in);
    free(S->bwd_in);
    free(S->busy_ns);
    free(S->end_ns);
    free(S->last_bwd_start);
    free(S->ready);
    free(S->wfree);
    free(S->carry);
    free(S->wcarry);
    free(S->held);
    free(S->held_max);
    free(S->held_at);
    engine_destroy(S->eng);
}

static int sim_alloc(sim *S, ctx *c)
{
    int P = c->P, V = c->V, M = c->M;
    S->c = c;
    S->vc = calloc((size_t)P * V, sizeof *S->vc);
    S->p2p_fwd = calloc((size_t)P, sizeof(double));
    S->p2p_bwd = calloc((size_t)P, sizeof(double));
    S->order = calloc((size_t)P, sizeof *S->order);
    S->n_items = calloc((size_t)P, sizeof(int));
    S->next = calloc((size_t)P, sizeof(int));
    S->busy = calloc((size_t)P, sizeof(bool));
    S->fwd_in = malloc(sizeof(int64_t) * (size_t)P * V * M);
    S->bwd_in = malloc(sizeof(int64_t) * (size_t)P * V * M);
    S->busy_ns = calloc((size_t)P, sizeof(int64_t));
    S->end_ns = calloc((size_t)P, sizeof(int64_t));
    S->last_bwd_start = calloc((size_t)P, sizeof(int64_t));
    S->held = calloc((size_t)P, sizeof(int));
    S->held_max = calloc((size_t)P, sizeof(int));
    S->held_at = calloc((size_t)P, sizeof(int64_t));
    if (!S->vc || !S->p2p_fwd || !S->p2p_bwd || !S->order || !S->n_items ||
        !S->next || !S->busy || !S->fwd_in || !S->bwd_in || !S->busy_ns ||
        !S->end_ns || !S->last_bwd_start || !S->held || !S->held_max ||
        !S->held_at)
        return -1;
    for (int s = 0; s < P; s++) {
        S->order[s] = malloc(sizeof(sched_item) * (size_t)(2 * M * V));
        if (!S->order[s])
            return -1;
        S->n_items[s] = sched_order(c->p->schedule, P, s, M, V, S->order[s]);
        if (S->n_items[s] < 0)
            return err_set(c->e, "the interleaved schedule needs the number "
                                 "of microbatches (%d) to be a multiple of "
                                 "--pp %d (Megatron-LM's rule)", M, P);
    }
#ifdef LLMSIM_CHECK
    if (c->in->gpu && c->in->overhead) {
        mem_result r;
        mem_train_breakdown(c->m, c->p, c->in->overhead, &r);
        S->oom = r.total > c->in->gpu->memory_bytes; /* cmd_train's "fits" */
    }
#endif
    return 0;
}

/* ---- data parallelism and the optimizer --------------------------------- */

/* Gradient reduction and parameter gather of one stage, on its
 * communication stream: (bucketed, time of each bucket), returning the
 * reduce part (overlappable with the last backward) and the gather part
 * (after the optimizer). */
static void dp_cost(ctx *c, double params, double *reduce, double *gather,
                    double *gather_first)
{
    const plan_train *p = c->p;
    *reduce = *gather = *gather_first = 0;
    if (p->dp < 2 || p->zero >= 3) /* ZeRO-3: per layer, in the passes */
        return;
    double gb = mem_grad_bytes_per_param(p);
    double total = params * gb;
    double bucket = p->bucket_bytes; /* the stack's when the plan named none */
    int nb = (int)ceil(total / bucket);
    double last = total - (nb - 1) * bucket;
    coll_op red = p->zero == 0 ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER;
    *reduce = (nb - 1) * coll_s(c, red, 1, bucket) + coll_s(c, red, 1, last);
    if (p->zero >= 1) {
        /* the updated 16-bit parameters, gathered back (ZeRO-3: once for
         * the forward and once for the backward of the next step) */
        double pb = params * 2;
        int ng = (int)ceil(pb / bucket);
        double first = coll_s(c, COLL_ALL_GATHER, 1, ng > 1 ? bucket : pb);
        double g = (ng - 1) * coll_s(c, COLL_ALL_GATHER, 1, bucket) +
                   coll_s(c, COLL_ALL_GATHER, 1, pb - (ng - 1) * bucket);
        *gather = p->zero >= 3 ? 2 * g : g;
        *gather_first = p->zero >= 3 ? 2 * first : first;
    }
}

void train_interfere(const gpu_spec *g, double busbw_Bps, double ch_Bps,
                     double hbm_per_wire, double mem_frac, double compute_s,
                     double comm_s, train_interference *out)
{
    memset(out, 0, sizeof *out);
    if (busbw_Bps <= 0 || comm_s <= 0 || compute_s <= 0)
        return;
    double sm_part = 0;
    if (g->sm_count > 0 && ch_Bps > 0) {
        int ch = (int)ceil(busbw_Bps / ch_Bps);
        if (ch > g->sm_count / 2)
            ch = g->sm_count / 2;
        out->comm_sms = ch;
        sm_part = (double)ch / (g->sm_count - ch);
    }
    out->hbm_frac = busbw_Bps * hbm_per_wire / g->mem_bw_Bps;
    if (out->hbm_frac > 0.9)
        out->hbm_frac = 0.9;
    double hbm_part = out->hbm_frac / (1 - out->hbm_frac);
    double s = (1 - mem_frac) * sm_part + mem_frac * hbm_part;
    out->slowdown = s;
    /* the overlapped work runs at 1/(1+s) until the collective ends */
    double a = compute_s * s, b = comm_s * s / (1 + s);
    out->extra_s = a < b ? a : b;
}

/* Interference of one stage's gradient reduction with its last backward. */
static void dp_interference(ctx *c, int s, const vcost *v, double params,
                            double red_s, double compute_s,
                            train_interference *out)
{
    const plan_train *p = c->p;
    memset(out, 0, sizeof *out);
    if (p->dp < 2 || red_s <= 0 || c->in->free_comm)
        return;
    coll_op op = p->zero == 0 ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER;
    double bytes = params * mem_grad_bytes_per_param(p);
    double busbw = bytes / red_s * coll_busbw_factor(op, p->dp);
    train_interfere(c->in->gpu, busbw, dp_channel_Bps(c, s),
                    op == COLL_ALL_REDUCE ? 2.5 : 3, v->mem_frac, compute_s,
                    red_s, out);
}

static double optimizer_s(ctx *c, double params)
{
    const plan_train *p = c->p;
    double shard = p->zero >= 1 ? params / ((double)p->dp * p->cp) : params;
    cost_op op = {.kind = OP_OPTIMIZER, .dt = DT_FP32, .elems = shard,
                  .bytes = mem_optimizer_step_bytes(p)};
    return op_s(c, &op) * c->st->optimizer_passes;
}

/* ---- the whole step ------------------------------------------------------ */

static int check_inputs(const train_input *in, llm_err *e)
{
    const plan_train *p = in->plan;
    if (plan_train_check(in->m, p, e))
        return -1;
    int need = plan_train_gpus(p);
    int have = in->gpus > 0 && in->gpus < in->t->ngpu ? in->gpus : in->t->ngpu;
    if (need != have)
        return err_set(e, "tp %d x pp %d x dp %d x cp %d = %d GPUs, but %s%s "
                          "has %d (expected equal: change the plan or --nodes)",
                       p->tp, p->pp, p->dp, p->cp, need, in->t->name,
                       have < in->t->ngpu ? " (gpus =)" : "", have);
    if (p->global_batch > 0 && p->global_batch % (p->micro_batch * p->dp))
        return err_set(e, "--global-batch %d is not a multiple of micro-batch "
                          "x dp = %d", p->global_batch, p->micro_batch * p->dp);
    if (in->cost->flash_bwd_ratio <= 0 || in->cost->dropout_mask_bytes <= 0)
        return err_set(e, "%s: no kernel ratios (expected the calibration "
                          "with calib/kernels.tsv, as cfg_load_cost_calib "
                          "reads it)", in->cost->dir);
    return 0;
}

/* Trained parameters per GPU on stage s: its chunks' (virtual stages s,
 * s + P, ...). */
static double stage_params(const ctx *c, const sim *S, int s)
{
    double params = 0;
    for (int k = 0; k < c->V; k++)
        params += S->vc[k * c->P + s].params;
    return params;
}

/* LoRA: the frozen base's parameters per GPU on stage s. */
static double stage_frozen(const ctx *c, const sim *S, int s)
{
    double frozen = 0;
    for (int k = 0; k < c->V; k++)
        frozen += S->vc[k * c->P + s].frozen;
    return frozen;
}

/* Data-parallel bytes a GPU of a stage sends per pass (train_dp_bytes of
 * its trained parameters).  LoRA with ZeRO-3: the two gathers move every
 * weight, the reduce-scatter only the adapters' gradients. */
static double stage_dp_bytes(const plan_train *p, double trained,
                             double frozen)
{
    if (frozen <= 0 || p->zero < 3)
        return train_dp_bytes(p, trained, 2);
    return (train_dp_bytes(p, trained, 2) +
            2 * train_dp_bytes(p, trained + frozen, 2)) / 3;
}

/* After the pipeline: each stage's gradient reduction from its last
 * backward on (or after it), the optimizer, the parameter gather; the step
 * ends with the last stage to finish, whose exposed data-parallel time and
 * interference are returned. */
static double finish_step(ctx *c, const sim *S, double *dp_start,
                          double *dp_len, double *dp_exposed,
                          train_interference *crit_inf, double *opt_start,
                          double *opt_len, double *gather_len)
{
    const plan_train *p = c->p;
    double step = 0;
    *dp_exposed = 0;
    memset(crit_inf, 0, sizeof *crit_inf);
    for (int s = 0; s < c->P; s++) {
        double params = stage_params(c, S, s);
        double red, gat, gat_first;
        dp_cost(c, params, &red, &gat, &gat_first);
        if (p->overlap_param_gather && gat > 0) {
            /* the next step's first forward waits for the first bucket;
             * the rest arrive while that microbatch's forward runs */
            double fwd = 0;
            for (int k = 0; k < c->V; k++)
                fwd += S->vc[k * c->P + s].fwd;
            gat = gat - fwd > gat_first ? gat - fwd : gat_first;
        }
        double comp_end = S->end_ns[s] * 1e-9;
        /* overlapped with the last backward (Megatron's distributed DDP),
         * or after it (the "local" DDP of the SC21 runs) */
        dp_start[s] = !p->overlap_grad_reduce ? comp_end
                                                : S->last_bwd_start[s] * 1e-9;
        dp_len[s] = red;
        train_interference inf;
        dp_interference(c, s, &S->vc[s], params, red, comp_end - dp_start[s],
                        &inf);
        comp_end += inf.extra_s;
        double red_end = dp_start[s] + red;
        double opt = optimizer_s(c, params);
        double end = (red_end > comp_end ? red_end : comp_end) + opt + gat;
        if (opt_start) { /* the record's: when each stage's optimizer ran */
            opt_start[s] = red_end > comp_end ? red_end : comp_end;
            opt_len[s] = opt;
            gather_len[s] = gat;
        }
        if (end > step) {
            step = end;
            *dp_exposed = end - comp_end - opt;
            *crit_inf = inf;
        }
    }
    return step;
}

/* Runs step after step until the loader's queue and workers start each
 * step as the previous one left them (the periodic steady state); first
 * once with data always ready, for the comparison. */
static int loader_steady_state(ctx *c, sim *S, const train_loader *l,
                               train_result *r)
{
    const plan_train *p = c->p;
    S->Q = l->prefetch * l->workers;
    S->item_ns = ns(p->micro_batch * l->sample_s);
    double bytes = (double)p->micro_batch * p->seq_len * l->bytes_per_token;
    S->copy_ns = ns(bytes / (gpu_pcie_Bps(c->in->gpu) *
                             c->in->coll->link_eff[LINK_PCIE]));
    size_t n = (size_t)(c->M + S->Q);
    S->ready = calloc(n, sizeof(int64_t));
    S->carry = calloc((size_t)S->Q, sizeof(int64_t));
    S->wfree = calloc((size_t)l->workers, sizeof(int64_t));
    S->wcarry = calloc((size_t)l->workers, sizeof(int64_t));
    double *a = calloc((size_t)c->P, sizeof(double));
    double *b = calloc((size_t)c->P, sizeof(double));
    int rc = 0;
    if (!S->ready || !S->carry || !S->wfree || !S->wcarry || !a || !b)
        rc = err_set(c->e, "out of memory");
    double x;
    train_interference inf;
    if (rc == 0)
        rc = run_pipeline(S, &S->t_pipe_no_input);
    if (rc == 0)
        r->step_no_input_wait_s = finish_step(c, S, a, b, &x, &inf, NULL, NULL, NULL);
    S->W = l->workers;
    r->loader_need_s = c->M * (S->item_ns * 1e-9) / S->W;
    /* a loader whose rate does not divide the step evenly settles into a
     * cycle of several different steps: the step is their mean */
    enum { ITERS = 128, TAIL = 120 };
    double sum = 0;
    int counted = 0;
    for (int iter = 0; rc == 0 && iter < ITERS; iter++) {
        int64_t end;
        if ((rc = run_pipeline(S, &end)))
            break;
        double st = finish_step(c, S, a, b, &x, &inf, NULL, NULL, NULL);
        int64_t step = ns(st);
        if (iter >= ITERS - TAIL) {
            sum += st;
            counted++;
        }
        bool same = true;
        for (int i = 0; i < S->Q; i++) {
            int64_t v = S->ready[c->M + i] - step;
            v = v > 0 ? v : 0;
            same = same && v == S->carry[i];
            S->carry[i] = v;
        }
        for (int w = 0; w < S->W; w++) {
            int64_t v = S->wfree[w] - step;
            v = v > 0 ? v : 0;
            same = same && v == S->wcarry[w];
            S->wcarry[w] = v;
        }
        int64_t v = S->copy_free - step;
        S->copy_carry = v > 0 ? v : 0;
        if (same) { /* a fixed point: every step is this one */
            sum = st;
            counted = 1;
            break;
        }
    }
    r->loader_step_s = counted ? sum / counted : 0;
    free(a);
    free(b);
    return rc;
}

/* ---- link load over the step --------------------------------------------- */

/* Adds `count` x the bytes one `op` of `bytes` puts on each link, for the
 * representative group of a kind on stage 0 (every group with --full). */
static int link_coll(ctx *c, coll_op op, int group, double bytes,
                     double count, double *tmp, double *acc)
{
    int L = c->in->t->nlink;
    if (group_size(c->p, group) < 2 || bytes <= 0 || count <= 0)
        return 0;
    const struct cached *k = coll_choose(c, op, group, bytes);
    if (!k)
        return -1;
    memset(tmp, 0, sizeof(double) * (size_t)L);
    double s;
    int rc = groups_together(c, op, group, bytes, k->algo, k->proto,
                             c->in->full ? groups_of(c->p, group) : 1, &s, tmp);
    for (int l = 0; rc == 0 && l < L; l++)
        acc[l] += count * tmp[l];
    return rc;
}

static double moe_layers_on_stage0(const ctx *c)
{
    const model_spec *m = c->m;
    int n = 0;
    for (int k = 0; k < c->V; k++) {
        int l0, l1;
        plan_vstage_layers(m, c->p, k * c->P, &l0, &l1);
        for (int l = l0; l < l1; l++)
            n += m->moe_experts > 0 && l >= m->moe_dense_layers;
    }
    return n;
}

static int by_utilization(const void *a, const void *b)
{
    const train_link_use *x = a, *y = b;
    return x->utilization < y->utilization   ? 1
           : x->utilization > y->utilization ? -1
                                             : x->link - y->link;
}

/* The forward collectives of kind `kind` (COMM_TP or COMM_EP) that stage
 * 0's replays repeat, as a share of the forward's (layer_replay: 1 for a
 * checkpointed layer, a half of TP under op); 0 without such traffic. */
static double replay_share(const sim *S, const ctx *c, int kind)
{
    double all = 0, re = 0;
    for (int vs = 0; vs < c->P * c->V; vs += c->P) {
        const vcost *v = &S->vc[vs];
        all += (kind == COMM_TP ? v->tp : v->ep) / 2;
        re += kind == COMM_TP ? v->tp_re : v->ep_re;
    }
    return all > 0 ? re / all : 0;
}

/* Every kind of traffic of one step on stage 0's groups, by link: TP
 * collectives (4 per layer and microbatch, up to 6 with what recompute
 * replays), EP all-to-alls, CP ring exchanges, the gradient reduction
 * and parameter gathers, pipeline sends both ways. */
static int link_load(ctx *c, const sim *S, double step, train_result *r)
{
    const plan_train *p = c->p;
    const topo *t = c->in->t;
    int L = t->nlink;
    double *acc = calloc((size_t)COMM_KINDS * L, sizeof(double));
    double *tmp = calloc((size_t)L, sizeof(double));
    if (!acc || !tmp) {
        free(acc);
        free(tmp);
        return err_set(c->e, "out of memory");
    }
    double act = c->tokens * c->m->hidden * c->act_b;
    double layers = plan_stage_layer_count(c->m, p, 0);
    /* the TP and EP collectives, forward and backward, and the replays */
    double passes = c->M * (4.0 + 2 * replay_share(S, c, COMM_TP));
    double ep_passes = c->M * (4.0 + 2 * replay_share(S, c, COMM_EP));
    double params = stage_params(c, S, 0);
    double grads = params * mem_grad_bytes_per_param(p);
    int rc = p->sp ? link_coll(c, COLL_REDUCE_SCATTER, 0, act, layers * passes,
                               tmp, acc + COMM_TP * L) ||
                         link_coll(c, COLL_ALL_GATHER, 0, act, layers * passes,
                                   tmp, acc + COMM_TP * L)
                   : link_coll(c, COLL_ALL_REDUCE, 0, act, layers * passes,
                               tmp, acc + COMM_TP * L);
    double imb = p->moe_imbalance > 1 ? p->moe_imbalance : 1;
    rc = rc || link_coll(c, COLL_ALL_TO_ALL, 2,
                         act * c->m->moe_active * imb, moe_layers_on_stage0(c) *
                         ep_passes, tmp, acc + COMM_EP * L);
    rc = rc || link_coll(c, COLL_SEND_RECV, 3, cp_kv_bytes(c),
                         layers * c->M * 3.0 * (p->cp - 1), tmp,
                         acc + COMM_CP * L);
    /* ZeRO-3 gathers twice and reduce-scatters once per microbatch */
    double per = p->zero >= 3 ? c->M : 1;
    rc = rc || link_coll(c, p->zero == 0 ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER,
                         1, grads, per, tmp, acc + COMM_DP * L);
    /* LoRA: ZeRO-1/2 gather the updated adapters, ZeRO-3 every weight */
    double gathered = p->zero >= 3 ? params + stage_frozen(c, S, 0) : params;
    if (p->zero >= 1)
        rc = rc || link_coll(c, COLL_ALL_GATHER, 1, gathered * 2,
                             p->zero >= 3 ? 2 * per : 1, tmp,
                             acc + COMM_DP * L);
    for (int way = 0; rc == 0 && c->P > 1 && way < 2; way++) {
        memset(tmp, 0, sizeof(double) * (size_t)L);
        p2p_s(c, way, 1 - way, tmp);
        if (c->failed)
            rc = -1;
        for (int l = 0; rc == 0 && l < L; l++)
            acc[COMM_PP * L + l] += (double)c->M * c->V * tmp[l];
    }
    /* the two busiest links of each kind, so that NVLink does not hide the
     * NICs and the fabric */
    for (int kind = 0; rc == 0 && kind < LINK_KIND_COUNT; kind++) {
        train_link_use best[2] = {{.link = -1}, {.link = -1}};
        for (int l = 0; l < L; l++) {
            if ((int)t->link[l].kind != kind)
                continue;
            train_link_use u = {.link = l};
            for (int k = 0; k < COMM_KINDS; k++) {
                u.bytes_by_kind[k] = acc[k * L + l];
                u.bytes += acc[k * L + l];
            }
            double bw = t->link[l].bw_Bps * c->in->coll->link_eff[kind];
            if (u.bytes <= 0 || bw <= 0 || step <= 0)
                continue;
            u.utilization = u.bytes / (bw * step);
            if (best[0].link < 0 || u.utilization > best[0].utilization) {
                best[1] = best[0];
                best[0] = u;
            } else if (best[1].link < 0 || u.utilization > best[1].utilization) {
                best[1] = u;
            }
        }
        for (int i = 0; i < 2; i++)
            if (best[i].link >= 0)
                r->top_links[r->ntop_links++] = best[i];
    }
    qsort(r->top_links, (size_t)r->ntop_links, sizeof *r->top_links,
          by_utilization);
    free(acc);
    free(tmp);
    return rc;
}

void train_record_free(train_record *r)
{
    free(r->ops);
    free(r->xfers);
    free(r->waits);
    free(r->opt_start_s);
    free(r->opt_len_s);
    free(r->gather_len_s);
    free(r->comm_s);
    free(r->vs_layers);
    free(r->dp_start_s);
    free(r->dp_len_s);
    free(r->gpu_first);
    free(r->gpu_last);
    memset(r, 0, sizeof *r);
}

/* The per-stage part of the record: each stage's data-parallel reduction
 * and its TP group's GPUs.  Takes dp_start and dp_len (owned). */
static int record_stages(sim *S, double *dp_start, double *dp_len,
                         double step)
{
    train_record *r = S->rec;
    int P = S->c->P;
    r->stages = P;
    r->vpp = S->c->V;
    r->step_s = step;
    r->dp_start_s = dp_start;
    r->dp_len_s = dp_len;
    r->gpu_first = malloc(sizeof(int) * (size_t)P);
    r->gpu_last = malloc(sizeof(int) * (size_t)P);
    int nv = P * S->c->V;
    r->comm_s = calloc((size_t)nv, sizeof *r->comm_s);
    r->vs_layers = calloc((size_t)nv, sizeof(int));
    if (!r->gpu_first || !r->gpu_last || !r->comm_s || !r->vs_layers ||
        S->rec_failed)
        return err_set(S->c->e, "out of memory");
    /* how try_start's op times split (vstage_cost): half of each kind's
     * exposed time in the forward, the rest and the replays in the
     * backward; ZeRO-3's first gather in both */
    for (int vs = 0; vs < nv; vs++) {
        const vcost *v = &S->vc[vs];
        double *f = r->comm_s[vs][0], *b = r->comm_s[vs][1];
        f[REC_TP] = v->tp / 2, b[REC_TP] = v->tp / 2 + v->tp_re;
        f[REC_CP] = v->cp / 2, b[REC_CP] = v->cp / 2 + v->cp_re;
        f[REC_EP] = v->ep / 2, b[REC_EP] = v->ep / 2 + v->ep_re;
        f[REC_FSDP] = v->fsdp_fwd_part + v->fsdp_first;
        b[REC_FSDP] = v->fsdp - v->fsdp_fwd_part + v->fsdp_first;
        int first, last;
        plan_vstage_layers(S->c->m, S->c->p, vs, &first, &last);
        r->vs_layers[vs] = last - first;
    }
    for (int s = 0; s < P; s++) {
        r->gpu_first[s] = rank_of(S->c->p, 0, 0, 0, s);
        r->gpu_last[s] = rank_of(S->c->p, S->c->p->tp - 1, 0, 0, s);
    }
    return 0;
}

/* Model FLOPs per token of one step, recompute excluded (what MFU
 * counts; train.h).  Full training: 3 x forward (Narayanan et al. 2021).
 * LoRA computes no weight gradient of the base: the forward, the data
 * gradients of every matmul (the dense part of the forward once more,
 * output layer included), attention's backward (2 x its forward, as in
 * the 3x convention) and the adapters' 3 x 2 FLOPs per parameter. */
static double step_flops_per_token(const model_spec *m, const plan_train *p)
{
    double fwd = model_flops_per_token_fwd(m, p->seq_len);
    if (p->lora_rank <= 0)
        return 3 * fwd;
    double dense = model_flops_per_token_dense(m);
    return fwd + dense + 2 * (fwd - dense) +
           6 * mem_lora_params_total(m, p->lora_rank);
}

/* FLOPs per token the step's kernels execute (hardware FLOPs, the
 * numerator of hw_tflops and SM efficiency).  Unlike the model FLOPs they
 * count what runs: FlashAttention skips the masked half of the causal
 * square (the unfused path computes it all and masks it), its backward
 * recomputes Q·Kᵀ (5 matmuls against the forward's 2, calib/kernels.tsv
 * flash_bwd_over_fwd), and recompute replays what the layers did not
 * keep (mem_replay_flops_per_token: the layers' forward under full, the
 * attention core under selective, op's unsaved matmuls).  Every kernel
 * is priced at or below its peak, so these FLOPs over the busy time
 * never pass it. */
static double step_hw_flops_per_token(const model_spec *m, const plan_train *p,
                                      double flash_bwd_ratio)
{
    double dense = model_flops_per_token_dense(m);
    double attn_full = model_flops_per_token_fwd(m, p->seq_len) - dense;
    double attn = p->flash_attn ? 0.5 * attn_full : attn_full;
    double attn_bwd = p->flash_attn ? flash_bwd_ratio * attn : 2 * attn;
    double lora = 2 * (p->lora_rank > 0 ? mem_lora_params_total(m, p->lora_rank)
                                        : 0);
    /* forward, data gradients (and weight gradients unless LoRA) */
    double f = dense + attn + attn_bwd + (p->lora_rank > 0 ? dense : 2 * dense) +
               3 * lora;
    return f + mem_replay_flops_per_token(m, p, attn / m->layers);
}

/* The plan's shape for costing: stages, chunks, microbatches, tokens. */
static int ctx_init(ctx *c, const train_input *in, llm_err *e)
{
    if (check_inputs(in, e))
        return -1;
    const plan_train *p = in->plan;
    *c = (ctx){.in = in, .m = in->m, .p = &c->p_own, .p_own = *p, .P = p->pp,
               .V = p->schedule == SCHED_INTERLEAVED ? p->vpp : 1, .e = e};
    c->M = p->global_batch > 0 ? p->global_batch / (p->micro_batch * p->dp)
                               : p->pp;
    c->tokens = (double)p->seq_len / p->cp * p->micro_batch;
    c->dt = p->precision == DT_FP32 ? DT_TF32 : p->precision;
    c->act_b = dtype_bytes(plan_act_dtype(p));
    c->st_own = in->stack ? *in->stack : stack_defaults();
    if (p->compile) {
        if (!c->st_own.compile_offered)
            return err_set(e, "--compile: stack %s has no compiled kernels "
                              "(expected a stack whose profile has compiled "
                              "= { ... }, as torchtitan's)",
                           c->st_own.name[0] ? c->st_own.name : "(none)");
        stack_apply_compile(&c->st_own);
    }
    c->st = &c->st_own;
    c->p_own.bucket_bytes =
        stack_bucket_bytes(c->st, p->bucket_bytes, p->dp * p->cp,
                           mem_grad_bytes_per_param(p));
    if (c->st->attention_asked && p->flash_attn &&
        (c->attn_k = cost_attn_kernel_need(in->cost, in->gpu,
                                           c->st->attention[0], e)) < 0)
        return -1;
    for (int i = 0; i < c->st->nattention && !c->attn_k; i++)
        c->attn_k = cost_attn_kernel_find(in->cost, c->st->attention[i]);
    c->attn_dt = c->head_dt = c->dt;
    if (c->dt == DT_FP8) {
        c->head_dt = plan_act_dtype(p);
        if (!(p->fp8_attention && c->st->fp8_attention))
            c->attn_dt = plan_act_dtype(p);
    }
    if (!gpu_supports_dtype(in->gpu, c->dt, NULL) && c->dt == DT_FP8)
        return err_set(e, "--precision fp8 on %s: no FP8 tensor cores",
                       in->gpu->name);
    return 0;
}

/* Every virtual stage's per-microbatch costs and the pipeline transfers
 * between stages; -1 with the message in c->e. */
static int cost_stages(ctx *c, sim *S)
{
    for (int vs = 0; vs < c->P * c->V && !c->failed; vs++)
        vstage_cost(c, vs, &S->vc[vs]);
    for (int s = 0; s < c->P && !c->failed; s++) {
        /* next and previous virtual stages live on s+1 and s-1 (mod P) */
        S->p2p_fwd[s] = p2p_s(c, s, (s + 1) % c->P, NULL);
        S->p2p_bwd[s] = p2p_s(c, s, (s + c->P - 1) % c->P, NULL);
    }
    return c->failed ? -1 : 0;
}

/* The pipeline twice: once with free transfers (what they expose is the
 * difference), once as it runs, recorded when asked for. */
static int run_step(ctx *c, sim *S, train_result *r, int64_t *t_free,
                    int64_t *t_pipe)
{
    S->free_p2p = true;
    int rc = run_pipeline(S, t_free);
    r->events += S->eng ? engine_events_run(S->eng) : 0;
    S->free_p2p = false;
    S->rec = c->in->record;
    if (S->rec)
        memset(S->rec, 0, sizeof *S->rec);
    if (rc == 0)
        rc = run_pipeline(S, t_pipe);
    r->events += S->eng ? engine_events_run(S->eng) : 0;
    return rc;
}

/* What the step adds after the pipeline: the data-parallel reduction and
 * the optimizer (finish_step), the wait for input, the bytes each GPU
 * sends, the links' load, the record's per-stage part.  *step_s and
 * *dp_exposed_s come back; -1 with the message in c->e. */
static int close_step(ctx *c, sim *S, train_result *r, double *step_s,
                      double *dp_exposed_s)
{
    const plan_train *p = c->p;
    double *dp_start = calloc((size_t)c->P, sizeof(double));
    double *dp_len = calloc((size_t)c->P, sizeof(double));
    if (!dp_start || !dp_len) {
        free(dp_start);
        free(dp_len);
        return err_set(c->e, "out of memory");
    }
    *dp_exposed_s = 0;
    train_record *rec = S->rec;
    if (rec) {
        rec->opt_start_s = calloc((size_t)c->P, sizeof(double));
        rec->opt_len_s = calloc((size_t)c->P, sizeof(double));
        rec->gather_len_s = calloc((size_t)c->P, sizeof(double));
        if (!rec->opt_start_s || !rec->opt_len_s || !rec->gather_len_s) {
            free(dp_start);
            free(dp_len);
            return err_set(c->e, "out of memory");
        }
    }
    double step = finish_step(c, S, dp_start, dp_len, dp_exposed_s,
                              &r->interference,
                              rec ? rec->opt_start_s : NULL,
                              rec ? rec->opt_len_s : NULL,
                              rec ? rec->gather_len_s : NULL);
    if (S->W) {
        if (r->loader_step_s > 0)
            step = r->loader_step_s;
        double w = step - r->step_no_input_wait_s;
        r->input_wait_s = w > 0 ? w : 0;
        r->input_bound = r->input_wait_s > 1e-6 * step;
    }
    for (int s = 0; s < c->P; s++)
        r->dp_bytes_per_gpu += stage_dp_bytes(p, stage_params(c, S, s),
                                              stage_frozen(c, S, s)) /
                               c->P * (p->zero >= 3 ? c->M : 1);
    int rc = c->failed ? -1 : 0; /* finish_step's collectives */
    if (rc == 0 && !c->in->free_comm && link_load(c, S, step, r))
        rc = -1;
    if (rc == 0 && S->rec) {
        rc = record_stages(S, dp_start, dp_len, step);
        dp_start = dp_len = NULL; /* the record owns them */
    }
    free(dp_start);
    free(dp_len);
    *step_s = step;
    return rc;
}

/* The longest compute-stream busy time of any stage, in seconds. */
static double busiest_s(const ctx *c, const sim *S)
{
    double busy_max = 0;
    for (int s = 0; s < c->P; s++)
        if (S->busy_ns[s] * 1e-9 > busy_max)
            busy_max = S->busy_ns[s] * 1e-9;
    return busy_max;
}

/* Throughput, model and hardware FLOP/s (train.h says what each counts),
 * MFU, the bubble. */
static void report_rates(const ctx *c, const sim *S, train_result *r,
                         double step, double busy_max, int64_t t_pipe)
{
    const train_input *in = c->in;
    const plan_train *p = c->p;
    int gpus = plan_train_gpus(p);
    double seqs = (double)c->M * p->micro_batch * p->dp;
    double tokens = seqs * p->seq_len;
    double model_flops = step_flops_per_token(in->m, p) * tokens;
    double hw_flops = step_hw_flops_per_token(in->m, p,
                                              in->cost->flash_bwd_ratio) *
                      tokens;
    double peak = in->gpu->peak_flops[c->dt];
    r->step_s = step;
    r->microbatches = c->M;
    r->tokens_per_s = tokens / step;
    r->samples_per_s = seqs / step;
    r->model_tflops_per_gpu = model_flops / step / gpus / 1e12;
    r->hw_tflops_per_gpu = hw_flops / step / gpus / 1e12;
    r->mfu = model_flops / step / gpus / peak;
    /* the schedule's own bubble, not the waits for input */
    int64_t span = S->W ? S->t_pipe_no_input : t_pipe;
    r->bubble_fraction = busy_max > 0 ? (span * 1e-9 - busy_max) / busy_max
                                      : 0;
    r->sm_efficiency = hw_flops / gpus / (busy_max * peak);
    if (c->attn_k > 0 && p->flash_attn)
        snprintf(r->attn_kernel, sizeof r->attn_kernel, "%s",
                 in->cost->attn_k[c->attn_k - 1].name);
    r->tensor_load_16bit = cost_tensor_load(in->cost, DT_BF16);
    r->tensor_load_fp8 = cost_tensor_load(in->cost, DT_FP8);
}

/* Communication left on the critical path, per kind, and GPU-Util. */
static void report_comm(ctx *c, const sim *S, train_result *r,
                        double step, double busy_max, double dp_exposed,
                        int64_t t_free, int64_t t_pipe)
{
    double tp = 0, ep = 0, cp = 0;
    double fsdp = 0;
    for (int vs = 0; vs < c->P * c->V; vs += c->P) { /* stage 0's chunks */
        fsdp += S->vc[vs].fsdp + 2 * S->vc[vs].fsdp_first;
        /* with what the recompute replays */
        tp += S->vc[vs].tp + S->vc[vs].tp_re;
        ep += S->vc[vs].ep + S->vc[vs].ep_re;
        cp += S->vc[vs].cp + S->vc[vs].cp_re;
    }
    r->exposed_comm_s[COMM_TP] = tp * c->M;
    r->exposed_comm_s[COMM_EP] = ep * c->M;
    r->exposed_comm_s[COMM_CP] = cp * c->M;
    r->exposed_comm_s[COMM_PP] = (t_pipe - t_free) * 1e-9;
    r->exposed_comm_s[COMM_DP] = (dp_exposed > 0 ? dp_exposed : 0) +
                                 fsdp * c->M;
    stage0_pass(S->vc, c->P, c->V, &r->fwd_s, &r->bwd_s);
    /* nvidia-smi's GPU-Util: any kernel running (NCCL ones included) */
    double active = busy_max + r->interference.extra_s +
                    (dp_exposed > 0 ? dp_exposed : 0) +
                    optimizer_s(c, stage_params(c, S, 0));
    r->gpu_util = active / step > 1 ? 1 : active / step;
}

/* The memory peak (mem.c's), and when the schedule reached it. */
static void report_memory(const ctx *c, const sim *S, train_result *r)
{
    mem_train_breakdown(c->m, c->p, c->in->overhead, &r->memory);
    r->memory_peak_bytes = r->memory.total;
    int ps = r->memory.stage >= 0 && r->memory.stage < c->P ? r->memory.stage
                                                            : 0;
    r->chunks_held = S->held_max[ps];
    r->memory_peak_at_s = S->held_at[ps] * 1e-9;
    for (int s = 0; s < c->P && s < TRAIN_MAX_STAGES; s++)
        r->chunks_held_by_stage[s] = S->held_max[s];
}

int train_simulate(const train_input *in, train_result *r, llm_err *e)
{
    memset(r, 0, sizeof *r);
    ctx c;
    if (ctx_init(&c, in, e))
        return -1;
    sim S;
    memset(&S, 0, sizeof S);
    if (sim_alloc(&S, &c)) {
        sim_free(&S);
        return e->msg[0] ? -1 : err_set(e, "out of memory");
    }
    int64_t t_free = 0, t_pipe = 0;
    double step = 0, dp_exposed = 0;
    int rc = cost_stages(&c, &S);
    if (rc == 0 && in->loader && in->loader->workers > 0)
        rc = loader_steady_state(&c, &S, in->loader, r);
    if (rc == 0)
        rc = run_step(&c, &S, r, &t_free, &t_pipe);
    if (rc == 0)
        rc = close_step(&c, &S, r, &step, &dp_exposed);
    if (rc == 0) {
        double busy_max = busiest_s(&c, &S);
        report_rates(&c, &S, r, step, busy_max, t_pipe);
        report_comm(&c, &S, r, step, busy_max, dp_exposed, t_free, t_pipe);
        report_memory(&c, &S, r);
    }
    r->net_events = c.net_events;
    sim_free(&S);
    return rc;
}

/* ---- the fast path (search) --------------------------------------------- */

/* The step from the same per-microbatch costs as train_simulate, without
 * the engine: the busiest stage runs M microbatches of all its chunks, the
 * pipeline fills and drains over (P-1)/V of a stage's microbatch (Narayanan
 * et al., SC21, eq. 2-3), one microbatch crosses every stage boundary twice
 * on the critical path, and the data-parallel reduction of the stage with
 * the most parameters shows where it outlasts the last backward chunk. */
int train_estimate(const train_input *in, train_result *r, llm_err *e)
{
    memset(r, 0, sizeof *r);
    ctx c;
    if (ctx_init(&c, in, e))
        return -1;
    const plan_train *p = c.p;
    int nv = c.P * c.V;
    vcost *vc = calloc((size_t)nv, sizeof *vc);
    if (!vc)
        return err_set(e, "out of memory");
    for (int vs = 0; vs < nv && !c.failed; vs++)
        vstage_cost(&c, vs, &vc[vs]);
    double p2p = c.P > 1 && !c.failed ? p2p_s(&c, 0, 1, NULL) : 0;
    double stage_max = 0, pipe_fill = 0, dp_tail = 0;
    for (int s = 0; s < c.P && !c.failed; s++) {
        double f = 0, b = 0, params = 0;
        for (int k = 0; k < c.V; k++) {
            f += vc[k * c.P + s].fwd;
            b += vc[k * c.P + s].bwd + vc[k * c.P + s].fsdp_first;
            params += vc[k * c.P + s].params;
        }
        if (f + b > stage_max)
            stage_max = f + b;
        if ((f + b) / c.V > pipe_fill)
            pipe_fill = (f + b) / c.V;
        double red, gat, gat_first;
        dp_cost(&c, params, &red, &gat, &gat_first);
        double last_bwd = vc[s].bwd; /* chunk 0 of stage s runs last */
        double tail = (red > last_bwd && p->overlap_grad_reduce
                           ? red - last_bwd
                             : !p->overlap_grad_reduce ? red : 0) +
                      optimizer_s(&c, params) +
                      (p->overlap_param_gather ? gat_first : gat);
        if (tail > dp_tail)
            dp_tail = tail;
    }
    double step = c.M * stage_max + (c.P - 1) * pipe_fill +
                  2.0 * (nv - 1) * p2p + dp_tail;
    int failed = c.failed;
    double fwd0, bwd0;
    stage0_pass(vc, c.P, c.V, &fwd0, &bwd0);
    free(vc);
    if (failed)
        return -1;
    int gpus = plan_train_gpus(p);
    double tokens = (double)c.M * p->micro_batch * p->dp * p->seq_len;
    double model_flops = step_flops_per_token(in->m, p) * tokens;
    r->step_s = step;
    r->microbatches = c.M;
    r->tokens_per_s = tokens / step;
    r->samples_per_s = tokens / p->seq_len / step;
    r->model_tflops_per_gpu = model_flops / step / gpus / 1e12;
    r->mfu = model_flops / step / gpus / in->gpu->peak_flops[c.dt];
    r->bubble_fraction = c.M > 0 ? (c.P - 1) * pipe_fill / (c.M * stage_max)
                                 : 0;
    r->fwd_s = fwd0;
    r->bwd_s = bwd0;
    mem_train_breakdown(in->m, p, in->overhead, &r->memory);
    r->memory_peak_bytes = r->memory.total;
    return 0;
}
