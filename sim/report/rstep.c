#include "report/rstep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* ---- the step as slices ----------------------------------------------- */

/* One slice of the step on one GPU. */
typedef struct slice {
    int gpu, row, stage, replica;
    bool comm;        /* the communication stream, else compute */
    const char *kind; /* forward backward tp cp ep fsdp optimizer
                         input-wait pp dp dp-gather */
    int mb, chunk, layer; /* -1 where they do not apply */
    double t0_ms, t1_ms;
    int peer;   /* pp: the GPU at the other end; -1 otherwise */
    bool recv;  /* pp: the receiving end (the trace's; the CSV has sends) */
    int xfer;   /* pp: the transfer's index in the record */
} slice;

typedef void (*slice_fn)(void *ctx, const slice *s);

static void put(slice_fn fn, void *ctx, slice s)
{
    fn(ctx, &s);
}

/* One op on one GPU, layer by layer: each layer's share of the compute,
 * then its share of each kind of communication the compute stream waits
 * for (train_record.comm_s), in the order a layer runs them. */
static void walk_op(const train_record *r, const train_op_rec *op, slice g,
                    int P, slice_fn fn, void *ctx)
{
    int vs = op->chunk * P + op->stage;
    const double *cm = r->comm_s[vs][op->bwd];
    int L = r->vs_layers[vs] > 0 ? r->vs_layers[vs] : 1;
    double dur = op->dur_ns / 1e6, comm = 0;
    for (int k = 0; k < REC_COMM; k++)
        comm += cm[k] * 1e3;
    double comp = dur - comm > 0 ? dur - comm : 0;
    double t = op->t0_ns / 1e6;
    g.mb = op->mb, g.chunk = op->chunk;
    for (int l = 0; l < L; l++) {
        g.layer = l, g.kind = op->bwd ? "backward" : "forward";
        g.t0_ms = t, g.t1_ms = t += comp / L;
        put(fn, ctx, g);
        for (int k = 0; k < REC_COMM; k++) {
            if (cm[k] <= 0)
                continue;
            g.kind = train_rec_comm_names[k];
            g.t0_ms = t, g.t1_ms = t += cm[k] * 1e3 / L;
            put(fn, ctx, g);
        }
    }
}

/* Everything one GPU did: g names it (gpu, row, stage). */
static void walk_gpu(const exp_train_out *o, slice g, int tp_i, int cp_i,
                     int dp_i, bool recvs, slice_fn fn, void *ctx)
{
    const train_record *r = &o->rec;
    const plan_train *p = &o->plan;
    int s = g.stage, P = r->stages;
    g.peer = g.xfer = -1;
    g.mb = g.chunk = g.layer = -1;
    for (int i = 0; i < r->nops; i++)
        if (r->ops[i].stage == s)
            walk_op(r, &r->ops[i], g, P, fn, ctx);
    for (int i = 0; i < r->nxfers; i++) {
        const train_xfer_rec *x = &r->xfers[i];
        bool out = x->from == s, in = recvs && x->to == s;
        if (!out && !in)
            continue;
        slice t = g;
        t.comm = true, t.kind = "pp", t.mb = x->mb, t.chunk = x->chunk;
        t.t0_ms = x->t0_ns / 1e6, t.t1_ms = x->t1_ns / 1e6, t.xfer = i;
        t.recv = in && !out;
        t.peer = plan_gpu_rank(p, tp_i, cp_i, dp_i, t.recv ? x->from : x->to);
        put(fn, ctx, t);
    }
    slice t = g;
    t.kind = "input-wait";
    for (int i = 0; s == 0 && i < r->nwaits; i++) {
        t.t0_ms = r->waits[i].t0_ns / 1e6, t.t1_ms = r->waits[i].t1_ns / 1e6;
        put(fn, ctx, t);
    }
    t.comm = true, t.kind = "dp";
    t.t0_ms = r->dp_start_s[s] * 1e3;
    t.t1_ms = (r->dp_start_s[s] + r->dp_len_s[s]) * 1e3;
    if (r->dp_len_s[s] > 0)
        put(fn, ctx, t);
    t.comm = false, t.kind = "optimizer";
    t.t0_ms = r->opt_start_s[s] * 1e3;
    t.t1_ms = t.t0_ms + r->opt_len_s[s] * 1e3;
    put(fn, ctx, t);
    t.comm = true, t.kind = "dp-gather";
    t.t0_ms = t.t1_ms, t.t1_ms += r->gather_len_s[s] * 1e3;
    if (r->gather_len_s[s] > 0)
        put(fn, ctx, t);
}

