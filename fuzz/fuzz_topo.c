/* Fuzz target: a topology file (a node type, or a cluster naming a node
 * type in <datadir>/topologies/) through cfg_load_topology, then, if it
 * loads and is small enough, the graph topo_build makes of it and a few
 * routes through it.
 *
 * The cap: at most 4,096 devices and 65,536 links in all, so that one
 * input (a cluster of a million nodes, an all-to-all map of 4,096 x 4,096
 * devices) cannot take seconds; the loader itself accepts those, and
 * `llmsim topo` builds them. */
#include <string.h>

#include "cfg/cfg.h"
#include "fuzz_util.h"

#define MAX_DEVICES 4096L
#define MAX_LINKS 65536L

static long links_per_node(const topo_nodespec *s)
{
    long n = 0;
    for (int i = 0; i < s->nlink; i++) {
        long na = s->dev[s->link[i].a].count, nb = s->dev[s->link[i].b].count;
        switch (s->link[i].map) {
        case MAP_ALL: n += na * nb; break;
        case MAP_BLOCK: n += na > nb ? na : nb; break;
        default: n += na; break;
        }
    }
    return n;
}

static const gpu_catalog *catalog(void)
{
    static gpu_catalog cat;
    static int loaded;
    if (!loaded) {
        char p[2048];
        llm_err e;
        snprintf(p, sizeof p, "%s/topologies/gpus.cfg", fz_datadir());
        if (cfg_load_gpus(p, fz_datadir(), &cat, &e)) {
            fprintf(stderr, "fuzz_topo: %s\n", e.msg);
            abort(); /* the harness's own data, not the input */
        }
        loaded = 1;
    }
    return &cat;
}

static void exercise(const topo *t)
{
    int links[64];
    topo_dist *dc = topo_dist_create(t);
    if (!dc)
        return;
    if (t->ngpu > 1) {
        int a = t->gpu_dev[0], b = t->gpu_dev[t->ngpu - 1];
        int n = topo_route(t, dc, a, b, 7, links, 64);
        if (n > 0)
            (void)topo_route_lat(t, links, n);
        (void)topo_route(t, dc, b, a, 9, links, 64);
    }
    for (int i = 0; i < t->ndev; i++)
        if (t->dev[i].kind == DEV_SWITCH && t->ngpu > 0) {
            (void)topo_route(t, dc, t->gpu_dev[0], i, 3, links, 64);
            (void)topo_route(t, dc, i, t->gpu_dev[t->ngpu - 1], 3, links, 64);
            break;
        }
    if (t->ngpu > 0)
        (void)topo_sharp_switch(t, dc, t->ngpu - 1);
    topo_dist_destroy(dc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("topo.cfg", data, size);
    if (!p)
        return 0;
    topo_nodespec spec;
    topo_fabricspec fabric;
    int nodes = 0;
    llm_err e = {{0}};
    if (fz_report("topology", cfg_load_topology(p, fz_datadir(), &spec,
                                              &nodes, &fabric, &e), &e))
        return 0;
    long D = 0;
    for (int i = 0; i < spec.ndev; i++)
        D += spec.dev[i].count;
    if (nodes * D > MAX_DEVICES || nodes * links_per_node(&spec) > MAX_LINKS)
        return 0;
    const gpu_spec *g = NULL;
    for (int i = 0; i < spec.ndev; i++)
        if (spec.dev[i].kind == DEV_GPU)
            g = gpu_find(catalog(), spec.dev[i].model);
    if (!g)
        return 0; /* cfg_load_topo_named: an unknown GPU model is an error */
    char why[512];
    topo *t = topo_build(&spec, g, nodes, &fabric, why, sizeof why);
    llm_err be;
    err_set(&be, "%s", why);
    if (fz_report("topo_build", t ? 0 : -1, &be) == 0) {
        exercise(t);
        topo_destroy(t);
    }
    return 0;
}
