#include "report/rcompare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "report/rjson.h"
#include "report/rtrain.h"

static void row(FILE *fp, const exp_compare *f, const char *label,
                const char *fmt, const double *v)
{
    fprintf(fp, "  %-34s", label);
    for (int i = 0; i < f->n; i++) {
        char cell[64];
        if (isnan(v[i]))
            snprintf(cell, sizeof cell, "-");
        else
            snprintf(cell, sizeof cell, fmt, v[i]);
        fprintf(fp, " %20s", cell);
    }
    fprintf(fp, "\n");
}

/* The 80% band of tokens per dollar, low and high, of each cluster that
 * ran (compare_tpd_range). */
static void tpd_rows(FILE *fp, const exp_compare *f, const compare_outcome *o,
                     bool train)
{
    double lo[EXP_COMPARE_MAX], hi[EXP_COMPARE_MAX];
    for (int i = 0; i < f->n; i++) {
        lo[i] = hi[i] = NAN;
        if (train ? o[i].trained : o[i].served)
            compare_tpd_range(&o[i], train, &lo[i], &hi[i]);
    }
    row(fp, f, "tokens per $, 80% band low", "%.0f", lo);
    row(fp, f, "tokens per $, 80% band high", "%.0f", hi);
}

/* What kind of figure a source gives, for the table: its words up to the
 * first ':', '(' or ';' ("derived", "as dgx-h100", "not counted"); the
 * whole source is in the data file and the JSON. */
static const char *src_kind(const char *src, char *buf, size_t n)
{
    size_t k = strcspn(src, ":(;");
    while (k > 0 && src[k - 1] == ' ')
        k--;
    if (k >= n)
        k = n - 1;
    memcpy(buf, src, k);
    buf[k] = '\0';
    return buf;
}

/* Every figure the costs rest on, and where each came from. */
static void assumptions_text(FILE *fp, const exp_compare *f,
                             const compare_outcome *o)
{
    const econ_params *p = &f->econ;
    if (p->mode == ECON_RENT)
        fprintf(fp, "\n  economics: rented by the GPU-hour (power, hosting and "
                    "the servers included in the price)\n");
    else
        fprintf(fp, "\n  economics: owned; %.3g-year straight-line "
                    "amortization, $%.3g/kWh, PUE %.2f, hosting $%.0f per kW "
                    "of IT power a month (calib/economics.tsv or the compare "
                    "file)\n", p->amortization_years, p->usd_per_kwh, p->pue,
                p->hosting_usd_per_kw_month);
    for (int i = 0; i < f->n; i++) {
        const compare_outcome *x = &o[i];
        if (!x->trained && !x->served)
            continue;
        const econ_params *q = &x->econ;
        if (p->mode == ECON_RENT) {
            fprintf(fp, "    %s: $%.2f per %s-hour (%s)\n", f->c[i].name,
                    q->rent_usd_per_gpu_hour, x->gpu.name, x->econ_src.rent);
            continue;
        }
        char a[48], b[48], c[48], d[48];
        fprintf(fp, "    %s (%s), per GPU: GPU $%.0f; server $%.0f (%s); "
                    "network $%.0f (%s); power beyond the GPUs %.0f W (%s); "
                    "switches %.0f W (%s)\n",
                f->c[i].name, x->node, x->gpu.price_usd, q->server_usd_per_gpu,
                src_kind(x->econ_src.server, a, sizeof a),
                q->network_usd_per_gpu,
                src_kind(x->econ_src.network, b, sizeof b), q->host_w_per_gpu,
                src_kind(x->econ_src.host_w, c, sizeof c),
                q->network_w_per_gpu,
                src_kind(x->econ_src.network_w, d, sizeof d));
    }
    if (p->mode != ECON_RENT)
        fprintf(fp, "    (GPU prices: topologies/gpus.cfg; the rest: "
                    "calib/node-economics.tsv, each figure with its source)\n");
}

