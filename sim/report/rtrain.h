/* rtrain — what a training run reports: the table and its JSON (the
 * recorded step's timeline and trace are rstep's). */
#ifndef LLMSIM_RTRAIN_H
#define LLMSIM_RTRAIN_H

#include <jansson.h>
#include <stdio.h>

#include "decide/exp.h"

void rtrain_text(FILE *fp, const exp_train_out *o);
json_t *rtrain_json(const exp_train_out *o);

#endif
