#include "report/rsearch.h"

#include <math.h>
#include <string.h>

#include "base/util.h"
#include "report/rjson.h"

/* The two largest differences, in seconds per step, between a and b. */
static void why_train(const search_plan *a, const search_plan *b, char *buf,
                      size_t n)
{
    const train_result *x = &a->r, *y = &b->r;
    const char *name[5] = {"compute", "TP/CP/EP communication",
                           "pipeline bubble", "exposed pipeline transfers",
                           "exposed data-parallel communication"};
    double va[5], vb[5];
    const train_result *rs[2] = {x, y};
    for (int i = 0; i < 2; i++) {
        const train_result *r = rs[i];
        double *v = i ? vb : va;
        /* the compute stream's busy time: the pipeline's span less its
         * bubble (bubble_fraction = (span - busy) / busy) */
        double span = r->step_s - r->exposed_comm_s[COMM_DP];
        double busy = span / (1 + r->bubble_fraction);
        double comm = r->exposed_comm_s[COMM_TP] + r->exposed_comm_s[COMM_CP] +
                      r->exposed_comm_s[COMM_EP];
        v[0] = busy - comm - r->exposed_comm_s[COMM_PP];
        v[1] = comm;
        v[2] = span - busy;
        v[3] = r->exposed_comm_s[COMM_PP];
        v[4] = r->exposed_comm_s[COMM_DP];
    }
    size_t len = 0;
    bool used[5] = {false};
    for (int i = 0; i < 2; i++) {
        int k = -1;
        for (int j = 0; j < 5; j++)
            if (!used[j] && (k < 0 || fabs(va[j] - vb[j]) > fabs(va[k] - vb[k])))
                k = j;
        if (fabs(va[k] - vb[k]) < 1e-3 * x->step_s && i > 0)
            break;
        used[k] = true;
        len += (size_t)snprintf(buf + len, n - len, "%s%s %.3f s vs %.3f s",
                                i ? "; " : "", name[k], va[k], vb[k]);
        if (len >= n)
            return;
    }
}

/* The runner-up of another shape (TP, PP, CP, EP), else the runner-up. */
static const search_plan *rival(const search_result *s)
{
    const plan_train *w = &s->ranked[0].plan;
    for (int i = 1; i < s->nranked; i++) {
        const plan_train *p = &s->ranked[i].plan;
        if (p->tp != w->tp || p->pp != w->pp || p->cp != w->cp ||
            p->ep != w->ep)
            return &s->ranked[i];
    }
    return s->nranked > 1 ? &s->ranked[1] : NULL;
}

/* A ranked plan's step-time band: its family (band_train_key) in v's
 * error model. */
static void plan_band(const exp_env *v, const search_plan *p, band_est *b)
{
    char key[BAND_KEY];
    band_train_key(key, sizeof key, v->t->gpu->architecture, v->stack.name,
                   &p->plan);
    band_find(&v->bands, key, b);
}

/* The top of the winner's step-time band; -inf when it has none. */
static double winner_top(const exp_env *v, const search_result *s)
{
    band_est b;
    plan_band(v, &s->ranked[0], &b);
    double lo, hi = -INFINITY;
    if (b.have)
        band_ends(&b, s->ranked[0].r.step_s, false, &lo, &hi);
    return hi;
}

/* Whether plan i (band b) reaches below the winner's top: it may be as
 * fast as the winner, the difference within the error bands. */
static bool near_winner(int i, const band_est *b, double step_s,
                        double win_top)
{
    double lo, hi;
    if (i == 0 || !b->have)
        return false;
    band_ends(b, step_s, false, &lo, &hi);
    return lo <= win_top;
}

