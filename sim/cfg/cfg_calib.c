/* Collective calibration: NCCL's own model constants (calib/nccl-protocol.tsv,
 * read from NCCL's tuning.cc) and achievable link fractions
 * (calib/links.tsv), chosen for the topology's GPU architecture
 * (calib/nccl-arch.tsv), PCIe generation and NIC speed (calib/nics.tsv). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "base/tsv.h"
#include "cfg/cfg_tsv.h"

static int algo_of(const char *s)
{
    if (strcmp(s, "Ring") == 0)
        return ALGO_RING;
    if (strcmp(s, "Tree") == 0)
        return ALGO_TREE;
    if (strcmp(s, "NVLS") == 0)
        return ALGO_NVLS;
    if (strcmp(s, "CollNetDirect") == 0) /* NCCL's SHARP algorithm */
        return ALGO_SHARP;
    return -1;
}

static int proto_of(const char *s)
{
    for (int p = 0; p < PROTO_COUNT; p++)
        if (strcmp(s, coll_proto_names[p]) == 0)
            return p;
    return -1;
}

static int hw_of(const char *s)
{
    static const char *const names[HW_COUNT] = {"NVLINK", "PCI", "NET"};
    for (int h = 0; h < HW_COUNT; h++)
        if (strcmp(s, names[h]) == 0)
            return h;
    return -1;
}

typedef struct cols {
    int table, algo, proto, hw, arch, value;
} cols;

static int protocol_row(const tsv *t, int r, const cols *c, const char *cc,
                        const char *cpu, coll_calib *k, llm_err *e)
{
    const char *table = tsv_get(t, r, c->table);
    int a = algo_of(tsv_get(t, r, c->algo));
    int p = proto_of(tsv_get(t, r, c->proto));
    double v;
    if (strcmp(table, "baseLat") == 0 && a >= 0 && p >= 0) {
        if (tsv_num(t, r, c->value, 0, 1e6, &v, e))
            return -1;
        k->base_lat_us[a][p] = v;
        if (a == ALGO_RING) /* hierarchical and p2p run ring kernels */
            k->base_lat_us[ALGO_HIER][p] = k->base_lat_us[ALGO_DIRECT][p] = v;
    } else if (strcmp(table, "hwLat") == 0 && a >= 0 && p >= 0) {
        int h = hw_of(tsv_get(t, r, c->hw));
        if (h < 0)
            return 0;
        if (tsv_num(t, r, c->value, 0, 1e6, &v, e))
            return -1;
        k->hw_lat_us[h][a][p] = v;
        if (a == ALGO_RING)
            k->hw_lat_us[h][ALGO_HIER][p] = k->hw_lat_us[h][ALGO_DIRECT][p] = v;
    } else if (strcmp(table, "protoEfficiency") == 0 && p >= 0) {
        if (tsv_num(t, r, c->value, 1e-3, 1, &v, e))
            return -1;
        k->proto_eff[p] = v;
    } else if (strcmp(table, "nvlsEfficiency") == 0 &&
               strcmp(tsv_get(t, r, c->arch), cc) == 0) {
        if (tsv_num(t, r, c->value, 0, 1, &v, e))
            return -1;
        k->nvls_eff = v;
    } else if (strcmp(table, "buffSize") == 0 &&
               strcmp(tsv_get(t, r, c->proto), "Simple") == 0) {
        if (tsv_num(t, r, c->value, 1, 1e12, &v, e))
            return -1;
        k->chunk_bytes = v; /* divided by NCCL_STEPS below */
    } else if ((strcmp(table, "perChMaxTreeBws") == 0 ||
                strcmp(table, "perChMaxRingLL128Bws") == 0) &&
               strcmp(tsv_get(t, r, c->arch), cc) == 0) {
        static const char *const scales[3] = {"N1", "N2", "N4"};
        double *dst = table[8] == 'T' ? k->tree_ch_Bps : k->ring_ch_Bps;
        for (int i = 0; i < 3; i++)
            if (strcmp(tsv_get(t, r, c->hw), scales[i]) == 0) {
                if (tsv_num(t, r, c->value, 0, 1e6, &v, e))
                    return -1;
                dst[i] = v * 1e9;
            }
    } else if (strcmp(table, "busBwFactor") == 0 && a == ALGO_TREE &&
               strcmp(tsv_get(t, r, c->proto), "-") == 0 && k->tree_factor == 0) {
        if (tsv_num(t, r, c->value, 0, 1, &v, e))
            return -1;
        k->tree_factor = v; /* the first row: the all-protocol x0.92 */
    } else if ((strcmp(table, "threadThreshold") == 0 ||
                strcmp(table, "maxThreads") == 0) && p >= 0 &&
               strcmp(tsv_get(t, r, c->algo), "-") == 0) {
        if (tsv_num(t, r, c->value, 1, 1e6, &v, e))
            return -1;
        (table[0] == 't' ? k->thread_bytes : k->max_threads)[p] = v;
    } else if (strcmp(table, "MAXCHANNELS") == 0) {
        if (tsv_num(t, r, c->value, 1, 1024, &v, e))
            return -1;
        k->max_channels = v;
    } else if (strcmp(table, "llMaxBws") == 0 &&
               strcmp(tsv_get(t, r, c->arch), cpu) == 0 &&
               (strcmp(tsv_get(t, r, c->hw), "N2") == 0 ||
                strcmp(tsv_get(t, r, c->hw), "N4") == 0)) {
        bool two = strcmp(tsv_get(t, r, c->hw), "N2") == 0;
        if (tsv_num(t, r, c->value, 0, 1e6, &v, e))
            return -1;
        k->ll_net_Bps[two ? 0 : 1] = v * 1e9; /* 2 nodes; 3 and more */
    } else if (strcmp(table, "nvlsChunkSize") == 0) {
        if (tsv_num(t, r, c->value, 1, 1e9, &v, e))
            return -1;
        k->nvls_chunk_max = v;
    } else if (strcmp(table, "nvlsChannels") == 0 &&
               strcmp(tsv_get(t, r, c->arch), cc) == 0) {
        if (tsv_num(t, r, c->value, 1, 64, &v, e))
            return -1;
        k->nvls_channels = v;
    } else if (strcmp(table, "nvlsChunkStep") == 0) {
        int i = 0;
        while (i < 3 && k->nvls_step_mult[i] > 0)
            i++;
        if (i == 3)
            return err_set(e, "%s:%d: nvlsChunkStep: a fourth row (expected "
                              "three)", t->path, t->line[r]);
        if (tsv_num(t, r, c->hw, 1, 1e6, &k->nvls_step_mult[i], e) ||
            tsv_num(t, r, c->value, 1, 1e9, &k->nvls_step_bytes[i], e))
            return -1;
    } else if (strcmp(table, "nvlsFillChunks") == 0) {
        if (tsv_num(t, r, c->value, 0, 1e3, &v, e))
            return -1;
        k->nvls_fill_chunks = v;
    } else if (strcmp(table, "NCCL_STEPS") == 0) {
        if (tsv_num(t, r, c->value, 1, 1024, &v, e))
            return -1;
        k->steps = v;
    }
    return 0;
}

