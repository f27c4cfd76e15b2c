#include "model/model.h"

#include <stdio.h>
#include <string.h>

#include "base/err.h"

/* Appends one tensor; `n` is the running count. */
static int add(model_tensor *out, int n, const char *name, model_group g,
               model_split s, int64_t rows, int64_t cols, int64_t copies,
               int64_t active, bool matmul)
{
    LLM_ASSERT(n < MODEL_MAX_TENSORS);
    out[n] = (model_tensor){name, g, s, rows, cols, copies, active, matmul};
    return n + 1;
}

int model_qk_head_dim(const model_spec *m)
{
    return m->mla ? m->qk_nope_head_dim + m->qk_rope_head_dim : m->head_dim;
}

int model_v_head_dim(const model_spec *m)
{
    return m->mla ? m->v_head_dim : m->head_dim;
}

static int attention_tensors(const model_spec *m, model_tensor *o, int n)
{
    const int64_t h = m->hidden, a = m->heads;
    if (m->mla) {
        const int64_t qk = model_qk_head_dim(m), v = m->v_head_dim;
        if (m->q_lora_rank > 0) {
            n = add(o, n, "q_down", TG_ATTN, SPLIT_NONE, h, m->q_lora_rank,
                    1, 1, true);
            n = add(o, n, "q_down_norm", TG_NORM, SPLIT_NONE, m->q_lora_rank,
                    1, 1, 1, false);
            n = add(o, n, "q_up", TG_ATTN, SPLIT_TP, m->q_lora_rank, a * qk,
                    1, 1, true);
        } else {
            n = add(o, n, "q", TG_ATTN, SPLIT_TP, h, a * qk, 1, 1, true);
        }
        n = add(o, n, "kv_down", TG_ATTN, SPLIT_NONE, h,
                m->kv_lora_rank + m->qk_rope_head_dim, 1, 1, true);
        n = add(o, n, "kv_down_norm", TG_NORM, SPLIT_NONE, m->kv_lora_rank, 1,
                1, 1, false);
        n = add(o, n, "kv_up", TG_ATTN, SPLIT_TP, m->kv_lora_rank,
                a * (m->qk_nope_head_dim + v), 1, 1, true);
        return add(o, n, "o", TG_ATTN, SPLIT_TP, a * v, h, 1, 1, true);
    }
    const int64_t d = m->head_dim, kv = m->kv_heads;
    n = add(o, n, "q", TG_ATTN, SPLIT_TP, h, a * d, 1, 1, true);
    n = add(o, n, "k", TG_ATTN, SPLIT_KV, h, kv * d, 1, 1, true);
    n = add(o, n, "v", TG_ATTN, SPLIT_KV, h, kv * d, 1, 1, true);
    n = add(o, n, "o", TG_ATTN, SPLIT_TP, a * d, h, 1, 1, true);
    if (m->linear_bias || m->qkv_bias) {
        n = add(o, n, "q_bias", TG_ATTN, SPLIT_TP, a * d, 1, 1, 1, false);
        n = add(o, n, "kv_bias", TG_ATTN, SPLIT_KV, kv * d, 1, 2, 2, false);
    }
    if (m->linear_bias)
        n = add(o, n, "o_bias", TG_ATTN, SPLIT_NONE, h, 1, 1, 1, false);
    return n;
}

/* A dense MLP (or `copies` experts of width `f` split as `s`). */
static int mlp_tensors(const model_spec *m, model_tensor *o, int n,
                       model_group g, model_split s, int64_t f,
                       int64_t copies, int64_t active)
{
    const int64_t h = m->hidden;
    const int64_t in_cols = m->mlp == MLP_SWIGLU ? 2 * f : f;
    n = add(o, n, m->mlp == MLP_SWIGLU ? "gate_up" : "fc1", g, s, h, in_cols,
            copies, active, true);
    n = add(o, n, m->mlp == MLP_SWIGLU ? "down" : "fc2", g, s, f, h, copies,
            active, true);
    if (m->linear_bias) {
        n = add(o, n, "fc1_bias", g, s, in_cols, 1, copies, active, false);
        n = add(o, n, "fc2_bias", g, SPLIT_NONE, h, 1, copies, active, false);
    }
    return n;
}

bool model_layer_windowed(const model_spec *m, int layer)
{
    if (m->sliding_window <= 0)
        return false;
    int k = m->sliding_global_every;
    return k <= 0 || (layer + 1) % k != 0;
}

double model_windowed_share(const model_spec *m)
{
    int n = 0;
    for (int l = 0; l < m->layers; l++)
        n += model_layer_windowed(m, l);
    return m->layers > 0 ? (double)n / m->layers : 0;
}

