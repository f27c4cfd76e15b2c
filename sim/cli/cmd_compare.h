/* cmd_compare — the compare file that `llmsim compare` reads, exported so
 * that its loader can be fuzzed in-process (fuzz/fuzz_compare.c).  The
 * command itself is cmd_compare_def in cmd.h. */
#ifndef LLMSIM_CMD_COMPARE_H
#define LLMSIM_CMD_COMPARE_H

#include <stdbool.h>

#include "decide/econ.h"
#include "base/err.h"

#define CMD_COMPARE_MAX 8 /* clusters in one compare file */

/* One entry of clusters = ( { name; cluster; gpus; nodes; set; }, ... ). */
typedef struct cmd_compare_cluster {
    char name[64], cluster[256];
    int gpus, nodes;   /* 0: as the experiment file says */
    char sets[16][256];
    int nsets;
} cmd_compare_cluster;

typedef struct cmd_compare_file {
    char training[1024], serving[1024], desc[512];
    cmd_compare_cluster c[CMD_COMPARE_MAX];
    int n;
    econ_params econ;
    double train_tokens;
    bool search;
} cmd_compare_file;

/* Reads and checks a compare file into *f (overwritten).  Errors read
 * "file:line: key: ...".  *f holds no heap memory, so there is nothing to
 * free after it, on success or error. */
int cmd_compare_load(const char *path, cmd_compare_file *f, llm_err *e);

#endif
