#include "decide/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/par.h"
#include "base/util.h"
#include "decide/deploy.h"
#include "decide/search.h"

/* ---- a cluster's settings on an experiment ---------------------------------- */

/* x with cluster c's cluster, gpus, nodes and `set` list applied (the
 * message names the cluster and the setting). */
/* A `set` key that neither experiment of the compare file has. */
static int unknown_set(const exp_compare *f, const exp_compare_cluster *c,
                       int i, const char *key, llm_err *e)
{
    const char *keys[2 * SETTINGS_MAX];
    int n = settings_keys(EXP_TRAIN, keys, SETTINGS_MAX);
    n += settings_keys(EXP_SERVE, keys + n, SETTINGS_MAX);
    char hint[200];
    util_did_you_mean(hint, sizeof hint, key, keys, n);
    return err_set(e, "%s:%d: set: %s: unknown key%s (expected a key of the "
                      "training or the serving experiment; `llmsim help "
                      "train` and `llmsim help serve` list them)",
                   f->h.file, c->sets_line[i], key, hint);
}

/* x with cluster c's cluster, gpus and nodes applied, and those of its
 * `set` assignments whose key is one of kind k's; one whose key is the
 * other experiment's is left to it, one that is neither's is an error at
 * its line of the compare file. */
static int with_cluster(const exp_compare *f, exp_kind k, void *x,
                        exp_src *src, const exp_compare_cluster *c, llm_err *e)
{
    char a[300], why[1400];
    snprintf(a, sizeof a, "cluster=%s", c->cluster);
    int rc = settings_apply(k, x, src, a, why, sizeof why);
    if (!rc && c->gpus) {
        snprintf(a, sizeof a, "gpus=%d", c->gpus);
        rc = settings_apply(k, x, src, a, why, sizeof why);
    }
    if (!rc && c->nodes) {
        snprintf(a, sizeof a, "nodes=%d", c->nodes);
        rc = settings_apply(k, x, src, a, why, sizeof why);
    }
    if (rc)
        return err_set(e, "%s:%d: %s: %s", f->h.file, c->line, c->name, why);
    exp_kind other = k == EXP_TRAIN ? EXP_SERVE : EXP_TRAIN;
    bool other_runs = other == EXP_TRAIN ? f->training[0] : f->serving[0];
    for (int i = 0; i < c->nsets; i++) {
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(c->sets[i], "="),
                 c->sets[i]);
        if (!settings_by_key(k, key) && other_runs &&
            settings_by_key(other, key))
            continue; /* the other experiment's */
        if (!settings_by_key(k, key) && other_runs)
            return unknown_set(f, c, i, key, e);
        if (settings_apply(k, x, src, c->sets[i], why, sizeof why))
            return err_set(e, "%s:%d: set: %s", f->h.file, c->sets_line[i],
                           why);
    }
    return exp_settle(k, x, e);
}

/* ---- training ---------------------------------------------------------------- */

/* The plan searched, then simulated as `train` does it. */
static int run_training(const exp_compare *f, const exp_train *x0,
                        const exp_compare_cluster *c, bool search,
                        const exp_loader *ld, compare_outcome *o, llm_err *e)
{
    static exp_train x;
    x = *x0;
    if (with_cluster(f, EXP_TRAIN, &x, x.h.src, c, e))
        return -1;
    if (search) {
        exp_train sx = x;
        sx.microbatches = 0;
        exp_env v;
        search_result s;
        if (search_train_exp(&sx, ld, 24, par_cpus(), &v, &s, e))
            return -1;
        exp_env_free(&v);
        if (s.nranked == 0) {
            search_free(&s);
            return err_set(e, "no plan fits (%ld tried: %ld model states "
                              "exceed memory, %ld activations)",
                           s.enumerated, s.dropped[SEARCH_MODEL_STATES],
                           s.dropped[SEARCH_ACTIVATIONS]);
        }
        const plan_train *p = &s.ranked[0].plan;
        x.plan.tp = p->tp;
        x.plan.pp = p->pp;
        x.plan.dp = p->dp;
        x.plan.cp = p->cp;
        x.plan.ep = p->ep;
        x.plan.sp = p->sp;
        x.plan.micro_batch = p->micro_batch;
        x.plan.zero = p->zero;
        x.plan.vpp = p->vpp;
        x.plan.recompute = p->recompute;
        x.plan.recompute_every = p->recompute_every;
        x.plan.schedule = p->schedule;
        search_free(&s);
    }
    if (exp_train_run(&x, NULL, ld, &o->train, e))
        return -1;
    if (!exp_train_fits(&o->train)) {
        /* a plan that does not fit is no result to compare */
        const gpu_spec *g = o->train.env.t->gpu;
        err_set(e, "the plan does not fit: %.1f GiB per GPU of %.1f",
                o->train.r.memory_peak_bytes / (1024.0 * 1024 * 1024),
                g->memory_bytes / (1024.0 * 1024 * 1024));
        exp_train_out_free(&o->train);
        return -1;
    }
    o->trained = true;
    search_plan_name(&o->train.plan, o->train_plan, sizeof o->train_plan);
    return 0;
}

