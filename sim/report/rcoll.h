/* rcoll — `llmsim collective`: nccl-tests' table (size, count, type,
 * redop, time, algbw, busbw), its CSV and JSON, and the busiest links. */
#ifndef LLMSIM_RCOLL_H
#define LLMSIM_RCOLL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "coll/coll.h"
#include "decide/band.h"

/* One size of the sweep, in nccl-tests' terms (float, sum). */
typedef struct rcoll_row {
    double size_bytes; /* nccl-tests' "size": the whole buffer */
    double count;      /* elements */
    double time_us, algbw_GBps, busbw_GBps;
    coll_algo algo;    /* what ran: auto resolved */
    coll_proto proto;
    bool host_bound;   /* the host's calls set the time (-g) */
    band_est band;     /* the time's error band */
} rcoll_row;

/* A sweep's output as it goes: the header at once, each row as it is
 * measured (JSON keeps them until the end: one document).  The rows are
 * CSV with csv, else JSON with json, else the table.  Given both, the
 * rows are CSV and the JSON document that follows has none: what the
 * command has always printed (its usage offers one or the other). */
typedef struct rcoll_table {
    FILE *fp;
    bool csv;
    coll_op op;
    const topo *t;
    int n;        /* GPUs taking part */
    json_t *rows; /* with json: the rows so far */
} rcoll_table;

/* The header (the CSV one, none for JSON, or the table's); algo and proto
 * as asked (auto or forced). */
void rcoll_begin(rcoll_table *tab, FILE *fp, bool csv, bool json, coll_op op,
                 const topo *t, int n, coll_algo algo, coll_proto proto);
void rcoll_row_add(rcoll_table *tab, const rcoll_row *r);
/* The busiest links of r (measured with coll_req.links), as comment lines
 * under the table; nothing with CSV or JSON. */
void rcoll_links(const rcoll_table *tab, const coll_result *r);
/* With json: {op, cluster, gpus, rows}, taking the rows; else NULL (the
 * rows are already written). */
json_t *rcoll_end(rcoll_table *tab);
/* After an error: drops the rows kept. */
void rcoll_abort(rcoll_table *tab);

#endif
