#include "report/rserve.h"

#include <stdarg.h>
#include <string.h>

#include "report/rjson.h"

/* A row of the latency table, and the 80% band of its mean (the
 * published runs measured means and medians, not tails). */
static void dist_row(FILE *fp, const char *what, const serve_dist *d,
                     double scale, const band_est *b)
{
    fprintf(fp, "  %-10s %10.2f %10.2f %10.2f %10.2f", what, d->mean * scale,
           d->p50 * scale, d->p90 * scale, d->p99 * scale);
    char band[96];
    band_brief(band, sizeof band, b, d->mean * scale, "%.4g", false);
    fprintf(fp, "%s%s\n", band[0] ? "   " : "", band);
}

static void print_links(FILE *fp, const serve_result *r, const topo *t)
{
    if (r->ntop_links == 0)
        return;
    fprintf(fp, "  busiest links      (KV bytes / (achievable bandwidth x "
           "makespan))\n");
    for (int i = 0; i < r->ntop_links; i++) {
        const serve_link_use *u = &r->top_links[i];
        const topo_link *L = &t->link[u->link];
        fprintf(fp, "    %-12s -> %-12s %-8s %9.2f GB  %6.2f%%\n",
               t->dev[L->src].name, t->dev[L->dst].name,
               topo_link_kind_name(L->kind), u->bytes / 1e9,
               100 * u->utilization);
    }
}

/* The engine and what it made the run assume. */
static void engine_text(FILE *fp, const exp_serve_out *o)
{
    const eprof *en = &o->env.engine;
    const serve_params *p = &o->in.p;
    const eprof_host *h = &p->host;
    fprintf(fp, "  engine %s (%s): host %.2f ms + %.3f ms/sequence per "
           "iteration", en->name, en->display,
           p->iteration_overhead_s * 1e3, h->per_seq_s * 1e3);
    if (h->prefill_s > 0)
        fprintf(fp, ", + %.2f ms with a prefill at TP > 1", h->prefill_s * 1e3);
    fprintf(fp, "%s; ", h->overlap ? ", overlapped with the GPU" : "");
    if (h->launch_s > 0 && h->graph_max_batch > 0)
        fprintf(fp, "launches %.0f us x %.0f kernels a layer, CUDA graphs for "
               "decode batches <= %d", h->launch_s * 1e6,
               serve_layer_kernels(h, &o->env.m), h->graph_max_batch);
    else if (h->launch_s > 0)
        fprintf(fp, "launches %.0f us x %.0f kernels a layer, no CUDA graphs",
               h->launch_s * 1e6, serve_layer_kernels(h, &o->env.m));
    else
        fprintf(fp, "launches hidden");
    fprintf(fp, "; KV %s%s", dtype_name(p->kv_dt == DT_COUNT ? DT_FP16
                                                              : p->kv_dt),
           p->decode_kv_per_q_head ? ", decode reads KV per query head" : "");
    const topo_nodespec *ns = &o->env.t->spec;
    if (ns->host_cpu[0])
        fprintf(fp, "; host CPU %s, %.2f x the reference host's speed "
                    "(calib/host-cpus.tsv)", ns->host_cpu, ns->host_speed);
    fputc('\n', fp);
}