static int load_protocol(const char *path, const char *cc, const char *cpu,
                         coll_calib *k, llm_err *e)
{
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    cols c = {-1, -1, -1, -1, -1, -1};
    int rc = (c.table = tsv_col(&t, "table", e)) < 0 ||
             (c.algo = tsv_col(&t, "algorithm", e)) < 0 ||
             (c.proto = tsv_col(&t, "protocol", e)) < 0 ||
             (c.hw = tsv_col(&t, "hw", e)) < 0 ||
             (c.arch = tsv_col(&t, "arch", e)) < 0 ||
             (c.value = tsv_col(&t, "value", e)) < 0
                 ? -1
                 : 0;
    for (int r = 0; rc == 0 && r < t.rows; r++)
        rc = protocol_row(&t, r, &c, cc, cpu, k, e);
    tsv_free(&t);
    if (rc == 0 && (k->steps <= 0 || k->chunk_bytes <= 0))
        rc = err_set(e, "%s: no buffSize/NCCL_STEPS rows (expected the "
                        "Simple buffer size and NCCL_STEPS)", path);
    for (int p = 0; rc == 0 && p < PROTO_COUNT; p++)
        if (k->thread_bytes[p] <= 0 || k->max_threads[p] <= 0 ||
            k->max_channels <= 0)
            rc = err_set(e, "%s: no threadThreshold/maxThreads row for %s "
                            "or no MAXCHANNELS row (expected NCCL's channel "
                            "rule for every protocol)", path,
                         coll_proto_names[p]);
    if (rc == 0)
        k->chunk_bytes /= k->steps;
    return rc;
}

/* ---- calib/nccl-arch.tsv: compute capability -> arch ------------------ */

/* Row r of nccl-arch.tsv, checked; *hit when it is the first row of its
 * table to hold sm (the table's arch then copied to out[table]). */
