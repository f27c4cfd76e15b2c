#include "report/rjson.h"

#include <math.h>

void rjson_print(FILE *fp, json_t *j)
{
    json_dumpf(j, fp, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                          JSON_REAL_PRECISION(10));
    fputc('\n', fp);
    json_decref(j);
}

json_t *rjson_bytes(double bytes)
{
    return json_integer((json_int_t)llround(bytes));
}

json_t *rjson_link(const topo *t, int link, double bytes, double utilization)
{
    const topo_link *L = &t->link[link];
    json_t *o = json_object();
    json_object_set_new(o, "src", json_string(t->dev[L->src].name));
    json_object_set_new(o, "dst", json_string(t->dev[L->dst].name));
    json_object_set_new(o, "kind", json_string(topo_link_kind_name(L->kind)));
    json_object_set_new(o, "bytes", json_real(bytes));
    json_object_set_new(o, "utilization", json_real(utilization));
    return o;
}

json_t *rjson_plan(const plan_train *p, const model_spec *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "tp", json_integer(p->tp));
    json_object_set_new(o, "pp", json_integer(p->pp));
    json_object_set_new(o, "dp", json_integer(p->dp));
    json_object_set_new(o, "cp", json_integer(p->cp));
    json_object_set_new(o, "ep", json_integer(p->ep));
    json_object_set_new(o, "sp", json_boolean(p->sp));
    json_object_set_new(o, "micro_batch", json_integer(p->micro_batch));
    json_object_set_new(o, "global_batch", json_integer(p->global_batch));
    json_object_set_new(o, "seq_len", json_integer(p->seq_len));
    json_object_set_new(o, "zero", json_integer(p->zero));
    char rc[PLAN_RECOMPUTE_TEXT];
    json_object_set_new(o, "recompute", json_string(plan_recompute_text(p, rc)));
    json_object_set_new(o, "cross_entropy",
                        json_string(plan_loss_names[p->loss]));
    json_object_set_new(o, "schedule",
                        json_string(plan_schedule_names[p->schedule]));
    json_object_set_new(o, "vpp", json_integer(p->vpp));
    json_object_set_new(o, "precision", json_string(dtype_name(p->precision)));
    int nv = plan_vstages(p);
    bool uneven = p->layers_per_stage.n > 0 ||
                  (m && m->layers % nv != 0);
    if (uneven) {
        json_t *a = json_array();
        for (int vs = 0; vs < nv; vs++) {
            int l0 = 0, l1 = p->layers_per_stage.n ? p->layers_per_stage.v[vs]
                                                   : 0;
            if (m)
                plan_vstage_layers(m, p, vs, &l0, &l1);
            json_array_append_new(a, json_integer(l1 - l0));
        }
        json_object_set_new(o, "layers_per_stage", a);
    }
    if (p->lora_rank > 0)
        json_object_set_new(o, "lora_rank", json_integer(p->lora_rank));
    return o;
}

json_t *rjson_band(const band_est *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(b->key));
    if (!b->have)
        return o;
    json_object_set_new(o, "family", json_string(b->family));
    json_object_set_new(o, "cases", json_integer(b->cases));
    json_object_set_new(o, "level", json_real(b->level));
    json_object_set_new(o, "like", json_boolean(b->like));
    json_object_set_new(o, "ratio_lo", json_real(b->lo));
    json_object_set_new(o, "ratio_hi", json_real(b->hi));
    return o;
}

void rjson_band_ends(json_t *j, const band_est *b, const char *name,
                     double value, bool inverse)
{
    if (!b->have)
        return;
    double lo, hi;
    band_ends(b, value, inverse, &lo, &hi);
    char k[96];
    snprintf(k, sizeof k, "%s_lo", name);
    json_object_set_new(j, k, json_real(lo));
    snprintf(k, sizeof k, "%s_hi", name);
    json_object_set_new(j, k, json_real(hi));
}