void rserve_text(FILE *fp, const exp_serve_out *o)
{
    const model_spec *m = &o->env.m;
    const topo *t = o->env.t;
    const serve_input *in = &o->in;
    const wl_summary *ws = &o->ws;
    const char *src = o->source;
    const serve_result *r = &o->r;
    const serve_params *p = &in->p;
    fprintf(fp, "%s (%s) on %s\n", m->display, dtype_name(p->weight_dt), t->name);
    for (int k = 0; k < in->npools; k++) {
        const serve_pool *P = &in->pool[k];
        const serve_pool_result *pr = &r->pool[k];
        fprintf(fp, "  %-8s %d x (TP %d x PP %d) on %s: %d KV blocks of %d tokens "
               "per replica (%.0f tokens), %.2f GiB weights per GPU\n",
               in->npools == 1 ? "serving" : k == 0 ? "prefill" : "decode",
               P->replicas, P->tp, P->pp, P->gpu->name, pr->kv_blocks,
               p->block_size, pr->kv_capacity_tokens, pr->weights_bytes / GiB);
    }
    engine_text(fp, o);
    char steps[32] = "";
    if (p->scheduler_steps > 1)
        snprintf(steps, sizeof steps, ", %d decode steps a decision",
                 p->scheduler_steps);
    /* prefill-first with a chunk size: prefill batches apart from the
     * decodes, long prompts split (SGLang) */
    bool split = p->policy == SERVE_PREFILL_FIRST && p->chunk > 0;
    fprintf(fp, "  scheduler %s%s (%d-token budget%s%s), max %d sequences, "
           "admission %s, router %s, preemption by %s\n",
           p->static_batch ? "static batches, " : "",
           serve_policy_names[p->policy], serve_token_budget(p),
           split ? ", longer prompts split over prefill batches" : "", steps,
           p->max_num_seqs,
           serve_admit_names[p->admit], serve_router_names[p->router],
           serve_preempt_names[p->preempt]);
    if (in->concurrency > 0 && in->think_s > 0)
        fprintf(fp, "  clients            think %.0f ms between requests\n",
               in->think_s * 1e3);
    if (r->requests_truncated)
        fprintf(fp, "  truncated          %d requests cut to %s's %d-token "
               "context (--allow-truncate)\n", r->requests_truncated,
               m->display, m->max_seq);
    if (in->concurrency > 0)
        fprintf(fp, "  workload %s: %d requests", src, ws->n);
    else
        fprintf(fp, "  workload %s: %d requests over %.1f s (%.2f/s)", src,
               ws->n, ws->duration_s, ws->rate_per_s);
    fprintf(fp, "; prompt mean %.0f (p99 %.0f), output mean %.0f (p99 %.0f) "
           "tokens\n\n", ws->prompt_mean, ws->prompt_p99, ws->output_mean,
           ws->output_p99);
    const band_est *bd = o->band;
    fprintf(fp, "  %-10s %10s %10s %10s %10s   %s\n", "", "mean", "p50", "p90",
           "p99", bd[BAND_TTFT].have ? "mean: 80% band (published runs)" : "");
    dist_row(fp, "TTFT ms", &r->ttft, 1e3, &bd[BAND_TTFT]);
    dist_row(fp, "TPOT ms", &r->tpot, 1e3, &bd[BAND_TPOT]);
    dist_row(fp, "ITL ms", &r->itl, 1e3, &bd[BAND_TPOT]);
    dist_row(fp, "E2E s", &r->e2e, 1, &bd[BAND_E2E]);
    fprintf(fp, "\n  completed          %d requests in %.1f s", r->requests_completed,
           r->makespan_s);
    if (in->warmup > 0)
        fprintf(fp, "; the figures count the last %d, over %.1f s (the first %d "
                    "sent: warm-up; the throughputs add the %lld tokens they "
                    "made in that window)", r->requests_measured, r->measured_s,
               in->warmup,
               (long long)r->warmup_in_window.output_tokens);
    fprintf(fp, "%s", r->requests_rejected ? "" : "\n");
    if (r->requests_rejected)
        fprintf(fp, "; %d rejected (longer than a replica's KV cache)\n",
               r->requests_rejected);
    char bt[200];
    band_text(bt, sizeof bt, &bd[BAND_THROUGHPUT], r->throughput_tokens_per_s,
              "%.1f", true);
    fprintf(fp, "  throughput         %.1f output tokens/s%s, %.2f requests/s, "
           "%.1f total tokens/s\n", r->throughput_tokens_per_s, bt,
           r->throughput_requests_per_s, r->total_tokens_per_s);
    if (p->slo_ttft_s > 0 || p->slo_tpot_s > 0)
        fprintf(fp, "  goodput            %.2f requests/s meet TTFT <= %.0f ms and "
               "TPOT <= %.0f ms (%.1f%% of requests)\n",
               r->goodput_requests_per_s, p->slo_ttft_s * 1e3,
               p->slo_tpot_s * 1e3, 100 * r->slo_attainment);
    for (int k = 0; k < in->npools; k++) {
        const serve_pool_result *pr = &r->pool[k];
        fprintf(fp, "  %-18s MFU %.1f%%, MBU %.1f%%, busy %.1f%%, %ld iterations "
               "(host %.1f%% of their time); KV cache %.1f%% used on "
               "average, peak %.1f%%\n",
               in->npools == 1 ? "GPUs" : k == 0 ? "prefill GPUs"
                                                 : "decode GPUs",
               100 * pr->mfu, 100 * pr->mbu, 100 * pr->busy_fraction,
               pr->iterations, 100 * pr->host_fraction,
               100 * pr->kv_util_mean, 100 * pr->kv_util_peak);
    }
    fprintf(fp, "  preemptions        %ld (%ld swapped to host)\n", r->preemptions,
           r->swaps_out);
    fprintf(fp, "  energy             %.3f kWh, %.2f J per output token, %.0f W "
           "on average (the GPUs'; `compare` adds the rest of each node)\n",
           r->energy_j / 3.6e6, r->energy_per_token_j, r->avg_power_w);
    if (in->npools == 2)
        fprintf(fp, "  KV transfers       %.2f GB; per request mean %.2f ms, p99 "
               "%.2f ms%s\n", r->kv_transfer_bytes / 1e9,
               r->kv_transfer_s.mean * 1e3, r->kv_transfer_s.p99 * 1e3,
               p->kv_layerwise ? " (layer-wise, overlapped with prefill)" : "");
    print_links(fp, r, t);
    fprintf(fp, "  simulated          %llu events\n", (unsigned long long)r->events);
}

