#!/usr/bin/env bash
# BPF time of renderings of one script under pgbench, variants in
# alternating order: the instrument that repeats on this shared machine
# (kernel.bpf_stats_enabled: run time and run count of the tracer's
# programs), with the TPS of each window beside it.
#
#   sudo bench/waits-cost.sh [VARIANT...]
#
# VARIANT: NAME=BPFTRACE[:SCRIPTS_DIR] (SCRIPTS_DIR: templates to render
# from instead of the built-in ones, e.g. an older checkout's scripts/), or
# NAME=BPFTRACE:@FILE, a program of your own (POSTMASTER_PID in it becomes
# the bench cluster's postmaster PID), e.g. an empty probe for the floor;
# "NAME=BPFTRACE -p": run as the rendering's Run line says, with its -p PID
# (a script that follows one backend); NAME=none: nothing attached.
# Default: this checkout's waits on the bpftrace on PATH. Settings:
# WC_BUILD (15), WC_SCRIPT (waits), WC_ARGS (per_backend=off;
# WC_ARGS_<NAME>, when set, for variant NAME only), WC_ROUNDS
# (5), WC_SECONDS (10, each window), WC_SHAPE (tpcb, select, or sort: one
# in-memory ORDER BY of 51 rows per transaction, for sorts), WC_OUT
# (a directory for the CSV and the rendered scripts; default a temp dir),
# WC_STRLEN (200: bpftrace's string size; 64 for scripts whose strings
# pass bpftrace 0.17's BPF stack at 200, e.g. sorts, slow-queries),
# WC_PROG_TYPES (BPF program types to count, e.g. "2": uprobes only;
# default all), WC_LOCK (1: hold /tmp/pgbt-e2e.lock as the bench does; 0: measure while
# others' tests run, for BPF time only), WC_MAX_OTHER (5: a window where
# processes outside the measurement took more than this % of the CPUs,
# e.g. a test run without the lock, is measured again 5 s later, at most
# WC_REDO (3) times; runs.csv keeps that % of each window), WC_RATE (transactions per second
# pgbench holds, -R; default none: as fast as it can), WC_BASE (a
# variant, e.g. an idle bpftrace: each other variant's CPU time per
# transaction less the base's of the same round, median and range),
# WC_IDLE (1: one more session, connected and idle all along; IDLE in
# WC_ARGS becomes its PID, for a script that follows one backend: what
# the other backends then pay is the script's cost to them).
# At a fixed rate below what the machine can do, the CPUs are not
# saturated: the CPU time the machine spends per transaction (user,
# system, interrupts: /proc/stat, less steal) then counts the whole cost
# of tracing, BPF, traps and the tracepoints' own work, where TPS cannot.
# There too, a transaction's own latency (pgbench's, less its schedule
# lag) shows costs paid while a CPU idles, which no CPU time counts
# (e.g. a hypervisor's work on each halt: halts/xact, cpuidle's count).
# Each round runs every variant once, in an order that turns by one each
# round; a window is one `pgbench -c 2 -j 2 -T WC_SECONDS` at scale 10,
# started once the tracer has attached. Prints, per variant: ns per
# program run (median, range), runs per second and per transaction, BPF time as % of all
# CPUs, and TPS (median, range).
set -euo pipefail
source "$(dirname "$0")/../tests/lib/cluster.sh"
BENCH_SCALE=10
source "$(dirname "$0")/lib.sh"

