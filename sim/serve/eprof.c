/* eprof — the defaults of a serving-engine profile. */
#include "serve/eprof.h"

const char *const serve_admit_names[ADMIT_COUNT] = {"chunk", "whole",
                                                    "no-evict", "reserve"};

eprof eprof_defaults(void)
{
    /* vLLM's engine arguments (vllm/engine/arg_utils.py): max_num_seqs
     * 256, block_size 16, gpu_memory_utilization 0.9; V1's chunked prefill
     * with an 8192-token budget; preemption by recompute */
    return (eprof){.max_num_seqs = 256,
                   .max_batched_tokens = 8192,
                   .block_size = 16,
                   .policy = 0,
                   .preempt = 0,
                   .admit = ADMIT_CHUNK,
                   .gpu_mem_util = 0.9,
                   .reserve_ratio = 1};
}
