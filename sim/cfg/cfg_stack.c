/* cfg_stack — stacks/NAME.cfg, a training framework's profile, into a
 * stack_spec (model/stack.h).  Every key is checked: unknown keys, values
 * out of range and a missing source are errors at their line. */
#include <string.h>

#include "base/util.h"
#include "cfg/cfg.h"
#include "cfg/cfg_util.h"

static const char *const stack_keys[] = {"name",    "display", "version",
                                          "source",  "attention", "kernels",
                                          "optimizer", "fp8",    "fsdp",
                                          "ddp",     "compiled"};
static const char *const kernel_keys[] = {
    "norm_passes", "rope_passes",       "act_passes",
    "copy_passes", "host_us_per_kernel", "kernels_per_layer",
    "cuda_graphs"};
static const char *const optimizer_keys[] = {"passes"};
static const char *const fp8_keys[] = {"act_cast_bytes", "weight_cast_bytes",
                                       "grad_cast_bytes", "weight_cache",
                                       "norm_fused",     "attention"};
static const char *const fsdp_keys[] = {"reduce_bytes"};
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
    config_setting_t *k, *o, *f, *z, *cp, *dd;
    util_basename_id(path, s->name, sizeof s->name);
    if (cfgu_check_keys(&c, r, stack_keys, COUNT(stack_keys)) ||
        cfgu_str(&c, r, "name", false, s->name, sizeof s->name) ||
        cfgu_str(&c, r, "display", true, s->display, sizeof s->display) ||
        cfgu_str(&c, r, "version", true, s->version, sizeof s->version) ||
        cfgu_str(&c, r, "source", true, s->source, sizeof s->source) ||
        load_attention(&c, r, s) || cfgu_group(&c, r, "kernels", &k) ||
        cfgu_group(&c, r, "optimizer", &o) || cfgu_group(&c, r, "fp8", &f) ||
        cfgu_group(&c, r, "fsdp", &z) || cfgu_group(&c, r, "compiled", &cp) ||
        cfgu_group(&c, r, "ddp", &dd) || (k && load_kernels(&c, k, s)) ||
        (cp && load_compiled(&c, cp, s)) || (dd && load_ddp(&c, dd, s)))
        goto out;
    if (o && (cfgu_check_keys(&c, o, optimizer_keys, COUNT(optimizer_keys)) ||
              cfgu_double(&c, o, "passes", false, 0.1, 100,
                          &s->optimizer_passes)))
        goto out;
    if ((f && load_fp8(&c, f, s)) ||
        (z && (cfgu_check_keys(&c, z, fsdp_keys, COUNT(fsdp_keys)) ||
               cfgu_double(&c, z, "reduce_bytes", false, 0, 8,
                           &s->fsdp_reduce_bytes))))
        goto out;
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}