: "${WC_BUILD:=15}" "${WC_SCRIPT:=waits}" "${WC_ARGS=per_backend=off}"
: "${WC_ROUNDS:=5}" "${WC_SECONDS:=10}" "${WC_SHAPE:=tpcb}" "${WC_STRLEN:=200}"
[[ $(id -u) == 0 ]] || bench_die "run as root"
(($#)) || set -- "this=$(command -v bpftrace)"
out=${WC_OUT:-$(mktemp -d /tmp/waits-cost.XXXXXX)}
mkdir -p "$out" && chmod 755 "$out"

stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
restore_stats() { sysctl -qw kernel.bpf_stats_enabled="$stats_was"; }
pgbt_on_exit restore_stats

[[ ${WC_LOCK:-1} == 1 ]] && bench_lock
# The generator of this run, the same for every rendering even if build/
# is rebuilt meanwhile.
cp "$PGBT_GEN" "$out/pgbt-gen"
PGBT_GEN=$out/pgbt-gen
# shellcheck disable=SC2086 # BENCH_GUCS: NAME=VALUE words
cluster_start "$WC_BUILD" $BENCH_GUCS
cl_run pgbench -i -q -s "$BENCH_SCALE" >/dev/null 2>&1 || bench_die "pgbench -i failed"

args=$WC_ARGS
if [[ ${WC_IDLE:-0} == 1 ]]; then
	# A session that stays idle: its psql reads from a FIFO held open here
	# (read-write, so that neither open waits for the other end).
	rm -f "$out/idle.in"
	mkfifo -m 666 "$out/idle.in"
	exec {idle_fd}<>"$out/idle.in"
	# (the redirection inside: a background command's stdin is /dev/null)
	idle_psql() { cl_psql <"$out/idle.in"; }
	pgbt_bg idle_psql >"$out/idle.out" 2>&1
	echo 'select pg_backend_pid();' >&"$idle_fd"
	for ((k = 0; k < 100; k++)); do [[ -s $out/idle.out ]] && break; sleep 0.1; done
	idle=$(head -n 1 "$out/idle.out")
	[[ $idle =~ ^[0-9]+$ ]] || bench_die "no idle session: $(cat "$out/idle.out")"
	args=${args//IDLE/$idle}
fi

names=() bts=() files=() pflags=()
for v in "$@"; do
	name=${v%%=*} rest=${v#*=}
	bt=${rest%%:*} dir= pflag=
	[[ $rest == *:* ]] && dir=${rest#*:}
	[[ $bt == *" -p" ]] && { bt=${bt% -p}; pflag=1; }
	file=$out/$name.bt
	if [[ $bt == none ]]; then
		: >"$file"
	elif [[ $dir == @* ]]; then
		sed "s/POSTMASTER_PID/$CL_PID/g" "${dir#@}" >"$file"
	else
		args_of=WC_ARGS_${name//[^A-Za-z0-9_]/_}
		vargs=${!args_of-$args}
		[[ -n ${idle:-} ]] && vargs=${vargs//IDLE/$idle}
		# shellcheck disable=SC2086 # vargs: NAME=VALUE words
		PGBT_BPFTRACE=$bt "$PGBT_GEN" ${dir:+--scripts-dir "$dir"} -p "$CL_PID" "$WC_SCRIPT" $vargs >"$file" 2>"$out/$name.err" ||
			bench_die "$name: does not render: $(cat "$out/$name.err")"
	fi
	if [[ -n $pflag ]]; then
		# the PID of the rendering's Run line, as a user is told to run it
		pflag=$(sed -n 's|^// Run: .* -p \([0-9][0-9]*\) -   (from a file: .*|\1|p' "$file")
		[[ -n $pflag ]] || bench_die "$name: the rendering has no Run line with -p"
		pflag="-p $pflag"
	fi
	names+=("$name") bts+=("$bt") files+=("$file") pflags+=("$pflag")
done

# CPU ticks of the measurement's own processes so far: the server's (the
# postmaster's children, live or reaped by it: pgbench's backends end
# with the window), the tracer PID's (if any), and this script's reaped
# children (pgbench).
own_ticks() {
	local f files=(/proc/"$CL_PID"/stat /proc/$$/stat)
	for f in $(pgrep -P "$CL_PID") ${1:-}; do files+=("/proc/$f/stat"); done
	cat "${files[@]}" 2>/dev/null | awk -v reapers="$CL_PID $$" '{ pid = $1; sub(/^[0-9]+ \(.*\) /, "")
		t += $12 + $13; if (index(" " reapers " ", " " pid " ")) t += $14 + $15 } END { print t + 0 }'
}

# CPU time spent so far by all CPUs, in jiffies (/proc/stat: user, nice,
# system, irq, softirq; not idle, iowait or steal).
cpu_busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

# Entries into idle states that halt the CPU (cpuidle's states but POLL),
# all CPUs: on a VM each is an exit to the hypervisor and a wakeup later.
cpu_halts() {
	local f sum=0
	for f in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*; do
		[[ -r $f/name && $(<"$f/name") != POLL ]] && sum=$((sum + $(<"$f/usage")))
	done
	echo "$sum"
}

# "NS RUNS" of every BPF program bpftrace PID holds (of the program
# types in WC_PROG_TYPES only, when set: e.g. 2, uprobes, leaving out a
# script's tracepoints, which fire for every process of the machine).
bpf_mark() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk -v types=" ${WC_PROG_TYPES:-} " '
		/^prog_type:/ { ok = types == "  " || index(types, " " $2 " ") > 0 }
		ok && /^run_time_ns:/ { ns += $2 } ok && /^run_cnt:/ { n += $2 }
		END { printf "%.0f %.0f\n", ns, n }'
}

window() {
	local i=$1 round=$2 log=$out/${names[$1]}.log pid= m0 m1 t0 t1 c0 c1 h0 h1 o0 o1 tps xacts lat lag k other
	if [[ ${bts[$i]} == none ]]; then
		sleep 1    # where bpftrace would start
	else
		# shellcheck disable=SC2086 # pflags: "-p PID" or nothing
		pgbt_bg env BPFTRACE_STRLEN="$WC_STRLEN" BPFTRACE_MAX_STRLEN="$WC_STRLEN" "${bts[$i]}" ${pflags[$i]} "${files[$i]}" >"$log" 2>&1
		pid=$BG_PID
		for ((k = 0; k < 300; k++)); do
			# "Attaching N probes" (bpftrace before 0.24), "Attached N probes" (later)
			grep -q Attach "$log" && [[ $(cat "/proc/$pid/wchan" 2>/dev/null) == do_epoll_wait ]] && break
			pgbt_alive "$pid" || bench_die "${names[$i]}: bpftrace exited: $(tail -n 3 "$log")"
			sleep 0.1
		done
	fi
	sleep 0.3
	local shape=()
	[[ $WC_SHAPE == select ]] && shape=(-S)
	[[ $WC_SHAPE == sort ]] && shape=(-f "$out/sort.sql")
	[[ -n ${WC_RATE:-} ]] && shape+=(-R "$WC_RATE")
	m0=$(bpf_mark "${pid:-0}") t0=$EPOCHREALTIME c0=$(cpu_busy) h0=$(cpu_halts) o0=$(own_ticks "$pid")
	cl_run pgbench -n "${shape[@]}" -c 2 -j 2 -T "$WC_SECONDS" >"$out/pgbench.out" 2>&1
	m1=$(bpf_mark "${pid:-0}") t1=$EPOCHREALTIME c1=$(cpu_busy) h1=$(cpu_halts) o1=$(own_ticks "$pid")
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/pgbench.out" | head -n 1)
	xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out/pgbench.out")
	# A transaction's own latency: with -R, pgbench's average less the
	# wait for its scheduled start.
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$out/pgbench.out")
	lag=$(sed -n 's/^rate limit schedule lag: avg \([0-9.]*\) .*/\1/p' "$out/pgbench.out")
	[[ -z $pid ]] || pgbt_bg_stop "$pid" INT
	# The CPUs' busy time that none of the measurement's processes used:
	# someone else's work, which lands in one window and not the next.
	other=$(awk -v c="$((c1 - c0))" -v o="$((o1 - o0))" -v hz="$(getconf CLK_TCK)" -v cpus="$(nproc)" \
		-v t0="$t0" -v t1="$t1" 'BEGIN { d = c - o; if (d < 0) d = 0; printf "%.1f", 100 * d / hz / cpus / (t1 - t0) }')
	if [[ ${3:-0} -lt ${WC_REDO:-3} ]] && awk -v o="$other" -v m="${WC_MAX_OTHER:-5}" 'BEGIN { exit !(o > m) }'; then
		bench_log "${names[$i]}: $other% of the CPUs used by other processes in the window: measured again"
		sleep 5    # for a short outside job to end
		return 1
	fi
	awk -v n="${names[$i]}" -v a="$m0" -v b="$m1" -v t0="$t0" -v t1="$t1" -v tps="$tps" -v cpus="$(nproc)" \
		-v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v xacts="${xacts:-0}" -v round="$round" \
		-v h="$((h1 - h0))" -v lat="${lat:-0}" -v lag="${lag:-0}" -v other="$other" 'BEGIN {
		split(a, x); split(b, y); ns = y[1] - x[1]; runs = y[2] - x[2]; s = t1 - t0
		printf "%s,%.0f,%.0f,%.3f,%.1f,%.1f,%d,%.2f,%.0f,%s\n", n, runs ? ns / runs : 0, runs / s, 100 * ns / 1e9 / s / cpus, tps,
			xacts ? c / hz * 1e6 / xacts : 0, round, xacts ? h / xacts : 0, (lat - lag) * 1000, other }' >>"$out/runs.csv"
}

# A small sort per transaction: 51 accounts in a range, by balance.
printf '%s\n' '\set a random(1, 1000000 - 50)' \
	'select abalance from pgbench_accounts where aid between :a and :a + 50 order by abalance;' >"$out/sort.sql"
chmod 644 "$out/sort.sql"
echo "variant,ns_per_run,runs_per_s,bpf_pct_cpus,tps,cpu_us_per_xact,round,halts_per_xact,latency_us,other_cpu_pct" >"$out/runs.csv"
n=${#names[@]}
for ((r = 0; r < WC_ROUNDS; r++)); do
	# TPC-B's dead rows, vacuumed between rounds, not inside a window.
	cl_psql -c 'vacuum pgbench_branches, pgbench_tellers' >/dev/null
	for ((j = 0; j < n; j++)); do
		tries=0
		until window $(((j + r) % n)) $((r + 1)) "$tries"; do tries=$((tries + 1)); done
	done
	bench_log "round $((r + 1)) of $WC_ROUNDS"
done
cluster_stop

echo "$WC_SCRIPT $WC_ARGS, $WC_SHAPE${WC_RATE:+ at $WC_RATE TPS}, $WC_ROUNDS windows of $WC_SECONDS s each, PostgreSQL $WC_BUILD ($out):"
printf '%-10s %-18s %-12s %-10s %-16s %-22s %-20s %-10s %-20s %s\n' variant "ns/run (range)" "runs/s" "runs/xact" "BPF % of CPUs" "TPS (range)" \
	"CPU us/xact (range)" "halts/xact" "latency us (range)" "other % (max)"
for name in "${names[@]}"; do
	awk -F, -v n="$name" 'NR > 1 && $1 == n { print }' "$out/runs.csv" >"$out/$name.csv"
	med() { cut -d, -f"$1" "$out/$name.csv" | stat_median; }
	rng() { printf '%s..%s' "$(cut -d, -f"$1" "$out/$name.csv" | stat_min)" "$(cut -d, -f"$1" "$out/$name.csv" | stat_max)"; }
	printf '%-10s %-18s %-12s %-10s %-16s %-22s %-20s %-10s %-20s %s\n' "$name" "$(med 2) ($(rng 2))" "$(med 3)" \
		"$(awk -F, '$5 > 0 { printf "%.2f\n", $3 / $5 }' "$out/$name.csv" | stat_median)" "$(med 4) ($(rng 4))" "$(med 5) ($(rng 5))" \
		"$(med 6) ($(rng 6))" "$(med 8)" "$(med 9) ($(rng 9))" "$(cut -d, -f10 "$out/$name.csv" | stat_max)"
done
# Per variant, COLUMN of runs.csv less the base variant's in the same
# round: median (range), rounds more.
base_diff() {
	local col=$1 what=$2 name
	echo "$what more than $WC_BASE in the same round: median (range), rounds more"
	for name in "${names[@]}"; do
		[[ $name == "$WC_BASE" ]] && continue
		awk -F, -v n="$name" -v b="$WC_BASE" -v c="$col" 'NR > 1 && ($1 == n || $1 == b) { v[$7, $1] = $c; r[$7] = 1 }
			END { for (k in r) if ((k, n) in v && (k, b) in v) print v[k, n] - v[k, b] }' "$out/runs.csv" >"$out/$name-diff"
		printf '%-10s %s (%s..%s), %s of %s\n' "$name" "$(stat_median <"$out/$name-diff")" "$(stat_min <"$out/$name-diff")" \
			"$(stat_max <"$out/$name-diff")" "$(awk '$1 > 0' "$out/$name-diff" | wc -l)" "$(wc -l <"$out/$name-diff")"
	done
}
if [[ -n ${WC_BASE:-} ]]; then
	base_diff 6 "CPU us per transaction"
	[[ -n ${WC_RATE:-} ]] && base_diff 9 "Latency us per transaction"
fi
