/* Training step: closed forms of the schedule and the event loop. */
#include <math.h>
#include <stdlib.h>

#include "decide/exp.h"
#include "test_util.h"
#include "mem/mem.h"
#include "train/train.h"
#include "train/zero3.h"

static train_result run(env *v, const plan_train *p, bool free_comm)
{
    train_input in = {&v->m, p, v->t, R(v->t), v->t->gpu, &v->cost, &v->coll, &v->ov,
                      free_comm, false, NULL, NULL, 0, NULL};
    train_result r;
    llm_err e;
    if (train_simulate(&in, &r, &e) != 0) {
        print_error("%s\n", e.msg);
        fail();
    }
    return r;
}

/* One op's time as a training step prices it: tensor-core kernels at the
 * training-load fraction of the tables' rate (calib/training-load.tsv). */
static double op(env *v, cost_op o)
{
    cost_result r;
    llm_err e;
    assert_int_equal(cost_predict(&v->cost, v->t->gpu, &o, COST_FALLBACK_DTYPE,
                                  &r, &e), 0);
    if (o.kind == OP_GEMM || o.kind == OP_ATTN_PREFILL)
        return r.time_s / (o.dt == DT_FP8 ? v->cost.train_tensor_fp8
                                          : v->cost.train_tensor_16bit);
    return r.time_s;
}

static double gemm(env *v, double m, double n, double k)
{
    return op(v, (cost_op){.kind = OP_GEMM, .dt = DT_BF16, .m = m, .n = n,
                           .k = k, .batch = 1});
}

/* One GPU, no parallelism, one microbatch: the step is the sum of its
 * ops' times, nothing more (Llama-3-8B: GEMMs forward, data and weight
 * gradients; FlashAttention forward and 2.5x backward; norms, SwiGLU,
 * residual adds; embedding; logits and cross-entropy; Adam). */
static void test_single_gpu_sum_of_ops(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-3-8b");
    /* a one-GPU plan: count only the node's first GPU (rank 0 is the only
     * one the plan touches) */
    v.t->ngpu = 1;
    plan_train p;
    p = exp_plan_train_defaults();
    p.micro_batch = 2;
    p.global_batch = 2;
    p.seq_len = 4096;
    train_result r = run(&v, &p, false);
    const double T = 8192, h = 4096, f = 14336, V = 128256, L = 32;
    double layer = 0;
    const double sh[4][2] = {{h + 2 * 1024, h}, {h, h}, {2 * f, h}, {h, f}};
    for (int i = 0; i < 4; i++) { /* forward, dgrad, wgrad */
        double n = sh[i][0], k = sh[i][1];
        layer += gemm(&v, T, n, k) + gemm(&v, T, k, n) + gemm(&v, k, n, T);
    }
    double at = op(&v, (cost_op){.kind = OP_ATTN_PREFILL, .dt = DT_BF16,
                                 .batch = 2, .heads = 32, .kv_heads = 8,
                                 .head_dim = 128, .v_head_dim = 128,
                                 .q_len = 4096, .kv_len = 4096, .causal = true,
                                 .flash = true});
    layer += 3.5 * at;
    double act = op(&v, (cost_op){.kind = OP_ELEMENTWISE, .dt = DT_BF16,
                                  .elems = T * f, .reads = 2, .writes = 1,
                                  .mem = MEM_ACTIVATION});
    double nrm = op(&v, (cost_op){.kind = OP_NORM, .dt = DT_BF16, .elems = T * h});
    double add = op(&v, (cost_op){.kind = OP_ELEMENTWISE, .dt = DT_BF16,
                                  .elems = T * h, .reads = 2, .writes = 1});
    layer += 3 * act + 3 * (2 * nrm + 2 * add);
    double emb = op(&v, (cost_op){.kind = OP_EMBEDDING, .dt = DT_BF16,
                                  .elems = T * h});
    double head = gemm(&v, T, V, h) + gemm(&v, T, h, V) + gemm(&v, h, V, T);
    double ce = 2 * op(&v, (cost_op){.kind = OP_SOFTMAX, .dt = DT_BF16,
                                     .elems = T * V});
    double params = model_params_total(&v.m);
    double adam = op(&v, (cost_op){.kind = OP_OPTIMIZER, .dt = DT_FP32,
                                   .elems = params});
    double want = L * layer + 3 * emb + head + ce + adam;
    assert_close(r.step_s, want, 1e-6);
    assert_close(r.bubble_fraction, 0, 1e-12);
    for (int k = 0; k < COMM_KINDS; k++)
        assert_true(fabs(r.exposed_comm_s[k]) < 1e-12);
    /* another optimizer's step moves its own bytes a parameter
     * (mem_optimizer_step_bytes): SGD reads the weight and the gradient and
     * writes the weight, 12 B where Adam moves 28 */
    p.optimizer = OPT_SGD;
    train_result s = run(&v, &p, false);
    double sgd = op(&v, (cost_op){.kind = OP_OPTIMIZER, .dt = DT_FP32,
                                  .elems = params, .bytes = 12});
    assert_true(sgd < adam);
    assert_close(s.step_s, want - adam + sgd, 1e-6);
    /* LAMB (apex FusedLAMB): Adam's states, and 52 B a parameter: the
     * gradient, weight and update norms and a second stage over the
     * weight and the update */
    p.optimizer = OPT_LAMB;
    train_result l = run(&v, &p, false);
    double lamb = op(&v, (cost_op){.kind = OP_OPTIMIZER, .dt = DT_FP32,
                                   .elems = params, .bytes = 52});
    assert_true(lamb > adam);
    assert_close(l.step_s, want - adam + lamb, 1e-6);
    plan_train w = p;
    w.optimizer = OPT_ADAMW;
    assert_close(mem_optimizer_bytes_per_param(&p),
                 mem_optimizer_bytes_per_param(&w), 1e-12);
    v.t->ngpu = 8;
    env_close(&v);
}

/* With free communication and identical stages the pipeline bubble is
 * (p-1)/m of the ideal time for GPipe and 1F1B, and (p-1)/(v·m) with v
 * interleaved chunks (Narayanan et al. 2021 §2.2).  A model whose
 * embedding and output are tiny next to its layers keeps stages equal. */
