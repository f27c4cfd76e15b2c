#include "report/rmodel.h"

#include <string.h>

#include "report/rjson.h"

/* The names of model_group (TG_ATTN ... TG_OUTPUT), in its order. */
static const char *const group_names[] = {"attention", "MLP", "experts",
                                          "routers", "norms", "embedding",
                                          "positions", "output"};
enum { NGROUPS = sizeof group_names / sizeof group_names[0] };

/* Parameters per group over every layer and both ends: one walk over the
 * tensor lists, O(layers x tensors per layer). */
static void group_params(const model_spec *m, double g[NGROUPS])
{
    model_tensor t[MODEL_MAX_TENSORS];
    memset(g, 0, sizeof(double) * NGROUPS);
    for (int l = 0; l < m->layers; l++) {
        int n = model_layer_tensors(m, l, t);
        for (int i = 0; i < n; i++)
            g[t[i].group] += model_tensor_numel(&t[i]);
    }
    int n = model_edge_tensors(m, true, true, t);
    for (int i = 0; i < n; i++)
        g[t[i].group] += model_tensor_numel(&t[i]);
}

static void arch_text(FILE *fp, const model_spec *m)
{
    fprintf(fp, "architecture: %d layers, hidden %d, %d heads (%s", m->layers,
            m->hidden, m->heads, model_attention_kind(m));
    if (m->mla)
        fprintf(fp, ", kv_lora %d + rope %d", m->kv_lora_rank,
                m->qk_rope_head_dim);
    else if (m->kv_heads != m->heads)
        fprintf(fp, ", %d KV heads", m->kv_heads);
    fprintf(fp, ", head dim %d), %s MLP %d", model_qk_head_dim(m),
            model_mlp_name(m->mlp), m->ffn);
    if (m->moe_experts)
        fprintf(fp, ", MoE %d experts x %d (top-%d, %d shared, first %d "
                "dense)", m->moe_experts, m->moe_expert_ffn, m->moe_active,
                m->moe_shared, m->moe_dense_layers);
    fprintf(fp, ", vocab %d, %s, %s%s\n", m->vocab,
            m->pos == POS_LEARNED ? "learned positions"
            : m->pos == POS_ALIBI ? "ALiBi"
                                  : "RoPE",
            m->norm == NORM_RMS ? "RMSNorm" : "LayerNorm",
            m->tied_embeddings ? ", tied embeddings" : "");
    if (m->sliding_window > 0 && m->sliding_global_every > 0)
        fprintf(fp, "sliding-window attention: %d keys a query, every layer "
                    "but each %d-th (%.0f of %d layers)\n",
                m->sliding_window, m->sliding_global_every,
                model_windowed_share(m) * m->layers, m->layers);
    else if (m->sliding_window > 0)
        fprintf(fp, "sliding-window attention: %d keys a query, every "
                    "layer\n", m->sliding_window);
}

/* Total and active, beside the published count, then by group; ends
 * without a newline (the FLOPs line starts with one). */
static void params_text(FILE *fp, const model_spec *m)
{
    double total = model_params_total(m), active = model_params_active(m);
    fprintf(fp, "parameters: %.3f B total, %.3f B active per token",
            total / 1e9, active / 1e9);
    if (m->published_params > 0)
        fprintf(fp, " (published %.2f B, %+.2f%%)", m->published_params / 1e9,
                100 * (total / m->published_params - 1));
    fprintf(fp, "\n  ");
    double g[NGROUPS];
    group_params(m, g);
    int first = 1;
    for (int i = 0; i < NGROUPS; i++)
        if (g[i] > 0) {
            fprintf(fp, "%s%s %.3f B", first ? "" : ", ", group_names[i],
                    g[i] / 1e9);
            first = 0;
        }
}

