/* Memory model against the ZeRO paper's model-state formulas, Korthikanti
 * et al.'s activation formulas, exact KV-cache bytes, and the invariants of
 * remedies and recommendations. */
#include <stdlib.h>

#include "mem/mem.h"
#include "decide/exp.h"
#include "test_util.h"

static mem_overhead no_overhead(void)
{
    return (mem_overhead){0, 0, 0};
}

/* ZeRO (Rajbhandari et al. 2020) §5: model states per GPU for
 * mixed-precision Adam, K = 12: baseline (2+2+K)Ψ; P_os 4Ψ + KΨ/N_d;
 * P_os+g 2Ψ + 14Ψ/N_d; P_os+g+p 16Ψ/N_d. */
static void test_zero_formulas(void **state)
{
    (void)state;
    model_spec m;
    load_model("megatron-7.5b", &m);
    mem_overhead o = no_overhead();
    plan_train p;
    p = exp_plan_train_defaults();
    p.dp = 64;
    p.optimizer = OPT_ADAM;
    const double want[4][2] = {{16, 0}, {4, 12}, {2, 14}, {0, 16}};
    for (int z = 0; z <= 3; z++) {
        p.zero = z;
        mem_result r;
        mem_train_breakdown(&m, &p, &o, &r);
        double psi = r.params_per_gpu;
        double states = r.weights - r.zero3_gather + r.gradients + r.optimizer;
        assert_close(states, want[z][0] * psi + want[z][1] * psi / 64, 1e-12);
    }
    /* Table 1, 7.5B at N_d = 64: 31.4 / 16.6 / 1.88 GB; Ψ here is the
     * model's exact 7.47e9, not 7.5e9, hence 1% */
    const double table1_gb[] = {31.4, 16.6, 1.88};
    for (int z = 1; z <= 3; z++) {
        p.zero = z;
        mem_result r;
        mem_train_breakdown(&m, &p, &o, &r);
        double states = r.weights - r.zero3_gather + r.gradients + r.optimizer;
        assert_close(states / 1e9, table1_gb[z - 1], 0.01);
    }
}

/* Optimizer bytes per parameter (mixed precision adds a 4 B fp32 master). */
static void test_optimizer_bytes(void **state)
{
    (void)state;
    plan_train p;
    p = exp_plan_train_defaults();
    p.optimizer = OPT_ADAMW;
    assert_true(mem_optimizer_bytes_per_param(&p) == 12);
    p.optimizer = OPT_SGD;
    assert_true(mem_optimizer_bytes_per_param(&p) == 4);
    p.optimizer = OPT_SGD_MOMENTUM;
    assert_true(mem_optimizer_bytes_per_param(&p) == 8);
    p.precision = DT_FP32;
    p.optimizer = OPT_ADAM;
    assert_true(mem_optimizer_bytes_per_param(&p) == 8); /* no master */
    assert_true(mem_grad_bytes_per_param(&p) == 4);
    p.precision = DT_BF16;
    p.optimizer = OPT_ADAM8BIT;
    assert_close(mem_optimizer_bytes_per_param(&p), 6.00390625, 1e-12);
}

/* Adafactor's factored state is far below Adam's 8 B per parameter. */
static void test_adafactor_factored(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-7b", &m);
    mem_overhead o = no_overhead();
    plan_train p;
    p = exp_plan_train_defaults();
    p.optimizer = OPT_ADAFACTOR;
    mem_result r;
    mem_train_breakdown(&m, &p, &o, &r);
    double psi = r.params_per_gpu;
    /* master 4Ψ + row/col accumulators: Σ 4(rows+cols) ≪ 4Ψ */
    assert_true(r.optimizer > 4 * psi);
    assert_true(r.optimizer < 4.01 * psi);
}

/* Korthikanti et al. Table 2 on GPT-3 (a = 96, s = 2048, h = 12288, t = 8;
 * 5as/h = 80): per-layer activation bytes of one microbatch. */
