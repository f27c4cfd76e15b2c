#include "coll/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"

const char *const coll_op_names[COLL_OP_COUNT] = {
    "all_reduce", "reduce_scatter", "all_gather", "broadcast",
    "reduce",     "alltoall",       "sendrecv"};
const char *const coll_algo_names[ALGO_COUNT + 1] = {
    "ring", "tree", "hierarchical", "nvls", "sharp", "direct", "auto"};
const char *const coll_proto_names[PROTO_COUNT + 1] = {"LL", "LL128",
                                                       "Simple", "auto"};

double coll_busbw_factor(coll_op op, int n)
{
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_GATHER:
    case COLL_ALL_TO_ALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

/* ---- phases ---------------------------------------------------------------
 * A phase is a set of edges (device to device) run for `steps` steps.  With
 * K == 0 every edge carries `bytes` at every step (ring, one-shot); with
 * K > 0 the phase is a pipeline of K chunks: edge e carries a chunk at step
 * s when 0 <= s - level[e] < K. */

typedef struct edge {
    int src, dst, level;
    int route;      /* net_route_id of its flows (phase_hw looks it up,
                       salted by the edge's index), -1 before or when
                       unreachable, NET_NOMEM when memory ran out */
    int64_t lat_ns; /* its route's latency after the last byte (not a
                       ring's: its steps account for theirs) */
} edge;

typedef struct phase {
    edge *e;
    int ne, cap, steps, K;
    double bytes;
    double max_Bps; /* per-flow limit (tree kernels), 0 = none */
    coll_hw hw;
    int64_t lat_ns; /* longest route latency of its edges */
    /* a ring's steps (K == 0, more than one): its hops overlap, so a step
     * costs the mean hop latency of the ring, not the slowest hop's */
    bool ring;
    int64_t hop_ns;
    int64_t fill_ns; /* a pipeline's start-up, waited before its first step */
    int lmin, lmax;  /* a pipeline's edge levels: every edge carries a
                        chunk at steps lmax .. lmin + K - 1 */
    bool nomem;     /* an edge could not be stored */
} phase;

#define MAX_PHASES 4

/* One algorithm's edges with their routes, kept by coll_time_alone across
 * the builds of its protocols (each candidate is built for its bound and
 * again for its run, and an algorithm's edges are the same whatever the
 * protocol): a build reads an edge's route here when the same src and dst
 * sit at the same place, and looks it up otherwise. */
typedef struct route_memo {
    edge *e[MAX_PHASES];
    int ne[MAX_PHASES];
} route_memo;

typedef struct run {
    net *n;
    const topo *t;
    net_routes *rt;
    const coll_calib *cal;
    coll_algo algo;
    coll_proto proto;
    route_memo *memo; /* NULL, or the routes of an earlier build */
    phase ph[MAX_PHASES];
    int nph, cur, step, outstanding;
    int steps_done;
    int64_t step_begin_ns;
    int64_t step_end_ns; /* the latest arrival of this step's flows: each
                            flow's last byte plus its route's latency */
    bool fast; /* alone on the network: identical ring steps skipped */
    int ch_kept; /* fast: of ch identical channels, the one simulated
                    stands for all (1 = every channel simulated) */
    /* with fast: what the skipped steps' flows would have put on each
     * link ([t->nlink], added to), or NULL when nobody asks */
    double *skip_link_bytes;
    int64_t flows;
    engine_fn done;
    void *ctx;
    uint64_t arg;
    bool failed;
#ifdef LLMSIM_CHECK
    coll_op op;
    int nranks;
    double size;       /* the request's bytes */
    double want_bytes; /* on the wire over all flows: algo_bytes */
    double sent_bytes, recv_bytes;
#endif
} run;

static bool add_edge(phase *p, int src, int dst, int level)
{
    if (p->ne == p->cap) {
        int cap = p->cap ? p->cap * 2 : 64;
        edge *e = realloc(p->e, sizeof *e * (size_t)cap);
        if (!e) {
            p->nomem = true;
            return false;
        }
        p->e = e;
        p->cap = cap;
    }
    p->e[p->ne++] = (edge){src, dst, level, -1, 0};
    return true;
}

static void run_free(run *r)
{
    for (int i = 0; i < r->nph; i++)
        free(r->ph[i].e);
    free(r);
}

static int node_of(const topo *t, int rank)
{
    return t->dev[t->gpu_dev[rank]].node;
}

/* NCCL's per-step latency of hardware class h in nanoseconds. */
static int64_t hw_ns(const run *r, coll_hw h)
{
    return llround(r->cal->hw_lat_us[h][r->algo][r->proto] * 1e3);
}

/* The NCCL hardware class of a phase (network if an edge leaves a node,
 * NVLink if GPU-to-GPU routes start on NVLink, PCI otherwise), its longest
 * route latency and, for a ring, its mean hop latency: each edge's class
 * latency or its route's, whichever is longer (NCCL's ring model charges
 * (nsteps - nInterSteps) x intraLat + nInterSteps x interLat: a ring of
 * 14 NVLink hops and 2 network hops pays the network's latency on 2 of
 * every 16 hops, not on every step). */
static void phase_hw(const run *r, int ph, phase *p)
{
    const topo *t = r->t;
    const route_memo *m = r->memo;
    const edge *known = m && m->ne[ph] == p->ne ? m->e[ph] : NULL;
    bool nvlink = false, crosses = false;
    double hop_sum = 0;
    p->lat_ns = 0;
    for (int i = 0; i < p->ne; i++) {
        edge *e = &p->e[i];
        const topo_dev *a = &t->dev[e->src], *b = &t->dev[e->dst];
        bool out = a->node != b->node;
        crosses |= out;
        /* the route every flow of the edge takes (launch_step's salt),
         * looked up once for the phase's figures and its flows */
        e->route = known && known[i].src == e->src && known[i].dst == e->dst
                       ? known[i].route
                       : net_route_id(r->rt, e->src, e->dst, (uint32_t)i);
        p->nomem |= e->route == NET_NOMEM;
        int h = 0;
        const int *links =
            e->route >= 0 ? net_route_links(r->rt, e->route, &h) : NULL;
        bool nvl = h > 0 && t->link[links[0]].kind == LINK_NVLINK;
        nvlink |= nvl;
        int64_t lat = h > 0 ? net_route_lat_ns(r->rt, e->route) : 0;
        e->lat_ns = lat;
        if (lat > p->lat_ns)
            p->lat_ns = lat;
        int64_t cls = hw_ns(r, out ? HW_NET : nvl ? HW_NVLINK : HW_PCI);
        hop_sum += (double)(cls > lat ? cls : lat);
    }
    p->hw = crosses ? HW_NET : nvlink ? HW_NVLINK : HW_PCI;
    p->ring = p->K == 0 && p->steps > 1 && p->ne > 0;
    /* a pipeline's flows add their route's latency at their end; a
     * ring's step waits the mean hop latency instead (step_delay) */
    for (int i = 0; p->ring && i < p->ne; i++)
        p->e[i].lat_ns = 0;
    p->lmin = p->ne > 0 ? p->e[0].level : 0;
    p->lmax = p->lmin;
    for (int i = 1; i < p->ne; i++) {
        if (p->e[i].level < p->lmin)
            p->lmin = p->e[i].level;
        if (p->e[i].level > p->lmax)
            p->lmax = p->e[i].level;
    }
    p->hop_ns = p->ne > 0 ? llround(hop_sum / p->ne) : 0;
}

/* NCCL's per-step hardware latency already contains the wire's, which the
 * flows add at their end: wait only for the rest.  A ring's flows add
 * none: its step waits the mean hop latency.  The phase's start-up comes
 * before its first step (r->step is the step about to start). */
static int64_t step_delay(const run *r, const phase *p)
{
    int64_t fill = r->step == 0 ? p->fill_ns : 0;
    if (p->ring)
        return p->hop_ns + fill;
    int64_t a = hw_ns(r, p->hw);
    return (a > p->lat_ns ? a - p->lat_ns : 0) + fill;
}

/* ---- building the phases of each algorithm -------------------------------- */

/* Groups the communicator's ranks by node, keeping their order.  Returns
 * the number of nodes; start[k]..start[k+1] index into `sorted`. */
static int group_by_node(const topo *t, const coll_req *q, int *sorted,
                         int *start)
{
    int nn = 0;
    int *seen = calloc((size_t)t->nodes, sizeof(int));
    int *slot = malloc(sizeof(int) * (size_t)t->nodes);
    if (!seen || !slot) {
        free(seen);
        free(slot);
        return -1;
    }
    for (int i = 0; i < q->n; i++) {
        int nd = node_of(t, q->ranks[i]);
        if (!seen[nd]) {
            seen[nd] = 1;
            slot[nd] = nn++;
        }
    }
    int *count = calloc((size_t)nn + 1, sizeof(int));
    if (!count) {
        free(seen);
        free(slot);
        return -1;
    }
    for (int i = 0; i < q->n; i++)
        count[slot[node_of(t, q->ranks[i])] + 1]++;
    start[0] = 0;
    for (int k = 0; k < nn; k++)
        start[k + 1] = start[k] + count[k + 1];
    int *fill = calloc((size_t)nn, sizeof(int));
    for (int i = 0; fill && i < q->n; i++) {
        int k = slot[node_of(t, q->ranks[i])];
        sorted[start[k] + fill[k]++] = q->ranks[i];
    }
    int rc = fill ? nn : -1;
    free(fill);
    free(count);
    free(seen);
    free(slot);
    return rc;
}

/* Ring edges over `ranks` (rank ids), `ch` channels; channel c rotates
 * each node's segment so that it enters the node at the c-th NIC's GPU:
 * the rings cross between nodes on different rails (NCCL's rail-aligned
 * rings). */
static bool ring_edges(run *r, phase *p, const int *sorted, const int *start,
                       int nn, int ch)
{
    const topo *t = r->t;
    int n = start[nn];
    int *order = malloc(sizeof(int) * (size_t)n);
    if (!order) {
        p->nomem = true;
        return false;
    }
    for (int c = 0; c < ch; c++) {
        int w = 0;
        for (int k = 0; k < nn; k++) {
            int g = start[k + 1] - start[k];
            int off = c * g / ch; /* channel c enters through NIC c */
            for (int i = 0; i < g; i++)
                order[w++] = sorted[start[k] + (i + off) % g];
        }
        for (int i = 0; i < n; i++)
            if (!add_edge(p, t->gpu_dev[order[i]],
                          t->gpu_dev[order[(i + 1) % n]], 0)) {
                free(order);
                return false;
            }
    }
    free(order);
    return true;
}

/* Whether every pair of the n ranks is joined by one NVLink and nothing
 * else (a direct mesh: a 4-GPU HGX A100 board, a GH200 node), where NCCL's
 * channels lay rings over different links.  A route that could not be
 * stored marks the phase (p->nomem). */
static bool direct_mesh(const run *r, phase *p, const int *ranks, int n)
{
    const topo *t = r->t;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int links[2];
            if (i == j)
                continue;
            int h = net_route(r->rt, t->gpu_dev[ranks[i]],
                              t->gpu_dev[ranks[j]], 0, links, 2);
            p->nomem |= h == NET_NOMEM;
            if (h != 1 || t->link[links[0]].kind != LINK_NVLINK)
                return false;
        }
    return true;
}

