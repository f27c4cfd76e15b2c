#include "hw/gpu.h"

#include <stdlib.h>
#include <string.h>

static const char *const cap_names[GPU_CAP_COUNT] = {
    "bf16", "tf32", "fp8", "fp4", "flash_attention", "mig", "nvlink", "nvls",
};

const gpu_spec *gpu_find(const gpu_catalog *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->gpus[i].name, name) == 0)
            return &c->gpus[i];
    return NULL;
}

void gpu_catalog_free(gpu_catalog *c)
{
    free(c->gpus);
    c->gpus = NULL;
    c->n = 0;
}

const char *gpu_cap_name(int bit) { return cap_names[bit]; }

unsigned gpu_cap_parse(const char *s)
{
    for (int i = 0; i < GPU_CAP_COUNT; i++)
        if (strcmp(s, cap_names[i]) == 0)
            return 1u << i;
    return 0;
}

bool gpu_supports_dtype(const gpu_spec *g, dtype d, const char **why)
{
    static const char *const missing[DT_COUNT] = {
        [DT_BF16] = "no BF16 support",   [DT_TF32] = "no TF32 support",
        [DT_FP8] = "no FP8 tensor cores", [DT_INT8] = "no INT8 tensor cores",
        [DT_INT4] = "no INT4 tensor cores", [DT_FP4] = "no FP4 tensor cores",
    };
    bool ok;
    switch (d) {
    case DT_BF16:
        ok = gpu_has(g, GPU_CAP_BF16);
        break;
    case DT_TF32:
        ok = gpu_has(g, GPU_CAP_TF32);
        break;
    case DT_FP8:
        ok = gpu_has(g, GPU_CAP_FP8);
        break;
    case DT_FP4:
        ok = gpu_has(g, GPU_CAP_FP4);
        break;
    default:
        ok = true; /* fp64/fp32/fp16 everywhere; int8/int4 weight-only
                      quantization runs through dequantizing kernels */
    }
    if (!ok && why)
        *why = missing[d];
    return ok;
}

double gpu_pcie_Bps(const gpu_spec *g)
{
    return g->pcie_lane_GTps * 1e9 / 8.0 * g->pcie_encoding * g->pcie_lanes;
}
