/* cfg_stack — stacks/NAME.cfg: a training framework's profile into a
 * stack_spec (model/stack.h), or with kind = "serving" a serving engine's
 * into an eprof (serve/eprof.h).  Every key is checked: unknown keys,
 * values out of range and a missing source are errors at their line. */
#include <string.h>

#include "base/util.h"
#include "cfg/cfg.h"
#include "cfg/cfg_util.h"

static const char *const stack_keys[] = {"kind", "name", "display", "version",
                                          "source",  "attention", "kernels",
                                          "optimizer", "fp8",    "fsdp",
                                          "ddp",     "compiled", "tp_overlap"};
static const char *const kernel_keys[] = {
    "norm_passes", "rope_passes",       "act_passes",
    "copy_passes", "host_us_per_kernel", "kernels_per_layer",
    "cuda_graphs"};
static const char *const optimizer_keys[] = {"passes"};
static const char *const fp8_keys[] = {"act_cast_bytes", "weight_cast_bytes",
                                       "grad_cast_bytes", "weight_cache",
                                       "norm_fused",     "attention"};
static const char *const fsdp_keys[] = {
    "reduce_bytes",      "gather",           "qkv_fused",
    "prefetch_params",   "prefetch_per_hidden2", "max_live_params",
    "persist_params",    "persist_per_hidden",   "reduce_bucket_params",
    "reduce_bucket_per_hidden2", "internode_GBps", "backward_prefetch"};

/* fsdp = { reduce_bytes, gather = "layer" | "module", ... }: a module
 * coordinator needs its prefetch, live and reduce sizes (each absolute or
 * per hidden). */
static int load_fsdp(cfgu *c, const config_setting_t *g, stack_spec *s)
{
    int gather = s->z3_gather, prefetch = s->fsdp_backward_prefetch;
    double gbps = s->z3_internode_Bps / 1e9;
    if (cfgu_check_keys(c, g, fsdp_keys, COUNT(fsdp_keys)) ||
        cfgu_double(c, g, "reduce_bytes", false, 0, 8, &s->fsdp_reduce_bytes) ||
        cfgu_enum(c, g, "gather", false, stack_gather_names, 2, &gather) ||
        cfgu_enum(c, g, "backward_prefetch", false, stack_prefetch_names, 2,
                  &prefetch) ||
        cfgu_bool(c, g, "qkv_fused", false, &s->z3_qkv_fused) ||
        cfgu_double(c, g, "prefetch_params", false, 1, 1e13,
                    &s->z3_prefetch_params) ||
        cfgu_double(c, g, "prefetch_per_hidden2", false, 1e-6, 1e6,
                    &s->z3_prefetch_per_h2) ||
        cfgu_double(c, g, "max_live_params", gather == STACK_GATHER_MODULE,
                    1, 1e13, &s->z3_max_live_params) ||
        cfgu_double(c, g, "persist_params", false, 0, 1e13,
                    &s->z3_persist_params) ||
        cfgu_double(c, g, "persist_per_hidden", false, 0, 1e6,
                    &s->z3_persist_per_h) ||
        cfgu_double(c, g, "reduce_bucket_params", false, 1, 1e13,
                    &s->z3_reduce_params) ||
        cfgu_double(c, g, "reduce_bucket_per_hidden2", false, 1e-6, 1e6,
                    &s->z3_reduce_per_h2) ||
        cfgu_double(c, g, "internode_GBps", false, 0.1, 1e4, &gbps))
        return -1;
    s->z3_internode_Bps = gbps * 1e9;
    s->fsdp_backward_prefetch = (stack_prefetch)prefetch;
    s->z3_gather = (stack_gather)gather;
    if (gather != STACK_GATHER_MODULE)
        return 0;
    if (prefetch != STACK_PREFETCH_PRE)
        return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "fsdp",
                      "backward_prefetch applies to gather = \"layer\" "
                      "(a per-module coordinator prefetches by its own "
                      "sizes)");
    const char *missing =
        s->z3_prefetch_params <= 0 && s->z3_prefetch_per_h2 <= 0
            ? "prefetch_params or prefetch_per_hidden2"
        : s->z3_reduce_params <= 0 && s->z3_reduce_per_h2 <= 0
            ? "reduce_bucket_params or reduce_bucket_per_hidden2"
            : NULL;
    if (missing)
        return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "fsdp",
                      "gather = \"module\" needs %s", missing);
    return 0;
}
static const char *const ddp_keys[] = {"bucket_mb", "bucket_params",
                                       "bucket_params_per_dp"};

