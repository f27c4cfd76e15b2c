/* cmd_sweep — the sweep group an experiment file may carry, as `llmsim
 * sweep` reads it, exported so that its reader can be fuzzed in-process
 * (fuzz/fuzz_sweep.c).  The command itself is cmd_sweep_def in cmd.h. */
#ifndef LLMSIM_CMD_SWEEP_H
#define LLMSIM_CMD_SWEEP_H

#include <stdbool.h>

#include "base/err.h"

/* sweep = { vary = ( "KEY=VALUES", ... ); out = "FILE.csv"; } */
typedef struct cmd_sweep_group {
    bool serve;     /* the file has a serving group: a serving experiment */
    char **vary;    /* sweep.vary as written (owned), not yet parsed */
    int *vary_line; /* where each one is in the file (owned) */
    int nvary;
    bool has_out;   /* sweep.out is a string ... */
    char out[1024]; /* ... this one (cut at 1023 bytes) */
} cmd_sweep_group;

/* Reads the sweep group of an experiment file (absent: no vary, no out).
 * Errors read "file:line: key: ..."; on error *g owns nothing. */
int cmd_sweep_read_group(const char *path, cmd_sweep_group *g, llm_err *e);
void cmd_sweep_group_free(cmd_sweep_group *g);

#endif