void rsearch_train_text(FILE *fp, const exp_train *x, const exp_env *v,
                        const search_result *s, int top, const char *why)
{
    fprintf(fp, "Plan search: %s on %s (%d x %s), global batch %d x %d tokens, "
           "%s, %s\n",
           v->m.display, v->t->name, v->t->ngpu, v->t->gpu->name,
           x->plan.global_batch, x->plan.seq_len,
           dtype_name(x->plan.precision),
           plan_optimizer_names[x->plan.optimizer]);
    fprintf(fp, "  %ld plans enumerated: %ld fit in %.0f GiB", s->enumerated,
           s->fitted, v->t->gpu->memory_bytes / GiB);
    for (int k = 0; k < SEARCH_REASONS; k++)
        if (s->dropped[k])
            fprintf(fp, ", %ld %s", s->dropped[k], search_reason_names[k]);
    fprintf(fp, "\n  estimated %ld; simulated the best %d by estimate\n\n",
           s->fitted, s->nranked);
    if (s->nranked == 0) {
        fprintf(fp, "  no plan fits: see `llmsim memory --train` for what would\n");
        return;
    }
    fprintf(fp, "  %-4s %-76s %9s %10s %6s %8s %9s  %s\n", "rank", "plan",
           "step s", "tokens/s", "MFU", "mem GiB", "estimate", "80% band (s)");
    int close = 0;
    double win_top = winner_top(v, s);
    for (int i = 0; i < s->nranked && i < top; i++) {
        const search_plan *p = &s->ranked[i];
        char name[160], band[64] = "no band";
        search_plan_name(&p->plan, name, sizeof name);
        band_est b;
        plan_band(v, p, &b);
        bool within = near_winner(i, &b, p->r.step_s, win_top);
        close += within;
        if (b.have) {
            double lo, hi;
            band_ends(&b, p->r.step_s, false, &lo, &hi);
            snprintf(band, sizeof band, "%.3g-%.3g%s", lo, hi,
                     within ? " ~" : "");
        }
        fprintf(fp, "  %-4d %-76s %9.3f %10.0f %5.1f%% %8.1f %8.3fs  %s\n",
               i + 1, name, p->r.step_s, p->r.tokens_per_s, 100 * p->r.mfu,
               p->r.memory_peak_bytes / GiB, p->estimate_s, band);
    }
    if (close)
        fprintf(fp, "\n  ~ %d of the plans shown overlap the winner's 80%% error "
                    "band: their difference from it may not be real\n", close);
    fprintf(fp, "\n%s\n", why);
}

void rsearch_train_why(const search_result *s, const exp_env *v, char *buf,
                       size_t n)
{
    buf[0] = '\0';
    if (s->nranked == 0)
        return;
    const search_plan *w = &s->ranked[0];
    char a[160], b[160], d[300] = "";
    search_plan_name(&w->plan, a, sizeof a);
    size_t len = (size_t)snprintf(buf, n, "Why: %s ", a);
    const search_plan *r = rival(s);
    if (r) {
        search_plan_name(&r->plan, b, sizeof b);
        why_train(w, r, d, sizeof d);
        len += (size_t)snprintf(buf + len, n - len,
                                "is %.1f%% faster than the best plan of "
                                "another shape (%s): %s.",
                                100 * (r->r.step_s / w->r.step_s - 1), b, d);
    } else {
        len += (size_t)snprintf(buf + len, n - len, "is the only plan that "
                                "fits.");
    }
    if (len < n && s->have_dropped) {
        search_plan_name(&s->fastest_dropped, b, sizeof b);
        snprintf(buf + len, n - len,
                 " Memory holds it back: %s would take an estimated %.3f s "
                 "(%.1f%% faster) but needs %.1f GiB per GPU of the %.0f.",
                 b, s->fastest_dropped_s,
                 100 * (w->estimate_s / s->fastest_dropped_s - 1),
                 s->fastest_dropped_bytes / GiB,
                 v->t->gpu->memory_bytes / GiB);
    }
}

json_t *rsearch_train_json(const exp_env *v, const search_result *s, int top,
                           const char *why)
{
    json_t *j = json_object();
    json_object_set_new(j, "enumerated", json_integer(s->enumerated));
    json_object_set_new(j, "fitted", json_integer(s->fitted));
    json_t *d = json_object();
    for (int k = 0; k < SEARCH_REASONS; k++)
        json_object_set_new(d, search_reason_names[k],
                            json_integer(s->dropped[k]));
    json_object_set_new(j, "dropped", d);
    json_t *a = json_array();
    double win_top = s->nranked ? winner_top(v, s) : -INFINITY;
    for (int i = 0; i < s->nranked && i < top; i++) {
        const search_plan *p = &s->ranked[i];
        json_t *o = json_object();
        json_object_set_new(o, "rank", json_integer(i + 1));
        json_object_set_new(o, "plan", rjson_plan(&p->plan, NULL));
        json_object_set_new(o, "step_time_s", json_real(p->r.step_s));
        json_object_set_new(o, "tokens_per_s", json_real(p->r.tokens_per_s));
        json_object_set_new(o, "mfu", json_real(p->r.mfu));
        json_object_set_new(o, "memory_peak_bytes",
                            rjson_bytes(p->r.memory_peak_bytes));
        json_object_set_new(o, "estimate_s", json_real(p->estimate_s));
        band_est b;
        plan_band(v, p, &b);
        rjson_band_ends(o, &b, "step_time_s", p->r.step_s, false);
        json_object_set_new(o, "within_winner_band",
                            json_boolean(near_winner(i, &b, p->r.step_s,
                                                     win_top)));
        json_array_append_new(a, o);
    }
    json_object_set_new(j, "plans", a);
    json_object_set_new(j, "why", json_string(why));
    return j;
}

