/* coll — NCCL-like collectives as steps of flows on the network.
 *
 * Algorithms: ring (all-reduce = reduce-scatter + all-gather, 2(n-1)
 * steps of S/n per rank per channel), pipelined chain (broadcast, reduce),
 * double binary tree (all-reduce across nodes, a chain inside each node),
 * hierarchical (intra-node reduce-scatter, inter-node ring all-reduce per
 * local rank, intra-node all-gather), NVLS (in-switch reduction on an
 * NVSwitch that declares it), direct (all-to-all, send/recv).
 * Protocols LL, LL128 and Simple change the bytes on the wire (payload
 * efficiency) and the per-step latency.  Every figure comes from
 * calibration data (calib/nccl-protocol.tsv, calib/links.tsv), none from
 * constants here.  Automatic choice runs each candidate (algorithm x
 * protocol) alone and keeps the fastest, as NCCL's tuner picks the
 * smallest predicted time. */
#ifndef LLMSIM_COLL_H
#define LLMSIM_COLL_H

#include <stdbool.h>

#include "engine/engine.h"
#include "base/err.h"
#include "hw/net.h"
#include "hw/topo.h"

typedef enum {
    COLL_ALL_REDUCE,
    COLL_REDUCE_SCATTER,
    COLL_ALL_GATHER,
    COLL_BROADCAST,
    COLL_REDUCE,
    COLL_ALL_TO_ALL,
    COLL_SEND_RECV,
    COLL_OP_COUNT
} coll_op;

typedef enum {
    ALGO_RING,
    ALGO_TREE,
    ALGO_HIER,
    ALGO_NVLS,
    ALGO_SHARP,
    ALGO_DIRECT,
    ALGO_COUNT,
    ALGO_AUTO = ALGO_COUNT
} coll_algo;

typedef enum { PROTO_LL, PROTO_LL128, PROTO_SIMPLE, PROTO_COUNT,
               PROTO_AUTO = PROTO_COUNT } coll_proto;

/* hardware classes of NCCL's latency table */
typedef enum { HW_NVLINK, HW_PCI, HW_NET, HW_COUNT } coll_hw;

typedef struct coll_calib {
    /* microseconds, NCCL tuning.cc: once per collective, and per step on
     * each class of link */
    double base_lat_us[ALGO_COUNT][PROTO_COUNT];
    double hw_lat_us[HW_COUNT][ALGO_COUNT][PROTO_COUNT];
    double proto_eff[PROTO_COUNT];        /* payload fraction on the wire */
    bool proto_ok[HW_COUNT][PROTO_COUNT]; /* LL128 off on PCIe, ... */
    double link_eff[LINK_KIND_COUNT];     /* achievable fraction of a link */
    double nvls_eff;                      /* NVLS switch reduction rate */
    double chunk_bytes;                   /* pipelining unit (chain, tree) */
    double steps;                         /* NCCL_STEPS (buffer slots) */
    /* NCCL's per-channel tree throughput (perChMaxTreeBws, bus bandwidth)
     * by node-count scale 1, 2, 3+ nodes, and the tree factor 0.92 */
    double tree_ch_Bps[3];
    /* perChMaxRingLL128Bws: what one channel (one CTA on one SM) of a
     * ring moves, by the same scales; the SMs a ring kernel occupies */
    double ring_ch_Bps[3];
    double tree_factor;
    /* llMaxBws across nodes (2 nodes, 3 and more; by the hosts' CPU
     * vendor): NCCL's cap on ring/LL bus bandwidth, bytes/s */
    double ll_net_Bps[2];
    /* the channels a ring runs (NCCL getChannelThreadInfo): one per
     * max_threads x thread_bytes of the message (x ranks for LL), at
     * least 1, at most max_channels */
    double thread_bytes[PROTO_COUNT], max_threads[PROTO_COUNT];
    double max_channels;
    /* NVLS chunking (NCCL calcCollChunking): the largest chunk, the NVLS
     * channels, and nvls_step: chunk nvls_step_bytes[i] when the message is
     * under nvls_step_mult[i] x channels x GPUs x chunk; the pipeline's
     * start-up in chunk times of one channel */
    double nvls_chunk_max, nvls_channels;
    double nvls_step_mult[3], nvls_step_bytes[3];
    double nvls_fill_chunks;
    /* microseconds of host time to issue one collective for one GPU (the
     * NCCL call and its kernel launch: calib/nccl-host.tsv) */
    double call_us;
    char source[512];
} coll_calib;

typedef struct coll_req {
    coll_op op;
    coll_algo algo;
    coll_proto proto;
    const int *ranks; /* GPU ranks of the topology, in communicator order */
    int n;
    double bytes; /* nccl-tests "size": whole buffer (RS/AG: whole array) */
    bool fast;    /* set by coll_time_alone: skip identical ring steps */
    bool full;    /* coll_time_alone, coll_time_together: simulate every
                     step anyway */
    bool links;   /* coll_time_alone: report the busiest links (implies
                     full: skipped steps would carry no bytes) */
    /* coll_time_alone: the GPUs one host thread issues the collective for,
     * back to back (nccl-tests -g); 0 = no host cost counted */
    int host_gpus;
} coll_req;

