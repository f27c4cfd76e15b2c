/* dtype — numeric formats, their size in bytes and their names. */
#ifndef LLMSIM_DTYPE_H
#define LLMSIM_DTYPE_H

#include <stdbool.h>

typedef enum dtype {
    DT_FP64,
    DT_FP32,
    DT_TF32,
    DT_FP16,
    DT_BF16,
    DT_FP8,
    DT_INT8,
    DT_INT4,
    DT_FP4, /* NVFP4: E2M1 elements, one E4M3 scale per 16 (Blackwell) */
    DT_COUNT
} dtype;

/* Storage bytes per element (TF32 is stored as FP32; INT4 packs two; FP4
 * is NVFP4's 4 bits plus its 8-bit scale per 16 elements, 4.5 bits). */
double dtype_bytes(dtype d);
const char *dtype_name(dtype d);
/* Accepts the names above plus "float16", "bfloat16", "float32"
 * (Hugging Face torch_dtype spellings) and "nvfp4".  Returns -1 when
 * unknown. */
int dtype_parse(const char *s, dtype *out);
/* "fp32|fp16|bf16|..." for error messages. */
const char *dtype_choices(void);

#endif
