/* runs — samples as runs of equal values, exact statistics. */
#include "serve/runs.h"

#include <stdlib.h>

int runs_add(runs *r, int64_t value)
{
    if (r->n > 0 && r->v[r->n - 1].value == value) {
        r->v[r->n - 1].count++;
        r->samples++;
        return 0;
    }
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 1 << 12;
        runs_item *v = realloc(r->v, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (runs_item){.value = value, .count = 1};
    r->samples++;
    r->sorted = 0;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = ((const runs_item *)a)->value;
    int64_t y = ((const runs_item *)b)->value;
    return (x > y) - (x < y);
}

void runs_sort(runs *r)
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
    r->sorted = 1;
}

/* gsl_stats_mean's recurrence, mean += (x - mean) / i, a run at a time */
double runs_mean(runs *r, double (*val)(int64_t))
{
    runs_sort(r);
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
    runs_sort(r);
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
    *r = (runs){0};
}
