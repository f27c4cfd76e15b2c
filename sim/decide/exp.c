#include "decide/exp.h"

#include <string.h>

#include "base/util.h"
#include "decide/budget.h"

void exp_train_defaults(exp_train *x)
{
    memset(x, 0, sizeof *x);
    settings_defaults(EXP_TRAIN, x, x->h.src);
}

void exp_serve_defaults(exp_serve *x)
{
    memset(x, 0, sizeof *x);
    settings_defaults(EXP_SERVE, x, x->h.src);
}

void exp_infer_defaults(exp_infer *x)
{
    memset(x, 0, sizeof *x);
    settings_defaults(EXP_INFER, x, x->h.src);
}

void exp_compare_defaults(exp_compare *x)
{
    memset(x, 0, sizeof *x);
    settings_defaults(EXP_COMPARE, x, x->h.src);
}

plan_train exp_plan_train_defaults(void)
{
    static exp_train x;
    exp_train_defaults(&x);
    return x.plan;
}

train_loader exp_loader_defaults(void)
{
    static exp_train x;
    exp_train_defaults(&x);
    return x.loader;
}

serve_params exp_serve_params_defaults(void)
{
    static exp_serve x;
    exp_serve_defaults(&x);
    return x.p;
}

plan_infer exp_plan_infer_defaults(const model_spec *m)
{
    static exp_infer x;
    exp_infer_defaults(&x);
    if (x.plan.context == 0)
        x.plan.context = m->max_seq;
    if (x.plan.weight_dtype == DT_COUNT)
        x.plan.weight_dtype = m->weight_dtype;
    return x.plan;
}

/* ---- blame ------------------------------------------------------------------ */

/* Where s's value came from: "x.cfg:4: parallel.tp", "--set
 * parallel.tp", "sweep axis parallel.tp" or "--tp". */
static void place(exp_kind k, const exp_head *h, const setting *s, char *buf,
                  size_t len)
{
    const exp_src *w = &h->src[settings_index(s)];
    const char *key = s->at[k].key;
    if (!key || w->how == SRC_FLAG || w->how == SRC_DEFAULT)
        snprintf(buf, len, "--%s", s->flag);
    else if (w->how == SRC_SET)
        snprintf(buf, len, "--set %s", key);
    else if (w->how == SRC_AXIS)
        snprintf(buf, len, "sweep axis %s", key);
    else
        snprintf(buf, len, "%s:%d: %s",
                 w->file ? h->inc[w->file - 1] : h->file, w->line, key);
}

void exp_blame(exp_kind k, const exp_head *h, llm_err *e)
{
    char flag[64];
    if (sscanf(e->msg, "--%62[a-z0-9A-Z-]", flag) != 1)
        return;
    const setting *s = settings_by_flag(k, flag);
    if (!s || !s->at[k].key)
        return;
    unsigned char how = h->src[settings_index(s)].how;
    if (how != SRC_FILE && how != SRC_SET && how != SRC_AXIS)
        return;
    /* "--tp 3 does not ..." or "--model: unknown ...": what follows */
    size_t n = strlen(flag);
    const char *rest = e->msg + 2 + n + (e->msg[2 + n] == ':');
    char where[600];
    place(k, h, s, where, sizeof where);
    char m[sizeof e->msg];
    snprintf(m, sizeof m, "%s:%s", where, rest);
    err_set(e, "%s", m);
}

int exp_settle(exp_kind k, void *x, llm_err *e)
{
    exp_head *h = x;
    for (int i = 0; i < settings_nconflicts; i++) {
        const setting_conflict *c = &settings_conflicts[i];
        if (c->kind != k)
            continue;
        const setting *a = settings_by_flag(k, c->a);
        const setting *b = settings_by_flag(k, c->b);
        unsigned char ha = h->src[settings_index(a)].how;
        unsigned char hb = h->src[settings_index(b)].how;
        if (ha == SRC_DEFAULT || hb == SRC_DEFAULT || ha == hb)
            continue;
        settings_reset(ha < hb ? a : b, k, x, h->src);
    }
    return exp_check_conflicts(k, h, e);
}

