# Per-stage timeline (Gantt) of one training step from
#   llmsim train ... --timeline step.csv
# Usage: gnuplot -e "in='step.csv'; out='timeline.png'" plots/timeline.gp
#   (term='svg' writes SVG instead of PNG)
if (!exists("in")) in = 'step.csv'
if (!exists("out")) out = 'timeline.png'
if (!exists("title")) title = 'one training step'
if (!exists("term")) term = 'png'
if (term ne 'png' && term ne 'svg') { exit error "term='" . term . "': expected 'png' or 'svg'" }
if (term eq 'svg') {
    set terminal svg size 1200,420 font "sans,10" dynamic background rgb "white"
} else {
    set terminal pngcairo size 1200,420 font "sans,10"
}
set output out
set datafile separator ","
set title title
set xlabel "time (ms)"
set ylabel "pipeline stage"
stats in every ::1 using 1 nooutput
set yrange [STATS_max + 0.6:-0.6]  # stage 0 on top
set ytics 0, 1
set grid xtics
set key outside right top
set style fill solid 0.9 border lc rgb "white"
# forward blue, backward orange; the box spans [start, end] on its stage row
plot in every ::1 using (strcol(2) eq "forward" ? (column(5)+column(6))/2 : 1/0):1:((column(6)-column(5))/2):(0.35) \
       with boxxyerror lc rgb "#4C72B0" title "forward" \
       , in every ::1 using (strcol(2) eq "backward" ? (column(5)+column(6))/2 : 1/0):1:((column(6)-column(5))/2):(0.35) \
       with boxxyerror lc rgb "#DD8452" title "backward"
