/* llmsim collective — nccl-tests, simulated: the same columns, the same
 * bus-bandwidth factors, so a user can lay the output beside a real run. */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cli/cmd.h"
#include "coll/coll.h"
#include "base/util.h"
#include "decide/budget.h"
#include "report/rcoll.h"

static const char usage[] =
    "usage: llmsim collective --cluster NAME|FILE --op OP [--gpus N] [--nodes N]\n"
    "           [-b MIN] [-e MAX] [-f FACTOR] [--algo ALGO] [--proto PROTO]\n"
    "           [--gpus-per-node G] [-g GPUS_PER_THREAD] [--p2p on|off]\n"
    "           [--csv | --json] [--force]\n\n"
    "Simulates a collective on the topology's first N GPUs for each size from\n"
    "-b to -e (x -f each time), as nccl-tests' *_perf does, and prints size,\n"
    "count, type, redop, time (us), algbw and busbw (GB/s) with nccl-tests'\n"
    "bus-bandwidth factors (doc/PERFORMANCE.md).\n\n"
    "  --op       all_reduce reduce_scatter all_gather broadcast reduce\n"
    "             alltoall sendrecv\n"
    "  --algo     auto (fastest, as NCCL's tuner picks) ring tree\n"
    "             hierarchical nvls direct\n"
    "  --proto    auto LL LL128 Simple\n"
    "  --nodes N  join N copies of a node type on its default fabric\n"
    "  --gpus-per-node G  the first G GPUs of each node, node after node\n"
    "             (default: the first N GPUs, filling each node)\n"
    "  --p2p      override GPU peer-to-peer (e.g. a patched GeForce driver)\n"
    "  -g N       GPUs one host thread drives, as nccl-tests -g (default 1:\n"
    "             one process per GPU, as mpirun runs it): each call costs\n"
    "             the host N x calib/nccl-host.tsv call_us, a floor at\n"
    "             small sizes\n"
    "  -b, -e     sizes in bytes: 8, 1K, 1M, 8G (default 8 .. 8G); -f 2\n"
    "  --csv      size_bytes,count,type,redop,time_us,algbw_GBps,busbw_GBps\n"
    "  --links    after the table, the busiest links at the largest size\n"
    "             (bytes, utilization = bytes / (bandwidth x time), busy time)\n"
    "  --full     simulate every ring step (by default, on the idle network,\n"
    "             identical steps after the second are skipped: same result)\n"
    "  --force    run a sweep the simulator could not finish in 2 minutes\n"
    "             (estimated from each size's flows, before anything is\n"
    "             built); refused without it\n\n"
    "Sizes are nccl-tests' \"size\": the whole buffer; for reduce_scatter and\n"
    "all_gather the whole array (count x 4 x n).  Type float, redop sum.\n";

typedef struct copts {
    const char *cluster;
    int op, algo, proto, csv, json, p2p, full, links, force;
    int gpus, nodes;
    long per_thread, per_node; /* -g, --gpus-per-node (0: fill) */
    double b, e, f;
} copts;

