#!/usr/bin/env bash
# Overhead of the waits script's modes (scripts/waits.bt, mode=): pgbench
# TPS with the tracer attached against a baseline in the same run, pairs
# alternating base/traced, median of the per-pair ratios. Unlike
# bench/waits-overhead.sh it starts measuring when the tracer's first line
# is out (BEGIN runs after every probe is attached: mode=usdt has ~190
# sites), and it can follow one of pgbench's backends (mode=watch needs a
# backend that exists before rendering): each run starts pgbench with
# per-second progress lines, and the TPS is their mean from 1 s after a
# mark (traced: the tracer is attached; base: 2 s after pgbench's backends
# appear). Takes the machine-wide e2e lock. Run as root.
#
# USAGE: bench/waits-modes-overhead.sh [-v BUILD] [-n PAIRS] [-T SECONDS]
#                                      [-w select|tpcb|both] MODE...
#   MODE: watch (on pgbench's first backend), usdt, switch
#   e.g. bench/waits-modes-overhead.sh -v 17-waitprobes -n 3 usdt switch
#
# Prints one line per mode and workload:
#   waits:mode=watch  select  pg17  pairs=3  base_tps=...  ratio_median=0.93  waits_per_s=...  ratios=...
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib/cluster.sh"
: "${PGBT_GEN:=$ROOT/build/pgbt-gen}"

V=17 PAIRS=5 SECS=10 WORK=both
while getopts "v:n:T:w:" o; do
	case $o in
	v) V=$OPTARG ;; n) PAIRS=$OPTARG ;; T) SECS=$OPTARG ;; w) WORK=$OPTARG ;;
	*) sed -n '2,19p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
(($#)) || { sed -n '2,19p' "$0" >&2; exit 2; }

pgbt_take_machine_lock

TMP=$(mktemp -d /tmp/pgbt-bench.XXXXXX)
chmod 755 "$TMP"
cleanup_tmp() { rm -rf "$TMP"; }
pgbt_on_exit cleanup_tmp

cluster_start "$V" shared_buffers=64MB max_connections=20 >/dev/null
cl_run pgbench -i -q -s 2 >/dev/null 2>&1

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Starts the tracer for MODE from $TMP/s.bt and waits for its first line.
start_tracer() {
	local k
	pgbt_bg bpftrace "$TMP/s.bt" >"$TMP/bt.out" 2>&1
	BT=$BG_PID
	for ((k = 0; k < 600; k++)); do
		grep -q 'Hit Ctrl-C' "$TMP/bt.out" && return 0
		pgbt_alive "$BT" || break
		sleep 0.1
	done
	echo "bpftrace did not start:" >&2
	head "$TMP/bt.out" >&2
	exit 1
}

# One pgbench run of SECS + 4 s, base or traced by MODE. Sets RUN_TPS (the
# mean of the progress lines from 1 s after the mark) and RUN_WAITS (waits
# per second the tracer counted).
run() {
	local w=$1 mode=$2 args pb first= k mark secs
	case $w in
	select) args=(-S -c 2 -j 2) ;;
	tpcb) args=(-c 2 -j 2) ;;
	esac
	if [[ $mode == usdt || $mode == switch ]]; then
		"$PGBT_GEN" -p "$CL_PID" waits mode="$mode" >"$TMP/s.bt"
		start_tracer
	fi
	pgbt_bg cl_run pgbench "${args[@]}" -T $((SECS + 4)) -n -P 1 --progress-timestamp \
		>"$TMP/pb.out" 2>"$TMP/pb.err"
	pb=$BG_PID
	for ((k = 0; k < 100; k++)); do
		first=$(cl_psql -c "select pid from pg_stat_activity where application_name = 'pgbench'
			and backend_type = 'client backend' order by pid limit 1")
		[[ -n $first ]] && break
		sleep 0.05
	done
	[[ -n $first ]] || { echo "no pgbench backend appeared" >&2; exit 1; }
	if [[ $mode == watch ]]; then
		"$PGBT_GEN" -p "$CL_PID" waits mode=watch pid="$first" >"$TMP/s.bt"
		start_tracer
	else
		sleep 2
	fi
	mark=$EPOCHREALTIME
	wait "$pb" 2>/dev/null || true
	secs=$(awk -v m="$mark" -v e="$EPOCHREALTIME" 'BEGIN { print e - m }')
	RUN_WAITS=0
	if [[ $mode != base ]]; then
		kill -INT "$BT"
		for ((k = 0; k < 600; k++)); do pgbt_alive "$BT" || break; sleep 0.1; done
		pgbt_bg_stop "$BT"
		# usdt/switch were attached before the mark: their rate is approximate
		RUN_WAITS=$(awk -v s="$secs" '/^@waits\[/ { n += $2 } END { printf "%d\n", n / s }' "$TMP/bt.out")
	fi
	RUN_TPS=$(awk -v t="$mark" '/^progress:/ && $2 + 0 > t + 1 { s += $4; n++ }
		END { printf "%.1f\n", n ? s / n : 0 }' "$TMP/pb.err")
}

workloads=(select tpcb)
[[ $WORK != both ]] && workloads=("$WORK")
for mode in "$@"; do
	for w in "${workloads[@]}"; do
		ratios=() bases=() evs=()
		for ((i = 0; i < PAIRS; i++)); do
			run "$w" base
			a=$RUN_TPS
			run "$w" "$mode"
			ratios+=("$(awk -v a="$a" -v b="$RUN_TPS" 'BEGIN { printf "%.3f", b / a }')")
			bases+=("$a")
			evs+=("$RUN_WAITS")
		done
		printf 'waits:mode=%s\t%s\tpg%s\tpairs=%d\tbase_tps=%s\tratio_median=%s\twaits_per_s=%s\tratios=%s\n' \
			"$mode" "$w" "$V" "$PAIRS" "$(printf '%s\n' "${bases[@]}" | median)" \
			"$(printf '%s\n' "${ratios[@]}" | median)" "$(printf '%s\n' "${evs[@]}" | median)" "${ratios[*]}"
	done
done
cluster_stop
