/* llmsim topo — what a topology file builds: devices, links, per-GPU
 * bandwidths and the bisection bandwidth, measured by the flow model. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "hw/net.h"
#include "report/rtopo.h"

static const char usage[] =
    "usage: llmsim topo NAME|FILE.cfg [--nodes N] [--dot FILE.dot] [--json]\n\n"
    "Builds a node type (topologies/dgx-h100.cfg ...) or a cluster file and\n"
    "prints its devices, links by kind and the bandwidth each GPU has to\n"
    "NVLink, PCIe and the network, plus the bisection bandwidth per GPU:\n"
    "every GPU of one half sends to a partner in the other half at once and\n"
    "the max-min rates of the flow model are summed.  --nodes N joins N\n"
    "nodes on the node type's default fabric (rail-optimized unless the file\n"
    "names another).  --dot writes the graph for Graphviz.\n";

/* Devices and links by kind, and GPU 0's bandwidth to NVLink, PCIe and
 * the network: the per-GPU figures the summary shows. */
static void count(const topo *t, rtopo_summary *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < t->ndev; i++)
        s->dev_count[t->dev[i].kind]++;
    for (int l = 0; l < t->nlink; l += 2) { /* each pair once */
        const topo_link *L = &t->link[l];
        int k = L->kind;
        if (s->link_count[k] == 0 || L->bw_Bps < s->link_bw_min_Bps[k])
            s->link_bw_min_Bps[k] = L->bw_Bps;
        if (L->bw_Bps > s->link_bw_max_Bps[k])
            s->link_bw_max_Bps[k] = L->bw_Bps;
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
    optind = 0; /* glibc: a full reset, a half-read "-xy" included */
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
    if (cmd_inputs_only)
        return EXIT_OK;
    gpu_catalog cat;
    if (cfg_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    topo *t = cfg_load_topo_named(name, (int)nodes, -1, &cat, e);
    if (!t) {
        gpu_catalog_free(&cat);
        return EXIT_BAD_INPUT;
    }
    rtopo_summary s;
    count(t, &s);
    s.bisection_Bps = bisection(t);
    int rc = EXIT_OK;
    if (dot && rtopo_dot(dot, t, e))
        rc = EXIT_BAD_INPUT;
    else if (json)
        cmd_print_json(rtopo_json(t, &s));
    else
        rtopo_text(stdout, t, &s);
    topo_destroy(t);
    gpu_catalog_free(&cat);
    return rc;
}

const cmd_def cmd_topo_def = {"topo", "what a topology builds: devices, "
                                      "links, bisection bandwidth",
                              usage, run, 0, NULL};
