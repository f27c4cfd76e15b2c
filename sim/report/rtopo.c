#include "report/rtopo.h"

#include "base/util.h"

static void devices_text(FILE *fp, const rtopo_summary *s)
{
    fprintf(fp, "\ndevices:");
    for (int k = 0; k < DEV_KIND_COUNT; k++)
        if (s->dev_count[k])
            fprintf(fp, " %d %s", s->dev_count[k],
                    topo_dev_kind_name((topo_dev_kind)k));
}

/* One line per link kind present: its count and its bandwidth, or the
 * range when links of the kind differ. */
static void links_text(FILE *fp, const rtopo_summary *s)
{
    fprintf(fp, "\nlinks (both directions count as one):\n");
    for (int k = 0; k < LINK_KIND_COUNT; k++) {
        if (!s->link_count[k])
            continue;
        fprintf(fp, "  %-8s %6d", topo_link_kind_name((topo_link_kind)k),
                s->link_count[k]);
        if (s->link_bw_min_Bps[k] == s->link_bw_max_Bps[k])
            fprintf(fp, "  %.1f GB/s per direction\n",
                    s->link_bw_min_Bps[k] / 1e9);
        else
            fprintf(fp, "  %.1f .. %.1f GB/s per direction\n",
                    s->link_bw_min_Bps[k] / 1e9, s->link_bw_max_Bps[k] / 1e9);
    }
}

void rtopo_text(FILE *fp, const topo *t, const rtopo_summary *s)
{
    fprintf(fp, "%s: %s\n", t->name, t->spec.display[0] ? t->spec.display
                                                        : t->spec.name);
    fprintf(fp, "%d node%s x %d GPUs (%s) = %d GPUs; p2p %s, GPUDirect RDMA "
            "%s\n",
            t->nodes, t->nodes > 1 ? "s" : "", t->gpus_per_node,
            t->gpu ? t->gpu->name : "?", t->ngpu, t->spec.p2p ? "on" : "off",
            t->spec.gpudirect ? "on" : "off");
    devices_text(fp, s);
    links_text(fp, s);
    fprintf(fp, "\nper GPU, per direction: NVLink %.1f GB/s, PCIe %.1f GB/s",
            s->gpu_nvlink_Bps / 1e9, s->gpu_pcie_Bps / 1e9);
    if (t->nodes > 1)
        fprintf(fp, ", network %.1f GB/s", s->gpu_net_Bps / 1e9);
    fprintf(fp, "\nbisection bandwidth per GPU (flow model, half to half): "
            "%.1f GB/s per direction\n", s->bisection_Bps / 1e9);
}

json_t *rtopo_json(const topo *t, const rtopo_summary *s)
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
    json_object_set_new(j, "gpu_nvlink_GBps",
                        json_real(s->gpu_nvlink_Bps / 1e9));
    json_object_set_new(j, "gpu_pcie_GBps", json_real(s->gpu_pcie_Bps / 1e9));
    json_object_set_new(j, "gpu_network_GBps",
                        json_real(s->gpu_net_Bps / 1e9));
    json_object_set_new(j, "bisection_GBps_per_gpu",
                        json_real(s->bisection_Bps / 1e9));
    return j;
}

/* Graphviz shapes per device kind and colours per link kind, in the
 * order of topo_dev_kind and topo_link_kind. */
static const char *const dot_shape[DEV_KIND_COUNT] = {
    "box", "octagon", "diamond", "house", "ellipse", "doubleoctagon"};
static const char *const dot_color[LINK_KIND_COUNT] = {"green4", "blue",
                                                       "gray40", "red"};

static void dot_device(FILE *fp, const topo *t, int i, const char *indent)
{
    fprintf(fp, "%sd%d [label=\"%s\", shape=%s];\n", indent, i,
            t->dev[i].name, dot_shape[t->dev[i].kind]);
}

/* Each node's devices in a subgraph; devices outside any node (network
 * switches) at the top level. */
static void dot_devices(FILE *fp, const topo *t)
{
    for (int k = 0; k < t->nodes; k++) {
        fprintf(fp, "  subgraph cluster_n%d { label=\"node %d\";\n", k, k);
        for (int i = 0; i < t->ndev; i++)
            if (t->dev[i].node == k)
                dot_device(fp, t, i, "    ");
        fprintf(fp, "  }\n");
    }
    for (int i = 0; i < t->ndev; i++)
        if (t->dev[i].node < 0)
            dot_device(fp, t, i, "  ");
}

int rtopo_dot(const char *path, const topo *t, llm_err *e)
{
    util_outfile o;
    if (util_out_open(&o, path, e))
        return -1;
    fprintf(o.fp, "graph \"%s\" {\n  rankdir=LR; node [fontsize=10];\n",
            t->name);
    dot_devices(o.fp, t);
    for (int l = 0; l < t->nlink; l += 2) /* each pair once */
        fprintf(o.fp, "  d%d -- d%d [color=%s, label=\"%.0f\"];\n",
                t->link[l].src, t->link[l].dst, dot_color[t->link[l].kind],
                t->link[l].bw_Bps / 1e9);
    fprintf(o.fp, "}\n");
    return util_out_commit(&o, e);
}
