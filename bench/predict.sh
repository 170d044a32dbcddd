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

# The noise floor, the rows predict_write compares and waits (issue 3's
# target: at most 3% on -S, 1% on TPC-B): measured with BENCH_ROUNDS_CHECK
# runs.
predict_checked() {
	case "$1 $2" in
	*" none" | *" script:waits" | "tpcb script:xid-rate" | "select peer:usdt-query-hist" | "select peer:wait-watchpoints") return 0 ;;
	esac
	return 1
}

predict_collect() {
	local addr
	echo "shape,config,probe,events_per_txn,count_tps_ratio" >"$BENCH_WORK/events.csv"
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
	local b1 b2
	read -r b1 _ tps _ b2 _ status <<<"$RUN_RESULT"
	if [[ $status != ok ]]; then
		bench_log "predict: counting $probe events on $shape failed: $status"
		return 0
	fi
	# Whole seconds only: the first and last intervals are partial.
	per_s=$(awk '/^@n: / { print $2 }' "$dir/trace.out" | sed '1d;$d' | stat_median)
	# The counting run is an A-B-A run too: its TPS ratio is a second
	# measurement of the bare probe's cost (the program only counts).
	printf '%s,%s,%s,%s,%s\n' "$shape" "$config" "$probe" \
		"$(awk -v n="$per_s" -v t="$tps" 'BEGIN { printf "%.3f", n / t }')" \
		"$(traced_ratio "$tps" "$b1" "$b2")" >>"$BENCH_WORK/events.csv"
	bench_log "predict: $config on $shape: $per_s $probe events/s at $tps TPS (baselines $b1, $b2; BPF $RUN_BPF ns/s runs/s)"
}

# Two predictions per check, from build/calibrate's probe-cost.csv:
#   hot:    events/txn x the hot-loop cost (the old model: a lower bound)
#   server: events/txn x the cost per event in calibrate's client/server
#           workload + round trips/txn x the cost per round trip of the
#           probe type merely being attached ("armed"; 0 if not measured)
# predicted TPS ratio = 1 / (1 + extra us per transaction x TPS / clients).
# Round trips (statements) per transaction: -S sends one SELECT; TPC-B
# sends BEGIN, 3 UPDATEs, a SELECT, an INSERT and END: 7.
# factor compares the server prediction with the measurement.
predict_write() {
	local out=$1
	echo "shape,config,probe,events_per_txn,hot_us,server_us,armed_us_per_rt,rts_per_txn,base_tps,predicted_hot,predicted_tps_ratio,measured_tps_ratio,measured_min,measured_max,factor,count_tps_ratio,verdict" >"$out"
	[[ -f $BENCH_WORK/events.csv && -f $BENCH_WORK/probe-cost.csv ]] || return 0
	awk -F, -v clients="$BENCH_CLIENTS" -v major="$MAIN_MAJOR" '
		FILENAME ~ /probe-cost/ && FNR > 1 && $2 != "" { hot[$1] = $2; srv[$1] = $8; armed[$1] = $12 }
		FILENAME ~ /overhead/ && FNR > 1 && $1 == major && $2 == clients && $7 != "" {
			key = $3 SUBSEP $4; base[key] = $6; ratio[key] = $7; lo[key] = $8; hi[key] = $9 }
		FILENAME ~ /events/ && FNR > 1 {
			key = $1 SUBSEP $2
			if (!($3 in hot) || srv[$3] == "" || !(key in ratio)) next
			rts = ($1 == "select") ? 1 : 7
			a = (armed[$3] == "" || armed[$3] < 0) ? 0 : armed[$3]
			phot = 1 / (1 + $4 * hot[$3] * 1e-6 * base[key] / clients)
			pred = 1 / (1 + ($4 * srv[$3] + rts * a) * 1e-6 * base[key] / clients)
			ps = 1 - pred; ms = 1 - ratio[key]
			# How far apart the predicted and measured slowdowns are.
			f = (ps > 0 && ms > 0) ? (ps > ms ? ps / ms : ms / ps) : -1
			inside = (pred >= lo[key] && pred <= hi[key])
			if (f > 0 && f <= 2) v = inside ? "within 2x, inside the measured range" : "within 2x"
			else if (f > 0) v = sprintf("off by %.1fx%s", f, inside ? " (inside the range of the runs)" : "")
			else if (inside) v = "no slowdown measured; the prediction is inside the range of the runs"
			else v = "disagrees: no measured slowdown"
			printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%.4f,%.4f,%s,%s,%s,%s,%s,\"%s\"\n", $1, $2, $3, $4, hot[$3], srv[$3], a, rts,
				base[key], phot, pred, ratio[key], lo[key], hi[key], (f < 0 ? "n/a" : sprintf("%.2f", f)), $5, v
		}' "$BENCH_WORK/probe-cost.csv" "$BENCH_WORK/overhead.csv" "$BENCH_WORK/events.csv" >>"$out"
}
