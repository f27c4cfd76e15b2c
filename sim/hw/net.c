#include "hw/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"

#define MAX_HOPS 32

typedef struct flow {
    int path[MAX_HOPS];
    int slot[MAX_HOPS]; /* index of this flow in each link's flow list */
    int hops;
    bool live, fixed;
    double bytes, remaining, rate, new_rate, max_rate;
    int64_t last_ns, lat_ns;
    engine_ev ev;
    engine_fn fn;
    void *ctx;
    uint64_t arg;
    int active_idx;
    int next_free;
} flow;

typedef struct lstate {
    int *flows;
    int nflows, cap;
    int active_idx; /* in the active-link list, -1 when idle */
    double bw, cap_rem;
    int unfixed;
    int64_t busy_since;
    net_link_stats st;
} lstate;

/* Route cache: flows between the same pair repeat (every ring step, every
 * microbatch, every collective of a plan search), and a route through a
 * switch with many ports costs a scan of its links.  Open addressing on
 * (src, dst, salt); kept in a net_routes that every network built on the
 * topology shares, so each reuses what the others routed. */
/* A cached route: its links are hops ints at rcache.pool + off (a route
 * of a real fabric has 2 to 8 hops: a fixed MAX_HOPS array per route made
 * the cache 3-4x larger, most of it never read, and its first touch a
 * fifth of a 16,384-GPU all-reduce's time in page faults). */
typedef struct rentry {
    int hops;
    uint32_t off;
    int64_t lat_ns;
} rentry;

/* The probed part apart from the routes: 16 bytes a slot, so a lookup
 * reads one cache line of keys and then its route, not a line of each
 * route it probes past. */
typedef struct rkey {
    int src, dst; /* src < 0: empty */
    uint32_t salt;
    uint32_t at;  /* index into rcache.body */
} rkey;

typedef struct rcache {
    rkey *key;
    uint32_t cap, n;
    rentry *body; /* n routes in the order they were found; room for
                     cap / 2, the most the table holds */
    int *pool;    /* every route's links, one after another */
    size_t pool_n, pool_cap;
} rcache;

struct net_routes {
    const topo *t;
    topo_dist *dist; /* the BFS distances routes are found from */
    rcache cache;
    net *spare;      /* an idle network for net_take, or NULL */
};

net_routes *net_routes_create(const topo *t)
{
    net_routes *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->t = t;
    if (!(r->dist = topo_dist_create(t))) {
        free(r);
        return NULL;
    }
    return r;
}

void net_routes_destroy(net_routes *r)
{
    if (!r)
        return;
    net_destroy(r->spare);
    topo_dist_destroy(r->dist);
    free(r->cache.key);
    free(r->cache.body);
    free(r->cache.pool);
    free(r);
}

const topo *net_routes_topo(const net_routes *r) { return r->t; }
topo_dist *net_routes_dist(net_routes *r) { return r->dist; }

struct net {
    engine *eng;
    net_routes *routes; /* shared by every net on the topology */
    const topo *t;
    lstate *l;
    int *touched, ntouched; /* links that ever held a flow (their lists) */
    flow *f;
    int nf_cap, free_head;
    int *active, nactive;       /* live flows */
    int *alinks, nalinks;       /* links with flows */
    bool solve_pending;
    int ncapped; /* live flows with their own rate limit */
    double started, delivered, max_load;
    /* net_take: the factors its links were last scaled by (scaled) */
    double factor[LINK_KIND_COUNT];
    bool scaled;
};

net *net_create(engine *eng, net_routes *routes)
{
    net *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    const topo *t = routes->t;
    n->eng = eng;
    n->t = t;
    n->routes = routes;
    n->l = calloc((size_t)t->nlink, sizeof *n->l);
    n->alinks = malloc(sizeof(int) * (size_t)(t->nlink ? t->nlink : 1));
    n->touched = malloc(sizeof(int) * (size_t)(t->nlink ? t->nlink : 1));
    if (!n->l || !n->alinks || !n->touched) {
        net_destroy(n);
        return NULL;
    }
    for (int i = 0; i < t->nlink; i++) {
        n->l[i].bw = t->link[i].bw_Bps;
        n->l[i].active_idx = -1;
    }
    n->free_head = -1;
    return n;
}

