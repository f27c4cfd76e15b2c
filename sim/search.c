#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const search_reason_names[SEARCH_REASONS] = {
    "invalid plan", "model states exceed memory",
    "activations exceed memory", "estimate failed"};

typedef struct cand {
    mem_train plan;
    double est, bytes;
} cand;

typedef struct candv {
    cand *c;
    long n, cap;
} candv;

typedef struct walk {
    const train_input *base;
    const mem_train *tmpl;
    int gpus, per_node;
    search_result *out;
    candv fit, dropped;
    llm_err *e;
} walk;

static int push(candv *v, llm_err *e, const mem_train *p, double est,
                double bytes)
{
    if (v->n == v->cap) {
        long cap = v->cap ? 2 * v->cap : 256;
        cand *nc = realloc(v->c, (size_t)cap * sizeof *nc);
        if (!nc)
            return err_set(e, "out of memory");
        v->c = nc;
        v->cap = cap;
    }
    v->c[v->n++] = (cand){*p, est, bytes};
    return 0;
}

/* One complete plan: check, fit, estimate. */
static int consider(walk *w, const mem_train *p)
{
    search_result *o = w->out;
    o->enumerated++;
    llm_err e = {{0}};
    if (mem_train_check(w->base->m, p, &e)) {
        o->dropped[SEARCH_INVALID]++;
        return 0;
    }
    mem_result mr;
    mem_train_breakdown(w->base->m, p, w->base->overhead, &mr);
    double cap = w->base->gpu->memory_bytes;
    train_input in = *w->base;
    in.plan = p;
    train_result r;
    if (mr.total > cap) {
        o->dropped[mr.weights + mr.gradients + mr.optimizer > cap
                       ? SEARCH_MODEL_STATES
                       : SEARCH_ACTIVATIONS]++;
        /* what memory costs: the refused plans, estimated, to say later
         * which faster one came closest to fitting */
        if (mr.total < 4 * cap && train_estimate(&in, &r, &e) == 0)
            return push(&w->dropped, w->e, p, r.step_s, mr.total);
        return 0;
    }
    if (train_estimate(&in, &r, &e)) {
        o->dropped[SEARCH_ESTIMATE]++;
        return 0;
    }
    o->fitted++;
    return push(&w->fit, w->e, p, r.step_s, mr.total);
}

static int schedules(walk *w, mem_train *p)
{
    int M = p->global_batch / (p->micro_batch * p->dp);
    p->vpp = 1;
    p->schedule = SCHED_1F1B;
    if (consider(w, p))
        return -1;
    if (p->pp == 1)
        return 0;
    p->schedule = SCHED_GPIPE;
    if (consider(w, p))
        return -1;
    /* Megatron-LM's interleaved schedule wants M a multiple of PP */
    int per = w->base->m->layers / p->pp;
    for (int v = 2; v <= 8 && M % p->pp == 0; v++)
        if (per % v == 0) {
            p->schedule = SCHED_INTERLEAVED;
            p->vpp = v;
            if (consider(w, p))
                return -1;
        }
    p->vpp = 1;
    p->schedule = SCHED_1F1B;
    return 0;
}

static int memory_choices(walk *w, mem_train *p)
{
    for (int z = 0; z <= 3; z++) {
        if (z > 0 && p->dp * p->cp < 2)
            break;
        p->zero = z;
        for (int rc = 0; rc < 3; rc++) {
            p->recompute = (mem_recompute)rc;
            if (schedules(w, p))
                return -1;
        }
    }
    return 0;
}

static int batches(walk *w, mem_train *p)
{
    for (int mb = 1; mb <= 16; mb *= 2) {
        if (p->global_batch % (mb * p->dp))
            continue;
        p->micro_batch = mb;
        if (memory_choices(w, p))
            return -1;
    }
    return 0;
}

