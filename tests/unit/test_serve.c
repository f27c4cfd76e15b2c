/* Serving: closed forms of one request, queueing laws, KV-cache accounting
 * under pressure, disaggregated KV transfer on idle links, determinism. */
#include <math.h>
#include <stdlib.h>

#include "serve/infer.h"
#include "serve/serve.h"
#include "decide/exp.h"
#include "test_util.h"
#include "serve/wl.h"

static serve_input input(env *v, int tp, int pp, int replicas,
                         const wl_request *req, int n)
{
    serve_input in;
    memset(&in, 0, sizeof in);
    in.m = &v->m;
    in.t = v->t;
    in.routes = R(v->t);
    in.coll = &v->coll;
    in.npools = 1;
    in.pool[0] = (serve_pool){.gpu = v->t->gpu, .cost = &v->cost, .tp = tp,
                              .pp = pp, .replicas = replicas, .idle_w = 75,
                              .overhead = v->ov};
    in.p = exp_serve_params_defaults();
    in.p.weight_dt = DT_FP16; /* the table leaves it to the model's */
    in.req = req;
    in.nreq = n;
    return in;
}

static serve_result run(const serve_input *in)
{
    serve_result r;
    llm_err e;
    if (serve_simulate(in, &r, &e) != 0) {
        print_error("%s\n", e.msg);
        fail();
    }
    return r;
}

/* The cost model's time of one batch on every stage, summed, plus the
 * pipeline hand-offs. */
static double batch_s(env *v, int tp, int pp, const infer_batch *b)
{
    int ranks[64];
    for (int i = 0; i < tp * pp; i++)
        ranks[i] = i;
    infer_setup s = {.m = &v->m, .gpu = v->t->gpu, .cost = &v->cost,
                     .coll = &v->coll, .t = v->t, .routes = R(v->t),
                     .ranks = ranks, .tp = tp,
                     .pp = pp, .weight_dt = DT_FP16, .kv_dt = DT_FP16,
                     .quant_group = 128, .flash = true, .max_tokens = 64};
    llm_err e;
    infer *x = infer_create(&s, &e);
    assert_non_null(x);
    infer_time t[8];
    assert_int_equal(infer_batch_time(x, b, t, &e), 0);
    int tokens = b->decode_n;
    for (int i = 0; i < b->prefill_n; i++)
        tokens += b->prefill[i].q_tokens;
    double sum = 0;
    for (int st = 0; st < pp; st++) {
        double p2p;
        assert_int_equal(infer_p2p_s(x, st, tokens, &p2p, &e), 0);
        sum += t[st].total_s + p2p;
    }
    infer_destroy(x);
    return sum;
}

/* One request in an empty system: its TTFT is the prefill of its whole
 * prompt (one batch: P tokens over P of context, one token sampled), and
 * each later token one decode step over a context one longer each time,
 * so TPOT is the mean of those steps; on one GPU, TP 2 (all-reduces) and
 * PP 2 (stage hand-offs). */
static void one_request(int tp, int pp)
{
    env v;
    env_open(&v, 1, "llama-2-7b");
    const int P = 512, O = 8;
    wl_request rq = {0, P, O};
    serve_input in = input(&v, tp, pp, 1, &rq, 1);
    serve_result r = run(&in);
    infer_chunk c = {P, P};
    infer_batch pre = {.prefill = &c, .prefill_n = 1, .logits = 1};
    double ttft = batch_s(&v, tp, pp, &pre), dec = 0;
    for (int k = 1; k < O; k++) {
        infer_batch d = {.decode_n = 1, .decode_context_sum = P + k,
                         .logits = 1};
        dec += batch_s(&v, tp, pp, &d);
    }
    /* nanosecond rounding of each event: a few ns at most */
    assert_close(r.ttft.mean, ttft, 1e-6);
    assert_close(r.tpot.mean, dec / (O - 1), 1e-6);
    assert_close(r.e2e.mean, ttft + dec, 1e-6);
    /* a decode step reads every weight once: no faster than the weights
     * of a GPU at its datasheet bandwidth */
    double w = r.pool[0].weights_bytes / v.t->gpu->mem_bw_Bps;
    assert_true(r.tpot.mean > w);
    assert_int_equal(r.requests_completed, 1);
    env_close(&v);
}