static void test_bubble(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    v.m.vocab = 8; /* stages of equal work */
    plan_train p;
    p = exp_plan_train_defaults();
    p.pp = 4, p.dp = 2, p.zero = 0, p.micro_batch = 1, p.seq_len = 2048;
    const int m = 16;
    p.global_batch = m * p.dp;
    p.schedule = SCHED_GPIPE;
    train_result g = run(&v, &p, true);
    assert_close(g.bubble_fraction, 3.0 / m, 0.01);
    for (int s = 0; s < 4; s++) /* GPipe: every forward before a backward */
        assert_int_equal(g.chunks_held_by_stage[s], m);
    p.schedule = SCHED_1F1B;
    train_result r = run(&v, &p, true);
    assert_close(r.bubble_fraction, 3.0 / m, 0.01);
    /* the first 1F1B stage holds p microbatches of activations, stage s
     * p - s, as the schedule ran, and `llmsim memory` agrees */
    assert_int_equal(r.memory.stage, 0);
    assert_int_equal(r.memory.in_flight, 4);
    assert_int_equal(r.chunks_held, 4);
    for (int s = 0; s < 4; s++)
        assert_int_equal(r.chunks_held_by_stage[s], 4 - s);
    /* the peak comes when stage 0 finishes its 4th forward */
    assert_close(r.memory_peak_at_s, 4 * r.fwd_s, 1e-6);
    /* Narayanan et al.'s (p-1)/(v·m) idealizes the interleaved warm-up;
     * Megatron's exact order (sched.c) comes out 3% below it here */
    p.schedule = SCHED_INTERLEAVED;
    p.vpp = 2;
    train_result in = run(&v, &p, true);
    assert_close(in.bubble_fraction, 3.0 / (2 * m), 0.05);
    /* Megatron's warm-up: (p - s - 1)·2 + (v - 1)·p chunks, plus one */
    for (int s = 0; s < 4; s++)
        assert_int_equal(in.chunks_held_by_stage[s], (4 - s - 1) * 2 + 4 + 1);
    assert_close(in.memory.act_layers_held,
                 in.chunks_held_by_stage[in.memory.stage] * 32 / 4 / 2.0, 1e-9);
    env_close(&v);
}

/* Uneven pipelines: the split frameworks derive (Megatron-Core counts the
 * embedding and the loss as a layer each: Llama 3.1 405B's 126 layers in
 * 16 stages are 7, 8 x 14, 7; BLOOM's 70 in 12 are 5, 6 x 10, 5), a
 * given split, and a GPipe step over stages of unequal work, which is a
 * flow shop of M identical microbatches: sum of the stages' times plus
 * M - 1 times the slowest, forward and backward. */
static void test_uneven_stages(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    model_spec m = v.m;
    plan_train p = exp_plan_train_defaults();
    llm_err e;
    m.layers = 126, p.pp = 16, p.dp = 1, p.tp = 1;
    assert_int_equal(plan_train_check(&m, &p, &e), 0);
    int a, b, sum = 0;
    for (int s = 0; s < 16; s++) {
        plan_vstage_layers(&m, &p, s, &a, &b);
        assert_int_equal(a, sum);
        assert_int_equal(b - a, s == 0 || s == 15 ? 7 : 8);
        sum = b;
    }
    assert_int_equal(sum, 126);
    m.layers = 70, p.pp = 12;
    plan_vstage_layers(&m, &p, 0, &a, &b);
    assert_int_equal(b - a, 5);
    plan_vstage_layers(&m, &p, 5, &a, &b);
    assert_int_equal(b - a, 6);
    assert_int_equal(plan_stage_layer_count(&m, &p, 11), 5);
    /* interleaved: the split is over pp x vpp virtual stages */
    m.layers = 30, p.pp = 4, p.vpp = 2, p.schedule = SCHED_INTERLEAVED;
    assert_int_equal(plan_train_check(&m, &p, &e), 0);
    assert_int_equal(plan_stage_layer_count(&m, &p, 0), 3 + 4);
    assert_int_equal(plan_stage_layer_count(&m, &p, 3), 4 + 3);
    /* a layer a chunk (Llama 3 405B in 16 stages of 8 chunks, Dubey et al.
     * 2024 Sec. 3.3.2): the first chunk holds the embedding alone, the last
     * the loss alone, stages 0 and 15 have 7 layers and the others 8 */
    m.layers = 126, p.pp = 16, p.vpp = 8;
    assert_int_equal(plan_train_check(&m, &p, &e), 0);
    plan_vstage_layers(&m, &p, 0, &a, &b);
    assert_int_equal(b - a, 0);
    plan_vstage_layers(&m, &p, 127, &a, &b);
    assert_int_equal(a, 126);
    assert_int_equal(b, 126);
    assert_int_equal(plan_stage_layer_count(&m, &p, 0), 7);
    assert_int_equal(plan_stage_layer_count(&m, &p, 1), 8);
    assert_int_equal(plan_stage_layer_count(&m, &p, 15), 7);
    /* a given list may leave the first and last chunk empty, no other */
    m.layers = 30, p.pp = 4, p.vpp = 1, p.schedule = SCHED_1F1B;
    p.layers_per_stage = (plan_int_list){.n = 4, .v = {0, 15, 15, 0}};
    assert_int_equal(plan_train_check(&m, &p, &e), 0);
    p.layers_per_stage = (plan_int_list){.n = 4, .v = {10, 0, 10, 10}};
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "gives stage 1 no layers"));
    p.layers_per_stage.n = 0;
    /* refused: neither layers nor layers + 2 split, a list that does not
     * add up, a list of the wrong length */
    m.layers = 32, p.pp = 5, p.vpp = 1, p.schedule = SCHED_1F1B;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "does not split the 32 layers"));
    p.pp = 2;
    p.layers_per_stage = (plan_int_list){.n = 2, .v = {15, 16}};
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "sums to 31"));
    p.layers_per_stage = (plan_int_list){.n = 3, .v = {10, 11, 11}};
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "gives 3 entries for 2 stages"));

    /* the flow shop: 4 stages of 4, 12, 8, 8 layers, free communication,
     * stages of layers only (tiny vocabulary) */
    v.m.vocab = 8;
    p = exp_plan_train_defaults();
    p.pp = 4, p.dp = 2, p.micro_batch = 1, p.seq_len = 2048;
    p.schedule = SCHED_GPIPE;
    const int M = 8;
    p.global_batch = M * p.dp;
    p.layers_per_stage = (plan_int_list){.n = 4, .v = {4, 12, 8, 8}};
    train_result r = run(&v, &p, true);
    p.layers_per_stage = (plan_int_list){.n = 4, .v = {8, 8, 8, 8}};
    train_result even = run(&v, &p, true);
    /* a stage's time is its layers' (8 layers: even.fwd_s) */
    double f8 = even.fwd_s, b8 = even.bwd_s;
    double sum_t = (4 + 12 + 8 + 8) / 8.0 * (f8 + b8);
    double want = sum_t + (M - 1) * 12 / 8.0 * (f8 + b8);
    /* the pipeline's span on the busiest stage: its busy time M x 12
     * layers' work, plus the bubble */
    double busy = M * 12 / 8.0 * (f8 + b8);
    /* (stage 0 also looks up the embedding) */
    assert_close(r.fwd_s + r.bwd_s, 4 / 8.0 * (f8 + b8), 0.01);
    assert_close(busy * (1 + r.bubble_fraction), want, 0.01);
    /* memory: the first stage holds half the parameters of the second */
    mem_result s0, s1;
    p.layers_per_stage = (plan_int_list){.n = 4, .v = {4, 12, 8, 8}};
    mem_train_stage(&v.m, &p, &v.ov, 0, -1, &s0);
    mem_train_stage(&v.m, &p, &v.ov, 1, -1, &s1);
    assert_true(s0.params_per_gpu < s1.params_per_gpu / 2);
    /* stage 0's pass per microbatch counts all its chunks: 2 stages of 16
     * layers, or of 2 chunks of 8, do the same work a microbatch */
    p.layers_per_stage.n = 0;
    p.pp = 2, p.dp = 4, p.schedule = SCHED_1F1B;
    p.global_batch = 4 * p.dp;
    train_result one = run(&v, &p, true);
    p.schedule = SCHED_INTERLEAVED, p.vpp = 2;
    train_result two = run(&v, &p, true);
    assert_close(two.fwd_s, one.fwd_s, 1e-6);
    assert_close(two.bwd_s, one.bwd_s, 1e-6);
    /* a stage of the embedding alone holds its weights and no layer's
     * activations (a finite peak, below a stage of layers) */
    p.schedule = SCHED_1F1B, p.vpp = 1, p.pp = 4, p.dp = 2;
    p.global_batch = 4 * p.dp;
    p.layers_per_stage = (plan_int_list){.n = 4, .v = {0, 16, 16, 0}};
    mem_train_stage(&v.m, &p, &v.ov, 0, -1, &s0);
    mem_train_stage(&v.m, &p, &v.ov, 1, -1, &s1);
    assert_true(isfinite(s0.total) && s0.total > 0);
    assert_true(s0.params_per_gpu > 0);
    assert_true(s0.act_layers_held == 0 && s0.act_per_layer == 0);
    assert_true(s0.total < s1.total);
    env_close(&v);
}

