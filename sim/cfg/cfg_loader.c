/* Where llmsim's data lives and loading by name: models, GPUs, clusters
 * and their calibration, as a run of the experiment API asks for them
 * (cfg_loader). */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "cfg/cfg.h"

#ifndef LLMSIM_DATADIR
#define LLMSIM_DATADIR "/usr/local/share/llmsim"
#endif

static int has_catalog(const char *dir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/topologies/gpus.cfg", dir);
    return access(p, R_OK) == 0;
}

const char *cfg_datadir(void)
{
    static char dir[PATH_MAX];
    if (dir[0])
        return dir;
    const char *env = getenv("LLMSIM_DATA");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        if (has_catalog(exe)) {
            snprintf(dir, sizeof dir, "%s", exe);
            return dir;
        }
        char share[PATH_MAX + 32];
        snprintf(share, sizeof share, "%s/../share/llmsim", exe);
        if (has_catalog(share)) {
            snprintf(dir, sizeof dir, "%s", share);
            return dir;
        }
    }
    snprintf(dir, sizeof dir, "%s", LLMSIM_DATADIR);
    return dir;
}

int cfg_load_catalog(gpu_catalog *c, llm_err *e)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/topologies/gpus.cfg", cfg_datadir());
    return cfg_load_gpus(p, cfg_datadir(), c, e);
}

static int is_path(const char *arg)
{
    return strchr(arg, '/') || util_ends_with(arg, ".cfg") ||
           util_ends_with(arg, ".json");
}

/* Names of the .cfg files in <datadir>/<sub>, for "did you mean".
 * Returns the count. */
static int data_names(const char *sub, char names[][96], int cap)
{
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/%s", cfg_datadir(), sub);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < cap) {
        if (!util_ends_with(de->d_name, ".cfg"))
            continue;
        snprintf(names[n], 96, "%.*s", (int)(strlen(de->d_name) - 4),
                 de->d_name);
        n++;
    }
    closedir(d);
    return n;
}

/* " (did you mean "x"?)" among the names of <datadir>/<sub>, or "". */
static void data_hint(const char *sub, const char *arg, char *hint,
                      size_t len)
{
    char names[256][96];
    const char *ptrs[256];
    int n = data_names(sub, names, 256);
    for (int i = 0; i < n; i++)
        ptrs[i] = names[i];
    util_did_you_mean(hint, len, arg, ptrs, n);
}

/* The file a name stands for: ARG itself when it is a path, else
 * <datadir>/<sub>/ARG.cfg.  -1 when a name has no file there, with " (did
 * you mean ...?)" or "" in hint. */
static int data_file(const char *sub, const char *arg, char *path,
                     size_t len, char *hint, size_t hlen)
{
    if (is_path(arg)) {
        snprintf(path, len, "%s", arg);
        return 0;
    }
    snprintf(path, len, "%s/%s/%s.cfg", cfg_datadir(), sub, arg);
    if (access(path, R_OK) == 0)
        return 0;
    data_hint(sub, arg, hint, hlen);
    return -1;
}

int cfg_load_model_named(const char *arg, model_spec *m, llm_err *e)
{
    char p[PATH_MAX + 128], hint[160];
    if (data_file("models", arg, p, sizeof p, hint, sizeof hint) == 0)
        return cfg_load_model(p, m, e);
    return err_set(e, "--model: unknown model \"%s\"%s (expected a name "
                      "from %s/models/, a .cfg path or a Hugging Face "
                      "config.json; `llmsim model --list` lists them)",
                   arg, hint, cfg_datadir());
}

/* A profile in stacks/ by name or path into p, or an error naming the
 * flag ("--stack"), what it takes and the command whose help lists them. */
static int profile_path(const char *flag, const char *what, const char *cmd,
                        const char *arg, char *p, size_t len, llm_err *e)
{
    char hint[160];
    if (data_file("stacks", arg, p, len, hint, sizeof hint) == 0)
        return 0;
    return err_set(e, "%s: unknown %s \"%s\"%s (expected a name from "
                      "%s/stacks/ or a .cfg path; `llmsim help %s` lists "
                      "them)", flag, what, arg, hint, cfg_datadir(), cmd);
}

