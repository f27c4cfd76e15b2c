/* stack — the defaults of a software-stack profile. */
#include "model/stack.h"

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
