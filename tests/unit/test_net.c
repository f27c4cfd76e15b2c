/* Network and collectives against closed forms: max-min textbook cases,
 * the ring all-reduce formula, conservation of bytes, link capacities. */
#include <stdlib.h>

#include "coll/coll.h"
#include "hw/net.h"
#include "test_util.h"

#define GB 1e9

static gpu_spec test_gpu = {.name = "test"};

static int dev(topo_nodespec *s, const char *name, topo_dev_kind k, int n)
{
    topo_devspec *d = &s->dev[s->ndev];
    snprintf(d->name, sizeof d->name, "%s", name);
    d->kind = k;
    d->count = n;
    return s->ndev++;
}

static void lnk(topo_nodespec *s, int a, int b, topo_map m, topo_link_kind k,
                double bw, int64_t lat)
{
    s->link[s->nlink++] = (topo_linkspec){a, b, m, k, bw, lat, 0};
}

static topo *build(topo_nodespec *s, int nodes, topo_fabric f)
{
    char why[256];
    s->p2p = true;
    s->gpudirect = true;
    topo_fabricspec fab = {f, 0, 1.0, 0, false, false};
    topo *t = topo_build(s, &test_gpu, nodes, &fab, why, sizeof why);
    if (!t)
        print_error("%s\n", why);
    assert_non_null(t);
    return t;
}

/* n GPUs on one ideal switch, bandwidth bw per direction, no latency */
static topo *star(int n, double bw)
{
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    int g = dev(&s, "gpu", DEV_GPU, n), sw = dev(&s, "sw", DEV_NVSWITCH, 1);
    lnk(&s, g, sw, MAP_ALL, LINK_NVLINK, bw, 0);
    return build(&s, 1, FABRIC_RAIL);
}

typedef struct done_log {
    int n;
    int64_t t[8];
} done_log;

static void on_done(engine *e, void *ctx, uint64_t arg)
{
    done_log *d = ctx;
    d->t[arg] = engine_now(e);
    d->n++;
}

/* Two flows on one link get half each: 1 GB each at 0.5 GB/s -> 2 s. */
static void test_two_flows_share(void **state)
{
    (void)state;
    topo *t = star(2, GB);
    engine *e = engine_create(16);
    net *n = net_create(e, R(t));
    done_log d = {0};
    net_flow(n, t->gpu_dev[0], t->gpu_dev[1], GB, 0, on_done, &d, 0);
    net_flow(n, t->gpu_dev[0], t->gpu_dev[1], GB, 1, on_done, &d, 1);
    engine_run(e, INT64_MAX);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.t[0], 2000000000);
    assert_int_equal(d.t[1], 2000000000);
    assert_true(net_bytes_started(n) == net_bytes_delivered(n));
    assert_true(net_max_link_load(n) <= 1 + 1e-9);
    net_link_stats st = net_link(n, 0); /* gpu0 -> sw carried both */
    assert_true(st.bytes == 2 * GB);
    assert_int_equal(st.busy_ns, 2000000000);
    net_destroy(n);
    engine_destroy(e);
    test_topo_destroy(t);
}

/* A flow bottlenecked elsewhere leaves the rest to the other: gpu0 sends to
 * a fast peer and to a peer behind a 0.25 GB/s link; the slow flow gets
 * 0.25, the fast one the remaining 0.75 of gpu0's 1 GB/s uplink. */
