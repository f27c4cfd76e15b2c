/* The settings table: one declaration per setting, consistent in every
 * kind of experiment; values in and out; messages that name the bound. */
#include "decide/exp.h"
#include "decide/settings.h"
#include "test_util.h"

/* No two settings of one kind share a flag or a key, and each default
 * lies within its setting's bounds (or is the documented -1 "from the
 * data" of the overheads). */
static void test_table_consistent(void **state)
{
    (void)state;
    for (int k = 0; k < EXP_KINDS; k++)
        for (int i = 0; i < settings_count; i++) {
            const setting *a = &settings_table[i];
            if (!a->at[k].in)
                continue;
            assert_true(a->lo <= a->hi);
            assert_non_null(a->help);
            for (int j = i + 1; j < settings_count; j++) {
                const setting *b = &settings_table[j];
                if (!b->at[k].in)
                    continue;
                if (a->flag && b->flag && strcmp(a->flag, b->flag) == 0)
                    fail_msg("kind %d: --%s declared twice", k, a->flag);
                if (a->at[k].key && b->at[k].key &&
                    strcmp(a->at[k].key, b->at[k].key) == 0)
                    fail_msg("kind %d: key %s declared twice", k, a->at[k].key);
            }
            if (a->dflt && (a->type == SET_INT || a->type == SET_DOUBLE)) {
                double d = strtod(a->dflt, NULL);
                assert_true(d == -1 || (d >= a->lo && d <= a->hi));
            }
        }
}

/* The defaults are what the engines and frameworks use (settings.c cites
 * them): vLLM's 256 sequences and 0.9 of the memory, the stack's
 * gradient bucket (0), a 2048-token sequence, FlashAttention and overlapped reduction
 * on; the overheads are left to the calibration data (negative). */
static void test_defaults(void **state)
{
    (void)state;
    static exp_train t;
    static exp_serve s;
    exp_train_defaults(&t);
    exp_serve_defaults(&s);
    assert_int_equal(t.plan.tp, 1);
    assert_int_equal(t.plan.seq_len, 2048);
    assert_true(t.plan.flash_attn && t.plan.overlap_grad_reduce);
    assert_true(t.plan.bucket_bytes == 0);
    assert_int_equal(t.plan.precision, DT_BF16);
    assert_int_equal(t.plan.optimizer, OPT_ADAMW);
    assert_int_equal(t.loader.prefetch, 2);
    assert_true(t.overhead.cuda_context_bytes < 0);
    assert_int_equal(s.p.max_num_seqs, 256);
    assert_true(s.p.gpu_mem_util == 0.9);
    assert_true(s.p.swap_space_bytes == 4 * GiB);
    assert_int_equal(s.p.weight_dt, DT_COUNT); /* the model's */
    assert_int_equal(s.replicas, 0);           /* as many as fit */
    assert_string_equal(serve_router_names[s.p.router], "least-outstanding");
    assert_int_equal(s.seed, 1);
}

/* A value goes in as the user writes it and comes out the same way, in
 * the setting's unit: 40 MiB is stored as bytes, 800 ms as seconds. */
static void test_round_trip(void **state)
{
    (void)state;
    static exp_train t;
    exp_train_defaults(&t);
    char why[512], buf[64];
    const setting *b = settings_by_key(EXP_TRAIN, "parallel.bucket_mb");
    assert_int_equal(settings_parse(b, EXP_TRAIN, &t, "40", why, sizeof why), 0);
    assert_true(t.plan.bucket_bytes == 40 * MiB);
    settings_format(b, EXP_TRAIN, &t, buf, sizeof buf);
    assert_string_equal(buf, "40");
    assert_int_equal(settings_apply(EXP_TRAIN, &t, t.h.src, "input.sample_ms=800",
                                     why, sizeof why), 0);
    assert_true(fabs(t.loader.sample_s - 0.8) < 1e-12);
    assert_int_equal(t.h.src[settings_index(settings_by_key(EXP_TRAIN,
                                                          "input.sample_ms"))]
                         .how, SRC_SET);
    assert_int_equal(settings_apply(EXP_TRAIN, &t, NULL,
                                    "parallel.schedule=interleaved", why,
                                    sizeof why), 0);
    assert_int_equal(t.plan.schedule, SCHED_INTERLEAVED);
    assert_int_equal(settings_apply(EXP_TRAIN, &t, NULL,
                                    "parallel.precision=\"fp8\"", why,
                                    sizeof why), 0);
    assert_int_equal(t.plan.precision, DT_FP8);
    /* one setting for the recompute mode and every:K's K */
    const setting *rc = settings_by_flag(EXP_TRAIN, "recompute");
    assert_int_equal(settings_apply(EXP_TRAIN, &t, NULL,
                                    "parallel.recompute=every:4", why,
                                    sizeof why), 0);
    assert_int_equal(t.plan.recompute, RECOMPUTE_EVERY);
    assert_int_equal(t.plan.recompute_every, 4);
    settings_format(rc, EXP_TRAIN, &t, buf, sizeof buf);
    assert_string_equal(buf, "every:4");
    assert_int_equal(settings_parse(rc, EXP_TRAIN, &t, "op", why, sizeof why),
                     0);
    assert_int_equal(t.plan.recompute, RECOMPUTE_OP);
    assert_int_equal(t.plan.recompute_every, 0);
    settings_format(rc, EXP_TRAIN, &t, buf, sizeof buf);
    assert_string_equal(buf, "op");
    /* a file's quoted string */
    assert_int_equal(settings_put_str(rc, EXP_TRAIN, &t, "every:2", why,
                                      sizeof why), 0);
    assert_int_equal(t.plan.recompute_every, 2);
    assert_int_equal(settings_apply(EXP_TRAIN, &t, NULL,
                                    "parallel.cross_entropy=eager", why,
                                    sizeof why), 0);
    assert_int_equal(t.plan.loss, LOSS_EAGER);
    /* every setting's default formats and parses back to itself */
    for (int k = 0; k < EXP_KINDS; k++) {
        static char x[1 << 16], y[1 << 16];
        settings_defaults((exp_kind)k, x, NULL);
        memcpy(y, x, sizeof y);
        for (int i = 0; i < settings_count; i++) {
            const setting *s = &settings_table[i];
            if (!s->at[k].in || s->type == SET_DTYPE || s->dflt_help ||
                (s->dflt && strtod(s->dflt, NULL) < 0))
                continue;
            settings_format(s, (exp_kind)k, x, buf, sizeof buf);
            assert_int_equal(settings_parse(s, (exp_kind)k, y, buf, why,
                                            sizeof why), 0);
        }
        assert_memory_equal(x, y, sizeof x);
    }
}

