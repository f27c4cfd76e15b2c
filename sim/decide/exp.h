/* exp — an experiment as a typed struct, and the run API every command
 * uses: `train`, `serve`, `sweep`, `search` and `compare` build an
 * exp_train or exp_serve (from settings.h's table: defaults, a file, --set,
 * flags) and call exp_train_run / exp_serve_run, then read the results as
 * structs.  No command assembles another's command line or reads its JSON.
 *
 * Files are the layer above's business (cfg): a run asks an exp_loader
 * for the model, the cluster and its calibration by name. */
#ifndef LLMSIM_EXP_H
#define LLMSIM_EXP_H

#include <stdbool.h>

#include "coll/coll.h"
#include "cost/cost.h"
#include "decide/band.h"
#include "decide/budget.h"
#include "decide/econ.h"
#include "decide/settings.h"
#include "hw/gpu.h"
#include "hw/topo.h"
#include "mem/mem.h"
#include "model/model.h"
#include "model/plan.h"
#include "model/stack.h"
#include "serve/serve.h"
#include "serve/wl.h"
#include "train/train.h"

/* What every kind of experiment starts with: the file it came from and
 * where each setting's value came from (so an error found later names the
 * file and line, an @include'd file's included). */
#define EXP_INC_FILES 8
typedef struct exp_head {
    char file[1024];                /* "" if none */
    char inc[EXP_INC_FILES][512];   /* @include'd files: exp_src.file 1.. */
    int ninc;
    exp_src src[SETTINGS_MAX];
} exp_head;

/* Overheads a run may state in place of the calibration data's:
 * negative = the data's figure (calib/, per GPU). */
typedef mem_overhead exp_overhead;

/* A training experiment: `llmsim train`. */
typedef struct exp_train {
    exp_head h;
    char description[512], model[256], cluster[256];
    char stack[256];  /* stacks/NAME.cfg or a path */
    char attention_kernel[16]; /* empty: the stack's */
    int nodes;        /* 0: as the cluster file says */
    int gpus;         /* the first gpus of the cluster; 0: all */
    topo_net net;     /* link bandwidths in place of the cluster's */
    exp_overhead overhead;
    plan_train plan;  /* dp 0: as many replicas as the GPUs hold */
    int microbatches; /* M > 0: global batch = micro-batch x dp x M */
    train_loader loader;
} exp_train;

/* A serving experiment: `llmsim serve`. */
typedef struct exp_serve {
    exp_head h;
    char description[512], model[256], cluster[256];
    int nodes, gpus;
    topo_net net;
    exp_overhead overhead;
    int tp, pp, replicas;
    int prefill_replicas, decode_replicas; /* both 0: colocated */
    int prefill_tp, prefill_pp, decode_tp, decode_pp; /* 0: tp / pp */
    serve_params p; /* weight_dt DT_COUNT: the model's 16-bit dtype */
    /* the workload: a trace, or a synthetic process */
    char trace[1024];
    double rate_scale;
    int requests;
    int arrival; /* wl_arrival_kind */
    double rate, cv;
    int burst;
    char prompt_len[1100], output_len[1100];
    long seed;
    int concurrency;     /* closed loop: clients; 0 = open loop */
    double think_s;      /* closed loop: a client's pause */
    int warmup;          /* the first requests sent, left out of the figures */
    bool allow_truncate; /* cut over-long requests (counted) */
    int max_model_len;   /* the context requests must fit; 0: max_seq */
    char engine[256];    /* stacks/NAME.cfg (kind "serving") or a path */
} exp_serve;

/* The memory command's inference plan: `llmsim memory`. */
typedef struct exp_infer {
    exp_head h;
    char model[256];
    exp_overhead overhead;
    plan_infer plan; /* weight_dtype DT_COUNT: the model's; context 0: its
                        max_seq */
} exp_infer;

#define EXP_COMPARE_MAX 8 /* clusters in one compare file */
#define EXP_COMPARE_SETS 16

/* One entry of a compare file's clusters list. */
typedef struct exp_compare_cluster {
    char name[64], cluster[256];
    int gpus, nodes;   /* 0: as the experiment file says */
    char sets[EXP_COMPARE_SETS][256];
    int sets_line[EXP_COMPARE_SETS];
    int nsets;
    int line;          /* where the entry is, for messages */
} exp_compare_cluster;

/* A compare file: `llmsim compare`. */
typedef struct exp_compare {
    exp_head h;
    char description[512], training[1024], serving[1024];
    exp_compare_cluster c[EXP_COMPARE_MAX];
    int n;
    econ_params econ;
    double train_tokens;
    bool search;
} exp_compare;

void exp_train_defaults(exp_train *x);
void exp_serve_defaults(exp_serve *x);
void exp_infer_defaults(exp_infer *x);
void exp_compare_defaults(exp_compare *x);

/* The table's defaults of the parts a library user or a test builds by
 * hand: a training plan, a training input pipeline, a serving engine's
 * parameters, an inference plan (its context and dtype from model m). */
plan_train exp_plan_train_defaults(void);
train_loader exp_loader_defaults(void);
serve_params exp_serve_params_defaults(void);
plan_infer exp_plan_infer_defaults(const model_spec *m);

/* An error about a setting, written naming its flag ("--tp 3 does not
 * divide ..."), is rewritten to name where the value came from: the
 * file's line and key ("x.cfg:4: parallel.tp: 3 does not divide ..."), or
 * "--set parallel.tp: ..." when a --set gave it.  Flags stay as they are.
 * h: the experiment's head. */
void exp_blame(exp_kind k, const exp_head *h, llm_err *e);

/* Settings given together that contradict each other
 * (settings_conflicts): -1 and a message naming where each was given. */