/* The largest mesh whose rings are all laid: every Hamiltonian cycle of n
 * GPUs, (n-1)!/2 of them, each both ways: 24 rings at 5 GPUs. */
#define MESH_MAX 5

/* Rings over a direct mesh of n <= MESH_MAX ranks: every Hamiltonian cycle
 * of the complete graph, each in both directions.  By symmetry each link
 * then carries the same number of rings each way, so a ring collective
 * reaches every NVLink of each GPU, as NCCL's channels do over such a
 * mesh; one ring alone would use one link out of each GPU.  Returns the
 * number of rings, -1 when out of memory. */
static int mesh_rings(run *r, phase *p, const int *ranks, int n)
{
    const topo *t = r->t;
    int perm[MESH_MAX], rings = 0;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    /* perm[1..n-1] through every permutation in lexicographic order; a
     * cycle and its reverse both appear: keep the one with perm[1] <
     * perm[n-1] and add its reverse by hand */
    for (;;) {
        if (perm[1] < perm[n - 1]) {
            for (int d = 0; d < 2; d++) { /* d = 1: the cycle reversed */
                for (int i = 0; i < n; i++) {
                    int a = perm[(i + d) % n], b = perm[(i + 1 - d) % n];
                    if (!add_edge(p, t->gpu_dev[ranks[a]],
                                  t->gpu_dev[ranks[b]], 0))
                        return -1;
                }
                rings++;
            }
        }
        int k = n - 2;
        while (k >= 1 && perm[k] > perm[k + 1])
            k--;
        if (k < 1)
            break;
        int l = n - 1;
        while (perm[l] < perm[k])
            l--;
        int x = perm[k];
        perm[k] = perm[l];
        perm[l] = x;
        for (int a = k + 1, b = n - 1; a < b; a++, b--) {
            x = perm[a];
            perm[a] = perm[b];
            perm[b] = x;
        }
    }
    return rings;
}

static int channels(const topo *t, int nn)
{
    return nn > 1 && t->nics_per_node > 0 ? t->nics_per_node : 1;
}

static double wire(const run *r, double bytes)
{
    return bytes / r->cal->proto_eff[r->proto];
}

/* What one rank of a ring may send, payload bytes/s (its bus bandwidth;
 * 0 = no limit).  NCCL runs one channel (one CTA) per max_threads x
 * thread_bytes of the message (x ranks with LL), and NCCL's model holds a
 * channel to perChMaxRingLL128Bws with LL128; an LL channel is assumed to
 * store its 16-byte lines as fast, so it moves that x LL's payload share
 * over LL128's (calib/nccl-protocol.tsv says which figures are NCCL's).
 * Across nodes ring/LL as a whole is held to llMaxBw.  Inside a node it
 * is not: llMaxBw N1 is NCCL's choice model, and measured LL runs pass it
 * (quad GH200, 1 MiB: 164 GB/s against Hopper's 141).  Simple has no
 * per-channel cap. */
static double ring_cap(const run *r, const coll_req *q, int nn)
{
    const coll_calib *cal = r->cal;
    int p = r->proto, scale = nn <= 1 ? 0 : nn == 2 ? 1 : 2;
    if (p == PROTO_SIMPLE)
        return 0;
    double per = cal->max_threads[p] * cal->thread_bytes[p] *
                 (p == PROTO_LL ? q->n : 1);
    double nc = fmin(fmax(floor(q->bytes / per), 1), cal->max_channels);
    double ch_Bps = cal->ring_ch_Bps[scale];
    if (p == PROTO_LL128)
        return nc * ch_Bps;
    double cap = nc * (ch_Bps * (cal->proto_eff[PROTO_LL] /
                                 cal->proto_eff[PROTO_LL128]));
    double ll = nn > 1 ? cal->ll_net_Bps[nn == 2 ? 0 : 1] : 0;
    return ll > 0 && (cap <= 0 || ll < cap) ? ll : cap;
}

static bool build_ring(run *r, const coll_req *q, const int *sorted,
                       const int *start, int nn)
{
    phase *p = &r->ph[r->nph++];
    int n = q->n, ch = channels(r->t, nn);
    p->K = 0;
    switch (q->op) {
    case COLL_ALL_REDUCE:
        p->steps = 2 * (n - 1);
        break;
    default: /* reduce-scatter, all-gather */
        p->steps = n - 1;
        break;
    }
    /* a rank's payload rate, shared by its flows (wire = payload / eff) */
    double cap = wire(r, ring_cap(r, q, nn));
    if (nn == 1 && n >= 3 && n <= MESH_MAX && direct_mesh(r, p, sorted, n)) {
        int rings = mesh_rings(r, p, sorted, n);
        p->bytes = wire(r, q->bytes / ((double)n * rings));
        p->max_Bps = rings > 0 ? cap / rings : 0;
        return rings > 0;
    }
    p->bytes = wire(r, q->bytes / ((double)n * ch));
    p->max_Bps = cap / ch;
    return ring_edges(r, p, sorted, start, nn, ch);
}

static bool build_chain(run *r, const coll_req *q)
{
    phase *p = &r->ph[r->nph++];
    const topo *t = r->t;
    int n = q->n;
    int K = (int)ceil(q->bytes / r->cal->chunk_bytes);
    p->K = K < 1 ? 1 : K;
    p->bytes = wire(r, q->bytes / p->K);
    p->steps = (n - 2) + p->K;
    for (int i = 0; i + 1 < n; i++) {
        bool ok = q->op == COLL_BROADCAST
                      ? add_edge(p, t->gpu_dev[q->ranks[i]],
                                 t->gpu_dev[q->ranks[i + 1]], i)
                      : add_edge(p, t->gpu_dev[q->ranks[n - 1 - i]],
                                 t->gpu_dev[q->ranks[n - 2 - i]], i);
        if (!ok)
            return false;
    }
    return true;
}

