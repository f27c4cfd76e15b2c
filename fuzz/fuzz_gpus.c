/* Fuzz target: a GPU catalog in the topologies/gpus.cfg format through
 * cfg_load_gpus, and a name lookup in what it loaded. */
#include "cfg/cfg.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("gpus.cfg", data, size);
    if (!p)
        return 0;
    gpu_catalog c;
    llm_err e = {{0}};
    if (fz_report("gpus", cfg_load_gpus(p, fz_datadir(), &c, &e), &e) == 0) {
        if (c.n > 0)
            (void)gpu_find(&c, c.gpus[c.n - 1].name);
        gpu_catalog_free(&c);
    }
    return 0;
}