static int parse(int argc, char **argv, copts *o, llm_err *e)
{
    static const struct option opts[] = {
        {"cluster", required_argument, 0, 'c'},
        {"op", required_argument, 0, 'o'},
        {"gpus", required_argument, 0, 'N'},
        {"gpus-per-thread", required_argument, 0, 'g'},
        {"gpus-per-node", required_argument, 0, 'G'},
        {"nodes", required_argument, 0, 'n'},
        {"minbytes", required_argument, 0, 'b'},
        {"maxbytes", required_argument, 0, 'e'},
        {"stepfactor", required_argument, 0, 'f'},
        {"algo", required_argument, 0, 'a'},
        {"proto", required_argument, 0, 'p'},
        {"p2p", required_argument, 0, 'P'},
        {"csv", no_argument, 0, 'C'},
        {"json", no_argument, 0, 'J'},
        {"full", no_argument, 0, 'F'},
        {"links", no_argument, 0, 'L'},
        {"force", no_argument, 0, 'X'},
        {0, 0, 0, 0},
    };
    static const char *const onoff[] = {"off", "on"};
    int ch;
    optind = 0; /* glibc: a full reset, a half-read "-xy" included */
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":b:e:f:g:", opts, NULL)) != -1) {
        int rc = 0;
        switch (ch) {
        case 'c': o->cluster = optarg; break;
        case 'o': rc = cmd_pick("--op", optarg, coll_op_names, COLL_OP_COUNT, &o->op, e); break;
        case 'N':
            rc = cmd_setting_int(EXP_TRAIN, "gpus", optarg, &o->gpus, e);
            if (!rc && o->gpus < 2)
                rc = err_set(e, "--gpus %d: a collective needs at least 2 "
                                "(expected 2..%d)", o->gpus, (int)settings_by_flag(
                                    EXP_TRAIN, "gpus")->hi);
            break;
        case 'n': rc = cmd_setting_int(EXP_TRAIN, "nodes", optarg, &o->nodes, e); break;
        case 'g': rc = util_parse_int("-g", optarg, 1, 1024, &o->per_thread, e); break;
        case 'G': rc = util_parse_int("--gpus-per-node", optarg, 1, 4096, &o->per_node, e); break;
        case 'b': rc = util_parse_size("-b", optarg, &o->b, e); break;
        case 'e': rc = util_parse_size("-e", optarg, &o->e, e); break;
        case 'f': rc = util_parse_double("-f", optarg, 1.01, 1024, &o->f, e); break;
        case 'a': rc = cmd_pick("--algo", optarg, coll_algo_names, ALGO_COUNT + 1, &o->algo, e); break;
        case 'p': rc = cmd_pick("--proto", optarg, coll_proto_names, PROTO_COUNT + 1, &o->proto, e); break;
        case 'P': rc = cmd_pick("--p2p", optarg, onoff, 2, &o->p2p, e); break;
        case 'C': o->csv = 1; break;
        case 'J': o->json = 1; break;
        case 'F': o->full = 1; break;
        case 'L': o->links = 1; break;
        case 'X': o->force = 1; break;
        case ':': return err_set(e, "option %s needs a value", argv[optind - 1]);
        default: return cmd_bad_option("collective", argv[optind - 1], opts, e);
        }
        if (rc)
            return -1;
    }
    if (optind != argc)
        return err_set(e, "unexpected argument \"%s\"", argv[optind]);
    if (!o->cluster)
        return err_set(e, "--cluster NAME is required (e.g. dgx-h100; "
                          "`ls topologies/`)");
    if (o->op < 0)
        return err_set(e, "--op is required (all_reduce, all_gather, ...)");
    if (o->csv && o->json)
        return err_set(e, "--csv and --json: give one (both would print CSV "
                          "rows and then a JSON document)");
    if (o->b > o->e)
        return err_set(e, "-b %.0f is larger than -e %.0f", o->b, o->e);
    if (o->b < 1)
        o->b = 1;
    return 0;
}

static double count_of(const copts *o, double bytes, int n)
{
    if (o->op == COLL_ALL_GATHER || o->op == COLL_REDUCE_SCATTER)
        return floor(bytes / 4 / n);
    return floor(bytes / 4);
}

/* The sweep -b .. -e goes x step each time; s is its last size when the
 * next would pass -e. */
static double step_of(const copts *o)
{
    return o->f > 0 ? o->f : 2;
}

static bool last_size(const copts *o, double s)
{
    return step_of(o) <= 1 || s * step_of(o) > o->e * (1 + 1e-12);
}

/* The buffer of sweep size s on n GPUs (whole counts of floats). */
static double bytes_of(const copts *o, double s, int n)
{
    return count_of(o, s, n) * 4 *
           (o->op == COLL_ALL_GATHER || o->op == COLL_REDUCE_SCATTER ? n : 1);
}

/* The sweep refused (budget.h) when its simulations would take more than
 * the budget, estimated from the topology's size and each size's flows
 * (coll_sim_estimate) before the topology is built. */
static int sweep_budget(const copts *o, llm_err *e)
{
    exp_topo_size z;
    if (cfg_topo_size(o->cluster, (int)o->nodes, &z, e))
        return -1;
    budget_est b = {0};
    budget_topology(z.nodes, z.ndev, z.nlink, &b);
    int ngpu = z.nodes * z.gpus_per_node;
    int n = (int)(o->gpus ? o->gpus : ngpu);
    if (n > ngpu)
        return 0; /* sweep says what is wrong */
    int per = (int)(o->per_node ? o->per_node : z.gpus_per_node);
    b.gpus = n;
    coll_shape sh = {n, per > 0 ? (n + per - 1) / per : 1, z.nics, z.nvlink,
                     z.nvls, z.sharp};
    for (double s = o->b;; s *= step_of(o)) {
        bool links = o->links && last_size(o, s);
        budget_coll(&b, coll_sim_estimate(&z.coll, (coll_op)o->op,
                                          (coll_algo)o->algo,
                                          (coll_proto)o->proto, &sh,
                                          bytes_of(o, s, n),
                                          !o->full && !links),
                    1, (double)z.nodes * z.nlink);
        if (last_size(o, s))
            break;
    }
    char what[64];
    snprintf(what, sizeof what, "--op %s", coll_op_names[o->op]);
    return budget_check(&b, what, o->force, e);
}

/* The sizes -b .. -e (x -f each time) on the first n GPUs, each row
 * handed to the report as it is measured; the busiest links at the last. */