/* ddp = { bucket_mb } or { bucket_params, bucket_params_per_dp }. */
static int load_ddp(cfgu *c, const config_setting_t *g, stack_spec *s)
{
    double mb = 0;
    if (cfgu_check_keys(c, g, ddp_keys, COUNT(ddp_keys)) ||
        cfgu_double(c, g, "bucket_mb", false, 0.001, 1e6, &mb) ||
        cfgu_double(c, g, "bucket_params", false, 1, 1e12,
                    &s->ddp_bucket_params) ||
        cfgu_double(c, g, "bucket_params_per_dp", false, 0, 1e12,
                    &s->ddp_bucket_params_per_dp))
        return -1;
    if (mb > 0)
        s->ddp_bucket_bytes = mb * 1024 * 1024;
    return 0;
}
static const char *const tp_overlap_keys[] = {"hidden"};

static const char *const compiled_keys[] = {
    "norm_passes",    "rope_passes",       "act_passes",     "copy_passes",
    "kernels_per_layer", "fp8_act_cast_bytes", "fp8_grad_cast_bytes"};

/* compiled = { ... }: every figure required (what Inductor leaves). */
static int load_compiled(cfgu *c, const config_setting_t *g, stack_spec *s)
{
    struct stack_compiled *k = &s->compiled;
    s->compile_offered = true;
    return cfgu_check_keys(c, g, compiled_keys, COUNT(compiled_keys)) ||
           cfgu_double(c, g, "norm_passes", true, 0, 100, &k->norm_passes) ||
           cfgu_double(c, g, "rope_passes", true, 0, 100, &k->rope_passes) ||
           cfgu_double(c, g, "act_passes", true, 0, 100, &k->act_passes) ||
           cfgu_double(c, g, "copy_passes", true, 0, 100, &k->copy_passes) ||
           cfgu_double(c, g, "kernels_per_layer", true, 0, 1e4,
                       &k->kernels_per_layer) ||
           cfgu_double(c, g, "fp8_act_cast_bytes", true, 0, 64,
                       &k->fp8_act_cast_bytes) ||
           cfgu_double(c, g, "fp8_grad_cast_bytes", true, 0, 64,
                       &k->fp8_grad_cast_bytes);
}

/* attention = ["cudnn", "fa2"]: kernel names, tried in order. */
static int load_attention(cfgu *c, const config_setting_t *r, stack_spec *s)
{
    const config_setting_t *a = config_setting_get_member(r, "attention");
    if (!a)
        return 0;
    int n = config_setting_length(a);
    if (!config_setting_is_aggregate(a) || n < 1 || n > STACK_MAX_ATTN)
        return err_at(c->e, cfgu_file(c, a), cfgu_line(a), "attention",
                      "expected a list of 1..%d kernel names from "
                      "calib/attention-kernels.tsv ([\"cudnn\", \"fa2\"])",
                      STACK_MAX_ATTN);
    for (int i = 0; i < n; i++) {
        const char *k = config_setting_get_string_elem(a, i);
        if (!k || !k[0] || strlen(k) >= sizeof s->attention[0])
            return err_at(c->e, cfgu_file(c, a), cfgu_line(a), "attention",
                          "entry %d is not a kernel name of at most %zu "
                          "characters (expected [\"cudnn\", \"fa2\"])",
                          i + 1, sizeof s->attention[0] - 1);
        snprintf(s->attention[i], sizeof s->attention[i], "%s", k);
    }
    s->nattention = n;
    return 0;
}

