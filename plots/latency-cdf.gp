# Latency CDFs of a serving run, from the per-request CSV of
#   ./llmsim serve configs/serve-llama2-70b-8xh100.cfg --requests 3000 --csv req.csv
# Two panels: time to first token and time per output token (ms, log
# scale) against the fraction of requests at or below it.  A second CSV
# (in2, e.g. another deployment on the same trace) overlays the first:
#   ./llmsim serve configs/serve-llama2-70b-8xh100.cfg --requests 3000 \
#       --set serving.tp=8 --set serving.replicas=1 --csv req2.csv
# Usage: gnuplot -e "in='req.csv'; out='cdf.png'" plots/latency-cdf.gp
#   gnuplot -e "in='req.csv'; label1='2 x TP 4'; in2='req2.csv'; \
#               label2='1 x TP 8'; out='cdf.png'" plots/latency-cdf.gp
#   (title='...' sets the title; term='svg' writes SVG instead of PNG;
#   slo_ttft=1000 and slo_tpot=100, in ms, draw the SLOs as dashed lines with
#   the share of requests that meets each)
# Columns are found by name (ttft_s, tpot_s).  Requests rejected (longer
# than a replica's KV cache: empty ttft_s) are left out of both CDFs and
# counted in the key; one-token requests (tpot_s 0) have no TPOT.
if (!exists("in")) in = 'req.csv'
if (!exists("out")) out = 'latency-cdf.png'
if (!exists("title")) title = 'serving latency: CDF over requests'
if (!exists("term")) term = 'png'
if (term ne 'png' && term ne 'svg') { exit error "term='" . term . "': expected 'png' or 'svg'" }
if (!exists("label1")) label1 = exists("in2") ? in : 'requests'
if (exists("in2") && !exists("label2")) label2 = in2
if (term eq 'svg') {
    set terminal svg size 1200,460 font "sans,10" dynamic background rgb "white"
} else {
    set terminal pngcairo size 1200,460 font "sans,10"
}
set output out
set datafile separator ","
set datafile columnheaders
# a NaN from the using expressions below drops the request; without this
# it would split the data and smooth cnormal would restart at each gap
set datafile missing NaN
two = exists("in2")
file(i) = i == 1 ? in : in2

# milliseconds; NaN (left out) for rejected requests and missing TPOTs
ttft(c) = column("ttft_s") * 1e3
tpot(c) = column("tpot_s") > 0 ? column("tpot_s") * 1e3 : NaN

# per run: requests, rejected ones, each panel's x range, and the share of
# requests within each SLO (1.0 * : gnuplot divides integers as integers)
array rej[2]; array meet_t[2]; array meet_p[2]
ttft_slo = exists("slo_ttft") ? slo_ttft : 0
tpot_slo = exists("slo_tpot") ? slo_tpot : 0
tlo = 1e300; thi = 0; plo = 1e300; phi = 0
do for [i = 1:1 + two] {
    stats file(i) using 1 nooutput
    all = STATS_records
    stats file(i) using (ttft(0) <= ttft_slo ? 1 : NaN) nooutput
    meet_t[i] = 1.0 * STATS_records / all
    stats file(i) using (tpot(0) <= tpot_slo ? 1 : NaN) nooutput
    meet_p[i] = 1.0 * STATS_records / all
    stats file(i) using (ttft(0)) nooutput
    rej[i] = all - STATS_records
    tlo = STATS_min < tlo ? STATS_min : tlo; thi = STATS_max > thi ? STATS_max : thi
    stats file(i) using (tpot(0)) nooutput
    plo = STATS_min < plo ? STATS_min : plo; phi = STATS_max > phi ? STATS_max : phi
}
key(i) = (i == 1 ? label1 : label2) . (rej[i] > 0 ? sprintf(" (%d rejected)", rej[i]) : "")

# ticks at m x 10^k between lo and hi: m = 1..9 over about a decade,
# 1, 2, 5 over up to three, 1 and 3 beyond
mants(lo, hi) = hi / lo < 15 ? "1 2 3 4 5 6 7 8 9" : hi / lo < 1500 ? "1 2 5" : "1 3"
ticks(lo, hi) = sprintf("set xtics (%s)", ticklist(lo, hi, mants(lo, hi)))
ticklist(lo, hi, ms) = (tl = "", \
    sum [k = int(floor(log10(lo))) : int(ceil(log10(hi)))] \
      sum [j = 1 : words(ms)] (tl = tl . tick(word(ms, j) * 10.0**k, lo, hi), 0), \
    tl[3:*])
tick(v, lo, hi) = v >= lo && v <= hi ? sprintf(', "%g" %.17g', v, v) : ""

set multiplot layout 1,2 title title
set grid
set logscale x
set yrange [0:1]
set ytics 0, 0.1 format "%.1f"
set ylabel "fraction of requests"
set y2range [0:1]
set y2tics ("p50" 0.5, "p90" 0.9, "p99" 0.99)
set grid y2tics
set key bottom right Left reverse box opaque noenhanced
colour(i) = i == 1 ? "#4C72B0" : "#DD8452"

# an SLO: a dashed vertical line, the range widened to show it, and per run
# the share of requests at or under it in the key (a rejected request
# misses every SLO)
slo_line(v) = sprintf("set arrow 1 from first %.17g, graph 0 to first %.17g, graph 1 nohead dt 2 lw 1.5 lc rgb 'black' front", v, v)
slo_label(v, what) = sprintf("set label 1 '%s SLO %g ms' at first %.17g, graph 0.45 right offset -0.5,0 font ',9' front", what, v, v)
key_slo(i, v, m) = key(i) . (v > 0 ? sprintf(": %.1f%% within %g ms", 100 * m, v) : "")
if (ttft_slo > 0) { thi = thi > ttft_slo ? thi : ttft_slo; tlo = tlo < ttft_slo ? tlo : ttft_slo }

set title "time to first token"
set xlabel "TTFT (ms)"
set xrange [tlo / 1.1 : thi * 1.1]
eval ticks(tlo / 1.1, thi * 1.1)
if (ttft_slo > 0) { eval slo_line(ttft_slo); eval slo_label(ttft_slo, "TTFT") }
plot for [i = 1:1 + two] file(i) using (ttft(0)):(1) smooth cnormal \
     with lines lw 2 lc rgb colour(i) title key_slo(i, ttft_slo, meet_t[i])
unset arrow 1
unset label 1
if (tpot_slo > 0) { phi = phi > tpot_slo ? phi : tpot_slo; plo = plo < tpot_slo ? plo : tpot_slo }

set title "time per output token"
set xlabel "TPOT (ms)"
set xrange [plo / 1.1 : phi * 1.1]
eval ticks(plo / 1.1, phi * 1.1)
if (tpot_slo > 0) { eval slo_line(tpot_slo); eval slo_label(tpot_slo, "TPOT") }
plot for [i = 1:1 + two] file(i) using (tpot(0)):(1) smooth cnormal \
     with lines lw 2 lc rgb colour(i) title key_slo(i, tpot_slo, meet_p[i])
unset multiplot
