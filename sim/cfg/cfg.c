#include "cfg/cfg.h"

#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg_tsv.h"
#include "cfg/cfg_util.h"
#include "base/util.h"


/* ---- model files (models/NAME.cfg) --------------------------------------------------- */

static const char *const model_keys[] = {
    "name",     "display",   "source",       "published_params",
    "layers",   "hidden",    "heads",        "kv_heads",
    "head_dim", "ffn",       "mlp",          "vocab",
    "max_seq",  "position",  "norm",         "linear_bias",
    "qkv_bias", "parallel_residual",         "tied_embeddings",
    "embedding_norm",        "dropout",      "dtype",
    "moe",      "mla",       "sliding_window", "sliding_global_every",
};
static const char *const moe_keys[] = {"experts", "active", "shared",
                                       "expert_ffn", "dense_layers"};
static const char *const mla_keys[] = {"q_lora_rank", "kv_lora_rank",
                                       "qk_nope_head_dim", "qk_rope_head_dim",
                                       "v_head_dim"};
static const char *const mlp_names[] = {"gelu", "relu", "swiglu"};
static const char *const pos_names[] = {"rope", "alibi", "learned"};
static const char *const norm_names[] = {"rmsnorm", "layernorm"};

#define BIG MODEL_MAX_SIZE
#define HEADS MODEL_MAX_HEADS

/* The line of a key ("heads", "moe.active") model_check blamed. */
static int model_key_line(const config_setting_t *r, const char *key)
{
    const config_setting_t *s = config_setting_lookup(
        (config_setting_t *)r, key);
    return s ? cfgu_line(s) : 1;
}

static int load_moe(cfgu *c, const config_setting_t *g, model_spec *m)
{
    if (cfgu_check_keys(c, g, moe_keys, COUNT(moe_keys)) ||
        cfgu_int(c, g, "experts", true, 1, MODEL_MAX_EXPERTS,
                 &m->moe_experts) ||
        cfgu_int(c, g, "active", true, 1, MODEL_MAX_EXPERTS,
                 &m->moe_active) ||
        cfgu_int(c, g, "shared", false, 0, MODEL_MAX_EXPERTS,
                 &m->moe_shared) ||
        cfgu_int(c, g, "expert_ffn", true, 1, BIG, &m->moe_expert_ffn) ||
        cfgu_int(c, g, "dense_layers", false, 0, MODEL_MAX_LAYERS,
                 &m->moe_dense_layers))
        return -1;
    if (m->moe_active > m->moe_experts)
        return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "moe.active",
                      "%d routed experts per token but only %d experts "
                      "(expected active <= experts)",
                      m->moe_active, m->moe_experts);
    return 0;
}

static int load_mla(cfgu *c, const config_setting_t *g, model_spec *m)
{
    m->mla = true;
    return cfgu_check_keys(c, g, mla_keys, COUNT(mla_keys)) ||
                   cfgu_int(c, g, "q_lora_rank", false, 0, BIG,
                            &m->q_lora_rank) ||
                   cfgu_int(c, g, "kv_lora_rank", true, 1, BIG,
                            &m->kv_lora_rank) ||
                   cfgu_int(c, g, "qk_nope_head_dim", true, 1, BIG,
                            &m->qk_nope_head_dim) ||
                   cfgu_int(c, g, "qk_rope_head_dim", true, 0, BIG,
                            &m->qk_rope_head_dim) ||
                   cfgu_int(c, g, "v_head_dim", true, 1, BIG, &m->v_head_dim)
               ? -1
               : 0;
}