static void test_korthikanti_table2(void **state)
{
    (void)state;
    model_spec m;
    load_model("gpt3-175b", &m);
    const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
    const double sbh = s * b * h, k = 5 * a * s / h;
    assert_true(k == 80);
    plan_train p;
    p = exp_plan_train_defaults();
    p.flash_attn = false;
    p.micro_batch = 1;
    p.seq_len = 2048;

    /* eq. 1, no parallelism: sbh(34 + 5as/h) */
    assert_close(mem_act_layer_bytes(&m, &p, 0), sbh * (34 + k), 1e-12);
    p.tp = 8; /* tensor parallel: sbh(10 + 24/t + 5as/(ht)) */
    assert_close(mem_act_layer_bytes(&m, &p, 0), sbh * (10 + 24 / t + k / t),
                 1e-12);
    p.sp = true; /* + sequence parallel: sbh(34/t + 5as/(ht)) */
    assert_close(mem_act_layer_bytes(&m, &p, 0), sbh * (34 / t + k / t), 1e-12);
    p.sp = false;
    p.recompute = RECOMPUTE_SELECTIVE; /* sbh(10 + 24/t) */
    assert_close(mem_act_layer_bytes(&m, &p, 0), sbh * (10 + 24 / t), 1e-12);
    p.sp = true; /* sbh·34/t */
    assert_close(mem_act_layer_bytes(&m, &p, 0), sbh * 34 / t, 1e-12);

    /* §5: selective recompute saves 70% of activation memory for GPT-3
     * (1 - 34/114) and 65% for MT-NLG 530B (5as/h = 64: 1 - 34/98) */
    const char *names[] = {"gpt3-175b", "megatron-529.6b"};
    const double saved[] = {0.70, 0.65};
    for (int i = 0; i < 2; i++) {
        load_model(names[i], &m);
        p.recompute = RECOMPUTE_NONE;
        double full = mem_act_layer_bytes(&m, &p, 0);
        p.recompute = RECOMPUTE_SELECTIVE;
        double sel = mem_act_layer_bytes(&m, &p, 0);
        assert_close(1 - sel / full, saved[i], 0.01);
    }
}

/* Eq. 5 + Appendix B: the first 1F1B stage holds p microbatches of L/p
 * layers = L layers, plus embedding dropout sbhp/t; full recompute keeps
 * 2sbh per layer (Korthikanti §4) plus one layer being replayed. */
static void test_first_stage_1f1b(void **state)
{
    (void)state;
    model_spec m;
    load_model("gpt3-175b", &m);
    mem_overhead o = no_overhead();
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 8, p.dp = 16, p.zero = 1, p.sp = true;
    p.recompute = RECOMPUTE_SELECTIVE;
    p.global_batch = 1536;
    mem_result r;
    mem_train_breakdown(&m, &p, &o, &r);
    const double sbh = 2048.0 * 12288, L = 96, t = 8, pp = 8;
    assert_int_equal(r.stage, 0);
    assert_int_equal(r.microbatches, 96);
    assert_int_equal(r.in_flight, 8);
    /* + the attention core one layer's backward replays: under
     * FlashAttention its fp32 log-sum-exp, 4as/t */
    assert_close(r.activations, sbh * L * 34 / t + sbh * pp / t +
                                    4.0 * 96 * 2048 / t,
                 1e-12);

    p.recompute = RECOMPUTE_FULL;
    mem_train_breakdown(&m, &p, &o, &r);
    /* the layer being replayed rematerializes its whole set (34sbh/t
     * and FlashAttention's 4as/t) beside its input, which the
     * checkpoints already count: sbh(34 - 2)/t + 4as/t */
    double replayed = sbh * (34 - 2) / t + 4.0 * 96 * 2048 / t;
    assert_close(r.activations, 2 * sbh * L / t + replayed + sbh * pp / t,
                 1e-12);
}

/* Interleaved 1F1B: L(1 + (p-1)/(p·v)) layers on stage 0 (Korthikanti
 * §4.2.3); GPipe holds all m microbatches. */
