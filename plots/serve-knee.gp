# The latency-throughput knee from plots/serve-knee.sh's CSV.
# Usage: gnuplot -e "in='knee.csv'; out='knee.png'; title='...'" plots/serve-knee.gp
#   (term='svg' writes SVG instead of PNG)
if (!exists("in")) in = 'knee.csv'
if (!exists("out")) out = 'knee.png'
if (!exists("title")) title = 'serving: latency against throughput'
if (!exists("term")) term = 'png'
if (term ne 'png' && term ne 'svg') { exit error "term='" . term . "': expected 'png' or 'svg'" }
if (term eq 'svg') {
    set terminal svg size 1200,440 font "sans,10" dynamic background rgb "white"
} else {
    set terminal pngcairo size 1200,440 font "sans,10"
}
set output out
set datafile separator ","
set multiplot layout 1,2 title title
set xlabel "achieved throughput (requests/s)"
set grid
set key top left
set logscale y
set ylabel "time to first token (s)"
plot in every ::1 using 2:4 with linespoints pt 7 lc rgb "#4C72B0" title "TTFT p50", \
     in every ::1 using 2:5 with linespoints pt 7 lc rgb "#C44E52" title "TTFT p99"
unset logscale y
set ylabel "time per output token (ms)"
set yrange [0:*]
plot in every ::1 using 2:($6*1e3) with linespoints pt 7 lc rgb "#4C72B0" title "TPOT p50", \
     in every ::1 using 2:($7*1e3) with linespoints pt 7 lc rgb "#C44E52" title "TPOT p99"
unset multiplot