static void test_bottleneck_elsewhere(void **state)
{
    (void)state;
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    int fast = dev(&s, "gpu", DEV_GPU, 2), slow = dev(&s, "slow", DEV_GPU, 1);
    int sw = dev(&s, "sw", DEV_PCIE_SWITCH, 1);
    lnk(&s, fast, sw, MAP_ALL, LINK_PCIE, GB, 0);
    lnk(&s, slow, sw, MAP_ALL, LINK_PCIE, 0.25 * GB, 0);
    topo *t = build(&s, 1, FABRIC_RAIL);
    engine *e = engine_create(16);
    net *n = net_create(e, R(t));
    done_log d = {0};
    int a = net_flow(n, t->gpu_dev[0], t->gpu_dev[1], 3 * GB, 0, on_done, &d, 0);
    int b = net_flow(n, t->gpu_dev[0], t->gpu_dev[2], GB, 0, on_done, &d, 1);
    engine_run(e, 1); /* let the solver run */
    assert_close(net_flow_rate(n, a), 0.75 * GB, 1e-12);
    assert_close(net_flow_rate(n, b), 0.25 * GB, 1e-12);
    engine_run(e, INT64_MAX);
    /* both end at 4 s: 3 GB at 0.75, 1 GB at 0.25 */
    assert_int_equal(d.t[0], 4000000000);
    assert_int_equal(d.t[1], 4000000000);
    net_destroy(n);
    engine_destroy(e);
    test_topo_destroy(t);
}

/* A flow with its own limit (a kernel's throughput) takes that and leaves
 * the rest of the link to the other: 0.2 and 0.8 GB/s. */
static void test_capped_flow(void **state)
{
    (void)state;
    topo *t = star(2, GB);
    engine *e = engine_create(16);
    net *n = net_create(e, R(t));
    done_log d = {0};
    int a = net_flow_capped(n, t->gpu_dev[0], t->gpu_dev[1], GB, 0, 0.2 * GB,
                            on_done, &d, 0);
    int b = net_flow(n, t->gpu_dev[0], t->gpu_dev[1], GB, 1, on_done, &d, 1);
    engine_run(e, 1);
    assert_close(net_flow_rate(n, a), 0.2 * GB, 1e-12);
    assert_close(net_flow_rate(n, b), 0.8 * GB, 1e-12);
    engine_run(e, INT64_MAX);
    /* b ends at 1.25 s; a has 0.75 GB left, still capped: 1.25 + 3.75 */
    assert_int_equal(d.t[1], 1250000000);
    assert_int_equal(d.t[0], 5000000000);
    net_destroy(n);
    engine_destroy(e);
    test_topo_destroy(t);
}

/* Three flows on a chain of two links (capacities 1 and 2): flow 0 crosses
 * both, flow 1 only the first, flow 2 only the second.  Max-min: flows 0
 * and 1 split link 1 (1/2 each); flow 2 gets 2 - 1/2 = 3/2. */
static void test_chain_three_flows(void **state)
{
    (void)state;
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    int ga = dev(&s, "ga", DEV_GPU, 1), gb = dev(&s, "gb", DEV_GPU, 1);
    int gc = dev(&s, "gc", DEV_GPU, 1);
    int sa = dev(&s, "sa", DEV_PCIE_SWITCH, 1);
    int sb = dev(&s, "sb", DEV_PCIE_SWITCH, 1);
    int sc = dev(&s, "sc", DEV_PCIE_SWITCH, 1);
    lnk(&s, ga, sa, MAP_ONE, LINK_PCIE, 100 * GB, 0);
    lnk(&s, gb, sb, MAP_ONE, LINK_PCIE, 100 * GB, 0);
    lnk(&s, gc, sc, MAP_ONE, LINK_PCIE, 100 * GB, 0);
    lnk(&s, sa, sb, MAP_ONE, LINK_PCIE, 1 * GB, 0);
    lnk(&s, sb, sc, MAP_ONE, LINK_PCIE, 2 * GB, 0);
    topo *t = build(&s, 1, FABRIC_RAIL);
    engine *e = engine_create(16);
    net *n = net_create(e, R(t));
    done_log d = {0};
    int f0 = net_flow(n, t->gpu_dev[0], t->gpu_dev[2], GB, 0, on_done, &d, 0);
    int f1 = net_flow(n, t->gpu_dev[0], t->gpu_dev[1], GB, 0, on_done, &d, 1);
    int f2 = net_flow(n, t->gpu_dev[1], t->gpu_dev[2], GB, 0, on_done, &d, 2);
    engine_run(e, 1);
    assert_close(net_flow_rate(n, f0), 0.5 * GB, 1e-12);
    assert_close(net_flow_rate(n, f1), 0.5 * GB, 1e-12);
    assert_close(net_flow_rate(n, f2), 1.5 * GB, 1e-12);
    engine_run(e, INT64_MAX);
    assert_true(net_max_link_load(n) <= 1 + 1e-9);
    assert_true(net_bytes_started(n) == net_bytes_delivered(n));
    net_destroy(n);
    engine_destroy(e);
    test_topo_destroy(t);
}

