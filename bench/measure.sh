# Baseline against traced, in pairs (sourced by bench/run).
#
#   measure_config SHAPE CONFIG
#       BENCH_ROUNDS pairs of pgbench runs on the current cluster, the
#       order alternating (A B, B A, A B ...) so a slow drift of the machine
#       does not favour either side. Each pair gives a TPS ratio
#       (traced/baseline) and a p99 latency ratio; the summary is their
#       median and range. A tracer that cannot render or attach is recorded
#       with its reason after the first try, not retried. A tracer that
#       attaches too slowly for the window (big programs take bpftrace 0.17
#       several seconds) gets the round again with a warm-up long enough,
#       for both sides of the pair, up to twice.
# Raw runs are appended to $BENCH_WORK/runs.csv, summaries to
# $BENCH_WORK/overhead.csv (columns: see OVERHEAD_HEADER; the
# status, which may hold commas, comes last). BENCH_BACKENDS
# labels the rows with the number of connected backends.

RUNS_HEADER=major,backends,shape,config,round,side,tps,p99_ms,window_s,status
OVERHEAD_HEADER=major,backends,shape,config,pairs,base_tps,tps_ratio,tps_ratio_min,tps_ratio_max,base_p99_ms,p99_ratio,p99_ratio_min,p99_ratio_max,status

measure_config() {
	local shape=$1 config=$2 r side sides tps p99 win status
	local -a base_tps=() tps_ratios=() p99_ratios=() base_p99=()
	local failed= dir=$BENCH_WORK/run warm=$BENCH_WARMUP retries=0 redo
	for ((r = 1; r <= BENCH_ROUNDS; r++)); do
		redo=
		local b_tps= b_p99= t_tps= t_p99=
		sides="baseline traced"
		((r % 2 == 0)) && sides="traced baseline"
		for side in $sides; do
			rm -rf "$dir"
			if [[ $side == baseline ]]; then
				BENCH_WARMUP=$warm pgbench_run "$shape" baseline "$dir"
			else
				BENCH_WARMUP=$warm pgbench_run "$shape" "$config" "$dir"
			fi
			read -r tps p99 win status <<<"$RUN_RESULT"
			printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,"%s"\n' "$CL_MAJOR" "$BENCH_BACKENDS" "$shape" \
				"$config" "$r" "$side" "$tps" "$p99" "$win" "${status//\"/\'}" >>"$BENCH_WORK/runs.csv"
			if [[ $side == traced && $status == slow:* ]] && ((retries < 2)); then
				warm=$(awk -v r="$RUN_READY" 'BEGIN { printf "%.1f", r + 1 }')
				retries=$((retries + 1)) redo=1
				bench_log "$config attached after $RUN_READY s: warm-up now $warm s"
				break
			fi
			if [[ $status != ok ]]; then
				[[ $side == traced ]] && failed=$status
				continue
			fi
			if [[ $side == baseline ]]; then b_tps=$tps b_p99=$p99; else t_tps=$tps t_p99=$p99; fi
		done
		if [[ -n $redo ]]; then r=$((r - 1)); continue; fi
		[[ -n $failed ]] && break
		if [[ -n $b_tps && -n $t_tps ]]; then
			base_tps+=("$b_tps") base_p99+=("$b_p99")
			tps_ratios+=("$(awk -v t="$t_tps" -v b="$b_tps" 'BEGIN { printf "%.4f", t / b }')")
			p99_ratios+=("$(awk -v t="$t_p99" -v b="$b_p99" 'BEGIN { printf "%.4f", t / b }')")
		fi
	done
	local n=${#tps_ratios[@]}
	if [[ -n $failed ]]; then
		status=$failed
	elif ((n == 0)); then
		status="no valid pair (see runs.csv)"
	else
		status=ok
	fi
	local row="$CL_MAJOR,$BENCH_BACKENDS,$shape,$config,$n"
	if ((n > 0)); then
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
	bench_log "$shape $config: $status, TPS ratio ${tps_ratios[*]:-none}, p99 ratio ${p99_ratios[*]:-none}"
}
