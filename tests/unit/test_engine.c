/* Engine: the heap gives the same order as a plain sorted list on a random
 * schedule with ties, follow-up events and cancellations; two engines run
 * side by side; time never goes backwards; an event for the current time
 * scheduled after the last bucket still runs what it schedules. */
#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "test_util.h"

#define MAXEV 200000

/* ---- a deliberately simple reference queue: sorted array, O(n) insert -- */

typedef struct ref_ev {
    int64_t t;
    uint64_t seq;
    uint32_t id;
    bool cancelled;
} ref_ev;

typedef struct ref_q {
    ref_ev *v;
    int n;
    uint64_t seq;
    int64_t now;
} ref_q;

static void ref_push(ref_q *q, int64_t t, uint32_t id)
{
    int i = q->n++;
    while (i > 0 && (q->v[i - 1].t > t)) { /* equal t: after, by seq */
        q->v[i] = q->v[i - 1];
        i--;
    }
    q->v[i] = (ref_ev){t, q->seq++, id, false};
}

/* ---- the shared script: what each event does when it runs ------------- */

typedef struct script {
    uint32_t next_id;
    uint32_t order[MAXEV];
    int64_t times[MAXEV];
    uint32_t n_run;
    /* per id: engine handle, or reference slot lookup by scan */
    engine_ev handle[MAXEV];
    bool done[MAXEV];
} script;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* children and cancellations depend only on the event's id */
static int children(uint32_t id, uint32_t *delay)
{
    uint64_t h = mix(id + 1);
    int n = (int)(h % 3);
    for (int k = 0; k < n; k++)
        delay[k] = (uint32_t)((h >> (8 + 8 * k)) % 40); /* 0: a tie */
    return n;
}


static script S_eng, S_ref;

static void on_event(engine *e, void *ctx, uint64_t arg)
{
    script *s = ctx;
    uint32_t id = (uint32_t)arg;
    s->order[s->n_run] = id;
    s->times[s->n_run++] = engine_now(e);
    s->done[id] = true;
    uint32_t d[3];
    int n = children(id, d);
    for (int k = 0; k < n && s->next_id < MAXEV; k++) {
        uint32_t c = s->next_id++;
        s->handle[c] = engine_after(e, d[k], on_event, s, c);
    }
    if (id % 7 == 0 && id >= 3 && !s->done[id - 3])
        engine_cancel(e, s->handle[id - 3]);
}

static void run_reference(script *s, const int64_t *t0, uint32_t n0)
{
    ref_q q = {calloc(MAXEV, sizeof(ref_ev)), 0, 0, 0};
    for (uint32_t i = 0; i < n0; i++)
        ref_push(&q, t0[i], i);
    s->next_id = n0;
    while (q.n > 0) {
        ref_ev ev = q.v[0];
        memmove(q.v, q.v + 1, sizeof(ref_ev) * (size_t)--q.n);
        if (ev.cancelled)
            continue;
        q.now = ev.t;
        s->order[s->n_run] = ev.id;
        s->times[s->n_run++] = ev.t;
        s->done[ev.id] = true;
        uint32_t d[3];
        int n = children(ev.id, d);
        for (int k = 0; k < n && s->next_id < MAXEV; k++)
            ref_push(&q, q.now + d[k], s->next_id++);
        if (ev.id % 7 == 0 && ev.id >= 3 && !s->done[ev.id - 3])
            for (int i = 0; i < q.n; i++)
                if (q.v[i].id == ev.id - 3)
                    q.v[i].cancelled = true;
    }
    free(q.v);
}