static coll_calib ideal_calib(double alpha_us)
{
    coll_calib c;
    memset(&c, 0, sizeof c);
    for (int h = 0; h < HW_COUNT; h++)
        for (int a = 0; a < ALGO_COUNT; a++)
            for (int p = 0; p < PROTO_COUNT; p++) {
                c.hw_lat_us[h][a][p] = alpha_us;
                c.proto_ok[h][p] = true;
            }
    for (int p = 0; p < PROTO_COUNT; p++)
        c.proto_eff[p] = 1;
    for (int k = 0; k < LINK_KIND_COUNT; k++)
        c.link_eff[k] = 1;
    c.nvls_eff = 1;
    c.chunk_bytes = 1 << 20;
    return c;
}

/* Ring all-reduce of S bytes on n GPUs behind one ideal switch:
 * 2(n-1)/n · S/B + 2(n-1)·α exactly. */
static void test_ring_allreduce_closed_form(void **state)
{
    (void)state;
    for (int n = 2; n <= 16; n *= 2) {
        topo *t = star(n, GB);
        coll_calib cal = ideal_calib(5.0);
        int ranks[16];
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        double S = n * 1e6; /* S/(nB) = 1 ms exactly */
        coll_req q = {.op = COLL_ALL_REDUCE, .algo = ALGO_RING,
                      .proto = PROTO_SIMPLE, .ranks = ranks, .n = n,
                      .bytes = S, .full = true};
        coll_result r;
        llm_err e;
        assert_int_equal(coll_time_alone(R(t), &cal, &q, &r, &e), 0);
        double want = 2.0 * (n - 1) / n * S / GB + 2.0 * (n - 1) * 5e-6;
        assert_close(r.time_s, want, 1e-12);
        /* all-gather: (n-1)/n · S/B + (n-1)·α */
        q.op = COLL_ALL_GATHER;
        assert_int_equal(coll_time_alone(R(t), &cal, &q, &r, &e), 0);
        assert_close(r.time_s, (n - 1.0) / n * S / GB + (n - 1) * 5e-6, 1e-12);
        test_topo_destroy(t);
    }
}

/* Pipelined broadcast over a chain of n GPUs in K chunks takes
 * (n - 2 + K) chunk-steps. */
static void test_broadcast_pipeline(void **state)
{
    (void)state;
    topo *t = star(4, GB);
    coll_calib cal = ideal_calib(0);
    cal.chunk_bytes = 1e6;
    int ranks[4] = {0, 1, 2, 3};
    coll_req q = {.op = COLL_BROADCAST, .algo = ALGO_RING,
                  .proto = PROTO_SIMPLE, .ranks = ranks, .n = 4, .bytes = 8e6};
    coll_result r;
    llm_err e;
    assert_int_equal(coll_time_alone(R(t), &cal, &q, &r, &e), 0);
    assert_close(r.time_s, (4 - 2 + 8) * 1e-3, 1e-12);
    test_topo_destroy(t);
}

/* Two nodes of two GPUs with one NIC each: two all-reduces at once (one
 * per local GPU) share the NICs and take longer than one alone. */
