/* The decision tools' parts: sweep axes and result files, the economics,
 * and the plan search's guarantees. */
#include <stdlib.h>
#include <unistd.h>

#include "decide/exp.h"
#include "test_util.h"

#include "decide/econ.h"
#include "decide/search.h"
#include "decide/sweep.h"
#include "report/rsweep.h"

static void test_axis_forms(void **state)
{
    (void)state;
    sweep_spec s = {0};
    llm_err e;
    assert_int_equal(sweep_add_axis(&s, "nodes=1:16:*2", &e), 0);
    assert_int_equal(sweep_add_axis(&s, "net.ib_gbps=100:400:150", &e), 0);
    assert_int_equal(sweep_add_axis(&s, "cluster=dgx-a100,dgx-h100", &e), 0);
    assert_int_equal(s.axes[0].n, 5); /* 1 2 4 8 16 */
    assert_string_equal(s.axes[0].values[4], "16");
    assert_int_equal(s.axes[1].n, 3); /* 100 250 400 */
    assert_string_equal(s.axes[1].values[1], "250");
    assert_int_equal(s.npoints, 5 * 3 * 2);
    /* row-major, the last axis fastest */
    assert_string_equal(sweep_value(&s, 0, 2), "dgx-a100");
    assert_string_equal(sweep_value(&s, 1, 2), "dgx-h100");
    assert_string_equal(sweep_value(&s, 2, 1), "250");
    assert_string_equal(sweep_value(&s, 29, 0), "16");
    char buf[64];
    sweep_set(&s, 7, 1, buf, sizeof buf);
    assert_string_equal(buf, "net.ib_gbps=100");
    sweep_free(&s);
    /* a fractional range keeps its digits */
    assert_int_equal(sweep_add_axis(&s, "workload.rate=0.5:1.5:0.25", &e), 0);
    assert_int_equal(s.axes[0].n, 5);
    assert_string_equal(s.axes[0].values[1], "0.75");
    sweep_free(&s);
}

