#include "base/dtype.h"

#include <string.h>

static const char *const names[DT_COUNT] = {
    "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4",
};
/* NVFP4 (NVIDIA, "Introducing NVFP4 for Efficient and Accurate
 * Low-Precision Inference", 2025): 4-bit E2M1 values in blocks of 16 with
 * one FP8 E4M3 scale each, 4 + 8/16 = 4.5 bits (the per-tensor FP32 scale
 * is counted per tensor, in mem.c) */
static const double bytes[DT_COUNT] = {8, 4, 4, 2, 2, 1, 1, 0.5, 0.5625};

double dtype_bytes(dtype d) { return bytes[d]; }
const char *dtype_name(dtype d) { return names[d]; }

int dtype_parse(const char *s, dtype *out)
{
    static const struct {
        const char *alias;
        dtype d;
    } aliases[] = {
        {"float64", DT_FP64},  {"float32", DT_FP32}, {"float", DT_FP32},
        {"float16", DT_FP16},  {"half", DT_FP16},    {"bfloat16", DT_BF16},
        {"float8", DT_FP8},    {"fp8_e4m3", DT_FP8},  {"nvfp4", DT_FP4},
    };
    for (int i = 0; i < DT_COUNT; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (dtype)i;
            return 0;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(s, aliases[i].alias) == 0) {
            *out = aliases[i].d;
            return 0;
        }
    return -1;
}

const char *dtype_choices(void)
{
    return "fp64|fp32|tf32|fp16|bf16|fp8|int8|int4|fp4";
}