static void test_one_request_tp1(void **state) { (void)state; one_request(1, 1); }
static void test_one_request_tp2(void **state) { (void)state; one_request(2, 1); }
static void test_one_request_pp2(void **state) { (void)state; one_request(1, 2); }

static wl_request *poisson(double rate, const char *prompt, const char *out,
                           int n, unsigned long seed)
{
    wl_spec s = {.arrival = WL_POISSON, .rate_per_s = rate, .requests = n,
                 .seed = seed};
    llm_err e;
    assert_int_equal(wl_len_parse("prompt", prompt, 0, &s.prompt, &e), 0);
    assert_int_equal(wl_len_parse("output", out, 1, &s.output, &e), 0);
    wl_request *req;
    int got;
    assert_int_equal(wl_generate(&s, &req, &got, &e), 0);
    assert_int_equal(got, n);
    wl_len_free(&s.prompt);
    wl_len_free(&s.output);
    return req;
}

/* Little's law, L = λW: the number of requests in the system, sampled at
 * 4,000 instants in the middle 80% of a long Poisson run, averages the
 * arrival rate times the mean time in system.  At ~8 requests in the
 * system and 4,000 requests, the sampling error is a few percent. */
static void test_little(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    const double rate = 6;
    const int n = 4000;
    wl_request *req = poisson(rate, "lognormal:600:0.8", "uniform:16:256", n, 7);
    serve_request_result *out = calloc(n, sizeof *out);
    serve_input in = input(&v, 1, 1, 1, req, n);
    in.out = out;
    serve_result r = run(&in);
    assert_int_equal(r.requests_completed, n);
    double T = req[n - 1].arrival_s, L = 0;
    const int samples = 4000;
    for (int k = 0; k < samples; k++) {
        double t = T * (0.1 + 0.8 * (k + 0.5) / samples);
        for (int i = 0; i < n; i++)
            L += out[i].arrival_s <= t && t < out[i].finish_s;
    }
    L /= samples;
    double W = r.e2e.mean;
    assert_true(L > 1); /* the test means something only under load */
    assert_close(L, rate * W, 0.08);
    free(out);
    free(req);
    env_close(&v);
}

/* At low load requests rarely meet: halving the rate changes neither the
 * mean TTFT nor the mean TPOT by more than a few percent. */
static void test_low_load(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    serve_result r[2];
    for (int k = 0; k < 2; k++) {
        wl_request *req = poisson(k ? 0.02 : 0.04, "512", "64", 300, 3);
        serve_input in = input(&v, 1, 1, 1, req, 300);
        r[k] = run(&in);
        free(req);
    }
    assert_close(r[0].ttft.mean, r[1].ttft.mean, 0.03);
    assert_close(r[0].tpot.mean, r[1].tpot.mean, 0.03);
    env_close(&v);
}

/* Past saturation, doubling the offered load leaves throughput where it
 * was (the GPU is always busy), while the queue grows through the run:
 * the last requests wait far longer for their first token than the first
 * ones, and more so at the higher rate. */
