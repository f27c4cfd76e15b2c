/* stack — the defaults of a software-stack profile. */
#include "model/stack.h"

#include <stdio.h>

const char *const stack_gather_names[2] = {"layer", "module"};
const char *const stack_prefetch_names[2] = {"pre", "post"};

stack_spec stack_defaults(void)
{
    /* one pass per fused kernel, nothing else: what the cost model prices
     * with no stack at all */
    return (stack_spec){.norm_passes = 1,
                        .rope_passes = 0,
                        .act_passes = 1,
                        .copy_passes = 0,
                        .optimizer_passes = 1,
                        .fp8_weight_cache = true,
                        .fp8_norm_fused = true,
                        .tp_overlap_hidden = 1,
                        /* PyTorch DDP's bucket_cap_mb default, 25 MiB
                         * (torch/nn/parallel/distributed.py) */
                        .ddp_bucket_bytes = 25.0 * 1024 * 1024};
}

double stack_bucket_bytes(const stack_spec *s, double plan_bucket_bytes,
                          int dp, double grad_bytes_per_param)
{
    if (plan_bucket_bytes > 0)
        return plan_bucket_bytes;
    if (s->ddp_bucket_params > 0) {
        double params = s->ddp_bucket_params_per_dp * dp;
        if (params < s->ddp_bucket_params)
            params = s->ddp_bucket_params;
        return params * grad_bytes_per_param;
    }
    return s->ddp_bucket_bytes;
}

static double pick(double plan, double abs, double per, double scale)
{
    return plan > 0 ? plan : abs > 0 ? abs : per * scale;
}

stack_z3 stack_z3_sizes(const stack_spec *s, double hidden,
                        double plan_prefetch, double plan_max_live,
                        double plan_reduce)
{
    double h2 = hidden * hidden;
    return (stack_z3){
        .prefetch = pick(plan_prefetch, s->z3_prefetch_params,
                         s->z3_prefetch_per_h2, h2),
        .max_live = pick(plan_max_live, s->z3_max_live_params, 0, 0),
        .persist = pick(0, s->z3_persist_params, s->z3_persist_per_h, hidden),
        .reduce = pick(plan_reduce, s->z3_reduce_params, s->z3_reduce_per_h2,
                       h2)};
}

void stack_ask_attention(stack_spec *s, const char *kernel)
{
    if (!kernel || !kernel[0])
        return;
    snprintf(s->attention[0], sizeof s->attention[0], "%s", kernel);
    s->nattention = 1;
    s->attention_asked = true;
}

void stack_apply_compile(stack_spec *s)
{
    const struct stack_compiled *k = &s->compiled;
    s->norm_passes = k->norm_passes;
    s->rope_passes = k->rope_passes;
    s->act_passes = k->act_passes;
    s->copy_passes = k->copy_passes;
    s->kernels_per_layer = k->kernels_per_layer;
    s->fp8_act_cast_bytes = k->fp8_act_cast_bytes;
    s->fp8_grad_cast_bytes = k->fp8_grad_cast_bytes;
}