/* Double binary tree across nodes (tree 2 mirrors the node order) with a
 * chain inside each node; each tree carries half of the data in K chunks.
 * A vertex at depth d (distance to the root) forwards chunk c upward at
 * step c + H - d, H the largest depth, so everything below it has arrived;
 * the root's result comes down an edge whose parent is at depth d at step
 * c + H + d.  Steps: 2H - 1 + K. */
static bool build_tree(run *r, const coll_req *q, const int *sorted,
                       const int *start, int nn)
{
    phase *p = &r->ph[r->nph++];
    const topo *t = r->t;
    int ch = channels(t, nn);
    /* each channel runs both trees with its own heads (rotated chains), so
     * the inter-node edges of different channels use different NICs */
    double share = q->bytes / 2 / ch;
    int K = (int)ceil(share / r->cal->chunk_bytes);
    p->K = K < 1 ? 1 : K;
    p->bytes = wire(r, share / p->K);
    /* H over both trees: tree 2 puts node nn-1-j at position j, so with
     * unequal GPU counts per node its deepest vertex can lie deeper than
     * tree 1's (a level below 0 or past the last step would drop chunks) */
    int H = 0;
    for (int j = 0; j < nn; j++) {
        int dj = 0;
        for (int x = j; x > 0; x = (x - 1) / 2)
            dj++;
        for (int tree = 0; tree < 2; tree++) {
            int k = tree ? nn - 1 - j : j;
            int g = start[k + 1] - start[k];
            if (dj + g - 1 > H)
                H = dj + g - 1;
        }
    }
    for (int c = 0; c < ch; c++)
        for (int tree = 0; tree < 2; tree++)
            for (int j = 0; j < nn; j++) {
                int k = tree ? nn - 1 - j : j; /* node at tree position j */
                int g = start[k + 1] - start[k], dj = 0;
                for (int x = j; x > 0; x = (x - 1) / 2)
                    dj++;
#define MEMBER(node, i)                                                     \
    t->gpu_dev[sorted[start[node] +                                         \
                      ((i) + c * (start[(node) + 1] - start[node]) / ch) %    \
                          (start[(node) + 1] - start[node])]]
                for (int i = 1; i < g; i++) { /* member i hangs off i - 1 */
                    int v = MEMBER(k, i), u = MEMBER(k, i - 1);
                    int d = dj + i;
                    if (!add_edge(p, v, u, H - d) ||
                        !add_edge(p, u, v, H + d - 1))
                        return false;
                }
                if (j == 0)
                    continue;
                int pk = tree ? nn - 1 - (j - 1) / 2 : (j - 1) / 2;
                int head = MEMBER(k, 0), phead = MEMBER(pk, 0);
#undef MEMBER
                if (!add_edge(p, head, phead, H - dj) ||
                    !add_edge(p, phead, head, H + dj - 1))
                    return false;
            }
    p->steps = 2 * H - 1 + p->K;
    /* A tree channel is one CTA reducing and forwarding: NCCL's model caps
     * its bus bandwidth at perChMaxTreeBw x 0.92 per channel, and counts
     * tree algorithm bandwidth as half the bus bandwidth; each channel
     * moves its data over two trees, up and down, so each edge's flow may
     * run at most at a quarter of that. */
    int scale = nn <= 1 ? 0 : nn == 2 ? 1 : 2;
    p->max_Bps = r->cal->tree_ch_Bps[scale] * r->cal->tree_factor / 4;
    return true;
}

/* Intra-node rings of g GPUs in phases 0 and 2 (reduce-scatter, then
 * all-gather of S/g per step). */
static bool intra_rings(run *r, const coll_req *q, const int *sorted,
                        const int *start, int nn, int g)
{
    for (int i = 0; i < 3; i += 2) {
        phase *p = &r->ph[i];
        p->steps = g - 1;
        p->bytes = wire(r, q->bytes / g);
        for (int k = 0; k < nn; k++)
            if (!ring_edges(r, p, sorted + start[k], (int[]){0, g}, 1, 1))
                return false;
    }
    return true;
}

static bool build_hier(run *r, const coll_req *q, const int *sorted,
                       const int *start, int nn)
{
    const topo *t = r->t;
    int g = start[1] - start[0];
    for (int k = 1; k < nn; k++)
        if (start[k + 1] - start[k] != g)
            return false; /* needs the same GPU count on every node */
    /* intra-node reduce-scatter, then all-gather: rings inside nodes */
    phase *ar = &r->ph[1];
    r->nph = 3;
    if (!intra_rings(r, q, sorted, start, nn, g))
        return false;
    /* inter-node ring all-reduce of S/g among the nodes, per local rank */
    ar->steps = 2 * (nn - 1);
    ar->bytes = wire(r, q->bytes / g / nn);
    for (int l = 0; l < g; l++)
        for (int k = 0; k < nn; k++) {
            int a = t->gpu_dev[sorted[start[k] + l]];
            int b = t->gpu_dev[sorted[start[(k + 1) % nn] + l]];
            if (!add_edge(ar, a, b, 0))
                return false;
        }
    return true;
}

static bool build_sharp(run *r, const coll_req *q, const int *sorted,
                        const int *start, int nn)
{
    const topo *t = r->t;
    int g = start[1] - start[0];
    for (int k = 1; k < nn; k++)
        if (start[k + 1] - start[k] != g)
            return false;
    r->nph = 3;
    if (!intra_rings(r, q, sorted, start, nn, g))
        return false;
    /* each GPU's reduced shard goes up to its switch, which returns the
     * sum of all nodes' shards */
    phase *p = &r->ph[1];
    p->steps = 1;
    p->bytes = wire(r, q->bytes / g);
    for (int k = 0; k < nn; k++)
        for (int l = 0; l < g; l++) {
            int rank = sorted[start[k] + l];
            int sw = topo_sharp_switch(t, net_routes_dist(r->rt), rank);
            int dev = t->gpu_dev[rank];
            if (sw < 0 || !add_edge(p, dev, sw, 0) || !add_edge(p, sw, dev, 0))
                return false;
        }
    return true;
}

/* NCCL's NVLS chunk for a message of `bytes` on n GPUs (calcCollChunking:
 * the largest chunk, halved below each step's share of the concurrent
 * operations, channels x heads); a message that does not fill one chunk
 * per operation moves its share, not a whole chunk. */
static double nvls_chunk(const coll_calib *cal, double bytes, int n)
{
    double ops = cal->nvls_channels * n, c = cal->nvls_chunk_max;
    for (int i = 0; i < 3; i++)
        if (bytes < cal->nvls_step_mult[i] * ops * c &&
            c > cal->nvls_step_bytes[i])
            c = cal->nvls_step_bytes[i];
    return c < bytes / ops ? c : bytes / ops;
}

/* The NVLS pipeline's start-up: nvls_fill_chunks chunk times of one
 * channel, which moves its share of a GPU's payload rate (the link to the
 * switch at its achievable rate x the switch's reduction efficiency x
 * n/(n+1), the payload's share of the wire). */
static int64_t nvls_fill_ns(const run *r, phase *p, const coll_req *q,
                            int gpu, int sw)
{
    const coll_calib *cal = r->cal;
    int links[4];
    int h = net_route(r->rt, gpu, sw, 0, links, 4);
    p->nomem |= h == NET_NOMEM;
    if (h < 1 || cal->nvls_channels <= 0)
        return 0;
    const topo_link *l = &r->t->link[links[0]];
    double Bps = l->bw_Bps * cal->link_eff[l->kind] * cal->nvls_eff *
                 q->n / (q->n + 1) / cal->nvls_channels;
    double c = nvls_chunk(cal, q->bytes, q->n);
    return llround(cal->nvls_fill_chunks * c / Bps * 1e9);
}

static bool build_nvls(run *r, const coll_req *q)
{
    phase *p = &r->ph[r->nph++];
    const topo *t = r->t;
    int sw = topo_nearest(t, net_routes_dist(r->rt), t->gpu_dev[q->ranks[0]],
                          DEV_NVSWITCH);
    if (sw < 0)
        return false;
    /* multimem.ld_reduce reads every GPU's whole buffer through the switch
     * and multimem.st multicasts each reduced shard back: per GPU, S + S/n
     * leave and S + S/n arrive (hence nccl-tests' (n-1)/(n+1) in-network
     * factor); the switch's reduction runs at nvls_eff of the link */
    p->steps = 1;
    p->bytes = wire(r, q->bytes) * (q->n + 1) / q->n / r->cal->nvls_eff;
    p->fill_ns = nvls_fill_ns(r, p, q, t->gpu_dev[q->ranks[0]], sw);
    for (int i = 0; i < q->n; i++) {
        int g = t->gpu_dev[q->ranks[i]];
        if (!add_edge(p, g, sw, 0) || !add_edge(p, sw, g, 0))
            return false;
    }
    return true;
}

