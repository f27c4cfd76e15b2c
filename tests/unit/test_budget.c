/* budget: the up-front estimate's closed forms against the counts the
 * simulations really take -- each collective's engine events over
 * algorithms, protocols, sizes and cluster sizes; a training step's over
 * the ready experiments, validation plans and large plans -- and the
 * refusal that a plan of 10^6 GPUs x 10^4 microbatches gets while those
 * plans do not. */
#include "decide/budget.h"
#include "decide/exp.h"
#include "test_util.h"

/* DGX H100 nodes, their coll_shape and budget_cluster as the budget
 * sees them before the topology exists. */
static budget_cluster dgx_h100(exp_topo_size *z, int nodes)
{
    llm_err e;
    assert_int_equal(cfg_topo_size("dgx-h100", nodes, z, &e), 0);
    assert_int_equal(z->nics, 8);
    assert_true(z->nvlink && z->nvls && !z->sharp);
    return (budget_cluster){z->nodes, z->gpus_per_node, z->nics, z->nvlink,
                            z->nvls, z->sharp, (double)z->nodes * z->nlink,
                            &z->coll};
}

/* GPT-3 175B on 1,024 A100, TP 8 x PP 8 x DP 16, 1,536 sequences: 96
 * microbatches, 4 events per (stage, microbatch, direction). */
static void test_step_events(void **state)
{
    (void)state;
    model_spec m;
    load_model("gpt3-175b", &m);
    exp_topo_size z;
    budget_cluster cl = dgx_h100(&z, 128);
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 8, p.dp = 16, p.global_batch = 1536, p.seq_len = 2048;
    budget_est b = {0};
    budget_train(&m, &p, false, &cl, &b);
    assert_close(b.gpus, 1024, 0);
    assert_close(b.step_events, 4.0 * 8 * 96 * 2, 1e-12);
    /* interleaving multiplies the chunks, recompute replays the forward */
    p.schedule = SCHED_INTERLEAVED, p.vpp = 3, p.recompute = RECOMPUTE_FULL;
    budget_est c = {0};
    budget_train(&m, &p, false, &cl, &c);
    assert_close(c.step_events, 4.0 * 8 * 3 * 96 * 2 * 1.5, 1e-12);
}

/* coll_sim_estimate against the engine events of the simulation itself,
 * on 1-16 DGX H100 nodes: auto's choice (NVLS in a node, ring and tree
 * across nodes, three protocols) run with every step, as the link load
 * and --full run it (within 5%), and fast (the same but for a tree, whose
 * alike channels run as one); auto itself, which skips candidates that
 * cannot win, at most the estimate of all of them. */
static void test_collective_events(void **state)
{
    (void)state;
    llm_err e;
    const coll_op ops[] = {COLL_ALL_REDUCE, COLL_REDUCE_SCATTER,
                           COLL_ALL_GATHER, COLL_ALL_TO_ALL, COLL_BROADCAST,
                           COLL_SEND_RECV};
    const double sizes[] = {1e3, 1e6, 3e7, 1e9};
    int checked = 0;
    for (int nodes = 1; nodes <= 16; nodes *= 4) {
        exp_topo_size z;
        budget_cluster cl = dgx_h100(&z, nodes);
        topo *t = cfg_load_topo_named("dgx-h100", nodes, -1, &cat, &e);
        assert_non_null(t);
        coll_calib cal;
        assert_int_equal(cfg_load_coll_calib(".", t, &cal, &e), 0);
        net_routes *rt = net_routes_create(t);
        int n = t->ngpu, ranks[128];
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        coll_shape s = {n, nodes, cl.nics, cl.nvlink, cl.nvls, cl.sharp};
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                coll_req q = {.op = ops[o], .algo = ALGO_AUTO,
                              .proto = PROTO_AUTO, .ranks = ranks, .n = n,
                              .bytes = sizes[k]};
                coll_result r;
                assert_int_equal(coll_time_alone(rt, &cal, &q, &r, &e), 0);
                /* auto: every candidate, of which the simulation skips
                 * those whose lower bound cannot win: an upper bound */
                coll_sim_cost est = coll_sim_estimate(
                    cl.coll, ops[o], ALGO_AUTO, PROTO_AUTO, &s, sizes[k], true);
                assert_true(est.events >= 0.95 * (double)r.events);
                /* the chosen one alone, fast: at most the estimate (a
                 * tree's alike channels run as one) */
                coll_req one = q;
                one.algo = r.algo, one.proto = r.proto;
                coll_result a;
                assert_int_equal(coll_time_alone(rt, &cal, &one, &a, &e), 0);
                est = coll_sim_estimate(cl.coll, ops[o], r.algo, r.proto, &s,
                                        sizes[k], true);
                assert_true(est.events >= 0.95 * (double)a.events);
                assert_true(r.algo == ALGO_TREE ||
                            est.events <= 1.05 * (double)a.events);
                q.algo = r.algo, q.proto = r.proto, q.full = true;
                double time_s;
                uint64_t ev;
                assert_int_equal(coll_time_together(rt, &cal, &q, 1, &time_s,
                                                    NULL, &ev, &e), 0);
                est = coll_sim_estimate(cl.coll, ops[o], r.algo, r.proto, &s,
                                        sizes[k], false);
                assert_close(est.events, (double)ev, 0.05);
                checked++;
            }
        net_routes_destroy(rt);
        topo_destroy(t);
    }
    assert_int_equal(checked, 3 * 6 * 4);
}

/* A training step's estimate against the counts it took (exp_train_run
 * keeps the estimate it admitted the run with): the ready experiments,
 * validation plans of every kind of data parallelism, and two large
 * plans the old estimate refused (ZeRO-3 on 768 H100, estimated at 5
 * minutes; GPT-2T ZeRO-3 on 1,024 A100, at 8.2 hours; each runs in well
 * under a second). */
