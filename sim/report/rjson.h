/* rjson — JSON pieces every report shares (jansson), and printing a JSON
 * document. */
#ifndef LLMSIM_RJSON_H
#define LLMSIM_RJSON_H

#include <jansson.h>
#include <stdio.h>

#include "decide/band.h"
#include "hw/topo.h"
#include "model/plan.h"

/* Dumps j (stolen) to fp, indented, keys in insertion order, reals with
 * 10 significant digits, and a newline. */
void rjson_print(FILE *fp, json_t *j);
/* A byte count as an integer. */
json_t *rjson_bytes(double bytes);
/* {src, dst, kind, bytes, utilization} of one link of t. */
json_t *rjson_link(const topo *t, int link, double bytes, double utilization);
/* {tp, pp, dp, cp, ep, sp, micro_batch, ..., precision} of a plan, and
 * layers_per_stage when the split is uneven or given (derived from model
 * m when m is not NULL). */
json_t *rjson_plan(const plan_train *p, const model_spec *m);

/* An error band (decide/band.h): {key, family, cases, level, like,
 * ratio_lo, ratio_hi}, {key} alone when the error model has no family
 * for the key. */
json_t *rjson_band(const band_est *b);

/* NAME_lo and NAME_hi into object j: the band's ends for value (a rate
 * when inverse); nothing without a band. */
void rjson_band_ends(json_t *j, const band_est *b, const char *name,
                     double value, bool inverse);

#endif
