/* cfg — the edge where files become validated C structs.  Nothing below
 * cmd sees libconfig or JSON.  Every error reads
 *   file:line: key: what is wrong (expected ...)
 * and an unknown key is an error with a "did you mean" suggestion. */
#ifndef LLMSIM_CFG_H
#define LLMSIM_CFG_H

#include "base/err.h"
#include "hw/gpu.h"
#include "model/model.h"
#include "model/stack.h"
#include "coll/coll.h"
#include "cost/cost.h"
#include "decide/econ.h"
#include "mem/mem.h"
#include "hw/topo.h"
#include "serve/serve.h"
#include "train/train.h"
#include "decide/exp.h"

/* Loads topologies/gpus.cfg (or any file in that format); each GPU's PCIe
 * rate and encoding come from <datadir>/topologies/pcie.tsv. */
int cfg_load_gpus(const char *path, const char *datadir, gpu_catalog *out,
                  llm_err *e);

/* Loads a model: a llmsim .cfg or a Hugging Face config.json (by the
 * extension .json). */
int cfg_load_model(const char *path, model_spec *out, llm_err *e);

/* stacks/NAME.cfg: a training framework's profile (model/stack.h);
 * _named takes a name from <datadir>/stacks/ or a path. */
int cfg_load_stack(const char *path, stack_spec *out, llm_err *e);
int cfg_load_stack_named(const char *arg, stack_spec *out, llm_err *e);
/* stacks/NAME.cfg with kind = "serving": a serving engine's profile
 * (serve/eprof.h); _named as cfg_load_stack_named. */
int cfg_load_engine(const char *path, eprof *out, llm_err *e);
int cfg_load_engine_named(const char *arg, eprof *out, llm_err *e);

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
    char cpu[24]; /* NCCL's multi-node LL rows: cpu-amd or cpu-intel */
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
/* The ratios and tile sizes of calib/kernels.tsv for GPU `gpu` (its rows,
 * else the '*' rows) into c; cfg_load_cost_calib reads them too. */
int cfg_load_kernel_ratios(const char *datadir, const char *gpu,
                           cost_calib *c, llm_err *e);
/* The tables of one directory, measured on `src` (all: also attention.tsv
 * and launch.tsv). */
int cfg_load_cost_dir(const char *dir, const gpu_spec *src, bool all,
                      cost_calib *c, llm_err *e);

/* Memory besides tensors on GPU g from <datadir>/calib/overhead.tsv: its
 * rows, else the '*' rows (g NULL: the '*' rows). */
int cfg_load_overhead(const char *datadir, const gpu_spec *g, mem_overhead *o,
                      llm_err *e);

/* The economics defaults of a whole comparison from
 * <datadir>/calib/economics.tsv. */
int cfg_load_econ(const char *datadir, econ_params *p, llm_err *e);

/* A cluster's: its node type's server, network and power figures
 * (calib/node-economics.tsv, the node's rows else '*') and its GPU's
 * rental price (calib/cloud-prices.tsv), with their sources. */
int cfg_load_node_econ(const char *datadir, const char *node, const char *gpu,
                       econ_params *p, econ_sources *s, llm_err *e);

/* A GPU `llmsim calibrate --fit` writes tables for (calib/fit.tsv): fitted
 * to the kernel traces in calib/vidur/<traces>/, or derived from a traced
 * GPU; and its FlashAttention forward fraction of peak, with the source. */
typedef struct cfg_fit_gpu {
    char gpu[48], traces[64], derived_from[48]; /* "" where the row has - */
    /* GEMM times measured on this GPU (gemm_bench's columns), files under
     * the data directory separated by commas; "" none.  Only a derived GPU
     * has them: its GEMM grids are then fitted to them, not to the base's
     * traces, and its bandwidth curves stay derived. */
    char gemm_measured[256];
    double flash_fwd;
    char flash_src[512];
} cfg_fit_gpu;

/* The rows of <datadir>/calib/fit.tsv in file order (*out malloc'd, the
 * caller frees). */