int exp_check_conflicts(exp_kind k, const exp_head *h, llm_err *e)
{
    for (int i = 0; i < settings_nconflicts; i++) {
        const setting_conflict *c = &settings_conflicts[i];
        if (c->kind != k)
            continue;
        const setting *a = settings_by_flag(k, c->a);
        const setting *b = settings_by_flag(k, c->b);
        LLM_ASSERT(a && b); /* the table names settings of its kind */
        if (h->src[settings_index(a)].how == SRC_DEFAULT ||
            h->src[settings_index(b)].how == SRC_DEFAULT)
            continue;
        char pa[600], pb[600];
        place(k, h, a, pa, sizeof pa);
        place(k, h, b, pb, sizeof pb);
        return err_set(e, "%s: given with %s: %s (expected one of the two)",
                       pb, pa, c->why);
    }
    return 0;
}

/* ---- the environment ---------------------------------------------------------- */

/* The run's stated overheads in place of the data's (negative: the
 * data's). */
void exp_overhead_apply(mem_overhead *ov, const exp_overhead *x)
{
    if (!x)
        return;
    if (x->cuda_context_bytes >= 0)
        ov->cuda_context_bytes = x->cuda_context_bytes;
    if (x->nccl_bytes_per_group >= 0)
        ov->nccl_bytes_per_group = x->nccl_bytes_per_group;
    if (x->reserve_frac >= 0)
        ov->reserve_frac = x->reserve_frac;
}

static int env_cluster(const exp_loader *ld, const char *cluster, int nodes,
                       const topo_net *bw, const exp_overhead *ov,
                       exp_env *env, llm_err *e)
{
    if (ld->cluster(ld->ctx, cluster, nodes, bw, env, e))
        return -1;
    if (!(env->routes = net_routes_create(env->t)))
        return err_set(e, "out of memory");
    exp_overhead_apply(&env->ov, ov);
    return 0;
}

int exp_env_load(const exp_loader *ld, const char *model, const char *cluster,
                 int nodes, const topo_net *bw, const exp_overhead *ov,
                 exp_env *env, llm_err *e)
{
    memset(env, 0, sizeof *env);
    if (ld->model(ld->ctx, model, &env->m, e) ||
        env_cluster(ld, cluster, nodes, bw, ov, env, e)) {
        exp_env_free(env);
        return -1;
    }
    return 0;
}

void exp_env_free(exp_env *env)
{
    cost_calib_free(&env->cc);
    net_routes_destroy(env->routes);
    env->routes = NULL;
    topo_destroy(env->t);
    env->t = NULL;
    gpu_catalog_free(&env->cat);
    band_table_free(&env->bands);
}

/* ---- training ------------------------------------------------------------------ */

int exp_train_fill(plan_train *p, const char *cluster, int have,
                   int microbatches, llm_err *e)
{
    if (p->dp == 0) {
        int per = p->tp * p->pp * p->cp;
        if (have % per)
            return err_set(e, "--dp 0 (fill the cluster): tp %d x pp %d x cp "
                              "%d = %d does not divide %s's %d GPUs",
                           p->tp, p->pp, p->cp, per, cluster, have);
        p->dp = have / per;
    }
    if (microbatches > 0)
        p->global_batch = p->micro_batch * p->dp * microbatches;
    return 0;
}

static int need_names(const char *model, const char *cluster, const char *cmd,
                      llm_err *e)
{
    if (!model[0] || !cluster[0])
        return err_set(e, "--model and --cluster are required (see `llmsim "
                          "help %s`)", cmd);
    return 0;
}

/* The plan as it will run, and a run the simulator could not finish in
 * reasonable time or memory refused (budget.h) before the topology is
 * built: a million GPUs take gigabytes by themselves. */
static int train_budget(const exp_train *x, const exp_run_opts *o,
                        const exp_loader *ld, const model_spec *m,
                        const stack_spec *st, plan_train *p, budget_est *b,
                        llm_err *e)
{
    exp_topo_size z;
    if (ld->topo_size(ld->ctx, x->cluster, x->nodes, &z, e))
        return -1;
    int ngpu = z.nodes * z.gpus_per_node;
    int have = x->gpus > 0 && x->gpus < ngpu ? x->gpus : ngpu;
    if (exp_train_fill(p, x->cluster, have, x->microbatches, e) ||
        plan_train_check(m, p, e))
        return -1;
    memset(b, 0, sizeof *b);
    budget_topology(z.nodes, z.ndev, z.nlink, b);
    budget_cluster cl = {z.nodes, z.gpus_per_node, z.nics, z.nvlink, z.nvls,
                         z.sharp, (double)z.nodes * z.nlink, &z.coll};
    plan_train q = *p; /* with the bucket the step will reduce */
    q.bucket_bytes = stack_bucket_bytes(st, p->bucket_bytes, p->dp * p->cp,
                                        mem_grad_bytes_per_param(p));
    budget_train(m, &q, o->full, &cl, b);
    return budget_check(b, x->h.file[0] ? x->h.file : "the plan", o->force, e);
}