static void test_saturation(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    serve_result r[3];
    double first[3], last[3];
    const double rates[3] = {0.2, 60, 120};
    const int n = 1500, tenth = n / 10;
    serve_request_result *out = calloc(n, sizeof *out);
    for (int k = 0; k < 3; k++) {
        wl_request *req = poisson(rates[k], "1024", "128", n, 5);
        serve_input in = input(&v, 1, 1, 1, req, n);
        in.out = out;
        r[k] = run(&in);
        first[k] = last[k] = 0;
        for (int i = 0; i < tenth; i++) {
            first[k] += out[i].first_token_s - out[i].arrival_s;
            last[k] += out[n - 1 - i].first_token_s - out[n - 1 - i].arrival_s;
        }
        free(req);
    }
    /* saturated: far below the offered 60 requests/s */
    assert_true(r[1].throughput_requests_per_s < 0.5 * rates[1]);
    assert_close(r[2].throughput_tokens_per_s, r[1].throughput_tokens_per_s,
                 0.05);
    assert_true(r[1].pool[0].busy_fraction > 0.95);
    /* unloaded: no queue builds */
    assert_close(last[0], first[0], 0.1);
    assert_true(last[1] > 10 * first[1]);
    assert_true(last[2] > last[1]);
    assert_true(r[2].ttft.mean > r[1].ttft.mean);
    assert_true(r[1].ttft.mean > 20 * r[0].ttft.mean);
    free(out);
    env_close(&v);
}

/* A cache too small for the offered work: requests are preempted (by
 * recompute, or by swap to host), every one still finishes with all its
 * tokens, and serve_simulate's own checks find every block returned (it
 * aborts otherwise); under every scheduler policy. */
static void kv_pressure(serve_preempt how)
{
    env v;
    env_open(&v, 1, "llama-2-7b");
    const int n = 64;
    wl_request req[64];
    for (int i = 0; i < n; i++)
        req[i] = (wl_request){0, 512, 1024};
    for (int policy = 0; policy < SERVE_POLICIES; policy++) {
        serve_input in = input(&v, 1, 1, 1, req, n);
        /* 7B fp16 is 12.6 GiB: 0.19 x 79.6 GiB leaves ~1.8 GiB, 3.5k
         * tokens */
        in.p.gpu_mem_util = 0.19;
        in.p.preempt = how;
        in.p.policy = policy;
        serve_result r = run(&in);
        assert_int_equal(r.requests_completed, n);
        assert_true(r.preemptions > 0);
        if (how == PREEMPT_SWAP)
            assert_true(r.swaps_out > 0);
        assert_true(r.pool[0].kv_util_peak <= 1.0);
        assert_true(r.pool[0].kv_util_peak > 0.9);
        assert_close(r.output_tokens, n * 1024.0, 1e-12);
    }
    env_close(&v);
}

static void test_kv_recompute(void **state) { (void)state; kv_pressure(PREEMPT_RECOMPUTE); }
static void test_kv_swap(void **state) { (void)state; kv_pressure(PREEMPT_SWAP); }

/* Disaggregated, one request, idle links: prefill on node 0's 8 GPUs (TP
 * 8), decode on node 1's.  Llama-2-70B has 8 KV heads, so TP rank i holds
 * head i on both sides and sends it to its peer: 1/8 of the cache per
 * flow, each over its own rail.  The transfer takes bytes / the slowest
 * link of the route at its achievable rate, plus the route's latency. */
static void test_disagg_transfer(void **state)
{
    (void)state;
    env v;
    env_open(&v, 2, "llama-2-70b");
    const int P = 2000;
    wl_request rq = {0, P, 4};
    serve_request_result out;
    serve_input in = input(&v, 8, 1, 1, &rq, 1);
    in.npools = 2;
    in.pool[1] = in.pool[0];
    in.pool[1].first_gpu = 8;
    in.out = &out;
    serve_result r = run(&in);
    double bytes = model_kv_bytes_per_token(&v.m, DT_FP16) * P;
    assert_close(r.kv_transfer_bytes, bytes, 1e-12);
    int links[32];
    int src = v.t->gpu_dev[0], dst = v.t->gpu_dev[8];
    int nl = net_route(R(v.t), src, dst, 0, links, 32);
    assert_true(nl > 0);
    double bw = 1e30;
    for (int k = 0; k < nl; k++) {
        const topo_link *L = &v.t->link[links[k]];
        double b = L->bw_Bps * v.coll.link_eff[L->kind];
        bw = b < bw ? b : bw;
    }
    double want = bytes / 8 / bw + topo_route_lat(v.t, links, nl) * 1e-9;
    assert_close(out.kv_transfer_s, want, 0.01);
    assert_int_equal(out.prefill_replica, 0);
    assert_int_equal(out.replica, 0);
    /* the second token waits for the transfer and one decode step */
    assert_true(r.tpot.mean * 3 > want);
    env_close(&v);
}

