# The latency-throughput knee from plots/serve-knee.sh's CSV.
# Usage: gnuplot -e "in='knee.csv'; out='knee.png'; title='...'" plots/serve-knee.gp
#   (term='svg' writes SVG instead of PNG; slo_ttft=1.0 (s) and slo_tpot=100 (ms)
#   draw the SLOs the run was judged by)
# A point is stable when the deployment kept up with its offered load: the
# requests it completed per second are at least 90% of the arrival rate (a
# finite run's drain keeps even a stable point a little under).  Past the
# highest stable throughput the queue grows without bound and latency is
# whatever the run's length makes it: that region is shaded and its points
# drawn hollow, not joined to the curve (the achieved throughput stalls
# there, so a line would hook back on itself).
if (!exists("in")) in = 'knee.csv'
if (!exists("out")) out = 'knee.png'
if (!exists("title")) title = 'serving: latency against throughput'
if (!exists("term")) term = 'png'
if (term ne 'png' && term ne 'svg') { exit error "term='" . term . "': expected 'png' or 'svg'" }
if (term eq 'svg') {
    set terminal svg size 1200,460 font "sans,10" dynamic background rgb "white"
} else {
    set terminal pngcairo size 1200,460 font "sans,10"
}
set output out
set datafile separator ","
stable(c) = column(2) >= 0.9 * column(1)
ok(v) = stable(0) ? v : NaN
bad(v) = stable(0) ? NaN : v
stats in every ::1 using (ok(column(2))) nooutput
xs = STATS_max
stats in every ::1 using 2 nooutput
xmax = STATS_max * 1.08
set xrange [0:xmax]
set multiplot layout 1,2 title title
set xlabel "achieved throughput (requests/s)"
set grid
set key top left opaque box
set object 1 rect from xs, graph 0 to graph 1, graph 1 fc rgb "#e8e8e8" fs solid noborder behind
set label 1 "saturated" at first (xs + xmax) / 2, graph 0.22 center rotate by 90 font ",9" front
set logscale y
set ylabel "time to first token (s)"
if (exists("slo_ttft")) {
    set arrow 1 from graph 0, first slo_ttft to graph 1, first slo_ttft nohead dt 2 lw 1.5 lc rgb "black"
    set label 2 sprintf("TTFT SLO %g s", slo_ttft) at graph 0.02, first slo_ttft left offset 0,0.7 font ",9"
}
plot in every ::1 using 2:(ok($4)) with linespoints pt 7 lc rgb "#4C72B0" title "TTFT p50", \
     in every ::1 using 2:(ok($5)) with linespoints pt 7 lc rgb "#C44E52" title "TTFT p99", \
     in every ::1 using 2:(bad($4)) with points pt 6 lc rgb "#4C72B0" notitle, \
     in every ::1 using 2:(bad($5)) with points pt 6 lc rgb "#C44E52" notitle
unset logscale y
unset arrow 1
unset label 2
set ylabel "time per output token (ms)"
set yrange [0:*]
if (exists("slo_tpot")) {
    set arrow 1 from graph 0, first slo_tpot to graph 1, first slo_tpot nohead dt 2 lw 1.5 lc rgb "black"
    set label 2 sprintf("TPOT SLO %g ms", slo_tpot) at graph 0.02, first slo_tpot left offset 0,0.7 font ",9"
}
plot in every ::1 using 2:(ok($6*1e3)) with linespoints pt 7 lc rgb "#4C72B0" title "TPOT p50", \
     in every ::1 using 2:(ok($7*1e3)) with linespoints pt 7 lc rgb "#C44E52" title "TPOT p99", \
     in every ::1 using 2:(bad($6*1e3)) with points pt 6 lc rgb "#4C72B0" notitle, \
     in every ::1 using 2:(bad($7*1e3)) with points pt 6 lc rgb "#C44E52" notitle
unset multiplot
