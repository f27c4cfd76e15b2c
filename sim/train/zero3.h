/* zero3 — DeepSpeed ZeRO-3's parameter coordinator, as time.
 *
 * PyTorch FSDP gathers a whole wrapped block in one all-gather and issues
 * the next block's while this one computes; train prices that directly.
 * DeepSpeed ZeRO-3 works per submodule (deepspeed/runtime/zero/
 * partitioned_param_coordinator.py, fetch_sub_module): a module's
 * parameters are gathered when it runs unless a prefetch already asked
 * for them; once they are there, the coordinator pops parameters of the
 * modules that follow off its trace and gathers them in one coalesced
 * all-gather until it has asked for prefetch_bucket_size elements --
 * at most max_live_parameters minus the elements already gathered, so a
 * module larger than that budget is never prefetched behind and the next
 * one waits for its own gather in full.  The gathers run one after
 * another on their own stream.  z3_pass replays that rule over the
 * modules of a layer in the order a pass meets them and returns how much
 * longer the pass takes than its compute; small gathers at many ranks,
 * which are latency-bound, and budgets too small to prefetch show here.
 *
 * The layer is replayed twice in a row, with the trace of a third ahead
 * for the prefetches (a pass meets the same layer again and again), and
 * the second copy is measured, so prefetches that reach into the next
 * layer count as they do in a real step; its exposure is never less than
 * its gathers' stream time beyond its compute, where a long pass whose
 * gathers are the bottleneck settles. */
#ifndef LLMSIM_ZERO3_H
#define LLMSIM_ZERO3_H

#define Z3_MAX_MODULES 40

/* Seconds one all-gather of `params` elements takes (the caller's
 * collective on the data-parallel group); ctx is the caller's. */
typedef double (*z3_gather_fn)(void *ctx, double params);

typedef struct z3_module {
    double params;    /* elements gathered for it (0: persistent, never
                         partitioned) */
    double compute_s; /* its compute in this pass */
} z3_module;

typedef struct z3_rule {
    double prefetch_params; /* stage3_prefetch_bucket_size */
    double max_live_params; /* stage3_max_live_parameters */
} z3_rule;

typedef struct z3_result {
    double exposed_s; /* the pass's time beyond its compute */
    double gather_s;  /* the stream time of its modules' gathers (a
                         coalesced gather split by elements) */
} z3_result;

/* The middle layer of three, modules m[0..n) in the order the pass runs
 * them (n <= Z3_MAX_MODULES).  Returns -1 if the gather function fails
 * (returns a negative time), else 0. */
int z3_pass(const z3_module *m, int n, z3_rule rule, z3_gather_fn gather,
            void *ctx, z3_result *out);

#endif
