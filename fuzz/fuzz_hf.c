/* Fuzz target: a Hugging Face config.json through cfg_load_hf_json (and
 * the sizes derived from the model it makes). */
#include "cfg/cfg.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("config.json", data, size);
    if (!p)
        return 0;
    model_spec m;
    llm_err e = {{0}};
    if (fz_report("hf", cfg_load_hf_json(p, &m, &e), &e) == 0) {
        volatile double s = model_params_total(&m) + model_params_active(&m) +
                            model_flops_per_token_fwd(&m, m.max_seq) +
                            model_kv_bytes_per_token(&m, DT_BF16);
        (void)s;
    }
    return 0;
}