static int shapes(walk *w)
{
    const model_spec *m = w->base->m;
    mem_train p = *w->tmpl;
    bool long_seq = p.seq_len >= 16384;
    for (int tp = 1; tp <= w->per_node && tp <= w->gpus; tp *= 2) {
        if (m->heads % tp || w->gpus % tp)
            continue;
        for (int pp = 1; pp <= m->layers && tp * pp <= w->gpus; pp++) {
            if (m->layers % pp || (w->gpus / tp) % pp)
                continue;
            for (int cp = 1; cp <= (long_seq ? 8 : 1); cp *= 2) {
                if ((w->gpus / tp / pp) % cp || p.seq_len % cp)
                    continue;
                int dp = w->gpus / (tp * pp * cp);
                for (int ep = 1; ep <= (m->moe_experts ? m->moe_experts : 1);
                     ep *= 2) {
                    if (ep > 1 && ((dp * cp) % ep || m->moe_experts % ep))
                        continue;
                    p.tp = tp;
                    p.pp = pp;
                    p.cp = cp;
                    p.dp = dp;
                    p.ep = ep;
                    p.sp = tp > 1;
                    if (batches(w, &p))
                        return -1;
                }
            }
        }
    }
    return 0;
}

static int by_estimate(const void *a, const void *b)
{
    double x = ((const cand *)a)->est, y = ((const cand *)b)->est;
    return x < y ? -1 : x > y;
}

static int by_step(const void *a, const void *b)
{
    double x = ((const search_plan *)a)->r.step_s;
    double y = ((const search_plan *)b)->r.step_s;
    return x < y ? -1 : x > y;
}

int search_train(const train_input *base, const mem_train *tmpl,
                 int simulate, search_result *out, llm_err *e)
{
    memset(out, 0, sizeof *out);
    int gpus = base->gpus > 0 && base->gpus < base->t->ngpu ? base->gpus
                                                            : base->t->ngpu;
    walk w = {.base = base, .tmpl = tmpl, .gpus = gpus,
              .per_node = base->t->gpus_per_node, .out = out, .e = e};
    if (tmpl->global_batch <= 0) {
        return err_set(e, "search: a global batch is needed (--global-batch "
                          "N)");
    }
    if (shapes(&w)) {
        free(w.fit.c);
        free(w.dropped.c);
        return -1;
    }
    if (w.fit.n > 0)
        qsort(w.fit.c, (size_t)w.fit.n, sizeof *w.fit.c, by_estimate);
    int k = w.fit.n < simulate ? (int)w.fit.n : simulate;
    out->ranked = calloc((size_t)(k ? k : 1), sizeof *out->ranked);
    if (!out->ranked) {
        free(w.fit.c);
        free(w.dropped.c);
        return err_set(e, "out of memory");
    }
    for (int i = 0; i < k; i++) {
        search_plan *sp = &out->ranked[out->nranked];
        sp->plan = w.fit.c[i].plan;
        sp->estimate_s = w.fit.c[i].est;
        train_input in = *base;
        in.plan = &sp->plan;
        in.trace_path = in.timeline_path = NULL;
        llm_err pe = {{0}};
        if (train_simulate(&in, &sp->r, &pe) == 0)
            out->nranked++;
    }
    free(w.fit.c);
    qsort(out->ranked, (size_t)out->nranked, sizeof *out->ranked, by_step);
    /* of the refused plans estimated 3% or more faster than the winner,
     * the one closest to fitting */
    double best = out->nranked ? out->ranked[0].estimate_s : INFINITY;
    for (long i = 0; i < w.dropped.n; i++) {
        const cand *c = &w.dropped.c[i];
        if (c->est < 0.97 * best &&
            (!out->have_dropped || c->bytes < out->fastest_dropped_bytes)) {
            out->have_dropped = true;
            out->fastest_dropped = c->plan;
            out->fastest_dropped_s = c->est;
            out->fastest_dropped_bytes = c->bytes;
        }
    }
    free(w.dropped.c);
    return 0;
}

void search_free(search_result *r)
{
    free(r->ranked);
    memset(r, 0, sizeof *r);
}

void search_plan_name(const mem_train *p, char *buf, size_t n)
{
    char extra[64] = "";
    if (p->cp > 1 || p->ep > 1)
        snprintf(extra, sizeof extra, " x cp %d x ep %d", p->cp, p->ep);
    char sched[48];
    if (p->schedule == SCHED_INTERLEAVED)
        snprintf(sched, sizeof sched, "interleaved (vpp %d)", p->vpp);
    else
        snprintf(sched, sizeof sched, "%s", mem_schedule_names[p->schedule]);
    snprintf(buf, n, "tp %d x pp %d x dp %d%s, mb %d, ZeRO-%d, recompute "
             "%s%s%s", p->tp, p->pp, p->dp, extra, p->micro_batch, p->zero,
             mem_recompute_names[p->recompute], p->pp > 1 ? ", " : "",
             p->pp > 1 ? sched : "");
}
