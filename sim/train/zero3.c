#include "train/zero3.h"

/* One replay of the coordinator over `copies` layers in a row. */
typedef struct z3_state {
    double t;     /* compute stream clock */
    double cs;    /* gather stream clock */
    double live;  /* elements gathered or in flight, not yet released */
    int q;        /* next entry of the trace not yet popped */
} z3_state;

/* One coalesced all-gather issued at the compute clock: it starts when
 * the stream is free and every module in [a, b) is ready at its end. */
static int issue(z3_state *s, const z3_module *m, int n, int a, int b,
                 double params, z3_gather_fn gather, void *ctx,
                 double *ready, double *share)
{
    double g = gather(ctx, params);
    if (g < 0)
        return -1;
    s->cs = (s->cs > s->t ? s->cs : s->t) + g;
    s->live += params;
    for (int j = a; j < b; j++)
        if (m[j % n].params > 0 && ready[j] < 0) {
            ready[j] = s->cs;
            share[j] = g * m[j % n].params / params;
        }
    return 0;
}

/* After a module's own parameters are there: pop the trace until the
 * prefetch has asked for its budget (the first entry is always taken
 * while the budget is positive, as fetch_sub_module does). */
static int prefetch(z3_state *s, const z3_module *m, int n, int total,
                    z3_rule rule, z3_gather_fn gather, void *ctx,
                    double *ready, double *share)
{
    double budget = rule.max_live_params - s->live;
    if (rule.prefetch_params < budget)
        budget = rule.prefetch_params;
    double sum = 0;
    int a = s->q;
    while (s->q < total && sum < budget) {
        if (ready[s->q] < 0)
            sum += m[s->q % n].params;
        s->q++;
    }
    return sum > 0 ? issue(s, m, n, a, s->q, sum, gather, ctx, ready, share)
                   : 0;
}

int z3_pass(const z3_module *m, int n, z3_rule rule, z3_gather_fn gather,
            void *ctx, z3_result *out)
{
    enum { COPIES = 3 };
    const int total = COPIES * n;
    /* when each module's gather is ready, and its share of the stream
     * time of the gather that brought it (coalesced gathers split by
     * elements) */
    double ready[COPIES * Z3_MAX_MODULES], share[COPIES * Z3_MAX_MODULES];
    for (int i = 0; i < total; i++)
        ready[i] = -1, share[i] = 0;
    z3_state s = {0};
    double t_mid = 0;
    for (int i = 0; i < total && i < 2 * n; i++) {
        if (i == n)
            t_mid = s.t;
        const z3_module *u = &m[i % n];
        if (u->params > 0 && ready[i] < 0 &&
            issue(&s, m, n, i, i + 1, u->params, gather, ctx, ready, share))
            return -1;
        if (s.q <= i)
            s.q = i + 1;
        if (u->params > 0 && ready[i] > s.t)
            s.t = ready[i];
        if (prefetch(&s, m, n, total, rule, gather, ctx, ready, share))
            return -1;
        s.t += u->compute_s;
        s.live -= u->params;
    }
    /* the middle layer: its own time beyond its compute, and never less
     * than its gathers' stream time beyond it (a long pass settles there
     * when the gathers are the bottleneck) */
    double compute = 0, busy = 0;
    for (int i = 0; i < n; i++) {
        compute += m[i].compute_s;
        busy += share[n + i];
    }
    double e = s.t - t_mid - compute;
    if (busy - compute > e)
        e = busy - compute;
    out->exposed_s = e > 0 ? e : 0;
    out->gather_s = busy;
    return 0;
}