static void check_plan(const exp_train *x)
{
    exp_run_opts o = {.force = true};
    exp_train_out out;
    llm_err e;
    assert_int_equal(exp_train_run(x, &o, cfg_loader(), &out, &e), 0);
    double got = (double)out.r.net_events, est = out.budget.net_events;
    /* auto's candidates that cannot win are not simulated, and which they
     * are is known only once simulated: the estimate counts them all, an
     * upper bound (within 8x, or 2 x 10^5 events: 0.05 s) */
    if (!(est > got / 2 && est < 8 * got + 2e5)) {
        print_error("%s: network events %.0f, estimated %.0f\n", x->h.file,
                    got, est);
        fail();
    }
    assert_true(out.budget.step_events >= (double)out.r.events / 2 &&
                out.budget.step_events <= (double)out.r.events * 3 + 16);
    assert_true(out.budget.seconds < BUDGET_MAX_SECONDS);
    exp_train_out_free(&out);
}

static void test_train_events(void **state)
{
    (void)state;
    const char *const files[] = {
        "configs/train-gpt3-175b-1024xa100.cfg",
        "configs/train-llama2-70b-lora.cfg",
        "configs/train-llama2-7b-8xh100.cfg",
        "configs/train-llama3-70b-64xh100.cfg",
        "configs/validation/sc21-t1-76.1b.cfg",
        "configs/validation/fmsfsdp-llama2-70b-a100-128gpu.cfg",
        "configs/validation/dgxc-llama31-8b-fp8-128gpu.cfg",
        "configs/validation/tt-llama3-70b-bf16-2d-256gpu.cfg",
        "configs/validation/meta-llama31-405b-8192gpu.cfg",
        "configs/validation/dsazure-gpt-2t-1024gpu.cfg",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        static exp_train x;
        llm_err e;
        exp_train_defaults(&x);
        assert_int_equal(cfg_exp_read(files[i], EXP_TRAIN, &x, &e), 0);
        assert_int_equal(exp_settle(EXP_TRAIN, &x, &e), 0);
        check_plan(&x);
    }
    /* MPT-70B, llm-foundry's ZeRO-3 (FSDP full shard), 768 H100 */
    static exp_train z;
    exp_train_defaults(&z);
    snprintf(z.model, sizeof z.model, "mpt-70b");
    snprintf(z.cluster, sizeof z.cluster, "dgx-h100");
    snprintf(z.stack, sizeof z.stack, "llm-foundry");
    z.nodes = 96;
    z.plan.dp = 768, z.plan.zero = 3, z.plan.global_batch = 768;
    z.plan.seq_len = 2048, z.plan.recompute = RECOMPUTE_FULL;
    check_plan(&z);
}

static void test_refusal(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-3-70b", &m);
    plan_train p;
    p = exp_plan_train_defaults();
    /* 2^21 GPUs, 10^4 microbatches (2^20 runs in about a minute) */
    p.tp = 8, p.pp = 16, p.dp = 16384, p.seq_len = 4096;
    p.global_batch = 16384 * 10000;
    exp_topo_size z;
    budget_cluster cl = dgx_h100(&z, 262144);
    budget_est b = {0};
    budget_topology(262144, 27, 33, &b);
    budget_train(&m, &p, false, &cl, &b);
    llm_err e = {{0}};
    assert_int_equal(budget_check(&b, "x.cfg", false, &e), -1);
    assert_non_null(strstr(e.msg, "x.cfg: refusing to simulate 2097152 GPUs"));
    assert_non_null(strstr(e.msg, "--force"));
    assert_true(b.seconds > BUDGET_MAX_SECONDS);
    assert_int_equal(budget_check(&b, "x.cfg", true, &e), 0);
    /* the topology of 262,144 nodes alone: 4.5 GiB, within the limit */
    assert_true(b.bytes == 262144.0 * 60 * 310);
    /* 131,072 GPUs (DP 1,024) and 10 microbatches: within the limit */
    p.tp = 8, p.pp = 16, p.dp = 1024, p.global_batch = 1024 * 10;
    cl = dgx_h100(&z, 16384);
    budget_est s = {0};
    budget_topology(16384, 27, 33, &s);
    budget_train(&m, &p, false, &cl, &s);
    assert_true(s.net_events < b.net_events);
    assert_true(s.seconds < BUDGET_MAX_SECONDS);
    assert_int_equal(budget_check(&s, "x.cfg", false, &e), 0);
    /* --full: every TP group's and data-parallel group's collectives at
     * once, every step: far over */
    budget_est f = {0};
    budget_train(&m, &p, true, &cl, &f);
    assert_true(f.net_events > 50 * s.net_events);
    assert_true(f.seconds > BUDGET_MAX_SECONDS);
}

static void test_serving(void **state)
{
    (void)state;
    budget_est b = {.gpus = 8};
    budget_serve(1e8, &b);
    llm_err e = {{0}};
    assert_int_equal(budget_check(&b, "--requests", false, &e), -1);
    assert_non_null(strstr(e.msg, "1e+08 requests on 8 GPUs"));
    assert_true(b.bytes > BUDGET_MAX_BYTES);
    budget_est t = {.gpus = 8};
    budget_serve(19366, &t); /* the Azure conversation trace */
    assert_int_equal(budget_check(&t, "--requests", false, &e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_events),
        cmocka_unit_test(test_collective_events),
        cmocka_unit_test(test_train_events),
        cmocka_unit_test(test_refusal),
        cmocka_unit_test(test_serving),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
