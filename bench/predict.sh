# Does the calibration predict real overhead? (sourced by bench/run)
#
# A traced backend runs each probe's handler in line, so every transaction
# gets longer by (events per transaction x cost per event). With C clients
# each waiting for its transaction, time per transaction per client is
# C / TPS, hence
#     predicted TPS ratio = 1 / (1 + events_per_txn x cost x TPS_base / C)
# (on a CPU-bound box with as many cores as clients, the extra CPU gives
# the same figure). Two checks, each with its own probe type:
#   xid-rate on TPC-B            hardware watchpoint on nextXid
#   usdt-query-hist on -S        USDT query__start + query__done
#   wait-watchpoints on -S       hardware watchpoints on wait_event_info
#
#   predict_collect   on the current cluster: counts the events of each
#                     check's probes per transaction, in a pgbench run of
#                     its own (a counting program printing every second:
#                     median count per second / TPS of that run).
#   predict_write OUT combines them with probe-cost.csv and overhead.csv.

predict_collect() {
	local addr
	echo "shape,config,probe,events_per_txn" >"$BENCH_WORK/events.csv"
	addr=$("$PGBT_GEN" --scripts-dir "$BENCH_DIR/templates" -p "$CL_PID" nextxid 2>/dev/null |
		sed -n 's/^nextxid=//p')
	[[ -n $addr ]] && _count_events tpcb script:xid-rate watchpoint \
		"watchpoint:$addr:8:w /curtask->real_parent->tgid == $CL_PID/"
	_count_events select peer:usdt-query-hist usdt \
		"usdt:$CL_BIN/postgres:postgresql:query__start, usdt:$CL_BIN/postgres:postgresql:query__done"
	_count_events select peer:wait-watchpoints watchpoint countpeer:wait-watchpoints
}

_count_events() {
	local shape=$1 config=$2 probe=$3 spec=$4 dir=$BENCH_WORK/count tps status per_s
	rm -rf "$dir"
	[[ $spec == countpeer:* ]] || spec=count:$spec
	pgbench_run "$shape" "$spec" "$dir"
	read -r tps _ _ status <<<"$RUN_RESULT"
	if [[ $status != ok ]]; then
		bench_log "predict: counting $probe events on $shape failed: $status"
		return 0
	fi
	# Whole seconds only: the first and last intervals are partial.
	per_s=$(awk '/^@n: / { print $2 }' "$dir/trace.out" | sed '1d;$d' | stat_median)
	printf '%s,%s,%s,%s\n' "$shape" "$config" "$probe" \
		"$(awk -v n="$per_s" -v t="$tps" 'BEGIN { printf "%.3f", n / t }')" >>"$BENCH_WORK/events.csv"
	bench_log "predict: $config on $shape: $per_s $probe events/s at $tps TPS"
}

predict_write() {
	local out=$1
	echo "shape,config,probe,events_per_txn,cost_us,base_tps,predicted_tps_ratio,measured_tps_ratio,measured_min,measured_max,factor,verdict" >"$out"
	[[ -f $BENCH_WORK/events.csv && -f $BENCH_WORK/probe-cost.csv ]] || return 0
	awk -F, -v clients="$BENCH_CLIENTS" -v major="$MAIN_MAJOR" '
		FILENAME ~ /probe-cost/ && FNR > 1 && $2 != "" { cost[$1] = $2 }
		FILENAME ~ /overhead/ && FNR > 1 && $1 == major && $2 == clients && $7 != "" {
			key = $3 SUBSEP $4; base[key] = $6; ratio[key] = $7; lo[key] = $8; hi[key] = $9 }
		FILENAME ~ /events/ && FNR > 1 {
			key = $1 SUBSEP $2
			if (!($3 in cost) || !(key in ratio)) next
			c = cost[$3]; pred = 1 / (1 + $4 * c * 1e-6 * base[key] / clients)
			ps = 1 - pred; ms = 1 - ratio[key]
			# How far apart the predicted and measured slowdowns are.
			f = (ps > 0 && ms > 0) ? (ps > ms ? ps / ms : ms / ps) : -1
			if (pred >= lo[key] && pred <= hi[key]) v = "agrees: inside the measured range"
			else if (f > 0 && f <= 2) v = "within 2x"
			else if (f > 0) v = sprintf("off by %.1fx", f)
			else v = "disagrees: no measured slowdown"
			printf "%s,%s,%s,%s,%s,%s,%.4f,%s,%s,%s,%s,%s\n", $1, $2, $3, $4, c, base[key], pred,
				ratio[key], lo[key], hi[key], (f < 0 ? "n/a" : sprintf("%.2f", f)), v
		}' "$BENCH_WORK/probe-cost.csv" "$BENCH_WORK/overhead.csv" "$BENCH_WORK/events.csv" >>"$out"
}