static void test_schedules(void **state)
{
    (void)state;
    model_spec m;
    load_model("gpt3-175b", &m);
    mem_overhead o = no_overhead();
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 8, p.dp = 1, p.sp = true, p.global_batch = 64;
    p.schedule = SCHED_INTERLEAVED;
    p.vpp = 3;
    mem_result r;
    mem_train_breakdown(&m, &p, &o, &r);
    assert_close(r.act_layers_held, 96 * (1 + 7.0 / (8 * 3)), 1e-12);
    p.schedule = SCHED_GPIPE;
    p.vpp = 1;
    mem_train_breakdown(&m, &p, &o, &r);
    assert_close(r.act_layers_held, 64 * 96 / 8.0, 1e-12);
    /* fewer microbatches than stages: 1F1B holds only m */
    p.schedule = SCHED_1F1B;
    p.global_batch = 4;
    mem_train_breakdown(&m, &p, &o, &r);
    assert_int_equal(r.in_flight, 4);
}

/* The example: Llama-2-70B, batch 8 x 4096, fp16: weights
 * 68.98e9 x 2 B = 128.5 GiB; KV 2·80·8·128·2 B x 32768 tokens = 10 GiB. */
static void test_inference_llama70b(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-70b", &m);
    mem_overhead o = shipped_overhead();
    plan_infer p;
    p = exp_plan_infer_defaults(&m);
    p.batch = 8, p.context = 4096, p.weight_dtype = DT_FP16;
    mem_result r;
    mem_infer_breakdown(&m, &p, &o, &r);
    assert_true(r.kv_cache == 10.0 * GiB);
    assert_true(r.weights == 68976648192.0 * 2);
    assert_close(r.weights / GiB, 128.48, 0.0005);
    assert_true(r.kv_rule_of_thumb == 8 * r.kv_cache); /* 64 / 8 KV heads */
    assert_true(r.total > 80 * GiB);
    assert_close(r.total, r.weights + r.kv_cache + r.activations + r.overhead,
                 1e-12);

    /* paged blocks: 4097 tokens take 257 blocks of 16 */
    p.context = 4097;
    mem_infer_breakdown(&m, &p, &o, &r);
    assert_true(r.kv_tokens == 8 * 257 * 16);

    /* TP 8: a KV head and 1/8 of the weights per GPU (plus replicated norms) */
    p.context = 4096;
    p.tp = 8;
    mem_infer_breakdown(&m, &p, &o, &r);
    assert_true(r.kv_cache == 10.0 * GiB / 8);
    assert_close(r.weights, 68976648192.0 * 2 / 8, 0.001);
}

/* Llama 2 7B's weight bytes with weights in d, and its parameters in the
 * GEMMs (quantized) and elsewhere (embeddings, norms, LM head: 16-bit). */
static double llama2_7b_weights(dtype d, double *gemm, double *rest)
{
    model_spec m;
    load_model("llama-2-7b", &m);
    mem_overhead o = no_overhead();
    plan_infer p = exp_plan_infer_defaults(&m);
    p.weight_dtype = d;
    p.context = 16;
    mem_result r;
    mem_infer_breakdown(&m, &p, &o, &r);
    *gemm = 32 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008);
    *rest = 6738415616.0 - *gemm;
    return r.weights;
}

/* int4 with 128-element groups: 0.5 B + (2 B scale + 2 B zero)/128 for the
 * GEMM weights; embeddings, norms and the LM head stay 16-bit. */
static void test_int4_weights(void **state)
{
    (void)state;
    double gemm, rest;
    double w = llama2_7b_weights(DT_INT4, &gemm, &rest);
    assert_close(w, gemm * (0.5 + 4.0 / 128) + rest * 2, 1e-12);
}

/* NVFP4: 4 bits + one 8-bit scale per 16 elements (4.5 bits) for the GEMM
 * weights, plus a 4-byte per-tensor scale each (under a millionth of the
 * total); the rest 16-bit.  Only Blackwell has FP4 tensor cores. */
static void test_fp4_weights(void **state)
{
    (void)state;
    double gemm, rest;
    double w = llama2_7b_weights(DT_FP4, &gemm, &rest);
    assert_close(w, gemm * 4.5 / 8 + rest * 2, 1e-6);
    assert_true(w > gemm * 4.5 / 8 + rest * 2);

    gpu_catalog c;
    llm_err e;
    assert_int_equal(cfg_load_gpus("topologies/gpus.cfg", ".", &c, &e), 0);
    assert_true(gpu_supports_dtype(gpu_find(&c, "b200"), DT_FP4, NULL));
    const char *why = NULL;
    assert_false(gpu_supports_dtype(gpu_find(&c, "h100-sxm"), DT_FP4, &why));
    assert_string_equal(why, "no FP4 tensor cores");
    assert_true(gpu_find(&c, "b200")->peak_flops[DT_FP4] ==
                2 * gpu_find(&c, "b200")->peak_flops[DT_FP8]);
    gpu_catalog_free(&c);
}

