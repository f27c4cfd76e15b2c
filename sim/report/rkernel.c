#include "report/rkernel.h"

#include "report/rjson.h"

/* The op in words: shapes for GEMM and attention, the kind's name for
 * the others. */
static void describe(const cost_op *op, char *b, size_t n)
{
    switch (op->kind) {
    case OP_GEMM:
        snprintf(b, n, "GEMM %.0fx%.0fx%.0f%s", op->m, op->n, op->k,
                 op->batch > 1 ? " (batched)" : "");
        break;
    case OP_ATTN_PREFILL:
    case OP_ATTN_DECODE:
        snprintf(b, n, "attention %s: batch %.0f, %d heads (%d KV), head dim "
                 "%d, %.0f queries over %.0f keys%s%s",
                 op->kind == OP_ATTN_PREFILL ? "prefill" : "decode", op->batch,
                 op->heads, op->kv_heads, op->head_dim,
                 op->kind == OP_ATTN_DECODE ? 1 : op->q_len, op->kv_len,
                 op->causal ? ", causal" : "",
                 op->flash ? ", FlashAttention" : ", unfused");
        break;
    default:
        snprintf(b, n, "%s", cost_kind_name(op->kind));
    }
}

/* Achieved rates over the whole predicted time, launch included. */
static double tflops_of(const cost_result *r)
{
    return r->flops / r->time_s / 1e12;
}

static double GBps_of(const cost_result *r)
{
    return r->bytes / r->time_s / 1e9;
}

const char *rkernel_band_op(const cost_op *op)
{
    return op->kind == OP_ELEMENTWISE ? cost_mem_kind_names[op->mem]
                                      : cost_kind_name(op->kind);
}

void rkernel_text(FILE *fp, const gpu_spec *g, const cost_op *op,
                  const cost_result *r, int tp, double n_unsplit,
                  const band_est *b)
{
    char what[256];
    describe(op, what, sizeof what);
    fprintf(fp, "%s, %s on %s%s\n", what, dtype_name(r->dt), g->name,
            tp > 1 ? " (one GPU's shard)" : "");
    if (tp > 1)
        fprintf(fp, "  tensor parallel %d: N %.0f -> %.0f per GPU\n", tp,
                n_unsplit, op->n);
    if (r->fallback[0])
        fprintf(fp, "  fallback: %s\n", r->fallback);
    fprintf(fp, "  %.4g GFLOP, %.4g MB moved\n", r->flops / 1e9,
            r->bytes / 1e6);
    fprintf(fp, "  roofline: compute %.4g us, memory %.4g us -> %s-bound\n",
            r->compute_s * 1e6, r->memory_s * 1e6, r->bound);
    fprintf(fp, "  efficiency %.3f: %s\n", r->efficiency, r->calibration);
    fprintf(fp, "  predicted %.4g us kernel + %.2g us launch = %.4g us: "
            "%.1f TFLOP/s, %.0f GB/s\n",
            r->kernel_s * 1e6, r->launch_s * 1e6, r->time_s * 1e6,
            tflops_of(r), GBps_of(r));
    char bt[200];
    band_text(bt, sizeof bt, b, r->time_s * 1e6, "%.4g", false);
    fprintf(fp, "  80%% band (us)%s\n", bt);
}

json_t *rkernel_json(const gpu_spec *g, const cost_op *op,
                     const cost_result *r, const band_est *b)
{
    json_t *j = json_object();
    json_object_set_new(j, "gpu", json_string(g->name));
    json_object_set_new(j, "op", json_string(cost_kind_name(op->kind)));
    json_object_set_new(j, "dtype", json_string(dtype_name(r->dt)));
    json_object_set_new(j, "time_s", json_real(r->time_s));
    rjson_band_ends(j, b, "time_s", r->time_s, false);
    json_object_set_new(j, "band", rjson_band(b));
    json_object_set_new(j, "tflops", json_real(tflops_of(r)));
    json_object_set_new(j, "GBps", json_real(GBps_of(r)));
    json_object_set_new(j, "bound", json_string(r->bound));
    json_object_set_new(j, "calibration", json_string(r->calibration));
    json_object_set_new(j, "flops", json_real(r->flops));
    json_object_set_new(j, "bytes", json_real(r->bytes));
    json_object_set_new(j, "kernel_s", json_real(r->kernel_s));
    json_object_set_new(j, "launch_s", json_real(r->launch_s));
    json_object_set_new(j, "efficiency", json_real(r->efficiency));
    json_object_set_new(j, "fallback", json_string(r->fallback));
    return j;
}
