#include "decide/deploy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/par.h"

/* Met when this share of requests meets both SLOs. */
#define DEPLOY_ATTAIN 0.9

void deploy_name(const deploy *d, char *buf, size_t n)
{
    if (d->pr > 0)
        snprintf(buf, n, "prefill %d x TP%d + decode %d x TP%d", d->pr, d->ptp,
                 d->dr, d->dtp);
    else
        snprintf(buf, n, "%d x TP%d%s", d->replicas, d->tp,
                 d->pp > 1 ? (d->pp == 2 ? " PP2" : d->pp == 4 ? " PP4" : " PP8")
                           : "");
}

/* The load knob: a trace's rate scale, or the synthetic arrival rate,
 * written with 6 significant digits as a --set would carry it. */
static void set_load(exp_serve *x, const exp_serve *base, double scale)
{
    double *knob = base->trace[0] ? &x->rate_scale : &x->rate;
    double v = (base->trace[0] ? base->rate_scale : base->rate) * scale;
    char text[64];
    snprintf(text, sizeof text, "%.6g", v);
    *knob = strtod(text, NULL);
}

void deploy_apply(const exp_serve *x, const deploy *d, int gpus, double scale,
                  exp_serve *out)
{
    *out = *x;
    out->gpus = gpus;
    set_load(out, x, scale);
    if (d->pr > 0) {
        out->prefill_replicas = d->pr;
        out->decode_replicas = d->dr;
        out->prefill_tp = d->ptp;
        out->decode_tp = d->dtp;
        out->prefill_pp = out->decode_pp = 1;
    } else {
        out->tp = d->tp;
        out->pp = d->pp;
        out->replicas = d->replicas;
        out->prefill_replicas = out->decode_replicas = 0;
    }
}

typedef struct probe_ctx {
    const exp_serve *x;
    const exp_loader *ld;
    int gpus;
    deploy *d;
    int n, next;
} probe_ctx;

/* One simulation of d at `scale` x the load; 1 when it meets the SLOs
 * (then *r holds it), 0 when not, -1 on error. */
static int probe(const probe_ctx *c, const deploy *d, double scale,
                 serve_result *r, int *gpus, llm_err *e)
{
    static exp_serve x;
    deploy_apply(c->x, d, c->gpus, scale, &x);
    exp_serve_out out;
    if (exp_serve_run(&x, NULL, c->ld, &out, e))
        return -1;
    int met = out.r.slo_attainment >= DEPLOY_ATTAIN;
    if (met) {
        *r = out.r;
        *gpus = 0;
        for (int k = 0; k < out.in.npools; k++)
            *gpus += out.r.pool[k].gpus;
    }
    exp_serve_out_free(&out);
    return met;
}

/* DistServe's goodput: double or halve the load from the experiment's,
 * then bisect. */
static void run_deploy(const probe_ctx *c, deploy *d)
{
    llm_err e = {{0}};
    double lo = 0, hi = 0;
    serve_result r;
    int gpus = 0;
#define PROBE(scale)                                                          \
    do {                                                                      \
        double sc_ = (scale);                                                 \
        int m_ = probe(c, d, sc_, &r, &gpus, &e);                             \
        if (m_ < 0)                                                           \
            goto failed;                                                      \
        if (m_) {                                                             \
            lo = sc_;                                                         \
            d->r = r;                                                         \
            d->gpus = gpus;                                                   \
            d->ok = true;                                                     \
        } else {                                                              \
            hi = sc_;                                                         \
        }                                                                     \
    } while (0)
    PROBE(1.0);
    for (int i = 0; i < 6 && hi == 0; i++)
        PROBE(lo * 2);
    for (int i = 0; i < 6 && lo == 0; i++)
        PROBE(hi / 2);
    for (int i = 0; i < 4 && lo > 0 && hi > 0; i++)
        PROBE((lo + hi) / 2);
#undef PROBE
    if (!d->ok)
        snprintf(d->error, sizeof d->error, "meets the SLOs at no load tried");
    d->load_scale = lo;
    return;
failed:
    snprintf(d->error, sizeof d->error, "%s", e.msg);
    d->ok = false;
}

