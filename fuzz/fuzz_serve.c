/* Fuzz target: a serving experiment file (configs/serve-*.cfg) through
 * cfg_exp_read, "#set KEY=VALUE" lines as --set overrides (as in
 * fuzz_train.c), then its arrival process and length specs through the
 * parsers `llmsim serve` hands them to (but not "empirical:PATH", which
 * would read whatever file the input names: fuzz_lens covers it). */
#include <string.h>

#include "cfg/cfg.h"
#include "fuzz_util.h"
#include "serve/wl.h"

static void length(const char *spec, int col)
{
    if (!spec[0] || strncmp(spec, "empirical", 9) == 0)
        return;
    wl_len l;
    llm_err e;
    if (fz_report("length", wl_len_parse("prompt_len", spec, col, &l, &e),
                  &e) == 0)
        wl_len_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("serve.cfg", data, size);
    if (!p)
        return 0;
    char *text = fz_strndup(data, size);
    const char *sets[8];
    int nsets = fz_find_sets(text, sets, 8);
    static exp_serve x;
    exp_serve_defaults(&x);
    llm_err e = {{0}};
    int rc = cfg_exp_read(p, EXP_SERVE, &x, &e);
    char why[1400];
    for (int i = 0; rc == 0 && i < nsets; i++)
        if (settings_apply(EXP_SERVE, &x, x.h.src, sets[i], why, sizeof why))
            rc = err_set(&e, "--set %s", why);
    if (fz_report("serving", rc, &e) == 0) {
        length(x.prompt_len, 0);
        length(x.output_len, 1);
    }
    free(text);
    return 0;
}
