#include "decide/econ.h"

#include <string.h>

/* Hours in an average year (365.25 days), and in its average month. */
#define HOURS_PER_YEAR 8766.0
#define HOURS_PER_MONTH (HOURS_PER_YEAR / 12)

const char *const econ_mode_names[ECON_MODES] = {"own", "rent"};

void econ_eval(const econ_params *p, int gpus, double gpu_price_usd,
               double gpu_power_w, double tokens_per_s, econ_result *r)
{
    memset(r, 0, sizeof *r);
    r->purchase_usd = gpus * (gpu_price_usd + p->server_usd_per_gpu +
                              p->network_usd_per_gpu);
    r->gpu_power_w = gpu_power_w;
    r->power_w = gpu_power_w +
                 gpus * (p->host_w_per_gpu + p->network_w_per_gpu);
    if (p->mode == ECON_RENT) {
        r->rent_usd_per_h = gpus * p->rent_usd_per_gpu_hour;
        r->usd_per_h = r->rent_usd_per_h;
    } else {
        r->capex_usd_per_h = r->purchase_usd / (p->amortization_years *
                                                HOURS_PER_YEAR);
        r->energy_usd_per_h = r->power_w * p->pue / 1000 * p->usd_per_kwh;
        r->hosting_usd_per_h = r->power_w / 1000 *
                               p->hosting_usd_per_kw_month / HOURS_PER_MONTH;
        r->usd_per_h = r->capex_usd_per_h + r->energy_usd_per_h +
                       r->hosting_usd_per_h;
    }
    double tokens_per_h = tokens_per_s * 3600;
    r->tokens_per_usd = r->usd_per_h > 0 ? tokens_per_h / r->usd_per_h : 0;
    r->usd_per_mtok = tokens_per_h > 0 ? r->usd_per_h / tokens_per_h * 1e6 : 0;
    r->energy_j_per_mtok =
        tokens_per_s > 0 ? r->power_w / tokens_per_s * 1e6 : 0;
}
