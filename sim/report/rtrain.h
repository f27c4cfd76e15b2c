/* rtrain — what a training run reports: the table, its JSON, the Chrome
 * trace (Perfetto) and the op timeline for plots/timeline.gp. */
#ifndef LLMSIM_RTRAIN_H
#define LLMSIM_RTRAIN_H

#include <jansson.h>
#include <stdio.h>

#include "decide/exp.h"

void rtrain_text(FILE *fp, const exp_train_out *o);
json_t *rtrain_json(const exp_train_out *o);
/* From o->rec (the run recorded): trace-event JSON / CSV into path
 * (temporary name, then renamed). */
int rtrain_trace(const char *path, const exp_train_out *o, llm_err *e);
int rtrain_timeline(const char *path, const exp_train_out *o, llm_err *e);

#endif