static bool build_direct(run *r, const coll_req *q)
{
    phase *p = &r->ph[r->nph++];
    const topo *t = r->t;
    int n = q->n;
    p->steps = 1;
    if (q->op == COLL_SEND_RECV) {
        p->bytes = wire(r, q->bytes);
        for (int i = 0; i < n; i++)
            if (!add_edge(p, t->gpu_dev[q->ranks[i]],
                          t->gpu_dev[q->ranks[(i + 1) % n]], 0))
                return false;
        return true;
    }
    p->bytes = wire(r, q->bytes / n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && !add_edge(p, t->gpu_dev[q->ranks[i]],
                                    t->gpu_dev[q->ranks[j]], 0))
                return false;
    return true;
}

/* What each algorithm needs, as coll_algo_applies checks it. */
static const char *const algo_needs[ALGO_COUNT] = {
    [ALGO_RING] = "all_reduce, reduce_scatter, all_gather, broadcast or "
                  "reduce",
    [ALGO_TREE] = "all_reduce across nodes",
    [ALGO_HIER] = "all_reduce across nodes",
    [ALGO_NVLS] = "all_reduce inside one node whose NVSwitch has NVLink "
                  "SHARP (nvls = true in the topology)",
    [ALGO_SHARP] = "all_reduce across nodes under a fabric switch with "
                   "SHARP",
    [ALGO_DIRECT] = "all_to_all or send_recv",
};

bool coll_algo_applies(net_routes *rt, const coll_req *q, coll_algo a)
{
    const topo *t = net_routes_topo(rt);
    int first = node_of(t, q->ranks[0]);
    bool multi = false;
    for (int i = 1; i < q->n; i++)
        multi |= node_of(t, q->ranks[i]) != first;
    switch (a) {
    case ALGO_RING:
        return q->op == COLL_ALL_REDUCE || q->op == COLL_REDUCE_SCATTER ||
               q->op == COLL_ALL_GATHER || q->op == COLL_BROADCAST ||
               q->op == COLL_REDUCE;
    case ALGO_TREE:
    case ALGO_HIER:
        return q->op == COLL_ALL_REDUCE && multi;
    case ALGO_NVLS: {
        if (q->op != COLL_ALL_REDUCE || multi || q->n < 2)
            return false;
        for (int i = 0; i < t->ndev; i++)
            if (t->dev[i].kind == DEV_NVSWITCH && t->dev[i].nvls &&
                t->dev[i].node == first)
                return true;
        return false;
    }
    case ALGO_SHARP:
        return q->op == COLL_ALL_REDUCE && multi &&
               topo_sharp_switch(t, net_routes_dist(rt), q->ranks[0]) >= 0;
    case ALGO_DIRECT:
        return q->op == COLL_ALL_TO_ALL || q->op == COLL_SEND_RECV;
    default:
        return false;
    }
}

/* Whether the ch channels of phase p (edges channel by channel, ne / ch
 * each) run as ch copies of the first, so that simulating it alone gives
 * the collective's time exactly: channel c's k-th edge has the first
 * channel's level and a route of the same links' rates and latencies; a
 * link only one channel uses maps to one only channel c uses, always the
 * same one; and a link several channels use can carry every flow through
 * it at its rate limit at once (it never limits a rate).  Fat trees whose
 * spines the channels share, or flows without a rate limit, fail it.
 * Sets p->nomem when a route could not be stored. */
static bool channels_alike(const run *r, phase *p, int ch)
{
    const topo *t = r->t;
    int per = p->ne / ch, L = t->nlink;
    if (ch < 2 || per * ch != p->ne || p->max_Bps <= 0)
        return false;
    int *owner = malloc(sizeof(int) * (size_t)L);   /* channel, -2 shared */
    int *map = malloc(sizeof(int) * (size_t)L * 2); /* first <-> channel c */
    double *load = calloc((size_t)L, sizeof(double));
    bool ok = owner && map && load;
    p->nomem |= !ok;
    for (int l = 0; ok && l < L; l++)
        owner[l] = map[l] = map[L + l] = -1;
    for (int i = 0; ok && i < p->ne; i++) {
        ok = p->e[i].route >= 0; /* phase_hw's lookup */
        int h = 0;
        const int *a = ok ? net_route_links(r->rt, p->e[i].route, &h) : NULL;
        for (int j = 0; j < h; j++) {
            int c = i / per;
            owner[a[j]] = owner[a[j]] == -1 || owner[a[j]] == c ? c : -2;
            load[a[j]] += p->max_Bps;
        }
    }
    for (int l = 0; ok && l < L; l++)
        ok = owner[l] != -2 ||
             load[l] <= t->link[l].bw_Bps * r->cal->link_eff[t->link[l].kind];
    for (int c = 1; ok && c < ch; c++) {
        for (int k = 0; ok && k < per; k++) {
            const edge *x = &p->e[k], *y = &p->e[c * per + k];
            int ha, hb;
            const int *a = net_route_links(r->rt, x->route, &ha);
            const int *b = net_route_links(r->rt, y->route, &hb);
            ok = x->level == y->level && ha == hb;
            for (int j = 0; ok && j < ha; j++) {
                const topo_link *la = &t->link[a[j]], *lb = &t->link[b[j]];
                ok = la->bw_Bps == lb->bw_Bps && la->kind == lb->kind &&
                     la->lat_ns == lb->lat_ns &&
                     (owner[a[j]] == -2) == (owner[b[j]] == -2);
                if (ok && owner[a[j]] != -2) {
                    ok = (map[a[j]] == -1 || map[a[j]] == b[j]) &&
                         (map[L + b[j]] == -1 || map[L + b[j]] == a[j]);
                    map[a[j]] = b[j];
                    map[L + b[j]] = a[j];
                }
            }
        }
        for (int l = 0; ok && l < L; l++) /* channel c's own map, afresh */
            map[l] = map[L + l] = -1;
    }
    free(owner);
    free(map);
    free(load);
    return ok;
}

/* The first build of an algorithm leaves its edges' routes in the memo
 * for the builds of its other protocols (phase_hw reads them); false
 * when memory ran out. */
static bool keep_routes(run *r)
{
    route_memo *m = r->memo;
    for (int i = 0; m && i < r->nph; i++) {
        const phase *p = &r->ph[i];
        if (m->ne[i] == p->ne || p->nomem)
            continue;
        edge *e = realloc(m->e[i], sizeof *e * (size_t)(p->ne ? p->ne : 1));
        if (!e)
            return false;
        memcpy(e, p->e, sizeof *e * (size_t)p->ne);
        m->e[i] = e;
        m->ne[i] = p->ne;
    }
    return true;
}

static void memo_free(route_memo *m, int n)
{
    for (int a = 0; a < n; a++)
        for (int i = 0; i < MAX_PHASES; i++)
            free(m[a].e[i]);
}

/* The phases of the collective: 0, -1 when the algorithm does not apply
 * to these ranks, NET_NOMEM when memory ran out. */
static int build(run *r, const coll_req *q)
{
    int *sorted = malloc(sizeof(int) * (size_t)q->n);
    int *start = malloc(sizeof(int) * (size_t)(q->n + 1));
    bool ok = sorted && start;
    int nn = ok ? group_by_node(r->t, q, sorted, start) : -1;
    bool nomem = !ok || nn < 0;
    ok = ok && nn > 0;
    if (ok) {
        switch (r->algo) {
        case ALGO_RING:
            ok = q->op == COLL_BROADCAST || q->op == COLL_REDUCE
                     ? build_chain(r, q)
                     : build_ring(r, q, sorted, start, nn);
            break;
        case ALGO_TREE:
            ok = build_tree(r, q, sorted, start, nn);
            break;
        case ALGO_HIER:
            ok = build_hier(r, q, sorted, start, nn);
            break;
        case ALGO_NVLS:
            ok = build_nvls(r, q);
            break;
        case ALGO_SHARP:
            ok = build_sharp(r, q, sorted, start, nn);
            break;
        default:
            ok = build_direct(r, q);
        }
    }
    for (int i = 0; ok && i < r->nph; i++)
        phase_hw(r, i, &r->ph[i]);
    if (ok && !keep_routes(r))
        nomem = true;
    /* alone on the network, a tree's channels that run alike are
     * simulated as one (its phase's figures above are all channels') */
    r->ch_kept = 1;
    if (ok && r->fast && r->algo == ALGO_TREE &&
        channels_alike(r, &r->ph[0], channels(r->t, nn))) {
        r->ch_kept = channels(r->t, nn);
        r->ph[0].ne /= r->ch_kept;
    }
    free(sorted);
    free(start);
    for (int i = 0; i < r->nph; i++)
        nomem |= r->ph[i].nomem;
    nomem |= topo_dist_nomem(net_routes_dist(r->rt));
    return nomem ? NET_NOMEM : ok ? 0 : -1;
}