void net_destroy(net *n)
{
    if (!n)
        return;
    if (n->l && n->touched)
        for (int i = 0; i < n->ntouched; i++)
            free(n->l[n->touched[i]].flows);
    free(n->l);
    free(n->f);
    free(n->active);
    free(n->alinks);
    free(n->touched);
    free(n);
}

/* n as net_create made it, its links scaled as they were: the links that
 * held flows idle again (their lists kept for the next run), the flow
 * slots free in the order a new net hands them out (ids 0, 1, ...), so a
 * run on it is the same, event for event, as on a new one. */
static void net_reset(net *n)
{
    for (int i = 0; i < n->ntouched; i++) {
        lstate *L = &n->l[n->touched[i]];
        L->nflows = 0;
        L->active_idx = -1;
        L->cap_rem = 0;
        L->unfixed = 0;
        L->busy_since = 0;
        L->st = (net_link_stats){0, 0};
    }
    n->free_head = -1;
    for (int i = n->nf_cap - 1; i >= 0; i--) {
        n->f[i].live = false;
        n->f[i].next_free = n->free_head;
        n->free_head = i;
    }
    n->nactive = n->nalinks = 0;
    n->solve_pending = false;
    n->ncapped = 0;
    n->started = n->delivered = n->max_load = 0;
    n->eng = NULL;
}

net *net_take(engine *eng, net_routes *routes,
              const double factor[LINK_KIND_COUNT])
{
    net *n = routes->spare;
    routes->spare = NULL;
    if (!n && !(n = net_create(eng, routes)))
        return NULL;
    n->eng = eng;
    if (!n->scaled ||
        memcmp(n->factor, factor, sizeof n->factor) != 0) {
        for (int i = 0; i < n->t->nlink; i++)
            n->l[i].bw = n->t->link[i].bw_Bps;
        net_scale_bw_kinds(n, factor);
        memcpy(n->factor, factor, sizeof n->factor);
        n->scaled = true;
    }
    return n;
}

void net_give(net *n)
{
    if (!n)
        return;
    if (n->nactive > 0 || n->routes->spare || !n->scaled) {
        net_destroy(n);
        return;
    }
    net_reset(n);
    n->routes->spare = n;
}

static uint32_t rhash(int src, int dst, uint32_t salt)
{
    uint64_t x = (uint64_t)(uint32_t)src * 0x9e3779b97f4a7c15ULL ^
                 (uint64_t)(uint32_t)dst * 0xc2b2ae3d27d4eb4fULL ^ salt;
    x ^= x >> 29;
    return (uint32_t)(x * 0xbf58476d1ce4e5b9ULL >> 32);
}

static bool rc_grow(rcache *c)
{
    uint32_t cap = c->cap ? c->cap * 2 : 1024;
    rkey *t = malloc(sizeof *t * cap);
    /* at most cap / 2 routes live in a table of cap slots */
    rentry *b = realloc(c->body, sizeof *b * (cap / 2));
    if (!t || !b) {
        free(t);
        if (b)
            c->body = b;
        return false;
    }
    c->body = b;
    for (uint32_t i = 0; i < cap; i++)
        t[i].src = -1;
    for (uint32_t i = 0; i < c->cap; i++) {
        if (c->key[i].src < 0)
            continue;
        uint32_t h = rhash(c->key[i].src, c->key[i].dst, c->key[i].salt);
        while (t[h & (cap - 1)].src >= 0)
            h++;
        t[h & (cap - 1)] = c->key[i];
    }
    free(c->key);
    c->key = t;
    c->cap = cap;
    return true;
}

/* Room for hops more links in the pool (false: out of memory, or past
 * the 2^32 links an offset holds). */
static bool pool_room(rcache *c, size_t hops)
{
    if (c->pool_n + hops <= c->pool_cap)
        return true;
    size_t cap = c->pool_cap ? c->pool_cap * 2 : 4096;
    while (cap < c->pool_n + hops)
        cap *= 2;
    if (cap > UINT32_MAX)
        return false;
    int *p = realloc(c->pool, sizeof *p * cap);
    if (!p)
        return false;
    c->pool = p;
    c->pool_cap = cap;
    return true;
}

/* The cached route, computing it on a miss; NULL when unreachable, or
 * with *nomem when memory ran out. */
