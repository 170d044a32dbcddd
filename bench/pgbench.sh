# One measured pgbench run, with or without a tracer (sourced by bench/run).
#
#   pgbench_run SHAPE CONFIG DIR
#       SHAPE: select (pgbench -S: one SELECT per transaction, CPU bound,
#       the worst case for per-query probes) or tpcb (pgbench's default
#       TPC-B-like script: 3 UPDATEs, 1 SELECT, 1 INSERT and one XID per
#       transaction). CONFIG: "baseline" or a tracer (see bench/tracers.sh).
#       Sets RUN_RESULT to "TPS P99_MS WINDOW_S STATUS" (STATUS "ok" or
#       why not; "slow: ..." when the tracer attached too late to leave a
#       window) and RUN_READY (seconds from pgbench's start to the tracer
#       being ready). It runs in the calling shell, so the EXIT trap of
#       tests/lib/cluster.sh can stop what it started.
#
# The timeline of a run: pgbench starts with -T WARMUP+SECONDS; once its
# clients are connected the tracer is rendered for the live server (so
# per-backend addresses can be found) and attached. The measured window
# starts when the tracer is ready, or at WARMUP, whichever is later, and
# ends with pgbench. Baseline runs have the same timeline without the
# tracer. TPS and the 99th percentile of latency come from pgbench's
# per-transaction log (--log; a sample of it under -S), restricted to the
# window, so bpftrace's start-up (compiling, attaching) is never measured.

pgbench_run() {
	local shape=$1 config=$2 dir=$3
	local secs
	secs=$(awk -v w="$BENCH_WARMUP" -v s="$BENCH_SECONDS" 'BEGIN { t = w + s; print (t == int(t)) ? t : int(t) + 1 }')
	local args=(-n -c "$BENCH_CLIENTS" -j 1 -T "$secs" --log --log-prefix="$dir/pgb")
	local rate=$BENCH_SAMPLE_TPCB
	if [[ $shape == select ]]; then
		args+=(-S)
		rate=$BENCH_SAMPLE_S
	fi
	[[ $rate != 1 ]] && args+=(--sampling-rate="$rate")
	mkdir -p "$dir" && chown postgres: "$dir"

	local t_start t_ready status=ok pg_pid
	t_start=$EPOCHREALTIME
	pgbt_bg cl_run pgbench "${args[@]}" >"$dir/pgbench.out" 2>&1
	pg_pid=$BG_PID
	sleep 0.3    # clients connect within a few ms
	if [[ $config != baseline ]]; then
		tracer_start "$config" "$dir" || status=$TRACER_ERROR
	fi
	t_ready=$EPOCHREALTIME
	wait "$pg_pid" || status="pgbench failed: $(tail -n1 "$dir/pgbench.out")"
	pgbt_bg_stop "$pg_pid"    # forget it (already reaped)
	if [[ $config != baseline && $status == ok ]]; then
		tracer_stop "$dir" || status=$TRACER_ERROR
	elif [[ $config != baseline ]]; then
		tracer_stop "$dir" || true
	fi

	local from
	RUN_READY=$(awk -v s="$t_start" -v r="$t_ready" 'BEGIN { printf "%.1f", r - s }')
	from=$(awk -v s="$t_start" -v r="$t_ready" -v w="$BENCH_WARMUP" \
		'BEGIN { f = s + w; if (r > f) f = r; printf "%.6f", f }')
	# pgbench log line: client trans latency_us script epoch_s epoch_us ...
	# Latencies in the window, sorted; then count, window, rate and p99.
	cat "$dir"/pgb.* 2>/dev/null | awk -v from="$from" '
		$3 ~ /^[0-9]+$/ && $5 + $6 / 1e6 >= from { printf "%d %.6f\n", $3, $5 + $6 / 1e6 }' |
		sort -n -k1,1 | awk -v from="$from" -v rate="$rate" -v st="$status" -v ready="$RUN_READY" '
		{ lat[NR] = $1; if ($2 > last) last = $2 }
		END {
			n = NR; win = last - from
			if (n < 20 || win < 1) {
				if (st == "ok" && win < 1) st = "slow: the tracer was ready only " ready " s after pgbench started"
				else if (st == "ok") st = "too few transactions in the window (" n + 0 ")"
				printf "nan nan %.2f %s\n", win, st; exit
			}
			k = int(n * 0.99); if (k < n * 0.99) k++
			printf "%.1f %.3f %.2f %s\n", n / rate / win, lat[k] / 1000, win, st
		}' >"$dir/result"
	RUN_RESULT=$(cat "$dir/result")
	rm -f "$dir"/pgb.*
}

# Tables and data for both shapes: scale 1 (one branch row, so TPC-B
# clients contend on it as a busy small system does).
pgbench_init() {
	cl_run pgbench -i -q -s 1 >/dev/null 2>&1 || bench_die "pgbench -i failed"
	cl_psql -c 'vacuum analyze' >/dev/null
}

# N more backends, connected and idle for the scale step: one pgbench
# whose script only sleeps, so its connections never send a query.
idle_start() {
	local n=$1 i
	printf '\\sleep 1 s\n' >"$BENCH_WORK/idle.sql"
	pgbt_bg cl_run pgbench -n -c "$n" -j 1 -T 100000 -f "$BENCH_WORK/idle.sql" \
		>"$BENCH_WORK/idle.out" 2>&1
	IDLE_PID=$BG_PID
	for ((i = 0; i < 600; i++)); do
		(($(cl_psql -c "select count(*) from pg_stat_activity where backend_type = 'client backend'") > n)) && return 0
		pgbt_alive "$IDLE_PID" || bench_die "idle clients: $(tail -n1 "$BENCH_WORK/idle.out")"
		sleep 0.1
	done
	bench_die "idle clients: $n connections not up after 60 s"
}

idle_stop() {
	pgbt_bg_stop "$IDLE_PID"
}