static int load_kernels(cfgu *c, const config_setting_t *g, stack_spec *s)
{
    return cfgu_check_keys(c, g, kernel_keys, COUNT(kernel_keys)) ||
           cfgu_double(c, g, "norm_passes", false, 0, 100, &s->norm_passes) ||
           cfgu_double(c, g, "rope_passes", false, 0, 100, &s->rope_passes) ||
           cfgu_double(c, g, "act_passes", false, 0, 100, &s->act_passes) ||
           cfgu_double(c, g, "copy_passes", false, 0, 100, &s->copy_passes) ||
           cfgu_double(c, g, "host_us_per_kernel", false, 0, 1e4,
                       &s->host_us_per_kernel) ||
           cfgu_double(c, g, "kernels_per_layer", false, 0, 1e4,
                       &s->kernels_per_layer) ||
           cfgu_bool(c, g, "cuda_graphs", false, &s->cuda_graphs);
}

static int load_fp8(cfgu *c, const config_setting_t *g, stack_spec *s)
{
    return cfgu_check_keys(c, g, fp8_keys, COUNT(fp8_keys)) ||
           cfgu_double(c, g, "act_cast_bytes", false, 0, 64,
                       &s->fp8_act_cast_bytes) ||
           cfgu_double(c, g, "weight_cast_bytes", false, 0, 64,
                       &s->fp8_weight_cast_bytes) ||
           cfgu_double(c, g, "grad_cast_bytes", false, 0, 64,
                       &s->fp8_grad_cast_bytes) ||
           cfgu_bool(c, g, "weight_cache", false, &s->fp8_weight_cache) ||
           cfgu_bool(c, g, "norm_fused", false, &s->fp8_norm_fused) ||
           cfgu_bool(c, g, "attention", false, &s->fp8_attention);
}

/* kind = "training" (or none) | "serving": a profile of the other kind
 * given to --stack or --engine is an error that says which flag takes it. */
static const char *const kinds[] = {"training", "serving"};
static const char *const kind_flag[] = {"--stack", "--engine"};

static int profile_kind(cfgu *c, const config_setting_t *r, int want)
{
    int k = 0;
    if (cfgu_enum(c, r, "kind", false, kinds, 2, &k))
        return -1;
    if (k != want) {
        const config_setting_t *s = config_setting_get_member(r, "kind");
        return err_at(c->e, cfgu_file(c, s ? s : r), s ? cfgu_line(s) : 1,
                      "kind", "\"%s\" is a %s profile, for %s (expected "
                      "a %s profile here)", kinds[k], kinds[k], kind_flag[k],
                      kinds[want]);
    }
    return 0;
}

/* What every profile starts with: its kind, no unknown key, and its name
 * (the file's by default), display name, version and sources. */
typedef struct profile_head {
    char *name, *display, *version, *source;
    size_t name_len, display_len, version_len, source_len;
} profile_head;

static int load_head(cfgu *c, const config_setting_t *r, int kind,
                     const char *const *keys, int nkeys, const char *path,
                     const profile_head *h)
{
    util_basename_id(path, h->name, h->name_len);
    return profile_kind(c, r, kind) || cfgu_check_keys(c, r, keys, nkeys) ||
           cfgu_str(c, r, "name", false, h->name, h->name_len) ||
           cfgu_str(c, r, "display", true, h->display, h->display_len) ||
           cfgu_str(c, r, "version", true, h->version, h->version_len) ||
           cfgu_str(c, r, "source", true, h->source, h->source_len);
}

#define PROFILE_HEAD(s)                                                      \
    ((profile_head){(s)->name, (s)->display, (s)->version, (s)->source,     \
                    sizeof (s)->name, sizeof (s)->display,                  \
                    sizeof (s)->version, sizeof (s)->source})

