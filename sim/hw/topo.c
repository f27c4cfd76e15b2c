#include "hw/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* Layout: node k's devices are [k·D, (k+1)·D) in the order of its file, so a
 * route inside any node is node 0's route shifted by k·D; network switches
 * follow all nodes.  Inside a node, routes come from a BFS over node 0
 * (cached per destination, D x D ints); across nodes, a route is
 * GPU -> its NIC -> leaf [-> spine -> leaf] -> NIC -> GPU, computed from the
 * fabric's two-level structure, so no per-destination table of the whole
 * cluster is ever built (16,384 GPUs would need gigabytes). */

typedef struct fabric_info {
    int *nic_leaf;          /* per global NIC: its leaf switch device */
    int *nic_up, *nic_down; /* per global NIC: links NIC->leaf, leaf->NIC */
    int nleaf, nspine, first_leaf, first_spine;
    int *leaf_up;           /* [leaf * nspine + s]: link leaf -> spine s */
    int *leaf_down;         /* [leaf * nspine + s]: link spine s -> leaf */
} fabric_info;

struct topo_priv {
    int D;                  /* devices per node */
    int Ln;                 /* links per node */
    int *nic_dev;           /* per global NIC index: device */
    fabric_info f;
};

/* The private part is kept after the public struct. */
typedef struct topo_full {
    topo pub;
    struct topo_priv p;
} topo_full;

static struct topo_priv *priv(topo *t) { return &((topo_full *)t)->p; }
static const struct topo_priv *cpriv(const topo *t)
{
    return &((const topo_full *)t)->p;
}

/* Distances to each device of a node, per destination, as routes ask for
 * them (nodes are identical, so node 0's stand for all). */
struct topo_dist {
    int D;
    int **dist_to; /* [D], each NULL until asked for, then [D] */
    bool nomem;    /* a table could not be allocated */
};

bool topo_dist_nomem(const topo_dist *d) { return d->nomem; }

topo_dist *topo_dist_create(const topo *t)
{
    topo_dist *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->D = cpriv(t)->D;
    d->dist_to = calloc((size_t)(d->D ? d->D : 1), sizeof *d->dist_to);
    if (!d->dist_to) {
        free(d);
        return NULL;
    }
    return d;
}

void topo_dist_destroy(topo_dist *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->D; i++)
        free(d->dist_to[i]);
    free(d->dist_to);
    free(d);
}

static const char *const dev_names[DEV_KIND_COUNT] = {
    "gpu", "nvswitch", "pcie_switch", "cpu", "nic", "switch"};
static const char *const link_names[LINK_KIND_COUNT] = {"nvlink", "pcie",
                                                        "socket", "network"};

double topo_host_speed(const topo_nodespec *s)
{
    return s->host_speed > 0 ? s->host_speed : 1;
}

const char *const topo_cpu_vendor_names[CPU_VENDOR_COUNT] = {
    "other", "intel", "amd", "arm"};
const char *topo_dev_kind_name(topo_dev_kind k) { return dev_names[k]; }
const char *topo_link_kind_name(topo_link_kind k) { return link_names[k]; }

/* ---- building ------------------------------------------------------------ */

typedef struct builder {
    topo *t;
    int dev_cap, link_cap;
    char *why;
    int why_len;
} builder;

static int add_dev(builder *b, const char *name, topo_dev_kind kind, int node,
                   int local, bool nvls)
{
    topo *t = b->t;
    if (t->ndev == b->dev_cap) {
        int cap = b->dev_cap ? b->dev_cap * 2 : 64;
        topo_dev *d = realloc(t->dev, sizeof *d * (size_t)cap);
        if (!d)
            return -1;
        t->dev = d;
        b->dev_cap = cap;
    }
    topo_dev *d = &t->dev[t->ndev];
    memset(d, 0, sizeof *d);
    size_t len = strlen(name);
    if (len >= sizeof d->name)
        len = sizeof d->name - 1;
    memcpy(d->name, name, len); /* the memset ended it */
    d->kind = kind;
    d->node = node;
    d->local = local;
    d->nvls = nvls;
    return t->ndev++;
}

