/* sched — pipeline schedules in Megatron-LM's exact microbatch order
 * (megatron/core/pipeline_parallel/schedules.py): GPipe (all forwards,
 * then all backwards), 1F1B (p - s - 1 warm-up forwards on stage s, then
 * one forward one backward, then the cool-down backwards) and interleaved
 * 1F1B with v model chunks per stage ((p - s - 1)·2 + (v - 1)·p warm-up
 * forwards). */
#ifndef LLMSIM_SCHED_H
#define LLMSIM_SCHED_H

#include <stdbool.h>

#include "model/plan.h"

typedef struct sched_item {
    bool bwd;
    int mb;    /* microbatch */
    int chunk; /* model chunk (virtual stage = chunk·p + stage) */
} sched_item;

/* The order of stage s's 2·m·v items; returns the count, or -1 when the
 * schedule does not apply (interleaved needs m to be a multiple of p). */
int sched_order(plan_schedule kind, int p, int s, int m, int v,
                sched_item *out);

#endif
