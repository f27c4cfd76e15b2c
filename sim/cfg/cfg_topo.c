/* Topology files: a node type (devices + links + NIC + default fabric) or a
 * cluster (a node type x N nodes on a fabric). */
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_util.h"
#include "base/tsv.h"
#include "base/util.h"


static const char *const kind_names[] = {"gpu", "nvswitch", "pcie_switch",
                                         "cpu", "nic", "switch"};
static const char *const link_kinds[] = {"nvlink", "pcie", "socket",
                                         "network"};
static const char *const map_names[] = {"all", "block", "one", "pairs",
                                        "chain"};
static const char *const fabric_names[] = {"rail", "single_switch",
                                           "fat_tree"};

static int load_fabric(cfgu *c, const config_setting_t *g, topo_fabricspec *f)
{
    static const char *const keys[] = {"kind", "switch_lat_ns",
                                       "oversubscription", "leaf_ports",
                                       "sharp", "routing"};
    static const char *const routings[] = {"dmodk", "ecmp"};
    int kind = 0, lat = 500, routing = f->ecmp;
    if (cfgu_check_keys(c, g, keys, COUNT(keys)) ||
        cfgu_enum(c, g, "kind", true, fabric_names, COUNT(fabric_names),
                  &kind) ||
        cfgu_int(c, g, "switch_lat_ns", false, 0, 1000000, &lat) ||
        cfgu_double(c, g, "oversubscription", false, 0.01, 1000,
                    &f->oversubscription) ||
        cfgu_int(c, g, "leaf_ports", false, 1, 100000, &f->leaf_ports) ||
        cfgu_bool(c, g, "sharp", false, &f->sharp) ||
        cfgu_enum(c, g, "routing", false, routings, 2, &routing))
        return -1;
    f->ecmp = routing == 1;
    f->kind = (topo_fabric)kind;
    f->switch_lat_ns = lat;
    return 0;
}

static int load_devices(cfgu *c, const config_setting_t *list,
                        topo_nodespec *s)
{
    static const char *const keys[] = {"name", "kind", "count", "nvls",
                                       "model"};
    int n = config_setting_length(list);
    if (n > TOPO_MAX_SPECS)
        return err_at(c->e, cfgu_file(c, list), cfgu_line(list), "devices",
                      "%d groups (expected at most %d)", n, TOPO_MAX_SPECS);
    int gpus = 0, nics = 0;
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
        topo_devspec *d = &s->dev[i];
        int kind = 0;
        if (config_setting_type(g) != CONFIG_TYPE_GROUP)
            return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "devices",
                          "wrong type (expected { name = ...; kind = ...; })");
        if (cfgu_check_keys(c, g, keys, COUNT(keys)) ||
            cfgu_str(c, g, "name", true, d->name, sizeof d->name) ||
            cfgu_enum(c, g, "kind", true, kind_names, COUNT(kind_names),
                      &kind) ||
            cfgu_int(c, g, "count", true, 1, 4096, &d->count) ||
            cfgu_bool(c, g, "nvls", false, &d->nvls) ||
            cfgu_str(c, g, "model", kind == DEV_GPU, d->model,
                     sizeof d->model))
            return -1;
        d->kind = (topo_dev_kind)kind;
        gpus += kind == DEV_GPU;
        nics += kind == DEV_NIC;
        for (int k = 0; k < i; k++)
            if (strcmp(s->dev[k].name, d->name) == 0)
                return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "name",
                              "duplicate device \"%s\" (expected unique "
                              "names)", d->name);
    }
    s->ndev = n;
    if (gpus != 1 || nics > 1)
        return err_at(c->e, cfgu_file(c, list), cfgu_line(list), "devices",
                      "%d gpu and %d nic groups (expected exactly one gpu "
                      "group and at most one nic group)", gpus, nics);
    return 0;
}