int cfg_load_stack_named(const char *arg, stack_spec *s, llm_err *e)
{
    char p[PATH_MAX + 128];
    return profile_path("--stack", "software stack", "train", arg, p,
                        sizeof p, e) ||
           cfg_load_stack(p, s, e);
}

int cfg_load_engine_named(const char *arg, eprof *s, llm_err *e)
{
    char p[PATH_MAX + 128];
    return profile_path("--engine", "serving engine", "serve", arg, p,
                        sizeof p, e) ||
           cfg_load_engine(p, s, e);
}

const gpu_spec *cfg_find_gpu(gpu_catalog *c, const char *arg, llm_err *e)
{
    if (is_path(arg)) {
        gpu_catalog extra;
        if (cfg_load_gpus(arg, cfg_datadir(), &extra, e))
            return NULL;
        gpu_spec *grown = realloc(c->gpus, sizeof *grown * (size_t)(c->n + 1));
        if (!grown) {
            gpu_catalog_free(&extra);
            err_set(e, "out of memory");
            return NULL;
        }
        c->gpus = grown;
        c->gpus[c->n] = extra.gpus[0];
        gpu_catalog_free(&extra);
        return &c->gpus[c->n++];
    }
    const gpu_spec *g = gpu_find(c, arg);
    if (g)
        return g;
    const char *names[512];
    int n = c->n < 512 ? c->n : 512;
    for (int i = 0; i < n; i++)
        names[i] = c->gpus[i].name;
    char hint[160];
    util_did_you_mean(hint, sizeof hint, arg, names, n);
    err_set(e, "--gpu: unknown GPU \"%s\"%s (expected a name from %s; "
               "`llmsim gpus` lists them)",
            arg, hint, c->path);
    return NULL;
}

topo *cfg_load_topo_named(const char *arg, int nodes, int p2p, gpu_catalog *cat,
                    llm_err *e)
{
    return cfg_load_topo_net(arg, nodes, p2p, NULL, cat, e);
}

/* The node spec, fabric and node count of a --cluster argument. */
static int load_spec(const char *arg, int nodes, topo_nodespec *spec,
                     topo_fabricspec *fabric, int *n, llm_err *e)
{
    char path[PATH_MAX + 64], hint[160];
    if (data_file("topologies", arg, path, sizeof path, hint, sizeof hint))
        return err_set(e, "--cluster: unknown topology \"%s\"%s (expected "
                          "a name from %s/topologies/ or a path)", arg, hint,
                       cfg_datadir());
    *n = 1;
    if (cfg_load_topology(path, cfg_datadir(), spec, n, fabric, e))
        return -1;
    if (nodes > 0)
        *n = nodes;
    return 0;
}

int cfg_topo_size(const char *arg, int nodes, exp_topo_size *out,
                  llm_err *e)
{
    topo_nodespec spec;
    topo_fabricspec fabric;
    memset(out, 0, sizeof *out);
    if (load_spec(arg, nodes, &spec, &fabric, &out->nodes, e))
        return -1;
    for (int i = 0; i < spec.ndev; i++) {
        out->ndev += spec.dev[i].count;
        if (spec.dev[i].kind == DEV_GPU)
            out->gpus_per_node += spec.dev[i].count;
        if (spec.dev[i].kind == DEV_NIC)
            out->nics += spec.dev[i].count;
        out->nvls |= spec.dev[i].kind == DEV_NVSWITCH && spec.dev[i].nvls;
    }
    /* a link template joins up to every pair of its two groups */
    for (int i = 0; i < spec.nlink; i++) {
        out->nlink += spec.dev[spec.link[i].a].count;
        out->nvlink |= spec.link[i].kind == LINK_NVLINK;
    }
    out->sharp = fabric.sharp;
    /* no GPU's keys: the rows every GPU shares */
    cfg_coll_keys none;
    memset(&none, 0, sizeof none);
    return cfg_load_coll_calib_keys(cfg_datadir(), &none, &out->coll, e);
}