double model_causal_pairs(double q, double kv, double w)
{
    /* queries at positions a..kv (1-based) see min(position, w) keys */
    double a = kv - q + 1;
    if (w <= 0 || w >= kv)
        return (a + kv) * q / 2;
    if (w <= a)
        return q * w;
    return (a + w) * (w - a + 1) / 2 + (kv - w) * w;
}

static bool layer_is_moe(const model_spec *m, int layer)
{
    return m->moe_experts > 0 && layer >= m->moe_dense_layers;
}

int model_layer_tensors(const model_spec *m, int layer, model_tensor *out)
{
    int n = attention_tensors(m, out, 0);
    const int64_t norm_vecs = m->norm == NORM_LAYER ? 2 : 1;
    n = add(out, n, "norms", TG_NORM, SPLIT_NONE, m->hidden, 1, 2 * norm_vecs,
            2 * norm_vecs, false);
    if (!layer_is_moe(m, layer))
        return mlp_tensors(m, out, n, TG_MLP, SPLIT_TP, m->ffn, 1, 1);
    n = add(out, n, "router", TG_ROUTER, SPLIT_NONE, m->hidden, m->moe_experts,
            1, 1, true);
    n = mlp_tensors(m, out, n, TG_EXPERT, SPLIT_EXPERT, m->moe_expert_ffn,
                    m->moe_experts, m->moe_active);
    if (m->moe_shared > 0)
        n = mlp_tensors(m, out, n, TG_MLP, SPLIT_TP, m->moe_expert_ffn,
                        m->moe_shared, m->moe_shared);
    return n;
}

int model_edge_tensors(const model_spec *m, bool first, bool last,
                       model_tensor *out)
{
    int n = 0;
    const int64_t h = m->hidden, norm_vecs = m->norm == NORM_LAYER ? 2 : 1;
    if (first) {
        n = add(out, n, "embedding", TG_EMBED, SPLIT_TP, m->vocab, h, 1, 1,
                false);
        if (m->pos == POS_LEARNED)
            n = add(out, n, "positions", TG_POS, SPLIT_NONE, m->max_seq, h, 1,
                    1, false);
        if (m->embedding_norm)
            n = add(out, n, "embedding_norm", TG_NORM, SPLIT_NONE, h, 1,
                    norm_vecs, norm_vecs, false);
    }
    if (last) {
        n = add(out, n, "final_norm", TG_NORM, SPLIT_NONE, h, 1, norm_vecs,
                norm_vecs, false);
        if (!m->tied_embeddings || !first)
            n = add(out, n, "output", TG_OUTPUT, SPLIT_TP, h, m->vocab, 1, 1,
                    true);
    }
    return n;
}

double model_tensor_numel_per_gpu(const model_spec *m, const model_tensor *t,
                                  int tp, int ep)
{
    double numel = model_tensor_numel(t);
    switch (t->split) {
    case SPLIT_NONE:
        return numel;
    case SPLIT_TP:
        return numel / tp;
    case SPLIT_KV:
        /* a KV head is never split: with tp > kv_heads each GPU holds one */
        return m->kv_heads >= tp ? numel / tp : numel / m->kv_heads;
    case SPLIT_EXPERT:
        return numel / ((double)ep * tp);
    }
    return numel;
}

static double sum_tensors(const model_tensor *t, int n, bool active_only)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)t[i].rows * (double)t[i].cols *
             (double)(active_only ? t[i].active : t[i].copies);
    return s;
}

double model_params_layers(const model_spec *m, int first, int last)
{
    model_tensor t[MODEL_MAX_TENSORS];
    double s = 0;
    for (int l = first; l < last; l++)
        s += sum_tensors(t, model_layer_tensors(m, l, t), false);
    return s;
}

static double params(const model_spec *m, bool active_only)
{
    model_tensor t[MODEL_MAX_TENSORS];
    double s = 0;
    for (int l = 0; l < m->layers; l++)
        s += sum_tensors(t, model_layer_tensors(m, l, t), active_only);
    return s + sum_tensors(t, model_edge_tensors(m, true, true, t),
                           active_only);
}

double model_params_total(const model_spec *m) { return params(m, false); }
double model_params_active(const model_spec *m) { return params(m, true); }

