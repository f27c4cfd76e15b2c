/* deploy — the best serving deployment of an experiment on a number of
 * GPUs: every TP x PP x replicas that fits them, and every split into
 * disaggregated prefill and decode pools, each ranked by goodput as
 * DistServe defines it (Zhong et al., OSDI 2024): the highest load (the
 * trace's rate scaled, or the arrival rate) at which 90% of requests meet
 * both SLOs, found by doubling or halving the experiment's load, then
 * bisecting. */
#ifndef LLMSIM_DEPLOY_H
#define LLMSIM_DEPLOY_H

#include "decide/exp.h"

typedef struct deploy {
    int tp, pp, replicas;   /* colocated */
    int ptp, pr, dtp, dr;   /* disaggregated when pr > 0 */
    bool ok;                /* met the SLOs at some load: r holds that run */
    serve_result r;
    int gpus;               /* GPUs its pools use */
    double load_scale;      /* that load over the experiment's */
    char error[256];
} deploy;

typedef struct deploy_result {
    deploy *d;   /* best first (owned) */
    int n, ok;   /* candidates, and those that met the SLOs */
    int gpus;    /* GPUs searched over */
} deploy_result;

/* Every deployment of x on `gpus` GPUs (0: x's, else the cluster's), on
 * `jobs` forked workers; env gets the model and cluster (the caller frees
 * it on success; out too, with deploy_free). */
int deploy_search(const exp_serve *x, const exp_loader *ld, int gpus,
                  int jobs, exp_env *env, deploy_result *out, llm_err *e);
void deploy_free(deploy_result *r);

/* "2 x TP4", "prefill 1 x TP4 + decode 1 x TP4" */
void deploy_name(const deploy *d, char *buf, size_t n);

/* x with deployment d on `gpus` GPUs at `scale` x its load. */
void deploy_apply(const exp_serve *x, const deploy *d, int gpus, double scale,
                  exp_serve *out);

#endif
