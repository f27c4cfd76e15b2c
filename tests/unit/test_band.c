/* band: a prediction's error band is its deepest family with a row of the
 * table; the ends are the prediction times the ratios (a rate divided);
 * the keys name what make validate files the cases under. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "decide/band.h"

static band_row rows[] = {
    {"training", 55, 0.89, 1.14},
    {"training/hopper", 31, 0.90, 1.17},
    {"training/hopper/nemo", 10, 0.89, 1.05},
    {"training/hopper/nemo/fp8", 4, 0.85, 1.15},
    {"serving/ttft", 37, 0.50, 1.42},
};
static const band_table table = {rows, 5, 0.8};

/* the deepest prefix wins; a key below a row falls back to it, and a key
 * under no family but the suite says so */
static void test_band_find(void **state)
{
    (void)state;
    band_est b;
    band_find(&table, "training/hopper/nemo/bf16/tp-pp", &b);
    assert_true(b.have && b.like);
    assert_string_equal(b.family, "training/hopper/nemo");
    assert_int_equal(b.cases, 10);
    band_find(&table, "training/hopper/torchtitan/fp8/zero3", &b);
    assert_string_equal(b.family, "training/hopper");
    assert_string_equal(b.key, "training/hopper/torchtitan/fp8/zero3");
    band_find(&table, "training/blackwell/nemo/fp8/tp-pp", &b);
    assert_true(b.have && !b.like); /* only the suite: none like this */
    assert_string_equal(b.family, "training");
    /* a family that is a prefix of a name, not of the path, is no parent */
    band_find(&table, "training/hopperx/nemo", &b);
    assert_string_equal(b.family, "training");
    band_find(&table, "kernels/gemm/h100-sxm", &b);
    assert_false(b.have);
}

/* a time is multiplied by the ratios, a rate divided (ends swapped) */
static void test_band_ends(void **state)
{
    (void)state;
    band_est b;
    band_find(&table, "serving/ttft/vllm-v1", &b);
    double lo, hi;
    band_ends(&b, 100, false, &lo, &hi);
    assert_float_equal(lo, 50, 1e-9);
    assert_float_equal(hi, 142, 1e-9);
    band_ends(&b, 100, true, &lo, &hi);
    assert_float_equal(lo, 100 / 1.42, 1e-9);
    assert_float_equal(hi, 200, 1e-9);
    char t[200];
    band_text(t, sizeof t, &b, 100, "%.0f", false);
    assert_string_equal(t, " (50-142; 80% band from 37 published runs like "
                           "this)");
    /* a family of fewer than BAND_MIN_CASES: its row is its ancestor's
     * widened, and the text says so */
    band_find(&table, "training/hopper/nemo/fp8", &b);
    band_text(t, sizeof t, &b, 10, "%.1f", false);
    assert_string_equal(t, " (8.5-11.5; 80% band from the 4 published runs "
                           "like this and their wider family's)");
    band_find(&table, "training/blackwell/nemo", &b);
    band_text(t, sizeof t, &b, 10, "%.1f", false);
    assert_string_equal(t, " (8.9-11.4; 80% band of all 55 published "
                           "training runs: none like this)");
    band_find(&table, "kernels/gemm", &b);
    band_text(t, sizeof t, &b, 10, "%.1f", false);
    assert_string_equal(t, " (no error band: kernels/gemm has no published "
                           "runs)");
}

/* the keys: kinds of parallelism, size bands at their edges */
static void test_band_keys(void **state)
{
    (void)state;
    char k[BAND_KEY];
    plan_train p = {.tp = 1, .pp = 1, .dp = 8, .cp = 1, .zero = 3,
                    .precision = DT_BF16};
    band_train_key(k, sizeof k, "hopper", "torchtitan", &p);
    assert_string_equal(k, "training/hopper/torchtitan/bf16/zero3");
    p.zero = 1;
    band_train_key(k, sizeof k, "hopper", "torchtitan", &p);
    assert_string_equal(k, "training/hopper/torchtitan/bf16/dp");
    p.pp = 2, p.precision = DT_FP8;
    band_train_key(k, sizeof k, "ampere", "nemo", &p);
    assert_string_equal(k, "training/ampere/nemo/fp8/tp-pp");
    band_coll_key(k, sizeof k, 1048575, "nvlink");
    assert_string_equal(k, "collectives/under-1MiB/nvlink");
    band_coll_key(k, sizeof k, 1048576, "pcie");
    assert_string_equal(k, "collectives/1-64MiB/pcie");
    band_coll_key(k, sizeof k, 67108864, "network");
    assert_string_equal(k, "collectives/64MiB-up/network");
    band_serve_key(k, sizeof k, BAND_TPOT, "vllm-v1");
    assert_string_equal(k, "serving/tpot/vllm-v1");
    band_kernel_key(k, sizeof k, "rope", "a40");
    assert_string_equal(k, "kernels/rope/a40");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_band_find),
        cmocka_unit_test(test_band_ends),
        cmocka_unit_test(test_band_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
