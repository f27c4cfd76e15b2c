/* rkernel — `llmsim kernel`: one op's predicted time on one GPU and why
 * (FLOPs, bytes, roofline terms, calibrated efficiency, launch), as text
 * or JSON. */
#ifndef LLMSIM_RKERNEL_H
#define LLMSIM_RKERNEL_H

#include <jansson.h>
#include <stdio.h>

#include "cost/cost.h"
#include "decide/band.h"

/* tp > 1: op is one GPU's column-parallel shard of a GEMM whose N was
 * n_unsplit. */
void rkernel_text(FILE *fp, const gpu_spec *g, const cost_op *op,
                  const cost_result *r, int tp, double n_unsplit,
                  const band_est *b);
json_t *rkernel_json(const gpu_spec *g, const cost_op *op,
                     const cost_result *r, const band_est *b);
/* The op's name in the error model's families (band_kernel_key). */
const char *rkernel_band_op(const cost_op *op);

#endif