static int find_dev(cfgu *c, const config_setting_t *g, const char *key,
                    const topo_nodespec *s, int *out)
{
    char name[32];
    if (cfgu_str(c, g, key, true, name, sizeof name))
        return -1;
    const char *names[TOPO_MAX_SPECS];
    for (int i = 0; i < s->ndev; i++) {
        names[i] = s->dev[i].name;
        if (strcmp(name, s->dev[i].name) == 0) {
            *out = i;
            return 0;
        }
    }
    char hint[96];
    util_did_you_mean(hint, sizeof hint, name, names, s->ndev);
    return err_at(c->e, cfgu_file(c, config_setting_get_member(g, key)),
                  cfgu_line(config_setting_get_member(g, key)), key,
                  "unknown device \"%s\"%s (expected a name from devices)",
                  name, hint);
}

static int check_map(cfgu *c, const config_setting_t *g, topo_nodespec *s,
                     const topo_linkspec *L)
{
    int na = s->dev[L->a].count, nb = s->dev[L->b].count;
    const char *bad = NULL;
    if (L->map == MAP_BLOCK && (na >= nb ? na % nb : nb % na))
        bad = "block needs one count to be a multiple of the other";
    else if (L->map == MAP_ONE && na != nb)
        bad = "one needs equal counts";
    else if ((L->map == MAP_PAIRS || L->map == MAP_CHAIN) && L->a != L->b)
        bad = "pairs and chain join devices of one group (a == b)";
    else if ((L->map == MAP_ONE || L->map == MAP_BLOCK) && L->a == L->b)
        bad = "a and b are one group: one and block would link each device "
              "to itself (expected all, pairs or chain within a group)";
    else if (L->map == MAP_PAIRS && na % 2)
        bad = "pairs needs an even count";
    if (!bad)
        return 0;
    return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "map", "%s (a has %d, b has "
                  "%d)", bad, na, nb);
}

/* A second entry between the same two groups would add its bandwidth to
 * the first's on every pair it joins: one entry gives the total. */
static int check_repeat(cfgu *c, const config_setting_t *g,
                        const topo_nodespec *s, int i)
{
    const topo_linkspec *L = &s->link[i];
    for (int j = 0; j < i; j++) {
        const topo_linkspec *P = &s->link[j];
        if (!((P->a == L->a && P->b == L->b) ||
              (P->a == L->b && P->b == L->a)))
            continue;
        return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "links",
                      "%s-%s is linked again (first at line %d; expected "
                      "one entry per pair of groups, its GBps the total)",
                      s->dev[L->a].name, s->dev[L->b].name, P->line);
    }
    return 0;
}

static int load_links(cfgu *c, const config_setting_t *list,
                      topo_nodespec *s)
{
    static const char *const keys[] = {"a", "b", "map", "kind", "GBps",
                                       "lat_ns"};
    int n = config_setting_length(list);
    if (n > TOPO_MAX_SPECS * 2)
        return err_at(c->e, cfgu_file(c, list), cfgu_line(list), "links",
                      "%d entries (expected at most %d)", n,
                      TOPO_MAX_SPECS * 2);
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
        topo_linkspec *L = &s->link[i];
        int map = 0, kind = 0, lat = 0;
        double gbps = 0;
        if (config_setting_type(g) != CONFIG_TYPE_GROUP)
            return err_at(c->e, cfgu_file(c, g), cfgu_line(g), "links",
                          "wrong type (expected { a = ...; b = ...; })");
        if (cfgu_check_keys(c, g, keys, COUNT(keys)) ||
            find_dev(c, g, "a", s, &L->a) || find_dev(c, g, "b", s, &L->b) ||
            cfgu_enum(c, g, "map", true, map_names, COUNT(map_names), &map) ||
            cfgu_enum(c, g, "kind", true, link_kinds, COUNT(link_kinds),
                      &kind) ||
            cfgu_double(c, g, "GBps", true, 1e-6, 1e6, &gbps) ||
            cfgu_int(c, g, "lat_ns", true, 0, 100000000, &lat))
            return -1;
        L->map = (topo_map)map;
        L->kind = (topo_link_kind)kind;
        L->bw_Bps = gbps * 1e9;
        L->lat_ns = lat;
        L->line = cfgu_line(g);
        if (check_map(c, g, s, L) || check_repeat(c, g, s, i))
            return -1;
    }
    s->nlink = n;
    return 0;
}