/* Every GPU of `replicas` data-parallel replicas, stage by stage, each
 * stage's context- then tensor-parallel ranks; row counts them in that
 * order.  recvs: the receiving end of each transfer too. */
static void walk(const exp_train_out *o, int replicas, bool recvs,
                 slice_fn fn, void *ctx)
{
    const plan_train *p = &o->plan;
    int P = o->rec.stages, row = 0;
    for (int d = 0; d < replicas; d++)
        for (int s = 0; s < P; s++)
            for (int c = 0; c < p->cp; c++)
                for (int t = 0; t < p->tp; t++) {
                    slice g = {.gpu = plan_gpu_rank(p, t, c, d, s),
                               .row = row++, .stage = s, .replica = d};
                    walk_gpu(o, g, t, c, d, recvs, fn, ctx);
                }
}

/* ---- the timeline CSV --------------------------------------------------- */

static void csv_slice(void *ctx, const slice *s)
{
    fprintf(ctx, "%d,%d,%d,%s,%s,%d,%d,%d,%.6f,%.6f\n", s->gpu, s->row,
            s->stage, s->comm ? "comm" : "compute", s->kind, s->mb, s->chunk,
            s->layer, s->t0_ms, s->t1_ms);
}

int rstep_timeline(const char *path, const exp_train_out *o, llm_err *e)
{
    util_outfile f;
    if (util_out_open(&f, path, e))
        return -1;
    fprintf(f.fp, "gpu,row,stage,stream,kind,microbatch,chunk,layer,"
                  "start_ms,end_ms\n");
    walk(o, 1, false, csv_slice, f.fp);
    return util_out_commit(&f, e);
}

/* ---- the Chrome trace --------------------------------------------------- */

/* A GPU's threads: its compute stream and one per kind of communication;
 * a kind whose slices overlap in time (transfers in flight together) gets
 * more lanes, so no two slices of one thread overlap. */
enum { T_COMPUTE, T_SEND, T_RECV, T_DP, T_KINDS };
#define LANES 8
static const char *const thread_names[T_KINDS] = {
    "compute", "pipeline sends", "pipeline receives",
    "data-parallel reduction"};

typedef struct tracer {
    FILE *fp;
    bool first;
    int per_node;  /* GPUs per node: a node is a process */
    int ngpu;
    double *lane_end;      /* [ngpu][T_KINDS][LANES], ms */
    unsigned char *named;  /* threads with a name event */
    unsigned char *node_named;
    int nxfers;            /* a replica's transfers: flow ids per replica */
} tracer;