void rcompare_text(FILE *fp, const exp_compare *f, const compare_result *res)
{
    const compare_outcome *o = res->o;
    const char *verdict_text = res->verdict;
    fprintf(fp, "%s\n\n  %-34s", f->description[0] ? f->description : "Comparison", "");
    for (int i = 0; i < f->n; i++)
        fprintf(fp, " %20s", f->c[i].name);
    fprintf(fp, "\n");
    double v[EXP_COMPARE_MAX];
#define ROW(label, fmt, expr)                                                \
    do {                                                                     \
        for (int i_ = 0; i_ < f->n; i_++) {                                  \
            const compare_outcome *x = &o[i_];                                       \
            v[i_] = (expr);                                                  \
        }                                                                    \
        row(fp, f, label, fmt, v);                                               \
    } while (0)
    ROW("GPUs", "%.0f", x->gpus ? x->gpus : NAN);
    if (f->econ.mode == ECON_RENT)
        ROW("rent, $ per hour", "%.2f",
            x->gpus ? x->gpus * x->econ.rent_usd_per_gpu_hour : NAN);
    else
        ROW("purchase (GPUs, servers, network), $", "%.0f",
            x->gpus ? x->purchase_usd : NAN);
    ROW("TDP, all GPUs, W", "%.0f", x->has_gpu ? x->gpus * x->gpu.tdp_w : NAN);
    if (f->training[0]) {
        fprintf(fp, "\n  training: %s\n", f->training);
        for (int i = 0; i < f->n; i++)
            fprintf(fp, "    %-20s %s\n", f->c[i].name,
                   o[i].trained ? o[i].train_plan : o[i].error[0]);
        ROW("step time, s", "%.3f",
            x->trained ? x->train.r.step_s : NAN);
        ROW("tokens/s", "%.0f", x->trained ? x->train.r.tokens_per_s : NAN);
        ROW("MFU", "%.3f", x->trained ? x->train.r.mfu : NAN);
        ROW("memory peak, GiB", "%.1f",
            x->trained ? x->train.r.memory_peak_bytes / GiB : NAN);
        ROW("memory headroom, GiB", "%.1f",
            x->trained ? (x->train.env.t->gpu->memory_bytes -
                          x->train.r.memory_peak_bytes) / GiB
                       : NAN);
        ROW("power: GPUs + hosts + network, W", "%.0f",
            x->trained ? x->te.power_w : NAN);
        ROW("energy per M tokens, kWh", "%.3f",
            x->trained ? x->te.energy_j_per_mtok / 3.6e6 : NAN);
        ROW("cost per hour, $", "%.2f", x->trained ? x->te.usd_per_h : NAN);
        ROW("tokens per $", "%.0f", x->trained ? x->te.tokens_per_usd : NAN);
        tpd_rows(fp, f, o, true);
        char lab[64];
        snprintf(lab, sizeof lab, "time to train %.3g tokens, h",
                 f->train_tokens);
        ROW(lab, "%.1f",
            x->trained ? f->train_tokens / x->train.r.tokens_per_s / 3600
                       : NAN);
        snprintf(lab, sizeof lab, "cost to train %.3g tokens, $",
                 f->train_tokens);
        ROW(lab, "%.0f",
            x->trained ? f->train_tokens / x->train.r.tokens_per_s / 3600 *
                             x->te.usd_per_h
                       : NAN);
    }
    if (f->serving[0]) {
        fprintf(fp, "\n  serving: %s\n", f->serving);
        for (int i = 0; i < f->n; i++)
            fprintf(fp, "    %-20s %s\n", f->c[i].name,
                   o[i].served ? o[i].serve_plan : o[i].error[1]);
        ROW("output tokens/s", "%.0f",
            x->served ? x->serve.throughput_tokens_per_s : NAN);
        ROW("goodput, requests/s in SLO", "%.2f",
            x->served ? x->serve.goodput_requests_per_s : NAN);
        ROW("p90 TTFT, ms", "%.0f",
            x->served ? 1e3 * x->serve.ttft.p90 : NAN);
        ROW("p90 TPOT, ms", "%.1f",
            x->served ? 1e3 * x->serve.tpot.p90 : NAN);
        ROW("power: GPUs + hosts + network, W", "%.0f",
            x->served ? x->se.power_w : NAN);
        ROW("energy per M tokens, kWh", "%.3f",
            x->served ? x->se.energy_j_per_mtok / 3.6e6 : NAN);
        ROW("$ per M output tokens", "%.3f", x->served ? x->se.usd_per_mtok : NAN);
        ROW("tokens per $", "%.0f", x->served ? x->se.tokens_per_usd : NAN);
        tpd_rows(fp, f, o, false);
    }
#undef ROW
    assumptions_text(fp, f, o);
    fprintf(fp, "\n%s\n", verdict_text);
}