static void test_axis_errors(void **state)
{
    (void)state;
    const char *bad[][2] = {
        {"nodes=8:1", "empty range"},
        {"nodes=1:8:0", "empty range"},
        {"nodes=1:8:*1", "FACTOR > 1"},
        {"nodes=", "no values"},
        {"nodes=1,,2", "an empty value"},
        {"=1,2", "expected KEY=V1"},
        {"nodes", "expected KEY=V1"},
        {"no des=1", "is not a config key"},
        {"nodes=1:x", "HI is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sweep_spec s = {0};
        llm_err e = {{0}};
        assert_int_equal(sweep_add_axis(&s, bad[i][0], &e), -1);
        if (!strstr(e.msg, bad[i][1]))
            fail_msg("%s: \"%s\" lacks \"%s\"", bad[i][0], e.msg, bad[i][1]);
        sweep_free(&s);
    }
    sweep_spec s = {0};
    llm_err e;
    assert_int_equal(sweep_add_axis(&s, "nodes=1,2", &e), 0);
    assert_int_equal(sweep_add_axis(&s, "nodes=3", &e), -1);
    assert_non_null(strstr(e.msg, "varied twice"));
    sweep_free(&s);
}

static json_t *result(double x)
{
    json_t *j = json_object();
    json_object_set_new(j, "step_time_s", json_real(x));
    json_t *n = json_object();
    json_object_set_new(n, "dp", json_real(x / 10));
    json_object_set_new(j, "exposed_comm_s", n);
    json_object_set_new(j, "busiest_links", json_array()); /* left out */
    json_object_set_new(j, "gpu", json_string("h100,sxm")); /* quoted */
    return j;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Rows appended out of order, a failed point held until the header, a
 * torn line cut on resume, and the final file in point order. */
static void test_file_resume(void **state)
{
    (void)state;
    sweep_spec s = {0};
    llm_err e;
    assert_int_equal(sweep_add_axis(&s, "parallel.tp=1,2,4", &e), 0);
    const char *sets[] = {"nodes=2"};
    sweep_fingerprint(&s, "model = \"m\";", 13, sets, 1);
    assert_int_equal((int)strlen(s.id), 16);
    char id[24], want[512];
    snprintf(id, sizeof id, "%s", s.id);
    char path[64];
    snprintf(path, sizeof path, "/tmp/llmsim-sweep-XXXXXX");
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    rsweep_file f;
    assert_int_equal(rsweep_open(&f, path, &s, &e), 0);
    assert_int_equal(rsweep_append(&f, 1, NULL, "does not fit", &e), 0);
    json_t *j = result(2.0);
    assert_int_equal(rsweep_append(&f, 2, j, NULL, &e), 0);
    json_decref(j);
    rsweep_close(&f);
    /* a killed writer's torn line */
    FILE *a = fopen(path, "a");
    fprintf(a, "0,%s,1,ok,,1.5", id);
    fclose(a);
    assert_int_equal(rsweep_open(&f, path, &s, &e), 0);
    assert_int_equal(f.ndone, 2);
    assert_false(f.done[0]);
    assert_true(f.done[1] && f.done[2]);
    j = result(1.0);
    assert_int_equal(rsweep_append(&f, 0, j, NULL, &e), 0);
    json_decref(j);
    assert_int_equal(rsweep_finish(&f, &e), 0);
    rsweep_close(&f);
    snprintf(want, sizeof want,
             "point,sweep,parallel.tp,status,error,step_time_s,"
             "exposed_comm_s.dp,gpu\n"
             "0,%s,1,ok,,1,0.1,\"h100,sxm\"\n"
             "1,%s,2,error,does not fit,,,\n"
             "2,%s,4,ok,,2,0.2,\"h100,sxm\"\n", id, id, id);
    assert_string_equal(slurp(path), want);
    /* another sweep's file is refused, naming the line: other values */
    sweep_spec t = {0};
    assert_int_equal(sweep_add_axis(&t, "parallel.tp=1,2,8", &e), 0);
    snprintf(t.id, sizeof t.id, "%s", id);
    assert_int_equal(rsweep_open(&f, path, &t, &e), -1);
    assert_non_null(strstr(e.msg, ":4: point 2 has parallel.tp=4"));
    sweep_free(&t);
    /* ... or the same values from a changed experiment */
    assert_int_equal(sweep_add_axis(&t, "parallel.tp=1,2,4", &e), 0);
    sweep_fingerprint(&t, "model = \"n\";", 13, sets, 1);
    assert_int_equal(rsweep_open(&f, path, &t, &e), -1);
    assert_non_null(strstr(e.msg, ":2: written by another sweep"));
    sweep_free(&t);
    unlink(path);
    sweep_free(&s);
}

/* Closed forms: 8 GPUs at $10,000 with $2,000 of server and $500 of
 * network each is $100,000, over 3 years $3.80/h; GPUs drawing 2 kW plus
 * 8 x (200 + 50) W of hosts and switches is 4 kW, at PUE 1.5 and $0.10/kWh
 * $0.60/h, hosted at $150 per kW-month $0.8214/h; at 1,000 tokens/s that
 * is 3.6 M tokens/h.  Rented at $2.50 per GPU-hour: $20/h, power not
 * charged but still counted per token. */
static void test_econ(void **state)
{
    (void)state;
    econ_params p = {.mode = ECON_OWN, .amortization_years = 3,
                     .usd_per_kwh = 0.10, .pue = 1.5,
                     .hosting_usd_per_kw_month = 150,
                     .server_usd_per_gpu = 2000, .network_usd_per_gpu = 500,
                     .host_w_per_gpu = 200, .network_w_per_gpu = 50,
                     .rent_usd_per_gpu_hour = 2.5};
    econ_result r;
    econ_eval(&p, 8, 10000, 2000, 1000, &r);
    assert_close(r.purchase_usd, 100000, 1e-12);
    assert_close(r.capex_usd_per_h, 100000 / (3 * 8766.0), 1e-12);
    assert_close(r.gpu_power_w, 2000, 1e-12);
    assert_close(r.power_w, 4000, 1e-12);
    assert_close(r.energy_usd_per_h, 0.60, 1e-12);
    assert_close(r.hosting_usd_per_h, 4 * 150 / (8766.0 / 12), 1e-12);
    assert_close(r.usd_per_h, r.capex_usd_per_h + 0.60 + r.hosting_usd_per_h,
                 1e-12);
    assert_close(r.tokens_per_usd, 3.6e6 / r.usd_per_h, 1e-12);
    assert_close(r.usd_per_mtok, r.usd_per_h / 3.6, 1e-12);
    assert_close(r.energy_j_per_mtok, 4e6, 1e-12); /* 4 J per token */
    p.mode = ECON_RENT;
    econ_eval(&p, 8, 10000, 2000, 1000, &r);
    assert_close(r.usd_per_h, 20, 1e-12);
    assert_close(r.rent_usd_per_h, 20, 1e-12);
    assert_true(r.capex_usd_per_h == 0 && r.energy_usd_per_h == 0);
    assert_close(r.energy_j_per_mtok, 4e6, 1e-12);
    assert_close(r.tokens_per_usd, 3.6e6 / 20, 1e-12);
}

/* Llama-2-7B on 8 H100, 64 x 4096 tokens: every ranked plan fits, the
 * first is the fastest, the counts add up, and the estimate ranks within
 * a few percent of the simulation. */
static void test_search_guarantees(void **state)
{
    (void)state;
    env v;
    env_open(&v, 1, "llama-2-7b");
    plan_train p;
    p = exp_plan_train_defaults();
    p.global_batch = 64;
    p.seq_len = 4096;
    train_input in = {&v.m, &p, v.t, R(v.t), v.t->gpu, &v.cost, &v.coll, &v.ov,
                      false, false, NULL, NULL, 0, NULL};
    search_result s;
    llm_err e;
    assert_int_equal(search_train(&in, &p, 12, 1, &s, &e), 0);
    long dropped = 0;
    for (int k = 0; k < SEARCH_REASONS; k++)
        dropped += s.dropped[k];
    assert_int_equal(s.enumerated, s.fitted + dropped);
    assert_true(s.dropped[SEARCH_ACTIVATIONS] > 0); /* mb 16, no recompute */
    assert_int_equal(s.nranked, 12);
    for (int i = 0; i < s.nranked; i++) {
        const search_plan *sp = &s.ranked[i];
        assert_true(sp->r.memory_peak_bytes <= v.t->gpu->memory_bytes);
        assert_true(s.ranked[0].r.step_s <= sp->r.step_s);
        assert_int_equal(plan_train_gpus(&sp->plan), 8);
        assert_int_equal(sp->plan.global_batch, 64);
        assert_close(sp->estimate_s, sp->r.step_s, 0.05);
    }
    /* on three forked workers: the same counts, plans and results, bit
     * for bit */
    search_result s3;
    assert_int_equal(search_train(&in, &p, 12, 3, &s3, &e), 0);
    assert_int_equal(s3.enumerated, s.enumerated);
    assert_int_equal(s3.fitted, s.fitted);
    assert_int_equal(s3.nranked, s.nranked);
    assert_memory_equal(s3.dropped, s.dropped, sizeof s.dropped);
    for (int i = 0; i < s.nranked; i++) {
        char a[160], b[160];
        search_plan_name(&s3.ranked[i].plan, a, sizeof a);
        search_plan_name(&s.ranked[i].plan, b, sizeof b);
        assert_string_equal(a, b);
        assert_true(s3.ranked[i].estimate_s == s.ranked[i].estimate_s);
        assert_true(s3.ranked[i].r.step_s == s.ranked[i].r.step_s);
        assert_true(s3.ranked[i].r.memory_peak_bytes ==
                    s.ranked[i].r.memory_peak_bytes);
        assert_true(s3.ranked[i].r.events == s.ranked[i].r.events);
    }
    assert_int_equal(s3.have_dropped, s.have_dropped);
    search_free(&s3);
    search_free(&s);
    /* the same search on the first 4 GPUs uses 4 */
    in.gpus = 4;
    assert_int_equal(search_train(&in, &p, 4, 2, &s, &e), 0);
    assert_true(s.nranked > 0);
    for (int i = 0; i < s.nranked; i++)
        assert_int_equal(plan_train_gpus(&s.ranked[i].plan), 4);
    search_free(&s);
    env_close(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axis_forms),
        cmocka_unit_test(test_axis_errors),
        cmocka_unit_test(test_file_resume),
        cmocka_unit_test(test_econ),
        cmocka_unit_test(test_search_guarantees),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
