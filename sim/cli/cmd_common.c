#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg/cfg.h"
#include "cli/cmd.h"
#include "base/util.h"

#ifndef LLMSIM_DATADIR
#define LLMSIM_DATADIR "/usr/local/share/llmsim"
#endif

static int has_catalog(const char *dir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/topologies/gpus.cfg", dir);
    return access(p, R_OK) == 0;
}

const char *cmd_datadir(void)
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

int cmd_load_catalog(gpu_catalog *c, llm_err *e)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/topologies/gpus.cfg", cmd_datadir());
    return cfg_load_gpus(p, cmd_datadir(), c, e);
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
    snprintf(dir, sizeof dir, "%s/%s", cmd_datadir(), sub);
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

int cmd_load_model(const char *arg, model_spec *m, llm_err *e)
{
    if (is_path(arg))
        return cfg_load_model(arg, m, e);
    char p[PATH_MAX + 128];
    snprintf(p, sizeof p, "%s/models/%s.cfg", cmd_datadir(), arg);
    if (access(p, R_OK) == 0)
        return cfg_load_model(p, m, e);
    char hint[160];
    data_hint("models", arg, hint, sizeof hint);
    return err_set(e, "--model: unknown model \"%s\"%s (expected a name "
                      "from %s/models/, a .cfg path or a Hugging Face "
                      "config.json; `llmsim model --list` lists them)",
                   arg, hint, cmd_datadir());
}

const gpu_spec *cmd_find_gpu(gpu_catalog *c, const char *arg, llm_err *e)
{
    if (is_path(arg)) {
        gpu_catalog extra;
        if (cfg_load_gpus(arg, cmd_datadir(), &extra, e))
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

void cmd_print_json(json_t *j)
{
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                              JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(j);
}

json_t *cmd_json_bytes(double bytes)
{
    return json_integer((json_int_t)llround(bytes));
}

int cmd_bad_option(const char *cmd, const char *arg, const void *longopts,
                   llm_err *e)
{
    const struct option *o = longopts;
    const char *names[128];
    int n = 0;
    for (; o->name && n < 128; o++)
        names[n++] = o->name;
    const char *word = arg;
    while (*word == '-')
        word++;
    char w[64];
    snprintf(w, sizeof w, "%s", word);
    char *eq = strchr(w, '=');
    if (eq)
        *eq = '\0';
    const char *s = util_suggest(w, names, n);
    if (s)
        return err_set(e, "%s: unknown option \"%s\" (did you mean --%s?); "
                          "see `llmsim help %s`",
                       cmd, arg, s, cmd);
    return err_set(e, "%s: unknown option \"%s\"; see `llmsim help %s`", cmd,
                   arg, cmd);
}

int cmd_getopt(const char *cmd, int argc, char **argv, const void *longopts,
               int (*one)(void *ctx, int ch, const char *v, llm_err *e),
               void *ctx, llm_err *e)
{
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        if (ch == ':')
            return err_set(e, "option %s needs a value (see `llmsim help "
                              "%s`)", argv[optind - 1], cmd);
        if (ch == '?')
            return cmd_bad_option(cmd, argv[optind - 1], longopts, e);
        if (one(ctx, ch, optarg, e))
            return -1;
    }
    return 0;
}

int cmd_pick(const char *opt, const char *v, const char *const *names, int n,
             int *out, llm_err *e)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char hint[96], all[200] = "";
    util_did_you_mean(hint, sizeof hint, v, names, n);
    for (int i = 0; i < n; i++) {
        strncat(all, names[i], sizeof all - strlen(all) - 2);
        if (i + 1 < n)
            strncat(all, "|", sizeof all - strlen(all) - 1);
    }
    return err_set(e, "%s: unknown value \"%s\"%s (expected %s)", opt, v,
                   hint, all);
}

int cmd_int_opt(const char *opt, const char *v, long lo, long hi, int *out,
                llm_err *e)
{
    long x;
    if (util_parse_int(opt, v, lo, hi, &x, e))
        return -1;
    *out = (int)x;
    return 0;
}

topo *cmd_load_topo(const char *arg, int nodes, int p2p, gpu_catalog *cat,
                    llm_err *e)
{
    return cmd_load_topo_net(arg, nodes, p2p, NULL, cat, e);
}

/* The node spec, fabric and node count of a --cluster argument. */
static int load_spec(const char *arg, int nodes, topo_nodespec *spec,
                     topo_fabricspec *fabric, int *n, llm_err *e)
{
    char path[PATH_MAX + 64];
    if (is_path(arg))
        snprintf(path, sizeof path, "%s", arg);
    else
        snprintf(path, sizeof path, "%s/topologies/%s.cfg", cmd_datadir(),
                 arg);
    if (!is_path(arg) && access(path, R_OK) != 0) {
        char hint[160];
        data_hint("topologies", arg, hint, sizeof hint);
        return err_set(e, "--cluster: unknown topology \"%s\"%s (expected "
                          "a name from %s/topologies/ or a path)", arg, hint,
                       cmd_datadir());
    }
    *n = 1;
    if (cfg_load_topology(path, cmd_datadir(), spec, n, fabric, e))
        return -1;
    if (nodes > 0)
        *n = nodes;
    return 0;
}

