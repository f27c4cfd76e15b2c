/* par — running n independent jobs on forked worker processes.
 *
 * The simulator keeps no state between runs, but it was not written to
 * share an address space between threads; separate processes keep every
 * run exactly as it would be alone (the same bytes out), and a crash in
 * one job cannot corrupt another.  Each job returns a string; the parent
 * receives them through pipes as they finish, in whatever order. */
#ifndef LLMSIM_PAR_H
#define LLMSIM_PAR_H

#include <stddef.h>

#include "base/err.h"

/* The job: i's result as a malloc'd string (NULL means out of memory). */
typedef char *(*par_job)(long i, void *ctx);
/* Called in the parent for each result, in finishing order; nonzero
 * stops the run. */
typedef int (*par_done)(long i, const char *result, void *ctx);
/* The next job to hand out, or -1 when none is left. */
typedef long (*par_next)(void *ctx);

/* Runs every job `next` yields on up to `jobs` workers (jobs <= 1: in this
 * process, in order). */
int par_run(int jobs, par_next next, par_job job, par_done done, void *ctx,
            llm_err *e);

/* A result struct as text between a worker and the parent: `tag` then
 * the bytes in hex (workers are forks, so the layout is the same on both
 * ends).  Encode returns a malloc'd string or NULL; decode returns 0 when
 * s is `tag` and exactly n bytes. */
char *par_hex_encode(char tag, const void *p, size_t n);
int par_hex_decode(const char *s, char tag, void *p, size_t n);

/* The number of online CPUs (at least 1). */
int par_cpus(void);

#endif
