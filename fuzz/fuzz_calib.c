/* Fuzz target: the calibration and hardware tables.  The first byte picks a
 * table (its value mod 16), the rest is that table's text:
 *
 *   0 gemm.tsv  1 hbm.tsv  2 attention.tsv  3 launch.tsv
 *      -> cfg_load_cost_dir over a directory holding the fuzzed table and
 *         the real others of calib/h100-sxm/ (gemm.tsv cut to its
 *         {1, 65536}^3 corner, 32 rows instead of 2,916, so that fuzzing
 *         the small tables does not spend its time parsing 0.5 MB), then
 *         a few interpolations in what loaded;
 *   4 power.tsv -> cfg_load_idle_w;
 *   5 nccl-protocol.tsv, 6 links.tsv -> cfg_load_coll_calib for a DGX H100
 *         (and links.tsv's PCIe row through cfg_load_cost_calib);
 *   7 any table -> tsv_load, every column by name, every cell as a number;
 *   8 topologies/pcie.tsv -> cfg_load_gpus of the real catalog;
 *   9 nccl-arch.tsv, 10 nics.tsv -> cfg_load_coll_calib for a DGX H100;
 *   11 overhead.tsv -> cfg_load_overhead for the H100 and for '*';
 *   12 economics.tsv -> cfg_load_econ;
 *   13 fit.tsv -> cfg_load_fit_gpus;
 *   14 kernels.tsv -> cfg_load_cost_calib for the H100;
 *   other values: as 7.
 *
 * Seeds are "0" + gemm.tsv, "1" + hbm.tsv, ... (the byte is 48 + n: '0'
 * to '9', then ':' for 10, ';' for 11, ...). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg/cfg.h"
#include "fuzz_util.h"
#include "base/tsv.h"

/* Each table and its folder in a data directory; index 7 is "any table". */
static const struct {
    const char *name, *sub;
} tables[] = {
    {"gemm.tsv", "calib/h100-sxm"},   {"hbm.tsv", "calib/h100-sxm"},
    {"attention.tsv", "calib/h100-sxm"}, {"launch.tsv", "calib/h100-sxm"},
    {"power.tsv", "calib"},           {"nccl-protocol.tsv", "calib"},
    {"links.tsv", "calib"},           {NULL, NULL},
    {"pcie.tsv", "topologies"},       {"nccl-arch.tsv", "calib"},
    {"nics.tsv", "calib"},            {"overhead.tsv", "calib"},
    {"economics.tsv", "calib"},       {"fit.tsv", "calib"},
    {"kernels.tsv", "calib"},
};
#define NTABLES ((int)(sizeof tables / sizeof tables[0]))

static char root[1100];  /* a data directory: topologies/, calib/ and
                            calib/h100-sxm/ */
static char dir[1300];   /* root/calib/h100-sxm */
static gpu_catalog cat;
static const gpu_spec *h100;
static topo *dgx;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "fuzz_calib: %s: %s\n", what, msg);
    abort(); /* the harness's own data, not the input */
}

/* path of table i in the scratch data directory */
static void table_path(int i, char *out, size_t len)
{
    snprintf(out, len, "%s/%s/%s", root, tables[i].sub, tables[i].name);
}

static void real_path(int i, char *out, size_t len)
{
    snprintf(out, len, "%s/%s/%s", fz_datadir(), tables[i].sub,
             tables[i].name);
}

/* gemm.tsv without the rows whose m, n or k is not 1 or 65536 (the corners
 * of every dtype's grid: still a complete grid). */
static void write_small_gemm(const char *src, const char *dst)
{
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    if (!in || !out)
        die(src, "cannot copy");
    static const char *const mnk[3] = {"m", "n", "k"};
    char line[8192];
    int col[3] = {-1, -1, -1};
    while (fgets(line, sizeof line, in)) {
        if (line[0] == '#' || col[0] < 0) {
            if (line[0] != '#') { /* the header: where m, n and k are */
                char tmp[8192];
                snprintf(tmp, sizeof tmp, "%s", line);
                int c = 0;
                for (char *f = strtok(tmp, "\t\r\n"); f;
                     f = strtok(NULL, "\t\r\n"), c++)
                    for (int k = 0; k < 3; k++)
                        if (strcmp(f, mnk[k]) == 0)
                            col[k] = c;
            }
            fputs(line, out);
            continue;
        }
        char tmp[8192];
        snprintf(tmp, sizeof tmp, "%s", line);
        int c = 0, keep = 1;
        for (char *f = strtok(tmp, "\t\r\n"); f; f = strtok(NULL, "\t\r\n"), c++)
            if ((c == col[0] || c == col[1] || c == col[2]) &&
                strcmp(f, "1") != 0 && strcmp(f, "65536") != 0)
                keep = 0;
        if (keep)
            fputs(line, out);
    }
    fclose(in);
    fclose(out);
}

