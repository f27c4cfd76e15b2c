/* Remedies for a plan that does not fit, and the cheapest GPU set that
 * does.  Each remedy is a modified plan run through the same breakdown, so
 * what it buys is computed, not guessed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem/mem.h"
#include "base/util.h"

typedef struct remedy_list {
    mem_remedy *out;
    int n;
    double base_total, capacity;
} remedy_list;

static void push(remedy_list *L, const char *what, double total, int gpus)
{
    if (L->n >= MEM_MAX_REMEDIES || total >= L->base_total)
        return;
    for (int i = 0; i < L->n; i++) /* the same plan reached two ways */
        if (L->out[i].gpus == gpus && L->out[i].total == total)
            return;
    mem_remedy *r = &L->out[L->n++];
    snprintf(r->what, sizeof r->what, "%s", what);
    r->total = total;
    r->saves = L->base_total - total;
    r->fits = total <= L->capacity;
    r->gpus = gpus;
}

static int by_saving(const void *a, const void *b)
{
    const mem_remedy *x = a, *y = b;
    if (x->saves != y->saves)
        return x->saves < y->saves ? 1 : -1;
    return strcmp(x->what, y->what);
}

/* ---- training ---------------------------------------------------------- */

static void try_train(remedy_list *L, const model_spec *m, const plan_train *q,
                      const mem_overhead *o, const char *what)
{
    if (plan_train_check(m, q, NULL) != 0)
        return;
    mem_result r;
    mem_train_breakdown(m, q, o, &r);
    push(L, what, r.total, plan_train_gpus(q));
}

/* Each recompute mode (every:2 for every:K, torchtitan's default) that
 * keeps less than the plan's, with the compute it adds: the FLOPs it
 * replays over the step's forward and backward (3 x the forward). */
static void try_recompute(remedy_list *L, const model_spec *m,
                          const plan_train *p, const mem_overhead *o)
{
    static const plan_recompute modes[] = {RECOMPUTE_SELECTIVE, RECOMPUTE_OP,
                                           RECOMPUTE_EVERY, RECOMPUTE_FULL};
    double dense = model_flops_per_token_dense(m);
    double attn = (model_flops_per_token_fwd(m, p->seq_len) - dense) /
                  m->layers * (p->flash_attn ? 0.5 : 1);
    double fwd = dense + attn * m->layers;
    for (int i = 0; i < 4; i++) {
        plan_train q = *p;
        q.recompute = modes[i];
        q.recompute_every = modes[i] == RECOMPUTE_EVERY ? 2 : 0;
        if (q.recompute == p->recompute &&
            q.recompute_every == p->recompute_every)
            continue;
        double more = mem_replay_flops_per_token(m, &q, attn) -
                      mem_replay_flops_per_token(m, p, attn);
        if (more <= 0)
            continue;
        char what[200], a[PLAN_RECOMPUTE_TEXT], b[PLAN_RECOMPUTE_TEXT];
        snprintf(what, sizeof what, "activation recompute %s -> %s (~%.0f%% "
                 "more compute)", plan_recompute_text(p, a),
                 plan_recompute_text(&q, b), 100 * more / (3 * fwd));
        try_train(L, m, &q, o, what);
    }
}

/* Doubles TP or PP: at the same GPU count when DP can be halved, else
 * with twice the GPUs. */
static void try_split(remedy_list *L, const model_spec *m, const plan_train *p,
                      const mem_overhead *o, bool tp)
{
    plan_train q = *p;
    char what[200];
    int *deg = tp ? &q.tp : &q.pp;
    *deg *= 2;
    bool same = q.dp % 2 == 0 &&
                (q.global_batch == 0 ||
                 q.global_batch % (q.micro_batch * q.dp / 2) == 0);
    if (same)
        q.dp /= 2;
    if (q.zero > 0 && q.dp * q.cp == 1)
        q.zero = 0;
    snprintf(what, sizeof what, "%s %d -> %d%s", tp ? "tensor parallel"
                                                    : "pipeline parallel",
             *deg / 2, *deg,
             same ? " (dp halved, same GPUs)" : " (twice the GPUs)");
    try_train(L, m, &q, o, what);
}

