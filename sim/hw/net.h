/* net — flow-level network.  Each transfer is a flow along its route;
 * concurrent flows share every link max-min fairly (progressive filling,
 * as SimGrid's lmm), recomputed once per instant at which flows start or
 * end, never per packet.  A flow's bytes drain at its rate; its callback
 * runs one route latency after the last byte left (store-and-forward of
 * the tail only).  Every link records the bytes it carried and the time it
 * was busy, so utilization is an output. */
#ifndef LLMSIM_NET_H
#define LLMSIM_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "base/err.h"
#include "hw/topo.h"

typedef struct net net;

/* What a flow or a route returns when memory ran out (a flow's engine
 * then fails: engine_failed). */
#define NET_NOMEM (-2)

/* Routes between the devices of a topology, found once and kept: the
 * shortest-path distances they come from and every (src, dst, salt) route
 * asked for.  Every network simulated on the topology (each collective of
 * a training step, each plan of a search) shares one, so none routes the
 * same pair twice; the topology itself is never written. */
typedef struct net_routes net_routes;
net_routes *net_routes_create(const topo *t);
void net_routes_destroy(net_routes *r);
const topo *net_routes_topo(const net_routes *r);
topo_dist *net_routes_dist(net_routes *r);
/* The links of the route from device src to dst (at most max), -1 when
 * unreachable, NET_NOMEM when memory ran out.  `salt` varies the ECMP
 * choice between flows. */
int net_route(net_routes *r, int src, int dst, uint32_t salt, int *links,
              int max);

typedef struct net_link_stats {
    double bytes;    /* carried so far (completed flows) */
    int64_t busy_ns; /* time with at least one flow */
} net_link_stats;

net *net_create(engine *eng, net_routes *routes);
void net_destroy(net *n);

/* An idle network on eng with every link at its line rate x factor[kind]
 * (as net_scale_bw_kinds): the one the routes keep for reuse when it is
 * free, else a new one.  A topology of 10^5 links costs milliseconds to
 * make afresh (its link state is pages the kernel must clear), and a
 * training step simulates hundreds of collectives on it.  NULL when
 * memory ran out. */
net *net_take(engine *eng, net_routes *routes,
              const double factor[LINK_KIND_COUNT]);
/* Hands n back when its flows are done: reset to idle (exactly as new) and
 * kept by its routes for the next net_take, or destroyed when they keep
 * one already or a flow is still live (a failed run). */
void net_give(net *n);

/* Starts a flow of `bytes` from device src to dst; done(eng, ctx, arg) runs
 * when the last byte has arrived.  `salt` varies the ECMP path.  Returns
 * the flow id, -1 when dst is unreachable, or NET_NOMEM when memory ran
 * out (the engine is then failed and the run stops). */
int net_flow(net *n, int src, int dst, double bytes, uint32_t salt,
             engine_fn done, void *ctx, uint64_t arg);

/* As net_flow, with the flow's own rate limited to max_Bps (a kernel's
 * per-channel throughput, say); 0 = no limit. */
int net_flow_capped(net *n, int src, int dst, double bytes, uint32_t salt,
                    double max_Bps, engine_fn done, void *ctx, uint64_t arg);
/* As net_flow_capped, with the latency added at the end given (lat_ns >=
 * 0) instead of the route's: a caller that accounts for it itself (a
 * ring's steps, whose hops overlap) passes 0. */
int net_flow_lat(net *n, int src, int dst, double bytes, uint32_t salt,
                 double max_Bps, int64_t lat_ns, engine_fn done, void *ctx,
                 uint64_t arg);

/* The route from src to dst under salt as a handle into the routes' cache
 * (stable while they live): >= 0, -1 when dst is unreachable, NET_NOMEM
 * when memory ran out.  A caller that starts many flows on one pair keeps
 * it and starts them with net_flow_route, skipping the lookup. */
int net_route_id(net_routes *r, int src, int dst, uint32_t salt);
/* The links of a route from net_route_id (*hops of them), owned by the
 * routes' cache. */
const int *net_route_links(const net_routes *r, int route, int *hops);
/* The latency a route from net_route_id adds after a flow's last byte. */
int64_t net_route_lat_ns(const net_routes *r, int route);
/* As net_flow_lat, on a route from net_route_id. */
int net_flow_route(net *n, int route, double bytes, double max_Bps,
                   int64_t lat_ns, engine_fn done, void *ctx, uint64_t arg);

/* Scales every link's bandwidth of a kind (protocol efficiency); call
 * before any flow starts. */
void net_scale_bw(net *n, topo_link_kind kind, double factor);
/* The same for every kind at once (one pass over the links); a negative
 * factor leaves that kind as it is. */
void net_scale_bw_kinds(net *n, const double factor[LINK_KIND_COUNT]);

net_link_stats net_link(const net *n, int link);
double net_bytes_started(const net *n);
double net_bytes_delivered(const net *n);
int net_active_flows(const net *n);
/* Largest ratio (sum of flow rates / bandwidth) over links seen by any
 * solve so far: never above 1 (+ rounding). */
double net_max_link_load(const net *n);
/* A link's bandwidth after net_scale_bw, bytes/s. */
double net_link_bw(const net *n, int link);
engine *net_engine(const net *n);
const topo *net_topo(const net *n);
net_routes *net_routes_of(const net *n);

/* Current rate of a flow (bytes/s), for tests. */
double net_flow_rate(const net *n, int flow);

#endif