static void ev(tracer *T, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ev(tracer *T, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(T->first ? "\n" : ",\n", T->fp);
    T->first = false;
    vfprintf(T->fp, fmt, ap);
    va_end(ap);
}

static int lane_of(tracer *T, int gpu, int kind, double t0, double t1)
{
    double *end = T->lane_end + ((size_t)gpu * T_KINDS + kind) * LANES;
    int l = 0;
    while (l < LANES - 1 && end[l] > t0 + 1e-9)
        l++;
    end[l] = t1 > end[l] ? t1 : end[l];
    return l;
}

static void name_thread(tracer *T, int pid, int tid, int gpu, int kind,
                        int lane)
{
    if (T->named[tid])
        return;
    T->named[tid] = 1;
    char lanes[24] = "";
    if (lane > 0)
        snprintf(lanes, sizeof lanes, " (%d)", lane + 1);
    ev(T, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
          "\"args\":{\"name\":\"GPU %d %s%s\"}}", pid, tid, gpu,
       thread_names[kind], lanes);
    ev(T, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,"
          "\"tid\":%d,\"args\":{\"sort_index\":%d}}", pid, tid, tid);
}

static void trace_slice(void *ctx, const slice *s)
{
    tracer *T = ctx;
    int pid = s->gpu / T->per_node;
    if (!T->node_named[pid]) {
        T->node_named[pid] = 1;
        ev(T, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
              "\"args\":{\"name\":\"node %d\"}}", pid, pid);
    }
    int kind = !s->comm ? T_COMPUTE
               : strcmp(s->kind, "pp") == 0 ? (s->recv ? T_RECV : T_SEND)
                                            : T_DP;
    int lane = lane_of(T, s->gpu, kind, s->t0_ms, s->t1_ms);
    int tid = (s->gpu * T_KINDS + kind) * LANES + lane;
    name_thread(T, pid, tid, s->gpu, kind, lane);
    char name[64];
    if (s->layer >= 0)
        snprintf(name, sizeof name, "%s%s mb %d layer %d", s->kind,
                 s->chunk > 0 ? " (chunk)" : "", s->mb, s->layer);
    else if (s->mb >= 0)
        snprintf(name, sizeof name, "%s %s mb %d %s GPU %d", s->kind,
                 s->recv ? "recv" : "send", s->mb, s->recv ? "from" : "to",
                 s->peer);
    else
        snprintf(name, sizeof name, "%s", s->kind);
    double ts = s->t0_ms * 1e3, dur = (s->t1_ms - s->t0_ms) * 1e3;
    ev(T, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,"
          "\"dur\":%.3f,\"pid\":%d,\"tid\":%d,\"args\":{\"stage\":%d,"
          "\"microbatch\":%d,\"chunk\":%d,\"layer\":%d}}",
       name, s->kind, ts, dur, pid, tid, s->stage, s->mb, s->chunk, s->layer);
    if (s->xfer >= 0) /* the arrow from the send to the receive */
        ev(T, "{\"name\":\"pp\",\"cat\":\"pp\",\"ph\":\"%s\",\"id\":%d,"
              "\"ts\":%.3f,\"pid\":%d,\"tid\":%d%s}", s->recv ? "f" : "s",
           s->replica * (T->nxfers + 1) + s->xfer, ts + dur / 2, pid, tid,
           s->recv ? ",\"bp\":\"e\"" : "");
}

/* ---- the busiest links' load over time ------------------------------- */

/* The step's traffic on a link is known by kind, not by time (the
 * simulation prices each collective once); the trace spreads a link's bytes
 * of each kind over the times that kind of communication runs on the GPU
 * the link serves -- its own GPU, or the GPU of its NIC's rail -- so the
 * counter rises while that GPU sends or receives that kind and its average
 * over the step is the link's utilization.  (Communication hidden behind
 * compute has no slice: a kind that is mostly hidden shows a short, high
 * level, clipped at 100%.) */
typedef struct ival {
    double t0, t1;
    int kind; /* COMM_* */
} ival;

typedef struct collect {
    int gpu;
    ival *v;
    int n, cap;
    bool nomem;
} collect;

static int comm_kind_of(const char *kind)
{
    static const struct {
        const char *name;
        int kind;
    } map[] = {{"tp", COMM_TP}, {"cp", COMM_CP}, {"ep", COMM_EP},
               {"fsdp", COMM_DP}, {"pp", COMM_PP}, {"dp", COMM_DP},
               {"dp-gather", COMM_DP}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(kind, map[i].name) == 0)
            return map[i].kind;
    return -1;
}

/* The busiest links' GPUs, filled by one walk over the step. */
typedef struct collects {
    collect *c; /* [n] */
    int n;
} collects;

static void collect_one(collect *c, const slice *s, int k)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 256;
        ival *g = realloc(c->v, sizeof *g * (size_t)cap);
        if (!g) {
            c->nomem = true;
            return;
        }
        c->v = g, c->cap = cap;
    }
    c->v[c->n++] = (ival){s->t0_ms, s->t1_ms, k};
}

