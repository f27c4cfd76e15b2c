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
#define RSERVE_KV_LANES 256
typedef struct rserve_trace {
    util_outfile f;
    serve_events events;
    bool first, open;
    int ninst;
    /* KV transfers in flight together on one link go to lanes of their
     * own (one thread each: a thread's slices never overlap) */
    const topo *t;
    double *lane_end;  /* [nlinks][RSERVE_KV_LANES], us */
    unsigned char *lane_named;
    int nlinks;
    bool nomem;
} rserve_trace;

int rserve_trace_open(rserve_trace *tr, const char *path, llm_err *e);
/* After the run: a span per request -- queued, prefill, decode, and its
 * KV transfer when disaggregated -- from o's per-request results. */
void rserve_trace_requests(rserve_trace *tr, const exp_serve_out *o);
int rserve_trace_finish(rserve_trace *tr, llm_err *e);
void rserve_trace_abort(rserve_trace *tr);

#endif
