#include "decide/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/par.h"

const char *const search_reason_names[SEARCH_REASONS] = {
    "invalid plan", "model states exceed memory",
    "activations exceed memory", "estimate failed"};

typedef struct cand {
    plan_train plan;
    double est, bytes;
    int kind, reason; /* its verdict (below) */
} cand;

typedef struct candv {
    cand *c;
    long n, cap;
} candv;

typedef struct walk {
    const train_input *base;
    const plan_train *tmpl;
    int gpus, per_node;
    search_result *out;
    candv all;          /* every plan enumerated, in order */
    candv fit, dropped;
    train_result *sim;  /* the simulated ones, by rank of estimate */
    bool *sim_ok;
    long cursor, limit; /* par_run's next job */
    llm_err *e;
} walk;

static int push(candv *v, llm_err *e, const plan_train *p, double est,
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
    v->c[v->n++] = (cand){*p, est, bytes, 0, 0};
    return 0;
}

/* What checking, fitting and estimating one plan found. */
enum { V_FIT = SEARCH_REASONS, V_DROPPED_ESTIMATED };
typedef struct verdict {
    int kind;  /* a search reason, or V_FIT, or V_DROPPED_ESTIMATED (a plan
                  memory refused, estimated to say what memory costs) */
    int reason; /* for V_DROPPED_ESTIMATED: which memory reason */
    double est, bytes;
} verdict;

static verdict evaluate(const walk *w, const plan_train *p)
{
    verdict v = {SEARCH_INVALID, 0, 0, 0};
    llm_err e = {{0}};
    if (plan_train_check(w->base->m, p, &e))
        return v;
    /* memory with the gradient bucket the step will run (train's ctx) */
    plan_train q = *p;
    if (w->base->stack)
        q.bucket_bytes = stack_bucket_bytes(w->base->stack, p->bucket_bytes,
                                            p->dp * p->cp,
                                            mem_grad_bytes_per_param(p));
    mem_result mr;
    mem_train_breakdown(w->base->m, &q, w->base->overhead, &mr);
    double cap = w->base->gpu->memory_bytes;
    train_input in = *w->base;
    in.plan = p;
    train_result r;
    v.bytes = mr.total;
    if (mr.total > cap) {
        v.kind = mr.weights + mr.gradients + mr.optimizer > cap
                     ? SEARCH_MODEL_STATES
                     : SEARCH_ACTIVATIONS;
        /* what memory costs: the refused plans, estimated, to say later
         * which faster one came closest to fitting */
        if (mr.total < 4 * cap && train_estimate(&in, &r, &e) == 0) {
            v.reason = v.kind;
            v.kind = V_DROPPED_ESTIMATED;
            v.est = r.step_s;
        }
        return v;
    }
    if (train_estimate(&in, &r, &e)) {
        v.kind = SEARCH_ESTIMATE;
        return v;
    }
    v.kind = V_FIT;
    v.est = r.step_s;
    return v;
}

/* Workers send verdicts as text; %a keeps every bit of a double, so a
 * search on N cores ranks exactly as on one. */
static char *evaluate_job(long i, void *ctx)
{
    const walk *w = ctx;
    verdict v = evaluate(w, &w->all.c[i].plan);
    char *b = malloc(96);
    if (b)
        snprintf(b, 96, "%d %d %a %a", v.kind, v.reason, v.est, v.bytes);
    return b;
}

static int evaluate_done(long i, const char *r, void *ctx)
{
    walk *w = ctx;
    cand *c = &w->all.c[i];
    char *end;
    c->kind = (int)strtol(r, &end, 10);
    c->reason = (int)strtol(end, &end, 10);
    c->est = strtod(end, &end);
    c->bytes = strtod(end, &end);
    return 0;
}

/* One complete plan: queued; evaluated later, all at once. */
static int consider(walk *w, const plan_train *p)
{
    /* a stage list given for another pipeline shape does not apply */
    if (p->layers_per_stage.n && p->layers_per_stage.n != plan_vstages(p)) {
        plan_train q = *p;
        q.layers_per_stage.n = 0;
        return push(&w->all, w->e, &q, 0, 0);
    }
    return push(&w->all, w->e, p, 0, 0);
}

