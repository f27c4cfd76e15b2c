/* plan — the parallel plan of a training job (TP, PP, DP, CP, EP, the
 * micro-batch, ZeRO stage, recompute, schedule, precision, optimizer) and
 * of an inference deployment (TP, PP, batch, context, dtypes).  Owned by
 * the model layer so that mem, train, serve and the layers above share one
 * definition: a plan is what the user chose, knowing nothing of time or
 * memory. */
#ifndef LLMSIM_PLAN_H
#define LLMSIM_PLAN_H

#include <stdbool.h>

#include "base/dtype.h"
#include "base/err.h"
#include "model/model.h"

typedef enum {
    OPT_ADAM,
    OPT_ADAMW,
    OPT_SGD,
    OPT_SGD_MOMENTUM,
    OPT_ADAFACTOR,
    OPT_ADAM8BIT,
    OPT_LAMB,
    OPT_COUNT
} plan_optimizer;

/* Activation recomputation (checkpointing), from least to most replayed
 * (docs/how-it-works.md, Memory, derives what each keeps):
 *   NONE       every activation the backward needs is kept;
 *   SELECTIVE  Megatron-LM's: the attention core (scores, softmax,
 *              dropout) is replayed (Korthikanti et al. 2022 §5);
 *   OP         torchtitan's op-level selective AC: the outputs of every
 *              other matmul of a block, of the attention kernel and of
 *              reduce-scatters are kept, everything else is replayed;
 *   EVERY      torchtitan's layer selective AC: every K-th block
 *              (recompute_every) is checkpointed in full, the others
 *              keep everything;
 *   FULL       every block keeps only its input and is replayed. */
typedef enum {
    RECOMPUTE_NONE,
    RECOMPUTE_SELECTIVE,
    RECOMPUTE_OP,
    RECOMPUTE_EVERY,
    RECOMPUTE_FULL,
    RECOMPUTE_COUNT
} plan_recompute;

/* The cross-entropy loss's implementation, which sets the logits buffers
 * alive at the end of the forward and the start of the backward:
 *   FUSED     Megatron-LM's vocab-parallel kernel: an fp32 copy of the
 *             16-bit logits, turned in place into the softmax and then
 *             into the gradient;
 *   EAGER     PyTorch's cross_entropy on logits.float() (torchtitan
 *             without a compiled loss, Hugging Face): the fp32 copy, the
 *             log-softmax it saves, and in the backward the incoming
 *             gradient and the input gradient, each T x vocab in fp32;
 *   COMPILED  the same under torch.compile: the 16-bit logits are kept
 *             and the backward writes a 16-bit gradient. */
typedef enum { LOSS_FUSED, LOSS_EAGER, LOSS_COMPILED, LOSS_COUNT } plan_loss;
typedef enum { SCHED_1F1B, SCHED_GPIPE, SCHED_INTERLEAVED } plan_schedule;

/* A list of small integers a setting gives (layers per pipeline stage). */
#define PLAN_MAX_VSTAGES 256
typedef struct plan_int_list {
    int n; /* 0: none given */
    int v[PLAN_MAX_VSTAGES];
} plan_int_list;

typedef struct plan_train {
    int tp, pp, dp, cp, ep, vpp;
    /* layers of each pipeline stage (interleaved: of each virtual stage,
     * in model order); n = 0: even, or when pp does not divide the layers
     * but divides layers + 2, one layer fewer on the first and the last
     * stage (Megatron-Core's account_for_embedding/loss_in_pipeline_split:
     * the embedding and the loss each weigh a layer) */
    plan_int_list layers_per_stage;
    bool sp;
    int micro_batch, global_batch; /* global_batch 0 = micro_batch·dp·pp */
    int seq_len;
    plan_recompute recompute;
    int recompute_every; /* RECOMPUTE_EVERY: K, 1..layers; 0 otherwise */
    plan_loss loss;
    int zero;
    plan_schedule schedule;
    dtype precision;
    plan_optimizer optimizer;
    bool flash_attn;
    bool fp8_attention;  /* precision fp8: attention in FP8 too (where the
                            stack offers it) */
    bool compile;        /* torch.compile: the stack's compiled kernels */
    bool tp_overlap;     /* TP communication overlapped with GEMMs */
    bool fsdp_fp8_allgather; /* ZeRO-3, fp8: gather FP8 weight shards */
    bool grad_fp32;      /* fp32 gradient accumulation (Megatron main_grad) */
    bool overlap_grad_reduce; /* reduce during the backward (off: after it) */
    double moe_imbalance;        /* tokens on the busiest expert rank over
                                    the mean (1 = balanced routing) */
    bool overlap_param_gather;   /* ZeRO: gather updated parameters during
                                    the next forward (Megatron's
                                    --overlap-param-gather), not after the
                                    optimizer */
    double bucket_bytes; /* DP gradient bucket (reduce-scatter staging) */
    /* ZeRO-3 under a stack that gathers per module (DeepSpeed):
     * stage3_prefetch_bucket_size, stage3_max_live_parameters and
     * reduce_bucket_size, in elements; 0: the stack's */
    double z3_prefetch_params, z3_max_live_params, z3_reduce_params;
    int lora_rank;       /* 0 = full training; r > 0 = LoRA fine-tuning
                            (Hu et al. 2021, arXiv 2106.09685): the base
                            model is frozen in `precision`, and only rank-r
                            adapters A (r x in) and B (out x r) on each
                            layer's linears get gradients and optimizer
                            state (mem_lora_tensor_params) */
} plan_train;

