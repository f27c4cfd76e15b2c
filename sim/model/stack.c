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
                        .fp8_norm_fused = true};
}
