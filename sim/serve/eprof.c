/* eprof — the defaults of a serving-engine profile. */
#include "serve/eprof.h"

#include "serve/serve.h"

#include <string.h>

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

bool eprof_is_large(const eprof *e, const char *name, double memory_bytes)
{
    const eprof_large *l = &e->large;
    return l->min_memory_bytes > 0 && memory_bytes >= l->min_memory_bytes &&
           !(l->except_name[0] && strstr(name, l->except_name));
}
