#include "report/rgpus.h"

#include "report/rjson.h"

/* A dense peak in TFLOP/s, or "-" where the GPU has no tensor-core path
 * for the dtype (a zero in gpus.cfg). */
static void tf(char *buf, size_t n, double flops)
{
    if (flops > 0)
        snprintf(buf, n, "%.1f", flops / 1e12);
    else
        snprintf(buf, n, "-");
}

static void list_row(FILE *fp, const gpu_spec *g)
{
    char bf[16], f8[16], price[16];
    tf(bf, sizeof bf, g->peak_flops[DT_BF16]);
    tf(f8, sizeof f8, g->peak_flops[DT_FP8]);
    if (g->price_usd > 0)
        snprintf(price, sizeof price, "%.0f", g->price_usd);
    else
        snprintf(price, sizeof price, "n/a");
    fprintf(fp, "%-16s %-8s %-10s %7.1f %-7s %8.2f %8s %8s %8.0f %5.0f %8s\n",
            g->name, g->form_factor, g->architecture,
            g->memory_bytes / (1024.0 * 1024 * 1024), g->memory_type,
            g->mem_bw_Bps / 1e12, bf, f8, g->nvlink_Bps / 1e9, g->tdp_w,
            price);
}

void rgpus_list_text(FILE *fp, const gpu_catalog *c)
{
    fprintf(fp, "%-16s %-8s %-10s %7s %-7s %7s %8s %8s %8s %5s %8s\n", "gpu",
            "class", "arch", "mem GiB", "type", "mem TB/s", "BF16 TF",
            "FP8 TF", "NVL GB/s", "TDP W", "price $");
    for (int i = 0; i < c->n; i++)
        list_row(fp, &c->gpus[i]);
    fprintf(fp, "\nDense tensor-core peaks (no sparsity). Sources: %s "
            "(`source` of each entry).\n", c->path);
}

static json_t *gpu_json(const gpu_spec *g)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(g->name));
    json_object_set_new(o, "display", json_string(g->display));
    json_object_set_new(o, "architecture", json_string(g->architecture));
    json_object_set_new(o, "sm", json_integer(g->sm));
    json_object_set_new(o, "form_factor", json_string(g->form_factor));
    json_object_set_new(o, "memory_bytes", rjson_bytes(g->memory_bytes));
    json_object_set_new(o, "memory_type", json_string(g->memory_type));
    json_object_set_new(o, "memory_bw_GBps", json_real(g->mem_bw_Bps / 1e9));
    json_t *t = json_object();
    for (int d = 0; d < DT_COUNT; d++)
        if (g->peak_flops[d] > 0)
            json_object_set_new(t, dtype_name((dtype)d),
                                json_real(g->peak_flops[d] / 1e12));
    json_object_set_new(o, "tflops_dense", t);
    json_object_set_new(o, "nvlink_GBps", json_real(g->nvlink_Bps / 1e9));
    json_object_set_new(o, "pcie_gen", json_integer(g->pcie_gen));
    json_object_set_new(o, "pcie_lanes", json_integer(g->pcie_lanes));
    json_object_set_new(o, "tdp_w", json_real(g->tdp_w));
    json_object_set_new(o, "price_usd", json_real(g->price_usd));
    json_t *caps = json_array();
    for (int b = 0; b < GPU_CAP_COUNT; b++)
        if (g->caps & (1u << b))
            json_array_append_new(caps, json_string(gpu_cap_name(b)));
    json_object_set_new(o, "caps", caps);
    json_object_set_new(o, "source", json_string(g->source));
    return o;
}

json_t *rgpus_json(const gpu_spec *const *g, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, gpu_json(g[i]));
    return a;
}

json_t *rgpus_catalog_json(const gpu_catalog *c)
{
    json_t *a = json_array();
    for (int i = 0; i < c->n; i++)
        json_array_append_new(a, gpu_json(&c->gpus[i]));
    return a;
}

/* ---- the comparison: one cell writer per row --------------------------- */

typedef void (*row_fn)(const gpu_spec *g, char *buf, size_t n);

#define ROW(fname, ...)                                                     \
    static void fname(const gpu_spec *g, char *b, size_t n)                 \
    {                                                                       \
        __VA_ARGS__;                                                        \
    }

ROW(r_arch, snprintf(b, n, "%s (sm_%d)", g->architecture, g->sm))
ROW(r_form, snprintf(b, n, "%s", g->form_factor))
ROW(r_mem, snprintf(b, n, "%.1f GiB %s", g->memory_bytes / (1 << 30),
                    g->memory_type))
