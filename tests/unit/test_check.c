/* check: the failure message's stable format, the handler, the default
 * handler's exit status 3, CHECK vanishing without -DLLMSIM_CHECK; and,
 * in a checked build, the engine and the network refusing a broken state
 * through their real APIs (a past event, a link over its capacity). */
#include <setjmp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/check.h"
#include "coll/coll.h"
#include "engine/engine.h"
#include "hw/net.h"
#include "test_util.h"

/* ---- a handler that captures the failure ------------------------------- */

typedef struct capture {
    int calls;
    char line[1600], what[1100], event[CHECK_EVENT_MAX];
    int64_t t_ns;
    int line_no;
    bool jump; /* longjmp out (the simulation cannot go on) */
    jmp_buf env;
} capture;

static void on_fail(const check_failure *f, void *ud)
{
    capture *c = ud;
    c->calls++;
    snprintf(c->line, sizeof c->line, "%s", f->line);
    snprintf(c->what, sizeof c->what, "%s", f->what);
    snprintf(c->event, sizeof c->event, "%s", f->event);
    c->t_ns = f->t_ns;
    c->line_no = f->line_no;
    if (c->jump)
        longjmp(c->env, 1);
}

static int restore(void **state)
{
    (void)state;
    check_set_handler(NULL, NULL, NULL, NULL);
    return 0;
}

#define assert_has(s, sub)                                                  \
    do {                                                                    \
        if (!strstr((s), (sub))) {                                          \
            print_error("\"%s\" lacks \"%s\"\n", (s), (sub));               \
            fail();                                                         \
        }                                                                   \
    } while (0)

static void skip_unless_checked(void)
{
    if (!check_enabled()) {
        print_message("skipped: built without -DLLMSIM_CHECK "
                      "(make CHECK=1 or make asan runs it)\n");
        skip();
    }
}

/* ---- check.c itself, in every build ------------------------------------ */

/* The documented format, to the character: WHAT (event: EVENT, t=S s)
 * [FILE:LINE], with the time in seconds to the nanosecond. */
static void test_message_format(void **state)
{
    (void)state;
    capture c = {0};
    check_set_handler(on_fail, &c, NULL, NULL);
    int rc = check_fail("sim/net.c", 301, "flow 17 rate update", 12345000,
                        "link %s carries %.1f GB/s > capacity %.0f GB/s",
                        "nvlink gpu3->nvswitch0", 912.4, 900.0);
    assert_int_equal(rc, 0); /* the handler returned */
    assert_int_equal(c.calls, 1);
    assert_string_equal(c.line,
                        "llmsim: invariant failed: link nvlink "
                        "gpu3->nvswitch0 carries 912.4 GB/s > capacity 900 "
                        "GB/s (event: flow 17 rate update, t=0.012345000 s) "
                        "[sim/net.c:301]");
    assert_string_equal(c.what, "link nvlink gpu3->nvswitch0 carries 912.4 "
                                "GB/s > capacity 900 GB/s");
    assert_string_equal(c.event, "flow 17 rate update");
    assert_true(c.t_ns == 12345000);
    assert_int_equal(c.line_no, 301);
    /* whole seconds, and a negative time keeps its sign */
    check_fail("f.c", 1, "e", 3000000001LL, "x");
    assert_has(c.line, "(event: e, t=3.000000001 s)");
    check_fail("f.c", 1, "e", -5, "x");
    assert_has(c.line, "t=-0.000000005 s");
}

static void test_event_and_handler_swap(void **state)
{
    (void)state;
    char buf[CHECK_EVENT_MAX];
    assert_string_equal(check_event(buf, "flow %d done", 17), "flow 17 done");
    assert_string_equal(CHECK_EVENT("stage %d forward", 3), "stage 3 forward");
    capture a = {0}, b = {0};
    check_handler prev;
    void *prev_ud;
    check_set_handler(on_fail, &a, NULL, NULL);
    check_set_handler(on_fail, &b, &prev, &prev_ud);
    assert_true(prev == on_fail && prev_ud == &a);
    check_fail("f.c", 1, "e", 0, "to b");
    assert_int_equal(a.calls, 0);
    assert_int_equal(b.calls, 1);
}

static int side_effects;
static int bump(void) { return ++side_effects; }

/* Checked: a false CHECK reaches the handler with its values and a true
 * one does not.  Unchecked: nothing is evaluated at all. */