/* Layer-wise sending overlaps the transfer with the prefill: the first
 * decode starts sooner than with the cache sent after the prefill. */
static void test_disagg_layerwise(void **state)
{
    (void)state;
    env v;
    env_open(&v, 2, "llama-2-70b");
    wl_request rq = {0, 4000, 2};
    serve_result r[2];
    for (int k = 0; k < 2; k++) {
        serve_input in = input(&v, 8, 1, 1, &rq, 1);
        in.npools = 2;
        in.pool[1] = in.pool[0];
        in.pool[1].first_gpu = 8;
        in.p.kv_layerwise = k == 1;
        r[k] = run(&in);
    }
    assert_close(r[1].ttft.mean, r[0].ttft.mean, 1e-9);
    assert_true(r[1].e2e.mean < r[0].e2e.mean);
    env_close(&v);
}

/* The round-robin router alternates; least-outstanding sends a request
 * to the replica with fewer in progress. */
static void test_router(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    wl_request req[4] = {{0, 64, 500}, {0.001, 64, 500}, {0.002, 64, 500},
                         {0.003, 64, 500}};
    serve_request_result out[4];
    serve_input in = input(&v, 1, 1, 2, req, 4);
    in.out = out;
    in.p.router = 0;
    run(&in);
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i].replica, i % 2);
    env_close(&v);
}

/* The same workload twice: the same result, bit for bit. */
static void test_deterministic(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    serve_result r[2];
    for (int k = 0; k < 2; k++) {
        wl_request *req = poisson(20, "lognormal:800:1", "lognormal:150:1", 500, 11);
        serve_input in = input(&v, 2, 1, 2, req, 500);
        r[k] = run(&in);
        free(req);
    }
    assert_memory_equal(&r[0], &r[1], sizeof r[0]);
    env_close(&v);
}


/* ---- the engine: host costs, launches, kernels, admission, clients ---- */

/* One request, P-token prompt and O outputs: its TTFT and TPOT. */
static void one(env *v, const serve_params *p, int P, int O, double *ttft,
                double *tpot)
{
    wl_request rq = {0, P, O};
    serve_input in = input(v, 1, 1, 1, &rq, 1);
    in.p = *p;
    serve_result r = run(&in);
    *ttft = r.ttft.mean;
    *tpot = r.tpot.mean;
}

/* Host time per iteration adds to the GPU's (fixed + per sequence), or
 * with an overlapping engine only shows where it outlasts the GPU -- but
 * the first iteration after an idle GPU has nothing to hide behind. */
static void test_host_cost(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    serve_params p = input(&v, 1, 1, 1, NULL, 0).p;
    double t0, d0, t1, d1, t2, d2, t3, d3;
    one(&v, &p, 512, 8, &t0, &d0);
    p.iteration_overhead_s = 1e-3;
    p.host.per_seq_s = 1e-4;
    one(&v, &p, 512, 8, &t1, &d1);
    assert_close(t1, t0 + 1.1e-3, 1e-6);
    assert_close(d1, d0 + 1.1e-3, 1e-6);
    p.host.overlap = true; /* 1.1 ms hides under a 7B step on one A100 */
    one(&v, &p, 512, 8, &t2, &d2);
    assert_true(d0 > 1.1e-3);
    assert_close(t2, t0 + 1.1e-3, 1e-6); /* the prefill follows idleness */
    assert_close(d2, d0, 1e-6);
    p.iteration_overhead_s = 0.05; /* longer than the GPU's: it sets it */
    one(&v, &p, 512, 8, &t3, &d3);
    assert_close(d3, 0.05 + 1e-4, 1e-6);
    env_close(&v);
}

