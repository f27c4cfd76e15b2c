/* rcompare — the side-by-side table, its JSON, and the bars (gnuplot). */
#ifndef LLMSIM_RCOMPARE_H
#define LLMSIM_RCOMPARE_H

#include <jansson.h>
#include <stdio.h>

#include "decide/compare.h"

void rcompare_text(FILE *fp, const exp_compare *f, const compare_result *r);
json_t *rcompare_json(const exp_compare *f, const compare_result *r);
/* Bars relative to the first cluster into png (SVG when it ends .svg),
 * through gnuplot. */
int rcompare_png(const char *png, const exp_compare *f,
                 const compare_result *r, llm_err *e);

#endif