#ifdef LLMSIM_CHECK
/* What an algorithm moves over all its flows, in closed form (each flow's
 * wire bytes summed; S the request's size, n ranks), to check the phases
 * built above against:
 *   all-reduce, ring / tree / hierarchical: 2(n-1)S (each rank sends
 *     2(n-1)/n of S; a tree edge carries its half of S up and down, twice
 *     over the two trees; hierarchical sums (g-1)/g S twice inside nodes
 *     and 2(nn-1)/nn of S/g between them to the same);
 *   SHARP: 2nS (intra-node reduce-scatter and all-gather, and each GPU's
 *     S/g shard up to the switch and back);
 *   NVLS: 2(n+1)S / nvls_eff (per GPU S + S/n each way);
 *   reduce-scatter, all-gather, all-to-all, broadcast / reduce chain:
 *     (n-1)S;  send/recv: nS (one S per pair of the ring).
 * All divided by the protocol's payload efficiency. */
static double algo_bytes(const run *r, coll_op op, int n, double S)
{
    double b;
    switch (r->algo) {
    case ALGO_SHARP:
        b = 2.0 * n * S;
        break;
    case ALGO_NVLS:
        b = 2.0 * (n + 1) * S / r->cal->nvls_eff;
        break;
    case ALGO_DIRECT:
        b = op == COLL_SEND_RECV ? n * S : (n - 1) * S;
        break;
    default: /* ring, chain, tree, hierarchical */
        b = op == COLL_ALL_REDUCE ? 2.0 * (n - 1) * S : (n - 1) * S;
    }
    return b / r->cal->proto_eff[r->proto];
}
#endif

/* A finished collective moved what its algorithm says, and every byte
 * sent arrived. */
static void check_moved(const run *r, int64_t now)
{
#ifdef LLMSIM_CHECK
    CHECK(CHECK_EQ_REL(r->sent_bytes, r->want_bytes, 1e-9) &&
              CHECK_EQ_REL(r->recv_bytes, r->sent_bytes, 1e-9),
          CHECK_EVENT("%s %s %s done", coll_op_names[r->op],
                      coll_algo_names[r->algo], coll_proto_names[r->proto]),
          now,
          "%s of %.17g bytes on %d ranks: flows sent %.17g bytes and "
          "received %.17g, the algorithm moves %.17g%s",
          coll_op_names[r->op], r->size, r->nranks, r->sent_bytes,
          r->recv_bytes, r->want_bytes,
          r->failed ? " (a flow could not start)" : "");
#else
    (void)r, (void)now;
#endif
}

/* ---- running ------------------------------------------------------------- */

static void launch_step(engine *eng, void *ctx, uint64_t arg);
static void advance(engine *eng, void *ctx, uint64_t arg);

/* Moves to the next step or phase, or finishes. */
static void advance(engine *eng, void *ctx, uint64_t arg)
{
    run *r = ctx;
    (void)arg;
    phase *p = &r->ph[r->cur];
    if (++r->step >= p->steps) {
        r->step = 0;
        r->cur++;
    }
    if (r->cur >= r->nph) {
        check_moved(r, engine_now(eng));
        engine_fn done = r->done;
        void *dctx = r->ctx;
        uint64_t darg = r->arg;
        run_free(r);
        done(eng, dctx, darg);
        return;
    }
    r->step_begin_ns = engine_now(eng);
    engine_after(eng, step_delay(r, &r->ph[r->cur]), launch_step, r, 0);
}

/* The bytes `rest` skipped steps of phase p would have put on the links:
 * in each of them every edge carries p->bytes along the route its flows
 * take (phase_hw's: a run whose lookup ran out of memory never starts). */
static void credit_skipped(run *r, const phase *p, int rest)
{
    for (int i = 0; i < p->ne; i++) {
        int h = 0;
        const int *links = p->e[i].route >= 0
                               ? net_route_links(r->rt, p->e[i].route, &h)
                               : NULL;
        for (int k = 0; k < h; k++)
            r->skip_link_bytes[links[k]] += (double)rest * p->bytes;
    }
}

/* On an otherwise idle network the steps whose flows are the same -- all
 * of a ring phase's, and a pipeline's between its fill and its drain,
 * where every edge carries a chunk -- take the same time: after two of
 * them (the second shows the steady per-step time, latency included) time
 * jumps over the rest.  Only coll_time_alone allows it, and a test checks
 * it against the step-by-step run for every algorithm. */
static bool skip_ahead(engine *eng, run *r)
{
    const phase *p = &r->ph[r->cur];
    if (!r->fast || p->ne == 0)
        return false;
    /* the first and last steps of the run of identical steps */
    int first = p->K == 0 ? 0 : p->lmax;
    int last = p->K == 0 ? p->steps - 1 : p->lmin + p->K - 1;
    if (r->step != first + 1 || last - r->step < 1)
        return false;
    int64_t per = engine_now(eng) - r->step_begin_ns;
    int rest = last - r->step;
    if (r->skip_link_bytes)
        credit_skipped(r, p, rest);
#ifdef LLMSIM_CHECK
    /* the skipped steps stand for their flows: every edge, every step */
    r->sent_bytes += (double)rest * p->ne * p->bytes;
    r->recv_bytes += (double)rest * p->ne * p->bytes;
#endif
    r->step += rest;
    engine_after(eng, per * rest, advance, r, 0);
    return true;
}

/* The step's last flow has arrived. */
static void step_done(engine *eng, void *ctx, uint64_t arg)
{
    run *r = ctx;
    (void)arg;
    r->steps_done++;
    if (!skip_ahead(eng, r))
        advance(eng, r, 0);
}

/* arg e + 1: edge e's flow delivered its last byte (its route's latency
 * is still to come: the step ends at the latest arrival, one event for
 * all its flows rather than one each); 0: launch_step's guard */
static void flow_done(engine *eng, void *ctx, uint64_t arg)
{
    run *r = ctx;
    if (arg) {
        const edge *e = &r->ph[r->cur].e[arg - 1];
        int64_t at = engine_now(eng) + e->lat_ns;
        if (at > r->step_end_ns)
            r->step_end_ns = at;
#ifdef LLMSIM_CHECK
        r->recv_bytes += r->ph[r->cur].bytes;
#endif
    }
    if (--r->outstanding > 0)
        return;
    int64_t wait = r->step_end_ns - engine_now(eng);
    if (wait > 0)
        engine_after(eng, wait, step_done, r, 0);
    else
        step_done(eng, r, 0);
}

static void launch_step(engine *eng, void *ctx, uint64_t arg)
{
    run *r = ctx;
    (void)arg;
    phase *p = &r->ph[r->cur];
    int started = 0;
    r->step_end_ns = engine_now(eng);
    r->outstanding = 1; /* guard: flows may complete synchronously */
    for (int i = 0; i < p->ne; i++) {
        int c = r->step - p->e[i].level;
        if (p->K > 0 && (c < 0 || c >= p->K))
            continue;
        const edge *e = &p->e[i]; /* its route from phase_hw */
        r->outstanding++;
        started++;
        if (e->route < 0 ||
            net_flow_route(r->n, e->route, p->bytes, p->max_Bps, 0,
                           flow_done, r, (uint64_t)i + 1) < 0) {
            if (e->route == NET_NOMEM)
                engine_fail(net_engine(r->n));
            r->failed = true;
            r->outstanding--;
            continue;
        }
#ifdef LLMSIM_CHECK
        r->sent_bytes += p->bytes;
#endif
    }
    r->flows += started;
    flow_done(eng, r, 0); /* drops the guard; an empty step moves on */
}

/* coll_start, handing back the run (so a caller whose engine failed can
 * free the runs that never finished). */