static long next_deploy(void *ctx)
{
    probe_ctx *c = ctx;
    return c->next < c->n ? c->next++ : -1;
}

/* Each deployment comes back from its worker as the whole struct. */
static char *deploy_job(long i, void *ctx)
{
    probe_ctx *c = ctx;
    run_deploy(c, &c->d[i]);
    return par_hex_encode('+', &c->d[i], sizeof c->d[i]);
}

static int deploy_done(long i, const char *text, void *ctx)
{
    probe_ctx *c = ctx;
    return par_hex_decode(text, '+', &c->d[i], sizeof c->d[i]);
}

static int candidates(const exp_env *v, int gpus, deploy_result *out,
                      llm_err *e)
{
    int cap = 256, n = 0;
    deploy *d = calloc((size_t)cap, sizeof *d);
    if (!d)
        return err_set(e, "out of memory");
    int per = v->t->gpus_per_node;
    for (int tp = 1; tp <= per && tp <= gpus; tp *= 2) {
        if (v->m.heads % tp)
            continue;
        for (int pp = 1; pp <= 8 && tp * pp <= gpus; pp *= 2)
            if (v->m.layers % pp == 0 && n < cap)
                d[n++] = (deploy){.tp = tp, .pp = pp,
                                  .replicas = gpus / (tp * pp)};
        for (int dtp = 1; dtp <= per && dtp < gpus; dtp *= 2) {
            if (v->m.heads % dtp)
                continue;
            for (int pr = 1; pr * tp < gpus; pr++) {
                int left = gpus - pr * tp;
                if (left % dtp == 0 && n < cap)
                    d[n++] = (deploy){.ptp = tp, .pr = pr, .dtp = dtp,
                                      .dr = left / dtp};
            }
        }
    }
    out->d = d;
    out->n = n;
    return 0;
}

static int by_goodput(const void *pa, const void *pb)
{
    const deploy *a = pa, *b = pb;
    if (!a->ok || !b->ok)
        return (!a->ok) - (!b->ok);
    double ga = a->r.goodput_requests_per_s, gb = b->r.goodput_requests_per_s;
    if (ga != gb)
        return ga > gb ? -1 : 1;
    double ta = a->r.throughput_tokens_per_s, tb = b->r.throughput_tokens_per_s;
    return ta > tb ? -1 : ta < tb;
}

int deploy_search(const exp_serve *x, const exp_loader *ld, int gpus_opt,
                  int jobs, exp_env *env, deploy_result *out, llm_err *e)
{
    memset(out, 0, sizeof *out);
    if (exp_env_load(ld, x->model, x->cluster, x->nodes, &x->net,
                     &x->overhead, env, e))
        return -1;
    int gpus = gpus_opt ? gpus_opt : x->gpus ? x->gpus : env->t->ngpu;
    if (gpus > env->t->ngpu) {
        err_set(e, "--gpus %d: %s has %d", gpus, env->t->name, env->t->ngpu);
        goto fail;
    }
    if (!x->trace[0] && x->rate <= 0) {
        err_set(e, "%s: search needs a load to scale (workload.rate or a "
                   "trace)", x->h.file[0] ? x->h.file : "the experiment");
        goto fail;
    }
    if (candidates(env, gpus, out, e))
        goto fail;
    probe_ctx c = {x, ld, gpus, out->d, out->n, 0};
    if (par_run(jobs, next_deploy, deploy_job, deploy_done, &c, e))
        goto fail;
    qsort(out->d, (size_t)out->n, sizeof *out->d, by_goodput);
    out->gpus = gpus;
    for (int i = 0; i < out->n; i++)
        out->ok += out->d[i].ok;
    return 0;
fail:
    deploy_free(out);
    exp_env_free(env);
    return -1;
}

void deploy_free(deploy_result *r)
{
    free(r->d);
    memset(r, 0, sizeof *r);
}
