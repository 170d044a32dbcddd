# Baseline against traced (sourced by bench/run).
#
#   measure_config SHAPE CONFIG
#       BENCH_ROUNDS pgbench runs on the current cluster, each with a
#       baseline, a traced and a second baseline window (bench/pgbench.sh).
#       Each run gives a TPS ratio, traced / mean of its two baselines, and
#       a p99 latency ratio the same way; the summary is their median and
#       range over the runs. A tracer that cannot render or attach is
#       recorded with its reason after the first try, not retried.
# Raw windows are appended to $BENCH_WORK/runs.csv, summaries to
# $BENCH_WORK/overhead.csv (columns: see OVERHEAD_HEADER; the
# status, which may hold commas, comes last). BENCH_BACKENDS
# labels the rows with the number of connected backends.

RUNS_HEADER=major,backends,shape,config,round,side,tps,p99_ms,attach_s,status
OVERHEAD_HEADER=major,backends,shape,config,pairs,base_tps,tps_ratio,tps_ratio_min,tps_ratio_max,base_p99_ms,p99_ratio,p99_ratio_min,p99_ratio_max,status

measure_config() {
	local shape=$1 config=$2 r side status failed= dir=$BENCH_WORK/run
	local b1 p1 t pt b2 p2
	local -a base_tps=() tps_ratios=() p99_ratios=() base_p99=()
	for ((r = 1; r <= BENCH_ROUNDS; r++)); do
		rm -rf "$dir"
		pgbench_run "$shape" "$config" "$dir"
		read -r b1 p1 t pt b2 p2 status <<<"$RUN_RESULT"
		for side in "baseline $b1 $p1" "traced $t $pt" "baseline $b2 $p2"; do
			set -- $side
			printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,"%s"\n' "$CL_MAJOR" "$BENCH_BACKENDS" "$shape" \
				"$config" "$r" "$1" "$2" "$3" "$RUN_READY" "${status//\"/\'}" >>"$BENCH_WORK/runs.csv"
		done
		if [[ $status != ok ]]; then
			failed=$status
			break
		fi
		base_tps+=("$(awk -v a="$b1" -v b="$b2" 'BEGIN { printf "%.1f", (a + b) / 2 }')")
		base_p99+=("$(awk -v a="$p1" -v b="$p2" 'BEGIN { printf "%.3f", (a + b) / 2 }')")
		tps_ratios+=("$(awk -v t="$t" -v a="$b1" -v b="$b2" 'BEGIN { printf "%.4f", 2 * t / (a + b) }')")
		p99_ratios+=("$(awk -v t="$pt" -v a="$p1" -v b="$p2" 'BEGIN { printf "%.4f", 2 * t / (a + b) }')")
	done
	local n=${#tps_ratios[@]}
	if [[ -n $failed ]]; then
		status=$failed
	elif ((n == 0)); then
		status="no valid run (see runs.csv)"
	else
		status=ok
	fi
	local row="$CL_MAJOR,$BENCH_BACKENDS,$shape,$config,$n"
	if ((n > 0)) && [[ -z $failed ]]; then
		row+=",$(printf '%s\n' "${base_tps[@]}" | stat_median)"
		row+=",$(printf '%s\n' "${tps_ratios[@]}" | stat_median)"
		row+=",$(printf '%s\n' "${tps_ratios[@]}" | stat_min),$(printf '%s\n' "${tps_ratios[@]}" | stat_max)"
		row+=",$(printf '%s\n' "${base_p99[@]}" | stat_median)"
		row+=",$(printf '%s\n' "${p99_ratios[@]}" | stat_median)"
		row+=",$(printf '%s\n' "${p99_ratios[@]}" | stat_min),$(printf '%s\n' "${p99_ratios[@]}" | stat_max)"
	else
		row+=",,,,,,,,"
	fi
	printf '%s,"%s"\n' "$row" "${status//\"/\'}" >>"$BENCH_WORK/overhead.csv"
	bench_log "$shape $config: $status (attach ${RUN_READY} s), TPS ratio ${tps_ratios[*]:-none}, p99 ratio ${p99_ratios[*]:-none}"
}
