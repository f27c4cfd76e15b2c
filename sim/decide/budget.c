/* budget — up-front estimates of a run's cost to the simulator.
 *
 * Every constant below was measured with ./llmsim on the reference machine
 * (one core of a 2026 x86-64 server; `make bench` prints the rates): they
 * set the scale of the estimate, which only has to tell a minute from a
 * day. */
#include "decide/budget.h"
#include "mem/mem.h"

#include <math.h>
#include <stdio.h>

/* Engine events per (stage, virtual chunk, microbatch, direction) of the
 * pipeline schedule: the op, its input's flow and its completion.  GPT-3
 * 175B on PP 8 with 96 microbatches ran 5,776 events; 4 x 8 x 96 x 2 =
 * 6,144. */
#define STEP_EVENTS_PER_CHUNK 4.0
/* A collective over g ranks of b bytes: ~32 events per rank for the ring's
 * steps, plus one per rank per pipelined chunk of a tree (~128 KiB):
 * all-reduce of 1.69 GB over 512 DGX H100 rails ran 6.57 M events, the
 * formula gives 6.60 M. */
#define COLL_EVENTS_PER_RANK 32.0
#define COLL_CHUNK_BYTES 131072.0
/* Wall time per network event grows with the flows each rate update
 * touches: 0.64 us at 512 flows (4.2 s for the 512-node step above),
 * 0.90 us at 1,024 (12 s): sqrt(flows / 512) x 0.65 us. */
#define NET_EVENT_S_AT_512 0.65e-6
#define STEP_EVENT_S 0.5e-6
/* Topology: 300 MB for 16,384 DGX H100 nodes of 27 devices and 33 links
 * (`llmsim topo dgx-h100 --nodes 16384`, peak RSS). */
#define TOPO_BYTES_PER_ELEMENT 310.0
/* Serving, since the inter-token gaps are kept as runs (serve/runs.h):
 * 10^6 synthetic requests of 100 + 100 tokens on one H100 take 5.3 s,
 * 4.4 events and 195 bytes of peak memory per request; the same spread
 * over 8 H100 (each lightly loaded, small iterations) 23 s, 27.7 events
 * and 148 bytes; 300,000 of 256 + 256 on 8 H100 overloaded 1.8 s, 2.9
 * events and 175 bytes; the Azure conversation trace on 8 H100 (TP 8)
 * 21 us and 11.8 events a request.  The time and memory constants are
 * within 2.3x of each; the events, set by the load, span 10x and the
 * constant sits in the middle (an estimate for refusing, not a
 * prediction). */
#define SERVE_EVENTS_PER_REQUEST 9.0
#define SERVE_S_PER_REQUEST 12e-6
#define SERVE_BYTES_PER_REQUEST 200.0

void budget_topology(double nodes, int ndev, int nlink, budget_est *b)
{
    b->bytes += nodes * (ndev + nlink) * TOPO_BYTES_PER_ELEMENT;
}

/* Adds `count` distinct collectives over g ranks of `bytes` each, run by
 * `groups` groups at once. */
static void add_coll(budget_est *b, double g, double bytes, double count,
                     double groups)
{
    if (g < 2 || bytes <= 0)
        return;
    double flows = g * groups;
    double ev = count * groups * g *
                (COLL_EVENTS_PER_RANK + bytes / COLL_CHUNK_BYTES);
    b->net_events += ev;
    if (flows > b->max_flows)
        b->max_flows = flows;
    b->seconds += ev * NET_EVENT_S_AT_512 * sqrt(fmax(flows, 1) / 512.0);
}

void budget_train(const model_spec *m, const plan_train *p, bool full,
                  budget_est *b)
{
    double tp = p->tp, pp = p->pp, dp = p->dp, cp = p->cp, ep = p->ep;
    double vpp = p->schedule == SCHED_INTERLEAVED && p->vpp > 1 ? p->vpp : 1;
    double per_step = (double)p->micro_batch * dp;
    double mb = p->global_batch > 0 && per_step > 0
                    ? ceil(p->global_batch / per_step) : pp;
    b->gpus = tp * pp * dp * cp;
    double steps = STEP_EVENTS_PER_CHUNK * pp * vpp * mb * 2;
    if (p->recompute != RECOMPUTE_NONE)
        steps *= 1.5;
    b->step_events += steps;
    b->seconds += steps * STEP_EVENT_S;
    /* gradients (reduce-scatter and all-gather, or all-reduce in buckets)
     * over data parallelism, activations over TP, CP and EP */
    double grads = model_params_total(m) / (tp * pp) *
                   mem_grad_bytes_per_param(p);
    double act = (double)p->micro_batch * p->seq_len / cp * m->hidden * 2;
    add_coll(b, dp, grads, 1, full ? tp * cp : 1);
    add_coll(b, tp, act, 2, 1);
    add_coll(b, cp, act, 2, 1);
    add_coll(b, ep, act, 2, 1);
}

void budget_serve(double requests, budget_est *b)
{
    b->requests += requests;
    b->step_events += requests * SERVE_EVENTS_PER_REQUEST;
    b->seconds += requests * SERVE_S_PER_REQUEST;
    b->bytes += requests * SERVE_BYTES_PER_REQUEST;
}

static void human_time(double s, char *buf, size_t len)
{
    if (s < 120)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.0f min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, len, "%.1f h", s / 3600);
    else
        snprintf(buf, len, "%.0f days", s / 86400);
}

int budget_check(const budget_est *b, const char *what, bool force,
                 llm_err *e)
{
    if (force || (b->seconds <= BUDGET_MAX_SECONDS &&
                  b->bytes <= BUDGET_MAX_BYTES))
        return 0;
    char t[32], work[256];
    human_time(b->seconds, t, sizeof t);
    if (b->requests > 0)
        snprintf(work, sizeof work, "%.3g requests on %.0f GPUs (about "
                 "%.2g events)", b->requests, b->gpus, b->step_events);
    else
        snprintf(work, sizeof work, "%.0f GPUs (about %.2g schedule events "
                 "and %.2g network events over up to %.0f flows)", b->gpus,
                 b->step_events, b->net_events, b->max_flows);
    return err_set(e,
                   "%s: refusing to simulate %s: estimated %s and %.1f GiB "
                   "of simulator memory (limits: %.0f min, %.0f GiB); pass "
                   "--force to run it anyway, or simulate fewer GPUs, "
                   "microbatches or requests",
                   what, work, t, b->bytes / (1 << 30),
                   BUDGET_MAX_SECONDS / 60, BUDGET_MAX_BYTES / (1 << 30));
}