/* Adds the two directions; returns the id of a->b (b->a is id + 1). */
static int add_link(builder *b, int a, int c, topo_link_kind kind, double bw,
                    int64_t lat)
{
    topo *t = b->t;
    if (t->nlink + 2 > b->link_cap) {
        int cap = b->link_cap ? b->link_cap * 2 : 256;
        topo_link *l = realloc(t->link, sizeof *l * (size_t)cap);
        if (!l)
            return -1;
        t->link = l;
        b->link_cap = cap;
    }
    LLM_ASSERT(a != c); /* the loader refuses self-loops */
    t->link[t->nlink] = (topo_link){a, c, kind, bw, lat};
    t->link[t->nlink + 1] = (topo_link){c, a, kind, bw, lat};
    t->nlink += 2;
    return t->nlink - 2;
}

static int expand_links(builder *b, const topo_nodespec *s, const int *first)
{
    for (int i = 0; i < s->nlink; i++) {
        const topo_linkspec *L = &s->link[i];
        int na = s->dev[L->a].count, nb = s->dev[L->b].count;
        int fa = first[L->a], fb = first[L->b];
        int rc = 0;
        switch (L->map) {
        case MAP_ALL: /* within one group: each pair once, none to itself */
            for (int x = 0; x < na && rc >= 0; x++)
                for (int y = L->a == L->b ? x + 1 : 0; y < nb && rc >= 0;
                     y++)
                    rc = add_link(b, fa + x, fb + y, L->kind, L->bw_Bps,
                                  L->lat_ns);
            break;
        case MAP_BLOCK:
            if (na >= nb)
                for (int x = 0; x < na && rc >= 0; x++)
                    rc = add_link(b, fa + x, fb + x / (na / nb), L->kind,
                                  L->bw_Bps, L->lat_ns);
            else
                for (int y = 0; y < nb && rc >= 0; y++)
                    rc = add_link(b, fa + y / (nb / na), fb + y, L->kind,
                                  L->bw_Bps, L->lat_ns);
            break;
        case MAP_ONE:
            for (int x = 0; x < na && rc >= 0; x++)
                rc = add_link(b, fa + x, fb + x, L->kind, L->bw_Bps,
                              L->lat_ns);
            break;
        case MAP_PAIRS:
            for (int x = 0; x + 1 < na && rc >= 0; x += 2)
                rc = add_link(b, fa + x, fa + x + 1, L->kind, L->bw_Bps,
                              L->lat_ns);
            break;
        case MAP_CHAIN:
            for (int x = 0; x + 1 < na && rc >= 0; x++)
                rc = add_link(b, fa + x, fa + x + 1, L->kind, L->bw_Bps,
                              L->lat_ns);
            break;
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Appends the decimal digits of v >= 0 at buf[at] within n bytes;
 * returns the new length. */
static size_t put_int(char *buf, size_t n, size_t at, int v)
{
    char tmp[12]; /* an int has at most 10 digits */
    int k = 0;
    do
        tmp[k++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    while (k > 0 && at + 1 < n)
        buf[at++] = tmp[--k];
    buf[at] = '\0';
    return at;
}

/* "n<node>.<base><i>", as snprintf would write it (truncated to n - 1),
 * without its cost: a 100,000-node cluster names a million devices. */
static void node_dev_name(char *buf, size_t n, int node, const char *base,
                          int i)
{
    size_t at = 0;
    buf[at++] = 'n';
    at = put_int(buf, n, at, node);
    if (at + 1 < n)
        buf[at++] = '.';
    for (const char *c = base; *c && at + 1 < n; c++)
        buf[at++] = *c;
    put_int(buf, n, at, i); /* ends the string */
}

static int build_nodes(builder *b, const topo_nodespec *s, int nodes)
{
    topo *t = b->t;
    for (int k = 0; k < nodes; k++) {
        int first[TOPO_MAX_SPECS];
        for (int d = 0; d < s->ndev; d++) {
            first[d] = t->ndev;
            for (int i = 0; i < s->dev[d].count; i++) {
                char name[40];
                node_dev_name(name, sizeof name, k, s->dev[d].name, i);
                if (add_dev(b, name, s->dev[d].kind, k, i, s->dev[d].nvls) < 0)
                    return -1;
            }
        }
        if (expand_links(b, s, first))
            return -1;
        if (k == 0)
            priv(t)->Ln = t->nlink;
    }
    return 0;
}

/* Per global NIC: its device and, once the fabric exists, its links. */
static int index_nics(topo *t)
{
    struct topo_priv *p = priv(t);
    int n = 0;
    for (int i = 0; i < t->ndev; i++)
        n += t->dev[i].kind == DEV_NIC;
    p->nic_dev = malloc(sizeof(int) * (size_t)(n ? n : 1));
    p->f.nic_leaf = malloc(sizeof(int) * (size_t)(n ? n : 1));
    p->f.nic_up = malloc(sizeof(int) * (size_t)(n ? n : 1));
    p->f.nic_down = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!p->nic_dev || !p->f.nic_leaf || !p->f.nic_up || !p->f.nic_down)
        return -1;
    n = 0;
    for (int i = 0; i < t->ndev; i++)
        if (t->dev[i].kind == DEV_NIC)
            p->nic_dev[n++] = i;
    t->nics_per_node = t->nodes ? n / t->nodes : 0;
    return n;
}

static int connect_spines(builder *b, const topo_fabricspec *f, double up_bw)
{
    struct topo_priv *p = priv(b->t);
    fabric_info *F = &p->f;
    F->first_spine = b->t->ndev;
    for (int s = 0; s < F->nspine; s++) {
        char name[40];
        snprintf(name, sizeof name, "spine%d", s);
        if (add_dev(b, name, DEV_SWITCH, -1, s, f->sharp) < 0)
            return -1;
    }
    size_t n = (size_t)F->nleaf * (size_t)(F->nspine ? F->nspine : 1);
    F->leaf_up = malloc(sizeof(int) * n);
    F->leaf_down = malloc(sizeof(int) * n);
    if (!F->leaf_up || !F->leaf_down)
        return -1;
    for (int l = 0; l < F->nleaf; l++)
        for (int s = 0; s < F->nspine; s++) {
            int id = add_link(b, F->first_leaf + l, F->first_spine + s,
                              LINK_NETWORK, up_bw, f->switch_lat_ns);
            if (id < 0)
                return -1;
            F->leaf_up[l * F->nspine + s] = id;
            F->leaf_down[l * F->nspine + s] = id + 1;
        }
    return 0;
}

/* Leaves: one per rail (rail fabric), one in all (single switch) or one per
 * leaf_ports NICs (fat tree).  Spines carry traffic between leaves; their
 * count and uplink bandwidth follow the oversubscription ratio. */
static int build_fabric(builder *b, const topo_nodespec *s,
                        const topo_fabricspec *f)
{
    topo *t = b->t;
    struct topo_priv *p = priv(t);
    fabric_info *F = &p->f;
    int nics = index_nics(t);
    if (nics < 0)
        return -1;
    if (t->nodes == 1 || nics == 0)
        return 0;
    int per_leaf;
    if (f->kind == FABRIC_RAIL) {
        F->nleaf = t->nics_per_node;
        per_leaf = t->nodes;
    } else if (f->kind == FABRIC_SINGLE) {
        F->nleaf = 1;
        per_leaf = nics;
    } else {
        per_leaf = f->leaf_ports > 0 ? f->leaf_ports : 32;
        F->nleaf = (nics + per_leaf - 1) / per_leaf;
    }
    F->first_leaf = t->ndev;
    for (int l = 0; l < F->nleaf; l++) {
        char name[40];
        snprintf(name, sizeof name, "%s%d",
                 f->kind == FABRIC_RAIL ? "rail" : "leaf", l);
        if (add_dev(b, name, DEV_SWITCH, -1, l, f->sharp) < 0)
            return -1;
    }
    for (int i = 0; i < nics; i++) {
        int node_nic = i % t->nics_per_node;
        int leaf = f->kind == FABRIC_RAIL ? node_nic
                   : f->kind == FABRIC_SINGLE ? 0
                                              : i / per_leaf;
        /* a switch's traversal time is charged on the links into it */
        int id = add_link(b, p->nic_dev[i], F->first_leaf + leaf,
                          LINK_NETWORK, s->nic_bw_Bps, s->nic_lat_ns);
        if (id < 0)
            return -1;
        t->link[id].lat_ns += f->switch_lat_ns;
        F->nic_leaf[i] = F->first_leaf + leaf;
        F->nic_up[i] = id;
        F->nic_down[i] = id + 1;
    }
    if (F->nleaf < 2)
        return 0;
    /* each leaf's down bandwidth, shared over the spines, divided by the
     * oversubscription ratio; one spine per uplink port when the ratio
     * allows, at least one */
    double over = f->oversubscription > 0 ? f->oversubscription : 1.0;
    double down_bw = per_leaf * s->nic_bw_Bps;
    F->nspine = (int)(per_leaf / over);
    if (F->nspine < 1)
        F->nspine = 1;
    if (F->nspine > 64)
        F->nspine = 64;
    return connect_spines(b, f, down_bw / over / F->nspine);
}

static int build_csr(topo *t)
{
    t->out_links = malloc(sizeof(int) * (size_t)(t->nlink ? t->nlink : 1));
    if (!t->out_links)
        return -1;
    for (int i = 0; i < t->ndev; i++)
        t->dev[i].n_out = 0;
    for (int l = 0; l < t->nlink; l++)
        t->dev[t->link[l].src].n_out++;
    int acc = 0;
    for (int i = 0; i < t->ndev; i++) {
        t->dev[i].first_out = acc;
        acc += t->dev[i].n_out;
        t->dev[i].n_out = 0;
    }
    for (int l = 0; l < t->nlink; l++) {
        topo_dev *d = &t->dev[t->link[l].src];
        t->out_links[d->first_out + d->n_out++] = l;
    }
    return 0;
}

static int index_gpus(topo *t)
{
    t->ngpu = 0;
    for (int i = 0; i < t->ndev; i++)
        t->ngpu += t->dev[i].kind == DEV_GPU;
    t->gpu_dev = malloc(sizeof(int) * (size_t)(t->ngpu ? t->ngpu : 1));
    if (!t->gpu_dev)
        return -1;
    int n = 0;
    for (int i = 0; i < t->ndev; i++)
        if (t->dev[i].kind == DEV_GPU)
            t->gpu_dev[n++] = i;
    t->gpus_per_node = t->nodes ? t->ngpu / t->nodes : 0;
    return 0;
}

topo *topo_build(const topo_nodespec *spec, const gpu_spec *gpu, int nodes,
                 const topo_fabricspec *fabric, char *why, int why_len)
{
    topo_full *full = calloc(1, sizeof *full);
    if (!full) {
        snprintf(why, (size_t)why_len, "out of memory");
        return NULL;
    }
    topo *t = &full->pub;
    t->spec = *spec;
    t->fabric = *fabric;
    t->gpu = gpu;
    t->nodes = nodes;
    snprintf(t->name, sizeof t->name, "%s x %d", spec->name, nodes);
    builder b = {t, 0, 0, why, why_len};
    priv(t)->D = 0;
    for (int d = 0; d < spec->ndev; d++)
        priv(t)->D += spec->dev[d].count;
    if (build_nodes(&b, spec, nodes) || build_fabric(&b, spec, fabric) ||
        build_csr(t) || index_gpus(t)) {
        snprintf(why, (size_t)why_len, "out of memory building %s", t->name);
        topo_destroy(t);
        return NULL;
    }
    topo_dist *dc = topo_dist_create(t);
    if (!dc) {
        snprintf(why, (size_t)why_len, "out of memory");
        topo_destroy(t);
        return NULL;
    }
    /* every GPU must reach GPU 0 */
    int links[64];
    for (int r = 1; r < t->ngpu; r++)
        if (topo_route(t, dc, t->gpu_dev[r], t->gpu_dev[0], 0, links, 64) < 0) {
            if (topo_dist_nomem(dc))
                snprintf(why, (size_t)why_len, "out of memory");
            else
                snprintf(why, (size_t)why_len,
                         "%s cannot reach %s (expected every GPU connected: "
                         "check the links)",
                         t->dev[t->gpu_dev[r]].name,
                         t->dev[t->gpu_dev[0]].name);
            topo_dist_destroy(dc);
            topo_destroy(t);
            return NULL;
        }
    /* a distance table that could not be made may have hidden a path */
    bool nomem = topo_dist_nomem(dc);
    topo_dist_destroy(dc);
    if (nomem) {
        snprintf(why, (size_t)why_len, "out of memory");
        topo_destroy(t);
        return NULL;
    }
    return t;
}

void topo_destroy(topo *t)
{
    if (!t)
        return;
    struct topo_priv *p = priv(t);
    free(p->nic_dev);
    free(p->f.nic_leaf);
    free(p->f.nic_up);
    free(p->f.nic_down);
    free(p->f.leaf_up);
    free(p->f.leaf_down);
    free(t->dev);
    free(t->link);
    free(t->out_links);
    free(t->gpu_dev);
    free(t);
}

/* ---- routing ------------------------------------------------------------- */

static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t x = ((uint64_t)a << 32 | b) ^ ((uint64_t)c * 0x9e3779b97f4a7c15ULL);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return (uint32_t)x;
}

/* Hop distance to local device `dst` (in node 0) from every device of node
 * 0; GPUs other than dst do not forward. */
static const int *local_dist(const topo *t, topo_dist *dc, int dst)
{
    const struct topo_priv *p = cpriv(t);
    if (dc->dist_to[dst])
        return dc->dist_to[dst];
    int D = p->D;
    int *dist = malloc(sizeof(int) * (size_t)D);
    int *queue = malloc(sizeof(int) * (size_t)D);
    if (!dist || !queue) {
        free(dist);
        free(queue);
        dc->nomem = true;
        return NULL;
    }
    for (int i = 0; i < D; i++)
        dist[i] = -1;
    int head = 0, tail = 0;
    dist[dst] = 0;
    queue[tail++] = dst;
    while (head < tail) {
        int v = queue[head++];
        if (v != dst && t->dev[v].kind == DEV_GPU)
            continue; /* GPUs do not forward */
        const topo_dev *d = &t->dev[v];
        for (int k = 0; k < d->n_out; k++) {
            /* links are symmetric: an edge v->u means u->v exists */
            int u = t->link[t->out_links[d->first_out + k]].dst;
            if (u >= D || dist[u] >= 0)
                continue;
            dist[u] = dist[v] + 1;
            queue[tail++] = u;
        }
    }
    free(queue);
    dc->dist_to[dst] = dist;
    return dist;
}

/* Route between two devices of node `node`, given as local indices; link
 * ids of node k are node 0's plus k·Ln (nodes are built one after the
 * other with identical link lists). */
static int route_local(const topo *t, topo_dist *dc, int node, int src, int dst, uint32_t salt,
                       int *links, int max)
{
    const struct topo_priv *p = cpriv(t);
    const int *dist = local_dist(t, dc, dst);
    if (!dist || dist[src] < 0)
        return -1;
    int n = 0, v = src;
    while (v != dst) {
        const topo_dev *d = &t->dev[v];
        /* among next hops one step closer, the widest links (NVLink
         * before PCIe, as NCCL's path search prefers), then a hash */
        int cand[64], nc = 0;
        double best_bw = 0;
        for (int k = 0; k < d->n_out; k++) {
            int l = t->out_links[d->first_out + k];
            int u = t->link[l].dst;
            if (u >= p->D || dist[u] != dist[v] - 1 ||
                t->link[l].bw_Bps < best_bw)
                continue;
            if (t->link[l].bw_Bps > best_bw) {
                best_bw = t->link[l].bw_Bps;
                nc = 0;
            }
            if (nc < 64)
                cand[nc++] = l;
        }
        if (nc == 0 || n >= max)
            return -1;
        uint32_t h = hash3((uint32_t)src, (uint32_t)dst, salt);
        int l = cand[nc > 1 ? h % (uint32_t)nc : 0];
        links[n++] = l + node * p->Ln;
        v = t->link[l].dst;
    }
    return n;
}

/* The closest device of a kind; among equally close ones, the i-th for the
 * i-th device of the caller's kind, so GPUs that share a PCIe switch with
 * two NICs get one each (rail affinity). */
static int nearest_local(const topo *t, topo_dist *dc, int local, topo_dev_kind kind)
{
    const struct topo_priv *p = cpriv(t);
    int best_d = 1 << 30, cand[64], nc = 0;
    for (int c = 0; c < p->D; c++) {
        if (t->dev[c].kind != kind)
            continue;
        const int *dist = local_dist(t, dc, c);
        if (!dist || dist[local] < 0 || dist[local] > best_d)
            continue;
        if (dist[local] < best_d) {
            best_d = dist[local];
            nc = 0;
        }
        if (nc < 64)
            cand[nc++] = c;
    }
    return nc ? cand[t->dev[local].local % nc] : -1;
}

int topo_nearest(const topo *t, topo_dist *dc, int dev, topo_dev_kind kind)
{
    const topo_dev *d = &t->dev[dev];
    if (d->node < 0)
        return -1;
    const struct topo_priv *p = cpriv(t);
    int local = dev - d->node * p->D;
    int c = nearest_local(t, dc, local, kind);
    return c < 0 ? -1 : c + d->node * p->D;
}

int topo_gpu_nic(const topo *t, topo_dist *dc, int gpu_rank)
{
    return topo_nearest(t, dc, t->gpu_dev[gpu_rank], DEV_NIC);
}

/* Appends a route inside one node; returns the new count or -1. */
static int append_local(const topo *t, topo_dist *dc, int from, int to, uint32_t salt, int *links,
                        int n, int max)
{
    const struct topo_priv *p = cpriv(t);
    int node = t->dev[from].node;
    if (from == to)
        return n;
    int k = route_local(t, dc, node, from - node * p->D, to - node * p->D, salt,
                        links + n, max - n);
    return k < 0 ? -1 : n + k;
}

/* Inside a node: direct, or staged through the source's host memory when
 * GPU peer-to-peer is off. */
static int route_in_node(const topo *t, topo_dist *dc, int src, int dst, uint32_t salt, int *links,
                         int max)
{
    if (!t->spec.p2p && t->dev[src].kind == DEV_GPU &&
        t->dev[dst].kind == DEV_GPU) {
        int cpu = topo_nearest(t, dc, src, DEV_CPU);
        if (cpu < 0)
            return -1;
        int n = append_local(t, dc, src, cpu, salt, links, 0, max);
        return n < 0 ? -1 : append_local(t, dc, cpu, dst, salt, links, n, max);
    }
    return append_local(t, dc, src, dst, salt, links, 0, max);
}

static int nic_index(const topo *t, int nic_dev)
{
    return t->dev[nic_dev].node * t->nics_per_node + t->dev[nic_dev].local;
}

/* From a device to its NIC (through host memory without GPUDirect). */
static int to_nic(const topo *t, topo_dist *dc, int dev, int nic, uint32_t salt, int *links, int n,
                  int max, bool outbound)
{
    if (t->spec.gpudirect || t->dev[dev].kind != DEV_GPU)
        return outbound ? append_local(t, dc, dev, nic, salt, links, n, max)
                        : append_local(t, dc, nic, dev, salt, links, n, max);
    int cpu = topo_nearest(t, dc, dev, DEV_CPU);
    if (cpu < 0)
        return -1;
    if (outbound) {
        n = append_local(t, dc, dev, cpu, salt, links, n, max);
        return n < 0 ? -1 : append_local(t, dc, cpu, nic, salt, links, n, max);
    }
    n = append_local(t, dc, nic, cpu, salt, links, n, max);
    return n < 0 ? -1 : append_local(t, dc, cpu, dev, salt, links, n, max);
}

/* NIC number `local` of node `node`. */
static int rail_nic(const topo *t, int node, int local)
{
    const struct topo_priv *p = cpriv(t);
    int i = node * t->nics_per_node + local;
    return i < node * t->nics_per_node + t->nics_per_node ? p->nic_dev[i] : -1;
}

/* From a device to the NIC of the rail the destination uses, so traffic
 * between nodes stays on one rail (NCCL's rail-aligned channels).  When
 * that NIC is not the device's own and the node has NVLink, the data goes
 * over NVLink to the GPU beside that NIC, which posts it (NCCL's PXN);
 * otherwise it crosses PCIe. */
static int to_rail(const topo *t, topo_dist *dc, int src, int nic, uint32_t salt, int *links,
                   int max)
{
    const topo_dev *d = &t->dev[src];
    if (d->kind != DEV_GPU || topo_nearest(t, dc, src, DEV_NIC) == nic ||
        !t->spec.gpudirect)
        return to_nic(t, dc, src, nic, salt, links, 0, max, true);
    int base = d->node * t->gpus_per_node;
    for (int r = base; r < base + t->gpus_per_node; r++) {
        int proxy = t->gpu_dev[r];
        if (topo_nearest(t, dc, proxy, DEV_NIC) != nic)
            continue;
        int n = route_in_node(t, dc, src, proxy, salt, links, max);
        if (n > 0 && t->link[links[0]].kind == LINK_NVLINK)
            return append_local(t, dc, proxy, nic, salt, links, n, max);
        break;
    }
    return to_nic(t, dc, src, nic, salt, links, 0, max, true);
}

/* Between a device of a node and a network switch (in-network reduction):
 * through the device's own NIC, its leaf and, for a spine, one uplink. */
static int route_to_switch(const topo *t, topo_dist *dc, int dev, int sw, bool up, uint32_t salt,
                           int *links, int max)
{
    const struct topo_priv *p = cpriv(t);
    const fabric_info *F = &p->f;
    int nic = topo_nearest(t, dc, dev, DEV_NIC);
    if (nic < 0 || !F->nic_up || t->nodes < 2)
        return -1;
    int i = nic_index(t, nic), leaf = F->nic_leaf[i];
    bool spine = sw >= F->first_spine && F->nspine > 0 &&
                 sw < F->first_spine + F->nspine;
    if (!spine && sw != leaf)
        return -1;
    int l = leaf - F->first_leaf, s = spine ? sw - F->first_spine : 0;
    int n = 0;
    if (up) {
        n = to_nic(t, dc, dev, nic, salt, links, 0, max, true);
        if (n < 0 || n + 2 > max)
            return -1;
        links[n++] = F->nic_up[i];
        if (spine)
            links[n++] = F->leaf_up[l * F->nspine + s];
        return n;
    }
    if (spine)
        links[n++] = F->leaf_down[l * F->nspine + s];
    links[n++] = F->nic_down[i];
    return to_nic(t, dc, dev, nic, salt, links, n, max, false);
}

int topo_route(const topo *t, topo_dist *dc, int src, int dst, uint32_t salt, int *links, int max)
{
    const topo_dev *a = &t->dev[src], *b = &t->dev[dst];
    if (a->node >= 0 && b->kind == DEV_SWITCH)
        return route_to_switch(t, dc, src, dst, true, salt, links, max);
    if (b->node >= 0 && a->kind == DEV_SWITCH)
        return route_to_switch(t, dc, dst, src, false, salt, links, max);
    if (a->node < 0 || b->node < 0)
        return -1; /* other routes start and end inside nodes */
    if (src == dst)
        return 0;
    if (a->node == b->node)
        return route_in_node(t, dc, src, dst, salt, links, max);
    const struct topo_priv *p = cpriv(t);
    const fabric_info *F = &p->f;
    if (!F->nic_up || t->nodes < 2)
        return -1;
    int nb = b->kind == DEV_NIC ? dst : topo_nearest(t, dc, dst, DEV_NIC);
    int na = nb < 0 ? -1 : rail_nic(t, a->node, t->dev[nb].local);
    if (na < 0 || nb < 0)
        return -1;
    int n = to_rail(t, dc, src, na, salt, links, max);
    if (n < 0 || n + 4 > max)
        return -1;
    int ia = nic_index(t, na), ib = nic_index(t, nb);
    links[n++] = F->nic_up[ia];
    int la = F->nic_leaf[ia] - F->first_leaf, lb = F->nic_leaf[ib] - F->first_leaf;
    if (la != lb) {
        if (F->nspine == 0)
            return -1;
        uint32_t key = t->fabric.ecmp ? hash3((uint32_t)src, (uint32_t)dst, salt)
                                      : (uint32_t)ib;
        int s = (int)(key % (uint32_t)F->nspine);
        links[n++] = F->leaf_up[la * F->nspine + s];
        links[n++] = F->leaf_down[lb * F->nspine + s];
    }
    links[n++] = F->nic_down[ib];
    return to_nic(t, dc, dst, nb, salt, links, n, max, false);
}

int64_t topo_route_lat(const topo *t, const int *links, int n)
{
    int64_t lat = 0;
    for (int i = 0; i < n; i++)
        lat += t->link[links[i]].lat_ns;
    return lat;
}

int topo_sharp_switch(const topo *t, topo_dist *dc, int gpu_rank)
{
    const struct topo_priv *p = cpriv(t);
    const fabric_info *F = &p->f;
    if (!t->fabric.sharp || t->nodes < 2 || !F->nic_up)
        return -1;
    int nic = topo_gpu_nic(t, dc, gpu_rank);
    if (nic < 0)
        return -1;
    if (t->fabric.kind == FABRIC_FAT_TREE && F->nleaf > 1)
        return F->nspine > 0 ? F->first_spine : -1;
    return F->nic_leaf[nic_index(t, nic)];
}

void topo_net_apply(topo_nodespec *spec, const topo_net *net)
{
    for (int i = 0; i < spec->nlink; i++) {
        topo_linkspec *l = &spec->link[i];
        if (l->kind == LINK_NVLINK && net->nvlink_GBps > 0)
            l->bw_Bps = net->nvlink_GBps * 1e9;
        if (l->kind == LINK_PCIE && net->pcie_GBps > 0)
            l->bw_Bps = net->pcie_GBps * 1e9;
    }
    if (net->nic_gbps > 0)
        spec->nic_bw_Bps = net->nic_gbps * 1e9 / 8;
}
