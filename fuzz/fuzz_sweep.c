/* Fuzz target: sweep specifications.  The first byte picks what the rest
 * is (its value mod 3; seeds start with the digit):
 *
 *   0  --vary specs, one per line, through sweep_add_axis into one sweep,
 *      then the values of its first and last points;
 *   1  an experiment file with a sweep = { vary; out; } group, through
 *      cfg_sweep_read_group, each vary through sweep_add_axis as `llmsim
 *      sweep` does;
 *   2  an existing result CSV, resumed by rsweep_open for a fixed sweep
 *      (parallel.tp=1,2,4 x nodes=1:8:*2, fingerprint 0123456789abcdef),
 *      then one more row appended and the file rewritten in point order. */
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "report/rsweep.h"
#include "fuzz_util.h"
#include "decide/sweep.h"

static void points(const sweep_spec *s)
{
    char buf[300];
    for (int a = 0; a < s->naxes; a++) {
        sweep_set(s, 0, a, buf, sizeof buf);
        sweep_set(s, s->npoints - 1, a, buf, sizeof buf);
    }
}

static void vary_lines(const uint8_t *data, size_t size)
{
    char *text = fz_strndup(data, size);
    sweep_spec s = {0};
    llm_err e;
    int n = 0;
    for (char *p = text; p && n < 8; n++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (fz_report("vary", sweep_add_axis(&s, p, &e), &e))
            break;
        p = nl ? nl + 1 : NULL;
    }
    points(&s);
    sweep_free(&s);
    free(text);
}

static void group(const uint8_t *data, size_t size)
{
    const char *p = fz_write("sweep.cfg", data, size);
    if (!p)
        return;
    cfg_sweep_group g;
    llm_err e;
    if (fz_report("group", cfg_sweep_read_group(p, &g, &e), &e))
        return;
    sweep_spec s = {0};
    for (int i = 0; i < g.nvary; i++)
        if (sweep_add_axis(&s, g.vary[i], &e))
            break;
    points(&s);
    sweep_free(&s);
    cfg_sweep_group_free(&g);
}

static void resume(const uint8_t *data, size_t size)
{
    static sweep_spec s;
    llm_err e;
    if (s.naxes == 0) {
        if (sweep_add_axis(&s, "parallel.tp=1,2,4", &e) ||
            sweep_add_axis(&s, "nodes=1:8:*2", &e)) {
            fprintf(stderr, "fuzz_sweep: %s\n", e.msg);
            abort(); /* the harness's own spec */
        }
        snprintf(s.id, sizeof s.id, "0123456789abcdef");
    }
    const char *p = fz_write("sweep.csv", data, size);
    if (!p)
        return;
    rsweep_file f;
    if (fz_report("rsweep_open", rsweep_open(&f, p, &s, &e), &e))
        return;
    long todo = 0;
    while (todo < s.npoints && f.done[todo])
        todo++;
    if (todo < s.npoints) {
        json_t *j = json_pack("{s:f, s:{s:i}, s:s}", "step_s", 1.5, "mem",
                              "peak", 3, "name", "x,\"y\"");
        if (rsweep_append(&f, todo, j, NULL, &e) == 0)
            fz_report("rsweep_finish", rsweep_finish(&f, &e), &e);
        json_decref(j);
    }
    rsweep_close(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0: vary_lines(data + 1, size - 1); break;
    case 1: group(data + 1, size - 1); break;
    default: resume(data + 1, size - 1); break;
    }
    return 0;
}
