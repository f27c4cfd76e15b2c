/* Serving experiment files for `llmsim serve`: model, cluster, the
 * replicas and their engine settings, the workload, the objectives. */
#include <libconfig.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_util.h"
#include "base/tsv.h"
#include "base/util.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const root_keys[] = {"description", "model", "cluster",
                                        "nodes", "gpus", "serving",
                                        "workload", "slo", CFGU_SHARED_KEYS};
static const char *const serving_keys[] = {
    "tp", "pp", "replicas", "prefill_replicas", "decode_replicas",
    "prefill_tp", "prefill_pp", "decode_tp", "decode_pp", "max_num_seqs",
    "max_batched_tokens", "chunk", "policy", "router", "block_size",
    "gpu_memory_utilization", "preemption", "swap_space_gib", "dtype",
    "kv_dtype", "quant_group", "flash_attn", "iteration_overhead_ms",
    "kv_layerwise"};
static const char *const workload_keys[] = {
    "trace", "rate_scale", "requests", "arrival", "rate", "cv", "burst",
    "prompt_len", "output_len", "seed"};
static const char *const slo_keys[] = {"ttft_ms", "tpot_ms"};

void cfg_serving_defaults(cfg_serving *x)
{
    memset(x, 0, sizeof *x);
    serve_params_defaults(&x->p);
    x->tp = x->pp = 1;
    x->rate_scale = 1;
    x->cv = 1;
    x->burst = 1;
    x->seed = 1;
    snprintf(x->arrival, sizeof x->arrival, "poisson");
}

static int load_serving(cfgu *c, const config_setting_t *g, cfg_serving *x)
{
    serve_params *p = &x->p;
    double swap = p->swap_space_bytes / GiB, ovh = p->iteration_overhead_s * 1e3;
    int preempt = p->preempt;
    if (cfgu_check_keys(c, g, serving_keys, COUNT(serving_keys)) ||
        cfgu_int(c, g, "tp", false, 1, 4096, &x->tp) ||
        cfgu_int(c, g, "pp", false, 1, 64, &x->pp) ||
        cfgu_int(c, g, "replicas", false, 1, 1 << 16, &x->replicas) ||
        cfgu_int(c, g, "prefill_replicas", false, 0, 1 << 16,
                 &x->prefill_replicas) ||
        cfgu_int(c, g, "decode_replicas", false, 0, 1 << 16,
                 &x->decode_replicas) ||
        cfgu_int(c, g, "prefill_tp", false, 1, 4096, &x->prefill_tp) ||
        cfgu_int(c, g, "prefill_pp", false, 1, 64, &x->prefill_pp) ||
        cfgu_int(c, g, "decode_tp", false, 1, 4096, &x->decode_tp) ||
        cfgu_int(c, g, "decode_pp", false, 1, 64, &x->decode_pp) ||
        cfgu_int(c, g, "max_num_seqs", false, 1, 1 << 20, &p->max_num_seqs) ||
        cfgu_int(c, g, "max_batched_tokens", false, 1, 1 << 22,
                 &p->max_batched_tokens) ||
        cfgu_int(c, g, "chunk", false, 0, 1 << 22, &p->chunk) ||
        cfgu_enum(c, g, "policy", false, serve_policy_names, SERVE_POLICIES,
                  &p->policy) ||
        cfgu_enum(c, g, "router", false, serve_router_names, SERVE_ROUTERS,
                  &p->router) ||
        cfgu_int(c, g, "block_size", false, 1, 4096, &p->block_size) ||
        cfgu_double(c, g, "gpu_memory_utilization", false, 0.01, 1,
                    &p->gpu_mem_util) ||
        cfgu_enum(c, g, "preemption", false, serve_preempt_names,
                  PREEMPT_COUNT, &preempt) ||
        cfgu_double(c, g, "swap_space_gib", false, 0, 1 << 20, &swap) ||
        cfgu_str(c, g, "dtype", false, x->dtype, sizeof x->dtype) ||
        cfgu_str(c, g, "kv_dtype", false, x->kv_dtype, sizeof x->kv_dtype) ||
        cfgu_int(c, g, "quant_group", false, 1, 1 << 20, &p->quant_group) ||
        cfgu_bool(c, g, "flash_attn", false, &p->flash) ||
        cfgu_double(c, g, "iteration_overhead_ms", false, 0, 1e6, &ovh) ||
        cfgu_bool(c, g, "kv_layerwise", false, &p->kv_layerwise))
        return -1;
    p->preempt = (serve_preempt)preempt;
    p->swap_space_bytes = swap * GiB;
    p->iteration_overhead_s = ovh * 1e-3;
    return 0;
}

