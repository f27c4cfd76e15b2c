/* eprof — the defaults of a serving-engine profile. */
#include "serve/eprof.h"

#include "serve/serve.h"

const char *const serve_admit_names[ADMIT_COUNT] = {"chunk", "whole",
                                                    "no-evict", "reserve"};

eprof eprof_defaults(const serve_params *p)
{
    return (eprof){.max_num_seqs = p->max_num_seqs,
                   .max_batched_tokens = p->max_batched_tokens,
                   .chunk = p->chunk,
                   .block_size = p->block_size,
                   .scheduler_steps = p->scheduler_steps,
                   .policy = p->policy,
                   .preempt = p->preempt,
                   .admit = p->admit,
                   .gpu_mem_util = p->gpu_mem_util,
                   .iteration_overhead_s = p->iteration_overhead_s,
                   .reserve_ratio = 1};
}