static json_t *econ_json(const econ_result *r)
{
    json_t *j = json_object();
    json_object_set_new(j, "gpu_power_w", json_real(r->gpu_power_w));
    json_object_set_new(j, "power_w", json_real(r->power_w));
    json_object_set_new(j, "capex_usd_per_hour", json_real(r->capex_usd_per_h));
    json_object_set_new(j, "energy_usd_per_hour",
                        json_real(r->energy_usd_per_h));
    json_object_set_new(j, "hosting_usd_per_hour",
                        json_real(r->hosting_usd_per_h));
    json_object_set_new(j, "rent_usd_per_hour", json_real(r->rent_usd_per_h));
    json_object_set_new(j, "usd_per_hour", json_real(r->usd_per_h));
    json_object_set_new(j, "tokens_per_usd", json_real(r->tokens_per_usd));
    json_object_set_new(j, "usd_per_mtok", json_real(r->usd_per_mtok));
    json_object_set_new(j, "energy_j_per_mtok",
                        json_real(r->energy_j_per_mtok));
    return j;
}

static json_t *assumptions_json(const econ_params *g, const compare_outcome *o)
{
    const econ_params *p = &o->econ;
    const econ_sources *s = &o->econ_src;
    json_t *j = json_object();
    json_object_set_new(j, "mode", json_string(econ_mode_names[g->mode]));
    json_object_set_new(j, "node", json_string(o->node));
    json_object_set_new(j, "amortization_years",
                        json_real(p->amortization_years));
    json_object_set_new(j, "usd_per_kwh", json_real(p->usd_per_kwh));
    json_object_set_new(j, "pue", json_real(p->pue));
    json_object_set_new(j, "hosting_usd_per_kw_month",
                        json_real(p->hosting_usd_per_kw_month));
    const struct {
        const char *key, *src;
        double v;
    } f[] = {{"server_usd_per_gpu", s->server, p->server_usd_per_gpu},
             {"network_usd_per_gpu", s->network, p->network_usd_per_gpu},
             {"host_w_per_gpu", s->host_w, p->host_w_per_gpu},
             {"network_w_per_gpu", s->network_w, p->network_w_per_gpu},
             {"rent_usd_per_gpu_hour", s->rent, p->rent_usd_per_gpu_hour}};
    json_t *src = json_object();
    for (int k = 0; k < 5; k++) {
        json_object_set_new(j, f[k].key, json_real(f[k].v));
        json_object_set_new(src, f[k].key, json_string(f[k].src));
    }
    json_object_set_new(j, "sources", src);
    return j;
}

static void tpd_json(json_t *j, const compare_outcome *o, bool train)
{
    double lo, hi;
    compare_tpd_range(o, train, &lo, &hi);
    json_object_set_new(j, "tokens_per_usd_lo", json_real(lo));
    json_object_set_new(j, "tokens_per_usd_hi", json_real(hi));
}

json_t *rcompare_json(const exp_compare *f, const compare_result *res)
{
    const compare_outcome *o = res->o;
    const char *verdict_text = res->verdict;
    json_t *a = json_array();
    for (int i = 0; i < f->n; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "name", json_string(f->c[i].name));
        json_object_set_new(c, "gpu", json_string(o[i].has_gpu ? o[i].gpu.name
                                                                : ""));
        json_object_set_new(c, "gpus", json_integer(o[i].gpus));
        json_object_set_new(c, "purchase_usd", json_real(o[i].purchase_usd));
        json_object_set_new(c, "tdp_w", json_real(
            o[i].has_gpu ? o[i].gpus * o[i].gpu.tdp_w : 0));
        if (o[i].trained || o[i].served)
            json_object_set_new(c, "assumptions",
                                assumptions_json(&f->econ, &o[i]));
        if (o[i].trained) {
            json_t *t = rtrain_json(&o[i].train);
            json_object_set_new(t, "plan_name", json_string(o[i].train_plan));
            json_object_set_new(t, "economics", econ_json(&o[i].te));
            tpd_json(t, &o[i], true);
            json_object_set_new(t, "train_hours", json_real(
                f->train_tokens / o[i].train.r.tokens_per_s / 3600));
            json_object_set_new(c, "training", t);
        } else if (f->training[0]) {
            json_object_set_new(c, "training_error",
                                json_string(o[i].error[0]));
        }
        if (o[i].served) {
            json_t *s = json_object();
            json_object_set_new(s, "deployment", json_string(o[i].serve_plan));
            const serve_result *r = &o[i].serve;
            json_object_set_new(s, "throughput_tokens_per_s",
                                json_real(r->throughput_tokens_per_s));
            json_object_set_new(s, "goodput_requests_per_s",
                                json_real(r->goodput_requests_per_s));
            json_object_set_new(s, "slo_attainment",
                                json_real(r->slo_attainment));
            json_object_set_new(s, "avg_power_w", json_real(r->avg_power_w));
            json_object_set_new(s, "ttft_p90_s", json_real(r->ttft.p90));
            json_object_set_new(s, "tpot_p90_s", json_real(r->tpot.p90));
            json_object_set_new(s, "economics", econ_json(&o[i].se));
            tpd_json(s, &o[i], false);
            json_object_set_new(s, "throughput_band",
                                rjson_band(&o[i].serve_band));
            json_object_set_new(c, "serving", s);
        } else if (f->serving[0]) {
            json_object_set_new(c, "serving_error", json_string(o[i].error[1]));
        }
        json_array_append_new(a, c);
    }
    json_t *j = json_object();
    json_object_set_new(j, "clusters", a);
    json_object_set_new(j, "verdict", json_string(verdict_text));
    return j;
}