/* Remedies: each is a real saving, sorted, and a fitting one exists. */
static void test_remedies_sorted(void **state)
{
    (void)state;
    gpu_catalog c;
    llm_err e;
    assert_int_equal(cfg_load_gpus("topologies/gpus.cfg", ".", &c, &e), 0);
    const gpu_spec *g = gpu_find(&c, "a100-sxm-80gb");
    assert_non_null(g);
    model_spec m;
    load_model("llama-2-70b", &m);
    mem_overhead o = shipped_overhead();
    plan_infer p;
    p = exp_plan_infer_defaults(&m);
    p.batch = 8, p.context = 4096, p.weight_dtype = DT_FP16;
    mem_result base;
    mem_infer_breakdown(&m, &p, &o, &base);
    mem_remedy rm[MEM_MAX_REMEDIES];
    int n = mem_infer_remedies(&m, &p, &o, g, rm);
    assert_true(n >= 4);
    int any_fit = 0;
    for (int i = 0; i < n; i++) {
        assert_true(rm[i].total < base.total);
        assert_close(rm[i].saves, base.total - rm[i].total, 1e-12);
        if (i)
            assert_true(rm[i].saves <= rm[i - 1].saves);
        any_fit |= rm[i].fits;
    }
    assert_true(any_fit);
    gpu_catalog_free(&c);
}

/* Recommendation is minimal: the count fits, half of it does not. */
static void test_recommend_minimal(void **state)
{
    (void)state;
    gpu_catalog c;
    llm_err e;
    assert_int_equal(cfg_load_gpus("topologies/gpus.cfg", ".", &c, &e), 0);
    model_spec m;
    load_model("llama-2-70b", &m);
    mem_overhead o = shipped_overhead();
    plan_infer p;
    p = exp_plan_infer_defaults(&m);
    p.batch = 8, p.context = 4096, p.weight_dtype = DT_FP16;
    for (int i = 0; i < c.n; i++) {
        mem_choice ch;
        mem_recommend_infer(&m, &p, &o, &c.gpus[i], 1024, &ch);
        assert_true(ch.gpus > 0);
        assert_true(ch.result.total <= c.gpus[i].memory_bytes);
        assert_int_equal(ch.infer.tp * ch.infer.pp, ch.gpus);
        if (ch.gpus > 1) { /* the same layout rule at half the GPUs fails */
            plan_infer q = p;
            int n = ch.gpus / 2;
            q.tp = n < 8 ? n : 8;
            q.pp = n / q.tp;
            mem_result r;
            mem_infer_breakdown(&m, &q, &o, &r);
            assert_true(r.total > c.gpus[i].memory_bytes);
        }
    }
    /* training: 7B with Adam (16Ψ = 108 GB of states) needs more than one
     * 40 GB A100 */
    load_model("llama-2-7b", &m);
    plan_train t;
    t = exp_plan_train_defaults();
    mem_choice ch;
    mem_recommend_train(&m, &t, &o, gpu_find(&c, "a100-sxm-40gb"), 1024, &ch);
    assert_true(ch.gpus >= 4);
    assert_true(ch.result.total <= 40 * GiB);
    assert_int_equal(plan_train_check(&m, &ch.train, NULL), 0);
    gpu_catalog_free(&c);
}

/* LoRA (Hu et al. 2021) on Llama-2-70B at r = 16: adapters A (r x in)
 * and B (out x r) on q, k, v, o, gate, up and down of each of the 80
 * layers are the only trained parameters.  Per layer Σ(in + out):
 * q 8192+8192, k and v 8192+1024 each, o 8192+8192, gate and up
 * 8192+28672 each, down 28672+8192 = 161,792; x 16 x 80 = 207,093,760. */
