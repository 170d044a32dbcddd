# Results: CSV files, results.md and the chart (sourced by bench/run).
#
#   report_write   copies the CSV files of $BENCH_WORK to $BENCH_RESULTS,
#                  writes results.md from them and draws overhead.png with
#                  bench/plot.gp.
# Ratios are shown as changes: TPS -8.1% means the traced window did 8.1%
# fewer transactions per second than the baseline windows around it; p99
# +12% means their 99th percentile latency was 12% higher. In brackets:
# the smallest and largest change over the runs.

report_write() {
	local r=$BENCH_RESULTS f
	mkdir -p "$r"
	[[ -f $BENCH_WORK/events.csv ]] && predict_write "$BENCH_WORK/prediction.csv"
	if [[ $(cd "$r" && pwd) != $(cd "$BENCH_WORK" && pwd) ]]; then
		for f in machine runs overhead probe-cost exit-tax gen-speed events prediction; do
			[[ -f $BENCH_WORK/$f.csv ]] && cp "$BENCH_WORK/$f.csv" "$r/$f.csv"
		done
	fi
	report_md >"$r/results.md"
	report_plot_data >"$r/overhead.dat"
	if command -v gnuplot >/dev/null; then
		gnuplot -e "datafile='$r/overhead.dat'; outfile='$r/overhead.png'; subtitle='$(report_subtitle)'; $(report_noise)" \
			"$BENCH_DIR/plot.gp" 2>"${TMPDIR:-/tmp}/pgbt-bench-gnuplot.err" ||
			bench_log "gnuplot failed: $(head -n3 "${TMPDIR:-/tmp}/pgbt-bench-gnuplot.err")"
	else
		bench_log "no gnuplot: no chart"
	fi
}

# The grey band of the chart: the range of the "none" rows.
report_noise() {
	awk -F, -v ma="$MAIN_MAJOR" 'NR > 1 && $1 == ma && $4 == "none" && $8 != "" {
		if (lo == "" || $8 < lo) lo = $8; if (hi == "" || $9 > hi) hi = $9 }
		END { if (lo != "") printf "noise_lo=%.2f; noise_hi=%.2f", (lo - 1) * 100, (hi - 1) * 100 }' "$BENCH_WORK/overhead.csv"
}

_machine() { awk -F, -v k="$1" '$1 == k { sub(/^[^,]*,/, ""); gsub(/"/, ""); print }' "$BENCH_WORK/machine.csv"; }

report_subtitle() {
	printf '%s, %s CPUs, kernel %s, PostgreSQL %s, bpftrace %s, %s' \
		"$(_machine cpu)" "$(_machine nproc)" "$(_machine kernel)" \
		"$(_machine postgresql | awk '{ print $1 }')" "$(_machine bpftrace)" "$(_machine date)"
}

# Change in % with the range: "RATIO LO HI" -> "-8.1% (-9.0..-7.2)".
_pct() {
	awk -v m="$1" -v lo="$2" -v hi="$3" 'BEGIN {
		if (m == "") { print "-"; exit }
		printf "%+.1f%% (%+.1f..%+.1f)", (m - 1) * 100, (lo - 1) * 100, (hi - 1) * 100 }'
}

# Field N (1-based) of the overhead row for MAJOR BACKENDS SHAPE CONFIG;
# N=status gives the status (the last field, which may hold commas).
_ov() {
	awk -F, -v ma="$1" -v b="$2" -v s="$3" -v c="$4" -v n="$5" '
		$1 == ma && $2 == b && $3 == s && $4 == c {
			if (n == "status") { for (i = 1; i < 18; i++) sub(/^[^,]*,/, ""); gsub(/"/, ""); print }
			else print $n; exit }' "$BENCH_WORK/overhead.csv"
}

_cell() {   # MAJOR BACKENDS SHAPE CONFIG COLUMN(tps|p99)
	local base=7
	[[ $5 == p99 ]] && base=11
	local m lo hi st
	st=$(_ov "$1" "$2" "$3" "$4" status)
	[[ -z $st ]] && { echo "not run"; return; }
	m=$(_ov "$1" "$2" "$3" "$4" $base)
	if [[ -z $m ]]; then
		[[ $st == "cannot run"* ]] && echo "cannot run (below)" || echo "failed (below)"
		return
	fi
	lo=$(_ov "$1" "$2" "$3" "$4" $((base + 1)))
	hi=$(_ov "$1" "$2" "$3" "$4" $((base + 2)))
	_pct "$m" "$lo" "$hi"
}

_label() {
	case $1 in
	none) echo "none (baseline against baseline: the noise floor)" ;;
	script:*/*) local c=${1%%/*} p=${1#*/}; p=${p//\// }; echo "$c ${p//=BACKEND/=(one pgbench backend)}" ;;
	*) echo "$1" ;;
	esac
}