/* Bars relative to the first cluster, through gnuplot, into png. */
/* The plot is complete: a PNG ends with its IEND chunk, an SVG with its
 * closing tag (gnuplot can exit 0 having written half a file when the
 * disk or a file-size limit stops it). */
static bool plot_complete(const char *text, size_t n, bool svg)
{
    if (svg)
        return n >= 7 && strstr(text + (n > 64 ? n - 64 : 0), "</svg>");
    return n >= 12 && memcmp(text + n - 8, "IEND", 4) == 0;
}

/* The plot gnuplot wrote into tmp, checked, then into png (a regular file
 * through a temporary and a rename; a device or a pipe as it is). */
static int plot_install(const char *tmp, const char *png, bool svg, llm_err *e)
{
    size_t n;
    char *text = util_read_file(tmp, "a PNG", &n, e);
    remove(tmp);
    if (!text)
        return -1;
    if (!plot_complete(text, n, svg)) {
        free(text);
        return err_set(e, "--png %s: gnuplot wrote an incomplete %s (%zu "
                          "bytes: is the disk full?)", png, svg ? "SVG" : "PNG",
                       n);
    }
    util_outfile out;
    int rc = util_out_open(&out, png, e);
    if (rc == 0) {
        fwrite(text, 1, n, out.fp);
        rc = util_out_commit(&out, e);
    }
    free(text);
    return rc;
}

/* One panel's figure of cluster x (train, else serve; kind 0 throughput,
 * 1 tokens per dollar, 2 tokens per joule) and its 80% range; false when
 * the cluster has none. */
static bool panel_value(const compare_outcome *x, bool train, int kind,
                        double v[3])
{
    if (!(train ? x->trained : x->served))
        return false;
    const econ_result *r = train ? &x->te : &x->se;
    const band_est *b = train ? &x->train.band : &x->serve_band;
    switch (kind) {
    case 0:
        v[0] = train ? x->train.r.tokens_per_s : x->serve.goodput_requests_per_s;
        break;
    case 1: v[0] = r->tokens_per_usd; break;
    default: v[0] = r->energy_j_per_mtok > 0 ? 1e6 / r->energy_j_per_mtok : 0;
    }
    /* each is a rate: the band's time ratios invert (energy per token and
     * cost per token scale with the time of the work, as modelled) */
    v[1] = v[2] = v[0];
    if (b->have)
        band_ends(b, v[0], true, &v[1], &v[2]);
    return true;
}

/* A panel per figure: each cluster's bar with its value written on it
 * and its 80% band as an error bar, in the figure's own unit. */