typedef struct plan_infer {
    int tp, pp, batch, context;
    dtype weight_dtype, kv_dtype;
    int block_size;         /* paged KV block, tokens */
    int max_batched_tokens; /* prefill tokens in one forward pass */
    int quant_group;        /* int4 group size */
} plan_infer;

extern const char *const plan_optimizer_names[OPT_COUNT];
extern const char *const plan_recompute_names[RECOMPUTE_COUNT];
extern const char *const plan_loss_names[LOSS_COUNT];
extern const char *const plan_schedule_names[3];

/* GPUs the plan occupies: tp x pp x dp x cp (experts shard inside dp x cp). */
int plan_train_gpus(const plan_train *p);
/* The global rank of the GPU at (tp, cp, dp, pp) of a plan: tensor
 * parallelism innermost, then context, data, pipeline (Megatron-LM's
 * order, within a node first). */
int plan_gpu_rank(const plan_train *p, int tp, int cp, int dp, int pp);

/* Virtual stages: pp, times vpp under the interleaved schedule.  Virtual
 * stage vs runs on GPU stage vs % pp. */
int plan_vstages(const plan_train *p);
/* The layers [*first, *last) of virtual stage vs of a checked plan. */
void plan_vstage_layers(const model_spec *m, const plan_train *p, int vs,
                        int *first, int *last);
/* Whether nv (virtual) stages split model m's layers without a given list:
 * nv divides the layers, or layers + 2 (the first and last a layer short). */
bool plan_layers_split(const model_spec *m, int nv);
/* Layers on pipeline stage s (all its virtual stages). */
int plan_stage_layer_count(const model_spec *m, const plan_train *p, int s);

/* The recompute setting as the user writes it: "none", "op", "every:4",
 * "full"; buf (PLAN_RECOMPUTE_TEXT bytes) holds it when it is built. */
#define PLAN_RECOMPUTE_TEXT 24
const char *plan_recompute_text(const plan_train *p, char *buf);
/* "none", "selective", "op", "full" or "every:K" (K an integer >= 1;
 * its upper bound, the layers, is plan_train_check's) into *mode and
 * *every (0 unless every:K); -1 when the text is none of them. */
int plan_recompute_parse(const char *text, plan_recompute *mode, int *every);
/* Whether layer `layer` of a checked plan is checkpointed in full: every
 * layer under FULL; under EVERY, torchtitan's rule (parallelize_llama.py
 * @9dec370 _apply_ac_to_transformer_block: a counter over the blocks a
 * rank wraps, checkpointing when count % K == 0): the k-th layer of its
 * pipeline stage, counted from 1 over the stage's virtual stages in
 * order, when k % K == 0. */
bool plan_layer_checkpointed(const model_spec *m, const plan_train *p,
                             int layer);

/* The dtype of the activations layers hand each other, keep for the
 * backward and send between GPUs: the precision's own for fp32, tf32, fp16
 * and bf16; bf16 otherwise (FP8 training casts to FP8 inside the GEMMs
 * only, as Transformer Engine does). */
dtype plan_act_dtype(const plan_train *p);

/* Whether model m admits the plan: TP divides the heads (and does not split
 * a KV head), PP divides the layers, the interleaved schedule's virtual
 * stages divide a stage's layers, CP divides the sequence, EP divides the
 * experts and dp x cp, ZeRO has ranks to shard over, the global batch is a
 * multiple of micro-batch x dp. */
int plan_train_check(const model_spec *m, const plan_train *p, llm_err *e);
int plan_infer_check(const model_spec *m, const plan_infer *p, llm_err *e);

#endif
