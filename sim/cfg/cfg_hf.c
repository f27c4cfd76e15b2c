/* Hugging Face config.json importer.  Field names differ across model
 * families (hidden_size / n_embd / d_model, ...); the family's conventions
 * that config.json leaves implicit (biases, gated MLP, learned positions)
 * come from model_type. */
#include <jansson.h>
#include <string.h>

#include "cfg/cfg.h"
#include "base/util.h"

#define BIG MODEL_MAX_SIZE
#define HEADS MODEL_MAX_HEADS

typedef struct hfctx {
    const char *file;
    const char *text;
    json_t *root;
    llm_err *e;
} hfctx;

static int key_line(const hfctx *h, const char *key)
{
    char quoted[96];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    int l = util_line_of(h->text, quoted);
    return l > 0 ? l : 1;
}

/* First key present among `names` (aliases of one field); NULL if none. */
static const char *find_key(const hfctx *h, const char *const *names,
                            json_t **val)
{
    for (int i = 0; names[i]; i++) {
        json_t *v = json_object_get(h->root, names[i]);
        if (v && !json_is_null(v)) {
            *val = v;
            return names[i];
        }
    }
    *val = NULL;
    return NULL;
}

/* Integer field under any of its aliases; *out untouched when absent and
 * optional.  The message names every alias so the user knows what to add. */
static int hf_int(const hfctx *h, const char *const *names, bool required,
                  long lo, long hi, int *out)
{
    json_t *v;
    const char *k = find_key(h, names, &v);
    if (!k) {
        if (!required)
            return 0;
        char all[160] = "";
        for (int i = 0; names[i]; i++) {
            strncat(all, names[i], sizeof all - strlen(all) - 4);
            if (names[i + 1])
                strncat(all, " or ", sizeof all - strlen(all) - 1);
        }
        return err_at(h->e, h->file, 1, names[0],
                      "missing required key (expected %s: a positive "
                      "integer)",
                      all);
    }
    if (!json_is_integer(v))
        return err_at(h->e, h->file, key_line(h, k), k,
                      "wrong type (expected an integer %ld..%ld)", lo, hi);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return err_at(h->e, h->file, key_line(h, k), k,
                      "%lld is out of range (expected an integer %ld..%ld)",
                      (long long)x, lo, hi);
    *out = (int)x;
    return 0;
}

