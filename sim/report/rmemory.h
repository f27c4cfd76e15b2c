/* rmemory — `llmsim memory`: the per-GPU breakdown with how each line is
 * computed, a verdict and the remedies for each GPU, the cheapest GPU sets
 * (--recommend), and their JSON.  The numbers all come from mem; this
 * module only lays them out. */
#ifndef LLMSIM_RMEMORY_H
#define LLMSIM_RMEMORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "mem/mem.h"

/* What was asked: a model and one plan (training or inference) with its
 * overheads. */
typedef struct rmemory_case {
    const model_spec *m;
    bool train; /* t is the plan; else i */
    const plan_train *t;
    const plan_infer *i;
    const mem_overhead *o;
} rmemory_case;

/* One GPU's answer to the breakdown: the remedies when it does not fit
 * (nrm == 0 when it fits, or when none was found). */
typedef struct rmemory_verdict {
    const gpu_spec *g;
    mem_remedy rm[MEM_MAX_REMEDIES];
    int nrm;
} rmemory_verdict;

/* "note: G has WHY: D is emulated by fp16 kernels (same memory)": a
 * precision g lacks, run in fp16 at the same footprint. */
void rmemory_emulated_text(FILE *fp, const gpu_spec *g, dtype d,
                           const char *why);
/* The breakdown of r, then each GPU's verdict (and remedies). */
void rmemory_text(FILE *fp, const rmemory_case *c, const mem_result *r,
                  const rmemory_verdict *v, int n);
/* The breakdown with each GPU's verdict: one object for one GPU, an
 * array of them for several. */
json_t *rmemory_json(const rmemory_case *c, const mem_result *r,
                     const rmemory_verdict *v, int n);

/* --recommend: ch[0..n) in the order given (the caller ranks them);
 * limit_gpus is how far the search went. */
void rmemory_recommend_text(FILE *fp, const rmemory_case *c,
                            const mem_choice *ch, int n, int limit_gpus);
json_t *rmemory_recommend_json(const rmemory_case *c, const mem_choice *ch,
                               int n);
/* The blank line between the per-GPU answer and the recommendation when
 * one run prints both (two JSON documents with --json). */
void rmemory_section_break(FILE *fp);

#endif