/* Bad values are refused with the bound or the accepted values, and an
 * unknown key gets the nearest one. */
static void test_errors(void **state)
{
    (void)state;
    static exp_serve s;
    exp_serve_defaults(&s);
    char why[512];
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL, "serving.tp=0", why,
                                    sizeof why), -1);
    assert_string_equal(why, "serving.tp: 0 is out of range (expected an "
                             "integer 1..4096)");
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL, "serving.max_num_seq=8",
                                    why, sizeof why), -1);
    assert_non_null(strstr(why, "unknown key (did you mean "
                                "\"serving.max_num_seqs\"?)"));
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL, "serving.policy=fifo",
                                    why, sizeof why), -1);
    assert_non_null(strstr(why, "(expected one of chunked|prefill-first|inflight)"));
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL, "serving.kv_dtype=int4",
                                    why, sizeof why), -1);
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL, "workload.seed=-1",
                                    why, sizeof why), -1);
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL,
                                    "workload.seed=4294967296", why,
                                    sizeof why), -1);
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL, "slo.ttft_ms=1e400",
                                    why, sizeof why), -1);
    assert_int_equal(settings_apply(EXP_SERVE, &s, NULL, "tp", why, sizeof why),
                     -1);
    /* every:K wants an integer K of at least 1; its upper bound is the
     * model's (plan_train_check) */
    static exp_train t, u;
    exp_train_defaults(&t);
    exp_train_defaults(&u);
    const char *bad[] = {"every:0", "every:x", "every:", "every", "every:-2",
                         "every:2x"};
    for (int i = 0; i < 6; i++) {
        char set[64];
        snprintf(set, sizeof set, "parallel.recompute=%s", bad[i]);
        assert_int_equal(settings_apply(EXP_TRAIN, &t, NULL, set, why,
                                        sizeof why), -1);
        assert_non_null(strstr(why, "every:K needs K, an integer of at least "
                                    "1 (expected one of none|selective|op|"
                                    "full, or every:K"));
    }
    assert_int_equal(settings_apply(EXP_TRAIN, &t, NULL,
                                    "parallel.recompute=partial", why,
                                    sizeof why), -1);
    assert_non_null(strstr(why, "unknown value \"partial\""));
    assert_memory_equal(&t, &u, sizeof t);
    /* the struct was not touched by any refused value */
    static exp_serve d;
    exp_serve_defaults(&d);
    assert_memory_equal(&s, &d, sizeof s);
}

/* An error written naming a flag is put where the value came from. */
static void test_blame(void **state)
{
    (void)state;
    static exp_train t;
    exp_train_defaults(&t);
    snprintf(t.h.file, sizeof t.h.file, "x.cfg");
    llm_err e;
    t.h.src[settings_index(settings_by_flag(EXP_TRAIN, "tp"))] =
        (exp_src){.how = SRC_FILE, .line = 7};
    err_set(&e, "--tp 3 does not divide the 32 attention heads");
    exp_blame(EXP_TRAIN, &t.h, &e);
    assert_string_equal(e.msg, "x.cfg:7: parallel.tp: 3 does not divide the "
                               "32 attention heads");
    t.h.src[settings_index(settings_by_flag(EXP_TRAIN, "model"))] =
        (exp_src){.how = SRC_SET};
    err_set(&e, "--model: unknown model \"x\"");
    exp_blame(EXP_TRAIN, &t.h, &e);
    assert_string_equal(e.msg, "--set model: unknown model \"x\"");
    err_set(&e, "--pp 3 does not divide the 32 layers");
    exp_blame(EXP_TRAIN, &t.h, &e); /* a default: as written */
    assert_string_equal(e.msg, "--pp 3 does not divide the 32 layers");
    /* a value from an @include'd file names that file */
    snprintf(t.h.inc[0], sizeof t.h.inc[0], "plan.cfg");
    t.h.ninc = 1;
    t.h.src[settings_index(settings_by_flag(EXP_TRAIN, "pp"))] =
        (exp_src){.how = SRC_FILE, .line = 3, .file = 1};
    err_set(&e, "--pp 3 does not divide the 32 layers");
    exp_blame(EXP_TRAIN, &t.h, &e);
    assert_string_equal(e.msg, "plan.cfg:3: parallel.pp: 3 does not divide "
                               "the 32 layers");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_consistent), cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_blame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
