/* rstep — a recorded training step (train_record) as slices of time on
 * each GPU: the timeline CSV for plots/timeline.gp and the Chrome trace
 * (Perfetto).  Both are written to a temporary name, then renamed. */
#ifndef LLMSIM_RSTEP_H
#define LLMSIM_RSTEP_H

#include <stdbool.h>

#include "decide/exp.h"

/* gpu,row,stage,stream,kind,microbatch,chunk,layer,start_ms,end_ms for
 * every GPU of the simulated data-parallel replica. */
int rstep_timeline(const char *path, const exp_train_out *o, llm_err *e);

/* Trace-event JSON: a process per node, a thread per GPU stream (compute;
 * pipeline sends and receives; the data-parallel reduction), a slice per
 * layer of each microbatch and per transfer, flow arrows from each
 * pipeline send to its receive, the busiest links' load.  all_replicas:
 * every data-parallel replica's GPUs (they run the same step), else the
 * simulated replica's. */
int rstep_trace(const char *path, const exp_train_out *o, bool all_replicas,
                llm_err *e);

#endif
