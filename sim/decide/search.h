/* search — the parallel plans of a training job, ranked.
 *
 * Every TP x PP x DP x CP (x EP) x micro-batch x ZeRO stage x recompute x
 * schedule (x virtual stages) that uses exactly the cluster's GPUs and the
 * global batch is enumerated; plans the memory model rejects are counted
 * by reason; the rest get the closed-form estimate (train_estimate), and
 * the best `simulate` of them by estimate are simulated on the engine and
 * ranked by simulated step time. */
#ifndef LLMSIM_SEARCH_H
#define LLMSIM_SEARCH_H

#include "decide/exp.h"
#include "train/train.h"

/* Why a plan was dropped before estimating it. */
enum {
    SEARCH_INVALID,      /* the plan check refuses it (heads, layers, ...) */
    SEARCH_MODEL_STATES, /* weights + gradients + optimizer exceed memory */
    SEARCH_ACTIVATIONS,  /* the model states fit; activations push it over */
    SEARCH_ESTIMATE,     /* the estimate itself failed */
    SEARCH_REASONS
};
extern const char *const search_reason_names[SEARCH_REASONS];

typedef struct search_plan {
    plan_train plan;
    double estimate_s;
    train_result r; /* simulated (ranked plans only) */
} search_plan;

typedef struct search_result {
    long enumerated, fitted;
    long dropped[SEARCH_REASONS];
    search_plan *ranked; /* simulated, fastest first; owned */
    int nranked;
    /* of the plans memory refused that the estimate puts 3% or more ahead
     * of the winner, the one closest to fitting: what memory costs */
    plan_train fastest_dropped;
    double fastest_dropped_s, fastest_dropped_bytes;
    bool have_dropped;
} search_result;

/* Plans are evaluated, and the best `simulate` simulated, on `jobs` forked
 * workers (par.h; jobs <= 1: in this process); the result is the same
 * whatever `jobs` is.  `base` carries model, cluster, calibration; `tmpl` the fixed parts of the
 * plan (global_batch, seq_len, precision, optimizer, flash attention and
 * the rest).  TP stays inside a node (at most `gpus_per_node`). */
int search_train(const train_input *base, const plan_train *tmpl,
                 int simulate, int jobs, search_result *out, llm_err *e);
void search_free(search_result *r);

/* The search of a training experiment: its model and cluster loaded into
 * env (the caller frees it with exp_env_free, on success), the plan's
 * global batch, sequence, precision, optimizer and the rest kept, its
 * shape searched.  A plan that sets microbatches instead of a global
 * batch is refused (the batch would depend on the plan). */
int search_train_exp(const exp_train *x, const exp_loader *ld, int simulate,
                     int jobs, exp_env *env, search_result *out, llm_err *e);

/* "tp 8 x pp 4 x dp 2, mb 1, ZeRO-1, selective, interleaved (vpp 2)" */
void search_plan_name(const plan_train *p, char *buf, size_t n);

#endif