static const rentry *cached_route(net_routes *rt, int src, int dst,
                                  uint32_t salt, bool *nomem)
{
    rcache *c = &rt->cache;
    *nomem = false;
    if (c->n * 2 >= c->cap && !rc_grow(c)) {
        *nomem = true;
        return NULL;
    }
    uint32_t h = rhash(src, dst, salt);
    for (;; h++) {
        rkey *k = &c->key[h & (c->cap - 1)];
        if (k->src == src && k->dst == dst && k->salt == salt)
            return &c->body[k->at];
        if (k->src >= 0)
            continue;
        int path[MAX_HOPS];
        int hops = topo_route(rt->t, rt->dist, src, dst, salt, path,
                              MAX_HOPS);
        /* not cached: the slot stays empty; a distance table that could
         * not be made may have hidden a shorter path */
        if (hops < 0 || topo_dist_nomem(rt->dist)) {
            *nomem = topo_dist_nomem(rt->dist);
            return NULL;
        }
        if (!pool_room(c, (size_t)hops)) {
            *nomem = true;
            return NULL;
        }
        rentry *r = &c->body[c->n];
        r->hops = hops;
        r->off = (uint32_t)c->pool_n;
        memcpy(c->pool + c->pool_n, path, sizeof(int) * (size_t)hops);
        c->pool_n += (size_t)hops;
        r->lat_ns = topo_route_lat(rt->t, path, hops);
        *k = (rkey){src, dst, salt, c->n++};
        return r;
    }
}

int net_route(net_routes *rt, int src, int dst, uint32_t salt, int *links,
              int max)
{
    bool nomem;
    const rentry *r = cached_route(rt, src, dst, salt, &nomem);
    if (!r)
        return nomem ? NET_NOMEM : -1;
    if (r->hops > max)
        return -1;
    memcpy(links, rt->cache.pool + r->off, sizeof(int) * (size_t)r->hops);
    return r->hops;
}

/* "nvlink gpu3->nvswitch0", for invariant messages. */
static const char *link_name(const net *n, int link, char *buf, size_t len)
{
    const topo_link *L = &n->t->link[link];
    snprintf(buf, len, "%s %s->%s", topo_link_kind_name(L->kind),
             n->t->dev[L->src].name, n->t->dev[L->dst].name);
    return buf;
}
#define LINK_NAME(n, link) link_name((n), (link), (char[128]){0}, 128)

/* Sum of the current rates of the flows on a link, bytes/s. */
static double link_rate(const net *n, int link)
{
    const lstate *L = &n->l[link];
    double sum = 0;
    for (int j = 0; j < L->nflows; j++)
        sum += n->f[L->flows[j]].rate;
    return sum;
}

/* A link carries at most its bandwidth (1e-9 relative: the solver's own
 * rounding).  solved: after a rate update of that many flows; -1: after
 * net_scale_bw. */
static void check_capacity(const net *n, int link, double sum, int solved)
{
    CHECK(sum <= n->l[link].bw * (1 + 1e-9),
          solved < 0 ? "bandwidth scale"
                     : CHECK_EVENT("rate update of %d flows", solved),
          engine_now(n->eng),
          "link %s carries %.6g GB/s > capacity %.6g GB/s, %d flows",
          LINK_NAME(n, link), sum / 1e9, n->l[link].bw / 1e9,
          n->l[link].nflows);
}

void net_scale_bw(net *n, topo_link_kind kind, double factor)
{
    double f[LINK_KIND_COUNT];
    for (int k = 0; k < LINK_KIND_COUNT; k++)
        f[k] = k == (int)kind ? factor : -1;
    net_scale_bw_kinds(n, f);
}

void net_scale_bw_kinds(net *n, const double factor[LINK_KIND_COUNT])
{
    n->scaled = false; /* net_take's record no longer says what they are */
    for (int i = 0; i < n->t->nlink; i++)
        if (factor[n->t->link[i].kind] >= 0) {
            n->l[i].bw = n->t->link[i].bw_Bps * factor[n->t->link[i].kind];
#ifdef LLMSIM_CHECK
            /* flows running at the old bandwidth keep their rates until
             * the next solve: scaling under them (net.h: call before any
             * flow starts) would leave a link over its capacity */
            if (n->l[i].nflows > 0)
                check_capacity(n, i, link_rate(n, i), -1);
#endif
        }
}

net_link_stats net_link(const net *n, int link)
{
    net_link_stats s = n->l[link].st;
    if (n->l[link].nflows > 0)
        s.busy_ns += engine_now(n->eng) - n->l[link].busy_since;
    return s;
}