/* Kernels launched one by one: a pass takes at least layers x kernels x
 * launch time; decode batches within the CUDA-graph limit replay a graph
 * and take the GPU's time alone (prefills never do). */
static void test_launch_bound(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    serve_params p = input(&v, 1, 1, 1, NULL, 0).p;
    double t0, d0, t1, d1, t2, d2;
    one(&v, &p, 16, 8, &t0, &d0);
    p.host.launch_s = 25e-6;
    p.host.kernels_per_layer = 40;
    double floor_s = v.m.layers * 40 * 25e-6; /* 32 ms for 32 layers */
    one(&v, &p, 16, 8, &t1, &d1);
    assert_true(d0 < floor_s && t0 < floor_s);
    assert_close(d1, floor_s, 1e-6);
    assert_close(t1, floor_s, 1e-6);
    p.host.graph_max_batch = 8;
    one(&v, &p, 16, 8, &t2, &d2);
    assert_close(d2, d0, 1e-6);
    assert_close(t2, floor_s, 1e-6);
    env_close(&v);
}

/* A decode kernel without GQA grouping reads each KV head once per query
 * head: the KV part of a decode step's traffic (what grows with the
 * context) is heads / kv_heads times larger, 8x on Llama-2-70B. */
static void test_decode_kv_per_q_head(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-70b");
    int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    double grow[2];
    for (int k = 0; k < 2; k++) {
        infer_setup s = {.m = &v.m, .gpu = v.t->gpu, .cost = &v.cost,
                         .coll = &v.coll, .t = v.t, .routes = R(v.t),
                         .ranks = ranks, .tp = 8, .pp = 1,
                         .weight_dt = DT_FP16, .kv_dt = DT_FP16,
                         .quant_group = 128, .flash = true, .max_tokens = 64,
                         .decode_kv_per_q_head = k == 1};
        llm_err e;
        infer *x = infer_create(&s, &e);
        assert_non_null(x);
        infer_time a, b;
        infer_batch s1 = {.decode_n = 16, .decode_context_sum = 16 * 1024.0,
                          .logits = 16};
        infer_batch s2 = s1;
        s2.decode_context_sum = 16 * 8192.0;
        assert_int_equal(infer_batch_time(x, &s1, &a, &e), 0);
        assert_int_equal(infer_batch_time(x, &s2, &b, &e), 0);
        grow[k] = b.bytes - a.bytes;
        infer_destroy(x);
    }
    assert_close(grow[1] / grow[0], (double)v.m.heads / v.m.kv_heads, 1e-9);
    env_close(&v);
}

/* 64 requests of 512 + 1024 tokens for a cache of ~3.5k tokens. */
static serve_result pressure(env *v, serve_admit admit, int n,
                             serve_request_result *out)
{
    wl_request req[256];
    for (int i = 0; i < n; i++)
        req[i] = (wl_request){0, 512, 1024};
    serve_input in = input(v, 1, 1, 1, req, n);
    in.p.gpu_mem_util = 0.19;
    in.p.admit = admit;
    in.out = out;
    return run(&in);
}

/* TensorRT-LLM's guaranteed-no-evict: a request gets in only with room
 * for its prompt and every output token, so nothing is ever preempted;
 * vLLM's rule that a preempted request waits until its whole cache fits
 * keeps preemptions below one per request where the old rule (back in
 * with its next chunk's blocks) thrashed. */