/* ZeRO-3 moves 1.5x the bytes of plain data parallelism (ZeRO §7); two
 * identical runs give identical results. */
static void test_zero3_bytes_and_determinism(void **state)
{
    (void)state;
    plan_train p;
    p = exp_plan_train_defaults();
    p.dp = 8;
    double base = train_dp_bytes(&p, 1e9, 2);
    assert_close(base, 2 * 1e9 * 2 * 7 / 8.0, 1e-12);
    p.zero = 3;
    assert_close(train_dp_bytes(&p, 1e9, 2), 1.5 * base, 1e-12);

    env v;
    env_open(&v, 2, "llama-2-7b");
    plan_train q;
    q = exp_plan_train_defaults();
    q.tp = 2, q.pp = 2, q.dp = 4, q.global_batch = 32, q.seq_len = 4096;
    train_result a = run(&v, &q, false), b = run(&v, &q, false);
    assert_true(a.step_s == b.step_s && a.mfu == b.mfu &&
                a.exposed_comm_s[COMM_DP] == b.exposed_comm_s[COMM_DP]);
    assert_true(a.exposed_comm_s[COMM_TP] > 0);
    assert_true(a.mfu > 0.2 && a.mfu < 0.8);
    env_close(&v);
}

/* DeepSpeed ZeRO-3's coordinator (train/zero3.h), closed forms.  A gather
 * takes 1 ms + 1 ns per element. */
static double z3_linear(void *ctx, double params)
{
    (void)ctx;
    return 1e-3 + params * 1e-9;
}

static double z3_fails(void *ctx, double params)
{
    (void)ctx, (void)params;
    return -1;
}

static void test_zero3_coordinator(void **state)
{
    (void)state;
    /* four modules of 2M elements and 2 ms compute: a gather is 3 ms */
    z3_module m[4];
    for (int i = 0; i < 4; i++)
        m[i] = (z3_module){2e6, 2e-3};
    z3_result r;
    /* a budget below every module: nothing is ever prefetched, each
     * module waits for its own gather in full */
    assert_int_equal(z3_pass(m, 4, (z3_rule){1e9, 1e6}, z3_linear, NULL, &r),
                     0);
    assert_close(r.exposed_s, 4 * 3e-3, 1e-12);
    assert_close(r.gather_s, 4 * 3e-3, 1e-12);
    /* one module ahead (a prefetch bucket of one element: the first entry
     * is always taken): each module takes max(compute, gather) */
    assert_int_equal(z3_pass(m, 4, (z3_rule){1, 1e12}, z3_linear, NULL, &r),
                     0);
    assert_close(r.exposed_s, 4 * (3e-3 - 2e-3), 1e-9);
    /* a bucket of two modules coalesces them into gathers of 5 ms that
     * run ahead (nothing limits the live elements): the stream, 2.5 ms a
     * module, is the bottleneck of 2 ms of compute */
    assert_int_equal(z3_pass(m, 4, (z3_rule){4e6, 1e12}, z3_linear, NULL, &r),
                     0);
    assert_close(r.gather_s, 4 * 2.5e-3, 1e-12);
    assert_close(r.exposed_s, 4 * (2.5e-3 - 2e-3), 1e-9);
    /* compute that outlasts every gather hides them all */
    for (int i = 0; i < 4; i++)
        m[i].compute_s = 10e-3;
    assert_int_equal(z3_pass(m, 4, (z3_rule){1, 1e12}, z3_linear, NULL, &r),
                     0);
    assert_close(r.exposed_s + 1, 1, 1e-12);
    /* persistent modules (no elements) are never gathered, and with
     * nothing live behind them the budget lets the next module's gather
     * run during their compute even when it is below every module */
    m[1].params = m[3].params = 0;
    assert_int_equal(z3_pass(m, 4, (z3_rule){1e9, 1}, z3_linear, NULL, &r),
                     0);
    assert_close(r.gather_s, 2 * 3e-3, 1e-12);
    assert_close(r.exposed_s + 1, 1, 1e-12);
    assert_int_equal(z3_pass(m, 4, (z3_rule){1, 1e12}, z3_fails, NULL, &r),
                     -1);
}

/* Invariants over a grid of budgets: a smaller live budget never makes a
 * pass faster; whatever the prefetch bucket (a larger one coalesces more
 * modules into a gather they all wait for, so it is not monotone), a pass
 * is never slower than waiting for every module's own gather in full, nor
 * faster than its gathers' stream time allows. */