static int arch_row(const tsv *t, int r, const int c[5], int sm,
                    char out[2][24], llm_err *e)
{
    static const char *const tables[2] = {"tuning", "nvlink"};
    const char *tab = tsv_get(t, r, c[0]);
    int i = strcmp(tab, tables[0]) == 0 ? 0 : strcmp(tab, tables[1]) == 0
                                                  ? 1
                                                  : -1;
    if (i < 0)
        return err_at(e, t->path, t->line[r], "table", "unknown table \"%s\" "
                      "(expected tuning or nvlink)", tab);
    double lo, hi;
    if (tsv_num(t, r, c[1], 0, 9999, &lo, e) ||
        tsv_num(t, r, c[2], lo, 9999, &hi, e))
        return -1;
    if (lo != floor(lo) || hi != floor(hi))
        return err_at(e, t->path, t->line[r], "sm_min", "%g..%g are not whole "
                      "numbers (expected compute capabilities x 10)", lo, hi);
    const char *arch = tsv_get(t, r, c[3]);
    if (!arch[0] || strlen(arch) >= 24)
        return err_at(e, t->path, t->line[r], "arch", "\"%s\" (expected a "
                      "name of 1 to 23 characters)", arch);
    if (!tsv_get(t, r, c[4])[0])
        return err_at(e, t->path, t->line[r], "source", "empty (expected "
                      "where the bucket comes from)");
    if (!out[i][0] && lo <= sm && sm <= hi)
        snprintf(out[i], 24, "%s", arch);
    return 0;
}

/* NCCL's architecture (tuning) and the NVLink row's arch for compute
 * capability sm. */
static int load_arch(const char *datadir, int sm, char *tuning, char *nvlink,
                     llm_err *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/calib/nccl-arch.tsv", datadir);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    static const char *const names[5] = {"table", "sm_min", "sm_max", "arch",
                                         "source"};
    int c[5], rc = 0;
    char out[2][24] = {"", ""};
    for (int i = 0; rc == 0 && i < 5; i++)
        rc = (c[i] = tsv_col(&t, names[i], e)) < 0 ? -1 : 0;
    for (int r = 0; rc == 0 && r < t.rows; r++)
        rc = arch_row(&t, r, c, sm, out, e);
    tsv_free(&t);
    for (int i = 0; rc == 0 && i < 2; i++)
        if (!out[i][0])
            rc = err_at(e, path, 0, i ? "nvlink" : "tuning", "no row holds "
                        "sm %d (expected rows whose sm_min..sm_max cover "
                        "every compute capability)", sm);
    if (rc == 0) {
        snprintf(tuning, 24, "%s", out[0]);
        snprintf(nvlink, 24, "%s", out[1]);
    }
    return rc;
}

/* ---- calib/nics.tsv: NIC line rate -> network row ---------------------- */

static int load_nic_kind(const char *datadir, double nic_Bps, char *kind,
                         llm_err *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/calib/nics.tsv", datadir);
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    static const char *const names[4] = {"kind", "min_GBps", "line_GBps",
                                         "source"};
    int c[4], rc = 0;
    double best = -1;
    for (int i = 0; rc == 0 && i < 4; i++)
        rc = (c[i] = tsv_col(&t, names[i], e)) < 0 ? -1 : 0;
    for (int r = 0; rc == 0 && r < t.rows; r++) {
        double lo, line;
        const char *k = tsv_get(&t, r, c[0]);
        if (tsv_num(&t, r, c[1], 0, 1e6, &lo, e) ||
            tsv_num(&t, r, c[2], 1e-3, 1e6, &line, e))
            rc = -1;
        else if (!k[0] || strlen(k) >= 24)
            rc = err_at(e, path, t.line[r], "kind", "\"%s\" (expected a "
                        "name of 1 to 23 characters)", k);
        else if (!tsv_get(&t, r, c[3])[0])
            rc = err_at(e, path, t.line[r], "source", "empty (expected "
                        "where the figures come from)");
        for (int q = 0; rc == 0 && q < r; q++)
            if (atof(tsv_get(&t, q, c[1])) == lo)
                rc = err_at(e, path, t.line[r], "min_GBps", "%g again (line "
                            "%d has it; expected one row per rate)", lo,
                            t.line[q]);
        if (rc == 0 && lo * 1e9 <= nic_Bps && lo > best) {
            best = lo;
            snprintf(kind, 24, "%s", k);
        }
    }
    tsv_free(&t);
    if (rc == 0 && best < 0)
        rc = err_at(e, path, 0, "min_GBps", "no row for a NIC of %g GB/s "
                    "(expected a row with min_GBps 0)", nic_Bps / 1e9);
    return rc;
}