int cfg_load_stack(const char *path, stack_spec *s, llm_err *e)
{
    *s = stack_defaults();
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    config_setting_t *k, *o, *f, *z, *cp, *dd, *to;
    profile_head h = PROFILE_HEAD(s);
    if (load_head(&c, r, 0, stack_keys, COUNT(stack_keys), path, &h) ||
        load_attention(&c, r, s) || cfgu_group(&c, r, "kernels", &k) ||
        cfgu_group(&c, r, "optimizer", &o) || cfgu_group(&c, r, "fp8", &f) ||
        cfgu_group(&c, r, "fsdp", &z) || cfgu_group(&c, r, "compiled", &cp) ||
        cfgu_group(&c, r, "ddp", &dd) || cfgu_group(&c, r, "tp_overlap", &to) ||
        (k && load_kernels(&c, k, s)) ||
        (cp && load_compiled(&c, cp, s)) || (dd && load_ddp(&c, dd, s)))
        goto out;
    if (o && (cfgu_check_keys(&c, o, optimizer_keys, COUNT(optimizer_keys)) ||
              cfgu_double(&c, o, "passes", false, 0.1, 100,
                          &s->optimizer_passes)))
        goto out;
    if ((f && load_fp8(&c, f, s)) || (z && load_fsdp(&c, z, s)))
        goto out;
    /* tp_overlap = { hidden }: the share --tp-overlap hides, (0, 1] */
    if (to && (cfgu_check_keys(&c, to, tp_overlap_keys,
                               COUNT(tp_overlap_keys)) ||
               cfgu_double(&c, to, "hidden", true, 0.01, 1,
                           &s->tp_overlap_hidden)))
        goto out;
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}

/* ---- serving engines ------------------------------------------------- */

static const char *const engine_keys[] = {"kind",    "name",      "display",
                                          "version", "source",    "scheduler",
                                          "host",    "kernels",   "kv"};
static const char *const sched_keys[] = {
    "policy",     "admission",      "preemption", "max_num_seqs",
    "max_batched_tokens", "chunk",  "block_size", "gpu_memory_utilization",
    "static_batch", "reserve_ratio", "memory_of", "steps", "large_gpu"};
static const char *const large_keys[] = {"min_memory_gib", "except_name",
                                         "max_num_seqs", "max_batched_tokens"};
static const char *const memory_of[] = {"total", "free"};
static const char *const host_keys[] = {"iteration_ms", "per_seq_ms",
                                        "overlap",      "launch_us",
                                        "kernels_per_layer", "graph_max_batch",
                                        "bias_kernels", "layernorm_kernels",
                                        "rope_kernels", "prefill_ms"};
static const char *const ekernel_keys[] = {"decode_kv_per_query_head"};
static const char *const kv_keys[] = {"fp8_with_fp8_weights"};

/* The batch limits of large GPUs: all four keys, or no group. */
static int load_large(cfgu *c, const config_setting_t *g, eprof_large *l)
{
    double gib = 0;
    if (cfgu_check_keys(c, g, large_keys, COUNT(large_keys)) ||
        cfgu_double(c, g, "min_memory_gib", true, 1, 1e5, &gib) ||
        cfgu_str(c, g, "except_name", true, l->except_name,
                 sizeof l->except_name) ||
        cfgu_int(c, g, "max_num_seqs", true, 1, 1 << 20, &l->max_num_seqs) ||
        cfgu_int(c, g, "max_batched_tokens", true, 1, 1 << 22,
                 &l->max_batched_tokens))
        return -1;
    l->min_memory_bytes = gib * 1073741824.0;
    return 0;
}