static void test_admission(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    const int n = 64;
    serve_result ne = pressure(&v, ADMIT_NO_EVICT, n, NULL);
    assert_int_equal(ne.requests_completed, n);
    assert_int_equal(ne.preemptions, 0);
    assert_true(ne.pool[0].kv_util_peak <= 1.0);
    serve_result ch = pressure(&v, ADMIT_CHUNK, n, NULL);
    assert_int_equal(ch.requests_completed, n);
    assert_true(ch.preemptions > 0 && ch.preemptions <= 2 * n);
    serve_result wh = pressure(&v, ADMIT_WHOLE, n, NULL);
    assert_int_equal(wh.requests_completed, n);
    assert_true(wh.preemptions <= 2 * n);
    env_close(&v);
}

/* A closed loop: one client sends each request think_s after the last
 * one's final token; with c clients never more than c are in the system. */
static void test_closed_loop(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    const int n = 24;
    wl_request req[24];
    for (int i = 0; i < n; i++)
        req[i] = (wl_request){1000.0 * i, 256 + 32 * i, 16 + i};
    serve_request_result out[24];
    for (int c = 1; c <= 4; c += 3) {
        serve_input in = input(&v, 1, 1, 1, req, n);
        in.concurrency = c;
        in.think_s = 0.05;
        in.out = out;
        serve_result r = run(&in);
        assert_int_equal(r.requests_completed, n);
        for (int i = 0; i < n; i++) {
            int inside = 0;
            for (int j = 0; j < n; j++)
                inside += out[j].arrival_s <= out[i].arrival_s &&
                          out[i].arrival_s < out[j].finish_s;
            assert_true(inside <= c);
            if (c == 1 && i > 0)
                assert_close(out[i].arrival_s, out[i - 1].finish_s + 0.05,
                             1e-9);
        }
    }
    env_close(&v);
}

/* Utilization stays physical over a grid of weight dtypes and loads on
 * H100: FP8 runs on its tensor cores, FP4 falls back to 16-bit GEMMs
 * (and is counted against 16-bit's peak, not the FP4 peak H100 lacks);
 * MFU and MBU within (0, 1], and no dtype's run does more FLOPs a second
 * than the peak it is counted against; under every scheduler policy. */
static void test_utilization_grid(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    static const dtype dts[] = {DT_FP16, DT_FP8, DT_FP4};
    wl_request req[64];
    for (int d = 0; d < 3; d++)
        for (int load = 0; load < 3; load++)
            for (int policy = 0; policy < SERVE_POLICIES; policy++) {
                double gap_s = load == 0 ? 1.0 : load == 1 ? 0.05 : 0;
                for (int i = 0; i < 64; i++)
                    req[i] = (wl_request){gap_s * i, 256 + 61 * (i % 7),
                                          32 + 17 * (i % 5)};
                serve_input in = input(&v, 1, 1, 1, req, 64);
                in.p.weight_dt = dts[d];
                in.p.policy = policy;
                serve_result r = run(&in);
                const serve_pool_result *p = &r.pool[0];
                assert_int_equal(r.requests_completed, 64);
                assert_true(p->mfu > 0 && p->mfu <= 1);
                assert_true(p->mbu > 0 && p->mbu <= 1);
            }
    env_close(&v);
}

/* Multi-step scheduling (vLLM --num-scheduler-steps K): a request that
 * arrives while a decode batch runs waits for the end of its K-step run,
 * never longer; K = 1 schedules every iteration.  Every policy. */
static void test_scheduler_steps(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    wl_request req[2] = {{0, 128, 200}, {0.1, 128, 4}};
    for (int policy = 0; policy < SERVE_POLICIES; policy++) {
        serve_request_result out[2][2];
        for (int k = 0; k < 2; k++) {
            serve_input in = input(&v, 1, 1, 1, req, 2);
            in.p.policy = policy;
            assert_int_equal(in.p.scheduler_steps, 1);
            in.p.scheduler_steps = k == 0 ? 1 : 16;
            in.out = out[k];
            serve_result r = run(&in);
            assert_int_equal(r.requests_completed, 2);
        }
        double tpot = (out[0][0].finish_s - out[0][0].first_token_s) / 199;
        double ttft1 = out[0][1].first_token_s - 0.1;
        double ttft16 = out[1][1].first_token_s - 0.1;
        assert_true(ttft1 < 3 * tpot);
        assert_true(ttft16 > ttft1 + tpot);
        assert_true(ttft16 < ttft1 + 16 * tpot);

        /* every running request ends inside a run: the run ends with them
         * and the waiting ones are admitted (no stall) */
        wl_request many[6];
        for (int i = 0; i < 6; i++)
            many[i] = (wl_request){0, 64, 3};
        serve_input in = input(&v, 1, 1, 1, many, 6);
        in.p.policy = policy;
        in.p.max_num_seqs = 2;
        in.p.scheduler_steps = 16;
        assert_int_equal(run(&in).requests_completed, 6);
    }
    env_close(&v);
}