static void restore(int i)
{
    char src[2048], dst[2048];
    real_path(i, src, sizeof src);
    table_path(i, dst, sizeof dst);
    if (i == 0)
        write_small_gemm(src, dst);
    else if (fz_copy(src, dst))
        die(src, "cannot copy");
}

static void setup(void)
{
    if (root[0])
        return;
    char p[2048];
    snprintf(root, sizeof root, "%s/data", fz_tmpdir());
    snprintf(p, sizeof p, "%s/calib", root);
    snprintf(dir, sizeof dir, "%s/h100-sxm", p);
    if (mkdir(root, 0700) || mkdir(p, 0700) || mkdir(dir, 0700))
        die(dir, "cannot make");
    snprintf(p, sizeof p, "%s/topologies", root);
    if (mkdir(p, 0700))
        die(p, "cannot make");
    for (int i = 0; i < NTABLES; i++)
        if (tables[i].name)
            restore(i);
    llm_err e;
    snprintf(p, sizeof p, "%s/topologies/gpus.cfg", fz_datadir());
    if (cfg_load_gpus(p, fz_datadir(), &cat, &e))
        die(p, e.msg);
    if (!(h100 = gpu_find(&cat, "h100-sxm")))
        die(p, "no h100-sxm");
    snprintf(p, sizeof p, "%s/topologies/dgx-h100.cfg", fz_datadir());
    topo_nodespec spec;
    topo_fabricspec fab;
    int nodes;
    if (cfg_load_topology(p, fz_datadir(), &spec, &nodes, &fab, &e))
        die(p, e.msg);
    char why[512];
    if (!(dgx = topo_build(&spec, h100, nodes, &fab, why, sizeof why)))
        die(p, why);
}

static void cost_dir(void)
{
    cost_calib c;
    llm_err e;
    if (fz_report("cost_dir", cfg_load_cost_dir(dir, h100, true, &c, &e), &e))
        return;
    volatile double s = 0;
    for (int d = 0; d < DT_COUNT; d++)
        if (c.gemm[d].eff)
            s += cost_grid_eff(&c.gemm[d], 3, 5000, 70000);
    for (int k = 0; k < MEM_KIND_COUNT; k++)
        if (c.hbm[k].n > 0)
            s += cost_hbm_eff(&c, (cost_mem_kind)k, 1e6);
    (void)s;
    cost_calib_free(&c);
}

static void any_table(const char *path)
{
    tsv t;
    llm_err e;
    if (fz_report("tsv", tsv_load(path, &t, &e), &e))
        return;
    for (int c = 0; c < t.cols; c++) {
        (void)tsv_col(&t, t.head[c], &e);
        for (int r = 0; r < t.rows; r++) {
            double v;
            (void)tsv_num(&t, r, c, -1e300, 1e300, &v, &e);
        }
    }
    tsv_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    setup();
    int which = data[0] % 16;
    char p[2048];
    if (which >= NTABLES || !tables[which].name) {
        const char *q = fz_write("any.tsv", data + 1, size - 1);
        if (q)
            any_table(q);
        return 0;
    }
    table_path(which, p, sizeof p);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1) {
        if (f)
            fclose(f);
        restore(which);
        return 0;
    }
    fclose(f);
    llm_err e;
    if (which < 4) {
        cost_dir();
    } else if (which == 4) {
        double w;
        fz_report("idle_w", cfg_load_idle_w(root, h100, &w, &e), &e);
    } else if (which == 11) {
        mem_overhead o;
        fz_report("overhead", cfg_load_overhead(root, h100, &o, &e), &e);
        fz_report("overhead *", cfg_load_overhead(root, NULL, &o, &e), &e);
    } else if (which == 12) {
        econ_params ep;
        fz_report("econ", cfg_load_econ(root, &ep, &e), &e);
    } else if (which == 13) {
        cfg_fit_gpu *g;
        int n;
        if (fz_report("fit", cfg_load_fit_gpus(root, &g, &n, &e), &e) == 0)
            free(g);
    } else if (which == 14) {
        cost_calib c;
        if (fz_report("kernels", cfg_load_cost_calib(root, &cat, h100, &c, &e),
                      &e) == 0)
            cost_calib_free(&c);
    } else if (which == 8) {
        gpu_catalog c;
        char g[2048];
        snprintf(g, sizeof g, "%s/topologies/gpus.cfg", fz_datadir());
        if (fz_report("pcie", cfg_load_gpus(g, root, &c, &e), &e) == 0)
            gpu_catalog_free(&c);
    } else { /* 5, 6, 9, 10 */
        coll_calib k;
        fz_report("coll_calib", cfg_load_coll_calib(root, dgx, &k, &e), &e);
        if (which == 6) {
            cost_calib c;
            if (cfg_load_cost_calib(root, &cat, h100, &c, &e) == 0)
                cost_calib_free(&c);
        }
    }
    restore(which);
    return 0;
}