/* ---- serving ------------------------------------------------------------------ */

static int run_serving(const exp_compare *f, const exp_serve *x0,
                       const exp_compare_cluster *c, bool search,
                       const exp_loader *ld, compare_outcome *o, llm_err *e)
{
    static exp_serve x;
    x = *x0;
    if (with_cluster(f, EXP_SERVE, &x, x.h.src, c, e))
        return -1;
    if (search) {
        exp_env v;
        deploy_result d;
        if (deploy_search(&x, ld, c->gpus, par_cpus(), &v, &d, e))
            return -1;
        int rc = 0;
        eprof en;
        if (d.n > 0 && d.d[0].ok &&
            ld->engine(ld->ctx, x.engine, &en, e) == 0) {
            char key[BAND_KEY];
            band_serve_key(key, sizeof key, BAND_THROUGHPUT, en.name);
            band_find(&v.bands, key, &o->serve_band);
            o->serve = d.d[0].r;
            o->serve_gpus = d.d[0].gpus;
            o->served = true;
            deploy_name(&d.d[0], o->serve_plan, sizeof o->serve_plan);
            if (!o->has_gpu) {
                o->gpu = *v.t->gpu;
                o->has_gpu = true;
                snprintf(o->node, sizeof o->node, "%s", v.t->spec.name);
            }
        } else if (d.n > 0 && d.d[0].ok) {
            rc = -1; /* the engine's profile: e says why */
        } else {
            rc = err_set(e, "no deployment of %s fits %d GPUs", x.h.file,
                         d.gpus);
        }
        deploy_free(&d);
        exp_env_free(&v);
        return rc;
    }
    exp_serve_out out;
    if (exp_serve_run(&x, NULL, ld, &out, e))
        return -1;
    o->serve = out.r;
    o->serve_band = out.band[BAND_THROUGHPUT];
    for (int k = 0; k < out.in.npools; k++)
        o->serve_gpus += out.r.pool[k].gpus;
    o->served = true;
    snprintf(o->serve_plan, sizeof o->serve_plan, "as in %s", x.h.file);
    if (!o->has_gpu) {
        o->gpu = *out.env.t->gpu;
        o->has_gpu = true;
        snprintf(o->node, sizeof o->node, "%s", out.env.t->spec.name);
    }
    exp_serve_out_free(&out);
    return 0;
}

/* The comparison's economics with this cluster's node type and GPU
 * figures where the compare file leaves them (-1). */
static int cluster_econ(const exp_compare *f, const exp_loader *ld,
                        compare_outcome *o, llm_err *e)
{
    econ_params d = f->econ;
    if (ld->node_econ(ld->ctx, o->node, o->gpu.name, &d, &o->econ_src, e))
        return -1;
    o->econ = f->econ;
    double *mine[] = {&o->econ.server_usd_per_gpu, &o->econ.network_usd_per_gpu,
                      &o->econ.host_w_per_gpu, &o->econ.network_w_per_gpu,
                      &o->econ.rent_usd_per_gpu_hour};
    const double data[] = {d.server_usd_per_gpu, d.network_usd_per_gpu,
                           d.host_w_per_gpu, d.network_w_per_gpu,
                           d.rent_usd_per_gpu_hour};
    char *src[] = {o->econ_src.server, o->econ_src.network,
                   o->econ_src.host_w, o->econ_src.network_w,
                   o->econ_src.rent};
    for (int k = 0; k < 5; k++) {
        if (*mine[k] < 0)
            *mine[k] = data[k];
        else
            snprintf(src[k], ECON_SRC, "the compare file");
    }
    if (o->econ.mode == ECON_RENT && o->econ.rent_usd_per_gpu_hour <= 0)
        return err_set(e, "%s: economics.mode rent, and calib/cloud-prices.tsv "
                          "has no price for %s (expected "
                          "economics.rent_usd_per_gpu_hour = ...;)",
                       f->h.file, o->gpu.name);
    return 0;
}

