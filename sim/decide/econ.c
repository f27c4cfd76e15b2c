#include "decide/econ.h"

#include <string.h>

/* Hours in an average year (365.25 days). */
#define HOURS_PER_YEAR 8766.0

void econ_eval(const econ_params *p, int gpus, double gpu_price_usd,
               double power_w, double tokens_per_s, econ_result *r)
{
    memset(r, 0, sizeof *r);
    r->purchase_usd = gpus * (gpu_price_usd + p->server_usd_per_gpu);
    r->capex_usd_per_h = r->purchase_usd / (p->amortization_years *
                                            HOURS_PER_YEAR);
    r->power_w = power_w;
    r->energy_usd_per_h = power_w * p->pue / 1000 * p->usd_per_kwh;
    r->usd_per_h = r->capex_usd_per_h + r->energy_usd_per_h;
    double tokens_per_h = tokens_per_s * 3600;
    r->tokens_per_usd = r->usd_per_h > 0 ? tokens_per_h / r->usd_per_h : 0;
    r->usd_per_mtok = tokens_per_h > 0 ? r->usd_per_h / tokens_per_h * 1e6 : 0;
    r->energy_j_per_mtok = tokens_per_s > 0 ? power_w / tokens_per_s * 1e6 : 0;
}
