#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "base/err.h"

/* The queue is a small "ladder" (Tang, Goh & Thng 2005, simplified):
 *   near      a 4-ary heap of the events earlier than near_end, ordered by
 *             (t_ns, seq);
 *   buckets   nb unsorted lists of width w covering [near_end, far_start);
 *   overflow  an unsorted list of everything later.
 * Scheduling is O(1) (append to a list) unless the event falls before
 * near_end; when the heap runs dry the next bucket is moved into it; when
 * the buckets run dry the overflow is spread over a fresh set sized to it.
 * Each event is touched a constant number of times, and the heap stays
 * small enough to live in cache.  An event for the current time (a zero
 * delay: a flow's completion handing on to its owner, a rate solve) skips
 * all three and joins a FIFO of its own, `now`: every event already queued
 * for the current time was scheduled before it (a later one for this time
 * would have joined the FIFO too), so it runs after those and in its own
 * order, and time cannot move on while the FIFO holds one.  The order is
 * exactly that of one heap keyed (t_ns, seq): test_engine.c checks it
 * against a sorted list. */

typedef struct event {
    int64_t t_ns;
    uint64_t seq;
    engine_fn fn;
    void *ctx;
    uint64_t arg;
    uint32_t gen;
    uint32_t next; /* list link: free list, bucket or overflow */
    bool cancelled;
    bool pending;
} event;

typedef struct hentry {
    int64_t t_ns;
    uint64_t seq;
    uint32_t idx;
} hentry;

typedef struct list {
    uint32_t head, tail;
} list;

#define NIL UINT32_MAX
#define MAX_BUCKETS (1u << 20)

struct engine {
    int64_t now_ns;
    uint64_t seq, run_count, pending;
    event *pool;
    uint32_t pool_cap, free_head;
    hentry *heap;
    uint32_t heap_n, heap_cap;
    int64_t near_end, far_start, width;
    list *bucket;
    uint32_t nb, nb_cap, cur; /* next bucket to move into the heap */
    list over;
    list nowq; /* events at now_ns, scheduled while it was the time */
    uint32_t over_n;
    int64_t over_min, over_max;
    bool stop, failed;
};

static void link_free(engine *e, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        e->pool[i].next = i + 1 < to ? i + 1 : NIL;
    e->free_head = from < to ? from : NIL;
}

engine *engine_create(uint32_t initial_pool)
{
    engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->pool_cap = initial_pool ? initial_pool : 1024;
    e->pool = calloc(e->pool_cap, sizeof *e->pool);
    e->heap_cap = 256;
    e->heap = malloc(sizeof *e->heap * e->heap_cap);
    if (!e->pool || !e->heap) {
        engine_destroy(e);
        return NULL;
    }
    link_free(e, 0, e->pool_cap);
    e->over = (list){NIL, NIL};
    e->nowq = (list){NIL, NIL};
    return e;
}

void engine_destroy(engine *e)
{
    if (!e)
        return;
    free(e->pool);
    free(e->heap);
    free(e->bucket);
    free(e);
}

int64_t engine_now(const engine *e) { return e->now_ns; }
uint64_t engine_pending(const engine *e) { return e->pending; }
uint64_t engine_events_run(const engine *e) { return e->run_count; }
bool engine_failed(const engine *e) { return e->failed; }

void engine_fail(engine *e)
{
    e->failed = true;
    e->stop = true;
}
void engine_stop(engine *e) { e->stop = true; }

/* ---- heap ---------------------------------------------------------------- */

static inline bool before(const hentry *a, const hentry *b)
{
    return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

static bool heap_push(engine *e, const event *ev, uint32_t idx)
{
    if (e->heap_n == e->heap_cap) {
        hentry *h = realloc(e->heap, sizeof *h * e->heap_cap * 2);
        if (!h)
            return false;
        e->heap = h;
        e->heap_cap *= 2;
    }
    hentry x = {ev->t_ns, ev->seq, idx};
    uint32_t i = e->heap_n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 4;
        if (!before(&x, &e->heap[parent]))
            break;
        e->heap[i] = e->heap[parent];
        i = parent;
    }
    e->heap[i] = x;
    return true;
}