int mem_train_remedies(const model_spec *m, const plan_train *p,
                       const mem_overhead *o, const gpu_spec *g,
                       mem_remedy *out)
{
    mem_result base;
    mem_train_breakdown(m, p, o, &base);
    remedy_list L = {out, 0, base.total, g->memory_bytes};
    plan_train q;
    char what[200];

    if (p->micro_batch > 1) {
        q = *p;
        q.micro_batch = 1;
        snprintf(what, sizeof what, "micro-batch %d -> 1 (gradient "
                 "accumulation keeps the batch)", p->micro_batch);
        try_train(&L, m, &q, o, what);
    }
    try_recompute(&L, m, p, o);
    if (!p->flash_attn && gpu_has(g, GPU_CAP_FLASH_ATTN)) {
        q = *p;
        q.flash_attn = true;
        try_train(&L, m, &q, o, "FlashAttention on");
    }
    if (p->tp > 1 && !p->sp) {
        q = *p;
        q.sp = true;
        try_train(&L, m, &q, o, "sequence parallelism on");
    }
    for (int z = p->zero + 1; z <= 3 && p->dp * p->cp > 1; z++) {
        q = *p;
        q.zero = z;
        snprintf(what, sizeof what, "ZeRO stage %d -> %d", p->zero, z);
        try_train(&L, m, &q, o, what);
    }
    if (p->tp * 2 <= 8)
        try_split(&L, m, p, o, true);
    try_split(&L, m, p, o, false);
    static const plan_optimizer lighter[] = {OPT_ADAM8BIT, OPT_ADAFACTOR,
                                            OPT_SGD_MOMENTUM};
    for (int i = 0; i < 3 && (p->optimizer == OPT_ADAM ||
                              p->optimizer == OPT_ADAMW);
         i++) {
        q = *p;
        q.optimizer = lighter[i];
        snprintf(what, sizeof what, "optimizer %s -> %s",
                 plan_optimizer_names[p->optimizer],
                 plan_optimizer_names[lighter[i]]);
        try_train(&L, m, &q, o, what);
    }
    if (mem_weight_bytes_per_param(p->precision) == 4) {
        q = *p;
        q.precision = gpu_has(g, GPU_CAP_BF16) ? DT_BF16 : DT_FP16;
        snprintf(what, sizeof what, "mixed precision %s (fp32 master "
                 "weights)", dtype_name(q.precision));
        try_train(&L, m, &q, o, what);
    }
    mem_choice c;
    mem_recommend_train(m, p, o, g, 16384, &c);
    if (c.gpus > 0 && c.gpus != plan_train_gpus(p)) {
        snprintf(what, sizeof what, "%d GPUs: tp %d, pp %d, dp %d, ZeRO %d",
                 c.gpus, c.train.tp, c.train.pp, c.train.dp, c.train.zero);
        push(&L, what, c.result.total, c.gpus);
    }
    qsort(out, (size_t)L.n, sizeof *out, by_saving);
    return L.n;
}

/* ---- inference --------------------------------------------------------- */

static void try_infer(remedy_list *L, const model_spec *m, const plan_infer *q,
                      const mem_overhead *o, const char *what)
{
    if (plan_infer_check(m, q, NULL) != 0)
        return;
    mem_result r;
    mem_infer_breakdown(m, q, o, &r);
    push(L, what, r.total, q->tp * q->pp);
}

int mem_infer_remedies(const model_spec *m, const plan_infer *p,
                       const mem_overhead *o, const gpu_spec *g,
                       mem_remedy *out)
{
    mem_result base;
    mem_infer_breakdown(m, p, o, &base);
    remedy_list L = {out, 0, base.total, g->memory_bytes};
    plan_infer q;
    char what[200];

    if (p->batch > 1) {
        q = *p;
        q.batch = p->batch / 2;
        snprintf(what, sizeof what, "batch %d -> %d", p->batch, q.batch);
        try_infer(&L, m, &q, o, what);
    }
    if (p->context > 256) {
        q = *p;
        q.context = p->context / 2;
        snprintf(what, sizeof what, "cap context %d -> %d tokens",
                 p->context, q.context);
        try_infer(&L, m, &q, o, what);
    }
    static const dtype quant[] = {DT_FP8, DT_INT8, DT_INT4};
    for (int i = 0; i < 3; i++) {
        if (dtype_bytes(quant[i]) >= dtype_bytes(p->weight_dtype))
            continue;
        q = *p;
        q.weight_dtype = quant[i];
        if (q.kv_dtype == DT_COUNT)
            q.kv_dtype = dtype_bytes(p->weight_dtype) >= 2 ? p->weight_dtype
                                                           : DT_FP16;
        const char *why = NULL;
        bool native = quant[i] != DT_FP8 || gpu_supports_dtype(g, DT_FP8, &why);
        snprintf(what, sizeof what, "quantize weights to %s%s",
                 dtype_name(quant[i]),
                 native ? "" : " (weight-only: no FP8 tensor cores)");
        try_infer(&L, m, &q, o, what);
    }
    dtype kv = p->kv_dtype != DT_COUNT ? p->kv_dtype
               : dtype_bytes(p->weight_dtype) >= 2 ? p->weight_dtype
                                                   : DT_FP16;
    if (dtype_bytes(kv) > 1) {
        q = *p;
        q.kv_dtype = DT_FP8;
        try_infer(&L, m, &q, o, "KV cache in fp8");
    }
    if (p->tp * 2 <= 8) {
        q = *p;
        q.tp *= 2;
        snprintf(what, sizeof what, "tensor parallel %d -> %d (twice the "
                 "GPUs)", p->tp, q.tp);
        try_infer(&L, m, &q, o, what);
    }
    mem_choice c;
    mem_recommend_infer(m, p, o, g, 4096, &c);
    if (c.gpus > 0 && c.gpus != p->tp * p->pp) {
        snprintf(what, sizeof what, "%d GPUs: tp %d, pp %d", c.gpus,
                 c.infer.tp, c.infer.pp);
        push(&L, what, c.result.total, c.gpus);
    }
    qsort(out, (size_t)L.n, sizeof *out, by_saving);
    return L.n;
}

