/* stack — what a training framework does to a step, as data.
 *
 * The same GPUs give different step times under Megatron-Core, torchtitan
 * or DeepSpeed: each launches its own kernels (fused or eager norms, RoPE
 * and activations; cuDNN, FlashAttention-2 or -3), pays its own host
 * overhead per kernel unless CUDA graphs hide it, and runs FP8 with its
 * own casts.  A stack profile (stacks/NAME.cfg, read by cfg) says all of
 * that with sources; cost and train price a layer through it.  Owned by
 * the model layer beside the plan: like a plan it is what the user chose
 * and knows nothing of time. */
#ifndef LLMSIM_STACK_H
#define LLMSIM_STACK_H

#include <stdbool.h>

#define STACK_MAX_ATTN 4

/* How ZeRO-3 gathers parameters (stack_spec.z3_gather). */
typedef enum { STACK_GATHER_LAYER, STACK_GATHER_MODULE } stack_gather;
extern const char *const stack_gather_names[2];
/* When a per-block FSDP issues the next block's backward all-gather
 * (PyTorch FSDP1 BackwardPrefetch): PRE before this block's gradients,
 * overlapping them; POST after them, so it waits in full and only the
 * reduce-scatter overlaps the next block's gradients. */
typedef enum { STACK_PREFETCH_PRE, STACK_PREFETCH_POST } stack_prefetch;
extern const char *const stack_prefetch_names[2];

typedef struct stack_spec {
    char name[64], display[160], version[160];
    char source[4096];
    /* fused attention kernels in the order the framework tries them
     * ("cudnn", "fa3", "fa2"): the first with a row in
     * calib/attention-kernels.tsv for the GPU is the one priced */
    char attention[STACK_MAX_ATTN][16];
    int nattention;
    bool attention_asked; /* the run named the kernel (--attention-kernel):
                           * a GPU without its row is an error */
    /* memory-bound work per layer, in passes (one read and one write of
     * the tensor at the activation width) where a fused kernel makes one:
     * each norm, RoPE over Q and K, the MLP activation; plus copies per
     * layer (layout changes, casts) over the hidden activation.  Forward;
     * the backward makes twice as many. */
    double norm_passes, rope_passes, act_passes, copy_passes;
    /* host time the framework spends per kernel it launches (Python,
     * dispatch, autograd), and kernels a layer launches forward; the
     * backward launches twice as many.  A pass takes the longer of its
     * GPU time and its launches, unless CUDA graphs replay it. */
    double host_us_per_kernel, kernels_per_layer;
    bool cuda_graphs;
    /* the optimizer's HBM traffic over a fused multi-tensor kernel's
     * (foreach kernels re-read the state; a per-parameter loop adds
     * launches, counted apart) */
    double optimizer_passes;
    /* FP8 (--precision fp8) as the framework runs it: bytes moved per
     * element to quantize a linear's input activation (an amax read for
     * current scaling, then read 16-bit and write 8-bit), per element of
     * a weight cast, and per element of an output gradient (cast and
     * transpose); whether the weight casts are cached over a step's
     * microbatches; whether the norm before QKV and FC1 writes the FP8
     * input itself (Transformer Engine's LayerNormLinear) */
    double fp8_act_cast_bytes, fp8_weight_cast_bytes, fp8_grad_cast_bytes;
    bool fp8_weight_cache, fp8_norm_fused;
    bool fp8_attention; /* offers FP8 attention (--fp8-attention) */
    /* --tp-overlap: the share of the TP collectives' time the framework's
     * overlap takes off the critical path where the layer's GEMMs cover
     * it (1: all of it, Transformer Engine's userbuffers); the rest stays
     * exposed as without overlap */
    double tp_overlap_hidden;
    /* FSDP / ZeRO-3: the gradient reduce-scatter's dtype bytes (4: fp32
     * as torchtitan's default mixed-precision policy; 0: the gradients'
     * own) */
    double fsdp_reduce_bytes;
    /* ZeRO-3: how parameters are gathered.  LAYER: one all-gather per
     * transformer block, the next block's issued while this one computes
     * (PyTorch FSDP1 and FSDP2 wrapping each block).  MODULE: DeepSpeed
     * ZeRO-3's per-submodule coordinator (train/zero3.h) with these sizes
     * in elements; a size's per-hidden form (x hidden^2; persist: x
     * hidden) is Hugging Face's "auto" value and applies when the
     * absolute one is 0.  Gradients are reduce-scattered in buckets of
     * the reduce size.  qkv_fused: Q, K and V are one module (Megatron's
     * query_key_value), not three (transformers' q/k/v_proj). */
    stack_gather z3_gather;
    stack_prefetch fsdp_backward_prefetch;
    bool z3_qkv_fused;
    double z3_prefetch_params, z3_prefetch_per_h2;
    double z3_max_live_params;
    double z3_persist_params, z3_persist_per_h;
    double z3_reduce_params, z3_reduce_per_h2;
    /* ZeRO-3 across nodes: the bytes per second each GPU's gathers and
     * reduce-scatters move when the data-parallel group spans nodes, as
     * the stack's published runs reached it (a floor on their time over
     * NCCL's own; 0: NCCL's alone) */
    double z3_internode_Bps;
    /* Data-parallel gradient buckets (ZeRO 0-2) when the plan names none
     * (--bucket-mb 0): a fixed size in bytes (PyTorch DDP's bucket_cap_mb),
     * or Megatron-Core's rule, max(bucket_params, bucket_params_per_dp x
     * dp) parameters of gradients, which keeps buckets bandwidth-bound as
     * the data-parallel group grows */
    double ddp_bucket_bytes, ddp_bucket_params, ddp_bucket_params_per_dp;
    /* torch.compile (--compile): Inductor fuses the memory-bound ops and
     * the FP8 casts into fewer kernels; these replace the eager figures
     * when the stack offers it */
    bool compile_offered;
    struct stack_compiled {
        double norm_passes, rope_passes, act_passes, copy_passes;
        double kernels_per_layer;
        double fp8_act_cast_bytes, fp8_grad_cast_bytes;
    } compiled;
} stack_spec;

/* The defaults a profile's missing keys take: fused kernels, no host
 * overhead, no FP8 extras (the kernels the cost model prices alone). */
stack_spec stack_defaults(void);

/* The gradient bucket a step with plan p reduces, in bytes of
 * grad_bytes_per_param gradients: the plan's own when it names one
 * (bucket_bytes > 0), else the stack's rule. */
double stack_bucket_bytes(const stack_spec *s, double plan_bucket_bytes,
                          int dp, double grad_bytes_per_param);

/* The per-module coordinator's sizes, in elements, for a model of hidden
 * size `hidden`: the plan's own where it gives one (> 0), else the
 * stack's. */
typedef struct stack_z3 {
    double prefetch, max_live, persist, reduce;
} stack_z3;
stack_z3 stack_z3_sizes(const stack_spec *s, double hidden,
                        double plan_prefetch, double plan_max_live,
                        double plan_reduce);

/* s with the one fused attention kernel a run named (--attention-kernel,
 * a name from calib/attention-kernels.tsv) in place of its list; empty:
 * unchanged. */
void stack_ask_attention(stack_spec *s, const char *kernel);

/* s as torch.compile runs it: its compiled figures in place of the eager
 * ones (s->compile_offered must be true). */
void stack_apply_compile(stack_spec *s);

#endif
