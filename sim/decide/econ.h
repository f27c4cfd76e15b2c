/* econ — what a cluster costs to own or to rent, per hour and per token.
 *
 * Owning: the purchase -- GPUs, the rest of their servers, and the
 * cluster's network -- spread evenly over the amortization period
 * (straight-line depreciation, no interest, no resale); the power of the
 * GPUs, of the rest of their nodes and of the network switches, times the
 * facility's PUE, at the electricity price; and hosting (space, cooling
 * and power delivery, as colocation prices it per kW of IT load).
 * Renting: the cloud's price per GPU-hour, which includes all of that.
 * Both are per hour of use at 100% of the time: a cluster idle half the
 * time costs twice as much per token. */
#ifndef LLMSIM_ECON_H
#define LLMSIM_ECON_H

typedef enum { ECON_OWN, ECON_RENT, ECON_MODES } econ_mode;
extern const char *const econ_mode_names[ECON_MODES];

/* The defaults, with their sources, are calib/economics.tsv's (the whole
 * comparison) and calib/node-economics.tsv's and calib/cloud-prices.tsv's
 * (each cluster's node type and GPU); a compare file's economics group
 * overrides any of them. */
typedef struct econ_params {
    int mode;                        /* econ_mode */
    double amortization_years;       /* > 0 */
    double usd_per_kwh;
    double pue;                      /* facility power / IT power, >= 1 */
    double hosting_usd_per_kw_month; /* per kW of IT power */
    /* the node type's, per GPU */
    double server_usd_per_gpu;       /* the server beyond its GPUs */
    double network_usd_per_gpu;      /* switches, cables, transceivers */
    double host_w_per_gpu;           /* node power beyond the GPUs at work */
    double network_w_per_gpu;        /* the switches' power */
    /* the GPU's: what a cloud charges for one, all included */
    double rent_usd_per_gpu_hour;
} econ_params;

/* Where each per-cluster figure came from, to print under the table. */
#define ECON_SRC 400
typedef struct econ_sources {
    char server[ECON_SRC], network[ECON_SRC], host_w[ECON_SRC],
        network_w[ECON_SRC], rent[ECON_SRC];
} econ_sources;

typedef struct econ_result {
    double purchase_usd;       /* gpus x (price + server + network) */
    double capex_usd_per_h;    /* own: purchase / amortization hours */
    double gpu_power_w;        /* modelled, all GPUs */
    double power_w;            /* IT power: GPUs + hosts + switches */
    double energy_usd_per_h;   /* own: power x PUE x price */
    double hosting_usd_per_h;  /* own: power x hosting price */
    double rent_usd_per_h;     /* rent: GPUs x price */
    double usd_per_h;          /* what the hour costs in this mode */
    double tokens_per_usd;
    double usd_per_mtok;
    double energy_j_per_mtok;  /* IT energy, without PUE */
} econ_result;

/* gpus GPUs at gpu_price_usd each, their GPUs drawing gpu_power_w in all,
 * producing tokens_per_s. */
void econ_eval(const econ_params *p, int gpus, double gpu_price_usd,
               double gpu_power_w, double tokens_per_s, econ_result *r);

#endif