int cfg_coll_keys_of(const char *datadir, const topo *t, cfg_coll_keys *keys,
                     llm_err *e)
{
    memset(keys, 0, sizeof *keys);
    const gpu_spec *g = t->gpu;
    if (!g)
        return err_set(e, "%s: no GPU model (expected one to choose NCCL's "
                          "architecture rows)", t->name);
    if (load_arch(datadir, g->sm, keys->nccl, keys->link[LINK_NVLINK], e) ||
        load_nic_kind(datadir, t->spec.nic_bw_Bps, keys->link[LINK_NETWORK],
                      e))
        return -1;
    /* NCCL (tuning.cc): AMD hosts take the AMD rows, every other the
     * Intel ones */
    snprintf(keys->cpu, sizeof keys->cpu, "%s",
             t->spec.cpu_vendor == CPU_AMD ? "cpu-amd" : "cpu-intel");
    snprintf(keys->link[LINK_PCIE], 24, "gen%d", g->pcie_gen);
    snprintf(keys->link[LINK_SOCKET], 24, "-");
    return 0;
}

/* ---- calib/links.tsv ---------------------------------------------------- */

static int load_links(const char *path, const cfg_coll_keys *ks,
                      coll_calib *k, llm_err *e)
{
    tsv t;
    if (tsv_load(path, &t, e))
        return -1;
    int cl = -1, ca = -1, ce = -1;
    int rc = (cl = tsv_col(&t, "link", e)) < 0 ||
                     (ca = tsv_col(&t, "arch", e)) < 0 ||
                     (ce = tsv_col(&t, "efficiency", e)) < 0
                 ? -1
                 : 0;
    for (int r = 0; rc == 0 && r < t.rows; r++) {
        double v;
        if (tsv_num(&t, r, ce, 0.01, 1, &v, e)) {
            rc = -1;
            break;
        }
        for (int kind = 0; kind < LINK_KIND_COUNT; kind++)
            if (strcmp(tsv_get(&t, r, cl),
                       topo_link_kind_name((topo_link_kind)kind)) == 0 &&
                (strcmp(tsv_get(&t, r, ca), ks->link[kind]) == 0 ||
                 strcmp(tsv_get(&t, r, ca), "-") == 0))
                k->link_eff[kind] = v;
    }
    tsv_free(&t);
    return rc;
}

int cfg_load_coll_calib(const char *datadir, const topo *t, coll_calib *k,
                        llm_err *e)
{
    cfg_coll_keys keys;
    if (cfg_coll_keys_of(datadir, t, &keys, e) ||
        cfg_load_coll_calib_keys(datadir, &keys, k, e))
        return -1;
    /* a fabric known by measurement: its per-NIC rate over the line rate,
     * in place of calib/links.tsv's network row */
    if (t->spec.nic_measured_Bps > 0 && t->spec.nic_bw_Bps > 0)
        k->link_eff[LINK_NETWORK] = t->spec.nic_measured_Bps /
                                    t->spec.nic_bw_Bps;
    return 0;
}

int cfg_load_coll_calib_keys(const char *datadir, const cfg_coll_keys *keys,
                             coll_calib *k, llm_err *e)
{
    memset(k, 0, sizeof *k);
    for (int i = 0; i < LINK_KIND_COUNT; i++)
        k->link_eff[i] = 1; /* a link kind without a row runs at line rate */
    /* NCCL enables LL128 by default only where every path is NVLink
     * (ncclTopoTuneModel: LL128 on "NVLink-only" systems and the
     * network); on PCIe it stays off. */
    for (int h = 0; h < HW_COUNT; h++)
        for (int p = 0; p < PROTO_COUNT; p++)
            k->proto_ok[h][p] = !(h == HW_PCI && p == PROTO_LL128);
    char p1[PATH_MAX], p2[PATH_MAX];
    snprintf(p1, sizeof p1, "%s/calib/nccl-protocol.tsv", datadir);
    snprintf(p2, sizeof p2, "%s/calib/links.tsv", datadir);
    const char *cc = keys->nccl;
    char p3[PATH_MAX];
    snprintf(p3, sizeof p3, "%s/calib/nccl-host.tsv", datadir);
    const cfg_key host[] = {{"call_us", 0, 1e4, "us", &k->call_us, NULL, 0}};
    if (load_protocol(p1, cc, keys->cpu, k, e) || load_links(p2, keys, k, e) ||
        cfg_keyed_load(p3, NULL, host, 1, e))
        return -1;
    snprintf(k->source, sizeof k->source, "%s (NCCL model, %s); %s", p1, cc,
             p2);
    if (k->nvls_eff <= 0)
        k->nvls_eff = 1e-9; /* no NVLS on this architecture */
    return 0;
}