static int load_model_shape(cfgu *c, const config_setting_t *r,
                            model_spec *m)
{
    int mlp = MLP_GELU, pos = POS_ROPE, norm = NORM_LAYER;
    char dt[16] = "bf16";
    if (cfgu_int(c, r, "layers", true, 1, MODEL_MAX_LAYERS, &m->layers) ||
        cfgu_int(c, r, "hidden", true, 1, BIG, &m->hidden) ||
        cfgu_int(c, r, "heads", true, 1, HEADS, &m->heads) ||
        cfgu_int(c, r, "ffn", true, 1, BIG, &m->ffn) ||
        cfgu_int(c, r, "vocab", true, 1, BIG, &m->vocab))
        return -1;
    m->kv_heads = m->heads;
    /* 0 (model_check's "not given") unless heads divide hidden */
    m->head_dim = m->hidden % m->heads ? 0 : m->hidden / m->heads;
    m->max_seq = 2048;
    if (cfgu_int(c, r, "kv_heads", false, 1, HEADS, &m->kv_heads) ||
        cfgu_int(c, r, "head_dim", false, 1, HEADS, &m->head_dim) ||
        cfgu_int(c, r, "max_seq", false, 1, BIG, &m->max_seq) ||
        cfgu_enum(c, r, "mlp", true, mlp_names, COUNT(mlp_names), &mlp) ||
        cfgu_enum(c, r, "position", false, pos_names, COUNT(pos_names),
                  &pos) ||
        cfgu_enum(c, r, "norm", false, norm_names, COUNT(norm_names),
                  &norm) ||
        cfgu_str(c, r, "dtype", false, dt, sizeof dt))
        return -1;
    m->mlp = (model_mlp)mlp;
    m->pos = (model_pos)pos;
    m->norm = (model_norm)norm;
    if (dtype_parse(dt, &m->weight_dtype) != 0)
        return err_at(c->e, cfgu_file(c, config_setting_get_member(r, "dtype")),
                      cfgu_line(config_setting_get_member(r, "dtype")),
                      "dtype", "unknown dtype \"%s\" (expected %s)", dt,
                      dtype_choices());
    return 0;
}

int cfg_load_model(const char *path, model_spec *m, llm_err *e)
{
    if (util_ends_with(path, ".json"))
        return cfg_load_hf_json(path, m, e);
    memset(m, 0, sizeof *m);
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    config_setting_t *moe, *mla;
    util_basename_id(path, m->name, sizeof m->name);
    if (cfgu_check_keys(&c, r, model_keys, COUNT(model_keys)) ||
        cfgu_str(&c, r, "name", false, m->name, sizeof m->name) ||
        cfgu_str(&c, r, "display", false, m->display, sizeof m->display) ||
        cfgu_str(&c, r, "source", true, m->source, sizeof m->source) ||
        cfgu_double(&c, r, "published_params", false, 0, 1e15,
                    &m->published_params) ||
        load_model_shape(&c, r, m) ||
        cfgu_bool(&c, r, "linear_bias", false, &m->linear_bias) ||
        cfgu_bool(&c, r, "qkv_bias", false, &m->qkv_bias) ||
        cfgu_bool(&c, r, "parallel_residual", false,
                  &m->parallel_residual) ||
        cfgu_bool(&c, r, "tied_embeddings", false, &m->tied_embeddings) ||
        cfgu_bool(&c, r, "embedding_norm", false, &m->embedding_norm) ||
        cfgu_double(&c, r, "dropout", false, 0, 0.99, &m->dropout) ||
        cfgu_int(&c, r, "sliding_window", false, 0, BIG,
                 &m->sliding_window) ||
        cfgu_int(&c, r, "sliding_global_every", false, 0, MODEL_MAX_LAYERS,
                 &m->sliding_global_every) ||
        cfgu_group(&c, r, "moe", &moe) || cfgu_group(&c, r, "mla", &mla) ||
        (moe && load_moe(&c, moe, m)) || (mla && load_mla(&c, mla, m)))
        goto out;
    if (!m->display[0])
        snprintf(m->display, sizeof m->display, "%s", m->name);
    char why[256];
    const char *key;
    if (model_check(m, &key, why, sizeof why) != 0) {
        err_at(e, path, model_key_line(r, key), key, "%s", why);
        goto out;
    }
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}

/* ---- topologies/gpus.cfg -------------------------------------------- */

