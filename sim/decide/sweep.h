/* sweep — the points of a parameter sweep and the CSV file that keeps
 * their results.
 *
 * A sweep is the Cartesian product of axes, each one experiment-file key
 * and its values ("parallel.tp=1,2,4", "nodes=1:16:*2").  Point i has a
 * fixed index (row-major, the last axis fastest), so a result row names
 * its point and a rerun can skip the points its file already holds.
 *
 * The file: a header "point,sweep,<axis keys>,status,error,<outputs>"
 * (sweep: the experiment's fingerprint), then one
 * row per finished point, appended with one write(2) and fsync'd as each
 * finishes, in the order they finish.  The output columns are the
 * flattened scalar keys of the first successful point's JSON ("a.b" for
 * nested objects; arrays are left out).  When every point is in, the file
 * is rewritten in point order (temporary name, then rename), so it does
 * not depend on how many workers ran the sweep. */
#ifndef LLMSIM_SWEEP_H
#define LLMSIM_SWEEP_H

#include <jansson.h>
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

/* The open result file of a sweep. */
typedef struct sweep_file {
    char path[1024];
    int fd;             /* O_APPEND */
    bool *done;         /* [npoints] */
    long ndone;         /* points with a row in the file */
    char **outputs;     /* output column names; NULL until the header */
    int noutputs;
    bool header;        /* the header is in the file */
    long *held;         /* failed points waiting for the header */
    char **held_error;
    int nheld;
    const sweep_spec *spec;
} sweep_file;

/* Opens `path`, creating it, or resuming it: rows whose point and axis
 * values match this sweep mark their points done; a torn last line (a
 * killed writer) is cut off; a file from another sweep (other columns,
 * other values at a point) is an error naming its line. */
int sweep_open(sweep_file *f, const char *path, const sweep_spec *s,
               llm_err *e);

/* Appends point i's row (result j, or the error text when j is NULL),
 * fsync'd.  The first successful result fixes the output columns. */
int sweep_append(sweep_file *f, long point, json_t *j, const char *error,
                 llm_err *e);

/* Rewrites the file in point order (all points done), then closes it. */
int sweep_finish(sweep_file *f, llm_err *e);
void sweep_close(sweep_file *f);

/* Flattens j's scalar members into names[]/values[] (malloc'd, the
 * caller frees both arrays and their strings): nested objects become
 * "a.b", reals print with 10 significant digits, arrays are skipped. */
int sweep_flatten(json_t *j, char ***names, char ***values, int *n);

#endif
