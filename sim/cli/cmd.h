/* cmd — one file per command; this header is the command table and the
 * helpers every command shares: option parsing (getopt_long, and the
 * settings table's flags), picking among names, printing JSON. */
#ifndef LLMSIM_CMD_H
#define LLMSIM_CMD_H

#include <getopt.h>
#include <jansson.h>

#include "base/err.h"
#include "cfg/cfg.h"
#include "decide/exp.h"
#include "decide/settings.h"

#define LLMSIM_VERSION "0.1.0"

/* Exit statuses: 0 success, 1 bad input, 2 "does not fit". */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_NO_FIT = 2 };

typedef struct cmd_def {
    const char *name;
    const char *summary;
    const char *usage; /* the help text before the settings */
    int (*run)(int argc, char **argv, llm_err *e);
    unsigned settings; /* 1 << exp_kind: whose settings --help lists */
    /* the ones it takes of them (NULL: all) */
    bool (*takes)(const setting *s, exp_kind k);
} cmd_def;

extern const cmd_def cmd_gpus_def, cmd_model_def, cmd_memory_def,
    cmd_topo_def, cmd_collective_def, cmd_kernel_def, cmd_calibrate_def,
    cmd_train_def, cmd_serve_def, cmd_sweep_def, cmd_search_def, cmd_compare_def;

/* Every command, in the order `llmsim --help` lists them; the one named
 * `name`, or NULL. */
extern const cmd_def *const cmd_list[];
extern const int cmd_count;
const cmd_def *cmd_find(const char *name);

/* Set (by the command-line fuzz target): each command stops once its
 * options are parsed and its input files read and checked, before it
 * builds a cluster, simulates or writes anything. */
extern bool cmd_inputs_only;

/* `llmsim help CMD`: the usage text, then the settings table's lines for
 * the command's kinds of experiment. */
void cmd_help(const cmd_def *d, FILE *fp);

/* Dumps `j` (stolen) to stdout, indented, keys in insertion order. */
void cmd_print_json(json_t *j);

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
/* An integer option within the bounds of setting `flag` of kind k (so a
 * command that takes a setting's value outside an experiment writes its
 * bounds nowhere). */
int cmd_setting_int(exp_kind k, const char *flag, const char *v, int *out,
                    llm_err *e);

/* ---- experiments from the command line (cmd_opts.c) ------------------------ */

/* Ids of a command's own options stay below this; settings take the
 * ids above it. */
#define CMD_OPT_SETTING 10000
#define CMD_MAX_FLAGS 256

/* An experiment command line: its file operand, its --set assignments and
 * its setting flags, in order; applied after the file is read. */
typedef struct cmd_args {
    const char *file;
    const char *sets[64];
    int nsets;
    const setting *flag[CMD_MAX_FLAGS];
    const char *value[CMD_MAX_FLAGS];
    int nflags;
} cmd_args;

/* Parses argv: every setting of kind k with a flag is an option, as are
 * --set KEY=VALUE and `extra` (the command's own, handled by one()).  A
 * flag of kind `alt` that k lacks is refused with alt_why ("%s is a
 * training option (add --train)"); alt < 0: none. */
int cmd_parse(const char *cmd, exp_kind k, int alt, const char *alt_why,
              int argc, char **argv, const struct option *extra,
              int (*one)(void *ctx, int id, const char *v, llm_err *e),
              void *ctx, cmd_args *a, llm_err *e);

/* x (at its defaults; an exp_train, exp_serve, ... of kind k) from the
 * file operand, then the --set assignments, then the flags: the later
 * wins. */
int cmd_load_exp(exp_kind k, void *x, const cmd_args *a, llm_err *e);

#endif