# The TPS cell, in bold when at least 2 runs were kept and every one of
# them lost more throughput than any run of the noise floor (the "none" row
# of the same shape and backends).
_tps_cell() {   # MAJOR BACKENDS SHAPE CONFIG
	local cell lo hi nlo nhi
	cell=$(_cell "$1" "$2" "$3" "$4" tps)
	lo=$(_ov "$1" "$2" "$3" "$4" 8) hi=$(_ov "$1" "$2" "$3" "$4" 9)
	nlo=$(_ov "$1" "$2" "$3" none 8) nhi=$(_ov "$1" "$2" "$3" none 9)
	if [[ $4 != none && -n $lo && -n $nlo ]] && (($(_ov "$1" "$2" "$3" "$4" 5) >= 2)) &&
		awk -v hi="$hi" -v nlo="$nlo" 'BEGIN { exit !(hi < nlo) }'; then
		echo "**$cell**"
	else
		echo "$cell"
	fi
}

# BPF time of the traced window as a share of all CPUs, and per program run.
_bpf_cell() {   # MAJOR BACKENDS SHAPE CONFIG
	local pct ns
	pct=$(_ov "$1" "$2" "$3" "$4" 15) ns=$(_ov "$1" "$2" "$3" "$4" 16)
	if [[ -z $pct ]]; then echo "-"; else awk -v p="$pct" -v n="$ns" 'BEGIN { printf "%.2f%% (%d ns/run)", p, n }'; fi
}

_configs() { awk -F, -v ma="$1" -v b="$2" 'NR > 1 && $1 == ma && $2 == b && !seen[$4]++ { print $4 }' "$BENCH_WORK/overhead.csv"; }

