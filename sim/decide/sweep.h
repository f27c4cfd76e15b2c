/* sweep — the points of a parameter sweep.
 *
 * A sweep is the Cartesian product of axes, each one experiment-file key
 * and its values ("parallel.tp=1,2,4", "nodes=1:16:*2").  Point i has a
 * fixed index (row-major, the last axis fastest), so a result row names
 * its point and a rerun can skip the points its file already holds.
 * Its result file is the report layer's (report/rsweep.h). */
#ifndef LLMSIM_SWEEP_H
#define LLMSIM_SWEEP_H

#include <stdbool.h>

#include "base/err.h"

#define SWEEP_MAX_POINTS 1000000L

typedef struct sweep_axis {
    char key[128];
    char **values; /* as text, as --set takes them */
    int n;
} sweep_axis;

typedef struct sweep_spec {
    sweep_axis *axes;
    int naxes;
    long npoints; /* product of the axes' sizes; 1 with no axis */
    /* what the points run: a hash of the experiment file's bytes and the
     * fixed --set options (the caller's, sweep_fingerprint); every row
     * carries it, so a file from a changed experiment is not resumed */
    char id[24];
} sweep_spec;

/* Adds "KEY=V1,V2,..." or "KEY=LO:HI[:STEP]" (arithmetic, inclusive) or
 * "KEY=LO:HI:*F" (geometric, F > 1).  Errors name the spec and what was
 * expected: no '=', an empty value, an empty range, a repeated key, more
 * than SWEEP_MAX_POINTS points. */
int sweep_add_axis(sweep_spec *s, const char *spec, llm_err *e);
void sweep_free(sweep_spec *s);

/* Fingerprints the experiment: FNV-1a over `bytes` (the file) and each of
 * `sets`, into s->id. */
void sweep_fingerprint(sweep_spec *s, const char *bytes, size_t len,
                       const char *const *sets, int nsets);

/* Axis a's value at point i. */
const char *sweep_value(const sweep_spec *s, long point, int axis);
/* "KEY=VALUE" of axis a at point i into buf. */
void sweep_set(const sweep_spec *s, long point, int axis, char *buf,
               size_t size);

#endif