static void plot_panels(FILE *g, const exp_compare *f, const compare_outcome *o,
                        const char *foot)
{
    static const struct {
        bool train;
        int kind;
        const char *title;
    } P[] = {{true, 0, "training: tokens/s"},
             {true, 1, "training: tokens per $"},
             {true, 2, "training: tokens per J (IT power)"},
             {false, 0, "serving: goodput, requests/s in SLO"},
             {false, 1, "serving: output tokens per $"},
             {false, 2, "serving: output tokens per J (IT power)"}};
    int want[6], n = 0;
    for (int k = 0; k < 6; k++) {
        bool any = false;
        double v[3];
        for (int i = 0; i < f->n; i++)
            any |= panel_value(&o[i], P[k].train, P[k].kind, v);
        if (any && (P[k].train ? f->training[0] : f->serving[0]))
            want[n++] = k;
    }
    fprintf(g, "set datafile separator '\\t'\nset style fill solid 0.85 "
               "border -1\nset grid ytics\nset xtics "
               "noenhanced\nset key off\n"
               "set label 99 \"%s\" at screen 0.01, screen 0.035 left "
               "font ',9' noenhanced\n", foot);
    if (n == 0) {
        fprintf(g, "set title \"%s\" noenhanced\nset label 1 'no cluster "
                   "could run the workload' at graph 0.5, 0.5 center\nplot "
                   "[0:1] [0:1] NaN notitle\n",
                f->description[0] ? f->description : "comparison");
        return;
    }
    int cols = n > 3 ? 3 : n, rows = (n + cols - 1) / cols;
    fprintf(g, "set multiplot layout %d,%d title \"%s (bars: llmsim; error "
               "bars: the 80%% band of published runs like each)\" "
               "noenhanced margins 0.06,0.98,0.14,0.9 spacing 0.07,0.16\n",
            rows, cols, f->description[0] ? f->description : "comparison");
    for (int q = 0; q < n; q++) {
        int k = want[q];
        fprintf(g, "$p%d << EOD\n", q);
        double top = 0;
        for (int i = 0; i < f->n; i++) {
            double v[3] = {0, 0, 0};
            if (!panel_value(&o[i], P[k].train, P[k].kind, v)) {
                fprintf(g, "%s\tNaN\tNaN\tNaN\tcould not run\n",
                        f->c[i].name);
                continue;
            }
            fprintf(g, "%s\t%.6g\t%.6g\t%.6g\t\n", f->c[i].name, v[0], v[1],
                    v[2]);
            top = v[2] > top ? v[2] : top;
        }
        /* room above the highest error bar for its label; thousands and
         * millions as 7.5k and 3.5M */
        fprintf(g, "EOD\nset yrange [0:%.6g]\nset format y '%s'\n",
                top > 0 ? 1.25 * top : 1, top >= 1000 ? "%.1s%c" : "%g");
        fprintf(g, "set title '%s'\nset xrange [-0.6:%d.6]\n"
                   "plot $p%d using 0:2:(0.6):($0 + 1) with boxes lc "
                   "variable, '' using 0:2:3:4 with yerrorbars lc rgb "
                   "'black' pt 0, '' using 0:4:($2 >= 1000 ? "
                   "sprintf('%%.0f', $2) : sprintf('%%.3g', $2)) with labels "
                   "offset 0,1.1 font ',9', "
                   "'' using 0:(0):5 with labels offset 0,1 font ',8', "
                   "'' using 0:(NaN):xtic(1) notitle\n",
                P[k].title, f->n - 1, q);
    }
    fprintf(g, "unset multiplot\n");
}

/* The cost assumptions in one line, for the chart's foot. */
static void assumptions_line(const exp_compare *f, char *buf, size_t n)
{
    const econ_params *p = &f->econ;
    if (p->mode == ECON_RENT)
        snprintf(buf, n, "costs: rented per GPU-hour at calib/cloud-prices.tsv's "
                         "prices (power, hosting and servers included)");
    else
        snprintf(buf, n, "costs: owned; GPUs, servers and network over %.3g "
                         "years; IT power (GPUs + hosts + switches) x PUE %.2f "
                         "at $%.3g/kWh;\\nhosting $%.0f per kW-month "
                         "(calib/economics.tsv, calib/node-economics.tsv)",
                 p->amortization_years, p->pue, p->usd_per_kwh,
                 p->hosting_usd_per_kw_month);
}

int rcompare_png(const char *png, const exp_compare *f,
                 const compare_result *res, llm_err *e)
{
    const compare_outcome *o = res->o;
    bool svg = util_ends_with(png, ".svg");
    const char *dir = getenv("TMPDIR");
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s/llmsim-plot-XXXXXX%s",
             dir && *dir ? dir : "/tmp", svg ? ".svg" : ".png");
    if (strpbrk(tmp, "'\n"))
        return err_set(e, "--png: TMPDIR holds a quote or a line break, which "
                          "gnuplot cannot take");
    int fd = mkstemps(tmp, 4);
    if (fd < 0)
        return err_set(e, "--png %s: cannot create a temporary file in %s: %s",
                       png, dir && *dir ? dir : "/tmp", strerror(errno));
    close(fd);
    FILE *g = popen("gnuplot > /dev/null", "w");
    if (!g) {
        remove(tmp);
        return err_set(e, "--png: cannot run gnuplot (install gnuplot-nox)");
    }
    if (util_ends_with(png, ".svg"))
        fprintf(g, "set terminal svg size 1200,720 font 'sans,11'\n");
    else
        fprintf(g, "set terminal pngcairo size 1200,720 font 'sans,11'\n");
    fprintf(g, "set output '%s'\n", tmp);
    char foot[400];
    assumptions_line(f, foot, sizeof foot);
    plot_panels(g, f, o, foot);
    int rc = pclose(g);
    if (rc != 0) {
        remove(tmp);
        return err_set(e, "--png %s: gnuplot failed (exit %d; is gnuplot "
                          "with the pngcairo terminal installed?)", png, rc);
    }
    return plot_install(tmp, png, svg, e);
}

