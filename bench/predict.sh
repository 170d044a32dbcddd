# Does the calibration predict real overhead? (sourced by bench/run)
#
# A traced backend runs each probe's handler in line, so every transaction
# gets longer by the sum over its probes of (events per transaction x cost
# per event). With C clients each waiting for its transaction, time per
# transaction per client is C / TPS, hence
#     predicted TPS ratio = 1 / (1 + extra_us_per_txn x TPS_base / C)
# (on a CPU-bound box with as many cores as clients, the extra CPU gives
# the same figure). The checks, between them every probe type the scripts
# trap with:
#   xid-rate on TPC-B            hardware watchpoint on nextXid
#   locks on -S                  uprobes and uretprobes on the lock manager
#   lwlocks output=all on -S     USDT probes on every LWLock acquisition
#   usdt-query-hist on -S        USDT query__start + query__done
#   wait-watchpoints on -S       hardware watchpoints on wait_event_info
#
#   predict_collect   on the current cluster: counts the events of each
#                     check's attach points per transaction, in a pgbench
#                     run of its own (a counting program printing every
#                     second: median count per second / TPS of that run),
#                     and names each point's probe type (probe_kind).
#   predict_write OUT combines them with probe-cost.csv and overhead.csv.

# The checks: SHAPE CONFIG, one a line.
PREDICT_CHECKS="tpcb script:xid-rate
select script:locks
select script:lwlocks/output=all
select peer:usdt-query-hist
select peer:wait-watchpoints"

# The noise floor, the rows predict_write compares and waits (issue 3's
# target: at most 3% on -S, 1% on TPC-B): measured with BENCH_ROUNDS_CHECK
# runs.
predict_checked() {
	[[ $2 == none || $2 == script:waits ]] || grep -qxF "$1 $2" <<<"$PREDICT_CHECKS"
}

predict_collect() {
	local shape config
	echo "shape,config,point,kind,events_per_txn,count_tps_ratio" >"$BENCH_WORK/events.csv"
	while read -r shape config; do
		_count_events "$shape" "$config"
	done <<<"$PREDICT_CHECKS"
}

_count_events() {
	local shape=$1 config=$2 dir=$BENCH_WORK/count tps status ratio point n
	rm -rf "$dir"
	pgbench_run "$shape" "count:$config" "$dir"
	local b1 b2
	read -r b1 _ tps _ b2 _ status <<<"$RUN_RESULT"
	if [[ $status != ok ]]; then
		bench_log "predict: counting the events of $config on $shape failed: $status"
		return 0
	fi
	# The counting run is an A-B-A run too: its TPS ratio is a second
	# measurement of the bare probes' cost (the program only counts).
	ratio=$(traced_ratio "$tps" "$b1" "$b2")
	_events_per_second "$dir/trace.out" "$dir/points" >"$dir/per-second"
	while read -r point n; do
		printf '%s,%s,%s,%s,%s,%s\n' "$shape" "$config" "$point" "$(probe_kind "$point" "$dir/points")" \
			"$(awk -v n="$n" -v t="$tps" 'BEGIN { printf "%.3f", n / t }')" "$ratio"
	done <"$dir/per-second" >>"$BENCH_WORK/events.csv"
	bench_log "predict: $config on $shape at $tps TPS (baselines $b1, $b2; BPF $RUN_BPF ns/s runs/s)"
}

# Median events per second of each attach point in a counting program's
# OUT ("--", then "@n[POINT]: N" lines, every second; the first second is
# left out when there are more, as attaching may take part of it). Writes
# the points to POINTS, one per line, and prints "POINT MEDIAN" lines.
_events_per_second() {
	local out=$1 points=$2
	awk '/^--$/ { s++; next } match($0, /^@n\[.*\]: [0-9]+$/) {
		p = $0; sub(/^@n\[/, "", p); sub(/\]: [0-9]+$/, "", p); print s, p, $NF }' "$out" >"$out.by-second"
	awk '{ print $2 }' "$out.by-second" | sort -u >"$points"
	local last point
	last=$(awk 'END { print $1 + 0 }' "$out.by-second")
	while read -r point; do
		# A second without a line for the point counted 0.
		printf '%s %s\n' "$point" "$(awk -v p="$point" -v last="$last" '
			$2 == p { n[$1] = $3 } END { for (s = (last > 1 ? 2 : 1); s <= last; s++) print n[s] + 0 }' \
			"$out.by-second" | stat_median)"
	done <"$points"
}

