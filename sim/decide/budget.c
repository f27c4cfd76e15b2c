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
/* Wall time per network event grows with the flows each rate update
 * touches: 0.075 us at 128 flows in flight, 0.2 us at 8,192, 0.5 us at
 * 65,536 (ring and tree all-reduce and reduce-scatter of 1 MB and 1 GB
 * on 16-2,048 DGX A100 GPUs): 0.075 us x (flows / 128)^0.3; beyond
 * that it stops growing (0.5 us at 1.3 million, tree all-reduces of 8 B
 * to 4 GiB on 64 GB200 NVL72 racks, 2 x 10^8 events in 103 s).  Each
 * simulation also sets up its phases and takes the pooled network:
 * 10 us, and 2 us per 1,000 links of the topology (an 8-GPU all-reduce,
 * every candidate, on 16-8,192 DGX A100 nodes). */
#define NET_EVENT_S_AT_128 0.075e-6
#define NET_EVENT_FLOW_EXP 0.3
#define NET_EVENT_FLOWS_MAX 65536.0
#define SIM_S 10e-6
#define SIM_S_PER_LINK 2e-9
#define STEP_EVENT_S 0.5e-6
/* Topology: 300 MB for 16,384 DGX H100 nodes of 27 devices and 33 links
 * (`llmsim topo dgx-h100 --nodes 16384`, peak RSS); built in 0.1 s for
 * 8,192 DGX A100 nodes of 23 devices and 74 links. */
#define TOPO_BYTES_PER_ELEMENT 310.0
#define TOPO_S_PER_ELEMENT 1.2e-7
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
    b->seconds += nodes * (ndev + nlink) * TOPO_S_PER_ELEMENT;
}

void budget_coll(budget_est *b, coll_sim_cost k, double count, double links)
{
    if (count <= 0 || k.sims <= 0)
        return;
    b->net_events += count * k.events;
    if (k.max_flows > b->max_flows)
        b->max_flows = k.max_flows;
    double flows = fmin(fmax(k.max_flows, 128), NET_EVENT_FLOWS_MAX);
    double per_event = NET_EVENT_S_AT_128 *
                       pow(flows / 128, NET_EVENT_FLOW_EXP);
    double per_sim = SIM_S + SIM_S_PER_LINK * links;
    b->seconds += count * (k.events * per_event + k.sims * per_sim);
}

/* A group of n ranks, every `stride`-th GPU (plan_gpu_rank's order: TP,
 * CP, DP, PP), as coll_shape sees it. */
static coll_shape group_shape(const budget_cluster *cl, double n,
                              double stride)
{
    double g = cl->gpus_per_node > 0 ? cl->gpus_per_node : 1;
    double nodes = stride >= g ? n : ceil(n * stride / g);
    return (coll_shape){(int)n, (int)fmax(nodes, 1), cl->nics, cl->nvlink,
                        cl->nvls, cl->sharp};
}

/* What NCCL's tuner usually keeps, whose every-step simulation the link
 * load and --full run: a ring, or direct for all-to-all and send/recv. */
static coll_algo usual_algo(coll_op op)
{
    return op == COLL_ALL_TO_ALL || op == COLL_SEND_RECV ? ALGO_DIRECT
                                                         : ALGO_RING;
}

/* How train runs a kind of collective. */
typedef struct coll_use {
    double groups; /* groups of the kind (with --full, all on the network) */
    bool full;     /* --full */
    bool dp;       /* data-parallel: --full runs each choice's groups
                      together as well */
    bool links;    /* the step's link load runs it once more */
} coll_use;

/* `distinct` collectives of op on groups of shape s, `bytes` each: each
 * chosen once among every candidate (coll_time_alone, fast); the link
 * load's run of the chosen one, alone (fast) or with every group at once
 * (--full, every step); --full's data-parallel groups together. */
