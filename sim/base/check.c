#include "base/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void print_and_exit(const check_failure *f, void *ud)
{
    (void)ud;
    fflush(stdout);
    fprintf(stderr, "%s\n", f->line);
    exit(CHECK_EXIT);
}

/* The process-wide handler (check.h says why this one global). */
static check_handler handler = print_and_exit;
static void *handler_ud;

void check_set_handler(check_handler h, void *ud, check_handler *prev,
                       void **prev_ud)
{
    if (prev)
        *prev = handler;
    if (prev_ud)
        *prev_ud = handler_ud;
    handler = h ? h : print_and_exit;
    handler_ud = h ? ud : NULL;
}

bool check_enabled(void)
{
#ifdef LLMSIM_CHECK
    return true;
#else
    return false;
#endif
}

const char *check_event(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, CHECK_EVENT_MAX, fmt, ap);
    va_end(ap);
    return buf;
}

int check_fail(const char *file, int line, const char *event, int64_t t_ns,
               const char *fmt, ...)
{
    char what[1024], msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!event)
        event = "?";
    /* seconds with every nanosecond digit, sign kept for negative times */
    uint64_t a = t_ns < 0 ? -(uint64_t)t_ns : (uint64_t)t_ns;
    snprintf(msg, sizeof msg,
             "llmsim: invariant failed: %s (event: %s, t=%s%llu.%09llu s) "
             "[%s:%d]",
             what, event, t_ns < 0 ? "-" : "", (unsigned long long)(a / 1000000000),
             (unsigned long long)(a % 1000000000), file, line);
    check_failure f = {msg, what, event, t_ns, file, line};
    handler(&f, handler_ud);
    return 0;
}
