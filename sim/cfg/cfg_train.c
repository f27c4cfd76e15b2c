/* Experiment files for `llmsim train`: model, cluster, node count and the
 * parallel plan, with --set overrides applied to the parsed file. */
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_util.h"
#include "base/util.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const input_keys[] = {"workers", "sample_ms", "prefetch",
                                         "bytes_per_token"};
static const char *const root_keys[] = {"model", "cluster", "nodes", "gpus",
                                        "input",
                                        "parallel", "description",
                                        CFGU_SHARED_KEYS};
static const char *const plan_keys[] = {
    "tp", "pp", "dp", "cp", "ep", "sp", "vpp", "micro_batch", "global_batch",
    "seq_len", "schedule", "zero", "recompute", "precision", "optimizer",
    "flash_attn", "overlap_grad_reduce", "overlap_param_gather", "bucket_mb",
    "moe_imbalance", "microbatches", "lora_rank"};

static int load_plan(cfgu *c, const config_setting_t *g, plan_train *p)
{
    int sched = p->schedule, rec = p->recompute, opt = p->optimizer;
    char prec[16] = "";
    bool flash = p->flash_attn, overlap = !p->no_overlap_grad_reduce;
    double bucket = p->bucket_bytes / MiB;
    if (cfgu_check_keys(c, g, plan_keys, COUNT(plan_keys)) ||
        cfgu_int(c, g, "tp", false, 1, 4096, &p->tp) ||
        cfgu_int(c, g, "pp", false, 1, 4096, &p->pp) ||
        cfgu_int(c, g, "dp", false, 0, 1 << 20, &p->dp) ||
        cfgu_int(c, g, "cp", false, 1, 4096, &p->cp) ||
        cfgu_int(c, g, "ep", false, 1, 4096, &p->ep) ||
        cfgu_bool(c, g, "sp", false, &p->sp) ||
        cfgu_int(c, g, "vpp", false, 1, 1024, &p->vpp) ||
        cfgu_int(c, g, "micro_batch", false, 1, 1 << 20, &p->micro_batch) ||
        cfgu_int(c, g, "global_batch", false, 1, 1 << 26, &p->global_batch) ||
        cfgu_int(c, g, "seq_len", false, 1, 1 << 24, &p->seq_len) ||
        cfgu_enum(c, g, "schedule", false, plan_schedule_names, 3, &sched) ||
        cfgu_int(c, g, "zero", false, 0, 3, &p->zero) ||
        cfgu_enum(c, g, "recompute", false, plan_recompute_names, 3, &rec) ||
        cfgu_enum(c, g, "optimizer", false, plan_optimizer_names, OPT_COUNT,
                  &opt) ||
        cfgu_str(c, g, "precision", false, prec, sizeof prec) ||
        cfgu_bool(c, g, "flash_attn", false, &flash) ||
        cfgu_bool(c, g, "overlap_grad_reduce", false, &overlap) ||
        cfgu_bool(c, g, "overlap_param_gather", false,
                  &p->overlap_param_gather) ||
        cfgu_double(c, g, "moe_imbalance", false, 1, 1e3, &p->moe_imbalance) ||
        cfgu_int(c, g, "lora_rank", false, 0, 65536, &p->lora_rank) ||
        cfgu_double(c, g, "bucket_mb", false, 0.001, 1e6, &bucket))
        return -1;
    p->schedule = (plan_schedule)sched;
    p->recompute = (plan_recompute)rec;
    p->optimizer = (plan_optimizer)opt;
    p->flash_attn = flash;
    p->no_overlap_grad_reduce = !overlap;
    p->bucket_bytes = bucket * MiB;
    if (prec[0] && (dtype_parse(prec, &p->precision) != 0 ||
                    (p->precision != DT_BF16 && p->precision != DT_FP16 &&
                     p->precision != DT_FP8 && p->precision != DT_FP32)))
        return err_at(c->e, c->file,
                      cfgu_line(config_setting_get_member(g, "precision")),
                      "precision", "unknown value \"%s\" (expected bf16, "
                      "fp16, fp8 or fp32)", prec);
    return 0;
}

int cfg_load_experiment(const char *path, const char *const *sets, int nsets,
                        cfg_experiment *x, llm_err *e)
{
    cfgu c = {path, e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read_with_sets(&c, &cfg, sets, nsets))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    config_setting_t *plan, *input;
    char desc[512];
    if (cfgu_check_keys(&c, r, root_keys, COUNT(root_keys)) ||
        cfgu_str(&c, r, "model", true, x->model, sizeof x->model) ||
        cfgu_str(&c, r, "cluster", true, x->cluster, sizeof x->cluster) ||
        cfgu_int(&c, r, "nodes", false, 1, 1 << 20, &x->nodes) ||
        cfgu_int(&c, r, "gpus", false, 1, 1 << 24, &x->gpus) ||
        cfgu_str(&c, r, "description", false, desc, sizeof desc) ||
        cfgu_group(&c, r, "parallel", &plan) ||
        cfgu_group(&c, r, "input", &input) || cfgu_net(&c, r, &x->net))
        goto out;
    double ms = x->loader.sample_s * 1e3;
    if (input &&
        (cfgu_check_keys(&c, input, input_keys, COUNT(input_keys)) ||
         cfgu_int(&c, input, "workers", false, 0, 4096, &x->loader.workers) ||
         cfgu_double(&c, input, "sample_ms", false, 0, 1e7, &ms) ||
         cfgu_int(&c, input, "prefetch", false, 1, 1024, &x->loader.prefetch) ||
         cfgu_double(&c, input, "bytes_per_token", false, 0, 1e6,
                     &x->loader.bytes_per_token)))
        goto out;
    x->loader.sample_s = ms * 1e-3;
    if (!plan) {
        err_at(e, path, 1, "parallel", "missing (expected parallel = { tp = "
               "...; pp = ...; ... };)");
        goto out;
    }
    rc = load_plan(&c, plan, &x->plan) ||
                 cfgu_int(&c, plan, "microbatches", false, 1, 1 << 20,
                          &x->microbatches)
             ? -1
             : 0;
out:
    config_destroy(&cfg);
    return rc;
}