static void test_zero3_bounds(void **state)
{
    (void)state;
    const double sizes[] = {1e6, 5e6, 1.2e7, 3e6, 4e7, 2e6};
    z3_module m[6];
    double compute = 0, blocking = 0;
    for (int i = 0; i < 6; i++) {
        m[i] = (z3_module){sizes[i], (i % 3 + 1) * 4e-3};
        compute += m[i].compute_s;
        blocking += z3_linear(NULL, sizes[i]);
    }
    const double grid[] = {1, 1e6, 3e6, 8e6, 2e7, 6e7, 1e9};
    const int ng = (int)(sizeof grid / sizeof grid[0]);
    for (int a = 0; a < ng; a++)
        for (int b = 0; b < ng; b++) {
            z3_result r0, r1;
            z3_pass(m, 6, (z3_rule){grid[a], grid[b]}, z3_linear, NULL, &r0);
            assert_true(r0.exposed_s <= blocking + 1e-12);
            assert_true(r0.exposed_s >= r0.gather_s - compute - 1e-12);
            if (b + 1 < ng) {
                z3_pass(m, 6, (z3_rule){grid[a], grid[b + 1]}, z3_linear,
                        NULL, &r1);
                assert_true(r1.exposed_s <= r0.exposed_s + 1e-12);
            }
        }
}

/* A ZeRO-3 step under a per-module stack (DeepSpeed): a live budget too
 * small to prefetch anything makes the step slower than an unlimited
 * one, by at most every gather in full; the per-layer stack is another
 * pricing of the same bytes. */
static void test_zero3_per_module_step(void **state)
{
    (void)state;
    env v;
    env_open(&v, 2, "llama-2-7b");
    stack_spec ds;
    llm_err e;
    assert_int_equal(cfg_load_stack("stacks/deepspeed.cfg", &ds, &e), 0);
    assert_int_equal(ds.z3_gather, STACK_GATHER_MODULE);
    plan_train p = exp_plan_train_defaults();
    p.dp = 16, p.zero = 3, p.micro_batch = 1, p.global_batch = 16;
    p.seq_len = 1024;
    train_input in = {&v.m, &p, v.t, R(v.t), v.t->gpu, &v.cost, &v.coll, &v.ov,
                      false, false, NULL, NULL, 0, &ds};
    train_result open, shut;
    p.z3_max_live_params = 1e13;
    assert_int_equal(train_simulate(&in, &open, &e), 0);
    p.z3_max_live_params = 1;
    assert_int_equal(train_simulate(&in, &shut, &e), 0);
    assert_true(shut.step_s > open.step_s);
    assert_true(shut.exposed_comm_s[COMM_DP] > open.exposed_comm_s[COMM_DP]);
    /* no prefetch: every module's gather waits in full, a fraction of
     * the compute on 2 x 8 GPUs (NVLink and 4 x 200 Gb/s a node) */
    assert_true(shut.step_s - open.step_s < 0.5 * open.step_s);
    env_close(&v);
}

/* A stack's floor on ZeRO-3's cross-node rate (stack_spec.z3_internode_Bps):
 * at 1 GB/s a GPU, the step of 2 x 8 GPUs takes at least its layers'
 * forward and backward gathers of fp16 parameters, (dp - 1) / dp of them
 * each, at that rate; without the floor it is far shorter; inside one node
 * the floor changes nothing. */
static void check_internode_floor(const char *stack)
{
    llm_err e;
    stack_spec ds;
    assert_int_equal(cfg_load_stack(stack, &ds, &e), 0);
    assert_true(ds.z3_internode_Bps == 0);
    for (int nodes = 1; nodes <= 2; nodes++) {
        env v;
        env_open(&v, nodes, "llama-2-7b");
        plan_train p = exp_plan_train_defaults();
        p.dp = 8 * nodes, p.zero = 3, p.micro_batch = 1;
        p.global_batch = p.dp, p.seq_len = 1024;
        train_input in = {&v.m, &p, v.t, R(v.t), v.t->gpu, &v.cost, &v.coll,
                          &v.ov, false, false, NULL, NULL, 0, &ds};
        train_result nccl, floored;
        ds.z3_internode_Bps = 0;
        assert_int_equal(train_simulate(&in, &nccl, &e), 0);
        ds.z3_internode_Bps = 1e9;
        assert_int_equal(train_simulate(&in, &floored, &e), 0);
        if (nodes == 1) {
            assert_true(floored.step_s == nccl.step_s);
        } else {
            double bytes = 2 * model_params_layers(&v.m, 0, v.m.layers - 1) *
                           2 * (p.dp - 1) / p.dp;
            assert_true(floored.step_s >= bytes / 1e9);
            assert_true(nccl.step_s < 0.5 * bytes / 1e9);
        }
        env_close(&v);
    }
}

/* ... for DeepSpeed's per-module coordinator and for PyTorch FSDP's
 * per-block gathers alike */
static void test_zero3_internode_floor(void **state)
{
    (void)state;
    check_internode_floor("stacks/deepspeed.cfg");
    check_internode_floor("stacks/fsdp1.cfg");
}

/* FSDP's backward prefetch (stack_spec.fsdp_backward_prefetch): after a
 * block's gradients (BACKWARD_POST, llm-foundry's) the next block's
 * all-gather waits in full, so the same step is slower and shows more
 * exposed data-parallel time than with the gather issued before them
 * (BACKWARD_PRE); the forward is the same either way. */
static void test_fsdp_backward_post(void **state)
{
    (void)state;
    llm_err e;
    stack_spec st;
    assert_int_equal(cfg_load_stack("stacks/llm-foundry.cfg", &st, &e), 0);
    assert_int_equal(st.fsdp_backward_prefetch, STACK_PREFETCH_POST);
    env v;
    env_open(&v, 1, "llama-2-7b");
    plan_train p = exp_plan_train_defaults();
    p.dp = 8, p.zero = 3, p.micro_batch = 2, p.global_batch = 16;
    p.seq_len = 2048;
    train_input in = {&v.m, &p, v.t, R(v.t), v.t->gpu, &v.cost, &v.coll,
                      &v.ov, false, false, NULL, NULL, 0, &st};
    train_result post, pre;
    assert_int_equal(train_simulate(&in, &post, &e), 0);
    st.fsdp_backward_prefetch = STACK_PREFETCH_PRE;
    assert_int_equal(train_simulate(&in, &pre, &e), 0);
    assert_true(post.step_s > pre.step_s);
    assert_true(post.exposed_comm_s[COMM_DP] > pre.exposed_comm_s[COMM_DP]);
    env_close(&v);
}

/* Sliding-window attention in a step: a window shorter than the sequence
 * makes the fused attention, so the step, faster; one as long as the
 * sequence changes nothing, nor does any window on the unfused path
 * (eager attention computes the whole square and masks it). */
static void test_sliding_window_step(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    plan_train p = exp_plan_train_defaults();
    p.dp = 8, p.zero = 1, p.global_batch = 8, p.seq_len = 8192;
    train_result full = run(&v, &p, false);
    v.m.sliding_window = 2048;
    train_result win = run(&v, &p, false);
    assert_true(win.step_s < full.step_s);
    v.m.sliding_global_every = 2; /* half the layers global: in between */
    train_result half = run(&v, &p, false);
    assert_true(half.step_s > win.step_s && half.step_s < full.step_s);
    v.m.sliding_global_every = 0;
    v.m.sliding_window = 8192;
    train_result wide = run(&v, &p, false);
    assert_true(wide.step_s == full.step_s);
    p.flash_attn = false, p.seq_len = 2048, p.global_batch = 8;
    v.m.sliding_window = 0;
    train_result eager = run(&v, &p, false);
    v.m.sliding_window = 512;
    train_result eager_w = run(&v, &p, false);
    assert_true(eager.step_s == eager_w.step_s);
    env_close(&v);
}