/* ---- cheapest GPU set -------------------------------------------------- */

static void choice_init(mem_choice *c, const gpu_spec *g)
{
    memset(c, 0, sizeof *c);
    c->gpu = g;
}

static void choice_note_dtype(mem_choice *c, const gpu_spec *g, dtype d)
{
    const char *why = NULL;
    if (gpu_supports_dtype(g, d, &why))
        return;
    if (d == DT_BF16)
        snprintf(c->note, sizeof c->note, "fp16 instead of bf16 (%s)", why);
    else
        snprintf(c->note, sizeof c->note, "%s: %s", dtype_name(d), why);
}

/* Among plans that fit at one GPU count, prefer fewer model-parallel
 * ranks (more data parallelism, less communication), then a lower ZeRO
 * stage, then TP over PP. */
static bool better(const plan_train *a, const plan_train *b)
{
    int ma = a->tp * a->pp, mb = b->tp * b->pp;
    if (ma != mb)
        return ma < mb;
    if (a->zero != b->zero)
        return a->zero < b->zero;
    return a->pp < b->pp;
}

static bool train_at(const model_spec *m, const plan_train *base,
                     const mem_overhead *o, const gpu_spec *g, int n,
                     mem_choice *c)
{
    bool found = false;
    for (int tp = 1; tp <= 8 && tp <= n; tp *= 2) {
        for (int pp = 1; pp <= m->layers && tp * pp <= n; pp++) {
            if (!plan_layers_split(m, pp) || n % (tp * pp * base->cp))
                continue;
            for (int z = base->zero; z <= 3; z++) {
                plan_train q = *base;
                q.tp = tp;
                q.pp = pp;
                q.dp = n / (tp * pp * base->cp);
                q.zero = z;
                if (q.layers_per_stage.n && q.pp != base->pp)
                    q.layers_per_stage.n = 0;
                if (q.schedule == SCHED_INTERLEAVED && pp == 1) {
                    q.schedule = SCHED_1F1B;
                    q.vpp = 1;
                }
                if (plan_train_check(m, &q, NULL) != 0)
                    continue;
                mem_result r;
                mem_train_breakdown(m, &q, o, &r);
                if (r.total > g->memory_bytes)
                    continue;
                if (!found || better(&q, &c->train)) {
                    c->train = q;
                    c->result = r;
                    found = true;
                }
            }
        }
    }
    return found;
}

void mem_recommend_train(const model_spec *m, const plan_train *base,
                         const mem_overhead *o, const gpu_spec *g,
                         int max_gpus, mem_choice *c)
{
    choice_init(c, g);
    choice_note_dtype(c, g, base->precision);
    for (int n = base->cp; n <= max_gpus; n *= 2) {
        if (train_at(m, base, o, g, n, c)) {
            c->gpus = n;
            c->price_usd = n * g->price_usd;
            return;
        }
    }
}

void mem_recommend_infer(const model_spec *m, const plan_infer *base,
                         const mem_overhead *o, const gpu_spec *g,
                         int max_gpus, mem_choice *c)
{
    choice_init(c, g);
    choice_note_dtype(c, g, base->weight_dtype);
    for (int n = 1; n <= max_gpus; n *= 2) {
        int tp = n < 8 ? n : 8;
        while (tp > 1 && plan_infer_check(m, &(plan_infer){.tp = tp, .pp = 1},
                                         NULL) != 0)
            tp /= 2;
        plan_infer q = *base;
        q.tp = tp;
        q.pp = n / tp;
        if (plan_infer_check(m, &q, NULL) != 0)
            continue;
        mem_result r;
        mem_infer_breakdown(m, &q, o, &r);
        if (r.total <= g->memory_bytes) {
            c->gpus = n;
            c->infer = q;
            c->result = r;
            c->price_usd = n * g->price_usd;
            return;
        }
    }
}
