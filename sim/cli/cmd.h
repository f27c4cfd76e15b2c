/* cmd — one file per command; this header is the command table and the
 * helpers every command shares (finding data files, loading a model or a
 * GPU by name or path, printing JSON). */
#ifndef LLMSIM_CMD_H
#define LLMSIM_CMD_H

#include <jansson.h>

#include "base/err.h"
#include "cfg/cfg.h"
#include "coll/coll.h"
#include "cost/cost.h"
#include "hw/gpu.h"
#include "mem/mem.h"
#include "model/model.h"
#include "hw/topo.h"

#define LLMSIM_VERSION "0.1.0"

/* Exit statuses: 0 success, 1 bad input, 2 "does not fit". */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_NO_FIT = 2 };

typedef struct cmd_def {
    const char *name;
    const char *summary;
    const char *usage; /* full help text */
    int (*run)(int argc, char **argv, llm_err *e);
} cmd_def;

extern const cmd_def cmd_gpus_def, cmd_model_def, cmd_memory_def,
    cmd_topo_def, cmd_collective_def, cmd_kernel_def, cmd_calibrate_def,
    cmd_train_def, cmd_serve_def, cmd_sweep_def, cmd_search_def, cmd_compare_def;

/* `train` and `serve` run as from their command lines (argv[0] is the
 * command's name), handing back the object --json would print (stolen by
 * the caller) instead of printing: what sweep, compare and search use.
 * Same exit statuses as the commands. */
int cmd_train_json(int argc, char **argv, json_t **out, llm_err *e);
int cmd_serve_json(int argc, char **argv, json_t **out, llm_err *e);

/* Directory holding topologies/ and models/: $LLMSIM_DATA, else the
 * executable's directory (a source tree), else <prefix>/share/llmsim. */
const char *cmd_datadir(void);

int cmd_load_catalog(gpu_catalog *c, llm_err *e);
/* NAME -> <datadir>/models/NAME.cfg; a path (with '/' or ending in .cfg or
 * .json) is loaded as is. */
int cmd_load_model(const char *arg, model_spec *m, llm_err *e);
/* NAME from the catalog, or a path to a file in gpus.cfg format whose
 * first entry is used (it is appended to the catalog). */
const gpu_spec *cmd_find_gpu(gpu_catalog *c, const char *arg, llm_err *e);

/* NAME -> <datadir>/topologies/NAME.cfg, or a path.  nodes > 0 overrides
 * the node count (a node file then becomes that many nodes on its default
 * fabric).  p2p >= 0 overrides GPU peer-to-peer (0 off, 1 on).  GPU
 * models are looked up in the catalog. */
topo *cmd_load_topo(const char *arg, int nodes, int p2p, gpu_catalog *cat,
                    llm_err *e);
/* The same with an experiment's link bandwidths in place (net may be
 * NULL). */
topo *cmd_load_topo_net(const char *arg, int nodes, int p2p,
                        const topo_net *net, gpu_catalog *cat, llm_err *e);

/* A --cluster argument's size before it is built (for budget.h). */
typedef struct cmd_topo_size_t {
    int nodes, gpus_per_node, ndev, nlink; /* ndev, nlink: per node */
} cmd_topo_size_t;
int cmd_topo_size(const char *arg, int nodes, cmd_topo_size_t *out,
                  llm_err *e);

/* An error that names an option ("--tp 3 does not divide ...", "--model:
 * unknown model ...") whose value came from the experiment file, not the
 * command line, is rewritten to name the file, line and key instead
 * ("x.cfg:4: parallel.tp: 3 does not divide ..."); a value from --set
 * KEY=... names that.  `group` holds the plan's keys (parallel, serving);
 * model, cluster, nodes and gpus are top-level. */
void cmd_blame_file(const char *file, const char *group, int argc,
                    char **argv, llm_err *e);

/* Dumps `j` (stolen) to stdout, indented, keys in insertion order. */
void cmd_print_json(json_t *j);
json_t *cmd_json_bytes(double bytes);
/* {src, dst, kind, bytes, utilization} of one link of t. */
json_t *cmd_json_link(const topo *t, int link, double bytes,
                      double utilization);

/* What simulating a training plan needs: the model, the cluster with
 * its link overrides, the calibration tables. */
typedef struct cmd_env {
    model_spec m;
    gpu_catalog cat;
    topo *t;
    cost_calib cc;
    coll_calib kc;
    mem_overhead ov;
    double idle_w; /* the cluster GPU's idle power (calib/power.tsv) */
} cmd_env;
int cmd_env_load(cmd_env *v, const char *model, const char *cluster,
                 int nodes, const topo_net *bw, llm_err *e);
void cmd_env_free(cmd_env *v);

/* The training plan search of `llmsim search` on x's model and cluster,
 * which it loads into v (the caller frees v and s). */
struct search_result;
int cmd_search_train(const cfg_experiment *x, int simulate,
                     struct search_result *s, cmd_env *v, llm_err *e);
/* The serving search: the best deployment's `serve --json` object (the
 * caller owns it) and its name ("2 x TP4"). */
int cmd_search_serve(const char *file, const char *const *sets, int nsets,
                     int gpus, json_t **best, char *name, size_t len,
                     llm_err *e);

/* {tp, pp, dp, cp, ep, sp, micro_batch, ..., precision} of a plan. */
json_t *cmd_json_plan(const plan_train *p);

/* Shared getopt error text: "command: unknown option --x (did you mean
 * --y?)". */
int cmd_bad_option(const char *cmd, const char *arg, const void *longopts,
                   llm_err *e);

/* getopt_long over argv (long options only), calling one(ctx, ch, value)
 * for each; a missing value or an unknown option is the error.  Leaves
 * optind at the first operand. */
int cmd_getopt(const char *cmd, int argc, char **argv, const void *longopts,
               int (*one)(void *ctx, int ch, const char *v, llm_err *e),
               void *ctx, llm_err *e);

/* `v` among `names`: its index in *out, or "OPT: unknown value "v" (did
 * you mean ...?) (expected a|b|c)". */
int cmd_pick(const char *opt, const char *v, const char *const *names, int n,
             int *out, llm_err *e);
/* An integer option in [lo, hi] into an int. */
int cmd_int_opt(const char *opt, const char *v, long lo, long hi, int *out,
                llm_err *e);

#endif