static void test_concurrent_allreduce_share_nic(void **state)
{
    (void)state;
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    int g = dev(&s, "gpu", DEV_GPU, 2), sw = dev(&s, "pcie", DEV_PCIE_SWITCH, 1);
    int nic = dev(&s, "nic", DEV_NIC, 1);
    lnk(&s, g, sw, MAP_ALL, LINK_PCIE, 32 * GB, 100);
    lnk(&s, nic, sw, MAP_ALL, LINK_PCIE, 32 * GB, 100);
    s.nic_bw_Bps = 12.5 * GB;
    s.nic_lat_ns = 1000;
    topo *t = build(&s, 2, FABRIC_SINGLE);
    coll_calib cal = ideal_calib(1.0);
    int a[2] = {0, 2}, b[2] = {1, 3};
    coll_req qa = {.op = COLL_ALL_REDUCE, .algo = ALGO_RING,
                   .proto = PROTO_SIMPLE, .ranks = a, .n = 2, .bytes = 1e9};
    coll_req qb = qa;
    qb.ranks = b;
    coll_result alone;
    llm_err e;
    assert_int_equal(coll_time_alone(R(t), &cal, &qa, &alone, &e), 0);

    engine *eng = engine_create(64);
    net *n = net_create(eng, R(t));
    done_log d = {0};
    assert_int_equal(coll_start(n, &cal, &qa, on_done, &d, 0, &e), 0);
    assert_int_equal(coll_start(n, &cal, &qb, on_done, &d, 1, &e), 0);
    engine_run(eng, INT64_MAX);
    assert_int_equal(d.n, 2);
    double both = engine_now(eng) * 1e-9;
    /* they share each NIC: close to twice as long, never faster */
    assert_true(both > 1.9 * alone.time_s);
    assert_true(net_bytes_started(n) == net_bytes_delivered(n));
    assert_true(net_max_link_load(n) <= 1 + 1e-9);
    net_destroy(n);
    engine_destroy(eng);
    test_topo_destroy(t);
}

/* Routes: across nodes through the GPU's own NIC; with p2p off, GPU to GPU
 * inside a node goes through the CPU. */
static void test_routes(void **state)
{
    (void)state;
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    int g = dev(&s, "gpu", DEV_GPU, 4), sw = dev(&s, "pcie", DEV_PCIE_SWITCH, 2);
    int cpu = dev(&s, "cpu", DEV_CPU, 1), nic = dev(&s, "nic", DEV_NIC, 2);
    lnk(&s, g, sw, MAP_BLOCK, LINK_PCIE, 32 * GB, 100);
    lnk(&s, nic, sw, MAP_BLOCK, LINK_PCIE, 32 * GB, 100);
    lnk(&s, sw, cpu, MAP_BLOCK, LINK_PCIE, 32 * GB, 100);
    s.nic_bw_Bps = 25 * GB;
    topo *t = build(&s, 2, FABRIC_RAIL);
    int links[32];
    /* gpu 2 (second PCIe switch) to gpu 6 (same position, node 1) */
    int h = net_route(R(t), t->gpu_dev[2], t->gpu_dev[6], 0, links, 32);
    assert_int_equal(h, 6); /* gpu-pcie-nic-rail-nic-pcie-gpu */
    assert_int_equal(t->link[links[2]].kind, LINK_NETWORK);
    assert_int_equal(t->dev[t->link[links[1]].dst].local, 1); /* nic 1 */
    /* inside a node, gpu 0 to gpu 3 crosses the CPU */
    h = net_route(R(t), t->gpu_dev[0], t->gpu_dev[3], 0, links, 32);
    assert_int_equal(h, 4);
    assert_int_equal(t->dev[t->link[links[1]].dst].kind, DEV_CPU);
    test_topo_destroy(t);
}

/* map "all" within one group is a full mesh: every pair once, none to
 * itself (it once doubled each pair's bandwidth and added self-loops). */
static void test_mesh_within_group(void **state)
{
    (void)state;
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    int g = dev(&s, "gpu", DEV_GPU, 4);
    lnk(&s, g, g, MAP_ALL, LINK_NVLINK, 50 * GB, 0);
    topo *t = build(&s, 1, FABRIC_RAIL);
    assert_int_equal(t->nlink, 4 * 3); /* 6 pairs, both directions */
    for (int i = 0; i < t->nlink; i++)
        assert_int_not_equal(t->link[i].src, t->link[i].dst);
    int links[8];
    assert_int_equal(net_route(R(t), t->gpu_dev[0], t->gpu_dev[3], 0, links,
                               8), 1);
    test_topo_destroy(t);
}

