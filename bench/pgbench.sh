# One measured pgbench run, with or without a tracer (sourced by bench/run).
#
#   pgbench_run SHAPE CONFIG DIR
#       SHAPE: select (pgbench -S: one SELECT per transaction, CPU bound,
#       the worst case for per-query probes) or tpcb (pgbench's default
#       TPC-B-like script: 3 UPDATEs, 1 SELECT, 1 INSERT and one XID per
#       transaction). CONFIG: a tracer (see bench/tracers.sh; "none" for
#       none). Sets RUN_RESULT to
#         "BASE1_TPS BASE1_P99 TRACED_TPS TRACED_P99 BASE2_TPS BASE2_P99 STATUS"
#       (STATUS "ok" or why not, one line), RUN_READY (seconds the
#       tracer took to render and attach), RUN_OTHER "O1 O2 O3" (CPU used
#       by processes other than the server, pgbench and the tracer during
#       each window, plus steal time, in % of all CPUs: load from outside
#       the bench, which the windows cannot cancel; then the number of
#       other people's bpftrace processes running) and RUN_BPF "NS RUNS"
#       (BPF program time and runs per second of the traced window, from
#       kernel.bpf_stats_enabled; "nan nan" if the tracer is not bpftrace
#       or the stats are off). It runs in the calling shell, so the EXIT
#       trap of tests/lib/cluster.sh can stop what it started.
#
# One pgbench run holds a baseline, a traced and a baseline window, in that
# order (A B A), on the same connections:
#   WARMUP s   pgbench connects and warms up (1 s)
#   SECONDS    baseline window 1
#   ...        the tracer is rendered for the live server and attached
#              (compiling and attaching are never inside a window)
#   SETTLE s (0.3), then SECONDS: traced window
#   ...        the tracer is stopped (SIGINT, END maps printed, detached)
#   SETTLE s, then SECONDS: baseline window 2
# then pgbench is interrupted. Comparing windows of one run removes the
# largest noise of this machine: from one pgbench run to the next the
# backends land on the CPUs differently, and with 2 vCPUs that alone moves
# TPS by +-10%. Two baselines around the traced window cancel a linear
# drift. TPS and the 99th percentile of latency come from pgbench's
# per-transaction log (--log; a sample of it under -S) restricted to each
# window. "none" runs the same timeline with a 1 s pause instead of a
# tracer: the noise floor.

: "${BENCH_SETTLE:=0.3}"