/* Watts per GPU over the step, as `serve` models power (calib/power.tsv):
 * idle, plus the dynamic range times the utilization while kernels run. */
static double train_power_w(const train_result *r, const gpu_spec *g,
                            double idle_w)
{
    double act = r->sm_efficiency < 1 ? r->sm_efficiency : 1;
    return idle_w + (g->tdp_w - idle_w) * r->gpu_util * act;
}

int exp_train_run(const exp_train *x, const exp_run_opts *o,
                  const exp_loader *ld, exp_train_out *out, llm_err *e)
{
    static const exp_run_opts none;
    if (!o)
        o = &none;
    memset(out, 0, sizeof *out);
    out->plan = x->plan;
    exp_env *v = &out->env;
    if (exp_check_conflicts(EXP_TRAIN, &x->h, e) ||
        need_names(x->model, x->cluster, "train", e) ||
        ld->model(ld->ctx, x->model, &v->m, e) ||
        ld->stack(ld->ctx, x->stack, &v->stack, e))
        goto fail;
    stack_ask_attention(&v->stack, x->attention_kernel);
    if (train_budget(x, o, ld, &v->m, &v->stack, &out->plan, &out->budget,
                     e) ||
        env_cluster(ld, x->cluster, x->nodes, &x->net, &x->overhead, v, e))
        goto fail;
    train_input in = {.m = &v->m, .plan = &out->plan, .t = v->t,
                      .routes = v->routes,
                      .gpu = v->t->gpu, .cost = &v->cc, .coll = &v->kc,
                      .overhead = &v->ov, .full = o->full,
                      .record = o->record ? &out->rec : NULL,
                      .loader = &x->loader, .gpus = x->gpus,
                      .stack = &v->stack};
    if (train_simulate(&in, &out->r, e))
        goto fail;
    out->power_w_per_gpu = train_power_w(&out->r, v->t->gpu, v->idle_w);
    char key[BAND_KEY];
    band_train_key(key, sizeof key, v->t->gpu->architecture, v->stack.name,
                   &out->plan);
    band_find(&v->bands, key, &out->band);
    return 0;
fail:
    exp_blame(EXP_TRAIN, &x->h, e);
    exp_train_out_free(out);
    return -1;
}

bool exp_train_fits(const exp_train_out *o)
{
    const gpu_spec *g = o->env.t ? o->env.t->gpu : NULL;
    return !g || o->r.memory_peak_bytes <= g->memory_bytes;
}

void exp_train_out_free(exp_train_out *out)
{
    train_record_free(&out->rec);
    exp_env_free(&out->env);
}

/* ---- serving --------------------------------------------------------------------- */

/* The simulator's cost of the run so far (its cluster, and `requests`
 * requests) against the budget (budget.h).  Drawn requests are counted
 * before they are drawn; a trace's after it is read. */
static int serve_budget(const exp_serve *x, const exp_run_opts *o,
                        const exp_loader *ld, budget_est *b, double requests,
                        llm_err *e)
{
    if (b->gpus == 0) {
        exp_topo_size z;
        if (ld->topo_size(ld->ctx, x->cluster, x->nodes, &z, e))
            return -1;
        b->gpus = (double)z.nodes * z.gpus_per_node;
        budget_topology(z.nodes, z.ndev, z.nlink, b);
    }
    budget_serve(requests, b);
    const char *what = x->h.file[0]    ? x->h.file
                       : x->trace[0] ? x->trace
                                     : "--requests";
    return budget_check(b, what, o->force, e);
}

/* Pools: one colocated pool, or prefill replicas on the first GPUs and
 * decode replicas after them. */