static uint32_t heap_pop(engine *e)
{
    hentry *h = e->heap;
    uint32_t top = h[0].idx, n = --e->heap_n, i = 0;
    if (n == 0)
        return top;
    hentry x = h[n];
    for (;;) {
        uint32_t c = 4 * i + 1;
        if (c >= n)
            break;
        uint32_t best = c, end = c + 4 < n ? c + 4 : n;
        for (uint32_t k = c + 1; k < end; k++)
            if (before(&h[k], &h[best]))
                best = k;
        if (!before(&h[best], &x))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = x;
    return top;
}

/* ---- lists and buckets -------------------------------------------------- */

static inline void list_append(engine *e, list *l, uint32_t idx)
{
    e->pool[idx].next = NIL;
    if (l->tail == NIL)
        l->head = idx;
    else
        e->pool[l->tail].next = idx;
    l->tail = idx;
}

/* Spreads the overflow over nb ~ count/2 buckets covering its range. */
static bool rebucket(engine *e)
{
    uint32_t want = 1;
    while (want < e->over_n / 2 && want < MAX_BUCKETS)
        want *= 2;
    if (want > e->nb_cap) {
        list *b = realloc(e->bucket, sizeof *b * want);
        if (!b)
            return false;
        e->bucket = b;
        e->nb_cap = want;
    }
    e->nb = want;
    for (uint32_t i = 0; i < want; i++)
        e->bucket[i] = (list){NIL, NIL};
    int64_t span = e->over_max - e->over_min + 1;
    e->width = (span + want - 1) / want;
    e->near_end = e->over_min;
    e->far_start = e->over_min + e->width * (int64_t)want;
    e->cur = 0;
    uint32_t idx = e->over.head;
    while (idx != NIL) {
        uint32_t next = e->pool[idx].next;
        uint64_t b = (uint64_t)(e->pool[idx].t_ns - e->near_end) /
                     (uint64_t)e->width;
        list_append(e, &e->bucket[b], idx);
        idx = next;
    }
    e->over = (list){NIL, NIL};
    e->over_n = 0;
    return true;
}

/* Moves the next non-empty bucket (or the overflow) into the heap. */
static bool refill(engine *e)
{
    for (;;) {
        while (e->cur < e->nb && e->bucket[e->cur].head == NIL)
            e->cur++;
        /* the heap's range grows over the empty buckets skipped: an event
         * scheduled in it later (by an event of the `now` FIFO, which runs
         * while the heap is empty) goes to the heap, never to a bucket
         * already passed */
        e->near_end = e->far_start - e->width * (int64_t)(e->nb - e->cur);
        if (e->cur < e->nb) {
            uint32_t idx = e->bucket[e->cur].head;
            e->bucket[e->cur] = (list){NIL, NIL};
            e->cur++;
            e->near_end = e->far_start - e->width * (int64_t)(e->nb - e->cur);
            while (idx != NIL) {
                uint32_t next = e->pool[idx].next;
                if (!heap_push(e, &e->pool[idx], idx))
                    return false;
                idx = next;
            }
            return true;
        }
        if (e->over_n == 0)
            return true; /* empty */
        if (!rebucket(e))
            return false;
    }
}

static bool grow(engine *e)
{
    uint32_t cap = e->pool_cap * 2;
    event *p = realloc(e->pool, sizeof *p * cap);
    if (!p)
        return false;
    e->pool = p;
    memset(e->pool + e->pool_cap, 0, sizeof *p * (cap - e->pool_cap));
    link_free(e, e->pool_cap, cap);
    e->pool_cap = cap;
    return true;
}

engine_ev engine_at(engine *e, int64_t t_ns, engine_fn fn, void *ctx,
                    uint64_t arg)
{
    CHECK(t_ns >= e->now_ns, "schedule an event", e->now_ns,
          "event scheduled at t=%lld ns, %lld ns before the current time",
          (long long)t_ns, (long long)(e->now_ns - t_ns));
    LLM_ASSERT(t_ns >= e->now_ns);
    if (e->free_head == NIL && !grow(e)) {
        engine_fail(e); /* the event is lost: the run cannot go on */
        return (engine_ev){NIL, 0};
    }
    uint32_t idx = e->free_head;
    event *ev = &e->pool[idx];
    e->free_head = ev->next;
    ev->t_ns = t_ns;
    ev->seq = e->seq++;
    ev->fn = fn;
    ev->ctx = ctx;
    ev->arg = arg;
    ev->gen++;
    ev->cancelled = false;
    ev->pending = true;
    e->pending++;
    if (t_ns == e->now_ns)
        list_append(e, &e->nowq, idx);
    else if (t_ns < e->near_end) {
        if (!heap_push(e, ev, idx))
            engine_fail(e);
    } else if (t_ns < e->far_start) {
        uint64_t b = (uint64_t)(t_ns - e->near_end) / (uint64_t)e->width;
        list_append(e, &e->bucket[e->cur + b], idx);
    } else {
        if (e->over_n == 0 || t_ns < e->over_min)
            e->over_min = t_ns;
        if (e->over_n == 0 || t_ns > e->over_max)
            e->over_max = t_ns;
        e->over_n++;
        list_append(e, &e->over, idx);
    }
    return (engine_ev){idx, ev->gen};
}

engine_ev engine_after(engine *e, int64_t delay_ns, engine_fn fn, void *ctx,
                       uint64_t arg)
{
    CHECK(delay_ns >= 0, "schedule an event", e->now_ns,
          "event scheduled with a negative delay of %lld ns",
          (long long)delay_ns);
    LLM_ASSERT(delay_ns >= 0);
    return engine_at(e, e->now_ns + delay_ns, fn, ctx, arg);
}

bool engine_cancel(engine *e, engine_ev h)
{
    if (h.idx >= e->pool_cap)
        return false;
    event *ev = &e->pool[h.idx];
    if (!ev->pending || ev->gen != h.gen || ev->cancelled)
        return false;
    ev->cancelled = true;
    return true;
}

/* The next event in (t_ns, seq) order, NIL when none is left (or when
 * memory ran out moving a bucket into the heap: e->failed then) or the
 * next is later than until_ns. */
static uint32_t next_event(engine *e, int64_t until_ns)
{
    if (e->heap_n == 0 && !refill(e)) {
        e->failed = true; /* out of memory: a bucket's events are lost */
        return NIL;
    }
    if (e->nowq.head != NIL) {
        if (e->now_ns > until_ns)
            return NIL;
        /* queued for this time before the FIFO's first: it goes first */
        if (e->heap_n > 0 && e->heap[0].t_ns == e->now_ns)
            return heap_pop(e);
        uint32_t idx = e->nowq.head;
        e->nowq.head = e->pool[idx].next;
        if (e->nowq.head == NIL)
            e->nowq.tail = NIL;
        return idx;
    }
    if (e->heap_n == 0 || e->heap[0].t_ns > until_ns)
        return NIL;
    return heap_pop(e);
}

uint64_t engine_run(engine *e, int64_t until_ns)
{
    uint64_t ran = 0;
    e->stop = false;
    while (!e->stop && !e->failed) {
        uint32_t idx = next_event(e, until_ns);
        if (idx == NIL)
            break;
        event *ev = &e->pool[idx];
        engine_fn fn = ev->fn;
        void *ctx = ev->ctx;
        uint64_t arg = ev->arg;
        int64_t t = ev->t_ns;
        bool cancelled = ev->cancelled;
        ev->pending = false;
        ev->next = e->free_head;
        e->free_head = idx;
        e->pending--;
        if (cancelled)
            continue;
        /* simulated time never goes backwards */
        CHECK(t >= e->now_ns, "pop the next event", e->now_ns,
              "event %llu popped at t=%lld ns, %lld ns before the current "
              "time (the queue's order is broken)",
              (unsigned long long)ev->seq, (long long)t,
              (long long)(e->now_ns - t));
        LLM_ASSERT(t >= e->now_ns);
        e->now_ns = t;
        fn(e, ctx, arg);
        ran++;
    }
    if (until_ns != INT64_MAX && !e->stop && e->now_ns < until_ns)
        e->now_ns = until_ns;
    e->run_count += ran;
    return ran;
}
