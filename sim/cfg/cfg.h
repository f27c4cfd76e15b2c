/* cfg — the edge where files become validated C structs.  Nothing below
 * cmd sees libconfig or JSON.  Every error reads
 *   file:line: key: what is wrong (expected ...)
 * and an unknown key is an error with a "did you mean" suggestion. */
#ifndef LLMSIM_CFG_H
#define LLMSIM_CFG_H

#include "base/err.h"
#include "hw/gpu.h"
#include "model/model.h"
#include "coll/coll.h"
#include "cost/cost.h"
#include "decide/econ.h"
#include "mem/mem.h"
#include "hw/topo.h"
#include "serve/serve.h"
#include "train/train.h"

/* Loads topologies/gpus.cfg (or any file in that format); each GPU's PCIe
 * rate and encoding come from <datadir>/topologies/pcie.tsv. */
int cfg_load_gpus(const char *path, const char *datadir, gpu_catalog *out,
                  llm_err *e);

/* Loads a model: a llmsim .cfg or a Hugging Face config.json (by the
 * extension .json). */
int cfg_load_model(const char *path, model_spec *out, llm_err *e);

/* Hugging Face config.json importer (cfg_hf.c).  Extra keys are ignored;
 * a missing required key is an error. */
int cfg_load_hf_json(const char *path, model_spec *out, llm_err *e);

/* A topology file: a node type (nodes = 1, its default fabric) or a cluster
 * file naming a node type in <datadir>/topologies/, a node count and a
 * fabric. */
int cfg_load_topology(const char *path, const char *datadir,
                      topo_nodespec *spec, int *nodes,
                      topo_fabricspec *fabric, llm_err *e);

/* Which rows of the collective calibration a topology selects: NCCL's
 * architecture (the arch of nccl-protocol.tsv's per-architecture rows) and
 * each link kind's arch in links.tsv ("hopper", "gen5", "ndr", ...). */
typedef struct cfg_coll_keys {
    char nccl[24];
    char link[LINK_KIND_COUNT][24];
} cfg_coll_keys;

/* The keys from <datadir>/calib/nccl-arch.tsv (by the GPU's compute
 * capability), the PCIe generation and <datadir>/calib/nics.tsv (by the
 * NIC's line rate). */
int cfg_coll_keys_of(const char *datadir, const topo *t, cfg_coll_keys *keys,
                     llm_err *e);

/* Collective calibration for a topology: <datadir>/calib/nccl-protocol.tsv
 * and <datadir>/calib/links.tsv, at the rows cfg_coll_keys_of selects (or
 * at `keys`, which a run may set). */
int cfg_load_coll_calib(const char *datadir, const topo *t, coll_calib *k,
                        llm_err *e);
int cfg_load_coll_calib_keys(const char *datadir, const cfg_coll_keys *keys,
                             coll_calib *k, llm_err *e);

/* Compute-cost calibration for GPU g: its own calib/<gpu>/ tables, or the
 * closest calibrated GPU's (named in derived_from). */
int cfg_load_cost_calib(const char *datadir, const gpu_catalog *cat,
                        const gpu_spec *g, cost_calib *c, llm_err *e);
/* The tables of one directory, measured on `src` (all: also attention.tsv
 * and launch.tsv). */
int cfg_load_cost_dir(const char *dir, const gpu_spec *src, bool all,
                      cost_calib *c, llm_err *e);

/* Memory besides tensors on GPU g from <datadir>/calib/overhead.tsv: its
 * rows, else the '*' rows (g NULL: the '*' rows). */
int cfg_load_overhead(const char *datadir, const gpu_spec *g, mem_overhead *o,
                      llm_err *e);

/* The economics defaults from <datadir>/calib/economics.tsv. */
int cfg_load_econ(const char *datadir, econ_params *p, llm_err *e);

/* A GPU `llmsim calibrate --fit` writes tables for (calib/fit.tsv): fitted
 * to the kernel traces in calib/vidur/<traces>/, or derived from a traced
 * GPU; and its FlashAttention forward fraction of peak, with the source. */
typedef struct cfg_fit_gpu {
    char gpu[48], traces[64], derived_from[48]; /* "" where the row has - */
    double flash_fwd;
    char flash_src[512];
} cfg_fit_gpu;

/* The rows of <datadir>/calib/fit.tsv in file order (*out malloc'd, the
 * caller frees). */
int cfg_load_fit_gpus(const char *datadir, cfg_fit_gpu **out, int *n,
                      llm_err *e);

/* An experiment file (in configs/): what `llmsim train` simulates. */
typedef struct cfg_experiment {
    char model[256], cluster[256];
    int nodes; /* 0 = as the cluster file says */
    int gpus;  /* the first gpus of the cluster (4 of a DGX H100); 0 = all */
    plan_train plan;
    train_loader loader; /* input = { workers; sample_ms; prefetch;
                            bytes_per_token; } */
    topo_net net;        /* net = { nvlink_GBps; pcie_GBps; ib_gbps; } */
    /* parallel.dp = 0: as many replicas as the cluster holds;
     * parallel.microbatches = M: global_batch = micro_batch x dp x M (weak
     * scaling in a sweep over nodes); 0 = global_batch as given */
    int microbatches;
} cfg_experiment;

/* Fills x over its current values; `sets` are "key.path=value" overrides
 * applied to the file before it is read. */
int cfg_load_experiment(const char *path, const char *const *sets, int nsets,
                        cfg_experiment *x, llm_err *e);

/* A serving experiment file (configs/serve-*.cfg): what `llmsim serve`
 * simulates.  Strings stay strings here (dtype, policy, lengths); the
 * command resolves them, so options and files share one path. */
typedef struct cfg_serving {
    char model[256], cluster[256];
    int nodes, gpus;
    int tp, pp, replicas;
    int prefill_replicas, decode_replicas; /* both 0: colocated */
    int prefill_tp, prefill_pp, decode_tp, decode_pp; /* 0 = tp / pp */
    serve_params p;
    char dtype[16], kv_dtype[16];
    /* workload: a trace, or a synthetic process */
    char trace[1024];
    double rate_scale;
    int requests;
    char arrival[16];
    double rate, cv;
    int burst;
    char prompt_len[1100], output_len[1100];
    long seed;
    topo_net net;
} cfg_serving;

void cfg_serving_defaults(cfg_serving *x);
/* Idle power of GPU g from <datadir>/calib/power.tsv (its row, or the
 * '*' row's fraction of its TDP). */
int cfg_load_idle_w(const char *datadir, const gpu_spec *g, double *idle_w,
                    llm_err *e);
int cfg_load_serving(const char *path, const char *const *sets, int nsets,
                     cfg_serving *x, llm_err *e);

/* The line of `key` ("parallel.tp") in the libconfig file at path; 0 when
 * the file does not hold it (or does not parse). */
int cfg_key_line(const char *path, const char *key);

#endif