static void collect_slice(void *ctx, const slice *s)
{
    collects *cs = ctx;
    int k = comm_kind_of(s->kind);
    for (int i = 0; k >= 0 && i < cs->n; i++)
        if (cs->c[i].gpu == s->gpu && !cs->c[i].nomem)
            collect_one(&cs->c[i], s, k);
}

/* The GPU a link serves: an end that is a GPU, else the GPU on the rail of
 * an end that is a NIC; -1 when neither. */
static int link_gpu(const topo *t, const topo_link *L)
{
    int ends[2] = {L->src, L->dst};
    for (int i = 0; i < 2; i++) {
        const topo_dev *d = &t->dev[ends[i]];
        if (d->kind == DEV_GPU)
            return d->node * t->gpus_per_node + d->local;
    }
    for (int i = 0; i < 2; i++) {
        const topo_dev *d = &t->dev[ends[i]];
        if (d->kind == DEV_NIC && t->nics_per_node > 0)
            return d->node * t->gpus_per_node +
                   d->local * t->gpus_per_node / t->nics_per_node;
    }
    return -1;
}

static int by_t0(const void *a, const void *b)
{
    const ival *p = a, *q = b;
    return p->t0 < q->t0 ? -1 : p->t0 > q->t0;
}

static void counter(tracer *T, const char *name, int pid, double t_ms,
                    const double *pct, const double *bytes)
{
    fputs(T->first ? "\n" : ",\n", T->fp);
    T->first = false;
    fprintf(T->fp, "{\"name\":\"%s\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%d,"
                   "\"args\":{", name, t_ms * 1e3, pid);
    const char *sep = "";
    for (int k = 0; k < COMM_KINDS; k++)
        if (bytes[k] > 0) {
            fprintf(T->fp, "%s\"%s\":%.3f", sep, train_comm_names[k], pct[k]);
            sep = ",";
        }
    fputs("}}", T->fp);
}

/* One link's counter: a sample wherever a kind starts or stops on its GPU;
 * the GPU's intervals in c.  Without intervals (a GPU not traced, or a
 * kind with no slice), the step's mean at its start and 0 at its end. */
static void link_counter(tracer *T, const exp_train_out *o,
                         const train_link_use *u, const char *name, int pid,
                         collect *c)
{
    double step_ms = o->rec.step_s * 1e3, level[COMM_KINDS] = {0};
    double busy[COMM_KINDS] = {0}, mean[COMM_KINDS] = {0};
    for (int k = 0; k < COMM_KINDS; k++)
        mean[k] = 100 * u->utilization * u->bytes_by_kind[k] / u->bytes;
    for (int i = 0; i < c->n; i++)
        busy[c->v[i].kind] += c->v[i].t1 - c->v[i].t0;
    for (int k = 0; k < COMM_KINDS; k++) { /* the level while it runs */
        double l = busy[k] > 0 ? mean[k] * step_ms / busy[k] : 0;
        level[k] = l > 100 ? 100 : l;
    }
    double zero[COMM_KINDS] = {0}, now[COMM_KINDS];
    for (int k = 0; k < COMM_KINDS; k++) /* kinds with no slice: the mean */
        now[k] = busy[k] > 0 ? 0 : mean[k];
    counter(T, name, pid, 0, now, u->bytes_by_kind);
    qsort(c->v, (size_t)c->n, sizeof *c->v, by_t0);
    /* each kind's active count changes at its intervals' ends: walk the
     * starts and ends in time order */
    int *open = calloc(COMM_KINDS, sizeof(int));
    double *ends = malloc(sizeof(double) * (size_t)(c->n + 1));
    int *ek = malloc(sizeof(int) * (size_t)(c->n + 1));
    if (!open || !ends || !ek) {
        c->nomem = true;
        free(open), free(ends), free(ek);
        return;
    }
    int ne = 0; /* pending ends, kept sorted (few at a time) */
    for (int i = 0; i <= c->n; i++) {
        double t = i < c->n ? c->v[i].t0 : 1e300;
        while (ne > 0 && ends[0] <= t) { /* close what ended first */
            double te = ends[0];
            open[ek[0]]--;
            memmove(ends, ends + 1, sizeof(double) * (size_t)--ne);
            memmove(ek, ek + 1, sizeof(int) * (size_t)ne);
            for (int k = 0; k < COMM_KINDS; k++)
                now[k] = open[k] > 0 ? level[k] : busy[k] > 0 ? 0 : mean[k];
            counter(T, name, pid, te, now, u->bytes_by_kind);
        }
        if (i == c->n)
            break;
        const ival *v = &c->v[i];
        open[v->kind]++;
        int j = ne++;
        while (j > 0 && ends[j - 1] > v->t1) {
            ends[j] = ends[j - 1], ek[j] = ek[j - 1];
            j--;
        }
        ends[j] = v->t1, ek[j] = v->kind;
        for (int k = 0; k < COMM_KINDS; k++)
            now[k] = open[k] > 0 ? level[k] : busy[k] > 0 ? 0 : mean[k];
        counter(T, name, pid, v->t0, now, u->bytes_by_kind);
    }
    counter(T, name, pid, step_ms, zero, u->bytes_by_kind);
    free(open), free(ends), free(ek);
}

