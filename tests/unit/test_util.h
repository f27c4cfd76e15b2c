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

#include "cfg/cfg.h"
#include "hw/net.h"
#include "base/util.h"

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

/* The GPU catalog, loaded once per test group (cmocka group setup and
 * teardown: catalog_setup, catalog_teardown). */
static gpu_catalog cat __attribute__((unused));

static inline int catalog_setup(void **state)
{
    (void)state;
    llm_err e;
    return cfg_load_gpus("topologies/gpus.cfg", ".", &cat, &e);
}

static inline int catalog_teardown(void **state)
{
    (void)state;
    gpu_catalog_free(&cat);
    return 0;
}

/* The routes of a topology a test built (net.h): made on first use, kept
 * with it, freed by test_topo_destroy. */
static struct {
    const topo *t;
    net_routes *r;
} test_routes_[64];

static inline net_routes *R(const topo *t)
{
    int free_slot = -1;
    for (int i = 0; i < 64; i++) {
        if (test_routes_[i].t == t)
            return test_routes_[i].r;
        if (!test_routes_[i].t && free_slot < 0)
            free_slot = i;
    }
    assert_true(free_slot >= 0);
    test_routes_[free_slot].t = t;
    test_routes_[free_slot].r = net_routes_create(t);
    assert_non_null(test_routes_[free_slot].r);
    return test_routes_[free_slot].r;
}

static inline void test_topo_destroy(topo *t)
{
    for (int i = 0; i < 64; i++)
        if (t && test_routes_[i].t == t) {
            net_routes_destroy(test_routes_[i].r);
            test_routes_[i].t = NULL;
            test_routes_[i].r = NULL;
        }
    topo_destroy(t);
}

/* The shipped calib/overhead.tsv's '*' rows. */
static inline mem_overhead shipped_overhead(void)
{
    mem_overhead o;
    llm_err e;
    if (cfg_load_overhead(".", NULL, &o, &e) != 0) {
        print_error("%s\n", e.msg);
        fail();
    }
    return o;
}

/* `nodes` DGX H100 nodes with their calibrations, and a model file. */
typedef struct env {
    topo *t;
    cost_calib cost;
    coll_calib coll;
    mem_overhead ov;
    model_spec m;
} env;

static inline void env_open(env *v, int nodes, const char *model)
{
    llm_err e;
    topo_nodespec s;
    topo_fabricspec f;
    int n;
    assert_int_equal(cfg_load_topology("topologies/dgx-h100.cfg", ".", &s, &n,
                                       &f, &e), 0);
    char why[256];
    v->t = topo_build(&s, gpu_find(&cat, "h100-sxm"), nodes, &f, why,
                      sizeof why);
    assert_non_null(v->t);
    assert_int_equal(cfg_load_cost_calib(".", &cat, v->t->gpu, &v->cost, &e), 0);
    assert_int_equal(cfg_load_coll_calib(".", v->t, &v->coll, &e), 0);
    assert_int_equal(cfg_load_overhead(".", v->t->gpu, &v->ov, &e), 0);
    load_model(model, &v->m);
}

static inline void env_close(env *v)
{
    cost_calib_free(&v->cost);
    test_topo_destroy(v->t);
}

#endif
