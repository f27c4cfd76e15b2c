/* Fuzz target: a training experiment file (configs/train-*.cfg) through
 * cfg_load_experiment.  Lines "#set KEY=VALUE" (comments to libconfig)
 * become --set overrides, so cfgu_apply_set is fuzzed on the same file. */
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
    cfg_experiment x;
    memset(&x, 0, sizeof x);
    plan_train_defaults(&x.plan);
    train_loader_defaults(&x.loader);
    llm_err e = {{0}};
    fz_report("experiment", cfg_load_experiment(p, sets, nsets, &x, &e), &e);
    free(text);
    return 0;
}