static void test_macro(void **state)
{
    (void)state;
    capture c = {0};
    check_set_handler(on_fail, &c, NULL, NULL);
    side_effects = 0;
    CHECK(1 + 1 == 2, "event", 0, "never %d", bump());
    assert_int_equal(c.calls, 0);
    assert_int_equal(side_effects, 0);
    CHECK(bump() < 0, CHECK_EVENT("step %d", 4), 7, "value %d", 41 + 1);
    if (check_enabled()) {
        assert_int_equal(side_effects, 1);
        assert_int_equal(c.calls, 1);
        assert_string_equal(c.what, "value 42");
        assert_string_equal(c.event, "step 4");
        assert_true(c.t_ns == 7);
        assert_has(c.line, "test_check.c:");
    } else {
        assert_int_equal(side_effects, 0); /* the condition vanished too */
        assert_int_equal(c.calls, 0);
    }
}

/* The default handler prints the line on stderr and exits with 3. */
static void test_default_exits_3(void **state)
{
    (void)state;
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        check_set_handler(NULL, NULL, NULL, NULL);
        check_fail("sim/x.c", 9, "pop the next event", 1500000000,
                   "time went back %d ns", 3);
        _exit(0); /* not reached */
    }
    close(fd[1]);
    char out[512] = {0};
    size_t got = 0;
    ssize_t k;
    while (got < sizeof out - 1 &&
           (k = read(fd[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)k;
    close(fd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), CHECK_EXIT);
    assert_int_equal(CHECK_EXIT, 3);
    assert_string_equal(out, "llmsim: invariant failed: time went back 3 ns "
                             "(event: pop the next event, t=1.500000000 s) "
                             "[sim/x.c:9]\n");
}

/* ---- through the simulator's real APIs (checked builds) ------------------ */

static void nop(engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)ctx;
    (void)arg;
}

/* At t = 100 ns an event for t = 40 ns is 60 ns in the past; a delay of
 * -5 ns too.  Both are refused before the queue is touched. */
static void test_engine_refuses_past(void **state)
{
    (void)state;
    skip_unless_checked();
    engine *e = engine_create(16);
    engine_at(e, 100, nop, NULL, 0);
    engine_run(e, INT64_MAX);
    assert_true(engine_now(e) == 100);
    capture c = {.jump = true};
    check_set_handler(on_fail, &c, NULL, NULL);
    if (setjmp(c.env) == 0) {
        engine_at(e, 40, nop, NULL, 0);
        fail_msg("engine_at accepted an event in the past");
    }
    assert_int_equal(c.calls, 1);
    assert_string_equal(c.event, "schedule an event");
    assert_has(c.what, "t=40 ns, 60 ns before the current time");
    assert_has(c.line, "t=0.000000100 s");
    assert_has(c.line, "engine.c:");
    if (setjmp(c.env) == 0) {
        engine_after(e, -5, nop, NULL, 0);
        fail_msg("engine_after accepted a negative delay");
    }
    assert_int_equal(c.calls, 2);
    assert_has(c.what, "negative delay of -5 ns");
    assert_true(engine_pending(e) == 0); /* nothing was queued */
    engine_destroy(e);
}

static gpu_spec test_gpu = {.name = "test"};

/* two GPUs on one switch, 1 GB/s per direction, no latency */
static topo *pair(void)
{
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    snprintf(s.dev[0].name, sizeof s.dev[0].name, "gpu");
    s.dev[0].kind = DEV_GPU;
    s.dev[0].count = 2;
    snprintf(s.dev[1].name, sizeof s.dev[1].name, "sw");
    s.dev[1].kind = DEV_NVSWITCH;
    s.dev[1].count = 1;
    s.ndev = 2;
    s.link[s.nlink++] = (topo_linkspec){0, 1, MAP_ALL, LINK_NVLINK, 1e9, 0, 0};
    s.p2p = s.gpudirect = true;
    topo_fabricspec fab = {FABRIC_RAIL, 0, 1.0, 0, false, false};
    char why[256];
    topo *t = topo_build(&s, &test_gpu, 1, &fab, why, sizeof why);
    if (!t)
        print_error("%s\n", why);
    assert_non_null(t);
    return t;
}

/* A 2 GB flow runs alone at the link's 1 GB/s.  Halving the NVLink
 * bandwidth under it (net.h: scaling is for before any flow starts)
 * leaves its first link carrying 1 GB/s over a 0.5 GB/s capacity. */
static void test_net_refuses_over_capacity(void **state)
{
    (void)state;
    skip_unless_checked();
    topo *t = pair();
    engine *e = engine_create(16);
    net *n = net_create(e, R(t));
    net_flow(n, t->gpu_dev[0], t->gpu_dev[1], 2e9, 0, nop, NULL, 0);
    engine_run(e, 500000000); /* 0.5 s: half of it through */
    assert_true(net_flow_rate(n, 0) == 1e9);
    capture c = {.jump = true};
    check_set_handler(on_fail, &c, NULL, NULL);
    if (setjmp(c.env) == 0) {
        net_scale_bw(n, LINK_NVLINK, 0.5);
        fail_msg("the network carried 1 GB/s over a 0.5 GB/s link");
    }
    assert_int_equal(c.calls, 1);
    assert_string_equal(c.event, "bandwidth scale");
    assert_string_equal(c.what, "link nvlink n0.gpu0->n0.sw0 carries 1 GB/s "
                                "> capacity 0.5 GB/s, 1 flows");
    assert_has(c.line, "t=0.500000000 s");
    assert_has(c.line, "net.c:");
    net_destroy(n);
    engine_destroy(e);
    test_topo_destroy(t);
}