/* One representative data-parallel group stands for all of them: running
 * every group's collectives together on a rail-optimized fabric (--full)
 * gives the same step. */
static void test_full_equals_representative(void **state)
{
    (void)state;
    env v;
    env_open(&v, 2, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 4, p.pp = 1, p.dp = 4, p.zero = 1, p.global_batch = 16;
    p.seq_len = 4096;
    train_input in = {&v.m, &p, v.t, R(v.t), v.t->gpu, &v.cost, &v.coll, &v.ov, false,
                      false, NULL, NULL, 0, NULL};
    train_result a, b;
    llm_err e;
    assert_int_equal(train_simulate(&in, &a, &e), 0);
    in.full = true;
    assert_int_equal(train_simulate(&in, &b, &e), 0);
    assert_true(a.exposed_comm_s[COMM_DP] > 0);
    assert_close(b.step_s, a.step_s, 1e-9);
    env_close(&v);
}

/* Communication beside compute: closed forms of the SM and HBM shares,
 * and the stretch of the overlapped work. */
static void test_interference(void **state)
{
    (void)state;
    gpu_spec g = {.sm_count = 100, .mem_bw_Bps = 1e12};
    train_interference f;
    /* 100 GB/s at 10 GB/s per channel: 10 SMs, 10/90 for GEMMs; 3 bytes
     * of HBM per byte sent: 30%, 0.3/0.7 for memory-bound kernels */
    train_interfere(&g, 100e9, 10e9, 3, 0.25, 1.0, 10.0, &f);
    double s = 0.75 * 10 / 90.0 + 0.25 * 0.3 / 0.7;
    assert_int_equal(f.comm_sms, 10);
    assert_close(f.hbm_frac, 0.3, 1e-12);
    assert_close(f.slowdown, s, 1e-12);
    assert_close(f.extra_s, s, 1e-12); /* all the compute is overlapped */
    train_interfere(&g, 100e9, 10e9, 3, 0.25, 10.0, 1.0, &f);
    assert_close(f.extra_s, s / (1 + s), 1e-12); /* 1 s of comm */
    g.sm_count = 0; /* unknown SMs: only the HBM share */
    train_interfere(&g, 100e9, 10e9, 3, 1.0, 1.0, 10.0, &f);
    assert_int_equal(f.comm_sms, 0);
    assert_close(f.extra_s, 0.3 / 0.7, 1e-12);

    env v;
    env_open(&v, 2, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 4, p.dp = 4, p.zero = 1, p.global_batch = 16, p.seq_len = 4096;
    train_result a = run(&v, &p, false);
    assert_true(a.interference.extra_s > 0 && a.interference.comm_sms >= 1);
    p.overlap_grad_reduce = false; /* nothing runs beside the reduction */
    train_result b = run(&v, &p, false);
    assert_true(b.interference.extra_s == 0);
    assert_true(run(&v, &p, true).interference.extra_s == 0);
    env_close(&v);
}

/* The busiest links carry what the plan sends: stage 0's first GPU sends
 * each microbatch's activations (tokens x hidden x 2 bytes) to stage 1
 * and receives its gradients back, so its two NVLink directions carry
 * M x that of pipeline traffic, besides its share of the gradients. */
static void test_link_load(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.pp = 2, p.dp = 4, p.zero = 1, p.global_batch = 32, p.seq_len = 2048;
    p.recompute = RECOMPUTE_FULL;
    train_result r = run(&v, &p, false);
    double act = 2048.0 * 4096 * 2, M = 32 / 4;
    assert_true(r.ntop_links >= 2);
    int seen = 0;
    for (int i = 0; i < r.ntop_links; i++) {
        const train_link_use *u = &r.top_links[i];
        const topo_link *L = &v.t->link[u->link];
        if (i > 0)
            assert_true(u->utilization <= r.top_links[i - 1].utilization);
        assert_close(u->utilization,
                     u->bytes / (L->bw_Bps * v.coll.link_eff[L->kind] *
                                 r.step_s), 1e-9);
        if (u->bytes_by_kind[COMM_PP] > 0) {
            assert_close(u->bytes_by_kind[COMM_PP], M * act, 1e-9);
            assert_true(u->bytes_by_kind[COMM_DP] > 0);
            seen++;
        }
    }
    assert_int_equal(seen, 2); /* both directions of gpu0's NVLink */
    assert_true(run(&v, &p, true).ntop_links == 0); /* free communication */
    env_close(&v);
}

/* --overlap-param-gather: the next forward waits for the first bucket
 * of updated parameters only; with one bucket nothing can overlap. */
static void test_overlap_param_gather(void **state)
{
    (void)state;
    env v;
    env_open(&v, 4, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.dp = 32, p.zero = 1, p.global_batch = 64, p.seq_len = 4096;
    p.recompute = RECOMPUTE_FULL;
    p.bucket_bytes = 40e6;
    train_result a = run(&v, &p, false);
    p.overlap_param_gather = true;
    train_result b = run(&v, &p, false);
    assert_true(b.step_s < a.step_s);
    assert_close(a.step_s - b.step_s,
                 a.exposed_comm_s[COMM_DP] - b.exposed_comm_s[COMM_DP], 1e-6);
    p.bucket_bytes = 1e12; /* one bucket */
    train_result c = run(&v, &p, false);
    p.overlap_param_gather = false;
    train_result d = run(&v, &p, false);
    assert_close(c.step_s, d.step_s, 1e-12);
    env_close(&v);
}

/* The input pipeline in its periodic steady state: a loader faster than
 * the GPUs costs nothing; a slower one sets the step to the time its W
 * workers need for M microbatches of b samples, M·b·c/W, and GPU-Util
 * drops by the same ratio. */
static void test_input_pipeline(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 2, p.pp = 2, p.dp = 2, p.zero = 1, p.global_batch = 32;
    p.micro_batch = 2, p.seq_len = 4096, p.recompute = RECOMPUTE_SELECTIVE;
    train_result base = run(&v, &p, false);
    train_loader l;
    l = exp_loader_defaults();
    l.workers = 2, l.sample_s = 1e-6;
    train_input in = {&v.m, &p, v.t, R(v.t), v.t->gpu, &v.cost, &v.coll, &v.ov, false,
                      false, NULL, &l, 0, NULL};
    train_result r;
    llm_err e;
    assert_int_equal(train_simulate(&in, &r, &e), 0);
    assert_close(r.step_s, base.step_s, 1e-9);
    assert_true(r.input_wait_s == 0);
    l.workers = 3, l.sample_s = 0.5; /* 8 microbatches x 2 x 0.5 s / 3 */
    assert_int_equal(train_simulate(&in, &r, &e), 0);
    double need = 8 * 2 * 0.5 / 3;
    assert_true(need > base.step_s);
    assert_close(r.step_s, need, 1e-4);
    assert_close(r.input_wait_s, need - base.step_s, 1e-3);
    assert_close(r.step_no_input_wait_s, base.step_s, 1e-9);
    assert_close(r.gpu_util, base.gpu_util * base.step_s / r.step_s, 1e-3);
    assert_close(r.bubble_fraction, base.bubble_fraction, 1e-12); /* not input */
    env_close(&v);
}

/* Expert parallelism with skewed routing: the busiest rank's experts get
 * imbalance x the mean tokens, and the layer waits for them. */
static void test_moe_imbalance(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "mixtral-8x7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.dp = 8, p.ep = 8, p.zero = 1, p.global_batch = 8, p.seq_len = 4096;
    train_result a = run(&v, &p, true);
    p.moe_imbalance = 1.5;
    train_result b = run(&v, &p, true);
    /* one local expert (8 experts / ep 8) gets 4096 x top-2 tokens */
    double d = 0;
    for (int k = 0; k < 2; k++) {
        double tok = 4096.0 * 2 * (k ? 1.5 : 1.0), sign = k ? 1 : -1;
        d += sign * (gemm(&v, tok, 2 * 14336.0, 4096) +
                     gemm(&v, tok, 4096, 14336.0));
    }
    assert_close(b.fwd_s - a.fwd_s, 32 * d, 1e-9);
    plan_train q = p;
    q.moe_imbalance = 1; /* and the all-to-all waits for the busiest rank */
    assert_true(run(&v, &p, false).exposed_comm_s[COMM_EP] >
                run(&v, &q, false).exposed_comm_s[COMM_EP]);
    env_close(&v);
}

/* Without FlashAttention (Megatron-LM before 2022) attention is five
 * kernels: Q·Kᵀ over the whole s x s square, softmax, dropout on the
 * probabilities (the model has dropout 0.1), P·V; the forward of the 24
 * layers grows by exactly their sum less the fused kernel. */
static void test_unfused_attention(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "megatron-1.7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.dp = 8, p.global_batch = 8, p.seq_len = 2048;
    train_result fa = run(&v, &p, true);
    p.flash_attn = false;
    train_result un = run(&v, &p, true);
    const double s = 2048, heads = 24, d = 96, sq = heads * s * s;
    double unfused =
        op(&v, (cost_op){.kind = OP_GEMM, .dt = DT_BF16, .m = s, .n = s,
                         .k = d, .batch = heads}) +
        op(&v, (cost_op){.kind = OP_SOFTMAX, .dt = DT_BF16, .elems = sq}) +
        1.25 * op(&v, (cost_op){.kind = OP_ELEMENTWISE, .dt = DT_BF16,
                                .elems = sq, .reads = 1, .writes = 1,
                                .mem = MEM_ACTIVATION}) +
        op(&v, (cost_op){.kind = OP_GEMM, .dt = DT_BF16, .m = s, .n = d,
                         .k = s, .batch = heads});
    double fused = op(&v, (cost_op){.kind = OP_ATTN_PREFILL, .dt = DT_BF16,
                                    .batch = 1, .heads = 24, .kv_heads = 24,
                                    .head_dim = 96, .v_head_dim = 96,
                                    .q_len = s, .kv_len = s, .causal = true,
                                    .flash = true});
    assert_close(un.fwd_s - fa.fwd_s, 24 * (unfused - fused), 1e-9);
    env_close(&v);
}

/* LoRA on one GPU: the step is still the sum of its ops, with each base
 * GEMM's backward its data gradient alone (one GEMM of the forward's
 * size, no weight gradient), the rank-16 adapters' x·A and ·B GEMMs
 * forward and their data and weight gradients backward, no embedding
 * backward, and Adam over the adapters only (Llama-3-8B as above). */
static void test_lora_single_gpu_sum_of_ops(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-3-8b");
    v.t->ngpu = 1;
    plan_train p;
    p = exp_plan_train_defaults();
    p.micro_batch = 2, p.global_batch = 2, p.seq_len = 4096;
    p.lora_rank = 16;
    train_result r = run(&v, &p, false);
    const double T = 8192, h = 4096, f = 14336, V = 128256, L = 32, R = 16;
    double layer = 0;
    const double sh[4][2] = {{h + 2 * 1024, h}, {h, h}, {2 * f, h}, {h, f}};
    for (int i = 0; i < 4; i++) /* forward, data gradient */
        layer += gemm(&v, T, sh[i][0], sh[i][1]) +
                 gemm(&v, T, sh[i][1], sh[i][0]);
    /* adapters (in, out): q, k, v, o, gate, up, down */
    const double ad[7][2] = {{h, h}, {h, 1024}, {h, 1024}, {h, h},
                             {h, f},  {h, f},    {f, h}};
    for (int i = 0; i < 7; i++) {
        double in = ad[i][0], out = ad[i][1];
        layer += gemm(&v, T, R, in) + gemm(&v, T, out, R);     /* x·A·B */
        layer += gemm(&v, T, in, R) + gemm(&v, in, R, T);      /* dx, dA */
        layer += gemm(&v, T, R, out) + gemm(&v, R, out, T);    /* d(xA), dB */
    }
    double at = op(&v, (cost_op){.kind = OP_ATTN_PREFILL, .dt = DT_BF16,
                                 .batch = 2, .heads = 32, .kv_heads = 8,
                                 .head_dim = 128, .v_head_dim = 128,
                                 .q_len = 4096, .kv_len = 4096, .causal = true,
                                 .flash = true});
    layer += 3.5 * at; /* attention's backward is unchanged */
    double act = op(&v, (cost_op){.kind = OP_ELEMENTWISE, .dt = DT_BF16,
                                  .elems = T * f, .reads = 2, .writes = 1,
                                  .mem = MEM_ACTIVATION});
    double nrm = op(&v, (cost_op){.kind = OP_NORM, .dt = DT_BF16, .elems = T * h});
    double add = op(&v, (cost_op){.kind = OP_ELEMENTWISE, .dt = DT_BF16,
                                  .elems = T * h, .reads = 2, .writes = 1});
    layer += 3 * act + 3 * (2 * nrm + 2 * add);
    double emb = op(&v, (cost_op){.kind = OP_EMBEDDING, .dt = DT_BF16,
                                  .elems = T * h});
    double head = gemm(&v, T, V, h) + gemm(&v, T, h, V);
    double ce = 2 * op(&v, (cost_op){.kind = OP_SOFTMAX, .dt = DT_BF16,
                                     .elems = T * V});
    /* per layer r·Σ(in + out) = 16 x (2·8192 + 2·5120 + 2·18432 + 18432) */
    double trained = L * R * (2 * 2 * h + 2 * (h + 1024) + 3 * (h + f));
    assert_close(mem_lora_params_total(&v.m, 16), trained, 1e-15);
    double adam = op(&v, (cost_op){.kind = OP_OPTIMIZER, .dt = DT_FP32,
                                   .elems = trained});
    double want = L * layer + emb + head + ce + adam;
    assert_close(r.step_s, want, 1e-6);
    /* model FLOPs are the ones done: forward, data gradients (the dense
     * part once more), attention's backward 2x, adapters 6 per param */
    double fwd = model_flops_per_token_fwd(&v.m, 4096),
           dense = model_flops_per_token_dense(&v.m);
    double flops = T * (2 * fwd + (fwd - dense) + 6 * trained);
    assert_close(r.model_tflops_per_gpu, flops / r.step_s / 1e12, 1e-9);
    /* executed: FlashAttention does half the causal square, and its
     * backward 2.5 x its forward (Q·Kᵀ recomputed) */
    double a = 0.5 * (fwd - dense);
    double hw = T * (2 * dense + a + 2.5 * a + 6 * trained);
    assert_close(r.hw_tflops_per_gpu, hw / r.step_s / 1e12, 1e-9);
    v.t->ngpu = 8;
    env_close(&v);
}

/* LoRA against full training on the same plan (Llama-2-7B, data
 * parallel over 8 H100s).  Backward loses each base GEMM's weight
 * gradient: GEMM work goes from 3 to 2 forwards, so the step shrinks by
 * at most 1/3 (all of it GEMMs), less attention's unchanged backward and
 * the adapters' skinny GEMMs.  Only the adapters' gradients are reduced:
 * train_dp_bytes of r·Σ(in + out) = 16 x 32 x 78,080 = 39,976,960
 * parameters, under 1% of the 6.7B. */
static void test_lora_step(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.dp = 8, p.micro_batch = 1, p.global_batch = 64, p.seq_len = 4096;
    train_result full = run(&v, &p, false);
    p.lora_rank = 16;
    train_result lora = run(&v, &p, false);
    double cut = 1 - lora.step_s / full.step_s;
    assert_true(cut > 0.15 && cut < 1.0 / 3);
    assert_true(lora.fwd_s > full.fwd_s); /* the adapters' forward */
    assert_true(lora.bwd_s < full.bwd_s);
    const double trained = 16 * 32 * (4 * 8192.0 + 3 * (4096 + 11008));
    assert_true(trained == 39976960);
    assert_close(lora.dp_bytes_per_gpu, train_dp_bytes(&p, trained, 2),
                 1e-12);
    assert_close(lora.dp_bytes_per_gpu, 2 * trained * 2 * 7 / 8.0, 1e-12);
    assert_true(lora.dp_bytes_per_gpu < 0.01 * full.dp_bytes_per_gpu);
    assert_true(lora.memory.gradients < 0.01 * full.memory.gradients);
    /* ZeRO-3: each of the 8 microbatches gathers every weight twice (the
     * frozen base is still sharded) and reduce-scatters the adapters'
     * gradients once */
    p.zero = 3;
    lora = run(&v, &p, false);
    double per = 2 * 7 / 8.0; /* bytes per parameter a ring pass sends */
    /* the step counts every weight but the final norm's 4096 */
    double all = model_params_total(&v.m) - 4096 + trained;
    assert_close(lora.dp_bytes_per_gpu, 8 * (trained + 2 * all) * per, 1e-9);
    env_close(&v);
}

/* Physics over a grid: the FLOPs the kernels execute, over the step or
 * over the busy time, never pass the dtype's peak -- long contexts and
 * context parallelism included, where attention dominates (hw_tflops once
 * counted the masked half of the causal square and reached 1189 TFLOP/s
 * on an H100 at 262,144 tokens).  Model FLOPs count the full square, so
 * only they may go past it. */
/* calib/training-load.tsv: the tensor-core kernels (GEMMs, attention) of
 * a training step run at the given fraction of the tables' rate, and
 * nothing else does: halving the rate makes the step slower, but less than
 * twice as slow (norms, optimizer and communication keep their time); the
 * FP8 rate prices FP8 GEMMs, the 16-bit rate the rest. */
static void test_training_load(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-3-8b");
    plan_train p = exp_plan_train_defaults();
    p.tp = 1, p.pp = 1, p.dp = 8, p.seq_len = 4096, p.global_batch = 16;
    v.cost.train_tensor_16bit = v.cost.train_tensor_fp8 = 1;
    train_result full = run(&v, &p, false);
    v.cost.train_tensor_16bit = 0.5;
    train_result half = run(&v, &p, false);
    assert_true(half.tensor_load_16bit == 0.5);
    assert_true(half.step_s > 1.2 * full.step_s);
    assert_true(half.step_s < 2 * full.step_s);
    /* FP8: the FP8 rate alone slows it; the 16-bit rate still prices
     * attention and the output layer */
    p.precision = DT_FP8;
    v.cost.train_tensor_16bit = 1;
    train_result f1 = run(&v, &p, false);
    v.cost.train_tensor_fp8 = 0.5;
    train_result f8 = run(&v, &p, false);
    v.cost.train_tensor_fp8 = 1, v.cost.train_tensor_16bit = 0.5;
    train_result f16 = run(&v, &p, false);
    assert_true(f8.step_s > 1.1 * f1.step_s && f8.step_s < 2 * f1.step_s);
    assert_true(f16.step_s > f1.step_s && f16.step_s < f8.step_s);
    env_close(&v);
}

static void test_hw_flops_under_peak(void **state)
{
    (void)state;
    const char *models[] = {"llama-3-8b", "mixtral-8x7b"};
    const int seqs[] = {512, 8192, 131072};
    const int cps[] = {1, 2, 8};
    const int tps[] = {1, 8};
    const plan_recompute rcs[] = {RECOMPUTE_NONE, RECOMPUTE_SELECTIVE,
                                  RECOMPUTE_FULL, RECOMPUTE_OP,
                                  RECOMPUTE_EVERY};
    const dtype dts[] = {DT_BF16, DT_FP8};
    int runs = 0;
    for (int mi = 0; mi < 2; mi++) {
        env v;
        env_open(&v, 1, models[mi]);
        for (int si = 0; si < 3; si++)
            for (int ci = 0; ci < 3; ci++)
                for (int ti = 0; ti < 2; ti++)
                    for (int ri = 0; ri < 5; ri++)
                        for (int di = 0; di < 2; di++) {
                            int tp = tps[ti], cp = cps[ci];
                            if (tp * cp > 8)
                                continue;
                            plan_train p = exp_plan_train_defaults();
                            p.tp = tp, p.cp = cp, p.pp = 1, p.dp = 8 / (tp * cp);
                            p.ep = mi == 1 ? p.dp : 1;
                            p.seq_len = seqs[si];
                            p.recompute = rcs[ri];
                            p.recompute_every = rcs[ri] == RECOMPUTE_EVERY ? 2 : 0;
                            p.precision = dts[di];
                            p.flash_attn = seqs[si] <= 8192 ? ri != 1 : true;
                            p.global_batch = 2 * p.dp;
                            train_result r = run(&v, &p, false);
                            double peak = v.t->gpu->peak_flops[dts[di]] / 1e12;
                            if (!(r.hw_tflops_per_gpu <= peak) ||
                                !(r.sm_efficiency <= 1)) {
                                print_error("%s tp %d cp %d seq %d rc %d %s: "
                                            "hw %.1f of %.1f TFLOP/s, SM "
                                            "efficiency %.3f\n", models[mi], tp,
                                            cp, seqs[si], ri,
                                            dtype_name(dts[di]),
                                            r.hw_tflops_per_gpu, peak,
                                            r.sm_efficiency);
                                fail();
                            }
                            assert_true(r.hw_tflops_per_gpu > 0);
                            runs++;
                        }
        env_close(&v);
    }
    assert_true(runs >= 100);
}

/* The step time orders the modes by what they replay, over a grid of
 * models, TP degrees and FlashAttention on and off: none <= selective <=
 * full, none <= op <= full, none <= every:4 <= every:2 <= every:1, and
 * every:1 is full to the nanosecond.  The executed FLOPs per step grow
 * the same way.  The TP communication the backward repeats: the forward's
 * (half of the layer's) under full, half of that under op (the SP
 * all-gathers; the reduce-scatters are saved), and under every:2 the
 * forward's for half of the layers. */
static void test_recompute_time_order(void **state)
{
    (void)state;
    const char *models[] = {"llama-3-8b", "mixtral-8x7b"};
    int n = 0;
    for (int mi = 0; mi < 2; mi++) {
        env v;
        env_open(&v, 1, models[mi]);
        for (int tp = 1; tp <= 8; tp *= 8)
            for (int fl = 0; fl < 2; fl++) {
                plan_train p = exp_plan_train_defaults();
                p.tp = tp, p.sp = tp > 1, p.dp = 8 / tp;
                p.ep = mi == 1 ? p.dp : 1;
                p.flash_attn = fl, p.seq_len = 4096;
                p.global_batch = 2 * p.dp;
                const plan_recompute rc[] = {
                    RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_OP,
                    RECOMPUTE_EVERY, RECOMPUTE_EVERY, RECOMPUTE_EVERY,
                    RECOMPUTE_FULL};
                const int every[] = {0, 0, 0, 4, 2, 1, 0};
                train_result r[7];
                for (int i = 0; i < 7; i++) {
                    p.recompute = rc[i], p.recompute_every = every[i];
                    r[i] = run(&v, &p, false);
                }
                double t[7], f[7];
                for (int i = 0; i < 7; i++) {
                    t[i] = r[i].step_s;
                    f[i] = r[i].hw_tflops_per_gpu * r[i].step_s;
                }
                assert_true(t[0] <= t[1] && t[1] <= t[6]);
                assert_true(t[0] <= t[2] && t[2] <= t[6]);
                assert_true(t[0] <= t[3] && t[3] <= t[4] && t[4] <= t[5]);
                assert_true(t[5] == t[6] && f[5] == f[6]);
                assert_true(f[0] <= f[1] && f[1] <= f[6]);
                assert_true(f[0] <= f[2] && f[2] <= f[6]);
                assert_true(f[0] < f[3] && f[3] < f[4] && f[4] < f[5]);
                double tp0 = r[0].exposed_comm_s[COMM_TP];
                if (tp > 1) {
                    assert_true(tp0 > 0);
                    assert_close(r[6].exposed_comm_s[COMM_TP], 1.5 * tp0, 1e-9);
                    assert_close(r[2].exposed_comm_s[COMM_TP], 1.25 * tp0, 1e-9);
                    assert_close(r[4].exposed_comm_s[COMM_TP], 1.25 * tp0, 1e-9);
                }
                n++;
            }
        env_close(&v);
    }
    assert_int_equal(n, 8);
}

static void test_bad_plans(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    train_input in = {&v.m, &p, v.t, R(v.t), v.t->gpu, &v.cost, &v.coll, &v.ov, false,
                      false, NULL, NULL, 0, NULL};
    train_result r;
    llm_err e;
    p.tp = 4; /* 4 GPUs on an 8-GPU node */
    assert_int_equal(train_simulate(&in, &r, &e), -1);
    assert_non_null(strstr(e.msg, "= 4 GPUs, but"));
    p.tp = 8, p.pp = 1;
    p.tp = 3, p.dp = 1;
    assert_int_equal(train_simulate(&in, &r, &e), -1);
    assert_non_null(strstr(e.msg, "does not divide the 32 attention heads"));
    p.tp = 2, p.pp = 2, p.dp = 2, p.global_batch = 3;
    assert_int_equal(train_simulate(&in, &r, &e), -1);
    assert_non_null(strstr(e.msg, "--global-batch 3"));
    p.tp = 8, p.pp = 1, p.dp = 1, p.global_batch = 0, p.lora_rank = -1;
    assert_int_equal(train_simulate(&in, &r, &e), -1);
    assert_non_null(strstr(e.msg, "--lora-rank -1"));
    env_close(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_gpu_sum_of_ops),
        cmocka_unit_test(test_bubble),
        cmocka_unit_test(test_uneven_stages),
        cmocka_unit_test(test_zero3_bytes_and_determinism),
        cmocka_unit_test(test_zero3_coordinator),
        cmocka_unit_test(test_zero3_bounds),
        cmocka_unit_test(test_zero3_per_module_step),
        cmocka_unit_test(test_zero3_internode_floor),
        cmocka_unit_test(test_fsdp_backward_post),
        cmocka_unit_test(test_sliding_window_step),
        cmocka_unit_test(test_full_equals_representative),
        cmocka_unit_test(test_interference),
        cmocka_unit_test(test_link_load),
        cmocka_unit_test(test_overlap_param_gather),
        cmocka_unit_test(test_input_pipeline),
        cmocka_unit_test(test_moe_imbalance),
        cmocka_unit_test(test_unfused_attention),
        cmocka_unit_test(test_lora_single_gpu_sum_of_ops),
        cmocka_unit_test(test_lora_step),
        cmocka_unit_test(test_hw_flops_under_peak),
        cmocka_unit_test(test_training_load),
        cmocka_unit_test(test_recompute_time_order),
        cmocka_unit_test(test_bad_plans),
    };
    return cmocka_run_group_tests_name("train", tests, catalog_setup, catalog_teardown);
}
