/* Allocation-failure injection (Lua's ltests.c, SQLite's faultsim): linked
 * into a test build of llmsim with -Wl,--wrap for malloc, calloc, realloc,
 * strdup and strndup, so every allocation llmsim's own code makes is
 * counted, and the one numbered $LLMSIM_FAIL_ALLOC (1-based) returns NULL.
 * Allocations inside the libraries (libconfig, GSL, jansson) are not
 * counted: their out-of-memory paths are theirs.  When the failing one is
 * reached, "failalloc: failed allocation N" goes to stderr, so the driver
 * (tests/alloc/run.sh) knows N was inside the run; at exit the count goes
 * to $LLMSIM_ALLOC_COUNT_FILE when that is set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long count, fail_at = -2;

/* Under a sanitizer, $LLMSIM_FAIL_TRACE prints where the failing
 * allocation was made (for whoever is fixing it). */
void __sanitizer_print_stack_trace(void) __attribute__((weak));

static void report_count(void)
{
    const char *f = getenv("LLMSIM_ALLOC_COUNT_FILE");
    FILE *fp = f ? fopen(f, "w") : NULL;
    if (fp) {
        fprintf(fp, "%ld\n", count);
        fclose(fp);
    }
}

/* true when this allocation is the one to fail */
static int fails(void)
{
    if (fail_at == -2) {
        const char *v = getenv("LLMSIM_FAIL_ALLOC");
        fail_at = v ? atol(v) : -1;
        atexit(report_count);
    }
    if (++count != fail_at)
        return 0;
    static const char msg[] = "failalloc: failed allocation\n";
    (void)!write(2, msg, sizeof msg - 1);
    if (getenv("LLMSIM_FAIL_TRACE") && __sanitizer_print_stack_trace)
        __sanitizer_print_stack_trace();
    return 1;
}

void *__wrap_malloc(size_t n) { return fails() ? NULL : __real_malloc(n); }

void *__wrap_calloc(size_t k, size_t n)
{
    return fails() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fails() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s) { return fails() ? NULL : __real_strdup(s); }

char *__wrap_strndup(const char *s, size_t n)
{
    return fails() ? NULL : __real_strndup(s, n);
}
