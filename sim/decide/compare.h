/* compare — one workload (training, serving or both) on two or more
 * clusters, each with its best plan (search) or the experiment's own, what
 * each costs (econ.h), and the verdict with its biggest reason from the
 * GPUs' datasheet ratios. */
#ifndef LLMSIM_COMPARE_H
#define LLMSIM_COMPARE_H

#include "decide/exp.h"

/* What one cluster did. */
typedef struct compare_outcome {
    gpu_spec gpu;          /* the cluster's GPU (has_gpu) */
    bool has_gpu;
    int gpus;
    double purchase_usd;
    bool trained, served;
    exp_train_out train;   /* trained: the run (owned) */
    serve_result serve;    /* served: the run at the deployment's goodput */
    int serve_gpus;
    char train_plan[200], serve_plan[96];
    band_est serve_band;   /* served: the throughput's error band */
    char node[64];         /* the cluster's node type */
    econ_params econ;      /* the comparison's, with this cluster's node
                            * and GPU figures */
    econ_sources econ_src; /* where those came from */
    econ_result te, se;    /* economics of training and serving */
    char error[2][600];    /* why training / serving has no result */
} compare_outcome;

/* The 80% range of a cluster's training (train) or serving tokens per
 * dollar, from its throughput's error band; the point when it has none. */
void compare_tpd_range(const compare_outcome *o, bool train, double *lo,
                       double *hi);

typedef struct compare_result {
    compare_outcome o[EXP_COMPARE_MAX];
    int n;
    char verdict[1200];
} compare_result;

/* Runs f's training experiment `train` and/or serving experiment `serve`
 * (NULL when the file names none; loaded, at their defaults and file
 * values) on every cluster of f, each with the cluster's settings applied
 * on top.  `search`: each cluster's best plan and deployment.  A mistake
 * in an experiment with a cluster's settings is an error before anything
 * runs; a cluster that cannot run the workload is a row with its reason. */
int compare_run(const exp_compare *f, const exp_train *train,
                const exp_serve *serve, bool search, const exp_loader *ld,
                compare_result *r, llm_err *e);
void compare_free(compare_result *r);

#endif
