/* model — transformer architecture math: parameters (as a list of weight
 * tensors), FLOPs per token, KV-cache bytes per token.  Knows nothing of
 * time or of files: cfg.c fills a model_spec, everything else reads it. */
#ifndef LLMSIM_MODEL_H
#define LLMSIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"

typedef enum { MLP_GELU, MLP_RELU, MLP_SWIGLU } model_mlp;
typedef enum { POS_ROPE, POS_ALIBI, POS_LEARNED } model_pos;
typedef enum { NORM_RMS, NORM_LAYER } model_norm;

typedef struct model_spec {
    char name[96];
    char display[128];
    char source[1024];
    double published_params; /* 0 when none was published */
    int layers, hidden, heads, kv_heads, head_dim, ffn, vocab, max_seq;
    model_mlp mlp;
    model_pos pos;
    model_norm norm;
    bool linear_bias, qkv_bias, parallel_residual, tied_embeddings,
        embedding_norm;
    double dropout;
    dtype weight_dtype;
    /* Mixture of experts: moe_experts == 0 means a dense model. */
    int moe_experts, moe_active, moe_shared, moe_expert_ffn, moe_dense_layers;
    /* Multi-head latent attention (DeepSeek-V2/V3). q_lora_rank 0 = no
     * query compression. */
    bool mla;
    int q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
        v_head_dim;
    /* Sliding-window attention (Mistral 7B v0.1, Gemma 2 and 3, Qwen2 with
     * use_sliding_window): a query sees at most sliding_window keys (0:
     * all) on every layer, or with sliding_global_every = K > 0 on every
     * layer but each K-th (layers K-1, 2K-1, ...: Gemma 2's K = 2, Gemma
     * 3's 6), which attends in full. */
    int sliding_window, sliding_global_every;
} model_spec;

/* How a weight tensor is divided among GPUs.
 *   SPLIT_TP      column/row parallel over the tensor-parallel group
 *   SPLIT_KV      K/V projections: over TP, but a KV head is never split,
 *                 so with tp > kv_heads each GPU holds one whole head
 *   SPLIT_EXPERT  routed experts: over EP (whole experts), then TP
 *   SPLIT_NONE    replicated (norms, routers, MLA down-projections) */
typedef enum { SPLIT_NONE, SPLIT_TP, SPLIT_KV, SPLIT_EXPERT } model_split;

typedef enum {
    TG_ATTN,
    TG_MLP,
    TG_EXPERT,
    TG_ROUTER,
    TG_NORM,
    TG_EMBED,
    TG_POS,
    TG_OUTPUT
} model_group;

typedef struct model_tensor {
    const char *name;
    model_group group;
    model_split split;
    int64_t rows, cols; /* cols == 1 for vectors (norm weights, biases) */
    int64_t copies;     /* e.g. number of routed experts */
    int64_t active;     /* copies touched per token (== copies if dense) */
    bool matmul;        /* used as a GEMM weight (quantizable, has FLOPs) */
} model_tensor;

#define MODEL_MAX_TENSORS 40

/* Tensors of transformer layer `layer` (0-based).  Returns the count. */
int model_layer_tensors(const model_spec *m, int layer, model_tensor *out);
/* Tensors outside the layers: embedding (+positions, +embedding norm) when
 * `first`, final norm and output layer when `last`.  A tied output layer
 * is counted once when first && last, and again on a last pipeline stage
 * that is not also the first (Megatron keeps a copy there). */
int model_edge_tensors(const model_spec *m, bool first, bool last,
                       model_tensor *out);

static inline double model_tensor_numel(const model_tensor *t)
{
    return (double)t->rows * (double)t->cols * (double)t->copies;
}

/* Elements of one tensor held by one GPU under (tp, ep). */
double model_tensor_numel_per_gpu(const model_spec *m, const model_tensor *t,
                                  int tp, int ep);

double model_params_total(const model_spec *m);

/* Whether layer `layer` (0-based) attends through the sliding window, and
 * the share of the layers that do. */
bool model_layer_windowed(const model_spec *m, int layer);
double model_windowed_share(const model_spec *m);
/* Query-key pairs a causal attention computes for the last q of kv
 * positions when each query sees at most w keys (w <= 0: all). */
double model_causal_pairs(double q, double kv, double w);
double model_params_active(const model_spec *m);
/* Parameters of transformer layers [first, last). */
double model_params_layers(const model_spec *m, int first, int last);

/* Attention head dimensions: for MLA the query/key head is nope+rope and
 * the value head v_head_dim; otherwise both are head_dim. */
int model_qk_head_dim(const model_spec *m);
int model_v_head_dim(const model_spec *m);

/* Forward FLOPs per token at context length `seq` (PaLM appendix B
 * convention, as MFU uses): 2 x active matmul parameters (output layer
 * included, embedding lookup excluded) + per layer 2·2·seq·heads·d for
 * QK^T and attention-over-V, no causal halving. */
double model_flops_per_token_fwd(const model_spec *m, int seq);
/* Matmul part only (2 x active matmul params). */
double model_flops_per_token_dense(const model_spec *m);

/* KV-cache bytes per token for the whole model at `kv` precision:
 * 2·layers·kv_heads·head_dim·bytes for MHA/GQA/MQA; for MLA the cached
 * latent, layers·(kv_lora_rank + qk_rope_head_dim)·bytes. */
double model_kv_bytes_per_token(const model_spec *m, dtype kv);
/* Per layer, per GPU, under tensor parallelism: KV heads are split over
 * TP (a head never splits); an MLA latent is replicated on every TP rank. */
double model_kv_bytes_per_token_layer_gpu(const model_spec *m, dtype kv,
                                          int tp);

/* Bounds on a model's sizes, each far past any published model: a value
 * beyond one is a mistake, and together they keep every derived figure
 * (parameters, FLOPs, bytes) finite and every loop over layers short.
 * Both model file formats (models/NAME.cfg, config.json) read with them. */
#define MODEL_MAX_LAYERS 100000
#define MODEL_MAX_HEADS 100000      /* heads, KV heads, head dimension */
#define MODEL_MAX_SIZE 1000000000   /* hidden, FFN, vocabulary, context, ranks */
#define MODEL_MAX_EXPERTS 65536
#define MODEL_MAX_PARAMS 1e15       /* 1,000 x the largest published model */

/* Validation of an architecture as a whole (each size is in its bounds):
 * heads against hidden and head_dim, KV heads, experts, the parameter
 * count.  On a failure *key is the setting at fault, as a model file
 * names it ("heads", "moe.active", ...), and why says what and why. */
int model_check(const model_spec *m, const char **key, char *why, int len);

const char *model_mlp_name(model_mlp k);
const char *model_attention_kind(const model_spec *m); /* MHA/GQA/MQA/MLA */

#endif
