/* runs — a multiset of non-negative 64-bit samples, exact while it is
 * small, within a stated relative error when it is not.
 *
 * A serving run records one inter-token gap per generated token: billions
 * for a long replay.  The sequences of one iteration mostly share their
 * gap, so consecutive equal samples are kept as one (value, count) run,
 * and the mean and quantiles are exact -- the figures that sorting every
 * sample and GSL's gsl_stats_mean and gsl_stats_quantile_from_sorted_data
 * give, with 64-bit counts and ranks.
 *
 * Where runs do not coalesce (a lightly loaded engine whose iterations
 * all differ), their number grows with the samples; past max_runs the
 * set turns into a log-bucketed histogram (HdrHistogram's layout: values
 * below 2^RUNS_SUB_BITS exact, above it 2^RUNS_SUB_BITS buckets per power
 * of two), fixed at about 0.9 MB.  Quantiles are then those of the
 * bucket midpoints, each within RUNS_REL_ERR of the exact one; the mean
 * stays exact (a long double sum).  Owned by its user; runs_free releases
 * it. */
#ifndef LLMSIM_RUNS_H
#define LLMSIM_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#define RUNS_SUB_BITS 11
/* the relative error bound of a bucket midpoint: half a bucket's width
 * over its lower edge, 2^-(RUNS_SUB_BITS + 1) */
#define RUNS_REL_ERR (1.0 / (1 << (RUNS_SUB_BITS + 1)))
#define RUNS_MAX_RUNS_DEFAULT (1 << 21) /* 32 MiB of runs */

typedef struct runs_item {
    int64_t value, count;
} runs_item;

typedef struct runs {
    runs_item *v;
    int64_t n, cap;   /* runs held, and room */
    int64_t max_runs; /* runs before the histogram (0: the default) */
    int64_t samples;
    long double sum;  /* of the samples, once in the histogram (its mean) */
    int64_t *hist;    /* bucket counts, once the runs overflowed */
    bool sorted;
} runs;

/* Add one sample (>= 0); -1 when out of memory (the set is unchanged). */
int runs_add(runs *r, int64_t value);

/* Whether the figures are exact (no histogram yet). */
bool runs_exact(const runs *r);

/* The mean and the f-quantile (0..1) of the samples, each sample mapped
 * through val first (val must not decrease with its argument); 0 for an
 * empty set.  Adding after asking is allowed. */
double runs_mean(runs *r, double (*val)(int64_t));
double runs_quantile(runs *r, double f, double (*val)(int64_t));

void runs_free(runs *r);

#endif
