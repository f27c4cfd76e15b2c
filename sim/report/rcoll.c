#include "report/rcoll.h"

#include "report/rjson.h"

static void header_text(FILE *fp, coll_op op, const topo *t, int n,
                        coll_algo algo, coll_proto proto)
{
    fprintf(fp, "# llmsim collective: %s on %s, %d GPUs (%s), algo %s, "
            "proto %s\n",
            coll_op_names[op], t->name, n, t->gpu ? t->gpu->name : "?",
            coll_algo_names[algo], coll_proto_names[proto]);
    fprintf(fp, "#\n# %12s %12s %6s %6s %10s %8s %8s  %-16s %s\n", "size",
            "count", "type", "redop", "time", "algbw", "busbw", "algorithm",
            "time: 80% band");
    fprintf(fp, "# %12s %12s %6s %6s %10s %8s %8s  %-16s %s\n", "(B)",
            "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "",
            "(us, published runs)");
}

void rcoll_begin(rcoll_table *tab, FILE *fp, bool csv, bool json, coll_op op,
                 const topo *t, int n, coll_algo algo, coll_proto proto)
{
    *tab = (rcoll_table){.fp = fp, .csv = csv, .op = op, .t = t, .n = n,
                         .rows = json ? json_array() : NULL};
    if (csv)
        fprintf(fp, "size_bytes,count,type,redop,time_us,algbw_GBps,"
                "busbw_GBps\n");
    else if (!json)
        header_text(fp, op, t, n, algo, proto);
}

static json_t *row_json(const rcoll_row *r)
{
    json_t *x = json_object();
    json_object_set_new(x, "size_bytes", json_real(r->size_bytes));
    json_object_set_new(x, "count", json_real(r->count));
    json_object_set_new(x, "time_us", json_real(r->time_us));
    json_object_set_new(x, "algbw_GBps", json_real(r->algbw_GBps));
    json_object_set_new(x, "busbw_GBps", json_real(r->busbw_GBps));
    json_object_set_new(x, "algo", json_string(coll_algo_names[r->algo]));
    json_object_set_new(x, "proto", json_string(coll_proto_names[r->proto]));
    json_object_set_new(x, "host_bound", json_boolean(r->host_bound));
    rjson_band_ends(x, &r->band, "time_us", r->time_us, false);
    rjson_band_ends(x, &r->band, "busbw_GBps", r->busbw_GBps, true);
    json_object_set_new(x, "band", rjson_band(&r->band));
    return x;
}

void rcoll_row_add(rcoll_table *tab, const rcoll_row *r)
{
    if (tab->csv)
        fprintf(tab->fp, "%.0f,%.0f,float,sum,%.2f,%.2f,%.2f\n",
                r->size_bytes, r->count, r->time_us, r->algbw_GBps,
                r->busbw_GBps);
    else if (tab->rows)
        json_array_append_new(tab->rows, row_json(r));
    else {
        char algo[64], band[96];
        snprintf(algo, sizeof algo, "%s/%s%s", coll_algo_names[r->algo],
                 coll_proto_names[r->proto],
                 r->host_bound ? " (host-bound)" : "");
        band_brief(band, sizeof band, &r->band, r->time_us, "%.2f", false);
        fprintf(tab->fp, "  %12.0f %12.0f %6s %6s %10.2f %8.2f %8.2f  "
                "%-16s %s\n",
                r->size_bytes, r->count, "float", "sum", r->time_us,
                r->algbw_GBps, r->busbw_GBps, algo,
                band[0] ? band : "no band");
    }
}

void rcoll_links(const rcoll_table *tab, const coll_result *r)
{
    if (tab->csv || tab->rows)
        return;
    const topo *t = tab->t;
    fprintf(tab->fp, "#\n# busiest links at this size (utilization = bytes "
            "/ (achievable bandwidth x time)):\n");
    for (int i = 0; i < r->ntop; i++) {
        const coll_link_use *u = &r->top[i];
        const topo_link *L = &t->link[u->link];
        fprintf(tab->fp, "#   %-14s -> %-14s %-8s %10.1f MB  %5.1f%% "
                "utilized, busy %5.1f%% of the time\n",
                t->dev[L->src].name, t->dev[L->dst].name,
                topo_link_kind_name(L->kind), u->bytes / 1e6,
                100 * u->utilization, 100 * u->busy_fraction);
    }
}

json_t *rcoll_end(rcoll_table *tab)
{
    if (!tab->rows)
        return NULL;
    json_t *j = json_object();
    json_object_set_new(j, "op", json_string(coll_op_names[tab->op]));
    json_object_set_new(j, "cluster", json_string(tab->t->name));
    json_object_set_new(j, "gpus", json_integer(tab->n));
    json_object_set_new(j, "rows", tab->rows);
    tab->rows = NULL;
    return j;
}

void rcoll_abort(rcoll_table *tab)
{
    json_decref(tab->rows);
    tab->rows = NULL;
}