# The row of probe-cost.csv whose cost an event of attach point POINT pays.
# A uprobe costs what its function's first instruction costs to execute
# out of line: x86 kernels emulate nops and branches, recent ones push too,
# and single-step anything else (10x dearer). A uretprobe pays a return
# trampoline plus its entry breakpoint, shared with a uprobe on the same
# function if the program has one (POINTS, the program's points): kind
# "uretprobe+ENTRY", ENTRY "shared" or the entry's uprobe kind.
probe_kind() {
	local point=$1 points=$2 bin func
	case $point in
	uprobe:*|uretprobe:*)
		bin=${point#*:}; func=${bin##*:}; bin=${bin%:*}
		if [[ $point == uretprobe:* ]]; then
			if grep -qxF "uprobe:$bin:$func" "$points"; then echo uretprobe+shared
			else echo "uretprobe+$(_uprobe_entry_kind "$bin" "$func")"; fi
		else
			_uprobe_entry_kind "$bin" "$func"
		fi ;;
	usdt:*) echo usdt ;;
	watchpoint:*) echo watchpoint ;;
	tracepoint:sched:sched_switch) echo tp-sched-switch ;;
	tracepoint:*) echo tp-syscall ;;
	*) echo unknown ;;
	esac
}

_uprobe_entry_kind() {
	local bin=$1 func=$2 addr insn
	addr=$({ nm --defined-only "$bin" 2>/dev/null; nm -D --defined-only "$bin" 2>/dev/null; } |
		awk -v f="$func" '$3 == f { print $1; exit }')
	[[ -n $addr ]] && insn=$(objdump -d --no-show-raw-insn --start-address="0x$addr" \
		--stop-address="$((0x$addr + 16))" "$bin" 2>/dev/null | awk -F'\t' '/^ +[0-9a-f]+:/ { print $2; exit }')
	case ${insn:-} in
	nop* | xchg*%ax,%ax* | jmp* | call* | j[a-z]*) echo uprobe-nop ;;
	push*) echo uprobe-push ;;
	*) echo uprobe-stepped ;;
	esac
}

