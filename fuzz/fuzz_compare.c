/* Fuzz target: a compare file (configs/compare-*.cfg) through
 * cfg_compare_load, the loader of `llmsim compare`. */
#include "cfg/cfg.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("compare.cfg", data, size);
    if (!p)
        return 0;
    static exp_compare f; /* 50 KB: not on the stack */
    llm_err e = {{0}};
    fz_report("compare", cfg_compare_load(p, &f, &e), &e);
    return 0;
}