ROW(r_bw, snprintf(b, n, "%.0f GB/s", g->mem_bw_Bps / 1e9))
ROW(r_fp64, tf(b, n, g->peak_flops[DT_FP64]))
ROW(r_fp32, tf(b, n, g->peak_flops[DT_FP32]))
ROW(r_tf32, tf(b, n, g->peak_flops[DT_TF32]))
ROW(r_fp16, tf(b, n, g->peak_flops[DT_FP16]))
ROW(r_bf16, tf(b, n, g->peak_flops[DT_BF16]))
ROW(r_fp8, tf(b, n, g->peak_flops[DT_FP8]))
ROW(r_int8, tf(b, n, g->peak_flops[DT_INT8]))
ROW(r_fp4, tf(b, n, g->peak_flops[DT_FP4]))
ROW(r_nvl, if (g->nvlink_gen) snprintf(b, n, "gen%d x%d, %.0f GB/s",
                                        g->nvlink_gen, g->nvlink_links,
                                        g->nvlink_Bps / 1e9);
    else snprintf(b, n, "none"))
ROW(r_pcie, snprintf(b, n, "gen%d x%d (%.0f GB/s/dir)", g->pcie_gen,
                     g->pcie_lanes, gpu_pcie_Bps(g) / 1e9))
ROW(r_tdp, snprintf(b, n, "%.0f W", g->tdp_w))
ROW(r_ecc, snprintf(b, n, "%s", g->ecc ? "yes" : "no"))
ROW(r_price, if (g->price_usd > 0) snprintf(b, n, "$%.0f", g->price_usd);
    else snprintf(b, n, "n/a"))
ROW(r_bfa, snprintf(b, n, "%s / %s", gpu_has(g, GPU_CAP_BF16) ? "yes" : "no",
                    gpu_has(g, GPU_CAP_FLASH_ATTN) ? "yes" : "no"))
ROW(r_fp8mig, snprintf(b, n, "%s / %s", gpu_has(g, GPU_CAP_FP8) ? "yes" : "no",
                       gpu_has(g, GPU_CAP_MIG) ? "yes" : "no"))
ROW(r_perkw, snprintf(b, n, "%.0f",
                      g->peak_flops[DT_FP16] / 1e12 / (g->tdp_w / 1000)))
ROW(r_perk, if (g->price_usd > 0) snprintf(b, n, "%.1f",
                                            g->peak_flops[DT_FP16] / 1e12 /
                                                (g->price_usd / 1000));
    else snprintf(b, n, "n/a"))
ROW(r_ratio, snprintf(b, n, "%.0f", g->peak_flops[DT_FP16] / g->mem_bw_Bps))

#undef ROW

static const struct {
    const char *label;
    row_fn fn;
} rows[] = {
    {"architecture", r_arch},       {"form factor", r_form},
    {"memory", r_mem},              {"memory bandwidth", r_bw},
    {"FP64 TFLOP/s", r_fp64},       {"FP32 TFLOP/s", r_fp32},
    {"TF32 tensor TFLOP/s", r_tf32}, {"FP16 tensor TFLOP/s", r_fp16},
    {"BF16 tensor TFLOP/s", r_bf16}, {"FP8 tensor TFLOP/s", r_fp8},
    {"INT8 tensor TOPS", r_int8},   {"FP4 tensor TFLOP/s", r_fp4},
    {"NVLink", r_nvl},
    {"PCIe", r_pcie},               {"TDP", r_tdp},
    {"ECC", r_ecc},                 {"price (USD)", r_price},
    {"BF16 / FlashAttention", r_bfa}, {"FP8 / MIG", r_fp8mig},
    {"FP16 TFLOP/s per kW", r_perkw}, {"FP16 TFLOP/s per $1000", r_perk},
    {"FLOP per byte of HBM", r_ratio},
};

void rgpus_compare_text(FILE *fp, const gpu_spec *const *g, int n)
{
    fprintf(fp, "%-24s", "");
    for (int i = 0; i < n; i++)
        fprintf(fp, " %-22s", g[i]->name);
    fprintf(fp, "\n");
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        fprintf(fp, "%-24s", rows[r].label);
        for (int i = 0; i < n; i++) {
            char b[64];
            rows[r].fn(g[i], b, sizeof b);
            fprintf(fp, " %-22s", b);
        }
        fprintf(fp, "\n");
    }
    fprintf(fp, "\nTensor-core peaks are dense (no 2:4 sparsity); FP16 is with "
            "FP32 accumulate.\n");
}
