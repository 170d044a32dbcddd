#!/usr/bin/env bash
# Overhead of the wait-event scripts: pgbench TPS with the rendered script
# attached against a baseline in the same run, alternating A B A B, and the
# median of the per-pair ratios. Takes the machine-wide e2e lock while it
# measures. Run as root.
#
# USAGE: bench/waits-overhead.sh [-v MAJOR] [-n PAIRS] [-T SECONDS]
#                                [-w select|tpcb|both] SCRIPT[:NAME=V,...]...
#   e.g. bench/waits-overhead.sh -v 17 -n 5 waits offcpu-stacks waits:mode=watch
#
# Prints one line per script and workload:
#   waits  select  pairs=5  base_tps=...  ratio_median=0.981  ratios=...
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib/cluster.sh"
: "${PGBT_GEN:=$ROOT/build/pgbt-gen}"

V=17 PAIRS=5 SECS=10 WORK=both
while getopts "v:n:T:w:" o; do
	case $o in
	v) V=$OPTARG ;; n) PAIRS=$OPTARG ;; T) SECS=$OPTARG ;; w) WORK=$OPTARG ;;
	*) sed -n '2,13p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
(($#)) || { sed -n '2,13p' "$0" >&2; exit 2; }

pgbt_take_machine_lock

# Per-program run time, for the BPF share of CPU time; restored at exit.
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
TMP=$(mktemp -d /tmp/pgbt-bench.XXXXXX)
chmod 755 "$TMP"
cleanup_tmp() { rm -rf "$TMP"; sysctl -q -w kernel.bpf_stats_enabled="$STATS_WAS"; }
pgbt_on_exit cleanup_tmp

cluster_start "$V" shared_buffers=64MB max_connections=20 >/dev/null
cl_run pgbench -i -q -s 2 >/dev/null 2>&1

# TPS of one pgbench run (excluding connection time).
tps() {
	local args
	case $1 in
	select) args=(-S -c 2 -j 2) ;;
	tpcb) args=(-c 2 -j 2) ;;
	esac
	cl_run pgbench "${args[@]}" -T "$SECS" -n 2>/dev/null |
		awk '/^tps = / { print $3; exit }'
}

# BPF run time of bpftrace's programs (kernel.bpf_stats_enabled) during the
# attached run: "RUN_NS RUN_CNT", read from the fdinfo of its program fds.
bpf_cost() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null |
		awk '/^run_time_ns:/ { t += $2 } /^run_cnt:/ { c += $2 } END { print t + 0, c + 0 }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for spec in "$@"; do
	script=${spec%%:*} params=()
	[[ $spec == *:* ]] && IFS=, read -r -a params <<<"${spec#*:}"
	"$PGBT_GEN" ${PGBT_GEN_OPTS:-} -p "$CL_PID" "$script" "${params[@]}" >"$TMP/s.bt"
	workloads=(select tpcb)
	[[ $WORK != both ]] && workloads=("$WORK")
	for w in "${workloads[@]}"; do
		ratios=() bases=()
		: >"$TMP/cost.$w"
		for ((i = 0; i < PAIRS; i++)); do
			a=$(tps "$w")
			pgbt_bg bpftrace "$TMP/s.bt" >"$TMP/bt.out" 2>&1
			bt=$BG_PID
			for ((k = 0; k < 300; k++)); do
				grep -q Attaching "$TMP/bt.out" && break
				sleep 0.1
			done
			if ! grep -q Attaching "$TMP/bt.out" || ! pgbt_alive "$bt"; then
				echo "bpftrace did not attach running $spec:" >&2
				head -n 20 "$TMP/bt.out" >&2
				exit 1
			fi
			sleep 1
			b=$(tps "$w")
			bpf_cost "$bt" >>"$TMP/cost.$w"
			if ! kill -INT "$bt" 2>/dev/null; then
				echo "bpftrace exited early running $spec:" >&2
				head -n 20 "$TMP/bt.out" >&2
				exit 1
			fi
			for ((k = 0; k < 150; k++)); do pgbt_alive "$bt" || break; sleep 0.1; done
			pgbt_bg_stop "$bt"
			ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')")
			bases+=("$a")
		done
		# BPF time as a share of the machine's CPU time over the runs, and
		# per program run: a noise-free view beside the noisy TPS ratio.
		cost=$(awk -v secs="$SECS" -v cpus="$(nproc)" '{ t += $1; c += $2; n++ }
			END { printf "bpf_cpu=%.2f%% bpf_ns_per_run=%.0f runs_per_s=%.0f",
			      100 * t / (n * secs * 1e9 * cpus), c ? t / c : 0, c / (n * secs) }' "$TMP/cost.$w")
		printf '%s\t%s\tpg%s\tpairs=%d\tbase_tps=%s\tratio_median=%s\t%s\tratios=%s\n' \
			"$spec" "$w" "$V" "$PAIRS" "$(printf '%s\n' "${bases[@]}" | median)" \
			"$(printf '%s\n' "${ratios[@]}" | median)" "$cost" "${ratios[*]}"
	done
done
cluster_stop
