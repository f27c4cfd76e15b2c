/* Fuzz target: a training experiment file (configs/train-*.cfg) through
 * cfg_exp_read and the settings table.  Lines "#set KEY=VALUE" (comments
 * to libconfig) become --set assignments, applied after the file as
 * `llmsim train` applies them. */
#include <string.h>

#include "cfg/cfg.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("train.cfg", data, size);
    if (!p)
        return 0;
    char *text = fz_strndup(data, size);
    const char *sets[8];
    int nsets = fz_find_sets(text, sets, 8);
    static exp_train x;
    exp_train_defaults(&x);
    llm_err e = {{0}};
    int rc = cfg_exp_read(p, EXP_TRAIN, &x, &e);
    char why[1400];
    for (int i = 0; rc == 0 && i < nsets; i++)
        if (settings_apply(EXP_TRAIN, &x, x.h.src, sets[i], why, sizeof why))
            rc = err_set(&e, "--set %s", why);
    fz_report("experiment", rc, &e);
    free(text);
    return 0;
}
