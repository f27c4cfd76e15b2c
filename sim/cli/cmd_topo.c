/* llmsim topo — what a topology file builds: devices, links, per-GPU
 * bandwidths and the bisection bandwidth, measured by the flow model. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "hw/net.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim topo NAME|FILE.cfg [--nodes N] [--dot FILE.dot] [--json]\n\n"
    "Builds a node type (topologies/dgx-h100.cfg ...) or a cluster file and\n"
    "prints its devices, links by kind and the bandwidth each GPU has to\n"
    "NVLink, PCIe and the network, plus the bisection bandwidth per GPU:\n"
    "every GPU of one half sends to a partner in the other half at once and\n"
    "the max-min rates of the flow model are summed.  --nodes N joins N\n"
    "nodes on the node type's default fabric (rail-optimized unless the file\n"
    "names another).  --dot writes the graph for Graphviz.\n";

typedef struct summary {
    int dev_count[DEV_KIND_COUNT], link_count[LINK_KIND_COUNT];
    double link_bw_min[LINK_KIND_COUNT], link_bw_max[LINK_KIND_COUNT];
    double gpu_nvlink_Bps, gpu_pcie_Bps, gpu_net_Bps, bisection_Bps;
} summary;

static void count(const topo *t, summary *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < t->ndev; i++)
        s->dev_count[t->dev[i].kind]++;
    for (int l = 0; l < t->nlink; l += 2) { /* each pair once */
        const topo_link *L = &t->link[l];
        int k = L->kind;
        if (s->link_count[k] == 0 || L->bw_Bps < s->link_bw_min[k])
            s->link_bw_min[k] = L->bw_Bps;
        if (L->bw_Bps > s->link_bw_max[k])
            s->link_bw_max[k] = L->bw_Bps;
        s->link_count[k]++;
    }
    /* GPU 0's own links, per direction */
    const topo_dev *g = &t->dev[t->gpu_dev[0]];
    for (int k = 0; k < g->n_out; k++) {
        const topo_link *L = &t->link[t->out_links[g->first_out + k]];
        if (L->kind == LINK_NVLINK)
            s->gpu_nvlink_Bps += L->bw_Bps;
        else
            s->gpu_pcie_Bps += L->bw_Bps;
    }
    if (t->nodes > 1 && t->nics_per_node > 0)
        s->gpu_net_Bps = (double)t->nics_per_node * t->spec.nic_bw_Bps /
                         t->gpus_per_node;
}

static void ignore(engine *e, void *c, uint64_t a)
{
    (void)e;
    (void)c;
    (void)a;
}

/* GPU i of the first half exchanges with GPU i + n/2, both ways at once. */
static double bisection(const topo *t)
{
    int n = t->ngpu;
    if (n < 2)
        return 0;
    engine *e = engine_create(1024);
    net_routes *rt = net_routes_create(t);
    net *nt = e && rt ? net_create(e, rt) : NULL;
    int half = n / 2;
    int *ids = malloc(sizeof(int) * (size_t)n);
    double sum = 0;
    if (e && nt && ids) {
        for (int i = 0; i < half; i++) {
            ids[2 * i] = net_flow(nt, t->gpu_dev[i], t->gpu_dev[i + half], 1e12,
                                  (uint32_t)i, ignore, NULL, 0);
            ids[2 * i + 1] = net_flow(nt, t->gpu_dev[i + half], t->gpu_dev[i],
                                      1e12, (uint32_t)i, ignore, NULL, 0);
        }
        engine_run(e, 0); /* the first solve */
        for (int i = 0; i < 2 * half; i++)
            if (ids[i] >= 0)
                sum += net_flow_rate(nt, ids[i]);
    }
    free(ids);
    net_destroy(nt);
    net_routes_destroy(rt);
    engine_destroy(e);
    return sum / (2 * half); /* per GPU, per direction */
}

static void print_human(const topo *t, const summary *s)
{
    printf("%s: %s\n", t->name, t->spec.display[0] ? t->spec.display
                                                   : t->spec.name);
    printf("%d node%s x %d GPUs (%s) = %d GPUs; p2p %s, GPUDirect RDMA %s\n",
           t->nodes, t->nodes > 1 ? "s" : "", t->gpus_per_node,
           t->gpu ? t->gpu->name : "?", t->ngpu, t->spec.p2p ? "on" : "off",
           t->spec.gpudirect ? "on" : "off");
    printf("\ndevices:");
    for (int k = 0; k < DEV_KIND_COUNT; k++)
        if (s->dev_count[k])
            printf(" %d %s", s->dev_count[k],
                   topo_dev_kind_name((topo_dev_kind)k));
    printf("\nlinks (both directions count as one):\n");
    for (int k = 0; k < LINK_KIND_COUNT; k++)
        if (s->link_count[k]) {
            printf("  %-8s %6d", topo_link_kind_name((topo_link_kind)k),
                   s->link_count[k]);
            if (s->link_bw_min[k] == s->link_bw_max[k])
                printf("  %.1f GB/s per direction\n", s->link_bw_min[k] / 1e9);
            else
                printf("  %.1f .. %.1f GB/s per direction\n",
                       s->link_bw_min[k] / 1e9, s->link_bw_max[k] / 1e9);
        }
    printf("\nper GPU, per direction: NVLink %.1f GB/s, PCIe %.1f GB/s",
           s->gpu_nvlink_Bps / 1e9, s->gpu_pcie_Bps / 1e9);
    if (t->nodes > 1)
        printf(", network %.1f GB/s", s->gpu_net_Bps / 1e9);
    printf("\nbisection bandwidth per GPU (flow model, half to half): "
           "%.1f GB/s per direction\n", s->bisection_Bps / 1e9);
}