static int serve_pools(const exp_serve *x, const topo *t, serve_input *in,
                       llm_err *e)
{
    int gpus = x->gpus > 0 ? x->gpus : t->ngpu;
    if (gpus > t->ngpu)
        return err_set(e, "--gpus %d: %s has %d GPUs (add nodes with "
                       "--nodes)", gpus, t->name, t->ngpu);
    if ((x->prefill_replicas > 0) != (x->decode_replicas > 0))
        return err_set(e, "--prefill-replicas and --decode-replicas go "
                          "together (a disaggregated deployment needs both)");
    if (x->prefill_replicas > 0) {
        in->npools = 2;
        in->pool[0] = (serve_pool){.tp = x->prefill_tp ? x->prefill_tp : x->tp,
                                   .pp = x->prefill_pp ? x->prefill_pp : x->pp,
                                   .replicas = x->prefill_replicas};
        in->pool[1] = (serve_pool){.tp = x->decode_tp ? x->decode_tp : x->tp,
                                   .pp = x->decode_pp ? x->decode_pp : x->pp,
                                   .replicas = x->decode_replicas};
        in->pool[1].first_gpu = in->pool[0].tp * in->pool[0].pp *
                                in->pool[0].replicas;
    } else {
        in->npools = 1;
        int per = x->tp * x->pp;
        in->pool[0] = (serve_pool){.tp = x->tp, .pp = x->pp,
                                   .replicas = x->replicas > 0 ? x->replicas
                                                               : gpus / per};
        if (in->pool[0].replicas < 1)
            return err_set(e, "TP %d x PP %d needs %d GPUs; %d are given",
                           x->tp, x->pp, per, gpus);
    }
    const serve_pool *last = &in->pool[in->npools - 1];
    int need = last->first_gpu + last->tp * last->pp * last->replicas;
    if (need > gpus)
        return err_set(e, "the replicas need %d GPUs; %d are given%s", need,
                       gpus, x->gpus ? " (--gpus)" : "");
    return 0;
}

/* --cv shapes gamma gaps and --burst groups burst arrivals: given for
 * another arrival process they would be ignored without a word. */
static int arrival_options(const exp_serve *x, llm_err *e)
{
    const setting *cv = settings_by_flag(EXP_SERVE, "cv");
    const setting *burst = settings_by_flag(EXP_SERVE, "burst");
    const char *arr = wl_arrival_names[x->arrival];
    if (x->h.src[settings_index(cv)].how != SRC_DEFAULT &&
        x->arrival != WL_GAMMA)
        return err_set(e, "--cv %g applies to gamma arrivals, and the "
                          "arrivals are %s (expected --arrival gamma, or no "
                          "--cv)", x->cv, arr);
    if (x->h.src[settings_index(burst)].how != SRC_DEFAULT &&
        x->arrival != WL_BURST)
        return err_set(e, "--burst %d applies to burst arrivals, and the "
                          "arrivals are %s (expected --arrival burst, or no "
                          "--burst)", x->burst, arr);
    return 0;
}

static int serve_workload(const exp_serve *x, const exp_loader *ld,
                          wl_request **req, int *n, llm_err *e)
{
    if (x->trace[0]) {
        char path[1100];
        ld->path(ld->ctx, x->trace, path, sizeof path);
        return wl_read_trace(path, x->rate_scale, x->requests, req, n, e);
    }
    if (!x->prompt_len[0] || !x->output_len[0])
        return err_set(e, "no workload: give --trace FILE.csv, or --rate R "
                          "--prompt-len L --output-len L (see `llmsim help "
                          "serve`)");
    if (arrival_options(x, e))
        return -1;
    /* closed loop: the clients send them; drawn as one offline batch */
    wl_spec s = {.arrival = x->concurrency > 0 ? WL_OFFLINE
                                               : (wl_arrival_kind)x->arrival,
                 .rate_per_s = x->rate, .cv = x->cv, .burst_size = x->burst,
                 .requests = x->requests > 0 ? x->requests : 1000,
                 .seed = (unsigned long)x->seed};
    if (s.arrival != WL_OFFLINE && x->rate <= 0)
        return err_set(e, "--rate: missing (expected requests per second > "
                          "0, or --arrival offline)");
    char pl[1100], ol[1100];
    snprintf(pl, sizeof pl, "%s", x->prompt_len);
    snprintf(ol, sizeof ol, "%s", x->output_len);
    if (strncmp(pl, "empirical:", 10) == 0)
        ld->path(ld->ctx, x->prompt_len + 10, pl + 10, sizeof pl - 10);
    if (strncmp(ol, "empirical:", 10) == 0)
        ld->path(ld->ctx, x->output_len + 10, ol + 10, sizeof ol - 10);
    if (wl_len_parse("--prompt-len", pl, 0, &s.prompt, e))
        return -1;
    if (wl_len_parse("--output-len", ol, 1, &s.output, e)) {
        wl_len_free(&s.prompt);
        return -1;
    }
    int rc = wl_generate(&s, req, n, e);
    wl_len_free(&s.prompt);
    wl_len_free(&s.output);
    return rc;
}