pgbench_run() {
	local shape=$1 config=$2 dir=$3
	local args=(-n -c "$BENCH_CLIENTS" -j "$BENCH_THREADS" -T 3600 --log --log-prefix="$dir/pgb")
	local rate=$BENCH_SAMPLE_TPCB
	if [[ $shape == select ]]; then
		args+=(-S)
		rate=$BENCH_SAMPLE_S
	fi
	[[ $rate != 1 ]] && args+=(--sampling-rate="$rate")
	mkdir -p "$dir" && chown postgres: "$dir"

	local status=ok pg_pid a1 b a2 t_tr
	# Nothing of the server's own housekeeping inside a window: TPC-B's
	# dead rows are vacuumed and dirty pages written out before the run
	# (the clusters run with autovacuum off and rare checkpoints).
	if [[ $shape == tpcb ]]; then
		cl_psql -c 'vacuum pgbench_branches, pgbench_tellers, pgbench_accounts' >/dev/null
		cl_psql -c checkpoint >/dev/null
	fi
	pgbt_bg cl_run pgbench "${args[@]}" >"$dir/pgbench.out" 2>&1
	pg_pid=$BG_PID
	sleep "$BENCH_WARMUP"
	local m0 m1 m2 m3 m4 m5
	_own_pids "$pg_pid"
	m0=$(_mark) a1=$EPOCHREALTIME
	sleep "$BENCH_SECONDS"
	m1=$(_mark) t_tr=$EPOCHREALTIME
	if [[ $config == none ]]; then
		sleep 1
	else
		tracer_start "$config" "$dir" || status=$TRACER_ERROR
	fi
	RUN_READY=$(awk -v s="$t_tr" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }')
	sleep "$BENCH_SETTLE"
	_own_pids "$pg_pid" $TR_PID
	m2=$(_mark) b=$EPOCHREALTIME
	[[ $status == ok ]] && sleep "$BENCH_SECONDS"
	m3=$(_mark)
	if [[ $config != none && $status == ok ]]; then
		tracer_stop "$dir" || status=$TRACER_ERROR
	elif [[ $config != none ]]; then
		tracer_stop "$dir" || true
	fi
	sleep "$BENCH_SETTLE"
	_own_pids "$pg_pid"
	m4=$(_mark) a2=$EPOCHREALTIME
	[[ $status == ok ]] && sleep "$BENCH_SECONDS"
	m5=$(_mark)
	RUN_OTHER="$(_other "$m0" "$m1") $(_other "$m2" "$m3") $(_other "$m4" "$m5") $FOREIGN_BT"
	RUN_BPF=$(awk -v s="$m2" -v e="$m3" -v w="$BENCH_SECONDS" 'BEGIN { split(s, a); split(e, b)
		if (a[3] < 0) print "nan nan"
		else printf "%.0f %.0f\n", (b[3] - a[3]) / w, (b[4] - a[4]) / w }')
	sleep 0.1
	pgbt_alive "$pg_pid" || status="pgbench failed: $(tail -n1 "$dir/pgbench.out")"
	pgbt_bg_stop "$pg_pid" INT

	# pgbench log line: client trans latency_us script epoch_s epoch_us ...
	# Per window: count, TPS (over the window's length) and p99 latency.
	local res
	res=$(cat "$dir"/pgb.* 2>/dev/null | awk -v rate="$rate" -v s="$BENCH_SECONDS" \
		-v a1="$a1" -v b="$b" -v a2="$a2" '
		$3 ~ /^[0-9]+$/ { t = $5 + $6 / 1e6
			w = (t >= a1 && t < a1 + s) ? 1 : (t >= b && t < b + s) ? 2 : (t >= a2 && t < a2 + s) ? 3 : 0
			if (w) print w, $3 }' | sort -k1,1n -k2,2n | awk -v rate="$rate" -v s="$BENCH_SECONDS" '
		{ n[$1]++; lat[$1, n[$1]] = $2 }
		END {
			for (w = 1; w <= 3; w++) {
				if (n[w] < 20) { printf " nan nan"; continue }
				k = int(n[w] * 0.99); if (k < n[w] * 0.99) k++
				printf " %.1f %.3f", n[w] / rate / s, lat[w, k] / 1000
			}
		}')
	if [[ $status == ok && $res == *nan* ]]; then
		status="too few transactions in a window (pgbench: $(tail -n1 "$dir/pgbench.out"))"
	fi
	RUN_RESULT="${res# } $status"
	rm -f "$dir"/pgb.*
}

# The processes that belong to the measurement: the server (postmaster
# and its children), pgbench, and the tracer given (PIDs and their
# descendants), into OWN_PIDS; the tracer's first PID into MARK_TRACER.
_own_pids() {
	local pg=$1 tr=${2:-} kids
	kids=$(pgrep -P "$CL_PID" || true)
	OWN_PIDS="$CL_PID $kids $pg $(_pgbt_descendants "$pg" || true)"
	MARK_TRACER=$tr
	[[ -n $tr ]] && OWN_PIDS+=" $tr $(_pgbt_descendants "$tr" || true)"
	OWN_PIDS=${OWN_PIDS//$'\n'/ }
	# Someone else's bpftrace may have probes on the same binary: they
	# fire in our backends, and their cost hides in the server's own CPU.
	local p
	FOREIGN_BT=0
	for p in $(pgrep -x bpftrace || true); do
		[[ " $OWN_PIDS " == *" $p "* ]] || FOREIGN_BT=$((FOREIGN_BT + 1))
	done
	return 0
}

# "BUSY OWN BPF_NS BPF_RUNS" now: CPU ticks the machine spent busy (plus
# steal), ticks of OWN_PIDS, BPF run time and count of the tracer's
# programs (0 when there are none). One awk, read at window edges.
_mark() {
	local f files=(/proc/stat)
	for f in $OWN_PIDS; do files+=("/proc/$f/stat"); done
	[[ -n $MARK_TRACER ]] && files+=(/proc/"$MARK_TRACER"/fdinfo/*)
	cat "${files[@]}" 2>/dev/null | awk '$1 == "cpu" { busy = $2 + $3 + $4 + $7 + $8 + $9 }
		$1 ~ /^[0-9]+$/ { sub(/^.*\) /, ""); own += $12 + $13 }
		/^run_time_ns:/ { ns += $2; seen = 1 } /^run_cnt:/ { cnt += $2 }
		END { printf "%.0f %.0f %.0f %.0f\n", busy, own, (seen ? ns : -1), cnt }'
}

# CPU % of the whole machine not used by OWN_PIDS between two marks.
_other() {
	awk -v s="$1" -v e="$2" -v hz="$(getconf CLK_TCK)" -v n="$(nproc)" -v w="$BENCH_SECONDS" 'BEGIN {
		split(s, a); split(e, b); o = (b[1] - a[1]) - (b[2] - a[2]); if (o < 0) o = 0
		printf "%.1f", 100 * o / (hz * n * w) }'
}

# Tables and data for both shapes, at scale BENCH_SCALE (10). pgbench's
# documentation (PostgreSQL docs, pgbench, "Good Practices") says the scale
# factor of the TPC-B-like test should be at least the number of clients,
# "else you'll mostly be measuring update contention": every transaction
# updates one of the -s rows of pgbench_branches. At scale 1 the two
# clients queued on the one branch row, so any delay a probe added inside
# the transaction (while the row lock is held) stalled the other client
# too, and every tracer cost 4-23% on TPC-B, several times its CPU time.
# At scale 10 two clients meet on a branch in ~10% of transactions. -S
# reads the same tables (1M accounts; they fit in shared_buffers=256MB of
# BENCH_GUCS, so -S stays CPU bound). Initializing takes a few seconds.
pgbench_init() {
	cl_run pgbench -i -q -s "$BENCH_SCALE" >/dev/null 2>&1 || bench_die "pgbench -i failed"
	cl_psql -c 'vacuum analyze' >/dev/null
	# Into shared buffers before the first window: an index scan reads
	# every heap page through them (a sequential scan of a table this
	# size would use a small ring instead).
	cl_psql -c 'set enable_seqscan = off' -c 'select sum(abalance) from pgbench_accounts where aid > 0' >/dev/null
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
