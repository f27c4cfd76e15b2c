/* gpu — the GPU catalog: datasheet figures of each GPU model, loaded from
 * topologies/gpus.cfg by cfg.c.  No hardware number lives in C. */
#ifndef LLMSIM_GPU_H
#define LLMSIM_GPU_H

#include <stdbool.h>

#include "base/dtype.h"

enum {
    GPU_CAP_BF16 = 1u << 0,
    GPU_CAP_TF32 = 1u << 1,
    GPU_CAP_FP8 = 1u << 2,
    GPU_CAP_FP4 = 1u << 3,
    GPU_CAP_FLASH_ATTN = 1u << 4,
    GPU_CAP_MIG = 1u << 5,
    GPU_CAP_NVLINK = 1u << 6,
    GPU_CAP_NVLS = 1u << 7,
    GPU_CAP_COUNT = 8
};

typedef struct gpu_spec {
    char name[48];
    char display[96];
    char architecture[24];
    int sm; /* compute capability x 10 */
    char form_factor[16];
    double memory_bytes;
    char memory_type[24];
    double mem_bw_Bps;
    /* dense peak FLOP/s per dtype; 0 = unsupported on tensor cores */
    double peak_flops[DT_COUNT];
    double fp64_tensor_flops;
    int nvlink_gen, nvlink_links;
    double nvlink_Bps; /* total bidirectional per GPU */
    int pcie_gen, pcie_lanes;
    /* the generation's line rate per lane and its encoding (payload bits
     * per line bit), from topologies/pcie.tsv by pcie_gen */
    double pcie_lane_GTps, pcie_encoding;
    double tdp_w;
    int sm_count; /* streaming multiprocessors; 0 = not given */
    double boost_clock_hz; /* SM boost clock; 0 = not given */
    bool ecc;
    double price_usd; /* 0 = none public */
    char price_source[512];
    unsigned caps;
    char source[1536];
} gpu_spec;

typedef struct gpu_catalog {
    gpu_spec *gpus;
    int n;
    char path[1024];
} gpu_catalog;

const gpu_spec *gpu_find(const gpu_catalog *c, const char *name);
void gpu_catalog_free(gpu_catalog *c);

static inline bool gpu_has(const gpu_spec *g, unsigned cap)
{
    return (g->caps & cap) != 0;
}

/* Cap names in bit order ("bf16", "tf32", ...). */
const char *gpu_cap_name(int bit);
/* Bit for a cap name, or 0 when unknown. */
unsigned gpu_cap_parse(const char *s);

/* Whether weights/compute in `d` run natively; when not, *why names what
 * is missing ("no BF16 on Volta"). */
bool gpu_supports_dtype(const gpu_spec *g, dtype d, const char **why);

/* Datasheet PCIe bandwidth per direction, bytes/s: lanes x rate per lane x
 * encoding (0 when the GPU's generation has no figures). */
double gpu_pcie_Bps(const gpu_spec *g);

#endif
