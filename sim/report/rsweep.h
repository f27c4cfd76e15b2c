/* rsweep — the CSV file that keeps a sweep's results.
 *
 * A header "point,sweep,<axis keys>,status,error,<outputs>" (sweep: the
 * experiment's fingerprint), then one row per finished point, appended
 * with one write(2) and fsync'd as each finishes, in the order they
 * finish.  The output columns are the flattened scalar keys of the first
 * successful point's JSON ("a.b" for nested objects; arrays are left out).
 * When every point is in, the file is rewritten in point order (temporary
 * name, then rename), so it does not depend on how many workers ran the
 * sweep. */
#ifndef LLMSIM_RSWEEP_H
#define LLMSIM_RSWEEP_H

#include <jansson.h>
#include <stdbool.h>

#include "base/err.h"
#include "decide/sweep.h"

/* The open result file of a sweep. */
typedef struct rsweep_file {
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
} rsweep_file;

/* Opens `path`, creating it, or resuming it: rows whose point and axis
 * values match this sweep mark their points done; a torn last line (a
 * killed writer) is cut off; a file from another sweep (other columns,
 * other values at a point) is an error naming its line. */
int rsweep_open(rsweep_file *f, const char *path, const sweep_spec *s,
               llm_err *e);

/* Appends point i's row (result j, or the error text when j is NULL),
 * fsync'd.  The first successful result fixes the output columns. */
int rsweep_append(rsweep_file *f, long point, json_t *j, const char *error,
                 llm_err *e);

/* Rewrites the file in point order (all points done), then closes it. */
int rsweep_finish(rsweep_file *f, llm_err *e);
void rsweep_close(rsweep_file *f);

/* Flattens j's scalar members into names[]/values[] (malloc'd, the
 * caller frees both arrays and their strings): nested objects become
 * "a.b", reals print with 10 significant digits, arrays are skipped. */
int rsweep_flatten(json_t *j, char ***names, char ***values, int *n);

#endif
