/* Compare files (`llmsim compare`): the scalars through the settings
 * table (description, training, serving, train_tokens, search,
 * economics.*), and the clusters list by hand:
 *   clusters = ( { name = "8 x A100"; cluster = "dgx-a100"; gpus = 8;
 *                  set = ( "serving.dtype=fp8" ); }, ... ); */
#include <libconfig.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_util.h"

/* An int of a cluster entry, with the bounds of the setting it stands for
 * ("gpus", "nodes"). */
static int entry_int(cfgu *c, const config_setting_t *g, const char *key,
                     int *out)
{
    const setting *s = settings_by_key(EXP_TRAIN, key);
    return cfgu_int(c, g, key, false, (long)s->lo, (long)s->hi, out);
}

static int load_sets(cfgu *c, const config_setting_t *g,
                     exp_compare_cluster *s)
{
    const config_setting_t *set = config_setting_get_member(g, "set");
    if (!set)
        return 0;
    int n = config_setting_length(set);
    if ((!config_setting_is_list(set) && !config_setting_is_array(set)) ||
        n > EXP_COMPARE_SETS)
        n = -1;
    for (int i = 0; i < n; i++) {
        const char *v = config_setting_get_string_elem(set, i);
        if (!v || strlen(v) >= sizeof s->sets[0]) {
            n = -1;
            break;
        }
        snprintf(s->sets[s->nsets], sizeof s->sets[0], "%s", v);
        s->sets_line[s->nsets++] = cfgu_line(
            config_setting_get_elem(set, (unsigned)i));
    }
    if (n < 0)
        return err_at(c->e, cfgu_file(c, set), cfgu_line(set), "set", "expected a list "
                      "of at most %d \"KEY=VALUE\" strings of at most %zu "
                      "characters", EXP_COMPARE_SETS, sizeof s->sets[0] - 1);
    return 0;
}

static int load_cluster(cfgu *c, const config_setting_t *g,
                        exp_compare_cluster *s)
{
    static const char *const keys[] = {"name", "cluster", "gpus", "nodes",
                                       "set"};
    s->line = cfgu_line(g);
    if (cfgu_check_keys(c, g, keys, 5) ||
        cfgu_str(c, g, "cluster", true, s->cluster, sizeof s->cluster) ||
        cfgu_str(c, g, "name", false, s->name, sizeof s->name) ||
        entry_int(c, g, "gpus", &s->gpus) ||
        entry_int(c, g, "nodes", &s->nodes) || load_sets(c, g, s))
        return -1;
    /* a cluster that does not exist is a mistake in this file, not a
     * cluster that cannot run the workload */
    exp_topo_size z;
    llm_err why = {{0}};
    if (cfg_topo_size(s->cluster, 0, &z, &why)) {
        const char *m = why.msg;
        if (strncmp(m, "--cluster: ", 11) == 0)
            m += 11;
        return err_at(c->e, cfgu_file(c, config_setting_get_member(g, "cluster")),
                      cfgu_line(config_setting_get_member(g, "cluster")),
                      "cluster", "%s", m);
    }
    if (!s->name[0]) { /* a cluster's name is its cluster, cut to fit */
        size_t n = strnlen(s->cluster, sizeof s->name - 1);
        memcpy(s->name, s->cluster, n);
        s->name[n] = '\0';
    }
    return 0;
}

/* Each cluster's results are shown (and told apart) under its name. */
static int unique_name(cfgu *c, const config_setting_t *g,
                       const exp_compare *f)
{
    const exp_compare_cluster *last = &f->c[f->n - 1];
    for (int i = 0; i < f->n - 1; i++)
        if (strcmp(f->c[i].name, last->name) == 0)
            return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "name",
                          "\"%s\" names line %d's cluster too (expected a "
                          "name per cluster: name = \"...\";)", last->name,
                          f->c[i].line);
    return 0;
}

static int load_clusters(cfgu *c, const config_setting_t *r, exp_compare *f)
{
    const config_setting_t *cl = config_setting_get_member(r, "clusters");
    if (!cl || !config_setting_is_list(cl) || config_setting_length(cl) < 2 ||
        config_setting_length(cl) > EXP_COMPARE_MAX)
        return err_at(c->e, cfgu_file(c, cl), cl ? cfgu_line(cl) : 1, "clusters",
                      "expected a list of 2 to %d groups ( { name = ...; "
                      "cluster = ...; gpus = ...; }, ... )", EXP_COMPARE_MAX);
    for (int i = 0; i < config_setting_length(cl); i++) {
        const config_setting_t *g = config_setting_get_elem(cl, (unsigned)i);
        if (!config_setting_is_group(g))
            return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "clusters", "entry %d "
                          "is not a group (expected { name = ...; cluster = "
                          "...; })", i + 1);
        if (load_cluster(c, g, &f->c[f->n++]) ||
            unique_name(c, g, f))
            return -1;
    }
    return 0;
}

int cfg_compare_load(const char *path, exp_compare *f, llm_err *e)
{
    exp_compare_defaults(f);
    snprintf(f->h.file, sizeof f->h.file, "%s", path);
    if (cfg_exp_read(path, EXP_COMPARE, f, e))
        return -1;
    if (!f->training[0] && !f->serving[0])
        return err_at(e, path, 1, "training", "missing, and so is serving "
                      "(expected training = \"EXPERIMENT.cfg\"; or serving = "
                      "\"...\";)");
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = cfgu_read(&c, &cfg) ||
             load_clusters(&c, config_root_setting(&cfg), f);
    config_destroy(&cfg);
    return rc ? -1 : 0;
}

int cfg_compare_econ(exp_compare *f, llm_err *e)
{
    econ_params d;
    if (cfg_load_econ(cfg_datadir(), &d, e))
        return -1;
    econ_params *p = &f->econ;
    if (p->amortization_years < 0)
        p->amortization_years = d.amortization_years;
    if (p->usd_per_kwh < 0)
        p->usd_per_kwh = d.usd_per_kwh;
    if (p->pue < 0)
        p->pue = d.pue;
    if (p->hosting_usd_per_kw_month < 0)
        p->hosting_usd_per_kw_month = d.hosting_usd_per_kw_month;
    return 0;
}