static void test_lora_llama70b(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-70b", &m);
    mem_overhead o = no_overhead();
    plan_train p;
    p = exp_plan_train_defaults();
    p.seq_len = 4096;
    p.recompute = RECOMPUTE_FULL;
    mem_result full, lora;
    mem_train_breakdown(&m, &p, &o, &full);
    p.lora_rank = 16;
    mem_train_breakdown(&m, &p, &o, &lora);
    const double h = m.hidden, qd = (double)m.heads * m.head_dim,
                 kvd = (double)m.kv_heads * m.head_dim, f = m.ffn;
    const double per_layer = (h + qd) + 2 * (h + kvd) + (qd + h) +
                             2 * (h + f) + (f + h);
    const double want = m.layers * 16.0 * per_layer;
    assert_true(per_layer == 161792);
    assert_true(lora.trainable_params_per_gpu == want);
    assert_true(mem_lora_params_total(&m, 16) == want);
    assert_true(full.trainable_params_per_gpu == full.params_per_gpu);
    /* gradients, fp32 master and Adam moments for the adapters alone */
    double per_param = mem_grad_bytes_per_param(&p) +
                       mem_optimizer_bytes_per_param(&p);
    assert_true(per_param == 2 + 12);
    assert_close(lora.gradients + lora.optimizer, want * per_param, 1e-12);
    /* the frozen base is held as in full training, and the adapters' own
     * 16-bit copy beside it (0.3% of it) */
    assert_true(lora.params_per_gpu == full.params_per_gpu);
    assert_close(lora.weights, full.weights + 2 * want, 1e-12);
    assert_true(lora.activations == full.activations);
    /* TP shards the adapters like their linears (8 KV heads over tp 8) */
    p.tp = 8;
    mem_train_breakdown(&m, &p, &o, &lora);
    assert_close(lora.trainable_params_per_gpu, want / 8, 1e-12);
    /* an MoE layer adapts its attention only: Mixtral's 32 layers, q and
     * o 4096+4096, k and v 4096+1024 */
    model_spec mx;
    load_model("mixtral-8x7b", &mx);
    assert_true(mem_lora_params_total(&mx, 8) ==
                32 * 8.0 * (2 * 8192 + 2 * 5120));
}

/* The question it answers: a 70B fine-tune at micro-batch 1, seq 4096 on
 * 8 x A100-80GB or 4 x H100-80GB.  Full training's 16 B/param of model
 * states (1.1 TB) fits neither; LoRA keeps 2 B/param of frozen weights
 * (138 GB over the TP group) and fits both. */
static void test_lora_70b_fits(void **state)
{
    (void)state;
    gpu_catalog c;
    llm_err e;
    assert_int_equal(cfg_load_gpus("topologies/gpus.cfg", ".", &c, &e), 0);
    const gpu_spec *a100 = gpu_find(&c, "a100-sxm-80gb"),
                   *h100 = gpu_find(&c, "h100-sxm");
    assert_non_null(a100);
    assert_non_null(h100);
    model_spec m;
    load_model("llama-2-70b", &m);
    mem_overhead o = shipped_overhead();
    struct {
        const gpu_spec *g;
        int tp, dp, zero;
        plan_recompute rc;
    } plans[] = {
        {a100, 8, 1, 0, RECOMPUTE_FULL},      /* 8 x A100 */
        {a100, 8, 1, 0, RECOMPUTE_SELECTIVE},
        {a100, 4, 2, 3, RECOMPUTE_FULL},
        {h100, 4, 1, 0, RECOMPUTE_FULL},      /* 4 x H100 */
        {h100, 4, 1, 0, RECOMPUTE_SELECTIVE},
        {h100, 2, 2, 3, RECOMPUTE_FULL},
    };
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        plan_train p;
        p = exp_plan_train_defaults();
        p.tp = plans[i].tp, p.dp = plans[i].dp, p.zero = plans[i].zero;
        p.recompute = plans[i].rc;
        p.micro_batch = 1, p.seq_len = 4096;
        assert_int_equal(plan_train_check(&m, &p, &e), 0);
        mem_result full, lora;
        mem_train_breakdown(&m, &p, &o, &full);
        p.lora_rank = 16;
        assert_int_equal(plan_train_check(&m, &p, &e), 0);
        mem_train_breakdown(&m, &p, &o, &lora);
        assert_true(full.total > plans[i].g->memory_bytes);
        assert_true(lora.total < plans[i].g->memory_bytes);
    }
    gpu_catalog_free(&c);
}