static int sweep_sizes(const copts *o, net_routes *rt, const coll_calib *cal,
                       const band_table *bands, const int *ranks, int n,
                       rcoll_table *tab, llm_err *e)
{
    for (double s = o->b;; s *= step_of(o)) {
        double bytes = bytes_of(o, s, n);
        bool last = last_size(o, s);
        coll_req q = {.op = (coll_op)o->op, .algo = (coll_algo)o->algo,
                      .proto = (coll_proto)o->proto, .ranks = ranks, .n = n,
                      .bytes = bytes, .full = o->full,
                      .links = o->links && last,
                      .host_gpus = (int)o->per_thread};
        coll_result r;
        if (coll_time_alone(rt, cal, &q, &r, e))
            return -1;
        double us = r.time_s * 1e6, algbw = bytes / r.time_s / 1e9;
        rcoll_row row = {.size_bytes = bytes, .count = count_of(o, s, n),
                         .time_us = us, .algbw_GBps = algbw,
                         .busbw_GBps = algbw * coll_busbw_factor(q.op, n),
                         .algo = r.algo, .proto = r.proto,
                         .host_bound = r.host_bound};
        char key[BAND_KEY];
        band_coll_key(key, sizeof key, bytes,
                      coll_hw_names[coll_fabric(rt, &q)]);
        band_find(bands, key, &row.band);
        rcoll_row_add(tab, &row);
        if (o->links && last)
            rcoll_links(tab, &r);
        if (last)
            break;
    }
    return 0;
}

/* The communicator's ranks: the first n GPUs, or with --gpus-per-node G
 * the first G of each node for n / G nodes (one GPU per node across a
 * fabric, say). */
static int place(const copts *o, const topo *t, int n, int *ranks, llm_err *e)
{
    int G = (int)o->per_node, per = t->gpus_per_node;
    if (!G) {
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        return 0;
    }
    if (G > per || n % G || n / G > t->nodes)
        return err_set(e, "--gpus-per-node %d with --gpus %d on %s (%d nodes "
                          "of %d GPUs): expected G <= %d dividing the GPUs, "
                          "at most %d nodes", G, n, t->name, t->nodes,
                       per, per, t->nodes);
    for (int i = 0; i < n; i++)
        ranks[i] = (i / G) * per + i % G;
    return 0;
}

static int sweep(const copts *o, net_routes *rt, const coll_calib *cal,
                 llm_err *e)
{
    const topo *t = net_routes_topo(rt);
    int n = (int)(o->gpus ? o->gpus : t->ngpu);
    if (n > t->ngpu)
        return err_set(e, "--gpus %d but %s has %d GPUs (use --nodes to add "
                          "nodes)", n, t->name, t->ngpu);
    int ranks[1 << 16];
    if (n > (int)(sizeof ranks / sizeof ranks[0]))
        return err_set(e, "--gpus %d: at most %zu", n,
                       sizeof ranks / sizeof ranks[0]);
    if (o->per_thread > n)
        return err_set(e, "-g %ld: more GPUs per thread than the %d GPUs of "
                          "the collective (expected 1..%d)", o->per_thread, n,
                       n);
    band_table bands;
    if (place(o, t, n, ranks, e) || cfg_load_bands(cfg_datadir(), &bands, e))
        return -1;
    /* the table is kept until every size ran: an error at any size
     * leaves nothing on stdout, header included */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        band_table_free(&bands);
        return err_set(e, "out of memory");
    }
    rcoll_table tab;
    rcoll_begin(&tab, mem, o->csv, o->json, (coll_op)o->op, t, n,
                (coll_algo)o->algo, (coll_proto)o->proto);
    int rc = sweep_sizes(o, rt, cal, &bands, ranks, n, &tab, e);
    band_table_free(&bands);
    json_t *j = rc ? (rcoll_abort(&tab), NULL) : rcoll_end(&tab);
    if (fclose(mem) != 0 && !rc)
        rc = err_set(e, "out of memory");
    if (!rc)
        fwrite(text, 1, len, stdout);
    free(text);
    if (j && !rc)
        cmd_print_json(j);
    else if (j)
        json_decref(j);
    return rc;
}

static int run(int argc, char **argv, llm_err *e)
{
    copts o = {.op = -1, .algo = ALGO_AUTO, .proto = PROTO_AUTO, .p2p = -1,
               .b = 8, .e = 8.0 * (1 << 30), .f = 2, .per_thread = 1};
    if (parse(argc, argv, &o, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    gpu_catalog cat;
    if (sweep_budget(&o, e) || cfg_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    topo *t = cfg_load_topo_named(o.cluster, (int)o.nodes, o.p2p, &cat, e);
    coll_calib cal;
    int rc = EXIT_OK;
    net_routes *rt = t ? net_routes_create(t) : NULL;
    if (t && !rt)
        err_set(e, "out of memory");
    if (!rt || cfg_load_coll_calib(cfg_datadir(), t, &cal, e) ||
        sweep(&o, rt, &cal, e))
        rc = EXIT_BAD_INPUT;
    net_routes_destroy(rt);
    topo_destroy(t);
    gpu_catalog_free(&cat);
    return rc;
}

const cmd_def cmd_collective_def = {
    "collective", "nccl-tests, simulated: time, algbw, busbw per size", usage,
    run, 0, NULL};