double net_bytes_started(const net *n) { return n->started; }
double net_bytes_delivered(const net *n) { return n->delivered; }
int net_active_flows(const net *n) { return n->nactive; }
double net_max_link_load(const net *n) { return n->max_load; }
double net_flow_rate(const net *n, int id) { return n->f[id].rate; }
engine *net_engine(const net *n) { return n->eng; }
double net_link_bw(const net *n, int link) { return n->l[link].bw; }
const topo *net_topo(const net *n) { return n->t; }
net_routes *net_routes_of(const net *n) { return n->routes; }

/* ---- flow storage -------------------------------------------------------- */

/* A flow that cannot be stored stops the run: the engine reports it. */
static int out_of_memory(net *n)
{
    engine_fail(n->eng);
    return NET_NOMEM;
}

static int flow_alloc(net *n)
{
    if (n->free_head < 0) {
        int cap = n->nf_cap ? n->nf_cap * 2 : 256;
        flow *f = realloc(n->f, sizeof *f * (size_t)cap);
        int *a = realloc(n->active, sizeof(int) * (size_t)cap);
        if (!f || !a) {
            /* keep whichever grew; the old size stays valid */
            if (f)
                n->f = f;
            if (a)
                n->active = a;
            return -1;
        }
        n->f = f;
        n->active = a;
        for (int i = cap - 1; i >= n->nf_cap; i--) {
            n->f[i].next_free = n->free_head;
            n->f[i].live = false;
            n->free_head = i;
        }
        n->nf_cap = cap;
    }
    int id = n->free_head;
    n->free_head = n->f[id].next_free;
    return id;
}

/* Room for one more flow on the link (its list doubles when full). */
static bool link_reserve(net *n, int link)
{
    lstate *L = &n->l[link];
    if (L->nflows < L->cap)
        return true;
    int cap = L->cap ? L->cap * 2 : 4;
    int *p = realloc(L->flows, sizeof(int) * (size_t)cap);
    if (!p)
        return false;
    if (!L->flows)
        n->touched[n->ntouched++] = link;
    L->flows = p;
    L->cap = cap;
    return true;
}

/* Adds flow id to a link with room (link_reserve). */
static void link_add(net *n, int link, int id, int *slot)
{
    lstate *L = &n->l[link];
    if (L->nflows == 0) {
        L->busy_since = engine_now(n->eng);
        L->active_idx = n->nalinks;
        n->alinks[n->nalinks++] = link;
    }
    *slot = L->nflows;
    L->flows[L->nflows++] = id;
}

static void link_remove(net *n, int link, int slot)
{
    lstate *L = &n->l[link];
    int moved = L->flows[--L->nflows];
    if (slot != L->nflows) {
        L->flows[slot] = moved;
        flow *m = &n->f[moved];
        for (int k = 0; k < m->hops; k++)
            if (m->path[k] == link) {
                m->slot[k] = slot;
                break;
            }
    }
    if (L->nflows == 0) {
        L->st.busy_ns += engine_now(n->eng) - L->busy_since;
        int last = n->alinks[--n->nalinks];
        n->alinks[L->active_idx] = last;
        n->l[last].active_idx = L->active_idx;
        L->active_idx = -1;
    }
}

/* ---- max-min solve ------------------------------------------------------- */

/* Progressive filling: the link with the smallest fair share fixes the
 * rate of its unfixed flows; all links at that same share are settled in
 * one pass (symmetric patterns such as a ring step settle at once). */