/* Three nodes of 4 GPUs on an NVSwitch, 2 NICs behind PCIe switches, on
 * rails; NICs of 25 GB/s and per-hop latencies.  ranks[12]: the GPUs in
 * order, a communicator of all of them. */
static topo *three_rail_nodes(int *ranks)
{
    for (int i = 0; i < 12; i++)
        ranks[i] = i;
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    int g = dev(&s, "gpu", DEV_GPU, 4), sw = dev(&s, "nvsw", DEV_NVSWITCH, 1);
    int pc = dev(&s, "pcie", DEV_PCIE_SWITCH, 2), nic = dev(&s, "nic", DEV_NIC, 2);
    lnk(&s, g, sw, MAP_ALL, LINK_NVLINK, 300 * GB, 300);
    lnk(&s, g, pc, MAP_BLOCK, LINK_PCIE, 31.5 * GB, 500);
    lnk(&s, nic, pc, MAP_BLOCK, LINK_PCIE, 31.5 * GB, 500);
    s.nic_bw_Bps = 25 * GB;
    s.nic_lat_ns = 600;
    return build(&s, 3, FABRIC_RAIL);
}

/* Skipping identical steps on an idle network -- a ring's, a tree
 * pipeline's between its fill and its drain -- gives exactly the
 * step-by-step time, for every algorithm that applies, on three nodes
 * with NICs and per-hop latencies, in fewer events. */
static void test_fast_equals_full(void **state)
{
    (void)state;
    int ranks[12];
    topo *t = three_rail_nodes(ranks);
    coll_calib cal = ideal_calib(3.0);
    int tried = 0, skipped = 0;
    for (int a = 0; a < ALGO_COUNT; a++) {
        coll_req q = {.op = COLL_ALL_REDUCE, .algo = (coll_algo)a,
                      .proto = PROTO_SIMPLE, .ranks = ranks, .n = 12,
                      .bytes = 3e8};
        if (!coll_algo_applies(R(t), &q, q.algo))
            continue;
        coll_result fast, full;
        llm_err e;
        assert_int_equal(coll_time_alone(R(t), &cal, &q, &fast, &e), 0);
        q.full = true;
        assert_int_equal(coll_time_alone(R(t), &cal, &q, &full, &e), 0);
        assert_true(fast.time_s == full.time_s);
        assert_true(fast.events <= full.events);
        tried++;
        skipped += fast.events < full.events;
        if (a == ALGO_RING)
            /* the network, not NVLink, is the bottleneck: 2 NICs per node
             * carry 2(n-1)/n of S per direction at 25 GB/s each */
            assert_true(full.time_s > 2.0 * 11 / 12 * 3e8 / (2 * 25 * GB));
    }
    assert_true(tried >= 3); /* ring, tree, hierarchical at least */
    assert_int_equal(skipped, tried);
    test_topo_destroy(t);
}

/* One collective alone through coll_time_together skips its identical
 * steps and credits their bytes to the links its flows would cross: the
 * time and every link's bytes are those of the step-by-step run, for each
 * algorithm, in fewer events. */
static void test_together_alone_credits_links(void **state)
{
    (void)state;
    int ranks[12];
    topo *t = three_rail_nodes(ranks);
    coll_calib cal = ideal_calib(3.0);
    double *fast_b = calloc((size_t)t->nlink, sizeof(double));
    double *full_b = calloc((size_t)t->nlink, sizeof(double));
    assert_non_null(fast_b);
    assert_non_null(full_b);
    int tried = 0;
    for (int a = 0; a < ALGO_COUNT; a++) {
        coll_req q = {.op = COLL_ALL_REDUCE, .algo = (coll_algo)a,
                      .proto = PROTO_SIMPLE, .ranks = ranks, .n = 12,
                      .bytes = 3e8};
        if (!coll_algo_applies(R(t), &q, q.algo))
            continue;
        memset(fast_b, 0, sizeof(double) * (size_t)t->nlink);
        memset(full_b, 0, sizeof(double) * (size_t)t->nlink);
        double fast_s, full_s, sum = 0;
        uint64_t fast_ev, full_ev;
        llm_err e;
        assert_int_equal(coll_time_together(R(t), &cal, &q, 1, &fast_s,
                                            fast_b, &fast_ev, &e), 0);
        q.full = true;
        assert_int_equal(coll_time_together(R(t), &cal, &q, 1, &full_s,
                                            full_b, &full_ev, &e), 0);
        assert_true(fast_s == full_s);
        assert_true(fast_ev < full_ev);
        for (int l = 0; l < t->nlink; l++) {
            assert_close(fast_b[l], full_b[l], 1e-12);
            sum += full_b[l];
        }
        assert_true(sum > 3e8); /* the links did carry the collective */
        tried++;
    }
    assert_true(tried >= 3);
    free(fast_b);
    free(full_b);
    test_topo_destroy(t);
}