static const char *const gpu_keys[] = {
    "name",        "display",     "architecture", "sm",
    "form_factor", "memory_gib",  "memory_type",  "memory_bw_GBps",
    "tflops",      "nvlink_gen",  "nvlink_links", "nvlink_GBps",
    "pcie_gen",    "pcie_lanes",  "tdp_w",        "ecc",
    "price_usd",   "price_source", "caps",        "source",
    "sm_count",    "boost_clock_mhz",
};
static const char *const tflops_keys[] = {"fp64", "fp64_tensor", "fp32",
                                          "tf32", "fp16", "bf16",
                                          "fp8",  "int8",  "int4", "fp4"};
static const char *const form_factors[] = {"sxm", "pcie", "consumer"};

static int load_tflops(cfgu *c, const config_setting_t *t, gpu_spec *g)
{
    static const dtype map[] = {DT_FP64, DT_COUNT, DT_FP32, DT_TF32, DT_FP16,
                                DT_BF16, DT_FP8,   DT_INT8, DT_INT4, DT_FP4};
    if (cfgu_check_keys(c, t, tflops_keys, COUNT(tflops_keys)))
        return -1;
    for (int i = 0; i < COUNT(tflops_keys); i++) {
        double v = 0;
        if (cfgu_double(c, t, tflops_keys[i], false, 0, 1e6, &v))
            return -1;
        if (strcmp(tflops_keys[i], "fp64_tensor") == 0)
            g->fp64_tensor_flops = v * 1e12;
        else
            g->peak_flops[map[i]] = v * 1e12;
    }
    if (g->peak_flops[DT_FP32] <= 0)
        return err_at(c->e, cfgu_file(c, t), cfgu_line(t), "tflops.fp32",
                      "missing (expected the FP32 peak, TFLOP/s > 0)");
    return 0;
}

static int load_caps(cfgu *c, const config_setting_t *s, gpu_spec *g)
{
    if (!s)
        return 0;
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), "caps",
                      "wrong type (expected [\"bf16\", \"fp8\", ...])");
    for (int i = 0; i < config_setting_length(s); i++) {
        const char *v = config_setting_get_string_elem(s, i);
        unsigned bit = v ? gpu_cap_parse(v) : 0;
        if (!bit) {
            const char *names[GPU_CAP_COUNT];
            for (int k = 0; k < GPU_CAP_COUNT; k++)
                names[k] = gpu_cap_name(k);
            char hint[96] = "";
            if (v)
                util_did_you_mean(hint, sizeof hint, v, names, GPU_CAP_COUNT);
            return err_at(c->e, cfgu_file(c, s), cfgu_line(s), "caps",
                          "unknown capability \"%s\"%s (expected bf16 tf32 "
                          "fp8 fp4 flash_attention mig nvlink nvls)",
                          v ? v : "(not a string)", hint);
        }
        g->caps |= bit;
    }
    return 0;
}

