/* Idle power per GPU (calib/power.tsv), for the power model of training
 * and serving. */
#include <string.h>

#include "base/tsv.h"
#include "cfg/cfg.h"

int cfg_load_idle_w(const char *datadir, const gpu_spec *g, double *idle_w,
                    llm_err *e)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/calib/power.tsv", datadir);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    int rc = -1, cg = tsv_col(&t, "gpu", e), cw, cf;
    if (cg < 0 || (cw = tsv_col(&t, "idle_w", e)) < 0 ||
        (cf = tsv_col(&t, "idle_frac_of_tdp", e)) < 0)
        goto out;
    int star = -1, row = -1;
    for (int i = 0; i < t.rows; i++) {
        if (strcmp(tsv_get(&t, i, cg), g->name) == 0)
            row = i;
        if (strcmp(tsv_get(&t, i, cg), "*") == 0)
            star = i;
    }
    double w, f;
    if (row < 0 && star < 0) {
        err_set(e, "%s: no row for %s and no '*' row", path, g->name);
        goto out;
    }
    int use = row >= 0 ? row : star;
    if (tsv_num(&t, use, cw, 0, 1e4, &w, e) ||
        tsv_num(&t, use, cf, 0, 1, &f, e))
        goto out;
    *idle_w = w > 0 ? w : f * g->tdp_w;
    rc = 0;
out:
    tsv_free(&t);
    return rc;
}