/* A node's nic group, or a cluster's, which changes only the keys it
 * gives of its node's (over: gbps not required). */
static int load_nic(cfgu *c, const config_setting_t *g, topo_nodespec *s,
                    bool over)
{
    static const char *const keys[] = {"gbps", "lat_ns", "gpudirect",
                                       "measured_GBps"};
    double gbps = over ? s->nic_bw_Bps * 8 / 1e9 : 100;
    double meas = over ? s->nic_measured_Bps / 1e9 : 0;
    int lat = over ? (int)s->nic_lat_ns : 1000;
    if (!over)
        s->gpudirect = true;
    if (cfgu_check_keys(c, g, keys, COUNT(keys)) ||
        cfgu_double(c, g, "gbps", !over, 1e-3, 1e6, &gbps) ||
        cfgu_int(c, g, "lat_ns", false, 0, 100000000, &lat) ||
        cfgu_bool(c, g, "gpudirect", false, &s->gpudirect) ||
        cfgu_double(c, g, "measured_GBps", false, 1e-3, 1e6, &meas))
        return -1;
    /* a measurement never beats the line it was taken on */
    if (meas > gbps / 8)
        return err_at(c->e, c->file, cfgu_line(g), "measured_GBps",
                      "%g GB/s is above the line rate of gbps = %g (expected "
                      "at most %g GB/s)", meas, gbps, gbps / 8);
    s->nic_bw_Bps = gbps * 1e9 / 8;
    s->nic_measured_Bps = meas * 1e9;
    s->nic_lat_ns = lat;
    return 0;
}

static int list_member(cfgu *c, const config_setting_t *r, const char *key,
                       config_setting_t **out)
{
    config_setting_t *l = config_setting_get_member(r, key);
    if (!l || (config_setting_type(l) != CONFIG_TYPE_LIST) ||
        config_setting_length(l) == 0)
        return err_at(c->e, cfgu_file(c, l), l ? cfgu_line(l) : 1, key,
                      "missing or empty (expected %s = ( { ... }, ... );)",
                      key);
    *out = l;
    return 0;
}

static int load_node(cfgu *c, const config_setting_t *r, topo_nodespec *s)
{
    static const char *const keys[] = {"name",  "display", "source",
                                       "devices", "links", "nic",
                                       "p2p",   "fabric", "cpu_vendor",
                                       "host_cpu"};
    config_setting_t *devs, *links, *nic, *fab;
    int vendor = CPU_OTHER;
    s->p2p = true;
    s->fabric = (topo_fabricspec){FABRIC_RAIL, 500, 1.0, 0, false, false};
    if (cfgu_check_keys(c, r, keys, COUNT(keys)) ||
        cfgu_str(c, r, "name", false, s->name, sizeof s->name) ||
        cfgu_str(c, r, "display", false, s->display, sizeof s->display) ||
        cfgu_str(c, r, "source", true, s->source, sizeof s->source) ||
        list_member(c, r, "devices", &devs) || load_devices(c, devs, s) ||
        list_member(c, r, "links", &links) ||
        (s->links_line = cfgu_line(links), load_links(c, links, s)) ||
        cfgu_bool(c, r, "p2p", false, &s->p2p) ||
        cfgu_enum(c, r, "cpu_vendor", false, topo_cpu_vendor_names,
                  CPU_VENDOR_COUNT, &vendor) ||
        cfgu_str(c, r, "host_cpu", false, s->host_cpu, sizeof s->host_cpu) ||
        cfgu_group(c, r, "nic", &nic) || cfgu_group(c, r, "fabric", &fab) ||
        (nic && load_nic(c, nic, s, false)) || (fab && load_fabric(c, fab, &s->fabric)))
        return -1;
    s->cpu_vendor = (topo_cpu_vendor)vendor;
    const config_setting_t *hc = config_setting_get_member(r, "host_cpu");
    s->host_cpu_line = hc ? cfgu_line(hc) : 0;
    s->host_speed = 1;
    for (int i = 0; i < s->ndev; i++)
        if (s->dev[i].kind == DEV_NIC && !nic)
            return err_at(c->e, c->file, 1, "nic", "missing (expected nic = "
                          "{ gbps = ...; } for the nic devices)");
    return 0;
}