/* Prefill-first batches with a chunk size (SGLang without mixed chunks):
 * a prompt longer than the chunk is prefilled over ceil(P / chunk)
 * iterations of its own, in which the running decodes make no progress;
 * chunked batches (vLLM V1) carry the same chunks beside the decodes. */
static void test_prefill_first_chunks(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    /* alone: 3 prefill iterations (1024, 1024, 952) and one decode; whole
     * (no chunk size): one prefill and one decode */
    wl_request b = {0, 3000, 2};
    for (int chunk = 0; chunk <= 1024; chunk += 1024) {
        serve_input in = input(&v, 1, 1, 1, &b, 1);
        in.p.policy = SERVE_PREFILL_FIRST;
        in.p.chunk = chunk;
        assert_int_equal(run(&in).pool[0].iterations, chunk ? 4 : 2);
    }
    /* beside a decoding request: A's prefill and 199 decodes, B's decode
     * among them, and B's 3 prefill iterations on their own (203); mixed
     * in A's decode iterations under the chunked policy (200) */
    wl_request two[2] = {{0, 64, 200}, {0.05, 3000, 2}};
    serve_request_result out[2][2];
    for (int policy = 0; policy < 2; policy++) {
        serve_input in = input(&v, 1, 1, 1, two, 2);
        in.p.policy = policy;
        in.p.chunk = 1024;
        in.out = out[policy];
        serve_result r = run(&in);
        assert_int_equal(r.pool[0].iterations, policy ? 203 : 200);
        assert_true(out[policy][1].finish_s < out[policy][0].finish_s);
    }
    /* A waits out B's prefill iterations instead of decoding through them */
    assert_true(out[1][0].finish_s > out[0][0].finish_s);
    env_close(&v);
}

/* TensorRT-LLM's in-flight batching without chunked context: two
 * prompts of 3000 tokens under a 4096-token budget.  Chunked (vLLM V1)
 * runs A whole and B's first 1096 tokens in the first iteration; inflight
 * runs A alone, then B whole beside A's decode, so A's first token comes
 * sooner and B's later, in as many iterations.  A prompt over the budget
 * is refused, as TensorRT-LLM refuses a context over max_num_tokens. */
static void test_inflight_whole_contexts(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    wl_request two[2] = {{0, 3000, 2}, {0, 3000, 2}};
    serve_request_result out[2][2];
    int iterations[2];
    int policies[2] = {SERVE_CHUNKED, SERVE_INFLIGHT};
    for (int k = 0; k < 2; k++) {
        serve_input in = input(&v, 1, 1, 1, two, 2);
        in.p.policy = policies[k];
        in.p.max_batched_tokens = 4096;
        in.out = out[k];
        serve_result r = run(&in);
        assert_int_equal(r.requests_completed, 2);
        iterations[k] = r.pool[0].iterations;
    }
    assert_int_equal(iterations[0], 3);
    assert_int_equal(iterations[1], 3);
    assert_true(out[1][0].first_token_s < out[0][0].first_token_s);
    assert_true(out[1][1].first_token_s > out[0][1].first_token_s);

    wl_request big = {0, 5000, 2};
    serve_input in = input(&v, 1, 1, 1, &big, 1);
    in.p.policy = SERVE_INFLIGHT;
    in.p.max_batched_tokens = 4096;
    serve_result r;
    llm_err e;
    assert_int_equal(serve_simulate(&in, &r, &e), -1);
    assert_non_null(strstr(e.msg, "5000-token prompt exceeds the 4096-token budget"));
    env_close(&v);
}

