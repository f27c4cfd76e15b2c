# Timeline (Gantt) of one training step, one row per GPU of the simulated
# data-parallel replica, from
#   llmsim train ... --timeline step.csv
# Usage: gnuplot -e "in='step.csv'; out='timeline.png'" plots/timeline.gp
#   (title='...' sets the title; term='svg' writes SVG instead of PNG)
# Each GPU's row has three bands: its compute stream (forward and backward
# layer by layer, the optimizer, the wait for input); the communication the
# compute stream waits for between layers (tensor, context and expert
# parallel, ZeRO-3 gathers) and its communication stream (pipeline sends,
# the data-parallel gradient reduction and parameter gather), both drawn
# with an outline so that one layer's slice shows.  Columns are the CSV's:
#   gpu,row,stage,stream,kind,microbatch,chunk,layer,start_ms,end_ms
if (!exists("in")) in = 'step.csv'
if (!exists("out")) out = 'timeline.png'
if (!exists("title")) title = 'one training step'
if (!exists("term")) term = 'png'
if (term ne 'png' && term ne 'svg') { exit error "term='" . term . "': expected 'png' or 'svg'" }
set datafile separator ","
stats in every ::1 using 2 nooutput
rmax = STATS_max
h = 170 + 70 * (rmax + 1)
if (term eq 'svg') {
    set terminal svg size 1200,h font "sans,10" dynamic background rgb "white"
} else {
    set terminal pngcairo size 1200,h font "sans,10"
}
set output out
set title title
set xlabel "time (ms)"
set ylabel "GPU of the replica (stage)"
# each row labelled with its GPU's rank and stage
set ytics () 
do for [r = 0:rmax] {
    stats in every ::1 using ($2 == r ? $1 : NaN) nooutput
    g = STATS_min
    stats in every ::1 using ($2 == r ? $3 : NaN) nooutput
    set ytics add (sprintf("GPU %d (stage %d)", g, STATS_min) r)
}
set yrange [rmax + 0.6 : -0.6]  # the first stage's GPUs on top
set grid xtics
set key outside right top Left reverse
kinds = "forward backward optimizer input-wait tp cp ep fsdp pp dp dp-gather"
colours = "0x4C72B0 0xDD8452 0x222222 0xCCCCCC 0xC44E52 0x8172B3 0x937860 0x8C8C8C 0x55A868 0x64B5CD 0x1B7F79"
labels = "forward backward optimizer 'input wait' 'TP (exposed)' 'CP (exposed)' 'EP (exposed)' 'ZeRO-3 gather/scatter (exposed)' 'PP send' 'DP gradient reduction' 'DP parameter gather'"
kindno(k) = sum [i = 1:words(kinds)] (word(kinds, i) eq k ? i : 0)
colour(k) = kindno(k) > 0 ? int(word(colours, kindno(k))) : 0xFF00FF
# the band of a kind within its row: compute, exposed communication, stream
band(k, s) = s eq "comm" ? 2 : (kindno(k) >= 5 && kindno(k) <= 8) ? 1 : 0
y0(b) = b == 0 ? -0.42 : b == 1 ? -0.06 : 0.1
y1(b) = b == 0 ? -0.08 : b == 1 ? 0.06 : 0.38
yc(c) = column(2) + (y0(band(strcol(5), strcol(4))) + y1(band(strcol(5), strcol(4)))) / 2
yh(c) = (y1(band(strcol(5), strcol(4))) - y0(band(strcol(5), strcol(4)))) / 2
plot in every ::1 using ((column(9) + column(10)) / 2):(yc(0)):((column(10) - column(9)) / 2):(yh(0)):(colour(strcol(5))) \
        with boxxyerror lc rgb variable fs solid 1.0 noborder notitle, \
     in every ::1 using (band(strcol(5), strcol(4)) >= 1 ? (column(9) + column(10)) / 2 : NaN):(yc(0)):((column(10) - column(9)) / 2):(yh(0)):(colour(strcol(5))) \
        with boxxyerror lc rgb variable fs solid 1.0 border notitle, \
     for [i = 1:words(kinds)] keyentry with boxes lc rgb int(word(colours, i)) fs solid 1.0 title word(labels, i)