static void add_coll(budget_est *b, const budget_cluster *cl, coll_op op,
                     coll_shape s, double bytes, double distinct,
                     coll_use u)
{
    if (s.n < 2 || bytes <= 0 || distinct <= 0)
        return;
    const coll_calib *k = cl->coll;
    budget_coll(b, coll_sim_estimate(k, op, ALGO_AUTO, PROTO_AUTO, &s, bytes,
                                     true), distinct, cl->links);
    bool together = u.full && u.groups > 1;
    coll_sim_cost one = coll_sim_estimate(k, op, usual_algo(op),
                                          PROTO_SIMPLE, &s, bytes, !together);
    double runs = u.full ? u.groups : 1;
    one.events *= runs;
    one.max_flows *= runs;
    if (u.links)
        budget_coll(b, one, 1, cl->links);
    if (u.full && u.dp)
        budget_coll(b, one, distinct, cl->links);
}

void budget_train(const model_spec *m, const plan_train *p, bool full,
                  const budget_cluster *cl, budget_est *b)
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
    /* activations over TP, CP and EP: one size each */
    double act = (double)p->micro_batch * p->seq_len / cp * m->hidden * 2;
    coll_shape tps = group_shape(cl, tp, 1), cps = group_shape(cl, cp, tp);
    coll_shape dps = group_shape(cl, dp, tp * cp);
    coll_shape eps = group_shape(cl, ep, tp * cp);
    coll_use on_tp = {dp * cp, full, false, true};
    if (p->sp) {
        add_coll(b, cl, COLL_REDUCE_SCATTER, tps, act, 1, on_tp);
        add_coll(b, cl, COLL_ALL_GATHER, tps, act, 1, on_tp);
    } else {
        add_coll(b, cl, COLL_ALL_REDUCE, tps, act, 1, on_tp);
    }
    add_coll(b, cl, COLL_SEND_RECV, cps, act, 1,
             (coll_use){tp * dp, full, false, true});
    if (m->moe_experts > 0)
        add_coll(b, cl, COLL_ALL_TO_ALL, eps, act * m->moe_active, 1,
                 (coll_use){tp * cp, full, false, true});
    /* gradients and parameters over data parallelism: the stage's whole
     * reduction for the link load (a size of its own); then in buckets
     * (one size, and the last one, which differs between the first stage
     * and the others), or ZeRO-3's per layer (a dense and a MoE layer) */
    double grads = model_params_total(m) / (tp * pp) *
                   mem_grad_bytes_per_param(p);
    coll_op red = p->zero == 0 ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER;
    coll_use whole = {tp * cp, full, true, true};
    coll_use parts = {tp * cp, full, true, false};
    for (int op = 0; op < (p->zero >= 1 ? 2 : 1); op++) {
        coll_op o = op ? COLL_ALL_GATHER : red;
        add_coll(b, cl, o, dps, grads, 1, whole);
        if (p->zero >= 3)
            add_coll(b, cl, o, dps, grads / m->layers,
                     m->moe_experts > 0 ? 2 : 1, parts);
        else if (p->bucket_bytes > 0 && grads > p->bucket_bytes)
            add_coll(b, cl, o, dps, p->bucket_bytes, 1 + (pp > 1), parts);
        else
            add_coll(b, cl, o, dps, grads, pp > 1 ? 2 : 1, parts);
    }
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
    else if (b->step_events > 0)
        snprintf(work, sizeof work, "%.0f GPUs (about %.2g schedule events "
                 "and %.2g network events over up to %.0f flows)", b->gpus,
                 b->step_events, b->net_events, b->max_flows);
    else /* collectives alone */
        snprintf(work, sizeof work, "%.0f GPUs (about %.2g network events "
                 "over up to %.0f flows)", b->gpus, b->net_events,
                 b->max_flows);
    return err_set(e,
                   "%s: refusing to simulate %s: estimated %s and %.1f GiB "
                   "of simulator memory (limits: %.0f min, %.0f GiB); pass "
                   "--force to run it anyway, or simulate fewer GPUs, "
                   "microbatches or requests",
                   what, work, t, b->bytes / (1 << 30),
                   BUDGET_MAX_SECONDS / 60, BUDGET_MAX_BYTES / (1 << 30));
}
