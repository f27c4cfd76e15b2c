/* The sweep group an experiment file may carry, as `llmsim sweep` reads
 * it: sweep = { vary = ( "KEY=VALUES", ... ); out = "FILE.csv"; }. */
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_util.h"

/* The sweep group of the file, and whether it is a serving experiment. */
int cfg_sweep_read_group(const char *path, cfg_sweep_group *g, llm_err *e)
{
    memset(g, 0, sizeof *g);
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    g->serve = config_setting_get_member(r, "serving") != NULL;
    config_setting_t *sw;
    if (cfgu_group(&c, r, "sweep", &sw))
        goto out;
    if (sw) {
        static const char *const keys[] = {"vary", "out"};
        if (cfgu_check_keys(&c, sw, keys, 2))
            goto out;
        const config_setting_t *v = config_setting_get_member(sw, "vary");
        if (v && !config_setting_is_list(v) && !config_setting_is_array(v)) {
            err_at(e, path, cfgu_line(v), "sweep.vary",
                   "expected a list of \"KEY=VALUES\" strings");
            goto out;
        }
        int n = v ? config_setting_length(v) : 0;
        g->vary = calloc((size_t)(n ? n : 1), sizeof(char *));
        g->vary_line = calloc((size_t)(n ? n : 1), sizeof(int));
        if (!g->vary || !g->vary_line) {
            err_set(e, "%s: out of memory", path);
            goto out;
        }
        for (int i = 0; i < n; i++) {
            const char *s = config_setting_get_string_elem(v, i);
            if (!s) {
                err_at(e, path, cfgu_line(v), "sweep.vary",
                       "expected a list of \"KEY=VALUES\" strings");
                goto out;
            }
            if (!(g->vary[g->nvary] = strdup(s))) {
                err_set(e, "%s: out of memory", path);
                goto out;
            }
            g->vary_line[g->nvary] =
                cfgu_line(config_setting_get_elem(v, (unsigned)i));
            g->nvary++;
        }
        const char *o;
        if (config_setting_lookup_string(sw, "out", &o)) {
            snprintf(g->out, sizeof g->out, "%s", o);
            g->has_out = true;
        }
    }
    rc = 0;
out:
    config_destroy(&cfg);
    if (rc)
        cfg_sweep_group_free(g);
    return rc;
}

void cfg_sweep_group_free(cfg_sweep_group *g)
{
    for (int i = 0; i < g->nvary; i++)
        free(g->vary[i]);
    free(g->vary);
    free(g->vary_line);
    memset(g, 0, sizeof *g);
}