/* Static batching (`generate`): the second batch starts only when the
 * first one's longest sequence has ended; continuous batching starts a
 * waiting request as soon as a sequence leaves. */
static void test_static_batch(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    wl_request req[8];
    for (int i = 0; i < 8; i++)
        req[i] = (wl_request){0, 128, i % 4 == 3 ? 256 : 16};
    serve_request_result out[8];
    serve_result r[2];
    for (int k = 0; k < 2; k++) {
        serve_input in = input(&v, 1, 1, 1, req, 8);
        in.p.max_num_seqs = 4;
        in.p.policy = SERVE_PREFILL_FIRST;
        in.p.static_batch = k == 1;
        in.out = out;
        r[k] = run(&in);
        double last = 0;
        for (int i = 0; i < 4; i++)
            last = fmax(last, out[i].finish_s);

        if (k == 1)
            assert_true(out[4].first_token_s > last);
        else
            assert_true(out[4].first_token_s < last);
    }
    assert_true(r[1].makespan_s > r[0].makespan_s);
    env_close(&v);
}

/* Sliding-window attention in a batch: a decode reads at most the window
 * of each sequence's cache (decode_window_sum), a prefill chunk past the
 * window computes fewer pairs; with contexts inside the window nothing
 * changes.  Half the layers windowed lands between. */
static void test_sliding_window_batch(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    infer_chunk ch = {512, 16384};
    infer_batch b = {.prefill = &ch, .prefill_n = 1, .decode_n = 32,
                     .decode_context_sum = 32 * 16384.0,
                     .decode_window_sum = 32 * 4096.0, .logits = 33};
    double full = batch_s(&v, 1, 1, &b);
    v.m.sliding_window = 4096;
    double win = batch_s(&v, 1, 1, &b);
    v.m.sliding_global_every = 2;
    double half = batch_s(&v, 1, 1, &b);
    assert_true(win < half && half < full);
    /* contexts inside the window: the same batch either way */
    infer_chunk in = {512, 2048};
    infer_batch c = {.prefill = &in, .prefill_n = 1, .decode_n = 32,
                     .decode_context_sum = 32 * 2048.0,
                     .decode_window_sum = 32 * 2048.0, .logits = 33};
    v.m.sliding_global_every = 0;
    double inside = batch_s(&v, 1, 1, &c);
    v.m.sliding_window = 0;
    assert_close(batch_s(&v, 1, 1, &c), inside, 1e-12);
    env_close(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_request_tp1),
        cmocka_unit_test(test_one_request_tp2),
        cmocka_unit_test(test_one_request_pp2),
        cmocka_unit_test(test_little),
        cmocka_unit_test(test_low_load),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_kv_recompute),
        cmocka_unit_test(test_inflight_whole_contexts),
        cmocka_unit_test(test_kv_swap),
        cmocka_unit_test(test_disagg_transfer),
        cmocka_unit_test(test_disagg_layerwise),
        cmocka_unit_test(test_router),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_host_cost),
        cmocka_unit_test(test_launch_bound),
        cmocka_unit_test(test_decode_kv_per_q_head),
        cmocka_unit_test(test_admission),
        cmocka_unit_test(test_closed_loop),
        cmocka_unit_test(test_scheduler_steps),
        cmocka_unit_test(test_utilization_grid),
        cmocka_unit_test(test_static_batch),
        cmocka_unit_test(test_prefill_first_chunks),
        cmocka_unit_test(test_sliding_window_batch),
    };
    return cmocka_run_group_tests_name("serve", tests, catalog_setup, catalog_teardown);
}
