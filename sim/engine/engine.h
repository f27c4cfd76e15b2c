/* engine — the event queue and the simulated clock.  Knows nothing of GPUs.
 *
 * Events are ordered by (integer nanoseconds, insertion sequence), so ties
 * run in the order they were scheduled (ns-3's {m_ts, m_uid}).  Events live
 * in a pool owned by the engine: scheduling allocates nothing once the pool
 * has grown to the largest number of pending events (it doubles when full).
 * Cancelling marks the event; it is dropped when it reaches the head (Redis
 * ae.c).  One engine per simulation, no globals: several can run in one
 * process. */
#ifndef LLMSIM_ENGINE_H
#define LLMSIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct engine engine;

/* An event handler.  `ctx` and `arg` are what was given to schedule. */
typedef void (*engine_fn)(engine *eng, void *ctx, uint64_t arg);

/* A handle to a pending event, valid until it runs or is cancelled; a
 * stale handle (its event already ran) cancels nothing. */
typedef struct engine_ev {
    uint32_t idx, gen;
} engine_ev;

engine *engine_create(uint32_t initial_pool);
void engine_destroy(engine *eng);

int64_t engine_now(const engine *eng);

/* Runs fn at absolute time t_ns (>= now). */
engine_ev engine_at(engine *eng, int64_t t_ns, engine_fn fn, void *ctx,
                    uint64_t arg);
/* Runs fn after delay_ns (>= 0). */
engine_ev engine_after(engine *eng, int64_t delay_ns, engine_fn fn, void *ctx,
                       uint64_t arg);
/* Marks a pending event cancelled; returns false if it already ran. */
bool engine_cancel(engine *eng, engine_ev ev);

/* Runs events with time <= until_ns (INT64_MAX: until the queue is empty or
 * engine_stop is called).  Returns the number of events run. */
uint64_t engine_run(engine *eng, int64_t until_ns);
void engine_stop(engine *eng);

uint64_t engine_pending(const engine *eng);
uint64_t engine_events_run(const engine *eng);

/* Out of memory while growing the pool is the one failure; it is sticky
 * and reported here (the event that could not be stored is dropped). */
bool engine_failed(const engine *eng);
/* A component on the engine ran out of memory (a flow, a collective): the
 * run stops at once and engine_failed reports it. */
void engine_fail(engine *eng);

#endif