topo *cfg_load_topo_net(const char *arg, int nodes, int p2p,
                        const topo_net *bw, gpu_catalog *cat, llm_err *e)
{
    topo_nodespec spec;
    topo_fabricspec fabric;
    int n;
    if (load_spec(arg, nodes, &spec, &fabric, &n, e))
        return NULL;
    if (p2p >= 0)
        spec.p2p = p2p;
    if (bw)
        topo_net_apply(&spec, bw);
    const gpu_spec *g = NULL;
    for (int i = 0; i < spec.ndev; i++)
        if (spec.dev[i].kind == DEV_GPU) {
            g = cfg_find_gpu(cat, spec.dev[i].model, e);
            if (!g) {
                char m[1200];
                snprintf(m, sizeof m, "%s: devices: %s", spec.path, e->msg);
                err_set(e, "%s", m);
                return NULL;
            }
        }
    char why[512];
    topo *t = topo_build(&spec, g, n, &fabric, why, sizeof why);
    if (!t)
        err_set(e, "%s:%d: links: %s", spec.path, spec.links_line, why);
    return t;
}


/* ---- the experiment API's loader ------------------------------------------ */

static int ld_model(void *ctx, const char *name, model_spec *m, llm_err *e)
{
    (void)ctx;
    return cfg_load_model_named(name, m, e);
}

static int ld_topo_size(void *ctx, const char *cluster, int nodes,
                        exp_topo_size *z, llm_err *e)
{
    (void)ctx;
    return cfg_topo_size(cluster, nodes, z, e);
}

static int ld_cluster(void *ctx, const char *cluster, int nodes,
                      const topo_net *bw, exp_env *v, llm_err *e)
{
    (void)ctx;
    if (cfg_load_catalog(&v->cat, e))
        return -1;
    v->t = cfg_load_topo_net(cluster, nodes, -1, bw, &v->cat, e);
    if (!v->t ||
        cfg_load_cost_calib(cfg_datadir(), &v->cat, v->t->gpu, &v->cc, e) ||
        cfg_load_coll_calib(cfg_datadir(), v->t, &v->kc, e) ||
        cfg_load_idle_w(cfg_datadir(), v->t->gpu, &v->idle_w, e) ||
        cfg_load_bands(cfg_datadir(), &v->bands, e) ||
        cfg_load_overhead(cfg_datadir(), v->t->gpu, &v->ov, e))
        return -1;
    return 0;
}

static int ld_stack(void *ctx, const char *name, stack_spec *st, llm_err *e)
{
    (void)ctx;
    return cfg_load_stack_named(name, st, e);
}

static int ld_engine(void *ctx, const char *name, eprof *en, llm_err *e)
{
    (void)ctx;
    return cfg_load_engine_named(name, en, e);
}

/* A relative path is taken from the working directory, else from the data
 * directory (where configs/traces/ lives). */
void cfg_data_path(const char *in, char *out, size_t len)
{
    snprintf(out, len, "%s", in);
    if (in[0] == '/' || access(in, R_OK) == 0)
        return;
    snprintf(out, len, "%s/%s", cfg_datadir(), in);
    if (access(out, R_OK) != 0)
        snprintf(out, len, "%s", in);
}

static void ld_path(void *ctx, const char *in, char *out, size_t len)
{
    (void)ctx;
    cfg_data_path(in, out, len);
}

static int ld_node_econ(void *ctx, const char *node, const char *gpu,
                        econ_params *p, econ_sources *s, llm_err *e)
{
    (void)ctx;
    return cfg_load_node_econ(cfg_datadir(), node, gpu, p, s, e);
}

const exp_loader *cfg_loader(void)
{
    static const exp_loader ld = {NULL,       ld_model,  ld_topo_size,
                                  ld_cluster, ld_stack,  ld_engine,
                                  ld_path,    ld_node_econ};
    return &ld;
}
