/* rtopo — `llmsim topo`: what a topology builds (devices, links by kind,
 * per-GPU bandwidths, bisection), as text, JSON, or a Graphviz file. */
#ifndef LLMSIM_RTOPO_H
#define LLMSIM_RTOPO_H

#include <jansson.h>
#include <stdio.h>

#include "base/err.h"
#include "hw/topo.h"

/* Counts and bandwidths of one topology, filled by the caller (the
 * bisection comes from a run of the flow model). */
typedef struct rtopo_summary {
    int dev_count[DEV_KIND_COUNT];
    int link_count[LINK_KIND_COUNT]; /* both directions count as one */
    double link_bw_min_Bps[LINK_KIND_COUNT], link_bw_max_Bps[LINK_KIND_COUNT];
    /* GPU 0's own links and its share of its node's NICs, per direction */
    double gpu_nvlink_Bps, gpu_pcie_Bps, gpu_net_Bps;
    double bisection_Bps; /* per GPU, per direction */
} rtopo_summary;

void rtopo_text(FILE *fp, const topo *t, const rtopo_summary *s);
json_t *rtopo_json(const topo *t, const rtopo_summary *s);
/* The graph for Graphviz (a cluster per node, link bandwidth in GB/s as
 * the label) into path: temporary name, then renamed. */
int rtopo_dot(const char *path, const topo *t, llm_err *e);

#endif