static void maxmin(net *n)
{
    for (int i = 0; i < n->nalinks; i++) {
        lstate *L = &n->l[n->alinks[i]];
        L->cap_rem = L->bw;
        L->unfixed = L->nflows;
    }
    for (int i = 0; i < n->nactive; i++)
        n->f[n->active[i]].fixed = false;
    int left = n->nactive;
    while (left > 0) {
        double smin = INFINITY;
        for (int i = 0; i < n->nalinks; i++) {
            const lstate *L = &n->l[n->alinks[i]];
            if (L->unfixed > 0 && L->cap_rem / L->unfixed < smin)
                smin = L->cap_rem / L->unfixed;
        }
        if (n->ncapped > 0) /* a flow's own limit acts as a private link */
            for (int i = 0; i < n->nactive; i++) {
                const flow *f = &n->f[n->active[i]];
                if (!f->fixed && f->max_rate > 0 && f->max_rate < smin)
                    smin = f->max_rate;
            }
        if (smin < 0)
            smin = 0;
        double limit = smin * (1 + 1e-12);
        for (int i = 0; n->ncapped > 0 && i < n->nactive; i++) {
            flow *f = &n->f[n->active[i]];
            if (f->fixed || f->max_rate <= 0 || f->max_rate > limit)
                continue;
            f->fixed = true;
            f->new_rate = smin;
            left--;
            for (int k = 0; k < f->hops; k++) {
                n->l[f->path[k]].cap_rem -= smin;
                n->l[f->path[k]].unfixed--;
            }
        }
        for (int i = 0; i < n->nalinks; i++) {
            lstate *L = &n->l[n->alinks[i]];
            if (L->unfixed == 0 || L->cap_rem / L->unfixed > limit)
                continue;
            for (int j = 0; j < L->nflows; j++) {
                flow *f = &n->f[L->flows[j]];
                if (f->fixed)
                    continue;
                f->fixed = true;
                f->new_rate = smin;
                left--;
                for (int k = 0; k < f->hops; k++) {
                    lstate *K = &n->l[f->path[k]];
                    K->cap_rem -= smin;
                    K->unfixed--;
                }
            }
        }
    }
}

static void check_load(net *n)
{
    for (int i = 0; i < n->nalinks; i++) {
        const lstate *L = &n->l[n->alinks[i]];
        double sum = link_rate(n, n->alinks[i]);
        double load = sum / L->bw;
        if (load > n->max_load)
            n->max_load = load;
        /* no link ever carries more than its bandwidth */
        check_capacity(n, n->alinks[i], sum, n->nactive);
        LLM_ASSERT(load <= 1 + 1e-9);
    }
}

static void on_bytes_done(engine *eng, void *ctx, uint64_t arg);

static void solve(engine *eng, void *ctx, uint64_t arg)
{
    net *n = ctx;
    (void)arg;
    n->solve_pending = false;
    int64_t now = engine_now(eng);
    for (int i = 0; i < n->nactive; i++) {
        flow *f = &n->f[n->active[i]];
        f->remaining -= f->rate * (double)(now - f->last_ns) * 1e-9;
        if (f->remaining < 0)
            f->remaining = 0;
        f->last_ns = now;
    }
    maxmin(n);
    for (int i = 0; i < n->nactive; i++) {
        int id = n->active[i];
        flow *f = &n->f[id];
        if (f->new_rate == f->rate && f->ev.idx != UINT32_MAX)
            continue; /* unchanged: its completion stands */
        f->rate = f->new_rate;
        engine_cancel(eng, f->ev);
        int64_t dt = f->rate > 0 ? (int64_t)ceil(f->remaining / f->rate * 1e9)
                                 : INT64_MAX / 4;
        f->ev = engine_after(eng, dt, on_bytes_done, n, (uint64_t)id);
    }
    check_load(n);
}

static void want_solve(net *n)
{
    if (n->solve_pending)
        return;
    n->solve_pending = true;
    engine_after(n->eng, 0, solve, n, 0);
}

#ifdef LLMSIM_CHECK
/* A flow ends with exactly its bytes delivered: what the rates drained
 * since its start equals its size.  Its end was rounded up to a whole
 * nanosecond, so the rate may have drained up to rate x 1 ns more; the
 * rest is rounding, 1e-9 of the size. */
static void check_delivered(const net *n, int id)
{
    const flow *f = &n->f[id];
    int64_t now = engine_now(n->eng);
    double left = f->remaining - f->rate * (double)(now - f->last_ns) * 1e-9;
    double tol = 1e-9 * f->bytes;
    CHECK(left <= tol && -left <= f->rate * 1e-9 + tol,
          CHECK_EVENT("flow %d done", id), now,
          "flow %d %s->%s over %d links delivered %.17g bytes of its %.17g "
          "(off by %+.3g, rate %.6g GB/s)",
          id, n->t->dev[n->t->link[f->path[0]].src].name,
          n->t->dev[n->t->link[f->path[f->hops - 1]].dst].name, f->hops,
          f->bytes - left, f->bytes, -left, f->rate / 1e9);
}
#endif