static void test_heap_matches_sorted_list(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    enum { N0 = 3000 };
    static int64_t t0[N0];
    for (int i = 0; i < N0; i++)
        t0[i] = (int64_t)gsl_rng_uniform_int(r, 500); /* many ties */
    gsl_rng_free(r);

    engine *e = engine_create(16); /* small: the pool must grow */
    for (uint32_t i = 0; i < N0; i++)
        S_eng.handle[i] = engine_at(e, t0[i], on_event, &S_eng, i);
    S_eng.next_id = N0;
    engine_run(e, INT64_MAX);
    assert_false(engine_failed(e));
    engine_destroy(e);

    run_reference(&S_ref, t0, N0);
    assert_true(S_eng.n_run > N0); /* follow-ups ran */
    assert_int_equal(S_eng.n_run, S_ref.n_run);
    for (uint32_t i = 0; i < S_eng.n_run; i++) {
        assert_int_equal(S_eng.order[i], S_ref.order[i]);
        assert_int_equal(S_eng.times[i], S_ref.times[i]);
        if (i)
            assert_true(S_eng.times[i] >= S_eng.times[i - 1]);
    }
}

typedef struct counter {
    int64_t last;
    int n;
} counter;

static void tick(engine *e, void *ctx, uint64_t arg)
{
    counter *c = ctx;
    assert_true(engine_now(e) >= c->last);
    c->last = engine_now(e);
    c->n++;
    if (arg > 0)
        engine_after(e, 10, tick, c, arg - 1);
}

static void test_two_engines_and_run_until(void **state)
{
    (void)state;
    engine *a = engine_create(4), *b = engine_create(4);
    counter ca = {0, 0}, cb = {0, 0};
    engine_at(a, 0, tick, &ca, 99); /* 100 ticks at 0, 10, ..., 990 */
    engine_at(b, 5, tick, &cb, 9);  /* 10 ticks at 5, ..., 95 */
    /* interleave the two: each keeps its own clock */
    assert_int_equal(engine_run(a, 495), 50);
    assert_int_equal(engine_now(a), 495);
    engine_run(b, INT64_MAX);
    engine_run(a, INT64_MAX);
    assert_int_equal(ca.n, 100);
    assert_int_equal(cb.n, 10);
    assert_int_equal(engine_now(a), 990);
    assert_int_equal(engine_now(b), 95);
    engine_destroy(a);
    engine_destroy(b);
}

static void test_cancel(void **state)
{
    (void)state;
    engine *e = engine_create(2);
    counter c = {0, 0};
    engine_ev x = engine_at(e, 10, tick, &c, 0);
    engine_ev y = engine_at(e, 20, tick, &c, 0);
    assert_true(engine_cancel(e, x));
    assert_false(engine_cancel(e, x)); /* twice */
    engine_run(e, INT64_MAX);
    assert_int_equal(c.n, 1);
    assert_false(engine_cancel(e, y)); /* already ran: stale handle */
    /* the slot of y is reused: the stale handle must not cancel it */
    engine_ev z = engine_at(e, 30, tick, &c, 0);
    assert_false(engine_cancel(e, y));
    (void)z;
    engine_run(e, INT64_MAX);
    assert_int_equal(c.n, 2);
    engine_destroy(e);
}

/* A zero-delay event that runs when the heap is empty and every bucket
 * left is empty (100 events at 0..99 ns make 64 buckets 2 ns wide, the
 * last 14 of them empty): what it schedules a little later must still
 * run, at its time, though it falls in the range of buckets already
 * passed (the `now` FIFO path). */
static void relay(engine *e, void *ctx, uint64_t arg)
{
    counter *c = ctx;
    assert_true(engine_now(e) >= c->last);
    c->last = engine_now(e);
    c->n++;
    if (arg == 99) /* the last of the first hundred */
        engine_after(e, 0, relay, c, 1000);
    else if (arg == 1000)
        engine_after(e, 10, relay, c, 1001);
}

static void test_now_fifo_after_the_last_bucket(void **state)
{
    (void)state;
    engine *e = engine_create(4);
    counter c = {0, 0};
    for (uint64_t i = 0; i < 100; i++)
        engine_at(e, (int64_t)i, relay, &c, i);
    engine_run(e, INT64_MAX);
    assert_false(engine_failed(e));
    assert_int_equal(c.n, 102);
    assert_int_equal(engine_now(e), 109);
    assert_int_equal(engine_pending(e), 0);
    engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_matches_sorted_list),
        cmocka_unit_test(test_two_engines_and_run_until),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_now_fifo_after_the_last_bucket),
    };
    return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