/* A network handed back and taken again (net_give, net_take) is as new:
 * a collective run after another on the pooled network takes the same
 * time and events and puts the same bytes on the same links as on a
 * network that never ran anything. */
static void test_pooled_net_as_new(void **state)
{
    (void)state;
    int ranks[12];
    topo *t = three_rail_nodes(ranks);
    coll_calib cal = ideal_calib(3.0);
    coll_req first = {.op = COLL_ALL_REDUCE, .algo = ALGO_TREE,
                      .proto = PROTO_SIMPLE, .ranks = ranks, .n = 12,
                      .bytes = 3e8};
    coll_req then = {.op = COLL_ALL_GATHER, .algo = ALGO_RING,
                     .proto = PROTO_LL128, .ranks = ranks + 2, .n = 8,
                     .bytes = 5e7, .links = true};
    net_routes *used = net_routes_create(t), *fresh = net_routes_create(t);
    coll_result a, b, c;
    llm_err e;
    assert_int_equal(coll_time_alone(used, &cal, &first, &a, &e), 0);
    assert_int_equal(coll_time_alone(used, &cal, &then, &b, &e), 0);
    assert_int_equal(coll_time_alone(fresh, &cal, &then, &c, &e), 0);
    assert_true(b.time_s == c.time_s);
    assert_true(b.events == c.events);
    assert_int_equal(b.ntop, c.ntop);
    assert_true(c.ntop > 0);
    for (int i = 0; i < c.ntop; i++) {
        assert_int_equal(b.top[i].link, c.top[i].link);
        assert_true(b.top[i].bytes == c.top[i].bytes);
        assert_true(b.top[i].busy_fraction == c.top[i].busy_fraction);
    }
    /* other link efficiencies: the pooled links are scaled again */
    coll_calib slow = cal;
    slow.link_eff[LINK_NETWORK] = 0.5;
    coll_req ar = first;
    ar.algo = ALGO_RING;
    assert_int_equal(coll_time_alone(used, &slow, &ar, &a, &e), 0);
    assert_int_equal(coll_time_alone(fresh, &cal, &ar, &b, &e), 0);
    assert_true(a.time_s > 1.5 * b.time_s);
    net_routes_destroy(used);
    net_routes_destroy(fresh);
    test_topo_destroy(t);
}

/* auto simulates a candidate only when its lower bound is under the
 * fastest time so far: its choice and time are those of simulating every
 * (algorithm, protocol) pair and keeping the fastest (ties to NCCL's
 * order), at sizes from latency- to bandwidth-bound, and at 1 GB it
 * skips some. */
