/* rsearch — what the plan search and the deployment search report. */
#ifndef LLMSIM_RSEARCH_H
#define LLMSIM_RSEARCH_H

#include <jansson.h>
#include <stdio.h>

#include "decide/deploy.h"
#include "decide/search.h"

/* "Why: ... is 3.1% faster than the best plan of another shape (...): ..." */
void rsearch_train_why(const search_result *s, const exp_env *v, char *buf,
                       size_t n);
void rsearch_train_text(FILE *fp, const exp_train *x, const exp_env *v,
                        const search_result *s, int top, const char *why);
/* With each plan's step-time band (v's error model) and whether it
 * overlaps the winner's. */
json_t *rsearch_train_json(const exp_env *v, const search_result *s, int top,
                           const char *why);

void rsearch_serve_text(FILE *fp, const exp_env *v, const deploy_result *s,
                        int top);
json_t *rsearch_serve_json(const deploy_result *s, int top);

#endif
