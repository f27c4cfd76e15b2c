/* rgpus — `llmsim gpus`: the catalog table, the side-by-side comparison
 * and their JSON. */
#ifndef LLMSIM_RGPUS_H
#define LLMSIM_RGPUS_H

#include <jansson.h>
#include <stdio.h>

#include "hw/gpu.h"

/* One line per GPU of the catalog: memory, bandwidth, BF16/FP8 peaks,
 * NVLink, TDP, price; then where the figures come from. */
void rgpus_list_text(FILE *fp, const gpu_catalog *c);
/* g[0..n) side by side, one row per figure, capability flag and ratio. */
void rgpus_compare_text(FILE *fp, const gpu_spec *const *g, int n);
/* An array of every figure of g[0..n), one object per GPU. */
json_t *rgpus_json(const gpu_spec *const *g, int n);
/* The same array for the whole catalog, in catalog order. */
json_t *rgpus_catalog_json(const gpu_catalog *c);

#endif