/* ---- serving ------------------------------------------------------------ */

static void why_serve(const deploy_result *s, char *why, size_t n)
{
    const deploy *d = s->d;
    char a[96], b[96];
    why[0] = '\0';
    if (s->ok == 0)
        return;
    deploy_name(&d[0], a, sizeof a);
    if (s->ok == 1) {
        snprintf(why, n, "Why: %s is the only deployment that fits.", a);
        return;
    }
    deploy_name(&d[1], b, sizeof b);
    snprintf(why, n,
             "Why: %s serves %.2f requests/s within the SLOs (%.0f%% "
             "attainment) against %.2f for %s; p90 TTFT %.0f vs %.0f ms, p90 "
             "TPOT %.1f vs %.1f ms.",
             a, d[0].r.goodput_requests_per_s, 100 * d[0].r.slo_attainment,
             d[1].r.goodput_requests_per_s, b, 1e3 * d[0].r.ttft.p90,
             1e3 * d[1].r.ttft.p90, 1e3 * d[0].r.tpot.p90,
             1e3 * d[1].r.tpot.p90);
}

void rsearch_serve_text(FILE *fp, const exp_env *v, const deploy_result *s,
                        int top)
{
    char why[600], a[96];
    why_serve(s, why, sizeof why);
    fprintf(fp, "Serving search: %s on %d x %s (%s), %d deployments "
                "simulated, %d fit\n\n",
            v->m.display, s->gpus, v->t->gpu->name, v->t->name, s->n, s->ok);
    fprintf(fp, "  %-4s %-34s %10s %11s %10s %10s %8s\n", "rank", "deployment",
            "goodput/s", "tokens/s", "p90 TTFT", "p90 TPOT", "SLO met");
    for (int i = 0; i < s->n && i < top && s->d[i].ok; i++) {
        const serve_result *r = &s->d[i].r;
        deploy_name(&s->d[i], a, sizeof a);
        fprintf(fp, "  %-4d %-34s %10.2f %11.0f %8.0fms %8.1fms %7.0f%%\n",
                i + 1, a, r->goodput_requests_per_s, r->throughput_tokens_per_s,
                1e3 * r->ttft.p90, 1e3 * r->tpot.p90, 100 * r->slo_attainment);
    }
    fprintf(fp, "\n%s\n", s->ok ? why : "No deployment fits these GPUs.");
}

json_t *rsearch_serve_json(const deploy_result *s, int top)
{
    char why[600], a[96];
    why_serve(s, why, sizeof why);
    json_t *arr = json_array();
    for (int i = 0; i < s->n && i < top && s->d[i].ok; i++) {
        const serve_result *r = &s->d[i].r;
        deploy_name(&s->d[i], a, sizeof a);
        json_t *c = json_object();
        json_object_set_new(c, "rank", json_integer(i + 1));
        json_object_set_new(c, "deployment", json_string(a));
        json_object_set_new(c, "goodput_requests_per_s",
                            json_real(r->goodput_requests_per_s));
        json_object_set_new(c, "throughput_tokens_per_s",
                            json_real(r->throughput_tokens_per_s));
        json_object_set_new(c, "ttft_p90_s", json_real(r->ttft.p90));
        json_object_set_new(c, "tpot_p90_s", json_real(r->tpot.p90));
        json_object_set_new(c, "slo_attainment", json_real(r->slo_attainment));
        json_array_append_new(arr, c);
    }
    json_t *j = json_object();
    json_object_set_new(j, "candidates", arr);
    json_object_set_new(j, "why", json_string(why));
    return j;
}