/* A counter track per busiest link: its load over the step, by kind. */
static int trace_links(tracer *T, const exp_train_out *o, int replicas,
                       int pid)
{
    const topo *t = o->env.t;
    const train_result *r = &o->r;
    if (r->ntop_links == 0)
        return 0;
    ev(T, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":"
          "{\"name\":\"busiest links (%% utilized, by kind)\"}}", pid);
    collects cs = {calloc((size_t)r->ntop_links, sizeof *cs.c), r->ntop_links};
    if (!cs.c)
        return -1;
    for (int i = 0; i < cs.n; i++)
        cs.c[i].gpu = link_gpu(t, &t->link[r->top_links[i].link]);
    walk(o, replicas, true, collect_slice, &cs); /* every link's GPU at once */
    int rc = 0;
    for (int i = 0; i < cs.n; i++) {
        const train_link_use *u = &r->top_links[i];
        const topo_link *L = &t->link[u->link];
        char name[96];
        snprintf(name, sizeof name, "%s -> %s (%s)", t->dev[L->src].name,
                 t->dev[L->dst].name, topo_link_kind_name(L->kind));
        if (rc == 0 && !cs.c[i].nomem)
            link_counter(T, o, u, name, pid, &cs.c[i]);
        rc |= cs.c[i].nomem ? -1 : 0;
        free(cs.c[i].v);
    }
    free(cs.c);
    return rc;
}

int rstep_trace(const char *path, const exp_train_out *o, bool all_replicas,
                llm_err *e)
{
    const topo *t = o->env.t;
    int replicas = all_replicas ? o->plan.dp : 1;
    tracer T = {.first = true,
                .per_node = t->gpus_per_node > 0 ? t->gpus_per_node : 1,
                .ngpu = t->ngpu, .nxfers = o->rec.nxfers};
    int nodes = (T.ngpu + T.per_node - 1) / T.per_node;
    T.lane_end = calloc((size_t)T.ngpu * T_KINDS * LANES, sizeof(double));
    T.named = calloc((size_t)T.ngpu * T_KINDS * LANES, 1);
    T.node_named = calloc((size_t)nodes + 1, 1);
    util_outfile f;
    int rc = !T.lane_end || !T.named || !T.node_named
                 ? err_set(e, "out of memory")
                 : util_out_open(&f, path, e);
    if (rc == 0) {
        T.fp = f.fp;
        fputs("{\"traceEvents\":[", f.fp);
        walk(o, replicas, true, trace_slice, &T);
        if (trace_links(&T, o, replicas, nodes))
            rc = err_set(e, "out of memory");
        fputs("\n],\"displayTimeUnit\":\"ms\"}\n", f.fp);
        if (rc)
            util_out_abort(&f);
        else
            rc = util_out_commit(&f, e);
    }
    free(T.lane_end);
    free(T.named);
    free(T.node_named);
    return rc;
}