/* Activation bytes per layer for each recompute mode, in closed form, on
 * Llama 3 8B (h 4096, 32 heads of 128, 8 KV heads: K and V 1024 wide,
 * SwiGLU f 14336), FlashAttention, 2-byte activations, per token:
 *   none: norm inputs and outputs 4h + Q, K, V, O (4096+1024+1024+4096)
 *     + gate, up, product 3f, x 2 B, + the fp32 LSE 4·32 B
 *     = 2·(16384 + 10240 + 43008) + 128 = 139392;
 *   selective: the same without the LSE, 139264;
 *   op (torchtitan): the input h, then the odd matmuls wq (4096), wv
 *     (1024), w1 (14336), w2 (4096), SDPA's output (4096) and LSE:
 *     2·(4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 128 = 63616;
 *   full: the input, 2h = 8192. */
static void test_recompute_closed_forms(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-3-8b", &m);
    plan_train p = exp_plan_train_defaults();
    p.seq_len = 2048;
    const double sb = 2048;
    const plan_recompute rc[] = {RECOMPUTE_NONE, RECOMPUTE_SELECTIVE,
                                 RECOMPUTE_OP, RECOMPUTE_FULL};
    const double want[] = {139392, 139264, 63616, 8192};
    for (int i = 0; i < 4; i++) {
        p.recompute = rc[i];
        assert_close(mem_act_layer_bytes(&m, &p, 5), sb * want[i], 1e-12);
        /* what the backward needs at once never depends on the mode */
        assert_close(mem_act_layer_full_bytes(&m, &p, 5), sb * 139392, 1e-12);
    }
    /* op replays wk, wo and w3: (1024 + 4096 + 14336) / (4096 + 1024 +
     * 1024 + 4096 + 3·14336) of the matmul FLOPs */
    assert_close(mem_op_replayed_share(&m, &p, 0), 19456.0 / 53248, 1e-12);

    /* TP 2 with SP: the block input, wq, wv, w1, SDPA and its LSE are
     * sharded; w2's output is the whole h of partial sums on each rank,
     * and the two reduce-scatter outputs h/2 each are saved too:
     * 2·(2048 + 2048 + 512 + 7168 + 4096 + 2048 + 2·2048) + 64 = 44096 */
    p.tp = 2, p.sp = true, p.recompute = RECOMPUTE_OP;
    assert_close(mem_act_layer_bytes(&m, &p, 5), sb * 44096, 1e-12);
    p.recompute = RECOMPUTE_FULL;
    assert_close(mem_act_layer_bytes(&m, &p, 5), sb * 4096, 1e-12);

    /* every:2 on one stage: the 2nd, 4th, ... layers are checkpointed,
     * the others keep everything */
    p = exp_plan_train_defaults();
    p.seq_len = 2048;
    p.recompute = RECOMPUTE_EVERY, p.recompute_every = 2;
    assert_close(mem_act_layer_bytes(&m, &p, 0), sb * 139392, 1e-12);
    assert_close(mem_act_layer_bytes(&m, &p, 1), sb * 8192, 1e-12);
}

/* every:K follows torchtitan's counter, which runs over the blocks one
 * rank wraps (parallelize_llama.py @9dec370): every:1 is full, every:L
 * checkpoints only the last layer, and on a pipeline stage the count
 * starts again at the stage's first layer and runs on through its
 * virtual stages in order. */