static void test_auto_prunes_exactly(void **state)
{
    (void)state;
    int ranks[12];
    topo *t = three_rail_nodes(ranks);
    coll_calib cal = ideal_calib(3.0);
    for (int p = 0; p < PROTO_COUNT; p++)
        cal.proto_eff[p] = p == PROTO_LL ? 0.5 : p == PROTO_LL128 ? 0.9375 : 1;
    int pruned = 0;
    for (double S = 1e3; S <= 1e9; S *= 100) {
        coll_req q = {.op = COLL_ALL_REDUCE, .algo = ALGO_AUTO,
                      .proto = PROTO_AUTO, .ranks = ranks, .n = 12,
                      .bytes = S};
        coll_result got, one, best = {.time_s = -1};
        uint64_t all_events = 0;
        llm_err e;
        assert_int_equal(coll_time_alone(R(t), &cal, &q, &got, &e), 0);
        for (int a = 0; a < ALGO_COUNT; a++)
            for (int p = 0; p < PROTO_COUNT; p++) {
                coll_req c = q;
                c.algo = (coll_algo)a, c.proto = (coll_proto)p;
                if (a == ALGO_HIER || !coll_algo_applies(R(t), &c, c.algo))
                    continue;
                assert_int_equal(coll_time_alone(R(t), &cal, &c, &one, &e), 0);
                all_events += one.events;
                if (best.time_s < 0 || one.time_s < best.time_s)
                    best = one;
            }
        assert_true(got.time_s == best.time_s);
        assert_int_equal(got.algo, best.algo);
        assert_int_equal(got.proto, best.proto);
        assert_true(got.events <= all_events);
        pruned += got.events < all_events;
    }
    assert_true(pruned >= 1);
    test_topo_destroy(t);
}

/* A tree whose channels run alike -- the same links' rates per edge, the
 * NVLink they share never limiting a flow at the tree's per-channel rate
 * -- is simulated as its first channel alone: the same time as every
 * channel step by step, in about half the events of two channels (fewer
 * with the steps skipped). */
static void test_tree_channels_as_one(void **state)
{
    (void)state;
    int ranks[12];
    topo *t = three_rail_nodes(ranks);
    coll_calib cal = ideal_calib(3.0);
    cal.tree_factor = 1;
    for (int i = 0; i < 3; i++)
        cal.tree_ch_Bps[i] = 20 * GB; /* 5 GB/s a flow */
    for (double S = 1e4; S <= 1e9; S *= 100) {
        coll_req q = {.op = COLL_ALL_REDUCE, .algo = ALGO_TREE,
                      .proto = PROTO_SIMPLE, .ranks = ranks, .n = 12,
                      .bytes = S};
        coll_result fast, full;
        llm_err e;
        assert_int_equal(coll_time_alone(R(t), &cal, &q, &fast, &e), 0);
        q.full = true;
        assert_int_equal(coll_time_alone(R(t), &cal, &q, &full, &e), 0);
        assert_close(fast.time_s, full.time_s, 1e-12);
        assert_true(fast.events < 0.6 * full.events);
    }
    /* a GPU's NVLink carries 6 of the tree's edges (3 a channel); at 62.5
     * GB/s a flow they could overfill its 300 GB/s: every channel runs */
    cal.tree_ch_Bps[2] = 250 * GB;
    coll_req q = {.op = COLL_ALL_REDUCE, .algo = ALGO_TREE,
                  .proto = PROTO_SIMPLE, .ranks = ranks, .n = 12, .bytes = 1e6};
    coll_result fast, full;
    llm_err e;
    assert_int_equal(coll_time_alone(R(t), &cal, &q, &fast, &e), 0);
    q.full = true;
    assert_int_equal(coll_time_alone(R(t), &cal, &q, &full, &e), 0);
    assert_true(fast.time_s == full.time_s);
    assert_true(fast.events == full.events); /* K = 1: nothing to skip */
    test_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_flows_share),
        cmocka_unit_test(test_tree_channels_as_one),
        cmocka_unit_test(test_auto_prunes_exactly),
        cmocka_unit_test(test_pooled_net_as_new),
        cmocka_unit_test(test_together_alone_credits_links),
        cmocka_unit_test(test_bottleneck_elsewhere),
        cmocka_unit_test(test_chain_three_flows),
        cmocka_unit_test(test_capped_flow),
        cmocka_unit_test(test_ring_allreduce_closed_form),
        cmocka_unit_test(test_broadcast_pipeline),
        cmocka_unit_test(test_concurrent_allreduce_share_nic),
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_mesh_within_group),
        cmocka_unit_test(test_fast_equals_full),
    };
    return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