static int read_node(const char *path, topo_nodespec *s, llm_err *e)
{
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    util_basename_id(path, s->name, sizeof s->name);
    int rc = cfgu_read(&c, &cfg) || load_node(&c, config_root_setting(&cfg), s)
                 ? -1
                 : 0;
    config_destroy(&cfg);
    return rc;
}

/* The node's host CPU's speed from calib/host-cpus.tsv: a CPU the node
 * file names must have a row there. */
static int host_speed(const char *datadir, topo_nodespec *s, llm_err *e)
{
    if (!s->host_cpu[0])
        return 0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/calib/host-cpus.tsv", datadir);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    int rc = -1, cc = tsv_col(&t, "cpu", e), cs;
    if (cc < 0 || (cs = tsv_col(&t, "speed", e)) < 0)
        goto out;
    const char *names[64];
    int n = 0;
    for (int i = 0; i < t.rows; i++) {
        if (strcmp(tsv_get(&t, i, cc), s->host_cpu) == 0) {
            rc = tsv_num(&t, i, cs, 0.05, 20, &s->host_speed, e);
            goto out;
        }
        if (n < 64)
            names[n++] = tsv_get(&t, i, cc);
    }
    char hint[128];
    err_at(e, s->path, s->host_cpu_line, "host_cpu", "\"%s\" has no row in "
           "%s%s (expected a cpu listed there)", s->host_cpu, path,
           util_did_you_mean(hint, sizeof hint, s->host_cpu, names, n));
out:
    tsv_free(&t);
    return rc;
}

int cfg_load_topology(const char *path, const char *datadir, topo_nodespec *s,
                      int *nodes, topo_fabricspec *fabric, llm_err *e)
{
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    if (!config_setting_get_member(r, "node")) { /* a node type */
        config_destroy(&cfg);
        if (read_node(path, s, e) || host_speed(datadir, s, e))
            return -1;
        *nodes = 1;
        *fabric = s->fabric;
        return 0;
    }
    static const char *const keys[] = {"name", "display", "source", "node",
                                       "nodes", "fabric", "p2p", "nic"};
    char node[64], name[64] = "", display[128] = "";
    bool p2p = false;
    bool has_p2p = config_setting_get_member(r, "p2p") != NULL;
    config_setting_t *fab, *nic;
    if (cfgu_check_keys(&c, r, keys, COUNT(keys)) ||
        cfgu_str(&c, r, "name", false, name, sizeof name) ||
        cfgu_str(&c, r, "display", false, display, sizeof display) ||
        cfgu_str(&c, r, "node", true, node, sizeof node) ||
        cfgu_int(&c, r, "nodes", true, 1, 1000000, nodes) ||
        cfgu_bool(&c, r, "p2p", false, &p2p) ||
        cfgu_group(&c, r, "fabric", &fab) || cfgu_group(&c, r, "nic", &nic))
        goto out;
    char np[PATH_MAX];
    snprintf(np, sizeof np, "%s/topologies/%s.cfg", datadir, node);
    if (read_node(np, s, e) || host_speed(datadir, s, e))
        goto out;
    *fabric = s->fabric;
    if (fab && load_fabric(&c, fab, fabric))
        goto out;
    if (nic && s->nic_bw_Bps <= 0) {
        err_at(e, path, cfgu_line(nic), "nic", "node type \"%s\" has no NICs "
               "(expected a node whose file declares them)", node);
        goto out;
    }
    if (nic && load_nic(&c, nic, s, true))
        goto out;
    if (has_p2p)
        s->p2p = p2p;
    if (name[0])
        snprintf(s->name, sizeof s->name, "%s", name);
    if (display[0])
        snprintf(s->display, sizeof s->display, "%s", display);
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}