double model_flops_per_token_dense(const model_spec *m)
{
    model_tensor t[MODEL_MAX_TENSORS];
    double macs = 0;
    for (int l = 0; l < m->layers; l++) {
        int n = model_layer_tensors(m, l, t);
        for (int i = 0; i < n; i++)
            if (t[i].matmul)
                macs += (double)t[i].rows * (double)t[i].cols *
                        (double)t[i].active;
    }
    /* logits: the output layer is a GEMM even when tied to the embedding */
    macs += (double)m->hidden * m->vocab;
    return 2.0 * macs;
}

double model_flops_per_token_fwd(const model_spec *m, int seq)
{
    double attn = 2.0 * seq * m->heads *
                  (double)(model_qk_head_dim(m) + model_v_head_dim(m));
    return model_flops_per_token_dense(m) + attn * m->layers;
}

double model_kv_bytes_per_token(const model_spec *m, dtype kv)
{
    return model_kv_bytes_per_token_layer_gpu(m, kv, 1) * m->layers;
}

double model_kv_bytes_per_token_layer_gpu(const model_spec *m, dtype kv,
                                          int tp)
{
    double b = dtype_bytes(kv);
    if (m->mla)
        return (m->kv_lora_rank + m->qk_rope_head_dim) * b;
    int heads_per_gpu = m->kv_heads >= tp ? m->kv_heads / tp : 1;
    return 2.0 * heads_per_gpu * m->head_dim * b;
}

/* A model whose head dimension is hidden / heads must have heads dividing
 * hidden; one that states head_dim (Gemma, Mistral-Nemo) need not, nor
 * MLA, whose head dimensions are its own settings. */
static int check_heads(const model_spec *m, const char **key, char *why,
                       int len)
{
    if (m->head_dim == 0 && !m->mla) {
        *key = "heads";
        snprintf(why, len, "%d heads do not divide hidden %d, and head_dim "
                 "is not given (expected a divisor of hidden, or head_dim)",
                 m->heads, m->hidden);
        return -1;
    }
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0) {
        *key = "kv_heads";
        snprintf(why, len, "%d does not divide heads %d (expected MHA: "
                 "equal; GQA: a divisor; MQA: 1)", m->kv_heads, m->heads);
        return -1;
    }
    return 0;
}

static int check_moe(const model_spec *m, const char **key, char *why,
                     int len)
{
    if (m->moe_experts == 0)
        return 0;
    if (m->moe_active < 1 || m->moe_active > m->moe_experts) {
        *key = "moe.active";
        snprintf(why, len, "%d routed experts per token (expected 1..experts "
                 "= %d)", m->moe_active, m->moe_experts);
        return -1;
    }
    if (m->moe_dense_layers >= m->layers) {
        *key = "moe.dense_layers";
        snprintf(why, len, "%d dense layers (expected fewer than layers = "
                 "%d)", m->moe_dense_layers, m->layers);
        return -1;
    }
    return 0;
}

/* A global-layer period needs a window, and at most the layer count. */
static int check_window(const model_spec *m, const char **key, char *why,
                        int len)
{
    if (m->sliding_global_every > 0 && m->sliding_window <= 0) {
        *key = "sliding_global_every";
        snprintf(why, len, "%d without a sliding_window (expected "
                 "sliding_window > 0, or no sliding_global_every)",
                 m->sliding_global_every);
        return -1;
    }
    if (m->sliding_global_every > m->layers) {
        *key = "sliding_global_every";
        snprintf(why, len, "%d is more than the %d layers (expected every "
                 "K-th layer, K from 1 to layers)",
                 m->sliding_global_every, m->layers);
        return -1;
    }
    return 0;
}

int model_check(const model_spec *m, const char **key, char *why, int len)
{
    if (check_heads(m, key, why, len) || check_moe(m, key, why, len) ||
        check_window(m, key, why, len))
        return -1;
    /* every size in bounds can still multiply past int64: the count is
     * taken in double, where it cannot overflow, and bounded */
    double p = model_params_total(m);
    if (!(p <= MODEL_MAX_PARAMS)) {
        *key = "hidden";
        snprintf(why, len, "%d with layers %d, ffn %d, vocab %d and %d "
                 "experts makes %.3g parameters (expected at most %.0e: a "
                 "size is likely mistyped)", m->hidden, m->layers, m->ffn,
                 m->vocab, m->moe_experts, p, MODEL_MAX_PARAMS);
        return -1;
    }
    return 0;
}

const char *model_mlp_name(model_mlp k)
{
    return k == MLP_SWIGLU ? "swiglu" : k == MLP_RELU ? "relu" : "gelu";
}

const char *model_attention_kind(const model_spec *m)
{
    if (m->mla)
        return "MLA";
    if (m->kv_heads == 1)
        return "MQA";
    return m->kv_heads < m->heads ? "GQA" : "MHA";
}
