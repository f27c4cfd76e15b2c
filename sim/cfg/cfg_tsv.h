/* cfg_tsv — keyed figure tables (calib/overhead.tsv, calib/kernels.tsv,
 * calib/economics.tsv, ...), shared by the loaders in cfg*.c.  Private to
 * the cfg edge.
 *
 * A keyed table has one figure per row: columns `key`, `value` and
 * `source` (and `gpu` when the figure may differ by GPU).  A GPU's figure
 * is its own row, else the '*' row: the fallback lives in the data, not in
 * C.  Every figure a loader asks for must have a row; a key it does not
 * know, a second row for one (gpu, key), a value out of range and an
 * empty source are errors "file:line: key: what is wrong (expected ...)". */
#ifndef LLMSIM_CFG_TSV_H
#define LLMSIM_CFG_TSV_H

#include <stddef.h>

#include "base/err.h"

typedef struct cfg_key {
    const char *key;
    double lo, hi;    /* accepted range of the value column */
    const char *unit; /* for messages ("GiB", "fraction") */
    double *out;
    char *src;        /* the row's source, or NULL */
    size_t srclen;
} cfg_key;

/* Fills every want[i].out from `path`.  gpu NULL: the table has no gpu
 * column and one row per key. */
int cfg_keyed_load(const char *path, const char *gpu, const cfg_key *want,
                   int n, llm_err *e);
/* The same with the rows chosen by column `col` (a node type, ...). */
int cfg_keyed_load_by(const char *path, const char *col, const char *name,
                      const cfg_key *want, int n, llm_err *e);

/* topologies/pcie.tsv: the line rate per lane and the encoding of each
 * PCIe generation (0 where the table has no row). */
#define CFG_PCIE_GENS 16
typedef struct cfg_pcie {
    char path[1100];
    double GTps[CFG_PCIE_GENS + 1];    /* GT/s per lane */
    double encoding[CFG_PCIE_GENS + 1]; /* payload bits / line bits */
} cfg_pcie;

int cfg_pcie_load(const char *datadir, cfg_pcie *p, llm_err *e);

#endif