# Two predictions per check, from build/calibrate's probe-cost.csv, summed
# over the check's attach points:
#   hot:    events/txn x the hot-loop cost (the old model: a lower bound)
#   server: events/txn x the cost per event in calibrate's client/server
#           workload, + round trips/txn x the cost per round trip of each
#           probe type merely being attached ("armed"; 0 if not measured or
#           not told from zero)
# A uretprobe's event costs calibrate's uretprobe (a trampoline and a nop
# entry) less the nop entry, plus its own entry's kind unless shared.
# predicted TPS ratio = 1 / (1 + extra us per transaction x TPS / clients).
# Round trips (statements) per transaction: -S sends one SELECT; TPC-B
# sends BEGIN, 3 UPDATEs, a SELECT, an INSERT and END: 7.
# factor compares the server prediction with the measurement.
predict_write() {
	local out=$1
	echo "shape,config,events,events_per_txn,hot_us_per_txn,server_us_per_txn,armed_us_per_rt,rts_per_txn,base_tps,predicted_hot,predicted_tps_ratio,measured_tps_ratio,measured_min,measured_max,factor,count_tps_ratio,verdict" >"$out"
	[[ -f $BENCH_WORK/events.csv && -f $BENCH_WORK/probe-cost.csv ]] || return 0
	awk -F, -v clients="$BENCH_CLIENTS" -v major="$MAIN_MAJOR" '
		function cost(col, kind,   e) {
			if (kind !~ /^uretprobe\+/) return col[kind]
			e = substr(kind, 11)
			return col["uretprobe"] - col["uprobe-nop"] + (e == "shared" ? 0 : col[e])
		}
		function known(kind,   e) {
			if (kind !~ /^uretprobe\+/) return (kind in srv)
			e = substr(kind, 11)
			return ("uretprobe" in srv) && ("uprobe-nop" in srv) && (e == "shared" || e in srv)
		}
		# Attached uprobes of any kind are armed like calibrate'"'"'s uprobe-nop.
		function family(kind) { return kind ~ /^(uprobe|uretprobe)/ ? "uprobe-nop" : kind }
		# An armed cost counts only where calibrate tells it from zero (its
		# lower quartile above 0); otherwise it is noise of the round trip.
		FILENAME ~ /probe-cost/ && FNR > 1 && $2 != "" { hot[$1] = $2; srv[$1] = $8
			armed[$1] = ($13 != "" && $13 > 0) ? $12 : 0 }
		FILENAME ~ /overhead/ && FNR > 1 && $1 == major && $2 == clients && $7 != "" {
			key = $3 SUBSEP $4; base[key] = $6; ratio[key] = $7; lo[key] = $8; hi[key] = $9 }
		FILENAME ~ /events/ && FNR > 1 {
			key = $1 SUBSEP $2
			if (!(key in ratio)) next
			if (!(key in n)) { order[++nkeys] = key; n[key] = 0 }
			if (!known($4)) { bad[key] = bad[key] " " $4; next }
			n[key] += $5; ev[key, $4] += $5
			if (!((key, $4) in seen)) { seen[key, $4] = 1; kinds[key] = kinds[key] (kinds[key] == "" ? "" : " ") $4 }
			us_hot[key] += $5 * cost(hot, $4); us_srv[key] += $5 * cost(srv, $4)
			f = family($4)
			if (!((key, f) in armed_seen)) {
				armed_seen[key, f] = 1
				arm[key] += armed[f]
			}
			count_ratio[key] = $6
		}
		END {
			for (i = 1; i <= nkeys; i++) {
				key = order[i]; split(key, k, SUBSEP)
				if (bad[key] != "") { printf "predict: %s on %s: no calibrated cost for%s\n", k[2], k[1], bad[key] > "/dev/stderr"; continue }
				rts = (k[1] == "select") ? 1 : 7
				m = split(kinds[key], kl, " "); desc = ""
				for (j = 1; j <= m; j++) desc = desc (j > 1 ? "; " : "") sprintf("%s %.2f", kl[j], ev[key, kl[j]])
				phot = 1 / (1 + us_hot[key] * 1e-6 * base[key] / clients)
				pred = 1 / (1 + (us_srv[key] + rts * arm[key]) * 1e-6 * base[key] / clients)
				ps = 1 - pred; ms = 1 - ratio[key]
				# How far apart the predicted and measured slowdowns are.
				f = (ps > 0 && ms > 0) ? (ps > ms ? ps / ms : ms / ps) : -1
				inside = (pred >= lo[key] && pred <= hi[key])
				if (f > 0 && f <= 2) v = inside ? "within 2x, inside the measured range" : "within 2x"
				else if (f > 0) v = sprintf("off by %.1fx%s", f, inside ? " (inside the range of the runs)" : "")
				else if (inside) v = "no slowdown measured; the prediction is inside the range of the runs"
				else v = "disagrees: no measured slowdown"
				printf "%s,%s,%s,%.3f,%.2f,%.2f,%.2f,%d,%s,%.4f,%.4f,%s,%s,%s,%s,%s,\"%s\"\n", k[1], k[2], desc, n[key],
					us_hot[key], us_srv[key], arm[key] + 0, rts, base[key], phot, pred, ratio[key], lo[key], hi[key],
					(f < 0 ? "n/a" : sprintf("%.2f", f)), count_ratio[key], v
			}
		}' "$BENCH_WORK/probe-cost.csv" "$BENCH_WORK/overhead.csv" "$BENCH_WORK/events.csv" >>"$out"
}