int exp_check_conflicts(exp_kind k, const exp_head *h, llm_err *e);

/* After x (a kind-k experiment, its head first) was read and changed:
 * of two contradicting settings, one given later (--set over the file, a
 * flag over --set, a sweep axis over all) overrides the other, which goes
 * back to its default ("--microbatches 8" over a file's global_batch);
 * given at one level, they are an error (exp_check_conflicts). */
int exp_settle(exp_kind k, void *x, llm_err *e);

/* ---- what a run needs from files ------------------------------------------ */

/* A cluster's size before it is built (for the run budget). */
typedef struct exp_topo_size {
    int nodes, gpus_per_node, ndev, nlink; /* ndev, nlink: per node */
    int nics;          /* per node */
    bool nvlink;       /* GPUs joined by NVLink (else PCIe) */
    bool nvls, sharp;  /* in-switch reduction in the node, in the fabric */
    coll_calib coll;   /* the collective tables no GPU selects (chunking,
                          protocols) */
} exp_topo_size;

/* The model, the cluster and their calibration, loaded. */
typedef struct exp_env {
    model_spec m;
    gpu_catalog cat;
    topo *t;
    net_routes *routes; /* t's routes, shared by every run on it */
    cost_calib cc;
    coll_calib kc;
    mem_overhead ov; /* the data's, with the run's overrides applied */
    double idle_w;   /* the cluster GPU's idle power */
    stack_spec stack; /* training: the framework's profile */
    eprof engine;     /* serving: the engine's profile */
    band_table bands; /* the error model (owned) */
} exp_env;

/* Implemented by the layer that reads files (cfg_loader in cfg.h). */
typedef struct exp_loader {
    void *ctx;
    int (*model)(void *ctx, const char *name, model_spec *m, llm_err *e);
    int (*topo_size)(void *ctx, const char *cluster, int nodes,
                     exp_topo_size *z, llm_err *e);
    /* the catalog, topology, calibration, overheads and idle power of a
     * cluster; env->m is already loaded */
    int (*cluster)(void *ctx, const char *cluster, int nodes,
                   const topo_net *bw, exp_env *env, llm_err *e);
    /* a training framework's profile by name or path */
    int (*stack)(void *ctx, const char *name, stack_spec *s, llm_err *e);
    /* a serving engine's profile by name or path */
    int (*engine)(void *ctx, const char *name, eprof *s, llm_err *e);
    /* a data path as given, else under the data directory */
    void (*path)(void *ctx, const char *in, char *out, size_t len);
    /* a node type's and a GPU's economics (the per-cluster fields of p)
     * and their sources */
    int (*node_econ)(void *ctx, const char *node, const char *gpu,
                     econ_params *p, econ_sources *s, llm_err *e);
} exp_loader;

/* The run's stated overheads in place of ov's (negative fields: ov's). */
void exp_overhead_apply(mem_overhead *ov, const exp_overhead *x);

int exp_env_load(const exp_loader *ld, const char *model, const char *cluster,
                 int nodes, const topo_net *bw, const exp_overhead *ov,
                 exp_env *env, llm_err *e);
void exp_env_free(exp_env *env);

/* ---- running -------------------------------------------------------------- */

/* Returned by the run functions when the plan does not fit in memory (a
 * serving deployment whose weights leave no KV cache). */
#define EXP_NO_FIT (-2)

typedef struct exp_run_opts {
    bool full;   /* training: every data-parallel group on the network */
    bool force;  /* run past the budget (budget.h) */
    bool record; /* training: keep every op and transfer (trace, timeline) */
    bool per_request; /* serving: keep each request's result (CSV) */
    const serve_events *events; /* serving: streamed to (trace), or NULL */
} exp_run_opts;

typedef struct exp_train_out {
    exp_env env;       /* what it ran on (owned) */
    plan_train plan;   /* as it ran: dp and the global batch filled in */
    train_result r;
    train_record rec;  /* opts.record */
    double power_w_per_gpu; /* idle + dynamic range x utilization */
    band_est band;       /* the step time's error band (a time: x ratio) */
    budget_est budget;   /* what the run was estimated to cost (budget.h) */
} exp_train_out;

int exp_train_run(const exp_train *x, const exp_run_opts *o,
                  const exp_loader *ld, exp_train_out *out, llm_err *e);
void exp_train_out_free(exp_train_out *out);

/* Whether the step's memory peak fits in one GPU's memory (true when the
 * cluster names no GPU).  A plan that does not is not a result: `train`
 * exits with the memory-check status unless told to accept it, compare
 * and bench say so instead of a figure. */
bool exp_train_fits(const exp_train_out *o);

/* A plan's dp filled from the cluster (dp 0) and its global batch from
 * microbatches (M > 0), on a cluster of `have` GPUs. */
int exp_train_fill(plan_train *p, const char *cluster, int have,
                   int microbatches, llm_err *e);

typedef struct exp_serve_out {
    exp_env env;
    serve_input in;    /* pools, params, requests (in.req owned) */
    serve_result r;
    serve_request_result *per_request; /* opts.per_request: [in.nreq] */
    wl_summary ws;     /* of the requests */
    char source[1100]; /* "trace.csv (rate scaled)", "poisson arrivals" */
    int r_truncated;   /* requests cut to the context (--allow-truncate) */
    band_est band[BAND_SERVE_KINDS]; /* each kind of figure's error band */
} exp_serve_out;

int exp_serve_run(const exp_serve *x, const exp_run_opts *o,
                  const exp_loader *ld, exp_serve_out *out, llm_err *e);
void exp_serve_out_free(exp_serve_out *out);

#endif