/* Whether the run left the serving setting --flag at its default. */
static bool left_default(const exp_serve *x, const char *flag)
{
    const setting *s = settings_by_flag(EXP_SERVE, flag);
    LLM_ASSERT(s);
    return x->h.src[settings_index(s)].how == SRC_DEFAULT;
}

/* The engine's defaults for every setting the run did not give, and what
 * only the engine says (its host costs, kernels, batching); its batch
 * limits are those of the GPU it runs on, and its host costs those of
 * the node's CPU: a profile states them for the reference host
 * (calib/host-cpus.tsv), and a CPU of speed s takes 1/s of them.  A host
 * cost the run gives is its own host's. */
static void engine_defaults(const exp_serve *x, const eprof *en,
                            const gpu_spec *g, double host_speed,
                            serve_params *p)
{
    bool large = eprof_is_large(en, g->name, g->memory_bytes);
    if (left_default(x, "max-num-seqs"))
        p->max_num_seqs = large ? en->large.max_num_seqs : en->max_num_seqs;
    if (left_default(x, "scheduler-steps"))
        p->scheduler_steps = en->scheduler_steps;
    if (left_default(x, "max-batched-tokens"))
        p->max_batched_tokens =
            large ? en->large.max_batched_tokens : en->max_batched_tokens;
    if (left_default(x, "chunk"))
        p->chunk = en->chunk;
    if (left_default(x, "policy"))
        p->policy = en->policy;
    if (left_default(x, "block-size"))
        p->block_size = en->block_size;
    if (left_default(x, "gpu-mem-util"))
        p->gpu_mem_util = en->gpu_mem_util;
    p->mem_of_free = en->mem_of_free;
    if (left_default(x, "preemption"))
        p->preempt = (serve_preempt)en->preempt;
    if (left_default(x, "admission"))
        p->admit = en->admit;
    if (left_default(x, "iteration-overhead-ms"))
        p->iteration_overhead_s = en->iteration_overhead_s / host_speed;
    if (p->kv_dt == DT_COUNT && en->fp8_kv_with_fp8 &&
        (p->weight_dt == DT_FP8 || p->weight_dt == DT_FP4))
        p->kv_dt = DT_FP8;
    p->reserve_ratio = en->reserve_ratio;
    p->static_batch = en->static_batch;
    p->decode_kv_per_q_head = en->decode_kv_per_q_head;
    p->host = en->host;
    p->host.per_seq_s /= host_speed;
    p->host.launch_s /= host_speed;
    p->host.prefill_s /= host_speed;
}

/* The pools' GPU, cost tables and idle power; the model's dtype when none
 * is asked for; the engine's defaults. */
static void serve_setup(const exp_serve *x, exp_env *v, serve_input *in)
{
    in->p = x->p;
    if (in->p.weight_dt == DT_COUNT)
        in->p.weight_dt = v->m.weight_dtype == DT_BF16 ? DT_BF16 : DT_FP16;
    engine_defaults(x, &v->engine, v->t->gpu, topo_host_speed(&v->t->spec),
                    &in->p);
    in->concurrency = x->concurrency;
    in->think_s = x->think_s;
    in->warmup = x->warmup;
    for (int k = 0; k < in->npools; k++) {
        in->pool[k].gpu = v->t->gpu;
        in->pool[k].cost = &v->cc;
        in->pool[k].idle_w = v->idle_w;
        in->pool[k].overhead = v->ov;
    }
    in->m = &v->m;
    in->t = v->t;
    in->routes = v->routes;
    in->coll = &v->kc;
}

/* Requests longer than the model's context: an error naming the first,
 * or with --allow-truncate cut to fit it (the prompt first, keeping one
 * prompt token) and counted. */
