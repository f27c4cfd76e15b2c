/* check — simulation invariants, compiled in with -DLLMSIM_CHECK.
 *
 * A simulator people trust never prints a plausible number from a broken
 * state.  CHECK states an invariant where the state changes (the clock, a
 * link's load, a flow's bytes, a GPU's memory, a request's tokens); built
 * with -DLLMSIM_CHECK (`make CHECK=1`, `make asan`) a failure stops the
 * run, without it the macro costs nothing: its arguments sit under sizeof,
 * so they are type-checked (and format-checked) in every build but never
 * evaluated.  Bookkeeping that exists only to be checked lives under
 * #ifdef LLMSIM_CHECK beside it.
 *
 * The message, one line on stderr (a stable format; tools may match it):
 *
 *   llmsim: invariant failed: WHAT (event: EVENT, t=SECONDS s) [FILE:LINE]
 *
 * WHAT names the quantity and its values, EVENT what the simulation was
 * doing, SECONDS the simulated time with nanosecond digits (%.9f), e.g.
 *
 *   llmsim: invariant failed: link nvlink gpu3->nvswitch0 carries 912.4
 *   GB/s > capacity 900 GB/s (event: flow rate update, t=0.012345000 s)
 *   [sim/hw/net.c:301]
 *
 * The default handler prints that line and exits with status 3 (1 is bad
 * input, 2 is "does not fit"; cmd.h).  check_set_handler replaces it, so
 * a unit test can capture the failure (and longjmp out) instead.  This is
 * the one global of the simulator: a failure handler is per process, like
 * an assert's abort. */
#ifndef LLMSIM_CHECK_H
#define LLMSIM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

/* exit status of a run stopped by a broken invariant */
#define CHECK_EXIT 3

/* Room for an EVENT built with CHECK_EVENT. */
#define CHECK_EVENT_MAX 96

typedef struct check_failure {
    const char *line;  /* the whole message, as above, without newline */
    const char *what;  /* WHAT alone */
    const char *event; /* EVENT alone */
    int64_t t_ns;      /* simulated time */
    const char *file;
    int line_no;
} check_failure;

/* Called on a failure; the strings live until it returns.  A handler that
 * returns lets the simulation go on past the broken state (only tests
 * that longjmp out, or count, should). */
typedef void (*check_handler)(const check_failure *f, void *ud);

/* Installs h (NULL: the default, print and exit 3); returns the previous
 * handler and its ud through prev / prev_ud when not NULL. */
void check_set_handler(check_handler h, void *ud, check_handler *prev,
                       void **prev_ud);

/* Formats the message and calls the handler; returns 0 when the handler
 * returns (the int lets CHECK sit under sizeof). */
int check_fail(const char *file, int line, const char *event, int64_t t_ns,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Formats an EVENT into buf[CHECK_EVENT_MAX] and returns buf. */
const char *check_event(char *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether this build enforces invariants (tests skip what needs it). */
bool check_enabled(void);

/* CHECK(cond, event, t_ns, fmt, ...): when cond is false, fail with the
 * values formatted by fmt.  event is a string, or CHECK_EVENT("flow %d
 * done", id) for one with values: a buffer on the caller's stack, built
 * only on failure.  Relative tolerances for doubles are the caller's
 * (CHECK_LE_REL). */
#define CHECK_EVENT(...) check_event((char[CHECK_EVENT_MAX]){0}, __VA_ARGS__)

#ifdef LLMSIM_CHECK
#define CHECK(cond, event, t_ns, ...)                                       \
    do {                                                                    \
        if (!(cond))                                                        \
            (void)check_fail(__FILE__, __LINE__, (event), (t_ns),           \
                             __VA_ARGS__);                                  \
    } while (0)
#else
#define CHECK(cond, event, t_ns, ...)                                       \
    ((void)sizeof(!(cond) && check_fail(__FILE__, __LINE__, (event),        \
                                        (t_ns), __VA_ARGS__)))
#endif

/* a <= b up to rel of the larger magnitude (callers include math.h) */
#define CHECK_LE_REL(a, b, rel)                                             \
    ((a) <= (b) + (rel) * (fabs(a) > fabs(b) ? fabs(a) : fabs(b)))
/* |a - b| within the same tolerance */
#define CHECK_EQ_REL(a, b, rel)                                             \
    (CHECK_LE_REL(a, b, rel) && CHECK_LE_REL(b, a, rel))

#endif
