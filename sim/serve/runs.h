/* runs — a multiset of 64-bit samples held as runs of equal values.
 *
 * A serving run records one inter-token gap per generated token: billions
 * for a long replay.  The sequences of one iteration mostly share their
 * gap, so consecutive equal samples are kept as one (value, count) run:
 * memory grows with the distinct runs (about the iterations), not the
 * samples, and the mean and quantiles stay exact -- the figures that
 * sorting every sample and GSL's gsl_stats_mean and
 * gsl_stats_quantile_from_sorted_data give, with 64-bit counts and ranks.
 * Owned by its user; runs_free releases it. */
#ifndef LLMSIM_RUNS_H
#define LLMSIM_RUNS_H

#include <stdint.h>

typedef struct runs_item {
    int64_t value, count;
} runs_item;

typedef struct runs {
    runs_item *v;
    int64_t n, cap; /* runs held, and room */
    int64_t samples;
    int sorted;
} runs;

/* Add one sample; -1 when out of memory (the set is unchanged). */
int runs_add(runs *r, int64_t value);

/* Sort the runs by value and merge equal ones; adding after this is
 * allowed (the set is sorted again when asked). */
void runs_sort(runs *r);

/* The mean and the f-quantile (0..1) of the samples, each sample mapped
 * through val first (val must not decrease with its argument); 0 for an
 * empty set.  Both sort the runs first. */
double runs_mean(runs *r, double (*val)(int64_t));
double runs_quantile(runs *r, double f, double (*val)(int64_t));

void runs_free(runs *r);

#endif
