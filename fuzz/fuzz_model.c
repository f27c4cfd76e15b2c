/* Fuzz target: a llmsim model file (models/NAME.cfg) through
 * cfg_load_model, then the derived sizes a valid model feeds everything
 * else (parameter counts, FLOPs, KV bytes), which must not overflow. */
#include "cfg/cfg.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("model.cfg", data, size);
    if (!p)
        return 0;
    model_spec m;
    llm_err e = {{0}};
    if (fz_report("model", cfg_load_model(p, &m, &e), &e) == 0) {
        volatile double s = model_params_total(&m) + model_params_active(&m) +
                            model_flops_per_token_fwd(&m, m.max_seq) +
                            model_kv_bytes_per_token(&m, DT_BF16);
        (void)s;
    }
    return 0;
}
