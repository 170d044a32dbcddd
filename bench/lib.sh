# Shared by the bench scripts (bench/run sources it): settings, the
# machine-wide lock, small statistics in awk, the machine description.
# Source it from bash running as root, after tests/lib/cluster.sh.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${PGBT_GEN:=$PGBT_ROOT/build/pgbt-gen}"
: "${BENCH_RESULTS:=$BENCH_DIR/results}"
: "${BENCH_CALIBRATE:=$PGBT_ROOT/build/calibrate}"

# Run lengths. A run (bench/pgbench.sh) is WARMUP seconds, a baseline
# window of SECONDS, the tracer attaching, a traced window, the tracer
# stopping, a second baseline window: about 3 x SECONDS + 5 s. ROUNDS runs
# per script and shape; ROUNDS_CHECK for the noise floor and the rows the
# prediction check uses, where the noise matters most. BENCH_QUICK=1 is for
# development: the same steps, shorter, and its numbers are not worth
# publishing.
if [[ ${BENCH_QUICK:-0} == 1 ]]; then
	: "${BENCH_SECONDS:=2}" "${BENCH_ROUNDS:=1}" "${BENCH_ROUNDS_CHECK:=2}" "${BENCH_GEN_RUNS:=3}" "${BENCH_IDLE:=48}"
else
	: "${BENCH_SECONDS:=2}" "${BENCH_ROUNDS:=2}" "${BENCH_ROUNDS_CHECK:=3}" "${BENCH_GEN_RUNS:=10}" "${BENCH_IDLE:=198}"
fi
: "${BENCH_WARMUP:=1}"
# The scale step measures -S only, with fewer pairs, for the scripts, the
# noise floor and the one peer whose work grows with backends (psql-poll).
: "${BENCH_SCALE_ROUNDS:=1}"
: "${BENCH_CLIENTS:=2}"
# pgbench threads (-j): one per client, so the clients are not the
# bottleneck and -S saturates the CPUs (the worst case this bench claims).
# With one thread for both clients pgbench itself limited -S to about half
# the TPS, the CPUs stayed ~25% idle and backends slept in ClientRead on
# nearly every statement: costs that come with sleeps (waits: ~3.5 us of
# BPF time a wait) grew 3x and costs per CPU cycle hid in the idle time.
: "${BENCH_THREADS:=$BENCH_CLIENTS}"
# Modes of a script measured as rows of their own (bench/tracers.sh):
# lwlocks counting every acquisition (a USDT probe pair per LWLock
# acquisition: many events per transaction, for the prediction check).
: "${BENCH_VARIANTS=script:lwlocks/output=all}"
# The scripts that follow one backend follow one of pgbench's (BACKEND,
# bench/tracers.sh): backend-waits' watchpoint is what issue 3 asks for.
: "${BENCH_ARGS_backend_waits=pid=BACKEND}"
: "${BENCH_ARGS_lwlock_events=pid=BACKEND}"
# The bench clusters: no autovacuum or checkpoint in the middle of a window
# (bench/pgbench.sh vacuums and checkpoints before each run instead), and
# room for all of pgbench's tables at scale 10 in shared buffers.
: "${BENCH_GUCS:=autovacuum=off checkpoint_timeout=1h max_wal_size=4GB shared_buffers=256MB}"
# pgbench's scale factor: at least the number of clients (bench/pgbench.sh).
: "${BENCH_SCALE:=10}"
# Only a fraction of -S transactions is logged: logging all 20k-100k/s would
# cost pgbench more CPU than the probes under test cost the server.
: "${BENCH_SAMPLE_S:=0.2}"
: "${BENCH_SAMPLE_TPCB:=1}"

bench_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
bench_die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# The machine-wide lock the e2e tests take too: while the bench measures,
# nobody else's test competes for the 2 cores or the 4 debug registers.
# (PGBT_LOCK_FD, which the bench's servers do not inherit.)
bench_lock() {
	pgbt_take_machine_lock "[$(date +%H:%M:%S)] waiting for /tmp/pgbt-e2e.lock (a test is running)"
}

# Statistics over numbers on stdin, one a line.
stat_median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "nan"; exit }
	print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
stat_min() { sort -g | head -n1; }
stat_max() { sort -g | tail -n1; }
# The traced window against the mean of the two baseline windows around
# it: ratio TRACED BASE1 BASE2.
traced_ratio() { awk -v t="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.4f", 2 * t / (a + b) }'; }

# The machine, as "key,value" lines (CSV) for results/machine.csv.
machine_facts() {
	local cpu pgv bt
	cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	pgv=$("$CL_BIN/postgres" --version 2>/dev/null | sed 's/^postgres (PostgreSQL) //')
	bt=$(bpftrace --version 2>/dev/null | awk '{ print $2 }')
	printf 'date,%s\n' "$(date -u +%Y-%m-%dT%H:%MZ)"
	printf 'nproc,%s\n' "$(nproc)"
	printf 'kernel,%s\n' "$(uname -r)"
	printf 'cpu,"%s"\n' "${cpu:-unknown}"
	printf 'memory_mb,%s\n' "$(awk '/^MemTotal/ { print int($2 / 1024) }' /proc/meminfo)"
	printf 'postgresql,"%s (%s)"\n' "$pgv" "$CL_BIN/postgres"
	printf 'bpftrace,%s\n' "$bt"
	printf 'bench,"seconds=%s rounds=%s rounds_check=%s warmup=%s clients=%s threads=%s quick=%s"\n' \
		"$BENCH_SECONDS" "$BENCH_ROUNDS" "$BENCH_ROUNDS_CHECK" "$BENCH_WARMUP" "$BENCH_CLIENTS" "$BENCH_THREADS" "${BENCH_QUICK:-0}"
}

# BIN from bench/NAME.c, when missing or older than its source.
bench_tool_build() {
	local src=$BENCH_DIR/$1.c bin=$2
	if [[ ! -x $bin || $src -nt $bin ]]; then
		cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$bin" "$src" || bench_die "cannot build $bin"
	fi
}

# build/calibrate, from bench/calibrate.c (make bench builds it too).
calibrate_build() { bench_tool_build calibrate "$BENCH_CALIBRATE"; }