static int fit_context(const exp_serve *x, const model_spec *m,
                       wl_request *req, int n, int *cut, llm_err *e)
{
    *cut = 0;
    int ctx = x->max_model_len > 0 ? x->max_model_len : m->max_seq;
    for (int i = 0; i < n; i++) {
        wl_request *w = &req[i];
        long len = (long)w->prompt_tokens + w->output_tokens;
        if (len <= ctx)
            continue;
        if (!x->allow_truncate)
            return err_set(e, "request %d: %d prompt + %d output tokens "
                           "exceed the %d-token context (%s); shorten the "
                           "workload, raise --max-model-len, or give "
                           "--allow-truncate to cut such requests to fit "
                           "and count them",
                           i + 1, w->prompt_tokens, w->output_tokens, ctx,
                           x->max_model_len > 0 ? "--max-model-len"
                                                : m->display);
        if (w->output_tokens >= ctx)
            w->output_tokens = ctx - 1;
        if (w->prompt_tokens > ctx - w->output_tokens)
            w->prompt_tokens = ctx - w->output_tokens;
        ++*cut;
    }
    return 0;
}

static void serve_source(const exp_serve *x, char *buf, size_t len)
{
    if (x->concurrency > 0)
        snprintf(buf, len, "%s, closed loop of %d clients",
                 x->trace[0] ? x->trace : "drawn lengths", x->concurrency);
    else if (x->trace[0])
        snprintf(buf, len, "%s%s", x->trace,
                 x->rate_scale != 1 ? " (rate scaled)" : "");
    else
        snprintf(buf, len, "%s arrivals", wl_arrival_names[x->arrival]);
}

int exp_serve_run(const exp_serve *x, const exp_run_opts *o,
                  const exp_loader *ld, exp_serve_out *out, llm_err *e)
{
    static const exp_run_opts none;
    if (!o)
        o = &none;
    memset(out, 0, sizeof *out);
    exp_env *v = &out->env;
    serve_input *in = &out->in;
    wl_request *req = NULL;
    int nreq = 0, rc = -1;
    budget_est b = {0};
    double drawn = x->trace[0] ? 0 : x->requests > 0 ? x->requests : 1000;
    if (exp_check_conflicts(EXP_SERVE, &x->h, e) ||
        need_names(x->model, x->cluster, "serve", e) ||
        ld->model(ld->ctx, x->model, &v->m, e) ||
        ld->engine(ld->ctx, x->engine, &v->engine, e) ||
        serve_budget(x, o, ld, &b, drawn, e) ||
        env_cluster(ld, x->cluster, x->nodes, &x->net, &x->overhead, v, e) ||
        serve_pools(x, v->t, in, e))
        goto fail;
    serve_setup(x, v, in);
    if (serve_workload(x, ld, &req, &nreq, e) ||
        fit_context(x, &v->m, req, nreq, &out->r_truncated, e) ||
        (x->trace[0] && serve_budget(x, o, ld, &b, nreq, e)))
        goto fail;
    if (x->warmup >= nreq) {
        err_set(e, "--warmup %d: not below the run's %d requests (expected "
                   "fewer, so that some are measured)", x->warmup, nreq);
        goto fail;
    }
    in->req = req;
    in->nreq = nreq;
    in->events = o->events;
    if (o->per_request &&
        !(in->out = out->per_request =
              malloc(sizeof *out->per_request * (size_t)(nreq ? nreq : 1)))) {
        err_set(e, "out of memory");
        goto fail;
    }
    if (serve_simulate(in, &out->r, e)) {
        if (strstr(e->msg, "does not fit"))
            rc = EXP_NO_FIT;
        goto fail;
    }
    out->r.requests_truncated = out->r_truncated;
    if (wl_summarize(req, nreq, &out->ws, e))
        goto fail;
    serve_source(x, out->source, sizeof out->source);
    for (int k = 0; k < BAND_SERVE_KINDS; k++) {
        char key[BAND_KEY];
        band_serve_key(key, sizeof key, (band_serve_kind)k, v->engine.name);
        band_find(&v->bands, key, &out->band[k]);
    }
    return 0;
fail:
    if (rc != EXP_NO_FIT)
        exp_blame(EXP_SERVE, &x->h, e);
    in->req = req;
    exp_serve_out_free(out);
    return rc;
}

void exp_serve_out_free(exp_serve_out *out)
{
    free((void *)out->in.req);
    out->in.req = NULL;
    free(out->per_request);
    out->per_request = NULL;
    exp_env_free(&out->env);
}