static int evaluate(const exp_compare *f, const exp_loader *ld,
                    compare_outcome *o, llm_err *e)
{
    if (!o->trained && !o->served)
        return 0;
    if (o->trained) {
        o->gpu = *o->train.env.t->gpu;
        o->has_gpu = true;
        snprintf(o->node, sizeof o->node, "%s", o->train.env.t->spec.name);
    }
    if (cluster_econ(f, ld, o, e))
        return -1;
    o->gpus = o->trained ? plan_train_gpus(&o->train.plan) : o->serve_gpus;
    double price = o->has_gpu ? o->gpu.price_usd : 0;
    econ_result tmp;
    econ_eval(&o->econ, o->gpus, price, 0, 0, &tmp);
    o->purchase_usd = tmp.purchase_usd;
    if (o->trained)
        econ_eval(&o->econ, o->gpus, price, o->train.power_w_per_gpu * o->gpus,
                  o->train.r.tokens_per_s, &o->te);
    if (o->served)
        econ_eval(&o->econ, o->serve_gpus, price, o->serve.avg_power_w,
                  o->serve.throughput_tokens_per_s, &o->se);
    return 0;
}

void compare_tpd_range(const compare_outcome *o, bool train, double *lo,
                       double *hi)
{
    const band_est *b = train ? &o->train.band : &o->serve_band;
    double p = train ? o->te.tokens_per_usd : o->se.tokens_per_usd;
    *lo = *hi = p;
    if (b->have) /* a rate: the time's ratios invert */
        band_ends(b, p, true, lo, hi);
}

/* Whether cluster i has a result of the kind the verdict ranks, and its
 * range's low end, by which it ranks: the point would favour a
 * prediction only because it is optimistic. */
static bool ranked(const compare_outcome *o, bool train, double *lo)
{
    if (!(train ? o->trained : o->served))
        return false;
    double hi;
    compare_tpd_range(o, train, lo, &hi);
    return true;
}

/* The first sentence: the ratio of tokens per dollar, its 80% range (the
 * worst and best combination of the two bands), and whether the two are
 * distinguishable at all. */
static size_t ratio_text(const exp_compare *f, const compare_outcome *o,
                         int w, int r, bool train, char *buf, size_t n)
{
    double wl, wh, rl, rh;
    compare_tpd_range(&o[w], train, &wl, &wh);
    compare_tpd_range(&o[r], train, &rl, &rh);
    double pw = train ? o[w].te.tokens_per_usd : o[w].se.tokens_per_usd;
    double pr = train ? o[r].te.tokens_per_usd : o[r].se.tokens_per_usd;
    size_t len = (size_t)snprintf(buf, n, " %.2fx (%.2f-%.2fx from the two "
                                          "80%% bands) the %s tokens per "
                                          "dollar of %s",
                                  pw / pr, wl / rh, wh / rl,
                                  train ? "training" : "serving",
                                  f->c[r].name);
    if (train && len < n)
        len += (size_t)snprintf(buf + len, n - len, " (%.2fx the speed)",
                                o[w].train.r.tokens_per_s /
                                    o[r].train.r.tokens_per_s);
    if (wl / rh <= 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len,
                                " -- indistinguishable within the error "
                                "bands (%.3g-%.3g vs %.3g-%.3g tokens per "
                                "$): the difference may not be real",
                                wl, wh, rl, rh);
    return len;
}

/* The winner (by the low end of the tokens per dollar range: training's,
 * else serving's) and the datasheet ratio that explains it best. */
