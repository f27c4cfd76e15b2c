/* mem — per-GPU memory of training and inference, broken down, with the
 * remedies when it does not fit and the cheapest GPU set that does.
 *
 * Formulas and their sources:
 *   model states: Rajbhandari et al., "ZeRO" (SC20) §3.1, §5: mixed-precision
 *     Adam holds 2Ψ weights + 2Ψ gradients + 12Ψ optimizer (fp32 master,
 *     momentum, variance); stages 1/2/3 shard optimizer / +gradients /
 *     +weights over the N_d data-parallel ranks.
 *   activations: Korthikanti et al., "Reducing Activation Recomputation in
 *     Large Transformer Models" (2022) §4, Table 2 and Appendix B, in
 *     their general form (GQA/MLA widths, gated MLPs, MoE, no dropout), so
 *     that they reduce to sbh(34 + 5as/h) for a GPT layer.
 *   microbatches in flight: from the schedule (1F1B warm-up depth p - s on
 *     stage s; interleaved (p-s-1)·2 + (v-1)·p + 1 chunks, Megatron-LM
 *     schedules.py), which gives Korthikanti's L(1 + (p-1)/(pv)). */
#ifndef LLMSIM_MEM_H
#define LLMSIM_MEM_H

#include <stdbool.h>

#include "base/err.h"
#include "hw/gpu.h"
#include "model/model.h"
#include "model/plan.h"

/* Stated, configurable overheads: never a hidden fudge factor.  The figures
 * (and their sources) are calib/overhead.tsv's, per GPU, loaded by
 * cfg_load_overhead; a run may set any field. */
typedef struct mem_overhead {
    double cuda_context_bytes;   /* CUDA context + cuBLAS workspace */
    double nccl_bytes_per_group; /* NCCL's own buffers per communicator */
    double reserve_frac;         /* caching-allocator fragmentation reserve */
} mem_overhead;

typedef struct mem_result {
    /* the stable aggregates (JSON keys) */
    double weights, gradients, optimizer, activations, kv_cache, overhead,
        total;
    /* details */
    double params_per_gpu;   /* after TP/PP/EP split, before ZeRO-3 */
    double trainable_params_per_gpu; /* with gradients and optimizer state,
                                        before ZeRO: params_per_gpu, or
                                        under LoRA the adapters alone */
    double zero3_gather;     /* in weights: gathered layers under ZeRO-3 */
    double act_per_layer;    /* bytes a layer keeps per microbatch under
                                the recompute mode (average) */
    double act_layers_held;  /* layer x microbatch units held at the peak */
    double act_edge;         /* embedding dropout, final norm and output
                                layer inputs */
    double act_working;      /* recompute: what one layer's backward
                                rematerializes on top of what it kept */
    double act_loss;         /* last stage: the loss's logits buffers
                                (mem_loss_bytes); the peak adds the larger
                                of this and act_working */
    double comm_buffers, nccl, cuda_context, reserve;
    double kv_per_token_gpu; /* all layers of the stage, one GPU */
    double kv_tokens;        /* tokens cached, after block rounding */
    double kv_rule_of_thumb; /* batch·seq·hidden·layers·2·bytes, one GPU */
    double workspace_tokens;
    int stage;               /* pipeline stage with the peak */
    int microbatches;        /* per step per data-parallel replica */
    int in_flight;           /* microbatches in flight on that stage */
} mem_result;


/* The pipeline stage with the largest total is reported. */
void mem_train_breakdown(const model_spec *m, const plan_train *p,
                         const mem_overhead *o, mem_result *r);
void mem_infer_breakdown(const model_spec *m, const plan_infer *p,
                         const mem_overhead *o, mem_result *r);

/* One training pipeline stage's breakdown (mem_train_breakdown reports
 * the largest).  held < 0: the activations the schedule holds at its peak
 * on that stage; held >= 0: those of `held` (virtual-stage) microbatch
 * chunks instead, the memory at a moment of the simulated schedule. */
void mem_train_stage(const model_spec *m, const plan_train *p,
                     const mem_overhead *o, int s, int held, mem_result *r);

/* Layers [*first, *last) on pipeline stage s of pp: an even split, the
 * first layers % pp stages one layer more. */
void mem_stage_layers(int layers, int pp, int s, int *first, int *last);
/* One inference pipeline stage's breakdown (mem_infer_breakdown reports
 * the largest). */
void mem_infer_stage(const model_spec *m, const plan_infer *p,
                     const mem_overhead *o, int s, mem_result *r);

