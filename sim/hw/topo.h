/* topo — the cluster as a graph: GPUs, NVSwitches, PCIe switches, CPU root
 * complexes, NICs and network switches, joined by directed links with a
 * bandwidth (bytes/s, per direction) and a latency.  Built from a node-type
 * file (topologies/dgx-h100.cfg ...) times N nodes joined by a fabric
 * (single switch, rail-optimized, two-level fat tree).  Routes are shortest
 * paths; among equal-cost next hops a hash of (src, dst, salt) picks one
 * (ECMP).  GPUs never forward traffic; with p2p off, GPU-to-GPU traffic
 * stages through host memory, and without GPUDirect RDMA so does traffic
 * to the network. */
#ifndef LLMSIM_TOPO_H
#define LLMSIM_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "hw/gpu.h"

typedef enum {
    DEV_GPU,
    DEV_NVSWITCH,
    DEV_PCIE_SWITCH,
    DEV_CPU,
    DEV_NIC,
    DEV_SWITCH, /* network leaf / spine / rail switch */
    DEV_KIND_COUNT
} topo_dev_kind;

typedef enum {
    LINK_NVLINK,
    LINK_PCIE,
    LINK_SOCKET,
    LINK_NETWORK,
    LINK_KIND_COUNT
} topo_link_kind;

typedef enum { FABRIC_RAIL, FABRIC_SINGLE, FABRIC_FAT_TREE } topo_fabric;

typedef struct topo_dev {
    char name[40];
    topo_dev_kind kind;
    int node;   /* -1 for network switches */
    int local;  /* index among its kind in the node */
    bool nvls;  /* NVSwitch with in-network reduction */
    int first_out, n_out; /* outgoing links: out_links[first_out ...] */
} topo_dev;

typedef struct topo_link {
    int src, dst;
    topo_link_kind kind;
    double bw_Bps;
    int64_t lat_ns;
} topo_link;

/* Link and device templates of one node, as read from its file. */
typedef struct topo_devspec {
    char name[32];
    topo_dev_kind kind;
    int count;
    bool nvls;
    char model[48];
} topo_devspec;

typedef enum { MAP_ALL, MAP_BLOCK, MAP_ONE, MAP_PAIRS, MAP_CHAIN } topo_map;

typedef struct topo_linkspec {
    int a, b; /* indices into devspec */
    topo_map map;
    topo_link_kind kind;
    double bw_Bps;
    int64_t lat_ns;
    int line; /* for messages */
} topo_linkspec;

#define TOPO_MAX_SPECS 16

typedef struct topo_fabricspec {
    topo_fabric kind;
    int64_t switch_lat_ns;
    double oversubscription;
    int leaf_ports; /* fat tree: NIC ports per leaf */
    bool sharp;
    /* spine choice: by destination port (InfiniBand subnet managers'
     * d-mod-k fat-tree routing, the default) or by a flow hash (ECMP) */
    bool ecmp;
} topo_fabricspec;

/* The vendor of a node's CPUs: NCCL's multi-node LL limits differ for AMD
 * hosts (tuning.cc: AMD or mixed, else the Intel rows). */
typedef enum {
    CPU_OTHER,
    CPU_INTEL,
    CPU_AMD,
    CPU_ARM,
    CPU_VENDOR_COUNT
} topo_cpu_vendor;
extern const char *const topo_cpu_vendor_names[CPU_VENDOR_COUNT];

/* A node type: what a node file holds. */
typedef struct topo_nodespec {
    char name[64], display[128], source[1024], path[1024];
    int links_line; /* where the links list starts, for messages */
    topo_devspec dev[TOPO_MAX_SPECS];
    int ndev;
    topo_linkspec link[TOPO_MAX_SPECS * 2];
    int nlink;
    double nic_bw_Bps;
    /* a fabric known by measurement: what one NIC reaches (ib_write_bw or
     * the like), bytes/s; 0 = calib/links.tsv's fraction of the line rate */
    double nic_measured_Bps;
    int64_t nic_lat_ns;
    bool gpudirect, p2p;
    topo_cpu_vendor cpu_vendor;
    /* the host CPU that drives the GPUs (node file host_cpu: a row of
     * calib/host-cpus.tsv; "" when the file names none) and how fast it
     * runs a framework's single-threaded host work (Python, scheduling,
     * launches) relative to the reference host: 1 when none is named */
    char host_cpu[48];
    int host_cpu_line;
    double host_speed;
    topo_fabricspec fabric;
} topo_nodespec;

/* Link bandwidths an experiment puts in place of the node file's, to ask
 * what a faster (or slower) link would buy; 0 keeps the file's figure.
 * nvlink_GBps and pcie_GBps are per direction and apply to every link of
 * that kind in a node; nic_gbps is each NIC's line rate. */
typedef struct topo_net {
    double nvlink_GBps, pcie_GBps, nic_gbps;
} topo_net;

void topo_net_apply(topo_nodespec *spec, const topo_net *net);

typedef struct topo {
    char name[96];
    topo_nodespec spec;
    topo_fabricspec fabric;
    const gpu_spec *gpu; /* every GPU is of this model */
    int nodes, gpus_per_node;
    topo_dev *dev;
    int ndev;
    topo_link *link;
    int nlink;
    int *out_links; /* CSR adjacency */
    int *gpu_dev;   /* device index of global GPU rank r */
    int ngpu;
    int nics_per_node;
} topo;

/* Hop distances inside a node, per destination, computed as routes ask
 * for them: a cache the router keeps (net.h's net_routes), not part of
 * the graph, so a built topology is never written and a const topo can
 * be shared. */
typedef struct topo_dist topo_dist;
topo_dist *topo_dist_create(const topo *t);
void topo_dist_destroy(topo_dist *d);
/* A route failed because a distance table could not be allocated (not
 * because its destination is unreachable); sticky. */
bool topo_dist_nomem(const topo_dist *d);

/* Builds the graph for `nodes` copies of the node type joined by `fabric`
 * (fabric is ignored for one node).  Returns NULL with a message on
 * failure (an unreachable GPU, a link to an unknown device...). */
topo *topo_build(const topo_nodespec *spec, const gpu_spec *gpu, int nodes,
                 const topo_fabricspec *fabric, char *why, int why_len);
void topo_destroy(topo *t);

/* The links of a route from device src to device dst (at most max), or -1
 * when unreachable.  `salt` varies the ECMP choice between flows. */
int topo_route(const topo *t, topo_dist *dc, int src, int dst, uint32_t salt,
               int *links, int max);

/* Sum of one-way latencies along a route. */
int64_t topo_route_lat(const topo *t, const int *links, int n);

const char *topo_dev_kind_name(topo_dev_kind k);
/* The node's host speed (spec.host_speed; 1, the reference host's, when
 * none was set): a framework's host time is its reference figure over it. */
double topo_host_speed(const topo_nodespec *s);
const char *topo_link_kind_name(topo_link_kind k);

/* The switch that reduces in the network for a GPU's rail (SHARP): its
 * rail or leaf switch, or spine 0 when there are several leaves; -1 when
 * the fabric does not reduce. */
int topo_sharp_switch(const topo *t, topo_dist *dc, int gpu_rank);

/* The NIC nearest a GPU (fewest hops), or -1. */
int topo_gpu_nic(const topo *t, topo_dist *dc, int gpu_rank);
/* The CPU nearest a device, or -1. */
int topo_nearest(const topo *t, topo_dist *dc, int dev, topo_dev_kind kind);

#endif