static void on_bytes_done(engine *eng, void *ctx, uint64_t arg)
{
    net *n = ctx;
    int id = (int)arg;
    flow *f = &n->f[id];
#ifdef LLMSIM_CHECK
    check_delivered(n, id);
#endif
    for (int k = 0; k < f->hops; k++) {
        n->l[f->path[k]].st.bytes += f->bytes;
        link_remove(n, f->path[k], f->slot[k]);
    }
    int last = n->active[--n->nactive];
    n->active[f->active_idx] = last;
    n->f[last].active_idx = f->active_idx;
    n->delivered += f->bytes;
    n->ncapped -= f->max_rate > 0;
    f->live = false;
    /* an idle network has delivered every byte it was given */
    CHECK(n->nactive > 0 || CHECK_EQ_REL(n->started, n->delivered, 1e-9),
          CHECK_EVENT("flow %d done", id), engine_now(eng),
          "the network is idle after %.17g bytes started but %.17g "
          "delivered", n->started, n->delivered);
    engine_after(eng, f->lat_ns, f->fn, f->ctx, f->arg);
    f->next_free = n->free_head;
    n->free_head = id;
    want_solve(n);
}

int net_flow(net *n, int src, int dst, double bytes, uint32_t salt,
             engine_fn done, void *ctx, uint64_t arg)
{
    return net_flow_capped(n, src, dst, bytes, salt, 0, done, ctx, arg);
}

int net_flow_capped(net *n, int src, int dst, double bytes, uint32_t salt,
                    double max_Bps, engine_fn done, void *ctx, uint64_t arg)
{
    return net_flow_lat(n, src, dst, bytes, salt, max_Bps, -1, done, ctx,
                        arg);
}

int net_route_id(net_routes *r, int src, int dst, uint32_t salt)
{
    bool nomem;
    const rentry *e = cached_route(r, src, dst, salt, &nomem);
    if (!e)
        return nomem ? NET_NOMEM : -1;
    return (int)(e - r->cache.body);
}

const int *net_route_links(const net_routes *r, int route, int *hops)
{
    *hops = r->cache.body[route].hops;
    return r->cache.pool + r->cache.body[route].off;
}

int64_t net_route_lat_ns(const net_routes *r, int route)
{
    return r->cache.body[route].lat_ns;
}

int net_flow_lat(net *n, int src, int dst, double bytes, uint32_t salt,
                 double max_Bps, int64_t lat_ns, engine_fn done, void *ctx,
                 uint64_t arg)
{
    int id = net_route_id(n->routes, src, dst, salt);
    if (id < 0)
        return id == NET_NOMEM ? out_of_memory(n) : -1;
    return net_flow_route(n, id, bytes, max_Bps, lat_ns, done, ctx, arg);
}

int net_flow_route(net *n, int route, double bytes, double max_Bps,
                   int64_t lat_ns, engine_fn done, void *ctx, uint64_t arg)
{
    const rentry *rt = &n->routes->cache.body[route];
    int hops = rt->hops;
    const int *path = n->routes->cache.pool + rt->off;
    int64_t lat = lat_ns >= 0 ? lat_ns : rt->lat_ns;
    if (bytes <= 0 || hops == 0) { /* nothing to share: only latency */
        n->started += bytes;
        n->delivered += bytes;
        engine_after(n->eng, lat, done, ctx, arg);
        return 0;
    }
    for (int k = 0; k < hops; k++)
        if (!link_reserve(n, path[k]))
            return out_of_memory(n);
    int id = flow_alloc(n);
    if (id < 0)
        return out_of_memory(n);
    n->started += bytes;
    flow *f = &n->f[id];
    f->hops = hops;
    memcpy(f->path, path, sizeof(int) * (size_t)hops);
    for (int k = 0; k < hops; k++)
        link_add(n, path[k], id, &f->slot[k]);
    f->live = true;
    f->bytes = f->remaining = bytes;
    f->rate = 0;
    f->last_ns = engine_now(n->eng);
    f->lat_ns = lat;
    f->ev = (engine_ev){UINT32_MAX, 0};
    f->max_rate = max_Bps;
    n->ncapped += max_Bps > 0;
    f->fn = done;
    f->ctx = ctx;
    f->arg = arg;
    f->active_idx = n->nactive;
    n->active[n->nactive++] = id;
    want_solve(n);
    return id;
}