static int start(net *n, const coll_calib *cal, const coll_req *q,
                 route_memo *memo, engine_fn done, void *ctx, uint64_t arg,
                 run **out, llm_err *e)
{
    *out = NULL;
    run *r = calloc(1, sizeof *r);
    if (!r)
        return err_set(e, "out of memory");
    r->n = n;
    r->t = net_topo(n);
    r->rt = net_routes_of(n);
    r->cal = cal;
    r->algo = q->algo;
    r->proto = q->proto;
    r->done = done;
    r->ctx = ctx;
    r->arg = arg;
    r->fast = q->fast;
    r->memo = memo;
    r->step_begin_ns = engine_now(net_engine(n));
    int built = q->n < 2 || !coll_algo_applies(r->rt, q, q->algo)
                    ? -1
                    : build(r, q);
    if (built) {
        run_free(r);
        if (built == NET_NOMEM)
            return err_set(e, "out of memory");
        return err_set(e, "%s with algorithm %s does not apply to these %d "
                          "GPUs", coll_op_names[q->op],
                       coll_algo_names[q->algo], q->n);
    }
#ifdef LLMSIM_CHECK
    r->op = q->op;
    r->nranks = q->n;
    r->size = q->bytes;
    r->want_bytes = algo_bytes(r, q->op, q->n, q->bytes) / r->ch_kept;
#endif
    /* the first step's latency, plus the collective's launch */
    int64_t base = llround(cal->base_lat_us[r->algo][r->proto] * 1e3);
    engine_after(net_engine(n), base + step_delay(r, &r->ph[0]), launch_step,
                 r, 0);
    *out = r;
    return 0;
}

int coll_start(net *n, const coll_calib *cal, const coll_req *q,
               engine_fn done, void *ctx, uint64_t arg, llm_err *e)
{
    run *r;
    return start(n, cal, q, NULL, done, ctx, arg, &r, e);
}

/* Whether a collective's traffic crosses hardware class h (NVLink inside
 * a node, PCI inside a node, or the network). */
/* Whether the route between the first two ranks starts on NVLink: 1 or
 * 0, NET_NOMEM when memory ran out. */
static int first_hop_nvlink(net_routes *rt, const coll_req *q)
{
    const topo *t = net_routes_topo(rt);
    int links[32];
    int n = q->n > 1 ? net_route(rt, t->gpu_dev[q->ranks[0]],
                                 t->gpu_dev[q->ranks[1]], 0, links, 32)
                     : 0;
    return n == NET_NOMEM ? NET_NOMEM
                          : n > 0 && t->link[links[0]].kind == LINK_NVLINK;
}

static bool spans_nodes(const topo *t, const coll_req *q)
{
    int first = node_of(t, q->ranks[0]);
    bool multi = false;
    for (int i = 1; i < q->n; i++)
        multi |= node_of(t, q->ranks[i]) != first;
    return multi;
}

static bool uses_hw(net_routes *rt, const coll_req *q, int h)
{
    if (h == HW_NET)
        return spans_nodes(net_routes_topo(rt), q);
    bool nvl = first_hop_nvlink(rt, q) == 1;
    return h == HW_NVLINK ? nvl : !nvl;
}

const char *const coll_hw_names[HW_COUNT] = {"nvlink", "pcie", "network"};

coll_hw coll_fabric(net_routes *rt, const coll_req *q)
{
    return uses_hw(rt, q, HW_NET)      ? HW_NET
           : uses_hw(rt, q, HW_NVLINK) ? HW_NVLINK
                                       : HW_PCI;
}

/* ---- alone on an idle network -------------------------------------------- */

typedef struct alone {
    bool done;
} alone;

static void alone_done(engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    (void)arg;
    ((alone *)ctx)->done = true;
}

/* Keeps the COLL_TOP_LINKS most utilized links, by insertion. */
static void top_links(const topo *t, const net *n, coll_result *out)
{
    double T = out->time_s;
    for (int l = 0; l < t->nlink && T > 0; l++) {
        net_link_stats st = net_link(n, l);
        if (st.bytes <= 0)
            continue;
        coll_link_use u = {l, st.bytes, st.bytes / (net_link_bw(n, l) * T),
                           st.busy_ns * 1e-9 / T};
        int k = out->ntop < COLL_TOP_LINKS ? out->ntop++ : COLL_TOP_LINKS;
        if (k == COLL_TOP_LINKS && u.utilization <= out->top[k - 1].utilization)
            continue;
        if (k == COLL_TOP_LINKS)
            k--;
        while (k > 0 && out->top[k - 1].utilization < u.utilization) {
            out->top[k] = out->top[k - 1];
            k--;
        }
        out->top[k] = u;
    }
}

net *coll_idle_net(net_routes *rt, const coll_calib *cal, engine **eng)
{
    *eng = engine_create(1024);
    net *n = *eng ? net_take(*eng, rt, cal->link_eff) : NULL;
    if (!n) {
        engine_destroy(*eng);
        *eng = NULL;
        return NULL;
    }
    return n;
}

static int simulate(net_routes *rt, const coll_calib *cal, const coll_req *q,
                    route_memo *memo, coll_result *out, llm_err *e)
{
    engine *eng;
    net *n = coll_idle_net(rt, cal, &eng);
    if (!n)
        return err_set(e, "out of memory");
    alone a = {false};
    run *live;
    int rc = start(n, cal, q, memo, alone_done, &a, 0, &live, e);
    if (rc == 0) {
        engine_run(eng, INT64_MAX);
        if (engine_failed(eng))
            rc = err_set(e, "out of memory");
        else if (!a.done)
            rc = err_set(e, "%s did not complete (a route is missing)",
                         coll_op_names[q->op]);
    }
    out->time_s = engine_now(eng) * 1e-9;
    out->events = engine_events_run(eng);
    out->ntop = 0;
    if (q->links && rc == 0)
        top_links(net_routes_topo(rt), n, out);
    out->algo = q->algo;
    out->proto = q->proto;
    out->host_bound = false;
    if (live && !a.done)
        run_free(live); /* the engine stopped under it */
    net_give(n);
    engine_destroy(eng);
    return rc;
}

/* Steps of pipeline phase p in which some edge carries a chunk (edge e
 * at steps level_e .. level_e + K - 1): all of them when the edges'
 * levels leave no gap of K or more.  -1 when memory ran out. */
static int busy_steps(const phase *p)
{
    int span = p->lmax - p->lmin + 1, busy = 0;
    bool *has = calloc((size_t)span, sizeof(bool));
    if (!has)
        return -1;
    for (int k = 0; k < p->ne; k++)
        has[p->e[k].level - p->lmin] = true;
    for (int s = 0, last = -p->K; s < span + p->K - 1; s++) {
        if (s < span && has[s])
            last = s;
        busy += s - last < p->K;
    }
    free(has);
    return busy;
}

/* What bounds a phase's transfers that depends on its edges' routes
 * only, the same for every protocol of an algorithm (their phases have
 * the same edges): the most edges on one link over its achievable rate,
 * the fastest rate a flow's route allows, the shortest route latency,
 * the pipeline's busy steps. */
typedef struct route_bound {
    double edges_per_Bps, rate_hi, lat_lo_ns, busy;
} route_bound;

static bool route_bound_of(const run *r, const phase *p, double *count,
                           route_bound *b)
{
    const topo *t = r->t;
    *b = (route_bound){0, 0, -1, p->K > 0 ? busy_steps(p) : p->steps};
    if (b->busy < 0)
        return false;
    memset(count, 0, sizeof(double) * (size_t)t->nlink);
    for (int k = 0; k < p->ne; k++) {
        int route = p->e[k].route, h = route; /* phase_hw's lookup */
        if (route == NET_NOMEM)
            return false;
        const int *links =
            route >= 0 ? net_route_links(r->rt, route, &h) : NULL;
        double rate = INFINITY;
        for (int j = 0; j < h; j++) {
            const topo_link *l = &t->link[links[j]];
            count[links[j]] += 1;
            rate = fmin(rate, l->bw_Bps * r->cal->link_eff[l->kind]);
        }
        double lat = h > 0 ? (double)net_route_lat_ns(r->rt, route) : 0;
        b->rate_hi = h > 0 ? fmax(b->rate_hi, rate) : INFINITY;
        b->lat_lo_ns = b->lat_lo_ns < 0 ? lat : fmin(b->lat_lo_ns, lat);
    }
    for (int l = 0; l < t->nlink; l++) {
        double bw = t->link[l].bw_Bps * r->cal->link_eff[t->link[l].kind];
        if (count[l] > 0 && bw > 0 && count[l] / bw > b->edges_per_Bps)
            b->edges_per_Bps = count[l] / bw;
    }
    return !topo_dist_nomem(net_routes_dist(r->rt));
}

