#!/usr/bin/env bash
# What io-latency costs per data file request, where requests are the
# most frequent a server makes: a count(*) of a 41 MB table through 32 MB
# of shared buffers, every block a read from the page cache (about 1-3 us
# each, the cheapest read there is). Alternating blocks of scans without
# and with the script attached (untraced, traced, untraced...), each
# scan's "Execution Time" from EXPLAIN (ANALYZE, TIMING OFF); reported:
# the extra microseconds per block read (median of the traced blocks
# against the untraced ones around them, with the smallest and largest),
# and the BPF run time per program run (kernel.bpf_stats_enabled), which
# leaves the uprobe traps out. Run as root: sudo bench/io-scan.sh [BUILD...]
# (default 15 18: Debian's 15, 18 from source with its IO workers).
# Writes bench/results/io/scan.csv.
set -euo pipefail
PGBT_ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$PGBT_ROOT/tests/lib/cluster.sh"
source "$PGBT_ROOT/bench/lib.sh"

rounds=${BENCH_IO_ROUNDS:-4}     # traced blocks
scans=${BENCH_IO_SCANS:-8}       # scans per block
out_dir=$BENCH_RESULTS/io
mkdir -p "$out_dir"
bench_lock

# Median execution time (ms) of N scans.
scan_ms() {
	local i
	for ((i = 0; i < $1; i++)); do
		cl_psql -c "explain (analyze, timing off) select count(*) from big" |
			sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
	done | stat_median
}

stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
restore_stats() { sysctl -qw kernel.bpf_stats_enabled="$stats_was"; }
pgbt_on_exit restore_stats

run_build() {
	local build=$1 blocks r prev traced next runs bt ns n
	cluster_start "$build" autovacuum=off shared_buffers=32MB max_parallel_workers_per_gather=0
	cl_psql -c "create table big as select g, repeat('x', 200) as pad from generate_series(1, 200000) g" \
		-c "vacuum (freeze) big" -c "checkpoint" >/dev/null
	blocks=$(cl_psql -c "select pg_relation_size('big') / 8192")
	"$PGBT_GEN" -p "$CL_PID" io-latency >"$out_dir/io-latency.bt"

	scan_ms 4 >/dev/null    # the page cache and the buffers warm
	prev=$(scan_ms "$scans")
	for ((r = 0; r < rounds; r++)); do
		bpftrace "$out_dir/io-latency.bt" >"$out_dir/bt.out" 2>&1 &
		bt=$!
		until grep -q '^Tracing' "$out_dir/bt.out"; do sleep 0.2; done
		traced=$(scan_ms "$scans")
		runs=$(cat /proc/"$bt"/fdinfo/* 2>/dev/null | awk '/^run_time_ns:/ { ns += $2 } /^run_cnt:/ { n += $2 }
			END { printf "%.0f %.0f", ns, n }')
		kill -INT "$bt"; wait "$bt" || true
		next=$(scan_ms "$scans")
		read -r ns n <<<"$runs"
		rows+=("$build,$blocks,""$(awk -v t="$traced" -v a="$prev" -v b="$next" -v bl="$blocks" -v ns="$ns" -v n="$n" 'BEGIN {
			printf "%.3f,%.3f,%.3f,%.3f,%.0f", t, a, b, 1000 * (t - (a + b) / 2) / bl, (n ? ns / n : 0) }')")
		prev=$next
	done
	cluster_stop
}

builds=("$@")
((${#builds[@]})) || builds=(15 18)
rows=()
for build in "${builds[@]}"; do run_build "$build"; done

{
	echo "build,blocks,traced_ms,before_ms,after_ms,extra_us_per_block,bpf_ns_per_run"
	printf '%s\n' "${rows[@]}"
} >"$out_dir/scan.csv"
for build in "${builds[@]}"; do
	awk -F, -v b="$build" '$1 == b { print $6 }' "$out_dir/scan.csv" >"$out_dir/extra"
	echo "io-latency on a page-cache scan ($build): extra $(stat_median <"$out_dir/extra") us per block" \
		"($(stat_min <"$out_dir/extra")..$(stat_max <"$out_dir/extra")), BPF" \
		"$(awk -F, -v b="$build" '$1 == b { print $7 }' "$out_dir/scan.csv" | stat_median) ns per program run"
done | tee "$out_dir/summary.txt"
rm -f "$out_dir/extra" "$out_dir/bt.out" "$out_dir/io-latency.bt"