static json_t *as_json(const topo *t, const summary *s)
{
    json_t *j = json_object();
    json_object_set_new(j, "name", json_string(t->name));
    json_object_set_new(j, "nodes", json_integer(t->nodes));
    json_object_set_new(j, "gpus", json_integer(t->ngpu));
    json_object_set_new(j, "gpu", json_string(t->gpu ? t->gpu->name : ""));
    json_t *d = json_object();
    for (int k = 0; k < DEV_KIND_COUNT; k++)
        json_object_set_new(d, topo_dev_kind_name((topo_dev_kind)k),
                            json_integer(s->dev_count[k]));
    json_object_set_new(j, "devices", d);
    json_t *l = json_object();
    for (int k = 0; k < LINK_KIND_COUNT; k++)
        json_object_set_new(l, topo_link_kind_name((topo_link_kind)k),
                            json_integer(s->link_count[k]));
    json_object_set_new(j, "links", l);
    json_object_set_new(j, "gpu_nvlink_GBps", json_real(s->gpu_nvlink_Bps / 1e9));
    json_object_set_new(j, "gpu_pcie_GBps", json_real(s->gpu_pcie_Bps / 1e9));
    json_object_set_new(j, "gpu_network_GBps", json_real(s->gpu_net_Bps / 1e9));
    json_object_set_new(j, "bisection_GBps_per_gpu",
                        json_real(s->bisection_Bps / 1e9));
    return j;
}

static int write_dot(const topo *t, const char *path, llm_err *e)
{
    util_outfile o;
    if (util_out_open(&o, path, e))
        return -1;
    static const char *const shape[DEV_KIND_COUNT] = {
        "box", "octagon", "diamond", "house", "ellipse", "doubleoctagon"};
    static const char *const color[LINK_KIND_COUNT] = {"green4", "blue",
                                                       "gray40", "red"};
    fprintf(o.fp, "graph \"%s\" {\n  rankdir=LR; node [fontsize=10];\n",
            t->name);
    for (int k = 0; k < t->nodes; k++) {
        fprintf(o.fp, "  subgraph cluster_n%d { label=\"node %d\";\n", k, k);
        for (int i = 0; i < t->ndev; i++)
            if (t->dev[i].node == k)
                fprintf(o.fp, "    d%d [label=\"%s\", shape=%s];\n", i,
                        t->dev[i].name, shape[t->dev[i].kind]);
        fprintf(o.fp, "  }\n");
    }
    for (int i = 0; i < t->ndev; i++)
        if (t->dev[i].node < 0)
            fprintf(o.fp, "  d%d [label=\"%s\", shape=%s];\n", i,
                    t->dev[i].name, shape[t->dev[i].kind]);
    for (int l = 0; l < t->nlink; l += 2)
        fprintf(o.fp, "  d%d -- d%d [color=%s, label=\"%.0f\"];\n",
                t->link[l].src, t->link[l].dst, color[t->link[l].kind],
                t->link[l].bw_Bps / 1e9);
    fprintf(o.fp, "}\n");
    return util_out_commit(&o, e);
}

static int run(int argc, char **argv, llm_err *e)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'},
        {"nodes", required_argument, 0, 'n'},
        {"dot", required_argument, 0, 'd'},
        {"cluster", required_argument, 0, 'c'},
        {0, 0, 0, 0},
    };
    int json = 0, ch;
    int nodes = 0;
    const char *dot = NULL, *name = NULL;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ch == 'j')
            json = 1;
        else if (ch == 'n') {
            if (cmd_setting_int(EXP_TRAIN, "nodes", optarg, &nodes, e))
                return EXIT_BAD_INPUT;
        } else if (ch == 'd')
            dot = optarg;
        else if (ch == 'c')
            name = optarg;
        else if (ch == ':')
            return err_set(e, "option %s needs a value", argv[optind - 1]),
                   EXIT_BAD_INPUT;
        else
            return cmd_bad_option("topo", argv[optind - 1], opts, e),
                   EXIT_BAD_INPUT;
    }
    if (!name && optind == argc - 1)
        name = argv[optind++];
    if (!name || optind != argc)
        return err_set(e, "expected one topology name or file (see `llmsim "
                          "help topo`)"),
               EXIT_BAD_INPUT;
    gpu_catalog cat;
    if (cfg_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    topo *t = cfg_load_topo_named(name, (int)nodes, -1, &cat, e);
    if (!t) {
        gpu_catalog_free(&cat);
        return EXIT_BAD_INPUT;
    }
    summary s;
    count(t, &s);
    s.bisection_Bps = bisection(t);
    int rc = EXIT_OK;
    if (dot && write_dot(t, dot, e))
        rc = EXIT_BAD_INPUT;
    else if (json)
        cmd_print_json(as_json(t, &s));
    else
        print_human(t, &s);
    topo_destroy(t);
    gpu_catalog_free(&cat);
    return rc;
}

const cmd_def cmd_topo_def = {"topo", "what a topology builds: devices, "
                                      "links, bisection bandwidth",
                              usage, run, 0, NULL};
