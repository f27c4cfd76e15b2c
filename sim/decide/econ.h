/* econ — what a cluster costs to own and run, per hour and per token.
 *
 * Owning: the purchase price spread evenly over the amortization period
 * (straight-line depreciation, no interest, no resale).  Running: the
 * GPUs' modelled power times the facility's PUE, at the electricity
 * price.  Both are per hour of use at 100% of the time: a cluster idle
 * half the time costs twice as much per token. */
#ifndef LLMSIM_ECON_H
#define LLMSIM_ECON_H

/* The defaults, with their sources, are calib/economics.tsv's (loaded by
 * cfg_load_econ); a compare file's economics group overrides them. */
typedef struct econ_params {
    double amortization_years;  /* > 0 */
    double usd_per_kwh;
    double pue;                 /* facility power / IT power, >= 1 */
    double server_usd_per_gpu;  /* host, network, chassis per GPU */
} econ_params;

typedef struct econ_result {
    double purchase_usd;       /* gpus x (price + server share) */
    double capex_usd_per_h;    /* purchase / amortization hours */
    double power_w;            /* modelled, all GPUs */
    double energy_usd_per_h;   /* power x PUE x price */
    double usd_per_h;          /* capex + energy */
    double tokens_per_usd;
    double usd_per_mtok;
    double energy_j_per_mtok;  /* GPU energy, without PUE */
} econ_result;

/* gpus GPUs at gpu_price_usd each, drawing power_w in all, producing
 * tokens_per_s. */
void econ_eval(const econ_params *p, int gpus, double gpu_price_usd,
               double power_w, double tokens_per_s, econ_result *r);

#endif
