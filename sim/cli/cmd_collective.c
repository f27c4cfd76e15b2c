/* llmsim collective — nccl-tests, simulated: the same columns, the same
 * bus-bandwidth factors, so a user can lay the output beside a real run. */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cli/cmd.h"
#include "coll/coll.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim collective --cluster NAME|FILE --op OP [--gpus N] [--nodes N]\n"
    "           [-b MIN] [-e MAX] [-f FACTOR] [--algo ALGO] [--proto PROTO]\n"
    "           [--p2p on|off] [--csv | --json]\n\n"
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
    "  --p2p      override GPU peer-to-peer (e.g. a patched GeForce driver)\n"
    "  -b, -e     sizes in bytes: 8, 1K, 1M, 8G (default 8 .. 8G); -f 2\n"
    "  --csv      size_bytes,count,type,redop,time_us,algbw_GBps,busbw_GBps\n"
    "  --links    after the table, the busiest links at the largest size\n"
    "             (bytes, utilization = bytes / (bandwidth x time), busy time)\n"
    "  --full     simulate every ring step (by default, on the idle network,\n"
    "             identical steps after the second are skipped: same result)\n\n"
    "Sizes are nccl-tests' \"size\": the whole buffer; for reduce_scatter and\n"
    "all_gather the whole array (count x 4 x n).  Type float, redop sum.\n";

typedef struct copts {
    const char *cluster;
    int op, algo, proto, csv, json, p2p, full, links;
    int gpus, nodes;
    double b, e, f;
} copts;

static int parse(int argc, char **argv, copts *o, llm_err *e)
{
    static const struct option opts[] = {
        {"cluster", required_argument, 0, 'c'},
        {"op", required_argument, 0, 'o'},
        {"gpus", required_argument, 0, 'g'},
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
        {0, 0, 0, 0},
    };
    static const char *const onoff[] = {"off", "on"};
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":b:e:f:", opts, NULL)) != -1) {
        int rc = 0;
        switch (ch) {
        case 'c': o->cluster = optarg; break;
        case 'o': rc = cmd_pick("--op", optarg, coll_op_names, COLL_OP_COUNT, &o->op, e); break;
        case 'g':
            rc = cmd_setting_int(EXP_TRAIN, "gpus", optarg, &o->gpus, e);
            if (!rc && o->gpus < 2)
                rc = err_set(e, "--gpus %d: a collective needs at least 2 "
                                "(expected 2..%d)", o->gpus, (int)settings_by_flag(
                                    EXP_TRAIN, "gpus")->hi);
            break;
        case 'n': rc = cmd_setting_int(EXP_TRAIN, "nodes", optarg, &o->nodes, e); break;
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

static void header(const copts *o, const topo *t, int n)
{
    if (o->csv) {
        printf("size_bytes,count,type,redop,time_us,algbw_GBps,busbw_GBps\n");
        return;
    }
    if (o->json)
        return;
    printf("# llmsim collective: %s on %s, %d GPUs (%s), algo %s, proto %s\n",
           coll_op_names[o->op], t->name, n, t->gpu ? t->gpu->name : "?",
           coll_algo_names[o->algo], coll_proto_names[o->proto]);
    printf("#\n# %12s %12s %6s %6s %10s %8s %8s  %s\n", "size", "count",
           "type", "redop", "time", "algbw", "busbw", "algorithm");
    printf("# %12s %12s %6s %6s %10s %8s %8s\n", "(B)", "(elements)", "", "",
           "(us)", "(GB/s)", "(GB/s)");
}

static void print_links(const topo *t, const coll_result *r)
{
    printf("#\n# busiest links at this size (utilization = bytes / "
           "(achievable bandwidth x time)):\n");
    for (int i = 0; i < r->ntop; i++) {
        const coll_link_use *u = &r->top[i];
        const topo_link *L = &t->link[u->link];
        printf("#   %-14s -> %-14s %-8s %10.1f MB  %5.1f%% utilized, busy "
               "%5.1f%% of the time\n",
               t->dev[L->src].name, t->dev[L->dst].name,
               topo_link_kind_name(L->kind), u->bytes / 1e6,
               100 * u->utilization, 100 * u->busy_fraction);
    }
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
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    header(o, t, n);
    json_t *rows = o->json ? json_array() : NULL;
    double factor = o->f > 0 ? o->f : 2;
    for (double s = o->b; s <= o->e * (1 + 1e-12); s *= factor) {
        double bytes = count_of(o, s, n) * 4 *
                       (o->op == COLL_ALL_GATHER || o->op == COLL_REDUCE_SCATTER
                            ? n : 1);
        bool last = s * factor > o->e * (1 + 1e-12);
        coll_req q = {.op = (coll_op)o->op, .algo = (coll_algo)o->algo,
                      .proto = (coll_proto)o->proto, .ranks = ranks, .n = n,
                      .bytes = bytes, .full = o->full,
                      .links = o->links && last};
        coll_result r;
        if (coll_time_alone(rt, cal, &q, &r, e)) {
            json_decref(rows);
            return -1;
        }
        double us = r.time_s * 1e6, algbw = bytes / r.time_s / 1e9;
        double busbw = algbw * coll_busbw_factor(q.op, n);
        double count = count_of(o, s, n);
        if (o->csv)
            printf("%.0f,%.0f,float,sum,%.2f,%.2f,%.2f\n", bytes, count, us,
                   algbw, busbw);
        else if (o->json) {
            json_t *x = json_object();
            json_object_set_new(x, "size_bytes", json_real(bytes));
            json_object_set_new(x, "count", json_real(count));
            json_object_set_new(x, "time_us", json_real(us));
            json_object_set_new(x, "algbw_GBps", json_real(algbw));
            json_object_set_new(x, "busbw_GBps", json_real(busbw));
            json_object_set_new(x, "algo", json_string(coll_algo_names[r.algo]));
            json_object_set_new(x, "proto",
                                json_string(coll_proto_names[r.proto]));
            json_array_append_new(rows, x);
        } else
            printf("  %12.0f %12.0f %6s %6s %10.2f %8.2f %8.2f  %s/%s\n",
                   bytes, count, "float", "sum", us, algbw, busbw,
                   coll_algo_names[r.algo], coll_proto_names[r.proto]);
        if (o->links && !o->csv && !o->json && s * factor > o->e * (1 + 1e-12))
            print_links(t, &r);
        if (factor <= 1)
            break;
    }
    if (rows) {
        json_t *j = json_object();
        json_object_set_new(j, "op", json_string(coll_op_names[o->op]));
        json_object_set_new(j, "cluster", json_string(t->name));
        json_object_set_new(j, "gpus", json_integer(n));
        json_object_set_new(j, "rows", rows);
        cmd_print_json(j);
    }
    return 0;
}

static int run(int argc, char **argv, llm_err *e)
{
    copts o = {.op = -1, .algo = ALGO_AUTO, .proto = PROTO_AUTO, .p2p = -1,
               .b = 8, .e = 8.0 * (1 << 30), .f = 2};
    if (parse(argc, argv, &o, e))
        return EXIT_BAD_INPUT;
    gpu_catalog cat;
    if (cfg_load_catalog(&cat, e))
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