static json_t *dist_json(const serve_dist *d, const band_est *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "mean", json_real(d->mean));
    json_object_set_new(o, "p50", json_real(d->p50));
    json_object_set_new(o, "p90", json_real(d->p90));
    json_object_set_new(o, "p99", json_real(d->p99));
    if (!b) /* a figure no published run measured */
        return o;
    rjson_band_ends(o, b, "mean", d->mean, false);
    rjson_band_ends(o, b, "p50", d->p50, false);
    json_object_set_new(o, "band", rjson_band(b));
    return o;
}

static json_t *pools_json(const serve_input *in, const serve_result *r)
{
    json_t *a = json_array();
    for (int k = 0; k < in->npools; k++) {
        const serve_pool *P = &in->pool[k];
        const serve_pool_result *pr = &r->pool[k];
        json_t *o = json_object();
        json_object_set_new(o, "role", json_string(in->npools == 1 ? "serve"
                                                   : k == 0 ? "prefill"
                                                            : "decode"));
        json_object_set_new(o, "gpu", json_string(P->gpu->name));
        json_object_set_new(o, "tp", json_integer(P->tp));
        json_object_set_new(o, "pp", json_integer(P->pp));
        json_object_set_new(o, "replicas", json_integer(P->replicas));
        json_object_set_new(o, "gpus", json_integer(pr->gpus));
        json_object_set_new(o, "kv_blocks_per_replica", json_integer(pr->kv_blocks));
        json_object_set_new(o, "kv_capacity_tokens", json_real(pr->kv_capacity_tokens));
        json_object_set_new(o, "weights_bytes_per_gpu", json_real(pr->weights_bytes));
        json_object_set_new(o, "mfu", json_real(pr->mfu));
        json_object_set_new(o, "mbu", json_real(pr->mbu));
        json_object_set_new(o, "busy_fraction", json_real(pr->busy_fraction));
        json_object_set_new(o, "host_fraction", json_real(pr->host_fraction));
        json_object_set_new(o, "iterations", json_integer(pr->iterations));
        json_object_set_new(o, "kv_utilization_mean", json_real(pr->kv_util_mean));
        json_object_set_new(o, "kv_utilization_peak", json_real(pr->kv_util_peak));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *rserve_json(const exp_serve_out *o)
{
    const serve_input *in = &o->in;
    const serve_result *r = &o->r;
    const topo *t = o->env.t;
    json_t *j = json_object();
    int gpus = 0;
    for (int k = 0; k < in->npools; k++)
        gpus += r->pool[k].gpus;
    json_object_set_new(j, "engine", json_string(o->env.engine.name));
    json_object_set_new(j, "host_cpu",
                        json_string(o->env.t->spec.host_cpu[0]
                                        ? o->env.t->spec.host_cpu
                                        : "reference"));
    json_object_set_new(j, "host_speed", json_real(o->env.t->spec.host_speed));
    json_object_set_new(j, "gpu", json_string(in->pool[0].gpu->name));
    json_object_set_new(j, "gpus", json_integer(gpus));
    const band_est *bd = o->band;
    json_object_set_new(j, "ttft_s", dist_json(&r->ttft, &bd[BAND_TTFT]));
    json_object_set_new(j, "tpot_s", dist_json(&r->tpot, &bd[BAND_TPOT]));
    json_object_set_new(j, "itl_s", dist_json(&r->itl, &bd[BAND_TPOT]));
    json_object_set_new(j, "e2e_s", dist_json(&r->e2e, &bd[BAND_E2E]));
    json_object_set_new(j, "throughput_tokens_per_s", json_real(r->throughput_tokens_per_s));
    rjson_band_ends(j, &bd[BAND_THROUGHPUT], "throughput_tokens_per_s",
                    r->throughput_tokens_per_s, true);
    json_object_set_new(j, "throughput_band", rjson_band(&bd[BAND_THROUGHPUT]));
    json_object_set_new(j, "throughput_tokens_per_s_per_gpu",
                        json_real(gpus ? r->throughput_tokens_per_s / gpus : 0));
    json_object_set_new(j, "throughput_requests_per_s", json_real(r->throughput_requests_per_s));
    json_object_set_new(j, "total_tokens_per_s", json_real(r->total_tokens_per_s));
    json_object_set_new(j, "goodput_requests_per_s", json_real(r->goodput_requests_per_s));
    json_object_set_new(j, "slo_attainment", json_real(r->slo_attainment));
    json_object_set_new(j, "requests_completed", json_integer(r->requests_completed));
    json_object_set_new(j, "warmup_requests", json_integer(in->warmup));
    json_object_set_new(j, "requests_measured", json_integer(r->requests_measured));
    json_object_set_new(j, "measured_s", json_real(r->measured_s));
    json_object_set_new(
        j, "warmup_in_window",
        json_pack("{s:I, s:I, s:I}", "output_tokens",
                  (json_int_t)r->warmup_in_window.output_tokens,
                  "prompt_tokens",
                  (json_int_t)r->warmup_in_window.prompt_tokens, "requests",
                  (json_int_t)r->warmup_in_window.requests));
    json_object_set_new(j, "requests_rejected", json_integer(r->requests_rejected));
    json_object_set_new(j, "requests_truncated", json_integer(r->requests_truncated));
    json_object_set_new(j, "concurrency", json_integer(in->concurrency));
    json_object_set_new(j, "preemptions", json_integer(r->preemptions));
    json_object_set_new(j, "swaps", json_integer(r->swaps_out));
    json_object_set_new(j, "makespan_s", json_real(r->makespan_s));
    json_t *kv = json_object(), *series = json_array();
    for (int i = 0; i < r->kv_series_n; i++) {
        json_t *pt = json_array();
        json_array_append_new(pt, json_real(r->kv_series_t[i]));
        json_array_append_new(pt, json_real(r->kv_series_used[i]));
        json_array_append_new(series, pt);
    }
    json_object_set_new(kv, "utilization_mean", json_real(r->pool[0].kv_util_mean));
    json_object_set_new(kv, "utilization_peak", json_real(r->pool[0].kv_util_peak));
    json_object_set_new(kv, "series_t_s_used", series);
    json_object_set_new(j, "kv_cache", kv);
    json_object_set_new(j, "pools", pools_json(in, r));
    json_object_set_new(j, "energy_j", json_real(r->energy_j));
    json_object_set_new(j, "energy_per_token_j", json_real(r->energy_per_token_j));
    json_object_set_new(j, "avg_power_w", json_real(r->avg_power_w));
    json_t *mv = json_object();
    json_object_set_new(mv, "bytes", json_real(r->kv_transfer_bytes));
    json_object_set_new(mv, "time_s", dist_json(&r->kv_transfer_s, NULL));
    json_object_set_new(j, "kv_transfer", mv);
    json_t *links = json_array();
    for (int i = 0; i < r->ntop_links; i++) {
        const serve_link_use *u = &r->top_links[i];
        json_array_append_new(links, rjson_link(t, u->link, u->bytes,
                                                   u->utilization));
    }
    json_object_set_new(j, "busiest_links", links);
    json_object_set_new(j, "events", json_integer((json_int_t)r->events));
    return j;
}

/* ---- one row per request ---------------------------------------------------- */

int rserve_csv(const char *path, const exp_serve_out *o, llm_err *e)
{
    const serve_request_result *v = o->per_request;
    util_outfile f;
    if (util_out_open(&f, path, e))
        return -1;
    fprintf(f.fp, "id,arrival_s,first_token_s,finish_s,prompt_tokens,"
                  "output_tokens,replica,prefill_replica,ttft_s,tpot_s,e2e_s,"
                  "preemptions,kv_transfer_s\n");
    for (int i = 0; i < o->in.nreq && v; i++) {
        const serve_request_result *q = &v[i];
        int prompt = o->in.req[i].prompt_tokens;
        int out = o->in.req[i].output_tokens;
        fprintf(f.fp, "%d,%.9f,", i, q->arrival_s);
        if (q->finish_s < 0) { /* rejected: longer than a replica's cache */
            fprintf(f.fp, ",,%d,%d,,,,,,%d,\n", prompt, out, q->preemptions);
            continue;
        }
        fprintf(f.fp, "%.9f,%.9f,%d,%d,%d,%d,%.9f,%.9f,%.9f,%d,%.9f\n",
                q->first_token_s, q->finish_s, prompt, out, q->replica,
                q->prefill_replica, q->first_token_s - q->arrival_s,
                out > 1 ? (q->finish_s - q->first_token_s) / (out - 1) : 0,
                q->finish_s - q->arrival_s, q->preemptions, q->kv_transfer_s);
    }
    return util_out_commit(&f, e);
}

/* ---- the Chrome trace, streamed -------------------------------------------- */

/* The host's track of a replica: past its pipeline stages (at most 64,
 * sim/serve/serve.c check_input) */
#define HOST_TID 64

static void ev_printf(rserve_trace *tr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ev_printf(rserve_trace *tr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(tr->first ? "\n" : ",\n", tr->f.fp);
    tr->first = false;
    vfprintf(tr->f.fp, fmt, ap);
    va_end(ap);
}

static void on_replica(void *ctx, int inst, int pool, int npools, int index,
                       int gpu_first, int gpu_last, int stages)
{
    rserve_trace *tr = ctx;
    const char *kind = npools == 1 ? "replica"
                       : pool == 0 ? "prefill replica"
                                   : "decode replica";
    tr->ninst = inst + 1;
    ev_printf(tr, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
              "\"args\":{\"name\":\"%s %d (GPUs %d-%d)\"}}", inst + 1, kind,
              index, gpu_first, gpu_last);
    for (int s = 0; s < stages; s++)
        ev_printf(tr, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                  "\"tid\":%d,\"args\":{\"name\":\"stage %d\"}}", inst + 1, s,
                  s);
    ev_printf(tr, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
              "\"tid\":%d,\"args\":{\"name\":\"host (scheduling, launch)\"}}",
              inst + 1, HOST_TID);
}

static void on_batch(void *ctx, int inst, int stage, int64_t t_ns,
                     double dur_s, double host_s, int prefill, int decode,
                     int tokens)
{
    rserve_trace *tr = ctx;
    if (host_s > 0) /* the host's part comes first in the iteration */
        ev_printf(tr, "{\"name\":\"host\",\"ph\":\"X\",\"pid\":%d,"
                  "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}", inst + 1, HOST_TID,
                  t_ns * 1e-3, host_s * 1e6);
    if (stage == 0) {
        ev_printf(tr, "{\"name\":\"%d prefill + %d decode\",\"ph\":\"X\","
                  "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,\"args\":"
                  "{\"tokens\":%d}}", prefill, decode, inst + 1, t_ns * 1e-3,
                  dur_s * 1e6, tokens);
        ev_printf(tr, "{\"name\":\"batch\",\"ph\":\"C\",\"pid\":%d,"
                  "\"ts\":%.3f,\"args\":{\"prefill\":%d,\"decode\":%d,"
                  "\"tokens\":%d}}", inst + 1, t_ns * 1e-3, prefill, decode,
                  tokens);
    }
    else
        ev_printf(tr, "{\"name\":\"batch\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                  "\"ts\":%.3f,\"dur\":%.3f}", inst + 1, stage, t_ns * 1e-3,
                  dur_s * 1e6);
}

static void on_kv_used(void *ctx, int inst, int64_t t_ns, int blocks)
{
    ev_printf(ctx, "{\"name\":\"kv blocks used\",\"ph\":\"C\",\"pid\":%d,"
              "\"ts\":%.3f,\"args\":{\"used\":%d}}", inst + 1, t_ns * 1e-3,
              blocks);
}

static void on_kv_begin(void *ctx)
{
    rserve_trace *tr = ctx;
    ev_printf(tr, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
              "\"args\":{\"name\":\"links (KV transfers)\"}}", tr->ninst + 1);
}

static void on_kv_link(void *ctx, const topo *t, int l)
{
    rserve_trace *tr = ctx;
    tr->t = t;
    if (tr->nomem || tr->lane_end)
        return;
    tr->nlinks = t->nlink;
    tr->lane_end = calloc((size_t)t->nlink * RSERVE_KV_LANES, sizeof(double));
    tr->lane_named = calloc((size_t)t->nlink * RSERVE_KV_LANES, 1);
    tr->nomem = !tr->lane_end || !tr->lane_named;
    (void)l; /* its threads are named as their lanes are first used */
}

static void on_kv_move(void *ctx, int request, int link, int64_t t0_ns,
                       int64_t t1_ns, double bytes)
{
    rserve_trace *tr = ctx;
    if (tr->nomem || !tr->lane_end || link < 0 || link >= tr->nlinks)
        return;
    double t0 = t0_ns * 1e-3, t1 = t1_ns * 1e-3;
    double *end = tr->lane_end + (size_t)link * RSERVE_KV_LANES;
    int lane = 0; /* the first lane free since t0 (the last one overflows) */
    while (lane < RSERVE_KV_LANES - 1 && end[lane] > t0)
        lane++;
    end[lane] = t1 > end[lane] ? t1 : end[lane];
    int tid = link * RSERVE_KV_LANES + lane;
    const topo *t = tr->t;
    if (!tr->lane_named[tid]) {
        tr->lane_named[tid] = 1;
        ev_printf(tr, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                  "\"tid\":%d,\"args\":{\"name\":\"%s -> %s (%s)%s\"}}",
                  tr->ninst + 1, tid, t->dev[t->link[link].src].name,
                  t->dev[t->link[link].dst].name,
                  topo_link_kind_name(t->link[link].kind),
                  lane ? " (another transfer in flight)" : "");
    }
    ev_printf(tr, "{\"name\":\"KV request %d\",\"ph\":\"X\",\"pid\":%d,"
              "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"bytes\":%.0f}}",
              request, tr->ninst + 1, tid, t0, t1 - t0, bytes);
}

int rserve_trace_open(rserve_trace *tr, const char *path, llm_err *e)
{
    memset(tr, 0, sizeof *tr);
    if (util_out_open(&tr->f, path, e))
        return -1;
    tr->open = tr->first = true;
    fputs("{\"traceEvents\":[", tr->f.fp);
    tr->events = (serve_events){tr, on_replica, on_batch, on_kv_used,
                                on_kv_begin, on_kv_link, on_kv_move};
    return 0;
}

/* One async span pair (begin, end) of request i's track. */
static void span(rserve_trace *tr, int pid, int id, const char *cat,
                 const char *name, double t0_s, double t1_s)
{
    ev_printf(tr, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"b\",\"id\":%d,"
              "\"pid\":%d,\"ts\":%.3f}", name, cat, id, pid, t0_s * 1e6);
    ev_printf(tr, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"e\",\"id\":%d,"
              "\"pid\":%d,\"ts\":%.3f}", name, cat, id, pid, t1_s * 1e6);
}

void rserve_trace_requests(rserve_trace *tr, const exp_serve_out *o)
{
    if (!o->per_request)
        return;
    int pid = tr->ninst + 2; /* past the replicas and the links */
    ev_printf(tr, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
              "\"args\":{\"name\":\"requests (queued, prefill, decode; KV "
              "transfers)\"}}", pid);
    for (int i = 0; i < o->in.nreq; i++) {
        const serve_request_result *q = &o->per_request[i];
        if (q->finish_s < 0)
            continue; /* rejected: never ran */
        char name[40];
        snprintf(name, sizeof name, "request %d", i);
        /* the request's span, and its phases nested in it */
        ev_printf(tr, "{\"name\":\"%s\",\"cat\":\"request\",\"ph\":\"b\","
                  "\"id\":%d,\"pid\":%d,\"ts\":%.3f,\"args\":{\"replica\":%d,"
                  "\"preemptions\":%d}}", name, i, pid, q->arrival_s * 1e6,
                  q->replica, q->preemptions);
        span(tr, pid, i, "request", "queued", q->arrival_s, q->scheduled_s);
        span(tr, pid, i, "request", "prefill", q->scheduled_s,
             q->first_token_s);
        span(tr, pid, i, "request", "decode", q->first_token_s, q->finish_s);
        ev_printf(tr, "{\"name\":\"%s\",\"cat\":\"request\",\"ph\":\"e\","
                  "\"id\":%d,\"pid\":%d,\"ts\":%.3f}", name, i, pid,
                  q->finish_s * 1e6);
        if (q->kv_transfer_s > 0) /* its own track: it may start mid-prefill */
            span(tr, pid, i, "kv-transfer", "KV transfer", q->kv_start_s,
                 q->kv_start_s + q->kv_transfer_s);
    }
}

int rserve_trace_finish(rserve_trace *tr, llm_err *e)
{
    fputs("\n],\"displayTimeUnit\":\"ms\"}\n", tr->f.fp);
    tr->open = false;
    free(tr->lane_end);
    free(tr->lane_named);
    tr->lane_end = NULL;
    tr->lane_named = NULL;
    if (tr->nomem) {
        util_out_abort(&tr->f);
        return err_set(e, "out of memory");
    }
    return util_out_commit(&tr->f, e);
}

void rserve_trace_abort(rserve_trace *tr)
{
    if (tr->open)
        util_out_abort(&tr->f);
    tr->open = false;
    free(tr->lane_end);
    free(tr->lane_named);
    tr->lane_end = NULL;
    tr->lane_named = NULL;
}