static void flops_text(FILE *fp, const model_spec *m, int seq_len)
{
    double fwd = model_flops_per_token_fwd(m, seq_len);
    double dense = model_flops_per_token_dense(m);
    fprintf(fp, "\nFLOPs per token at seq %d: forward %.2f GFLOP (matmuls "
            "%.2f + attention %.2f), training 3x = %.2f GFLOP\n",
            seq_len, fwd / 1e9, dense / 1e9, (fwd - dense) / 1e9,
            3 * fwd / 1e9);
}

/* The rule of thumb 2 x layers x hidden x 2 B ignores GQA/MQA/MLA; the
 * ratio shows by how much it overstates the cache. */
static void kv_text(FILE *fp, const model_spec *m)
{
    fprintf(fp, "KV cache per token (%s, all %d layers):",
            model_attention_kind(m), m->layers);
    static const dtype kvs[] = {DT_FP32, DT_FP16, DT_FP8};
    for (int i = 0; i < 3; i++)
        fprintf(fp, " %s %.1f KiB%s", dtype_name(kvs[i]),
                model_kv_bytes_per_token(m, kvs[i]) / 1024,
                i < 2 ? "," : "");
    double rule_bytes = 2.0 * m->layers * m->hidden * 2;
    double kv16_bytes = model_kv_bytes_per_token(m, DT_FP16);
    fprintf(fp, "\n  rule of thumb 2 x layers x hidden x 2 B = %.1f KiB per "
            "token (%.1fx the real fp16 figure)\n",
            rule_bytes / 1024, rule_bytes / kv16_bytes);
}

void rmodel_text(FILE *fp, const model_spec *m, int seq_len)
{
    fprintf(fp, "%s (%s)\n", m->display, m->name);
    fprintf(fp, "source: %s\n", m->source);
    arch_text(fp, m);
    params_text(fp, m);
    flops_text(fp, m, seq_len);
    kv_text(fp, m);
}

json_t *rmodel_json(const model_spec *m, int seq_len)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "params_total",
                        rjson_bytes(model_params_total(m)));
    json_object_set_new(o, "params_active",
                        rjson_bytes(model_params_active(m)));
    json_object_set_new(o, "published_params",
                        json_real(m->published_params));
    json_object_set_new(o, "seq_len", json_integer(seq_len));
    json_object_set_new(o, "flops_per_token_fwd",
                        json_real(model_flops_per_token_fwd(m, seq_len)));
    json_object_set_new(o, "flops_per_token_train",
                        json_real(3 * model_flops_per_token_fwd(m, seq_len)));
    json_object_set_new(o, "dtype", json_string(dtype_name(m->weight_dtype)));
    json_object_set_new(o, "kv_bytes_per_token",
                        json_real(model_kv_bytes_per_token(m, m->weight_dtype)));
    json_t *kv = json_object();
    static const dtype kvs[] = {DT_FP32, DT_FP16, DT_BF16, DT_FP8};
    for (int i = 0; i < 4; i++)
        json_object_set_new(kv, dtype_name(kvs[i]),
                            json_real(model_kv_bytes_per_token(m, kvs[i])));
    json_object_set_new(o, "kv_bytes_per_token_by_dtype", kv);
    json_object_set_new(o, "attention", json_string(model_attention_kind(m)));
    json_object_set_new(o, "layers", json_integer(m->layers));
    json_object_set_new(o, "hidden", json_integer(m->hidden));
    json_object_set_new(o, "heads", json_integer(m->heads));
    json_object_set_new(o, "kv_heads", json_integer(m->kv_heads));
    json_object_set_new(o, "vocab", json_integer(m->vocab));
    json_object_set_new(o, "max_seq", json_integer(m->max_seq));
    json_object_set_new(o, "sliding_window", json_integer(m->sliding_window));
    json_object_set_new(o, "sliding_global_every",
                        json_integer(m->sliding_global_every));
    return o;
}

void rmodel_list_text(FILE *fp, char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(fp, "%s\n", names[i]);
}