report_md() {
	local ma=$MAIN_MAJOR b=$BENCH_CLIENTS big=$((BENCH_CLIENTS + BENCH_IDLE)) c
	echo "# pgbt bench results"
	echo
	echo "Written by \`make bench\` (bench/run; see bench/README.md for what each number means)."
	echo
	echo "| machine | |"
	echo "|---|---|"
	awk -F, 'NR >= 1 { k = $1; sub(/^[^,]*,/, ""); gsub(/"/, ""); printf "| %s | %s |\n", k, $0 }' "$BENCH_WORK/machine.csv"
	echo
	echo "## Observer effect (PostgreSQL $ma, $b pgbench clients)"
	echo
	echo "Change of the traced window against the mean of the two baseline windows around it in the same pgbench"
	echo "run: median over the runs (smallest..largest). Compare with the first row, the same measurement with"
	echo "nothing attached."
	echo "Baseline: $(_ov "$ma" "$b" select "$(_configs "$ma" "$b" | head -n1)" 6) TPS on -S,"
	echo "$(_ov "$ma" "$b" tpcb "$(_configs "$ma" "$b" | head -n1)" 6) TPS on TPC-B (medians of the first config's baselines)."
	echo
	echo "| tracer | -S TPS | -S p99 latency | -S BPF time | TPC-B TPS | TPC-B p99 latency | TPC-B BPF time | -S TPS, $big backends |"
	echo "|---|---|---|---|---|---|---|---|"
	for c in $(_configs "$ma" "$b"); do
		printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(_label "$c")" \
			"$(_tps_cell "$ma" "$b" select "$c")" "$(_cell "$ma" "$b" select "$c" p99)" "$(_bpf_cell "$ma" "$b" select "$c")" \
			"$(_tps_cell "$ma" "$b" tpcb "$c")" "$(_cell "$ma" "$b" tpcb "$c" p99)" "$(_bpf_cell "$ma" "$b" tpcb "$c")" \
			"$( ((big > b)) && _tps_cell "$ma" "$big" select "$c" || echo "not run")"
	done
	echo
	echo "Bold: in every run (at least 2) the tracer cost more throughput than in any run of the noise floor:"
	echo "a cost this bench can see. Not bold: smaller than the noise of this machine, or not measured often enough."
	echo "BPF time: run time of the tracer's BPF programs during the traced window (kernel.bpf_stats_enabled),"
	echo "as a share of all CPUs, and per program run: the part of the cost that noise cannot hide. A probe"
	echo "costs more than its BPF time (the trap, a uprobe's single-step, a watchpoint's exception), never less."
	awk -F, -v ma="$ma" 'NR > 1 && $1 == ma { n++; if ($17 > 0) r += $17; if ($14 > o) o = $14 }
		END { printf "Other load: at most %.1f%% of the CPUs used outside the bench in a kept window; %d runs measured again\n", o, r
		      print "because of outside load or someone else'"'"'s bpftrace (runs.csv, status \"disturbed\")." }' "$BENCH_WORK/overhead.csv"
	echo
	awk -F, -v ma="$ma" 'NR > 1 && $1 == ma && $7 == "" {
		st = $0; for (i = 1; i < 18; i++) sub(/^[^,]*,/, "", st); gsub(/"/, "", st)
		if (!seen[$4 st]++) printf "- %s (%s, %s backends): %s\n", $4, $3, $2, st }' "$BENCH_WORK/overhead.csv"
	local dbg=${BENCH_DEBUG:-18}
	if [[ $ma != "$dbg" ]] && [[ -n $(_configs "$dbg" "$b") ]]; then
		echo
		echo "## The by-hand method needs DWARF: on PostgreSQL $dbg (debug build), TPC-B"
		echo
		echo "| tracer | TPC-B TPS | TPC-B p99 latency |"
		echo "|---|---|---|"
		for c in $(_configs "$dbg" "$b"); do
			printf '| %s | %s | %s |\n' "$c" "$(_cell "$dbg" "$b" tpcb "$c" tps)" "$(_cell "$dbg" "$b" tpcb "$c" p99)"
		done
		echo
		echo "Same probe, same predicate cost: the difference between the two rows is the noise of the machine."
	fi
	if [[ -s $BENCH_WORK/probe-cost.csv ]]; then
		echo
		echo "## Cost of one event, by probe type (build/calibrate)"
		echo
		echo "us per event. hot loop: the probe fires in a tight loop, the cheapest it gets (median [min..max] of 3 cycles);"
		echo "watchpoint-shm: the watched counter is in a shared mapping written by both processes, as nextXid is;"
		echo "server: it fires once per request in a client/server pair on two CPUs talking over pipes, like pgbench"
		echo "and a backend (median [quartiles] of 120 block pairs; round trip: the pair's time per request without"
		echo "the event); armed: extra time per round trip with the probe attached where it never fires (median"
		echo "[quartiles] of 6 attach cycles)."
		echo
		echo "| probe | hot loop | server | round trip us | armed, per round trip | what |"
		echo "|---|---|---|---|---|---|"
		awk -F, 'function c(m, lo, hi) { return m == "" ? "failed" : sprintf("%.2f [%.2f..%.2f]", m, lo, hi) }
			NR > 1 { w = $0; for (i = 0; i < 14; i++) sub(/^[^,]*,/, "", w); gsub(/"/, "", w)
			printf "| %s | %s | %s | %s | %s | %s |\n", $1, c($2, $3, $4), c($8, $9, $10),
				($11 == "" ? "" : sprintf("%.1f", $11)), ($12 == "" ? "-" : c($12, $13, $14)), w }' "$BENCH_WORK/probe-cost.csv"
	fi
	if [[ $(wc -l <"$BENCH_WORK/prediction.csv") -gt 1 ]]; then
		echo
		echo "## Predicted against measured (PostgreSQL $ma)"
		echo
		echo "Predicted TPS ratio = 1 / (1 + extra us per transaction x baseline TPS / clients), where extra us ="
		echo "the sum over the tracer's probes of events per transaction x server cost per event, + round trips per"
		echo "transaction x armed cost per round trip of each probe type, where calibrate tells it from zero (lower"
		echo "quartile above 0; else 0). Hot-loop column: events x hot-loop cost only (the model of the first"
		echo "bench). Events: per transaction, by the probe-cost row each event pays (a uprobe"
		echo "by its function's first instruction; uretprobe+shared: the entry breakpoint is a uprobe's too)."
		echo
		echo "| tracer | shape | events/txn by probe type | events/txn | server us/txn | armed us/rt x rts | predicted TPS (hot loop) | predicted TPS | measured TPS | factor | verdict | probes alone (counting run) |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
		awk -F, 'NR > 1 { v = $0; sub(/^[^"]*"/, "", v); sub(/"$/, "", v)
			printf "| %s | %s | %s | %.2f | %.2f | %.2f x %d | %+.1f%% | %+.1f%% | %+.1f%% (%+.1f..%+.1f) | %s | %s | %s |\n",
			$2, $1, $3, $4, $6, $7, $8, ($10 - 1) * 100, ($11 - 1) * 100, ($12 - 1) * 100, ($13 - 1) * 100, ($14 - 1) * 100, $15, v,
			($16 == "" ? "-" : sprintf("%+.1f%%", ($16 - 1) * 100)) }' \
			"$BENCH_WORK/prediction.csv"
		echo
		echo "factor: the larger of predicted/measured and measured/predicted slowdown (target: at most 2);"
		echo "when the prediction falls inside the measured range, the difference is noise. probes alone: the TPS change"
		echo "of the run that counted the events (an A-B-A run whose program only counts): a second measurement."
	fi
	if [[ $(wc -l <"$BENCH_WORK/gen-speed.csv") -gt 1 ]]; then
		echo
		echo "## Generator speed (wall time per run, ms: median, range; peak RSS)"
		echo
		echo "| PostgreSQL | backends | tool | what | runs | median ms | range ms | max RSS MB | status |"
		echo "|---|---|---|---|---|---|---|---|---|"
		awk -F, 'NR > 1 { st = $0; for (i = 0; i < 9; i++) sub(/^[^,]*,/, "", st); gsub(/"/, "", st); gsub(/"/, "", $4)
			if ($6 == "") printf "| %s | %s | %s | %s | 0 | | | | %s |\n", $1, $2, $3, $4, st
			else printf "| %s | %s | %s | %s | %s | %.1f | %.1f..%.1f | %.1f | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 / 1024, st }' \
			"$BENCH_WORK/gen-speed.csv"
	fi
	if [[ -n $(_machine bench_time) ]]; then
		echo
		echo "Total time of bench/run: $(_machine bench_time)."
	fi
}

# For the chart: one line per config, TPS change in % (median, low, high)
# for -S, TPC-B and -S with many backends; "nan" where not measured.
report_plot_data() {
	local ma=$MAIN_MAJOR b=$BENCH_CLIENTS big=$((BENCH_CLIENTS + BENCH_IDLE)) c shape bk m lo hi st label
	echo "# config s s_lo s_hi tpcb tpcb_lo tpcb_hi s200 s200_lo s200_hi"
	for c in $(_configs "$ma" "$b"); do
		label=${c#*:}
		[[ $c == peer:* ]] && label="$label (peer)"
		[[ $c == none ]] && label="none: noise floor"
		st=$(_ov "$ma" "$b" select "$c" status)
		[[ $st != ok ]] && st=$(_ov "$ma" "$b" tpcb "$c" status)
		if [[ $st == "cannot run"* ]]; then label="$label (cannot run)"
		elif [[ $st != ok ]]; then label="$label (failed)"; fi
		printf '"%s"' "$label"
		for shape in "select $b" "tpcb $b" "select $big"; do
			read -r shape bk <<<"$shape"
			m=$(_ov "$ma" "$bk" "$shape" "$c" 7)
			lo=$(_ov "$ma" "$bk" "$shape" "$c" 8)
			hi=$(_ov "$ma" "$bk" "$shape" "$c" 9)
			if [[ -n $m ]]; then
				awk -v m="$m" -v l="$lo" -v h="$hi" 'BEGIN { printf " %.2f %.2f %.2f", (m - 1) * 100, (l - 1) * 100, (h - 1) * 100 }'
			else
				printf ' nan nan nan'
			fi
		done
		echo
	done
}