/* The same flow with the scaling done first, as net.h asks: no failure,
 * every byte delivered (the checks on delivery stay quiet). */
static void test_net_quiet_when_sound(void **state)
{
    (void)state;
    topo *t = pair();
    engine *e = engine_create(16);
    net *n = net_create(e, R(t));
    capture c = {.jump = true};
    check_set_handler(on_fail, &c, NULL, NULL);
    if (setjmp(c.env) == 0) {
        net_scale_bw(n, LINK_NVLINK, 0.5);
        net_flow(n, t->gpu_dev[0], t->gpu_dev[1], 2e9, 0, nop, NULL, 0);
        net_flow(n, t->gpu_dev[1], t->gpu_dev[0], 1e9, 0, nop, NULL, 0);
        engine_run(e, INT64_MAX);
    }
    assert_int_equal(c.calls, 0);
    /* 2 GB at 0.5 GB/s */
    assert_true(engine_now(e) == 4000000000LL);
    assert_true(net_bytes_delivered(n) == 3e9);
    net_destroy(n);
    engine_destroy(e);
    test_topo_destroy(t);
}

/* ---- the collective byte count, in every build ------------------------------ */

static void flag_done(engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    *(int *)ctx += 1;
}

/* Runs a collective alone on n's engine; a failed invariant jumps back
 * here (c->calls says so). */
static void run_coll(capture *c, net *n, const coll_calib *cal,
                     const coll_req *q, int *done)
{
    llm_err err;
    if (setjmp(c->env) == 0) {
        assert_int_equal(coll_start(n, cal, q, flag_done, done, 0, &err), 0);
        engine_run(net_engine(n), INT64_MAX);
    }
}

/* An all-reduce of S bytes on n ranks puts 2(n-1)S on the wire (each rank
 * sends 2(n-1)/n of S; coll.c's algo_bytes), whatever the algorithm and
 * however the ranks sit on nodes.  12 ranks on two DGX H100 are 8 + 4 per
 * node: the double binary tree's mirrored tree then reaches one level
 * deeper than the first, and a tree depth taken from the first alone
 * dropped the deepest edge's chunks (1 of 22 S at 1 KiB), which the
 * checked build caught as "flows sent 21504 bytes, the algorithm moves
 * 22528". */
static void test_allreduce_moves_its_bytes(void **state)
{
    (void)state;
    env v;
    env_open(&v, 2, "llama-2-7b");
    int ranks[12];
    for (int i = 0; i < 12; i++)
        ranks[i] = i;
    const coll_algo algos[] = {ALGO_RING, ALGO_TREE};
    const double sizes[] = {1024, 64.0 * 1024 * 1024};
    capture c = {.jump = true};
    check_set_handler(on_fail, &c, NULL, NULL);
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < 2; k++) {
            engine *e;
            net *n = coll_idle_net(R(v.t), &v.coll, &e);
            assert_non_null(n);
            coll_req q = {.op = COLL_ALL_REDUCE, .algo = algos[a],
                          .proto = PROTO_SIMPLE, .ranks = ranks, .n = 12,
                          .bytes = sizes[k]};
            int done = 0;
            run_coll(&c, n, &v.coll, &q, &done);
            if (c.calls)
                print_error("%s\n", c.line);
            assert_int_equal(c.calls, 0);
            assert_int_equal(done, 1);
            double want = 2.0 * 11 * sizes[k] / v.coll.proto_eff[PROTO_SIMPLE];
            assert_close(net_bytes_started(n), want, 1e-12);
            assert_close(net_bytes_delivered(n), want, 1e-12);
            net_destroy(n);
            engine_destroy(e);
        }
    env_close(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_message_format, restore),
        cmocka_unit_test_teardown(test_event_and_handler_swap, restore),
        cmocka_unit_test_teardown(test_macro, restore),
        cmocka_unit_test_teardown(test_default_exits_3, restore),
        cmocka_unit_test_teardown(test_engine_refuses_past, restore),
        cmocka_unit_test_teardown(test_net_refuses_over_capacity, restore),
        cmocka_unit_test_teardown(test_net_quiet_when_sound, restore),
        cmocka_unit_test_teardown(test_allreduce_moves_its_bytes, restore),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
