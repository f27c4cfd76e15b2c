/* budget — what a run would cost the simulator, estimated before it starts.
 *
 * A plan of 10^6 GPUs and 10^4 microbatches is a typo more often than an
 * experiment, and it would run for hours before saying so.  Commands
 * estimate the work up front from closed forms (events of the step's
 * schedule, events of each collective's flow-level simulation as
 * coll_sim_estimate counts them, and the flows each of them updates;
 * memory of the topology and of the request list) and refuse a run whose estimate is over the limit unless the user
 * passes --force.  The constants are measured on the reference machine
 * (see budget.c); the estimate is for refusing, not for prediction. */
#ifndef LLMSIM_BUDGET_H
#define LLMSIM_BUDGET_H

#include <stdbool.h>

#include "base/err.h"
#include "coll/coll.h"
#include "model/plan.h"
#include "model/model.h"

typedef struct budget_est {
    double gpus, requests;
    double step_events; /* the engine's schedule of one step */
    double net_events;  /* flow-level collective simulations */
    double max_flows;   /* the most flows one network event updates */
    double bytes;       /* the simulator's own memory */
    double seconds;     /* wall time on the reference machine */
} budget_est;

/* Refused above these (either one). */
#define BUDGET_MAX_SECONDS 120.0
#define BUDGET_MAX_BYTES (8.0 * (1ull << 30))

/* A topology of `nodes` nodes of ndev devices and nlink links each. */
void budget_topology(double nodes, int ndev, int nlink, budget_est *b);

/* What the budget needs of a cluster before it is built. */
typedef struct budget_cluster {
    double nodes;
    int gpus_per_node, nics; /* per node */
    bool nvlink, nvls, sharp; /* as coll_shape's */
    double links;             /* of the whole topology */
    const coll_calib *coll;   /* chunking and protocols */
} budget_cluster;

/* Adds `count` simulations of collectives that each cost k
 * (coll_sim_estimate) on a topology of `links` links. */
void budget_coll(budget_est *b, coll_sim_cost k, double count, double links);

/* Adds one training step of plan p of model m (dp filled in) on cluster
 * cl to b: the schedule's events, and the collectives train simulates
 * (each distinct one once with every candidate of NCCL's tuner, and once
 * more as the step's link load runs it); `full`: every group of a kind on
 * the network at once, every step simulated. */
void budget_train(const model_spec *m, const plan_train *p, bool full,
                  const budget_cluster *cl, budget_est *b);

/* Adds a serving run of `requests` requests (its events follow the
 * engine's iterations, which batch many requests' tokens). */
void budget_serve(double requests, budget_est *b);

/* 0 if b is within the limits or force; else -1 with "what: refusing to
 * simulate ...: about N events ..., estimated T and M; pass --force". */
int budget_check(const budget_est *b, const char *what, bool force,
                 llm_err *e);

#endif
