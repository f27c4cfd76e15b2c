/* calib/error-bands.tsv: the error model (decide/band.h), as `make
 * validate` wrote it. */
#include <stdlib.h>
#include <string.h>

#include "base/tsv.h"
#include "cfg/cfg.h"

static int read_row(const tsv *t, int i, const int col[5], band_row *r,
                    double *level, llm_err *e)
{
    const char *f = tsv_get(t, i, col[0]);
    double cases, lv;
    if (strlen(f) >= sizeof r->family || !f[0])
        return err_set(e, "%s:%d: family: \"%s\" is empty or longer than "
                          "%zu characters", t->path, t->line[i], f,
                       sizeof r->family - 1);
    /* 2 to 8 cases: a small family's widened band (decide/band.h) */
    if (tsv_num(t, i, col[1], 2, 1e6, &cases, e) ||
        tsv_num(t, i, col[2], 1e-3, 1e3, &r->lo, e) ||
        tsv_num(t, i, col[3], 1e-3, 1e3, &r->hi, e) ||
        tsv_num(t, i, col[4], 0.5, 0.99, &lv, e))
        return -1;
    if (r->lo > r->hi)
        return err_set(e, "%s:%d: lo: %g above hi %g (expected lo <= hi)",
                       t->path, t->line[i], r->lo, r->hi);
    if (i > 0 && lv != *level)
        return err_set(e, "%s:%d: level: %g, and the rows above say %g "
                          "(expected one level for the table)",
                       t->path, t->line[i], lv, *level);
    snprintf(r->family, sizeof r->family, "%s", f);
    r->cases = (int)cases;
    *level = lv;
    return 0;
}

int cfg_load_bands(const char *datadir, band_table *out, llm_err *e)
{
    memset(out, 0, sizeof *out);
    char path[1100];
    snprintf(path, sizeof path, "%s/calib/error-bands.tsv", datadir);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    int col[5];
    const char *names[5] = {"family", "cases", "lo", "hi", "level"};
    int rc = -1;
    for (int k = 0; k < 5; k++)
        if ((col[k] = tsv_col(&t, names[k], e)) < 0)
            goto out;
    out->row = calloc((size_t)(t.rows ? t.rows : 1), sizeof *out->row);
    if (!out->row) {
        err_set(e, "out of memory");
        goto out;
    }
    for (int i = 0; i < t.rows; i++) {
        if (read_row(&t, i, col, &out->row[i], &out->level, e))
            goto out;
        out->n++;
    }
    rc = 0;
out:
    if (rc)
        band_table_free(out);
    tsv_free(&t);
    return rc;
}
