# The overhead chart: one group of bars per tracer, TPS change of traced
# runs against their paired baselines (median; whiskers: min..max over the
# runs), for pgbench -S, TPC-B, and -S with ~200 connected backends.
# gnuplot -e "datafile='...'; outfile='....png'; subtitle='...'; noise_lo=-5; noise_hi=5" bench/plot.gp
# The grey band is the range of the "none" rows (baseline against baseline):
# bars inside it are indistinguishable from the machine's noise.
set terminal pngcairo size 1400,760 font "sans,11" background rgb "white"
set output outfile
set title "Observer effect: TPS change while tracing (pgbench, 2 clients)\n{/*0.75 ".subtitle."}"
set style data histogram
set style histogram errorbars gap 1.5 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "TPS change vs baseline (%)"
set yrange [*:5<*]
set grid ytics lc rgb "#dddddd"
set xtics rotate by -30 left nomirror
set ytics nomirror
set key outside top center horizontal samplen 2
set border 3
set xzeroaxis lt -1 lw 1
set datafile missing "nan"
set bmargin 11
set xlabel "below 0: the tracer costs throughput.  whiskers: min..max over the runs (traced window / its baselines).  grey band: baseline against baseline (the noise)" font ",10" tc rgb "#555555" offset 0,-1
if (exists("noise_lo") && exists("noise_hi")) \
    set object 1 rect from graph 0, first noise_lo to graph 1, first noise_hi fc rgb "#e4e4e4" fs solid 1.0 noborder behind
plot datafile using 2:3:4:xtic(1) title "pgbench -S (select only)" lc rgb "#4477aa", \
     ''       using 5:6:7 title "pgbench TPC-B" lc rgb "#ee6677", \
     ''       using 8:9:10 title "-S with 200 connected backends" lc rgb "#228833"
