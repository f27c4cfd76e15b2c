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
    DT_COUNT
} dtype;

/* Storage bytes per element (TF32 is stored as FP32; INT4 packs two). */
double dtype_bytes(dtype d);
const char *dtype_name(dtype d);
/* Accepts the names above plus "float16", "bfloat16", "float32"
 * (Hugging Face torch_dtype spellings).  Returns -1 when unknown. */
int dtype_parse(const char *s, dtype *out);
/* "fp32|fp16|bf16|..." for error messages. */
const char *dtype_choices(void);

#endif
