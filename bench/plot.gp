# The overhead chart: one group of bars per tracer, TPS change of traced
# runs against their paired baselines (median; whiskers: min..max over the
# pairs), for pgbench -S, TPC-B, and -S with ~200 connected backends.
# gnuplot -e "datafile='...'; outfile='....png'; subtitle='...'" bench/plot.gp
set terminal pngcairo size 1200,680 font "sans,11" background rgb "white"
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
set key top right Left reverse samplen 2 box opaque
set border 3
set xzeroaxis lt -1 lw 1
set datafile missing "nan"
set bmargin 9
set xlabel "below 0: the tracer costs throughput.  whiskers: min..max over the baseline/traced pairs.  none: baseline against baseline (the noise)" font ",10" tc rgb "#555555"
plot datafile using 2:3:4:xtic(1) title "pgbench -S (select only)" lc rgb "#4477aa", \
     ''       using 5:6:7 title "pgbench TPC-B" lc rgb "#ee6677", \
     ''       using 8:9:10 title "-S with ~200 idle backends" lc rgb "#228833"
