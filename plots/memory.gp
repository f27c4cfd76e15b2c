# Memory per GPU as stacked bars (weights, gradients, optimizer state,
# activations, overhead), one bar per sweep point, against the GPU's
# capacity, from plots/memory.sh's table:
#   ./llmsim sweep configs/train-llama3-70b-64xh100.cfg \
#       --vary parallel.zero=0,1,2,3 \
#       --vary parallel.recompute=none,selective,full --out mem.csv -j 2
#   sh plots/memory.sh mem.csv memory.dat
# Usage: gnuplot -e "in='memory.dat'; out='memory.png'" plots/memory.gp
#   (title='...' sets the title; term='svg' writes SVG instead of PNG)
#   (xlab='...' names the x axis, for sweeps over other axes)
if (!exists("in")) in = 'memory.dat'
if (!exists("out")) out = 'memory.png'
if (!exists("title")) title = 'memory per GPU at the peak'
if (!exists("term")) term = 'png'
if (term ne 'png' && term ne 'svg') { exit error "term='" . term . "': expected 'png' or 'svg'" }
if (!exists("xlab")) xlab = "ZeRO stage / activation recomputation"
if (term eq 'svg') {
    set terminal svg size 1200,520 font "sans,10" dynamic background rgb "white"
} else {
    set terminal pngcairo size 1200,520 font "sans,10"
}
set output out
# columns: 1 label1, 2 label2, 3-7 weights gradients optimizer activations
# overhead, 8 total, 9 capacity (GiB), 10 gpu
stats in using 8 nooutput
top = STATS_max
stats in using (gpu = strcol(10), $9) nooutput
capmin = STATS_min; capmax = STATS_max
ymax = (top > capmax ? top : capmax) * 1.15

set title title
set xlabel xlab offset 0,-0.5
set ylabel "memory per GPU at the peak (GiB)"
set yrange [0:ymax]
set grid ytics
set xtics nomirror noenhanced
set key outside right top Left reverse invert
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border lc rgb "white"
set boxwidth 0.72
lab(a, b) = b eq "-" ? a : a . "\n" . b
# one capacity line across the plot when every bar has the same GPU,
# else a capacity mark over each bar
if (capmin == capmax) {
    set label 1 sprintf("%s: %.1f GiB", gpu, capmax) at graph 0.01, first capmax \
        offset 0,0.7 left front noenhanced tc rgb "#222222"
    cap = "capmax with lines dt 2 lw 2 lc rgb '#222222' title 'GPU capacity'"
} else {
    cap = "in using 0:9:(0.36) with xerrorbars pt -1 lw 2 lc rgb '#222222' title 'GPU capacity'"
}
plot in using 3:xtic(lab(strcol(1), strcol(2))) lc rgb "#4C72B0" title "weights", \
     '' using 4 lc rgb "#55A868" title "gradients", \
     '' using 5 lc rgb "#C44E52" title "optimizer state", \
     '' using 6 lc rgb "#DD8452" title "activations", \
     '' using 7 lc rgb "#8172B3" title "overhead", \
     '' using 0:8:(sprintf("%.1f%s", $8, $8 > $9 ? " (over)" : "")) \
        with labels offset 0,0.7 notitle, \
     @cap