static void verdict(const exp_compare *f, const compare_outcome *o, char *buf,
                    size_t n)
{
    int best_t = -1, best_s = -1;
    double bt = 0, bs = 0, lo;
    for (int i = 0; i < f->n; i++) {
        if (ranked(&o[i], true, &lo) && (best_t < 0 || lo > bt))
            best_t = i, bt = lo;
        if (ranked(&o[i], false, &lo) && (best_s < 0 || lo > bs))
            best_s = i, bs = lo;
    }
    int w = best_t >= 0 ? best_t : best_s;
    bool train = best_t >= 0;
    if (w < 0) {
        snprintf(buf, n, "Verdict: no cluster ran the workload.");
        return;
    }
    /* the runner-up the verdict is against: the best low end but the
     * winner's, or any cluster that ran something */
    int r = -1;
    double rb = 0;
    for (int i = 0; i < f->n; i++) {
        if (i == w || !(o[i].trained || o[i].served))
            continue;
        bool has = ranked(&o[i], train, &lo);
        if (r < 0 || (has && (!ranked(&o[r], train, &rb) || lo > rb)))
            r = i;
    }
    size_t len = (size_t)snprintf(buf, n, "Verdict: %s", f->c[w].name);
    if (r < 0) {
        snprintf(buf + len, n - len, " is the only cluster that runs it.");
        return;
    }
    if (train && o[r].trained) {
        len += (size_t)snprintf(buf + len, n - len, " gives");
        len += ratio_text(f, o, w, r, true, buf + len, len < n ? n - len : 0);
    } else if (train) {
        len += (size_t)snprintf(buf + len, n - len, " trains; %s cannot (%s)",
                                f->c[r].name, o[r].error[0]);
    }
    if (best_s >= 0 && o[w].served && o[r].served && len < n) {
        len += (size_t)snprintf(buf + len, n - len, "%s",
                                train ? "; it gives" : " gives");
        len += ratio_text(f, o, w, r, false, buf + len, len < n ? n - len : 0);
    }
    /* what a dollar is here: the cost model, each figure under the table */
    if (len < n && f->econ.mode == ECON_RENT)
        len += (size_t)snprintf(buf + len, n - len, " (renting by the "
                                "GPU-hour at the prices listed above)");
    else if (len < n)
        len += (size_t)snprintf(buf + len, n - len, " (owning: GPUs, servers "
                                "and network over %.3g years, IT power x PUE "
                                "%.2f at $%.3g/kWh, hosting; figures listed "
                                "above)", f->econ.amortization_years,
                                f->econ.pue, f->econ.usd_per_kwh);
    if (len >= n || !o[w].has_gpu || !o[r].has_gpu)
        return;
    /* why: per-GPU datasheet ratios x GPU counts, the largest first */
    const gpu_spec *a = &o[w].gpu, *b = &o[r].gpu;
    dtype d = DT_BF16;
    const char *dn = "bf16";
    if (o[w].trained) {
        d = o[w].train.plan.precision;
        dn = dtype_name(d);
    }
    double ga = o[w].gpus, gb = o[r].gpus;
    double fl = ga * a->peak_flops[d] / (gb * b->peak_flops[d]);
    double bw = ga * a->mem_bw_Bps / (gb * b->mem_bw_Bps);
    double mem = ga * a->memory_bytes / (gb * b->memory_bytes);
    double price = o[w].purchase_usd / fmax(o[r].purchase_usd, 1);
    /* what carries it: training leans on FLOP/s, decoding on HBM */
    const char *carry = train ? (fl >= bw ? "tensor FLOP/s"
                                                : "HBM bandwidth")
                                    : (bw >= fl ? "HBM bandwidth"
                                                : "tensor FLOP/s");
    len += (size_t)snprintf(buf + len, n - len,
                            ". Biggest reason: %s has %.2fx the %s tensor "
                            "FLOP/s, %.2fx the HBM bandwidth and %.2fx the "
                            "memory of %s at %.2fx the purchase price; the "
                            "%s carry it.",
                            f->c[w].name, fl, dn, bw, mem, f->c[r].name,
                            price, carry);
    bool fp8a = gpu_has(a, GPU_CAP_FP8), fp8b = gpu_has(b, GPU_CAP_FP8);
    if (len < n && fp8a != fp8b)
        snprintf(buf + len, n - len, " Only %s has FP8 tensor cores%s.",
                 fp8a ? f->c[w].name : f->c[r].name,
                 d == DT_FP8 ? ", and this workload uses them"
                             : ", which this workload does not use (set "
                               "precision = \"fp8\" to see them)");
}

/* A mistake in an experiment is everyone's: found before anything runs,
 * with each cluster's settings applied.  What is left to fail per cluster
 * is the hardware (no plan fits), which the table shows. */
static int check_clusters(const exp_compare *f, const exp_train *train,
                          const exp_serve *serve, llm_err *e)
{
    static exp_train tx;
    static exp_serve sx;
    for (int i = 0; i < f->n; i++) {
        if (train && (tx = *train, with_cluster(f, EXP_TRAIN, &tx, tx.h.src,
                                                &f->c[i], e)))
            return -1;
        if (serve && (sx = *serve, with_cluster(f, EXP_SERVE, &sx, sx.h.src,
                                                &f->c[i], e)))
            return -1;
    }
    return 0;
}

int compare_run(const exp_compare *f, const exp_train *train,
                const exp_serve *serve, bool search, const exp_loader *ld,
                compare_result *r, llm_err *e)
{
    memset(r, 0, sizeof *r);
    r->n = f->n;
    if (check_clusters(f, train, serve, e))
        return -1;
    for (int i = 0; i < f->n; i++) {
        compare_outcome *o = &r->o[i];
        llm_err te = {{0}}, se = {{0}};
        if (train && run_training(f, train, &f->c[i], search, ld, o, &te))
            snprintf(o->error[0], sizeof o->error[0], "%s", te.msg);
        if (serve && run_serving(f, serve, &f->c[i], search, ld, o, &se))
            snprintf(o->error[1], sizeof o->error[1], "%s", se.msg);
        if (evaluate(f, ld, o, e)) {
            /* compare_free frees what ran */
            return -1;
        }
    }
    verdict(f, r->o, r->verdict, sizeof r->verdict);
    return 0;
}

void compare_free(compare_result *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->o[i].trained)
            exp_train_out_free(&r->o[i].train);
}