static const char *hf_str(const hfctx *h, const char *key)
{
    json_t *v = json_object_get(h->root, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool hf_bool(const hfctx *h, const char *key, bool dflt)
{
    json_t *v = json_object_get(h->root, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static bool type_in(const char *t, const char *const *list)
{
    for (int i = 0; t && list[i]; i++)
        if (strcmp(t, list[i]) == 0)
            return true;
    return false;
}

/* Families whose conventions config.json does not spell out. */
static void family_defaults(const char *type, model_spec *m)
{
    static const char *const gated[] = {
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
        "deepseek_v2", "deepseek_v3", "gemma", "gemma2", "phi3", NULL};
    static const char *const biased[] = {"gpt_neox", "bloom", "opt", "gpt2",
                                         "gptj", "gpt_bigcode", NULL};
    static const char *const layernorm[] = {"gpt_neox", "bloom", "opt",
                                            "gpt2", "gptj", "falcon",
                                            "gpt_bigcode", NULL};
    m->mlp = type_in(type, gated) ? MLP_SWIGLU : MLP_GELU;
    m->linear_bias = type_in(type, biased);
    m->qkv_bias = type && strncmp(type, "qwen2", 5) == 0;
    m->norm = type_in(type, layernorm) ? NORM_LAYER : NORM_RMS;
    m->pos = POS_ROPE;
    if (type && (strcmp(type, "opt") == 0 || strcmp(type, "gpt2") == 0 ||
                 strcmp(type, "gpt_bigcode") == 0))
        m->pos = POS_LEARNED;
    if (type && strcmp(type, "bloom") == 0) {
        m->pos = POS_ALIBI;
        m->embedding_norm = true;
    }
}

static void hf_activation(const hfctx *h, model_spec *m)
{
    const char *act = hf_str(h, "hidden_act");
    if (!act)
        act = hf_str(h, "activation_function");
    if (act && strcmp(act, "relu") == 0)
        m->mlp = MLP_RELU;
    /* SiLU in transformers' decoder MLPs is the gate of a gated MLP
     * (LlamaMLP: down(act(gate(x)) * up(x))): a family not listed above
     * that says silu is gated, not the GELU default */
    if (act && (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0))
        m->mlp = MLP_SWIGLU;
}

/* Each field's keys across model families, the first the usual one. */
static const char *const hidden[] = {"hidden_size", "n_embd", "d_model",
                                     NULL};
static const char *const layers[] = {"num_hidden_layers", "n_layer",
                                     "num_layers", NULL};
static const char *const heads[] = {"num_attention_heads", "n_head",
                                    NULL};
static const char *const kv[] = {"num_key_value_heads", "num_kv_heads",
                                 NULL};
static const char *const ffn[] = {"intermediate_size", "ffn_dim",
                                  "n_inner", NULL};
static const char *const vocab[] = {"vocab_size", NULL};
static const char *const seq[] = {"max_position_embeddings",
                                  "n_positions", "seq_length", NULL};
static const char *const hd[] = {"head_dim", NULL};
static const char *const experts[] = {"num_local_experts",
                                      "n_routed_experts", "num_experts",
                                      NULL};
static const char *const active[] = {"num_experts_per_tok", NULL};
static const char *const shared[] = {"n_shared_experts", NULL};
static const char *const effn[] = {"moe_intermediate_size", NULL};
static const char *const dense[] = {"first_k_dense_replace", NULL};

/* The key of this file that holds model_check's field (named as in
 * a model .cfg file): the alias present, else the usual one. */
static const char *hf_key_of(const hfctx *h, const char *field)
{
    static const struct {
        const char *field;
        const char *const *keys;
    } map[] = {
        {"heads", heads},      {"kv_heads", kv},         {"hidden", hidden},
        {"layers", layers},    {"moe.active", active},   {"head_dim", hd},
        {"moe.dense_layers", dense},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(map[i].field, field) != 0)
            continue;
        json_t *v;
        const char *k = find_key(h, map[i].keys, &v);
        return k ? k : map[i].keys[0];
    }
    return field;
}

static int hf_shape(const hfctx *h, model_spec *m)
{
    if (hf_int(h, hidden, true, 1, BIG, &m->hidden) ||
        hf_int(h, layers, true, 1, MODEL_MAX_LAYERS, &m->layers) ||
        hf_int(h, heads, true, 1, HEADS, &m->heads) ||
        hf_int(h, vocab, true, 1, BIG, &m->vocab))
        return -1;
    m->kv_heads = hf_bool(h, "multi_query", false) ? 1 : m->heads;
    m->ffn = 0; /* absent: 4 x hidden, below */
    m->max_seq = 2048;
    /* 0 (model_check's "not given") unless heads divide hidden */
    m->head_dim = m->hidden % m->heads ? 0 : m->hidden / m->heads;
    if (hf_int(h, kv, false, 1, HEADS, &m->kv_heads) ||
        hf_int(h, ffn, false, 1, BIG, &m->ffn) ||
        hf_int(h, seq, false, 1, BIG, &m->max_seq) ||
        hf_int(h, hd, false, 1, HEADS, &m->head_dim))
        return -1;
    if (m->ffn > 0)
        return 0;
    json_t *v;
    const char *k = find_key(h, hidden, &v);
    if (4LL * m->hidden > BIG) /* the bound every size is held to */
        return err_at(h->e, h->file, key_line(h, k), k,
                      "%d is too large for the default intermediate size "
                      "4 x %s (expected intermediate_size, or %s <= %d)",
                      m->hidden, k, k, BIG / 4);
    m->ffn = 4 * m->hidden;
    return 0;
}

static int hf_moe(const hfctx *h, model_spec *m)
{
    json_t *v;
    if (!find_key(h, experts, &v))
        return 0;
    m->moe_expert_ffn = m->ffn;
    if (hf_int(h, experts, true, 1, MODEL_MAX_EXPERTS, &m->moe_experts) ||
        hf_int(h, active, true, 1, MODEL_MAX_EXPERTS, &m->moe_active) ||
        hf_int(h, shared, false, 0, MODEL_MAX_EXPERTS, &m->moe_shared) ||
        hf_int(h, effn, false, 1, BIG, &m->moe_expert_ffn) ||
        hf_int(h, dense, false, 0, MODEL_MAX_LAYERS, &m->moe_dense_layers))
        return -1;
    return 0;
}

static int hf_mla(const hfctx *h, model_spec *m)
{
    static const char *const kvl[] = {"kv_lora_rank", NULL};
    static const char *const ql[] = {"q_lora_rank", NULL};
    static const char *const nope[] = {"qk_nope_head_dim", NULL};
    static const char *const rope[] = {"qk_rope_head_dim", NULL};
    static const char *const vhd[] = {"v_head_dim", NULL};
    json_t *v;
    if (!find_key(h, kvl, &v))
        return 0;
    m->mla = true;
    if (hf_int(h, kvl, true, 1, BIG, &m->kv_lora_rank) ||
        hf_int(h, ql, false, 1, BIG, &m->q_lora_rank) ||
        hf_int(h, nope, true, 1, HEADS, &m->qk_nope_head_dim) ||
        hf_int(h, rope, true, 0, HEADS, &m->qk_rope_head_dim) ||
        hf_int(h, vhd, true, 1, HEADS, &m->v_head_dim))
        return -1;
    m->head_dim = m->qk_nope_head_dim + m->qk_rope_head_dim;
    return 0;
}

/* sliding_window (null: none), Gemma 3's sliding_window_pattern (every
 * K-th layer global), Gemma 2's alternation (model_type gemma2: K = 2);
 * Qwen2 and its kin name a window that only use_sliding_window turns on. */
static int hf_window(const hfctx *h, const char *type, model_spec *m)
{
    static const char *const win[] = {"sliding_window", NULL};
    static const char *const pat[] = {"sliding_window_pattern", NULL};
    if (hf_int(h, win, false, 0, BIG, &m->sliding_window) ||
        hf_int(h, pat, false, 0, MODEL_MAX_LAYERS, &m->sliding_global_every))
        return -1;
    if (!hf_bool(h, "use_sliding_window", true))
        m->sliding_window = m->sliding_global_every = 0;
    if (m->sliding_window > 0 && m->sliding_global_every == 0 && type &&
        strcmp(type, "gemma2") == 0)
        m->sliding_global_every = 2;
    return 0;
}

int cfg_load_hf_json(const char *path, model_spec *m, llm_err *e)
{
    memset(m, 0, sizeof *m);
    size_t len;
    char *text = util_read_file(path, "a Hugging Face config.json", &len, e);
    if (!text)
        return -1;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    int rc = -1;
    if (!root) {
        err_at(e, path, je.line, "(json)", "malformed JSON: %s (expected a "
               "Hugging Face config.json object)", je.text);
        goto out;
    }
    if (!json_is_object(root)) {
        err_at(e, path, 1, "(json)", "top level is not an object (expected "
               "a Hugging Face config.json object)");
        goto out;
    }
    hfctx h = {path, text, root, e};
    json_t *tv = json_object_get(root, "model_type");
    if (tv && !json_is_string(tv) && !json_is_null(tv)) {
        err_at(e, path, key_line(&h, "model_type"), "model_type", "wrong "
               "type (expected a string such as \"llama\": it sets the "
               "MLP, norm, biases and positions config.json leaves out)");
        goto out;
    }
    const char *type = hf_str(&h, "model_type");
    family_defaults(type, m);
    hf_activation(&h, m);
    if (hf_shape(&h, m) || hf_moe(&h, m) || hf_mla(&h, m) ||
        hf_window(&h, type, m))
        goto out;
    m->tied_embeddings = hf_bool(&h, "tie_word_embeddings", true);
    m->parallel_residual = hf_bool(&h, "use_parallel_residual", false);
    if (hf_bool(&h, "attention_bias", false))
        m->qkv_bias = true;
    const char *dt = hf_str(&h, "torch_dtype");
    if (!dt || dtype_parse(dt, &m->weight_dtype) != 0)
        m->weight_dtype = DT_BF16;
    util_basename_id(path, m->name, sizeof m->name);
    snprintf(m->display, sizeof m->display, "%s", m->name);
    snprintf(m->source, sizeof m->source,
             "Hugging Face config.json %s (model_type %s)", path,
             type ? type : "unknown");
    char why[256];
    const char *key;
    if (model_check(m, &key, why, sizeof why) != 0) {
        const char *k = hf_key_of(&h, key);
        err_at(e, path, key_line(&h, k), k, "%s", why);
        goto out;
    }
    rc = 0;
out:
    json_decref(root);
    free(text);
    return rc;
}