static int schedules(walk *w, plan_train *p)
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
    for (int v = 2; v <= 8 && M % p->pp == 0; v++)
        if (plan_layers_split(w->base->m, p->pp * v)) {
            p->schedule = SCHED_INTERLEAVED;
            p->vpp = v;
            if (consider(w, p))
                return -1;
        }
    p->vpp = 1;
    p->schedule = SCHED_1F1B;
    return 0;
}

static int memory_choices(walk *w, plan_train *p)
{
    for (int z = 0; z <= 3; z++) {
        if (z > 0 && p->dp * p->cp < 2)
            break;
        p->zero = z;
        /* the three every stack offers; op and every:K are the user's */
        static const plan_recompute rcs[] = {RECOMPUTE_NONE,
                                             RECOMPUTE_SELECTIVE,
                                             RECOMPUTE_FULL};
        for (int rc = 0; rc < 3; rc++) {
            p->recompute = rcs[rc];
            p->recompute_every = 0;
            if (schedules(w, p))
                return -1;
        }
    }
    return 0;
}

static int batches(walk *w, plan_train *p)
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
    plan_train p = *w->tmpl;
    bool long_seq = p.seq_len >= 16384;
    for (int tp = 1; tp <= w->per_node && tp <= w->gpus; tp *= 2) {
        if (m->heads % tp || w->gpus % tp)
            continue;
        for (int pp = 1; pp <= m->layers && tp * pp <= w->gpus; pp++) {
            if (!plan_layers_split(m, pp) || (w->gpus / tp) % pp)
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

static long next_index(void *ctx)
{
    walk *w = ctx;
    return w->cursor < w->limit ? w->cursor++ : -1;
}

/* The k-th fastest estimate, simulated; its train_result travels back as
 * hex ('+' simulated, '-' failed): workers are forks of this process, so
 * the struct's layout is the same on both ends. */
static char *simulate_job(long i, void *ctx)
{
    const walk *w = ctx;
    train_input in = *w->base;
    plan_train plan = w->fit.c[i].plan;
    in.plan = &plan;
    in.record = NULL;
    train_result r;
    memset(&r, 0, sizeof r);
    llm_err pe = {{0}};
    int rc = train_simulate(&in, &r, &pe);
    return par_hex_encode(rc ? '-' : '+', &r, sizeof r);
}

static int simulate_done(long i, const char *s, void *ctx)
{
    walk *w = ctx;
    /* a failed one is left out of the ranking, as before */
    w->sim_ok[i] = par_hex_decode(s, '+', &w->sim[i], sizeof w->sim[i]) == 0;
    return 0;
}

/* The verdicts, in enumeration order: counts, and the plans that fit or
 * were refused by memory but estimated. */
static int tally(walk *w)
{
    search_result *o = w->out;
    for (long i = 0; i < w->all.n; i++) {
        const cand *c = &w->all.c[i];
        o->enumerated++;
        if (c->kind == V_FIT) {
            o->fitted++;
            if (push(&w->fit, w->e, &c->plan, c->est, c->bytes))
                return -1;
        } else if (c->kind == V_DROPPED_ESTIMATED) {
            o->dropped[c->reason]++;
            if (push(&w->dropped, w->e, &c->plan, c->est, c->bytes))
                return -1;
        } else {
            o->dropped[c->kind]++;
        }
    }
    return 0;
}

static void walk_free(walk *w)
{
    free(w->all.c);
    free(w->fit.c);
    free(w->dropped.c);
    free(w->sim);
    free(w->sim_ok);
}

int search_train(const train_input *base, const plan_train *tmpl,
                 int simulate, int jobs, search_result *out, llm_err *e)
{
    memset(out, 0, sizeof *out);
    int gpus = base->gpus > 0 && base->gpus < base->t->ngpu ? base->gpus
                                                            : base->t->ngpu;
    walk w = {.base = base, .tmpl = tmpl, .gpus = gpus,
              .per_node = base->t->gpus_per_node, .out = out, .e = e};
    if (tmpl->global_batch <= 0) {
        return err_set(e, "a global batch is needed (--global-batch "
                          "N)");
    }
    /* enumerate; check, fit and estimate every plan on `jobs` workers */
    if (shapes(&w))
        goto fail;
    w.limit = w.all.n;
    if (par_run(jobs, next_index, evaluate_job, evaluate_done, &w, e) ||
        tally(&w))
        goto fail;
    if (w.fit.n > 0)
        qsort(w.fit.c, (size_t)w.fit.n, sizeof *w.fit.c, by_estimate);
    /* simulate the fastest estimates, also on the workers */
    int k = w.fit.n < simulate ? (int)w.fit.n : simulate;
    out->ranked = calloc((size_t)(k ? k : 1), sizeof *out->ranked);
    w.sim = calloc((size_t)(k ? k : 1), sizeof *w.sim);
    w.sim_ok = calloc((size_t)(k ? k : 1), sizeof *w.sim_ok);
    if (!out->ranked || !w.sim || !w.sim_ok) {
        err_set(e, "out of memory");
        goto fail;
    }
    w.cursor = 0;
    w.limit = k;
    if (par_run(jobs, next_index, simulate_job, simulate_done, &w, e))
        goto fail;
    /* the schedule's own peak decides too: a plan whose simulated step
     * outgrows the memory the formula gave it is no result */
    for (int i = 0; i < k; i++)
        if (w.sim_ok[i] &&
            w.sim[i].memory_peak_bytes <= base->gpu->memory_bytes) {
            search_plan *sp = &out->ranked[out->nranked++];
            sp->plan = w.fit.c[i].plan;
            sp->estimate_s = w.fit.c[i].est;
            sp->r = w.sim[i];
        }
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
    walk_free(&w);
    return 0;
fail:
    walk_free(&w);
    search_free(out);
    return -1;
}

void search_free(search_result *r)
{
    free(r->ranked);
    memset(r, 0, sizeof *r);
}

void search_plan_name(const plan_train *p, char *buf, size_t n)
{
    char extra[64] = "";
    if (p->cp > 1 || p->ep > 1)
        snprintf(extra, sizeof extra, " x cp %d x ep %d", p->cp, p->ep);
    char sched[48];
    if (p->schedule == SCHED_INTERLEAVED)
        snprintf(sched, sizeof sched, "interleaved (vpp %d)", p->vpp);
    else
        snprintf(sched, sizeof sched, "%s", plan_schedule_names[p->schedule]);
    char rc[PLAN_RECOMPUTE_TEXT];
    snprintf(buf, n, "tp %d x pp %d x dp %d%s, mb %d, ZeRO-%d, recompute "
             "%s%s%s", p->tp, p->pp, p->dp, extra, p->micro_batch, p->zero,
             plan_recompute_text(p, rc), p->pp > 1 ? ", " : "",
             p->pp > 1 ? sched : "");
}

int search_train_exp(const exp_train *x, const exp_loader *ld, int simulate,
                     int jobs, exp_env *env, search_result *out, llm_err *e)
{
    memset(out, 0, sizeof *out);
    if (!x->model[0] || !x->cluster[0])
        return err_set(e, "an experiment file or --model and --cluster are "
                          "needed (see `llmsim help search`)");
    if (x->microbatches > 0)
        return err_set(e, "parallel.microbatches depends on the plan; "
                          "give parallel.global_batch");
    if (x->plan.global_batch <= 0)
        return err_set(e, "a global batch is needed (--global-batch "
                          "N or parallel.global_batch)");
    if (exp_env_load(ld, x->model, x->cluster, x->nodes, &x->net,
                     &x->overhead, env, e))
        return -1;
    if (ld->stack(ld->ctx, x->stack, &env->stack, e)) {
        exp_env_free(env);
        return -1;
    }
    stack_ask_attention(&env->stack, x->attention_kernel);
    if (x->attention_kernel[0] && x->plan.flash_attn &&
        cost_attn_kernel_need(&env->cc, env->t->gpu, x->attention_kernel,
                              e) < 0) {
        exp_env_free(env);
        return -1;
    }
    train_input in = {.m = &env->m, .plan = &x->plan, .t = env->t,
                      .routes = env->routes,
                      .gpu = env->t->gpu, .cost = &env->cc, .coll = &env->kc,
                      .overhead = &env->ov, .gpus = x->gpus,
                      .stack = &env->stack};
    if (search_train(&in, &x->plan, simulate, jobs, out, e)) {
        exp_env_free(env);
        return -1;
    }
    return 0;
}
