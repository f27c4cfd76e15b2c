/* runs — samples as runs of equal values, then as a log histogram. */
#include "serve/runs.h"

#include <stdlib.h>

#define SUB (INT64_C(1) << RUNS_SUB_BITS)
/* buckets: SUB exact values, then SUB per power of two up to 2^63 */
#define NBUCKETS ((64 - RUNS_SUB_BITS) * SUB + SUB)

static int msb(uint64_t v)
{
    int b = 0;
    while (v >>= 1)
        b++;
    return b;
}

/* HdrHistogram's index: the value itself below SUB; above, e = the bits
 * dropped, and the top RUNS_SUB_BITS + 1 bits as the sub-bucket */
static int64_t bucket_of(int64_t v)
{
    if (v < SUB)
        return v;
    int e = msb((uint64_t)v) - RUNS_SUB_BITS;
    return (int64_t)e * SUB + (v >> e);
}

/* the midpoint of a bucket, as a sample value */
static int64_t bucket_mid(int64_t i)
{
    if (i < 2 * SUB)
        return i;
    int64_t e = i / SUB - 1, m = i - e * SUB;
    return (m << e) + ((INT64_C(1) << e) - 1) / 2;
}

bool runs_exact(const runs *r) { return r->hist == NULL; }

/* Move every run into the histogram, and their sum into r->sum (kept from
 * here on), and drop the runs. */
static int to_histogram(runs *r)
{
    r->hist = calloc((size_t)NBUCKETS, sizeof *r->hist);
    if (!r->hist)
        return -1;
    for (int64_t i = 0; i < r->n; i++) {
        r->hist[bucket_of(r->v[i].value)] += r->v[i].count;
        r->sum += (long double)r->v[i].value * r->v[i].count;
    }
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
    return 0;
}

/* A new run of one; a full set of runs becomes the histogram instead
 * (the value is then not stored here). */
static int add_run(runs *r, int64_t value)
{
    int64_t max = r->max_runs > 0 ? r->max_runs : RUNS_MAX_RUNS_DEFAULT;
    if (r->n == max)
        return to_histogram(r);
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 1 << 12;
        if (cap > max)
            cap = max;
        runs_item *v = realloc(r->v, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (runs_item){.value = value, .count = 1};
    r->sorted = false;
    return 0;
}

int runs_add(runs *r, int64_t value)
{
    if (value < 0)
        value = 0;
    if (!r->hist) {
        if (r->n > 0 && r->v[r->n - 1].value == value)
            r->v[r->n - 1].count++;
        else if (add_run(r, value))
            return -1;
    }
    if (r->hist) {
        r->hist[bucket_of(value)]++;
        r->sum += value;
    }
    r->samples++;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = ((const runs_item *)a)->value;
    int64_t y = ((const runs_item *)b)->value;
    return (x > y) - (x < y);
}

/* Sort the runs by value and merge equal ones. */
static void sort_runs(runs *r)
{
    if (r->sorted || r->n == 0) /* qsort takes no null array */
        return;
    qsort(r->v, (size_t)r->n, sizeof *r->v, by_value);
    int64_t k = 0;
    for (int64_t i = 0; i < r->n; i++) {
        if (k > 0 && r->v[k - 1].value == r->v[i].value)
            r->v[k - 1].count += r->v[i].count;
        else
            r->v[k++] = r->v[i];
    }
    r->n = k;
    r->sorted = true;
}

/* gsl_stats_mean's recurrence, mean += (x - mean) / i, a run at a time;
 * the histogram's is the exact sum over the count */
double runs_mean(runs *r, double (*val)(int64_t))
{
    if (r->samples == 0)
        return 0;
    if (r->hist)
        return val((int64_t)(r->sum / r->samples + 0.5L));
    sort_runs(r);
    long double mean = 0;
    int64_t seen = 0;
    for (int64_t i = 0; i < r->n; i++) {
        long double x = val(r->v[i].value);
        seen += r->v[i].count;
        mean += (x - mean) * (long double)r->v[i].count / (long double)seen;
    }
    return (double)mean;
}

/* The value of sorted rank k (0-based). */
static int64_t at_rank(const runs *r, int64_t k)
{
    if (r->hist) {
        for (int64_t i = 0; i < NBUCKETS; i++) {
            if (k < r->hist[i])
                return bucket_mid(i);
            k -= r->hist[i];
        }
        return 0; /* not reached: k < samples */
    }
    for (int64_t i = 0; i < r->n; i++) {
        if (k < r->v[i].count)
            return r->v[i].value;
        k -= r->v[i].count;
    }
    return r->v[r->n - 1].value;
}

/* gsl_stats_quantile_from_sorted_data's interpolation between the ranks
 * either side of f (n - 1), with 64-bit ranks */
double runs_quantile(runs *r, double f, double (*val)(int64_t))
{
    if (r->samples == 0)
        return 0;
    sort_runs(r);
    double index = f * (double)(r->samples - 1);
    int64_t lhs = (int64_t)index;
    double delta = index - (double)lhs;
    double lo = val(at_rank(r, lhs));
    if (lhs >= r->samples - 1)
        return lo;
    return (1 - delta) * lo + delta * val(at_rank(r, lhs + 1));
}

void runs_free(runs *r)
{
    free(r->v);
    free(r->hist);
    *r = (runs){0};
}