/* A time the collective cannot beat, from its phases without running
 * them: the launch, every step's wait (step_delay), and per phase the
 * larger of two bounds on its steps' transfers.  Each step lasts at least
 * as long as the bytes it puts on any one link take at that link's
 * achievable rate, so the steps' sum is at least the phase's bytes on its
 * busiest link over that link's rate; and each step in which a flow runs
 * lasts at least as long as a flow's bytes take at the fastest rate any
 * of its flows may reach (its rate limit, its route's slowest link), plus
 * the shortest route latency a flow adds at its end (a pipeline's; a
 * ring's flows add none).  rb: the phases' route_bound, filled when
 * *have is false (the algorithm's first protocol), else reused; scratch:
 * [t->nlink].  -1 when the algorithm does not apply (its simulation
 * says why), LB_NOMEM when memory ran out. */
#define LB_NOMEM (-2.0)
static double lower_bound_s(net_routes *rt, const coll_calib *cal,
                            const coll_req *q, route_memo *memo,
                            route_bound *rb, bool *have, double *scratch)
{
    const topo *t = net_routes_topo(rt);
    run *r = calloc(1, sizeof *r);
    if (!r)
        return LB_NOMEM;
    *r = (run){.t = t, .rt = rt, .cal = cal, .algo = q->algo,
               .proto = q->proto, .memo = memo};
    int built = build(r, q);
    if (built) {
        run_free(r);
        return built == NET_NOMEM ? LB_NOMEM : -1;
    }
    double ns = cal->base_lat_us[r->algo][r->proto] * 1e3, xfer_s = 0;
    for (int i = 0; i < r->nph; i++) {
        const phase *p = &r->ph[i];
        if (!*have && !route_bound_of(r, p, scratch, &rb[i])) {
            run_free(r);
            return LB_NOMEM;
        }
        if (p->steps <= 0 || p->ne == 0)
            continue;
        /* the first step waits the phase's start-up as well */
        for (r->step = 0; r->step < 2 && r->step < p->steps; r->step++)
            ns += (double)step_delay(r, p) * (r->step ? p->steps - 1 : 1);
        /* every edge carries p->bytes at each step (a ring) or once per
         * chunk (a pipeline) */
        double per_edge = p->bytes * (p->K > 0 ? p->K : p->steps);
        double rate = p->max_Bps > 0 ? fmin(p->max_Bps, rb[i].rate_hi)
                                     : rb[i].rate_hi;
        double step_s = (rate > 0 && isfinite(rate) ? p->bytes / rate : 0) +
                        (p->ring ? 0 : rb[i].lat_lo_ns * 1e-9);
        xfer_s += fmax(per_edge * rb[i].edges_per_Bps, rb[i].busy * step_s);
    }
    *have = true;
    run_free(r);
    return ns * 1e-9 + xfer_s;
}

/* One candidate of an automatic choice, with what bounds its time. */
typedef struct candidate {
    coll_algo algo;
    coll_proto proto;
    double bound_s;
} candidate;

/* The (algorithm, protocol) pairs q names or auto tries, in NCCL's order
 * (the order ties are broken in); returns how many, NET_NOMEM when memory
 * ran out. */
static int candidates(net_routes *rt, const coll_calib *cal, const coll_req *q,
                      candidate *out)
{
    coll_req c = *q;
    int nc = 0, nvl = first_hop_nvlink(rt, q);
    if (nvl == NET_NOMEM)
        return NET_NOMEM;
    bool used[HW_COUNT] = {[HW_NET] = spans_nodes(net_routes_topo(rt), q),
                           [HW_NVLINK] = nvl, [HW_PCI] = !nvl};
    int a0 = q->algo == ALGO_AUTO ? 0 : q->algo;
    int a1 = q->algo == ALGO_AUTO ? ALGO_COUNT : q->algo + 1;
    for (int a = a0; a < a1; a++) {
        c.algo = (coll_algo)a;
        /* NCCL has no hierarchical algorithm: auto chooses among NCCL's */
        if (!coll_algo_applies(rt, &c, c.algo) ||
            (q->algo == ALGO_AUTO && a == ALGO_HIER))
            continue;
        int p0 = q->proto == PROTO_AUTO ? 0 : q->proto;
        int p1 = q->proto == PROTO_AUTO ? PROTO_COUNT : q->proto + 1;
        for (int p = p0; p < p1; p++) {
            if (q->proto == PROTO_AUTO && a == ALGO_NVLS && p != PROTO_SIMPLE)
                continue; /* NVLS runs the Simple protocol only */
            bool ok = true;
            for (int h = 0; q->proto == PROTO_AUTO && h < HW_COUNT; h++)
                ok = ok && (cal->proto_ok[h][p] || !used[h]);
            if (ok)
                out[nc++] = (candidate){(coll_algo)a, (coll_proto)p, 0};
        }
    }
    return nc;
}

/* The candidates' indices by lower bound, equal bounds in NCCL's order
 * (insertion sort: a dozen at most). */