static int load_gpu(cfgu *c, const config_setting_t *s, const cfg_pcie *pcie,
                    gpu_spec *g)
{
    double mem_gib = 0, bw = 0, nvl = 0;
    double clock_mhz = 0;
    int ff = 0, tdp = 0, price = 0;
    config_setting_t *tf;
    if (config_setting_type(s) != CONFIG_TYPE_GROUP)
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), "gpus",
                      "wrong type (expected a list of groups { ... })");
    if (cfgu_check_keys(c, s, gpu_keys, COUNT(gpu_keys)) ||
        cfgu_str(c, s, "name", true, g->name, sizeof g->name) ||
        cfgu_str(c, s, "display", false, g->display, sizeof g->display) ||
        cfgu_str(c, s, "architecture", true, g->architecture,
                 sizeof g->architecture) ||
        cfgu_int(c, s, "sm", true, 10, 200, &g->sm) ||
        cfgu_enum(c, s, "form_factor", true, form_factors,
                  COUNT(form_factors), &ff) ||
        cfgu_double(c, s, "memory_gib", true, 0.25, 1e5, &mem_gib) ||
        cfgu_str(c, s, "memory_type", false, g->memory_type,
                 sizeof g->memory_type) ||
        cfgu_double(c, s, "memory_bw_GBps", true, 1, 1e6, &bw) ||
        cfgu_group(c, s, "tflops", &tf))
        return -1;
    if (!tf)
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), "tflops",
                      "missing (expected a group of dense TFLOP/s)");
    if (load_tflops(c, tf, g) ||
        cfgu_int(c, s, "nvlink_gen", false, 0, 10, &g->nvlink_gen) ||
        cfgu_int(c, s, "nvlink_links", false, 0, 100, &g->nvlink_links) ||
        cfgu_double(c, s, "nvlink_GBps", false, 0, 1e5, &nvl) ||
        cfgu_int(c, s, "pcie_gen", true, 1, 6, &g->pcie_gen) ||
        cfgu_int(c, s, "pcie_lanes", true, 1, 32, &g->pcie_lanes) ||
        cfgu_int(c, s, "tdp_w", true, 1, 100000, &tdp) ||
        cfgu_int(c, s, "sm_count", false, 1, 10000, &g->sm_count) ||
        cfgu_double(c, s, "boost_clock_mhz", false, 1, 10000, &clock_mhz) ||
        cfgu_bool(c, s, "ecc", false, &g->ecc) ||
        cfgu_int(c, s, "price_usd", false, 0, 100000000, &price) ||
        cfgu_str(c, s, "price_source", false, g->price_source,
                 sizeof g->price_source) ||
        load_caps(c, config_setting_get_member(s, "caps"), g) ||
        cfgu_str(c, s, "source", true, g->source, sizeof g->source))
        return -1;
    if (pcie->GTps[g->pcie_gen] <= 0)
        return err_at(c->e, cfgu_file(c, config_setting_get_member(s, "pcie_gen")),
                      cfgu_line(config_setting_get_member(s, "pcie_gen")),
                      "pcie_gen", "no row for generation %d in %s (expected "
                      "a generation the table lists)", g->pcie_gen,
                      pcie->path);
    g->pcie_lane_GTps = pcie->GTps[g->pcie_gen];
    g->pcie_encoding = pcie->encoding[g->pcie_gen];
    snprintf(g->form_factor, sizeof g->form_factor, "%s", form_factors[ff]);
    g->memory_bytes = mem_gib * GiB;
    g->mem_bw_Bps = bw * 1e9;
    g->nvlink_Bps = nvl * 1e9;
    g->boost_clock_hz = clock_mhz * 1e6;
    g->tdp_w = tdp;
    g->price_usd = price;
    if (!g->display[0])
        snprintf(g->display, sizeof g->display, "%s", g->name);
    return 0;
}

int cfg_load_gpus(const char *path, const char *datadir, gpu_catalog *out,
                  llm_err *e)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    cfg_pcie pcie;
    if (cfg_pcie_load(datadir, &pcie, e))
        return -1;
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    static const char *const root_keys[] = {"gpus"};
    if (cfgu_check_keys(&c, r, root_keys, 1))
        goto out;
    const config_setting_t *list = config_setting_get_member(r, "gpus");
    if (!list || config_setting_type(list) != CONFIG_TYPE_LIST ||
        config_setting_length(list) == 0) {
        err_at(e, path, list ? cfgu_line(list) : 1, "gpus",
               "missing or empty (expected gpus = ( { name = ...; }, ... );)");
        goto out;
    }
    int n = config_setting_length(list);
    out->gpus = calloc((size_t)n, sizeof *out->gpus);
    if (!out->gpus) {
        err_set(e, "%s: out of memory", path);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(list, (unsigned)i);
        if (load_gpu(&c, s, &pcie, &out->gpus[i]))
            goto out;
        for (int k = 0; k < i; k++)
            if (strcmp(out->gpus[k].name, out->gpus[i].name) == 0) {
                err_at(e, path, cfgu_line(s), "name",
                       "duplicate GPU \"%s\" (expected unique names)",
                       out->gpus[i].name);
                goto out;
            }
        out->n = i + 1;
    }
    rc = 0;
out:
    if (rc)
        gpu_catalog_free(out);
    config_destroy(&cfg);
    return rc;
}