static int load_workload(cfgu *c, const config_setting_t *g, cfg_serving *x)
{
    double seed = (double)x->seed;
    if (cfgu_check_keys(c, g, workload_keys, COUNT(workload_keys)) ||
        cfgu_str(c, g, "trace", false, x->trace, sizeof x->trace) ||
        cfgu_double(c, g, "rate_scale", false, 1e-9, 1e9, &x->rate_scale) ||
        cfgu_int(c, g, "requests", false, 1, 1 << 30, &x->requests) ||
        cfgu_str(c, g, "arrival", false, x->arrival, sizeof x->arrival) ||
        cfgu_double(c, g, "rate", false, 1e-9, 1e9, &x->rate) ||
        cfgu_double(c, g, "cv", false, 1e-6, 1e6, &x->cv) ||
        cfgu_int(c, g, "burst", false, 1, 1 << 30, &x->burst) ||
        cfgu_str(c, g, "prompt_len", false, x->prompt_len,
                 sizeof x->prompt_len) ||
        cfgu_str(c, g, "output_len", false, x->output_len,
                 sizeof x->output_len) ||
        cfgu_double(c, g, "seed", false, 0, 4294967295.0, &seed))
        return -1;
    x->seed = (long)seed;
    return 0;
}

static int load_slo(cfgu *c, const config_setting_t *g, serve_params *p)
{
    double ttft = p->slo_ttft_s * 1e3, tpot = p->slo_tpot_s * 1e3;
    if (cfgu_check_keys(c, g, slo_keys, COUNT(slo_keys)) ||
        cfgu_double(c, g, "ttft_ms", false, 0, 1e9, &ttft) ||
        cfgu_double(c, g, "tpot_ms", false, 0, 1e9, &tpot))
        return -1;
    p->slo_ttft_s = ttft * 1e-3;
    p->slo_tpot_s = tpot * 1e-3;
    return 0;
}

int cfg_load_serving(const char *path, const char *const *sets, int nsets,
                     cfg_serving *x, llm_err *e)
{
    cfgu c = {path, e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read_with_sets(&c, &cfg, sets, nsets))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    config_setting_t *sv, *wl, *slo;
    char desc[512];
    if (cfgu_check_keys(&c, r, root_keys, COUNT(root_keys)) ||
        cfgu_str(&c, r, "model", true, x->model, sizeof x->model) ||
        cfgu_str(&c, r, "cluster", true, x->cluster, sizeof x->cluster) ||
        cfgu_int(&c, r, "nodes", false, 1, 1 << 20, &x->nodes) ||
        cfgu_int(&c, r, "gpus", false, 1, 1 << 24, &x->gpus) ||
        cfgu_str(&c, r, "description", false, desc, sizeof desc) ||
        cfgu_group(&c, r, "serving", &sv) ||
        cfgu_group(&c, r, "workload", &wl) || cfgu_group(&c, r, "slo", &slo) ||
        cfgu_net(&c, r, &x->net))
        goto out;
    if (!sv) {
        err_at(e, path, 1, "serving", "missing (expected serving = { tp = "
               "...; replicas = ...; ... };)");
        goto out;
    }
    if (!wl) {
        err_at(e, path, 1, "workload", "missing (expected workload = { trace "
               "= \"FILE.csv\"; }; or { rate = ...; prompt_len = ...; "
               "output_len = ...; requests = ...; })");
        goto out;
    }
    if (load_serving(&c, sv, x) || load_workload(&c, wl, x) ||
        (slo && load_slo(&c, slo, &x->p)))
        goto out;
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}

int cfg_load_idle_w(const char *datadir, const gpu_spec *g, double *idle_w,
                    llm_err *e)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/calib/power.tsv", datadir);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    int rc = -1, cg = tsv_col(&t, "gpu", e), cw, cf;
    if (cg < 0 || (cw = tsv_col(&t, "idle_w", e)) < 0 ||
        (cf = tsv_col(&t, "idle_frac_of_tdp", e)) < 0)
        goto out;
    int star = -1, row = -1;
    for (int i = 0; i < t.rows; i++) {
        if (strcmp(tsv_get(&t, i, cg), g->name) == 0)
            row = i;
        if (strcmp(tsv_get(&t, i, cg), "*") == 0)
            star = i;
    }
    double w, f;
    if (row < 0 && star < 0) {
        err_set(e, "%s: no row for %s and no '*' row", path, g->name);
        goto out;
    }
    int use = row >= 0 ? row : star;
    if (tsv_num(&t, use, cw, 0, 1e4, &w, e) ||
        tsv_num(&t, use, cf, 0, 1, &f, e))
        goto out;
    *idle_w = w > 0 ? w : f * g->tdp_w;
    rc = 0;
out:
    tsv_free(&t);
    return rc;
}
