# Scaling efficiency against GPU count, one line per interconnect, from
# plots/scaling.sh's table of a `llmsim sweep` over nodes:
#   ./llmsim sweep configs/sweep-scaling-interconnect.cfg
#   sh plots/scaling.sh plots/scaling-llama2-13b-dgx-a100.csv scaling.dat
# Usage: gnuplot -e "in='scaling.dat'; out='scaling.png'" plots/scaling.gp
#   (title='...' sets the title; term='svg' writes SVG instead of PNG)
# Colour follows the InfiniBand speed (red slowest, blue fastest); the
# fastest NVLink in the table is drawn solid, slower ones dashed.
if (!exists("in")) in = 'scaling.dat'
if (!exists("out")) out = 'scaling.png'
if (!exists("title")) title = 'weak scaling: tokens/s per GPU against ideal linear scaling'
if (!exists("term")) term = 'png'
if (term ne 'png' && term ne 'svg') { exit error "term='" . term . "': expected 'png' or 'svg'" }
if (term eq 'svg') {
    set terminal svg size 960,620 font "sans,10" dynamic background rgb "white"
} else {
    set terminal pngcairo size 960,620 font "sans,10"
}
set output out
# each series' first line is a header whose 2nd column is its name
set datafile columnheaders
stats in using 1 nooutput
n = STATS_blocks
gmin = STATS_min; gmax = STATS_max
stats in using 4 nooutput
nvmax = STATS_max
stats in using 5 nooutput
ibmin = STATS_min; ibmax = STATS_max
array nv[n]; array ib[n]
do for [i = 1:n] {
    stats in index i-1 using 4 nooutput
    nv[i] = STATS_max
    stats in index i-1 using 5 nooutput
    ib[i] = STATS_max
}
# the colour scale: log2 of the IB speed, or the series number without one
byib = ibmin > 0 && ibmax > ibmin
if (byib) { set cbrange [log(ibmin)/log(2):log(ibmax)/log(2)] } else { set cbrange [1:(n > 1 ? n : 2)] }
cb(i) = byib ? log(ib[i])/log(2) : i
set palette defined (0 "#C44E52", 1 "#DD8452", 2 "#55A868", 3 "#4C72B0")
unset colorbox
dash(i) = (nv[i] > 0 && nv[i] < nvmax) ? 2 : 1
point(i) = (nv[i] > 0 && nv[i] < nvmax) ? 6 : 7

set title title
set xlabel "GPUs"
set ylabel "tokens/s per GPU, % of the fastest smallest run (ideal linear scaling)"
set logscale x 2
set xrange [gmin / 1.15 : gmax * 1.15]
# ticks at the powers of 2 the GPU counts span (8, 16, ..., 256)
set xtics () format "%g"
do for [k = floor(log(gmin)/log(2) + 1e-9) : ceil(log(gmax)/log(2) - 1e-9)] {
    set xtics add (2**k)
}
# from just under the lowest point, in steps of 10%: the spread is the story
stats in using ($2 * 100) nooutput
ylo = floor(STATS_min / 10) * 10 - 5
set yrange [(ylo < 0 ? 0 : ylo) : 105]
set ytics 0, 10, 100 format "%g%%"
set grid
set key below center Left reverse maxcols 4 box samplen 3 spacing 1.1 height 0.6
set bmargin 8
set key title ""
plot for [i = 1:n] in index i-1 using 1:($2 * 100) with linespoints \
       lw 2 dt dash(i) pt point(i) ps 1.1 lc palette cb cb(i) title columnheader(2)
