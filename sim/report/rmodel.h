/* rmodel — `llmsim model`: a model's parameters, FLOPs per token and
 * KV-cache bytes as text or JSON, and the list of models. */
#ifndef LLMSIM_RMODEL_H
#define LLMSIM_RMODEL_H

#include <jansson.h>
#include <stdio.h>

#include "model/model.h"

/* The summary at context seq_len: architecture, parameters by group
 * (beside the published count), FLOPs per token, KV cache per token
 * beside the 2 x layers x hidden rule of thumb. */
void rmodel_text(FILE *fp, const model_spec *m, int seq_len);
json_t *rmodel_json(const model_spec *m, int seq_len);
/* names[0..n), one per line, as given (the caller sorts). */
void rmodel_list_text(FILE *fp, char *const *names, int n);

#endif