int cmd_topo_size(const char *arg, int nodes, cmd_topo_size_t *out,
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
    }
    /* a link template joins up to every pair of its two groups */
    for (int i = 0; i < spec.nlink; i++)
        out->nlink += spec.dev[spec.link[i].a].count;
    return 0;
}

topo *cmd_load_topo_net(const char *arg, int nodes, int p2p,
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
            g = cmd_find_gpu(cat, spec.dev[i].model, e);
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

json_t *cmd_json_link(const topo *t, int link, double bytes, double utilization)
{
    const topo_link *L = &t->link[link];
    json_t *o = json_object();
    json_object_set_new(o, "src", json_string(t->dev[L->src].name));
    json_object_set_new(o, "dst", json_string(t->dev[L->dst].name));
    json_object_set_new(o, "kind", json_string(topo_link_kind_name(L->kind)));
    json_object_set_new(o, "bytes", json_real(bytes));
    json_object_set_new(o, "utilization", json_real(utilization));
    return o;
}

json_t *cmd_json_plan(const plan_train *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "tp", json_integer(p->tp));
    json_object_set_new(o, "pp", json_integer(p->pp));
    json_object_set_new(o, "dp", json_integer(p->dp));
    json_object_set_new(o, "cp", json_integer(p->cp));
    json_object_set_new(o, "ep", json_integer(p->ep));
    json_object_set_new(o, "sp", json_boolean(p->sp));
    json_object_set_new(o, "micro_batch", json_integer(p->micro_batch));
    json_object_set_new(o, "global_batch", json_integer(p->global_batch));
    json_object_set_new(o, "seq_len", json_integer(p->seq_len));
    json_object_set_new(o, "zero", json_integer(p->zero));
    json_object_set_new(o, "recompute",
                        json_string(plan_recompute_names[p->recompute]));
    json_object_set_new(o, "schedule",
                        json_string(plan_schedule_names[p->schedule]));
    json_object_set_new(o, "vpp", json_integer(p->vpp));
    json_object_set_new(o, "precision", json_string(dtype_name(p->precision)));
    if (p->lora_rank > 0)
        json_object_set_new(o, "lora_rank", json_integer(p->lora_rank));
    return o;
}

int cmd_env_load(cmd_env *v, const char *model, const char *cluster,
                 int nodes, const topo_net *bw, llm_err *e)
{
    memset(v, 0, sizeof *v);
    if (cmd_load_model(model, &v->m, e) || cmd_load_catalog(&v->cat, e))
        return -1;
    v->t = cmd_load_topo_net(cluster, nodes, -1, bw, &v->cat, e);
    if (!v->t || cfg_load_cost_calib(cmd_datadir(), &v->cat, v->t->gpu, &v->cc, e) ||
        cfg_load_coll_calib(cmd_datadir(), v->t, &v->kc, e) ||
        cfg_load_idle_w(cmd_datadir(), v->t->gpu, &v->idle_w, e) ||
        cfg_load_overhead(cmd_datadir(), v->t->gpu, &v->ov, e)) {
        cmd_env_free(v);
        return -1;
    }
    return 0;
}

void cmd_env_free(cmd_env *v)
{
    cost_calib_free(&v->cc);
    topo_destroy(v->t);
    v->t = NULL;
    gpu_catalog_free(&v->cat);
}

void cmd_blame_file(const char *file, const char *group, int argc,
                    char **argv, llm_err *e)
{
    char opt[64], key[96];
    if (!file || sscanf(e->msg, "--%62[a-z-]", opt) != 1)
        return;
    size_t n = strlen(opt);
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "--", 2) == 0 &&
            strncmp(argv[i] + 2, opt, n) == 0 &&
            (argv[i][2 + n] == '\0' || argv[i][2 + n] == '='))
            return; /* given on the command line: the option is right */
    static const char *const top[] = {"model", "cluster", "nodes", "gpus"};
    bool at_top = false;
    for (size_t i = 0; i < sizeof top / sizeof *top; i++)
        at_top |= strcmp(opt, top[i]) == 0;
    if (at_top)
        snprintf(key, sizeof key, "%s", opt);
    else
        snprintf(key, sizeof key, "%s.%s", group, opt);
    for (char *c = key; *c; c++)
        if (*c == '-')
            *c = '_';
    char m[sizeof e->msg];
    size_t k = strlen(key);
    /* "--tp 3 does not ..." or "--model: unknown ...": what follows */
    const char *rest = e->msg + 2 + n + (e->msg[2 + n] == ':');
    for (int i = 0; i < argc; i++) {
        const char *a = strncmp(argv[i], "--set=", 6) == 0 ? argv[i] + 6
                                                           : argv[i];
        if (strncmp(a, key, k) == 0 && a[k] == '=') {
            snprintf(m, sizeof m, "--set %s:%s", key, rest);
            err_set(e, "%s", m);
            return;
        }
    }
    int line = cfg_key_line(file, key);
    if (line <= 0)
        return;
    snprintf(m, sizeof m, "%s:%d: %s:%s", file, line, key, rest);
    err_set(e, "%s", m);
}