/* How busy one link was: bytes over bandwidth x time. */
typedef struct coll_link_use {
    int link;
    double bytes, utilization, busy_fraction;
} coll_link_use;

#define COLL_TOP_LINKS 8

typedef struct coll_result {
    double time_s;
    coll_algo algo;
    coll_proto proto;
    /* engine events the simulation took, over every candidate that
     * ALGO_AUTO / PROTO_AUTO ran (what the choice cost the simulator) */
    uint64_t events;
    bool host_bound; /* the host's calls, not the GPUs, set time_s */
    /* with coll_req.links: the busiest links, most utilized first */
    coll_link_use top[COLL_TOP_LINKS];
    int ntop;
} coll_result;

extern const char *const coll_op_names[COLL_OP_COUNT];
extern const char *const coll_algo_names[ALGO_COUNT + 1];
extern const char *const coll_proto_names[PROTO_COUNT + 1];

/* nccl-tests bus-bandwidth factor (doc/PERFORMANCE.md). */
double coll_busbw_factor(coll_op op, int n);

/* The slowest kind of hardware a collective's ranks span: the network
 * when they are on more than one node, else NVLink or PCI between its
 * first two GPUs. */
extern const char *const coll_hw_names[HW_COUNT];
coll_hw coll_fabric(net_routes *rt, const coll_req *q);

/* Whether an algorithm applies to an op on these ranks (NVLS needs an
 * NVLS switch and one node; tree and hierarchical need several nodes). */
bool coll_algo_applies(net_routes *rt, const coll_req *r, coll_algo a);

/* Starts a collective on a running engine/net (algo and proto must be
 * concrete); done(eng, ctx, arg) runs when every rank has finished. */
int coll_start(net *n, const coll_calib *cal, const coll_req *r,
               engine_fn done, void *ctx, uint64_t arg, llm_err *e);

/* An idle network on a new engine (*eng), links at their achievable
 * bandwidth (cal->link_eff): the routes' pooled one when it is free
 * (net_take); hand it back with net_give.  NULL when memory ran out. */
net *coll_idle_net(net_routes *rt, const coll_calib *cal, engine **eng);

/* A collective's ranks as a run's budget sees them, before a topology
 * exists: n ranks spread evenly over `nodes` nodes. */
typedef struct coll_shape {
    int n, nodes;
    int nics;    /* NICs per node: the channels of rings and trees across
                    nodes */
    bool nvlink; /* a node's GPUs talk over NVLink (else PCIe) */
    bool nvls;   /* the node's NVSwitch reduces in the switch */
    bool sharp;  /* the fabric's switches reduce (SHARP) */
} coll_shape;

/* What simulating op of `bytes` on shape s costs the simulator, in closed
 * form from the phases each algorithm builds: every candidate that
 * ALGO_AUTO / PROTO_AUTO may run, or the one named; `fast` as
 * coll_time_alone runs it (identical steps skipped), else every step (one
 * of several collectives of coll_time_together).  Every step: within 3%
 * of the measured counts on DGX A100 / H100 clusters of 8-512 GPUs
 * (tests/unit/test_budget.c compares them).  Fast, an upper bound:
 * coll_time_alone skips the candidates whose lower bound cannot win, and
 * simulates one of a tree's channels when they run alike.  A direct
 * NVLink mesh (a 4-GPU HGX board), whose rings are every Hamiltonian
 * cycle, costs more than it says. */
typedef struct coll_sim_cost {
    double events;    /* engine events */
    double max_flows; /* the most flows one step has in flight (what each
                         rate update touches) */
    double sims;      /* simulations run (each on a fresh network) */
} coll_sim_cost;

coll_sim_cost coll_sim_estimate(const coll_calib *cal, coll_op op,
                                coll_algo algo, coll_proto proto,
                                const coll_shape *s, double bytes, bool fast);

/* Simulates the collective alone on an idle network; with ALGO_AUTO /
 * PROTO_AUTO, every applicable choice and keeps the fastest (ties to the
 * first in NCCL's order) -- a choice whose lower bound (its launch and
 * step latencies, and its bytes on its busiest link at that link's
 * achievable rate) is above the fastest time so far is not simulated,
 * since it cannot win.  With r->host_gpus, the time is that of one of
 * many calls issued back to back, as nccl-tests times them: the GPUs'
 * time or the host's (host_gpus x call_us, one call per GPU), whichever
 * is longer. */
int coll_time_alone(net_routes *rt, const coll_calib *cal, const coll_req *r,
                    coll_result *out, llm_err *e);

/* Several collectives started together on one idle network (concrete
 * algorithms and protocols, every step simulated: their steps interleave);
 * the time the last one finishes.  One collective alone (n == 1, not
 * r->full) skips its identical steps as coll_time_alone does, and credits
 * their bytes to the links their flows would have crossed.  link_bytes, when not NULL ([t->nlink]), gets the bytes each
 * link carried added to it; events, when not NULL, the engine events the
 * simulation took. */
int coll_time_together(net_routes *rt, const coll_calib *cal,
                       const coll_req *r, int n, double *time_s,
                       double *link_bytes, uint64_t *events, llm_err *e);

#endif
