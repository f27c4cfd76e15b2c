/* Shared helpers for the cmocka unit tests. */
#ifndef LLMSIM_TEST_UTIL_H
#define LLMSIM_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cfg.h"
#include "util.h"

/* |got - want| <= rel * |want| */
#define assert_close(got, want, rel)                                        \
    do {                                                                    \
        double g_ = (got), w_ = (want);                                     \
        if (!(fabs(g_ - w_) <= (rel) * fabs(w_))) {                         \
            print_error("%s = %.10g, expected %.10g (rel %.3g)\n", #got,   \
                        g_, w_, (double)(rel));                             \
            fail();                                                         \
        }                                                                   \
    } while (0)

static inline void load_model(const char *name, model_spec *m)
{
    char path[256];
    llm_err e = {{0}};
    snprintf(path, sizeof path, "models/%s.cfg", name);
    if (cfg_load_model(path, m, &e) != 0) {
        print_error("%s\n", e.msg);
        fail();
    }
}

static inline void load_hf(const char *file, model_spec *m)
{
    char path[256];
    llm_err e = {{0}};
    snprintf(path, sizeof path, "tests/data/hf-configs/%s", file);
    if (cfg_load_model(path, m, &e) != 0) {
        print_error("%s\n", e.msg);
        fail();
    }
}

/* Writes `text` to a fresh temporary file with the given suffix. */
static inline void write_temp(char *path, size_t len, const char *suffix,
                              const char *text)
{
    snprintf(path, len, "/tmp/llmsim-test-XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

#endif
