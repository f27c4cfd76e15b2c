/* runs: a multiset held as runs of equal values gives the exact mean and
 * quantiles -- the figures of sorting every sample and asking GSL --
 * with memory for the distinct runs only. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "serve/runs.h"

static double as_ms(int64_t v) { return (float)(v * 1e-6); }

/* n samples from a few iteration-like values, in bursts of equal ones
 * (as a batch's sequences share a gap), checked against GSL on them all */
static void check_against_gsl(unsigned long seed, int n, int distinct)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, seed);
    double *all = malloc(sizeof *all * (size_t)n);
    assert_non_null(all);
    runs r = {0};
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || gsl_rng_uniform(g) < 0.05)
            v = 1000000 + 37111 * (int64_t)gsl_rng_uniform_int(
                                      g, (unsigned long)distinct);
        assert_int_equal(runs_add(&r, v), 0);
        all[i] = as_ms(v);
    }
    assert_int_equal(r.samples, n);
    assert_true(r.n < n / 4); /* bursts coalesce */
    gsl_sort(all, 1, (size_t)n);
    /* the recurrence a run at a time rounds apart from one at a sample */
    assert_true(fabs(runs_mean(&r, as_ms) / gsl_stats_mean(all, 1, (size_t)n) -
                     1) < 1e-12);
    const double f[] = {0, 0.01, 0.5, 0.9, 0.99, 0.999, 1};
    for (size_t k = 0; k < sizeof f / sizeof *f; k++)
        assert_true(runs_quantile(&r, f[k], as_ms) ==
                    gsl_stats_quantile_from_sorted_data(all, 1, (size_t)n, f[k]));
    assert_true(r.n <= distinct); /* sorted and merged */
    assert_true(runs_exact(&r));
    runs_free(&r);
    free(all);
    gsl_rng_free(g);
}

static void test_runs_exact(void **state)
{
    (void)state;
    check_against_gsl(1, 200000, 500);
    check_against_gsl(2, 99991, 3);
    check_against_gsl(3, 4097, 4000);
}

/* Samples that never repeat (a lightly loaded engine): past max_runs the
 * set is a histogram, each quantile within RUNS_REL_ERR of the exact one
 * and the mean exact; its memory no longer grows. */
static void test_runs_histogram(void **state)
{
    (void)state;
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 7);
    const int n = 300000;
    double *all = malloc(sizeof *all * (size_t)n);
    assert_non_null(all);
    runs r = {.max_runs = 1000};
    long double sum = 0;
    for (int i = 0; i < n; i++) {
        /* 5-60 ms in ns, log-uniform, with a tail to 2 s */
        double ms = 5 * exp(gsl_rng_uniform(g) * log(12.0));
        if (gsl_rng_uniform(g) < 0.01)
            ms *= 33;
        int64_t v = (int64_t)(ms * 1e6);
        assert_int_equal(runs_add(&r, v), 0);
        all[i] = as_ms(v);
        sum += as_ms(v);
    }
    assert_false(runs_exact(&r));
    assert_null(r.v);
    gsl_sort(all, 1, (size_t)n);
    const double f[] = {0, 0.001, 0.5, 0.9, 0.99, 0.999, 1};
    for (size_t k = 0; k < sizeof f / sizeof *f; k++) {
        double exact = gsl_stats_quantile_from_sorted_data(all, 1, (size_t)n, f[k]);
        double got = runs_quantile(&r, f[k], as_ms);
        assert_true(fabs(got / exact - 1) <= RUNS_REL_ERR + 1e-6);
    }
    assert_true(fabs(runs_mean(&r, as_ms) / (double)(sum / n) - 1) < 1e-6);
    /* the ends of one bucket (2441 x 4096 ns and 4,095 ns more, about
     * 10 ms) report its midpoint, within the bound of each */
    runs h = {.max_runs = 1};
    assert_int_equal(runs_add(&h, 9998336), 0);
    assert_int_equal(runs_add(&h, 9998336 + 4095), 0);
    assert_false(runs_exact(&h));
    double lo = runs_quantile(&h, 0, as_ms), hi = runs_quantile(&h, 1, as_ms);
    assert_true(lo == hi);
    assert_true(fabs(lo / as_ms(9998336) - 1) <= RUNS_REL_ERR);
    assert_true(fabs(hi / as_ms(9998336 + 4095) - 1) <= RUNS_REL_ERR);
    runs_free(&h);
    runs_free(&r);
    free(all);
    gsl_rng_free(g);
}

/* adding after the statistics re-sorts; an empty set and one sample */
static void test_runs_edges(void **state)
{
    (void)state;
    runs r = {0};
    assert_true(runs_mean(&r, as_ms) == 0);
    assert_true(runs_quantile(&r, 0.5, as_ms) == 0);
    assert_int_equal(runs_add(&r, 3000000), 0);
    assert_true(runs_quantile(&r, 0.99, as_ms) == as_ms(3000000));
    assert_int_equal(runs_add(&r, 1000000), 0);
    assert_int_equal(runs_add(&r, 2000000), 0);
    /* 1, 2, 3 ms: the median is 2, the 0.25-quantile halfway 1..2 */
    assert_true(runs_quantile(&r, 0.5, as_ms) == as_ms(2000000));
    assert_true(fabs(runs_quantile(&r, 0.25, as_ms) - 1.5) < 1e-6);
    assert_true(fabs(runs_mean(&r, as_ms) - 2.0) < 1e-6);
    runs_free(&r);
    assert_int_equal(r.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_exact),
        cmocka_unit_test(test_runs_histogram),
        cmocka_unit_test(test_runs_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