static int load_sched(cfgu *c, const config_setting_t *g, eprof *s)
{
    config_setting_t *lg;
    int admit = s->admit, of = s->mem_of_free;
    if (cfgu_check_keys(c, g, sched_keys, COUNT(sched_keys)) ||
        cfgu_enum(c, g, "policy", false, serve_policy_names, SERVE_POLICIES,
                  &s->policy) ||
        cfgu_enum(c, g, "admission", false, serve_admit_names, ADMIT_COUNT,
                  &admit) ||
        cfgu_enum(c, g, "preemption", false, serve_preempt_names,
                  PREEMPT_COUNT, &s->preempt) ||
        cfgu_int(c, g, "max_num_seqs", false, 1, 1 << 20, &s->max_num_seqs) ||
        cfgu_int(c, g, "max_batched_tokens", false, 1, 1 << 22,
                 &s->max_batched_tokens) ||
        cfgu_int(c, g, "chunk", false, 0, 1 << 22, &s->chunk) ||
        cfgu_int(c, g, "block_size", false, 1, 65536, &s->block_size) ||
        cfgu_int(c, g, "steps", false, 1, 1024, &s->scheduler_steps) ||
        cfgu_double(c, g, "gpu_memory_utilization", false, 0.01, 1,
                    &s->gpu_mem_util) ||
        cfgu_bool(c, g, "static_batch", false, &s->static_batch) ||
        cfgu_double(c, g, "reserve_ratio", false, 0, 1, &s->reserve_ratio) ||
        cfgu_enum(c, g, "memory_of", false, memory_of, 2, &of) ||
        cfgu_group(c, g, "large_gpu", &lg) ||
        (lg && load_large(c, lg, &s->large)))
        return -1;
    s->admit = (serve_admit)admit;
    s->mem_of_free = of == 1;
    return 0;
}

static int load_host(cfgu *c, const config_setting_t *g, eprof *s)
{
    double it_ms = 0, seq_ms = 0, launch_us = 0, prefill_ms = 0;
    if (cfgu_check_keys(c, g, host_keys, COUNT(host_keys)) ||
        cfgu_double(c, g, "iteration_ms", false, 0, 1e4, &it_ms) ||
        cfgu_double(c, g, "per_seq_ms", false, 0, 1e3, &seq_ms) ||
        cfgu_bool(c, g, "overlap", false, &s->host.overlap) ||
        cfgu_double(c, g, "launch_us", false, 0, 1e4, &launch_us) ||
        cfgu_double(c, g, "kernels_per_layer", false, 0, 1e4,
                    &s->host.kernels_per_layer) ||
        cfgu_int(c, g, "graph_max_batch", false, 0, 1 << 20,
                 &s->host.graph_max_batch) ||
        cfgu_double(c, g, "bias_kernels", false, 0, 1e4,
                    &s->host.bias_kernels) ||
        cfgu_double(c, g, "layernorm_kernels", false, 0, 1e4,
                    &s->host.layernorm_kernels) ||
        cfgu_double(c, g, "rope_kernels", false, 0, 1e4,
                    &s->host.rope_kernels) ||
        cfgu_double(c, g, "prefill_ms", false, 0, 1e4, &prefill_ms))
        return -1;
    if (s->host.rope_kernels > s->host.kernels_per_layer)
        return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "rope_kernels",
                      "%g, more than kernels_per_layer %g (expected a part "
                      "of the layer's kernels)", s->host.rope_kernels,
                      s->host.kernels_per_layer);
    s->iteration_overhead_s = it_ms * 1e-3;
    s->host.per_seq_s = seq_ms * 1e-3;
    s->host.launch_s = launch_us * 1e-6;
    s->host.prefill_s = prefill_ms * 1e-3;
    return 0;
}

int cfg_load_engine(const char *path, eprof *s, llm_err *e)
{
    serve_params d = exp_serve_params_defaults();
    *s = eprof_defaults(&d);
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    config_setting_t *sc, *h, *k, *kv;
    profile_head ph = PROFILE_HEAD(s);
    if (load_head(&c, r, 1, engine_keys, COUNT(engine_keys), path, &ph) ||
        cfgu_group(&c, r, "scheduler", &sc) || cfgu_group(&c, r, "host", &h) ||
        cfgu_group(&c, r, "kernels", &k) || cfgu_group(&c, r, "kv", &kv) ||
        (sc && load_sched(&c, sc, s)) || (h && load_host(&c, h, s)))
        goto out;
    if (k && (cfgu_check_keys(&c, k, ekernel_keys, COUNT(ekernel_keys)) ||
              cfgu_bool(&c, k, "decode_kv_per_query_head", false,
                        &s->decode_kv_per_q_head)))
        goto out;
    if (kv && (cfgu_check_keys(&c, kv, kv_keys, COUNT(kv_keys)) ||
               cfgu_bool(&c, kv, "fp8_with_fp8_weights", false,
                         &s->fp8_kv_with_fp8)))
        goto out;
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}
