/* budget: the up-front estimate's closed forms, and the refusal that a
 * plan of 10^6 GPUs x 10^4 microbatches gets while a ready experiment
 * does not. */
#include "decide/budget.h"
#include "decide/exp.h"
#include "test_util.h"

/* GPT-3 175B on 1,024 A100, TP 8 x PP 8 x DP 16, 1,536 sequences: 96
 * microbatches, 4 events per (stage, microbatch, direction). */
static void test_step_events(void **state)
{
    (void)state;
    model_spec m;
    load_model("gpt3-175b", &m);
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 8, p.dp = 16, p.global_batch = 1536, p.seq_len = 2048;
    budget_est b = {0};
    budget_train(&m, &p, false, &b);
    assert_close(b.gpus, 1024, 0);
    assert_close(b.step_events, 4.0 * 8 * 96 * 2, 1e-12);
    /* interleaving multiplies the chunks, recompute replays the forward */
    p.schedule = SCHED_INTERLEAVED, p.vpp = 3, p.recompute = RECOMPUTE_FULL;
    budget_est c = {0};
    budget_train(&m, &p, false, &c);
    assert_close(c.step_events, 4.0 * 8 * 3 * 96 * 2 * 1.5, 1e-12);
}

/* The gradient all-reduce over 512 ranks of 1.69 GB: 512 x (32 + bytes /
 * 128 KiB) events, as measured for Llama-2-7B TP 8 on 512 DGX H100. */
static void test_collective_events(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-7b", &m);
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 1, p.dp = 512, p.global_batch = 1024, p.seq_len = 4096;
    budget_est b = {0};
    budget_train(&m, &p, false, &b);
    double grads = model_params_total(&m) / 8 * mem_grad_bytes_per_param(&p);
    double act = 1.0 * 4096 * m.hidden * 2;
    double want = 512 * (32 + grads / 131072) + 2 * 8 * (32 + act / 131072);
    assert_close(b.net_events, want, 1e-12);
    assert_close(b.max_flows, 512, 0);
    /* --full: every one of the 8 TP ranks' data-parallel groups at once */
    budget_est f = {0};
    budget_train(&m, &p, true, &f);
    assert_close(f.max_flows, 8 * 512, 0);
    assert_true(f.net_events > 7.9 * 512 * (32 + grads / 131072));
}

static void test_refusal(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-3-70b", &m);
    plan_train p;
    p = exp_plan_train_defaults();
    /* 2^20 GPUs, 10^4 microbatches: ran 2.9 minutes with --force */
    p.tp = 8, p.pp = 16, p.dp = 8192, p.seq_len = 4096;
    p.global_batch = 8192 * 10000;
    budget_est b = {0};
    budget_topology(131072, 27, 33, &b);
    budget_train(&m, &p, false, &b);
    llm_err e = {{0}};
    assert_int_equal(budget_check(&b, "x.cfg", false, &e), -1);
    assert_non_null(strstr(e.msg, "x.cfg: refusing to simulate 1048576 GPUs"));
    assert_non_null(strstr(e.msg, "--force"));
    assert_true(b.seconds > BUDGET_MAX_SECONDS);
    assert_int_equal(budget_check(&b, "x.cfg", true, &e), 0);
    /* the topology of 131,072 nodes alone: 2.3 GiB, within the limit */
    assert_close(b.bytes, 131072.0 * 60 * 310, 1e-12);

    /* the ready Llama-3 70B experiment on 64 H100 is nowhere near */
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 4, p.dp = 2, p.global_batch = 256, p.seq_len = 8192;
    p.schedule = SCHED_INTERLEAVED, p.vpp = 5;
    budget_est r = {0};
    budget_topology(8, 27, 33, &r);
    budget_train(&m, &p, false, &r);
    assert_true(r.seconds < 1);
    assert_int_equal(budget_check(&r, "x.cfg", false, &e), 0);
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
        cmocka_unit_test(test_refusal),
        cmocka_unit_test(test_serving),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