static void test_every_k_rule(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-3-8b", &m);
    mem_overhead o = no_overhead();
    plan_train p = exp_plan_train_defaults(), f;
    p.seq_len = 4096;
    p.recompute = RECOMPUTE_EVERY, p.recompute_every = 1;
    f = p;
    f.recompute = RECOMPUTE_FULL, f.recompute_every = 0;
    mem_result a, b;
    mem_train_breakdown(&m, &p, &o, &a);
    mem_train_breakdown(&m, &f, &o, &b);
    assert_true(a.total == b.total && a.activations == b.activations);

    p.recompute_every = 32; /* only layer 31 */
    for (int l = 0; l < 32; l++)
        assert_int_equal(plan_layer_checkpointed(&m, &p, l), l == 31);
    llm_err e;
    assert_int_equal(plan_train_check(&m, &p, &e), 0);
    p.recompute_every = 33;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "--recompute every:33"));
    assert_non_null(strstr(e.msg, "K 1..32"));
    p.recompute_every = 0;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);

    /* two stages of 16, every:3: positions 3, 6, ... 15 on each stage */
    p.pp = 2, p.recompute_every = 3;
    const int want2[] = {2, 5, 8, 11, 14, 18, 21, 24, 27, 30};
    for (int l = 0, k = 0; l < 32; l++) {
        bool c = k < 10 && want2[k] == l;
        assert_int_equal(plan_layer_checkpointed(&m, &p, l), c);
        k += c;
    }
    /* interleaved, 2 stages x 2 chunks of 8: stage 0 wraps layers 0-7
     * then 16-23, so its 3rd, 6th, 9th, 12th and 15th blocks are layers
     * 2, 5, 16, 19 and 22 */
    p.schedule = SCHED_INTERLEAVED, p.vpp = 2;
    const int want3[] = {2, 5, 16, 19, 22};
    for (int l = 0, k = 0; l < 24; l++) {
        if (l >= 8 && l < 16) /* stage 1's first chunk */
            continue;
        bool c = k < 5 && want3[k] == l;
        assert_int_equal(plan_layer_checkpointed(&m, &p, l), c);
        k += c;
    }
}

/* Over a grid of models and plans, the memory peak orders the modes by
 * what they keep: none >= selective, none >= every:4 >= every:2 >=
 * every:1 = full, op >= full, and none >= op while TP is at most 2.
 * (Under wider TP, op can keep more than none: the down projection's
 * output is the whole hidden size of partial sums on every rank, and
 * torchtitan's policy saves it as an odd-numbered matmul's output.)  op
 * and every:2 have no fixed order: on Llama 3 8B op keeps 46% of none,
 * every:2 53%. */
static void test_recompute_memory_order(void **state)
{
    (void)state;
    const char *models[] = {"llama-3-8b", "gpt3-175b", "mixtral-8x7b",
                            "llama-2-70b"};
    mem_overhead o = no_overhead();
    int n = 0;
    for (int mi = 0; mi < 4; mi++) {
        model_spec m;
        load_model(models[mi], &m);
        for (int tp = 1; tp <= 8; tp *= 2)
            for (int fl = 0; fl < 2; fl++)
                for (int mb = 1; mb <= 4; mb *= 4)
                    for (int ls = 0; ls < LOSS_COUNT; ls++) {
                        plan_train p = exp_plan_train_defaults();
                        p.tp = tp, p.sp = tp > 1, p.pp = 2, p.dp = 1;
                        p.flash_attn = fl, p.micro_batch = mb;
                        p.seq_len = 4096, p.loss = (plan_loss)ls;
                        p.global_batch = 8 * mb;
                        mem_result r;
                        double t[7];
                        const plan_recompute rc[] = {
                            RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_OP,
                            RECOMPUTE_EVERY, RECOMPUTE_EVERY, RECOMPUTE_EVERY,
                            RECOMPUTE_FULL};
                        const int every[] = {0, 0, 0, 4, 2, 1, 0};
                        for (int i = 0; i < 7; i++) {
                            p.recompute = rc[i];
                            p.recompute_every = every[i];
                            assert_int_equal(plan_train_check(&m, &p, NULL), 0);
                            mem_train_breakdown(&m, &p, &o, &r);
                            t[i] = r.total;
                        }
                        assert_true(t[0] >= t[1]);
                        assert_true(tp > 2 || t[0] >= t[2]);
                        assert_true(t[2] >= t[6]);
                        assert_true(t[0] >= t[3] && t[3] >= t[4] &&
                                    t[4] >= t[5]);
                        assert_true(t[5] == t[6] && t[6] < t[4]);
                        n++;
                    }
    }
    assert_int_equal(n, 4 * 4 * 2 * 2 * LOSS_COUNT);
}