/* Per-layer activation bytes of one microbatch on one GPU that layer
 * `layer` keeps for its backward under p->recompute (and flash_attn):
 * Korthikanti Table 2's without recompute and with selective; the layer
 * input (2sbh, ÷t with SP) when it is checkpointed (full, or its turn
 * under every:K); its input plus what torchtitan's op policy saves under
 * op.  Exposed for tests against Korthikanti Table 2. */
double mem_act_layer_bytes(const model_spec *m, const plan_train *p,
                           int layer);
/* The same without recompute: all a layer's backward needs at once, which
 * a recomputing layer rematerializes in its backward. */
double mem_act_layer_full_bytes(const model_spec *m, const plan_train *p,
                                int layer);
/* Under op recompute, the share of layer `layer`'s matmul FLOPs that the
 * backward replays (the even-numbered matmuls and the MoE router). */
double mem_op_replayed_share(const model_spec *m, const plan_train *p,
                             int layer);
/* Forward FLOPs per token that p's recompute replays in the backward,
 * over the whole model: the matmuls (and LoRA adapters) of every
 * checkpointed layer, op's replayed share of each layer's, and the
 * attention core (attn_layer_flops per layer, as its kernel executes it)
 * under full, every:K, selective, and op without FlashAttention.  The
 * output layer and the loss are never replayed. */
double mem_replay_flops_per_token(const model_spec *m, const plan_train *p,
                                  double attn_layer_flops);
/* The loss's logits buffers at their peak on the last stage, one
 * microbatch, one GPU, for p->loss (fused, eager, compiled). */
double mem_loss_bytes(const model_spec *m, const plan_train *p);

/* Per-parameter bytes (before sharding) of weights / gradients /
 * optimizer state for a precision and optimizer; adafactor's factored
 * state is per tensor and is reported here as 0 (see mem.c). */
double mem_weight_bytes_per_param(dtype precision);
double mem_grad_bytes_per_param(const plan_train *p);
double mem_optimizer_bytes_per_param(const plan_train *p);
/* HBM bytes one optimizer step moves per parameter in its fused
 * (multi-tensor) kernels: every state, master weight and gradient read,
 * every state and master weight written, and the extra reads of the
 * norms an optimizer takes. */
double mem_optimizer_step_bytes(const plan_train *p);

/* LoRA adapter parameters of weight tensor t of transformer layer `layer`
 * at rank r, on one GPU under (tp, ep): r·(in + out) per adapted linear
 * (a fused SwiGLU gate_up counts as its two linears), sharded like t.
 * Adapted: the attention projections, and the MLP of a dense layer; an
 * MoE layer's experts (routed and shared) and router are not.  0 for
 * other tensors, or r = 0. */
double mem_lora_tensor_params(const model_spec *m, int r, int layer,
                              const model_tensor *t, int tp, int ep);
/* All layers' adapters, unsharded (what one replica trains). */
double mem_lora_params_total(const model_spec *m, int r);

typedef struct mem_remedy {
    char what[200];
    double total;  /* per-GPU total after the remedy */
    double saves;  /* bytes saved per GPU */
    bool fits;
    int gpus;      /* GPUs needed after the remedy */
} mem_remedy;

#define MEM_MAX_REMEDIES 24

/* Remedies, each computed, sorted by the memory they save. */
int mem_train_remedies(const model_spec *m, const plan_train *p,
                       const mem_overhead *o, const gpu_spec *g,
                       mem_remedy *out);
int mem_infer_remedies(const model_spec *m, const plan_infer *p,
                       const mem_overhead *o, const gpu_spec *g,
                       mem_remedy *out);

typedef struct mem_choice {
    const gpu_spec *gpu;
    int gpus;           /* 0 = nothing up to the search limit fits */
    plan_train train;    /* plan that fits (training) */
    plan_infer infer;    /* plan that fits (inference) */
    mem_result result;
    double price_usd;   /* gpus × unit price; 0 = no public price */
    char note[160];
} mem_choice;

/* Fewest GPUs of type g that fit; the plan keeps the user's batch,
 * precision, optimizer and recompute, and may raise TP/PP/DP and the
 * ZeRO stage.  Search up to max_gpus (powers of two). */
void mem_recommend_train(const model_spec *m, const plan_train *base,
                         const mem_overhead *o, const gpu_spec *g,
                         int max_gpus, mem_choice *out);
void mem_recommend_infer(const model_spec *m, const plan_infer *base,
                         const mem_overhead *o, const gpu_spec *g,
                         int max_gpus, mem_choice *out);

#endif