static void order_by_bound(const candidate *cand, int nc, int *order)
{
    for (int i = 0; i < nc; i++) {
        int j = i;
        for (; j > 0 && cand[order[j - 1]].bound_s > cand[i].bound_s; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
}

/* coll_time_alone with the memo of each algorithm's routes. */
static int time_alone(net_routes *rt, const coll_calib *cal, const coll_req *q,
                      route_memo *memo, coll_result *out, llm_err *e)
{
    coll_req c = *q;
    c.fast = !q->full && !q->links;
    candidate cand[ALGO_COUNT * PROTO_COUNT];
    int order[ALGO_COUNT * PROTO_COUNT];
    int nc = candidates(rt, cal, q, cand);
    if (nc == NET_NOMEM)
        return err_set(e, "out of memory");
    /* Several candidates: each one's lower bound first, then the
     * simulations from the lowest bound up; one whose bound is above the
     * fastest time so far cannot win and is not simulated.  The choice is
     * the one simulating them all would make: the fastest, ties to the
     * first in NCCL's order. */
    if (nc > 1) {
        double *scratch = malloc(sizeof(double) *
                                 (size_t)net_routes_topo(rt)->nlink);
        if (!scratch)
            return err_set(e, "out of memory");
        route_bound rb[MAX_PHASES];
        bool have = false;
        for (int i = 0; i < nc; i++) {
            c.algo = cand[i].algo, c.proto = cand[i].proto;
            have = have && i > 0 && cand[i - 1].algo == c.algo;
            cand[i].bound_s = lower_bound_s(rt, cal, &c, &memo[c.algo], rb,
                                            &have, scratch);
            if (cand[i].bound_s == LB_NOMEM) {
                free(scratch);
                return err_set(e, "out of memory");
            }
        }
        free(scratch);
    }
    order_by_bound(cand, nc, order);
    bool found = false;
    int best = -1;
    uint64_t events = 0;
    for (int k = 0; k < nc; k++) {
        int i = order[k];
        if (found && cand[i].bound_s > out->time_s)
            continue;
        c.algo = cand[i].algo, c.proto = cand[i].proto;
        coll_result r;
        if (simulate(rt, cal, &c, &memo[c.algo], &r, e))
            return -1;
        events += r.events;
        if (!found || r.time_s < out->time_s ||
            (r.time_s == out->time_s && i < best)) {
            *out = r;
            best = i;
            found = true;
        }
    }
    out->events = events;
    double host_s = q->host_gpus * cal->call_us * 1e-6;
    if (found && host_s > out->time_s) {
        out->time_s = host_s;
        out->host_bound = true;
    }
    if (!found && topo_dist_nomem(net_routes_dist(rt)))
        return err_set(e, "out of memory");
    if (!found && q->algo != ALGO_AUTO)
        return err_set(e, "--algo %s does not apply to %s on these %d GPUs "
                          "(%s needs %s; expected --algo auto)",
                       coll_algo_names[q->algo], coll_op_names[q->op], q->n,
                       coll_algo_names[q->algo], algo_needs[q->algo]);
    if (!found)
        return err_set(e, "no algorithm applies to %s on these %d GPUs",
                       coll_op_names[q->op], q->n);
    return 0;
}

int coll_time_alone(net_routes *rt, const coll_calib *cal, const coll_req *q,
                    coll_result *out, llm_err *e)
{
    route_memo memo[ALGO_COUNT] = {0};
    int rc = time_alone(rt, cal, q, memo, out, e);
    memo_free(memo, ALGO_COUNT);
    return rc;
}

typedef struct together {
    int left;
    run **live; /* [n]: NULL once finished (it freed itself) */
} together;

static void together_done(engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    together *tg = ctx;
    tg->left--;
    tg->live[arg] = NULL;
}

int coll_time_together(net_routes *rt, const coll_calib *cal,
                       const coll_req *r, int n, double *time_s,
                       double *link_bytes, uint64_t *events, llm_err *e)
{
    const topo *t = net_routes_topo(rt);
    engine *eng;
    net *nt = coll_idle_net(rt, cal, &eng);
    if (!nt)
        return err_set(e, "out of memory");
    together tg = {n, calloc((size_t)(n ? n : 1), sizeof(run *))};
    int rc = tg.live ? 0 : err_set(e, "out of memory");
    /* one collective is alone on the network: its identical steps are
     * skipped as coll_time_alone skips them, their bytes credited to the
     * links the flows would have crossed */
    double *skipped = n == 1 && !r[0].full && link_bytes
                          ? calloc((size_t)t->nlink, sizeof(double))
                          : NULL;
    if (n == 1 && !r[0].full && link_bytes && !skipped)
        rc = err_set(e, "out of memory");
    for (int i = 0; i < n && rc == 0; i++) {
        coll_req q = r[i];
        q.fast = n == 1 && !q.full && (skipped || !link_bytes);
        rc = start(nt, cal, &q, NULL, together_done, &tg, (uint64_t)i,
                   &tg.live[i],
                   e);
        if (rc == 0 && q.fast)
            tg.live[i]->skip_link_bytes = skipped;
    }
    if (rc == 0) {
        engine_run(eng, INT64_MAX);
        if (engine_failed(eng))
            rc = err_set(e, "out of memory");
        else if (tg.left != 0)
            rc = err_set(e, "collectives did not complete");
    }
    *time_s = engine_now(eng) * 1e-9;
    if (events)
        *events = engine_events_run(eng);
    for (int l = 0; link_bytes && rc == 0 && l < t->nlink; l++)
        link_bytes[l] += net_link(nt, l).bytes + (skipped ? skipped[l] : 0);
    free(skipped);
    for (int i = 0; tg.live && i < n; i++)
        if (tg.live[i])
            run_free(tg.live[i]); /* never finished: the engine failed */
    free(tg.live);
    net_give(nt);
    engine_destroy(eng);
    return rc;
}

/* ---- what a simulation costs --------------------------------------------- */

/* Engine events per flow (its bytes' completion, its delivery, its share
 * of the rate solves) and per simulated step (launch and advance), fitted
 * to measured counts (tests/unit/test_budget.c); a step that is not a
 * ring's waits out its flows' route latency with one event more. */
#define EVENTS_PER_FLOW 2.0
#define EVENTS_PER_STEP 3.0

typedef struct sim_cost {
    double flows, steps, width;
    double ends; /* steps ended after their flows' latency */
} sim_cost;

/* A phase of `steps` identical steps of `edges` flows each; run fast, two
 * of them are simulated and the rest skipped (skip_ahead). */
static void cost_ring(sim_cost *c, double edges, double steps, bool fast)
{
    double simulated = fast && steps >= 3 ? 2 : steps;
    c->flows += edges * simulated;
    c->steps += simulated;
    if (steps == 1) /* one step: not a ring's (phase.ring) */
        c->ends += 1;
    if (steps > 0 && edges > c->width)
        c->width = edges;
}

/* A pipeline of K chunks over `edges` edges whose levels span L steps:
 * every edge carries each chunk, L + K steps; run fast (when the run of
 * identical steps is long enough to skip), the fill and the drain only,
 * each edge on L + 2 of them. */
static void cost_pipe(sim_cost *c, double edges, double L, double K,
                      bool fast)
{
    bool skip = fast && K >= L + 3;
    c->flows += edges * (skip ? L + 2 : K);
    c->steps += skip ? 2 * L + 2 : L + K;
    c->ends += skip ? 2 * L + 2 : L + K;
    if (edges > c->width)
        c->width = edges;
}

/* The flows and steps of algorithm a's phases on shape s (build_ring,
 * build_chain, build_tree, ... in closed form). */
static sim_cost algo_cost(const coll_calib *cal, coll_op op, coll_algo a,
                          const coll_shape *s, double bytes, bool fast)
{
    sim_cost c = {0, 0, 0, 0};
    double n = s->n, nn = s->nodes, g = n / nn;
    double ch = nn > 1 && s->nics > 0 ? s->nics : 1;
    switch (a) {
    case ALGO_RING:
        if (op == COLL_BROADCAST || op == COLL_REDUCE)
            cost_pipe(&c, n - 1, n - 2, fmax(ceil(bytes / cal->chunk_bytes), 1),
                      fast);
        else
            cost_ring(&c, n * ch, (op == COLL_ALL_REDUCE ? 2 : 1) * (n - 1),
                      fast);
        break;
    case ALGO_TREE: {
        /* the deepest vertex: a node at the bottom of the binary tree, the
         * last GPU of its chain */
        double H = floor(log2(nn)) + g - 1;
        cost_pipe(&c, 4 * ch * (n - 1), 2 * H - 1,
                  fmax(ceil(bytes / 2 / ch / cal->chunk_bytes), 1), fast);
        break;
    }
    case ALGO_HIER:
    case ALGO_SHARP:
        cost_ring(&c, n, g - 1, fast);
        if (a == ALGO_HIER)
            cost_ring(&c, n, 2 * (nn - 1), fast);
        else
            cost_ring(&c, 2 * n, 1, fast);
        cost_ring(&c, n, g - 1, fast);
        break;
    case ALGO_NVLS:
        cost_ring(&c, 2 * n, 1, fast);
        break;
    default:
        cost_ring(&c, op == COLL_SEND_RECV ? n : n * (n - 1), 1, fast);
    }
    return c;
}

/* coll_algo_applies on a shape. */
static bool shape_applies(coll_op op, coll_algo a, const coll_shape *s)
{
    bool multi = s->nodes > 1, ar = op == COLL_ALL_REDUCE;
    switch (a) {
    case ALGO_RING:
        return ar || op == COLL_REDUCE_SCATTER || op == COLL_ALL_GATHER ||
               op == COLL_BROADCAST || op == COLL_REDUCE;
    case ALGO_TREE:
    case ALGO_HIER:
        return ar && multi;
    case ALGO_NVLS:
        return ar && !multi && s->nvls;
    case ALGO_SHARP:
        return ar && multi && s->sharp;
    default:
        return op == COLL_ALL_TO_ALL || op == COLL_SEND_RECV;
    }
}

/* Whether auto tries protocol p on shape s (the proto_ok filter of
 * coll_time_alone over the hardware classes the ranks span). */
static bool shape_proto_ok(const coll_calib *cal, const coll_shape *s, int p)
{
    return (s->nodes <= 1 || cal->proto_ok[HW_NET][p]) &&
           cal->proto_ok[s->nvlink ? HW_NVLINK : HW_PCI][p];
}

coll_sim_cost coll_sim_estimate(const coll_calib *cal, coll_op op,
                                coll_algo algo, coll_proto proto,
                                const coll_shape *s, double bytes, bool fast)
{
    coll_sim_cost k = {0, 0, 0};
    int a0 = algo == ALGO_AUTO ? 0 : algo;
    int a1 = algo == ALGO_AUTO ? ALGO_COUNT : algo + 1;
    for (int a = a0; s->n >= 2 && s->nodes >= 1 && a < a1; a++) {
        if (!shape_applies(op, (coll_algo)a, s) ||
            (algo == ALGO_AUTO && a == ALGO_HIER))
            continue;
        int p0 = proto == PROTO_AUTO ? 0 : proto;
        int p1 = proto == PROTO_AUTO ? PROTO_COUNT : proto + 1;
        for (int p = p0; p < p1; p++) {
            if (proto == PROTO_AUTO &&
                ((a == ALGO_NVLS && p != PROTO_SIMPLE) ||
                 !shape_proto_ok(cal, s, p)))
                continue;
            sim_cost c = algo_cost(cal, op, (coll_algo)a, s, bytes, fast);
            k.events += EVENTS_PER_FLOW * c.flows + EVENTS_PER_STEP * c.steps +
                        c.ends;
            k.sims++;
            if (c.width > k.max_flows)
                k.max_flows = c.width;
        }
    }
    return k;
}