/* The loss's logits buffers on the last stage (T tokens x vocab / TP):
 * Megatron's fused loss (v + 4) B per logit, PyTorch's eager
 * cross_entropy on fp32 logits 12 B, compiled 2v B.  With full
 * recompute and a long micro-batch they, not the replayed layer, set the
 * peak: Llama 3 8B at 32,768 tokens holds 32 layer inputs (2sbh each)
 * and the final norm's and output layer's inputs (2 x 2sbh) under 12 B
 * x 32768 x 128256 of eager logits (47 GiB), and the replayed layer
 * (4.3 GiB) is gone by then. */
static void test_loss_buffers(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-3-8b", &m);
    mem_overhead o = no_overhead();
    plan_train p = exp_plan_train_defaults();
    p.seq_len = 32768, p.recompute = RECOMPUTE_FULL;
    const double T = 32768, V = 128256, sbh = T * 4096;
    const double per[LOSS_COUNT] = {6, 12, 4};
    for (int ls = 0; ls < LOSS_COUNT; ls++) {
        p.loss = (plan_loss)ls;
        assert_close(mem_loss_bytes(&m, &p), per[ls] * T * V, 1e-12);
    }
    p.loss = LOSS_EAGER;
    mem_result r;
    mem_train_breakdown(&m, &p, &o, &r);
    assert_true(r.act_loss > r.act_working);
    assert_close(r.activations, 32 * 2 * sbh + 2 * 2 * sbh + 12 * T * V,
                 1e-12);
    /* TP 8 splits the vocabulary (a vocab-parallel loss) */
    p.tp = 8;
    assert_close(mem_loss_bytes(&m, &p), 12 * T * V / 8, 1e-12);
    /* GPT-3's layer (34h + 4a = 417,792 + 384 B per token with
     * FlashAttention) outweighs its fused loss (6 x 50257 B per token):
     * the replayed layer, less its input 2h, is the larger transient */
    load_model("gpt3-175b", &m);
    p = exp_plan_train_defaults();
    p.recompute = RECOMPUTE_FULL;
    mem_train_breakdown(&m, &p, &o, &r);
    assert_close(r.act_loss, 2048 * 6 * 50257.0, 1e-12);
    assert_close(r.act_working, 2048 * (32 * 12288.0 + 4 * 96), 1e-12);
    /* 96 layer inputs, the embedding's dropout mask (1 B), the final
     * norm's and output layer's inputs, the replayed layer */
    assert_close(r.activations, 96 * 2048 * 2 * 12288.0 + 2048 * 12288.0 +
                                    2 * 2 * 2048 * 12288.0 + r.act_working,
                 1e-12);
}

static void test_plan_errors(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-70b", &m);
    plan_train p;
    p = exp_plan_train_defaults();
    llm_err e;
    p.tp = 3;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "does not divide the 64 attention heads"));
    p.tp = 1;
    p.pp = 3;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "80 layers"));
    p.pp = 1;
    p.zero = 2;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    p.zero = 0;
    p.dp = 4;
    p.global_batch = 10;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "--global-batch"));
    p.global_batch = 0;
    p.lora_rank = -1;
    assert_int_equal(plan_train_check(&m, &p, &e), -1);
    assert_non_null(strstr(e.msg, "--lora-rank -1"));
    p.lora_rank = 16; /* LoRA with any ZeRO stage */
    for (p.zero = 0; p.zero <= 3; p.zero++)
        assert_int_equal(plan_train_check(&m, &p, &e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_formulas),
        cmocka_unit_test(test_optimizer_bytes),
        cmocka_unit_test(test_adafactor_factored),
        cmocka_unit_test(test_korthikanti_table2),
        cmocka_unit_test(test_first_stage_1f1b),
        cmocka_unit_test(test_schedules),
        cmocka_unit_test(test_inference_llama70b),
        cmocka_unit_test(test_fp4_weights),
        cmocka_unit_test(test_int4_weights),
        cmocka_unit_test(test_remedies_sorted),
        cmocka_unit_test(test_recommend_minimal),
        cmocka_unit_test(test_lora_llama70b),
        cmocka_unit_test(test_lora_70b_fits),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_recompute_closed_forms),
        cmocka_unit_test(test_every_k_rule),
        cmocka_unit_test(test_recompute_memory_order),
        cmocka_unit_test(test_loss_buffers),
    };
    return cmocka_run_group_tests_name("mem", tests, NULL, NULL);
}