int cfg_load_fit_gpus(const char *datadir, cfg_fit_gpu **out, int *n,
                      llm_err *e);

/* Idle power of GPU g from <datadir>/calib/power.tsv (its row, or the
 * '*' row's fraction of its TDP). */
int cfg_load_idle_w(const char *datadir, const gpu_spec *g, double *idle_w,
                    llm_err *e);

/* The error model, <datadir>/calib/error-bands.tsv (decide/band.h;
 * cfg_band.c): every row checked, out owned by the caller. */
int cfg_load_bands(const char *datadir, band_table *out, llm_err *e);

/* ---- experiments (cfg_exp.c) ---------------------------------------------- */

/* Reads an experiment file of kind k into x (over its current values, so
 * defaults first), recording each value's line in src.  Every key must be
 * one of the kind's settings (decide/settings.c). */
int cfg_exp_read(const char *path, exp_kind k, void *x, llm_err *e);
/* A file with a serving group is a serving experiment, else training. */
int cfg_exp_kind(const char *path, exp_kind *k, llm_err *e);

/* sweep = { vary = ( "KEY=VALUES", ... ); out = "FILE.csv"; } */
typedef struct cfg_sweep_group {
    bool serve;     /* the file has a serving group: a serving experiment */
    char **vary;    /* sweep.vary as written (owned), not yet parsed */
    int *vary_line; /* where each one is in the file (owned) */
    int nvary;
    bool has_out;   /* sweep.out is a string ... */
    char out[1024]; /* ... this one (cut at 1023 bytes) */
} cfg_sweep_group;

/* Reads the sweep group of an experiment file (absent: no vary, no out).
 * Errors read "file:line: key: ..."; on error *g owns nothing. */
int cfg_sweep_read_group(const char *path, cfg_sweep_group *g, llm_err *e);
void cfg_sweep_group_free(cfg_sweep_group *g);

/* Reads and checks a compare file into *f (its defaults first).  *f holds
 * no heap memory. */
int cfg_compare_load(const char *path, exp_compare *f, llm_err *e);
/* The economics f leaves at -1 from calib/economics.tsv (after the file,
 * --set and flags). */
int cfg_compare_econ(exp_compare *f, llm_err *e);

/* ---- data by name (cfg_loader.c) ------------------------------------------- */

/* Directory holding topologies/ and models/: $LLMSIM_DATA, else the
 * executable's directory (a source tree), else <prefix>/share/llmsim. */
const char *cfg_datadir(void);
/* A relative data path from the working directory, else the data
 * directory. */
void cfg_data_path(const char *in, char *out, size_t len);

int cfg_load_catalog(gpu_catalog *c, llm_err *e);
/* NAME -> <datadir>/models/NAME.cfg; a path (with '/' or ending in .cfg or
 * .json) is loaded as is. */
int cfg_load_model_named(const char *arg, model_spec *m, llm_err *e);
/* NAME from the catalog, or a path to a file in gpus.cfg format whose
 * first entry is used (it is appended to the catalog). */
const gpu_spec *cfg_find_gpu(gpu_catalog *c, const char *arg, llm_err *e);
/* NAME -> <datadir>/topologies/NAME.cfg, or a path.  nodes > 0 overrides
 * the node count.  p2p >= 0 overrides GPU peer-to-peer (0 off, 1 on);
 * net (may be NULL) replaces link bandwidths. */
topo *cfg_load_topo_named(const char *arg, int nodes, int p2p,
                          gpu_catalog *cat, llm_err *e);
topo *cfg_load_topo_net(const char *arg, int nodes, int p2p,
                        const topo_net *net, gpu_catalog *cat, llm_err *e);
/* A cluster's size before it is built (for the run budget). */
int cfg_topo_size(const char *arg, int nodes, exp_topo_size *out,
                  llm_err *e);

/* The experiment API's loader (decide/exp.h) over these functions. */
const exp_loader *cfg_loader(void);

#endif
