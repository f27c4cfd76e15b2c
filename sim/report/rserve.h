/* rserve — what a serving run reports: the table, its JSON, one CSV row
 * per request, and the Chrome trace, streamed as the run goes. */
#ifndef LLMSIM_RSERVE_H
#define LLMSIM_RSERVE_H

#include <jansson.h>
#include <stdio.h>

#include "base/util.h"
#include "decide/exp.h"

void rserve_text(FILE *fp, const exp_serve_out *o);
json_t *rserve_json(const exp_serve_out *o);
/* One row per request (the run kept them: exp_run_opts.per_request). */
int rserve_csv(const char *path, const exp_serve_out *o, llm_err *e);

/* The trace writer: open before the run and hand `events` to it, then
 * finish (committing the file) or abort (removing it). */
typedef struct rserve_trace {
    util_outfile f;
    serve_events events;
    bool first, open;
    int ninst;
} rserve_trace;

int rserve_trace_open(rserve_trace *tr, const char *path, llm_err *e);
int rserve_trace_finish(rserve_trace *tr, llm_err *e);
void rserve_trace_abort(rserve_trace *tr);

#endif
