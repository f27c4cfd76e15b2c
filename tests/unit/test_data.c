/* Figures moved from C into data files: each loader reads the shipped
 * file (a value checked against the row it comes from) and names file,
 * line and key for a bad row. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

/* A scratch data directory: <dir>/topologies and <dir>/calib. */
static char dir[64];

static void scratch(void)
{
    snprintf(dir, sizeof dir, "/tmp/llmsim-data-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char p[128];
    snprintf(p, sizeof p, "%s/topologies", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/calib", dir);
    assert_int_equal(mkdir(p, 0700), 0);
}

/* Writes text to <dir>/<rel>. */
static void put(const char *rel, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void scratch_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void expect(const char *msg, const char *a, const char *b)
{
    if (!msg) {
        print_error("expected an error containing \"%s\"\n", a);
        fail();
    }
    if (!strstr(msg, a) || (b && !strstr(msg, b))) {
        print_error("message \"%s\" lacks \"%s\" / \"%s\"\n", msg, a,
                    b ? b : "");
        fail();
    }
}

/* ---- topologies/pcie.tsv ---------------------------------------------- */

static void test_pcie_shipped(void **state)
{
    (void)state;
    /* H100 SXM: gen 5 x16 = 16 x 32 GT/s / 8 x 128/130 = 63.0 GB/s per
     * direction; A100 SXM: gen 4 x16 = 31.5 GB/s */
    const gpu_spec *h = gpu_find(&cat, "h100-sxm");
    assert_non_null(h);
    assert_close(gpu_pcie_Bps(h), 16 * 32e9 / 8 * 128.0 / 130.0, 1e-12);
    assert_close(gpu_pcie_Bps(gpu_find(&cat, "a100-sxm-80gb")),
                 16 * 16e9 / 8 * 128.0 / 130.0, 1e-12);
}

static const char *pcie_error(const char *table)
{
    static llm_err e;
    scratch();
    put("topologies/pcie.tsv", table);
    gpu_catalog c;
    int rc = cfg_load_gpus("topologies/gpus.cfg", dir, &c, &e);
    if (rc == 0)
        gpu_catalog_free(&c);
    scratch_remove();
    return rc == 0 ? NULL : e.msg;
}

#define PCIE_HEAD "gen\tlane_GTps\tpayload_bits\tline_bits\tsource\n"

static void test_pcie_errors(void **state)
{
    (void)state;
    expect(pcie_error("# comment\n" PCIE_HEAD "4\t16\t130\t128\tx\n"),
           "pcie.tsv:3: line_bits: 128 is out of range", "expected 130..");
    expect(pcie_error(PCIE_HEAD "4\t16\t128\t130\tx\n4\t16\t128\t130\ty\n"),
           "pcie.tsv:3: gen: a second row for generation 4", NULL);
    expect(pcie_error(PCIE_HEAD "4.5\t16\t128\t130\tx\n"),
           "pcie.tsv:2: gen: 4.5 is not a whole number", NULL);
    expect(pcie_error(PCIE_HEAD "4\t16\t128\t130\t\n"),
           "pcie.tsv:2: source: empty", NULL);
    /* the catalog holds gen 3, 4 and 5 GPUs: the first without a row is
     * named at its pcie_gen line */
    expect(pcie_error(PCIE_HEAD "4\t16\t128\t130\tx\n"),
           "gpus.cfg:", "pcie_gen: no row for generation");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcie_shipped),
        cmocka_unit_test(test_pcie_errors),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
