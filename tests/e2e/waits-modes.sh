#!/usr/bin/env bash
# The waits script's USDT mechanism (mode=usdt) and backend-waits'
# mechanisms, under bpftrace against real servers, with waits of known
# length:
#   usdt   on 18 built with tests/setup/pg18-wait-event-probes.patch
#          (build-postgres.sh 18-waitprobes), chosen by default there,
#          under each bpftrace:
#            S: SELECT pg_sleep(0.5)          ~500 ms in Timeout:PgSleep
#            B: UPDATE of a row H holds 700 ms  that time in Lock:transactionid
#          and a sched_switch tracer (mode=switch) run at the same time
#          agrees on both; W's 50 commits with synchronous_commit on write
#          WAL without sleeping: usdt counts at least 50 IO:WalWrite waits,
#          sched_switch fewer (it sees only waits that leave the CPU).
#   watch  backend-waits on every server build (bpftraces in turn), and on
#          18-waitprobes (the first bpftrace), every mechanism that can run
#          there side by side, each following one backend A: via=switch
#          everywhere, via=watchpoint where this machine's watchpoints fire
#          (a skip by name elsewhere), via=usdt where the build has the
#          probes, and via=auto, which must pick the watchpoint where they
#          fire, else the USDT probes where built, else sched_switch. A,
#          followed by pid=A, sleeps 0.5 s then waits ~400 ms for an
#          advisory lock H holds; only A is seen, with both waits and its
#          idle ClientRead.
#   sample waits mode=sample (the sampler: every backend's PGPROC read at
#          each tick that lands in the cluster) on every server build
#          (bpftraces in turn), beside waits mode=switch, in a cluster of
#          max_connections=150 (so bpftrace before 0.24 reads its slots in
#          two windows): B burns a CPU for ~2.6 s, so that every tick lands
#          in the cluster; S sleeps 2 s in it; I stays idle; W is an idle
#          walsender. S's 2 s in Timeout:PgSleep, B's time on CPU and I's
#          Client:ClientRead in every sample come out of samples x 1/hz s
#          (within SAMPLE_TOL_MS per window), the client backends' shares
#          within SHARE_TOL points of mode=switch's, and the background
#          processes under their own kinds (the checkpointer under 0, the
#          logical replication launcher under 2, W under 3).
#   errors a bad pid= (not a backend, the postmaster, no such process),
#          backend-waits without pid=, mode=usdt and via=usdt on a build
#          without the probes, an hz= out of range: one line on stderr,
#          nothing on stdout (on the first leg on the host whose build has
#          no such probes).
# Every rendering also keeps to the portable bpftrace subset and compiles.
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$(dirname "$0")/../lib/lock-sessions.sh"    # wait_for, hold_until_waited, waiting_pid, psa_wait, wait_span

LINT=$PGBT_ROOT/tests/lint/bt-subset.sh
TOL_MS=100
# A wait between two bounds the test took itself: the timers' and the
# switches' own slack (a wait's first and last on-CPU moments).
SLACK_MS=20
USDT_BUILD=18-waitprobes
# mode=sample: a sample's figure is its window's count of ticks x 1/hz s;
# S's 2 s sleep and B's burn are caught to within a tick or two at their
# ends (a window's tick each), and a tick may be missed or, rarely, taken
# twice (two CPUs whose timers fire together). Measured: tests/README.md.
SAMPLE_TOL_MS=150
SHARE_TOL=6

# The rendering $E2E_TMP/NAME.bt keeps to the subset and compiles;
# BACKEND: our PID of the backend it follows (its probes name that PID).
lint() {
	local bt=$E2E_TMP/$1.bt
	check_empty "$LEG: $1 keeps to the portable subset" "$("$LINT" "$bt" "$CL_PID" ${2:-} 2>&1)"
	check_empty "$LEG: $1 compiles" \
		"$(bt_compile "$bt")"
}

# The first line a rendering prints (BEGIN's printf format strings, joined).
header() {
	sed -n '/^BEGIN/,/^}/s/^[[:space:]]*printf("\([^"]*\)".*/\1/p' "$E2E_TMP/$1.bt" |
		tr -d '\n' | sed 's/\\n//g'
}

# Milliseconds charged to PID and EVENT in "@wait_us_by_pid[PID, EVENT]: US".
ms_of() {
	awk -v key="@wait_us_by_pid[$2," -v ev="$3]:" '$1 == key && $2 == ev { s += $3 }
		END { printf "%d\n", s / 1000 }' "$1"
}

# The count in "@waits[KIND, EVENT]: N" of FILE, over the process kinds
# (0 when absent).
count_of() {
	awk -v ev="$2]:" '$1 ~ /^@waits\[[0-9]+,$/ && $2 == ev { n += $3 } END { print n + 0 }' "$1"
}

test_usdt() {
	cluster_start "$LEG_BUILD"
	cl_psql -c "create table wt (id int primary key, v int); insert into wt values (1, 0);
		create table wl (i int)"
	render usdt waits
	render switch waits mode=switch
	check_contains "$LEG: waits picks the USDT probes" "$(header usdt)" \
		"through USDT wait__event__start/end (every wait, on CPU or off"
	check_contains "$LEG: mode=switch says what it is" "$(header switch)" "through sched_switch"
	lint usdt
	lint switch
	bt_launch "$E2E_TMP/usdt.bt" "$E2E_TMP/usdt.out"
	local bt_usdt=$BT_PID
	bt_launch "$E2E_TMP/switch.bt" "$E2E_TMP/switch.out"
	local bt_switch=$BT_PID
	bt_attached "$bt_usdt" "$bt_switch"

	# S: pg_sleep.
	pgbt_bg cl_psql -c "select pg_sleep(0.5) /* waits-modes */"
	local s_bg=$BG_PID s_pid
	s_pid=$(waiting_pid "select pg_sleep(0.5) /* waits-modes */")
	wait "$s_bg" || true

	# B: blocked 700 ms on the row H updated, from when it waits to H's commit.
	{
		echo "begin; update wt set v = v + 1 where id = 1;"
		hold_until_waited "locktype = 'transactionid'" 0.7
		echo "commit;"
	} >"$E2E_TMP/h.sql"
	pgbt_bg cl_psql -o /dev/null -f "$E2E_TMP/h.sql"
	local h_bg=$BG_PID b_pid t0 b_ms
	wait_for "select count(*) from pg_locks where locktype = 'transactionid' and mode = 'ExclusiveLock'
		and pid <> pg_backend_pid()"
	local t_launch=$EPOCHREALTIME
	pgbt_bg cl_psql -c "update wt set v = v + 1 where id = 1 /* waits-modes */"
	local b_bg=$BG_PID
	b_pid=$(waiting_pid "update wt set v = v + 1 where id = 1 /* waits-modes */")
	t0=$EPOCHREALTIME
	check_eq "$LEG: pg_stat_activity names B's wait" "$(psa_wait "$b_pid" Lock:transactionid)" Lock:transactionid
	local st=0
	wait "$h_bg" || st=$?
	# B waited from between its launch and t0 (when a poll saw it waiting)
	# to H's commit: the middle of that span, give or take half of it.
	local b_tol
	read -r b_ms b_tol < <(wait_span "$t_launch" "$t0")
	check_eq "$LEG: H held the row ~700 ms after B waited, then committed" "$st" 0
	check_near "$LEG: B's wait as staged (ms)" "$b_ms" 700 $((b_tol + 50))
	st=0; wait "$b_bg" || st=$?
	check_eq "$LEG: B's update went through" "$st" 0

	# W: 50 commits, each writing its WAL itself (a write to the page cache).
	{
		echo "set synchronous_commit = on;"
		for ((i = 0; i < 50; i++)); do echo "insert into wl values ($i);"; done
	} | cl_psql >/dev/null
	sleep 0.3
	bt_stop "$bt_switch" "$bt_usdt"    # ~190 USDT sites: ~23 s to detach (see bt_stop)

	local u=$E2E_TMP/usdt.out s=$E2E_TMP/switch.out
	check_empty "$LEG: no bpftrace errors" "$(bt_problems "$u" "$s")"
	check_near "$LEG: usdt: S's ms in Timeout:PgSleep" "$(ms_of "$u" "$s_pid" Timeout:PgSleep)" 500 "$TOL_MS"
	check_near "$LEG: usdt: B's ms in Lock:transactionid (~700)" \
		"$(ms_of "$u" "$b_pid" Lock:transactionid)" "$b_ms" "$b_tol"
	check_near "$LEG: usdt and sched_switch agree on S's pg_sleep (ms)" \
		"$(ms_of "$u" "$s_pid" Timeout:PgSleep)" "$(ms_of "$s" "$s_pid" Timeout:PgSleep)" 20
	check_near "$LEG: usdt and sched_switch agree on B's row lock (ms)" \
		"$(ms_of "$u" "$b_pid" Lock:transactionid)" "$(ms_of "$s" "$b_pid" Lock:transactionid)" 20
	local wu ws
	wu=$(count_of "$u" IO:WalWrite)    # the name of WAL_WRITE since 17
	ws=$(count_of "$s" IO:WalWrite)
	check_eq "$LEG: usdt sees W's 50 WAL writes, on CPU too (got $wu)" "$((wu >= 50))" 1
	# Fewer, possibly none: a WAL write to the page cache rarely sleeps.
	# (A sched_switch tracer that saw nothing at all fails the S and B
	# agreement checks above.)
	check_eq "$LEG: sched_switch sees fewer of them ($ws < $wu)" "$((ws < wu))" 1
	cluster_stop
}

# Errors: one line on stderr, nothing on stdout (ARGS: a script and its
# parameters).
expect_gen_error() {
	local what=$1 want=$2 rc=0; shift 2
	"$PGBT_GEN" -p "$CL_PID" "$@" >"$E2E_TMP/err.out" 2>"$E2E_TMP/err.err" || rc=$?
	check_eq "$LEG: $what: fails" "$((rc != 0))" 1
	check_empty "$LEG: $what: nothing on stdout" "$(cat "$E2E_TMP/err.out")"
	check_eq "$LEG: $what: one line on stderr" "$(wc -l <"$E2E_TMP/err.err")" 1
	check_contains "$LEG: $what: says why" "$(cat "$E2E_TMP/err.err")" "$want"
}

test_errors() {
	local gone
	sleep 0 & gone=$!
	wait "$gone"
	expect_gen_error "pid=1" "pid=1 is not a backend of postmaster $CL_PID" backend-waits pid=1
	expect_gen_error "pid=postmaster" "is the postmaster" backend-waits pid="$CL_PID"
	expect_gen_error "pid of an exited process" "pid=$gone: no such process" backend-waits pid="$gone"
	expect_gen_error "pid=abc" "not an integer" backend-waits pid=abc
	expect_gen_error "backend-waits without pid" "needs pid=PID" backend-waits
	expect_gen_error "mode=usdt without the probes" "mode=usdt needs a build with the USDT probes" \
		waits mode=usdt
	expect_gen_error "backend-waits via=usdt without the probes" "via=usdt needs a build with the USDT probes" \
		backend-waits pid="$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")" via=usdt
	expect_gen_error "waits hz=0" "hz='0': not an integer in 1..100" waits mode=sample hz=0
	expect_gen_error "waits hz=101" "hz='101': not an integer in 1..100" waits mode=sample hz=101
}

# What each mechanism's first line says of itself.
declare -A SAYS=(
	[watchpoint]="hardware watchpoint on its wait_event_info (every wait of this backend"
	[usdt]="through USDT wait__event__start/end (every wait of this backend"
	[switch]="through sched_switch (its off-CPU waits only"
)

ERRORS_TESTED=
test_watch() {
	cluster_start "$LEG_BUILD"
	# (on the host: in a container, PID 1 is the postmaster; on a build
	# without the USDT wait probes)
	if [[ -z $ERRORS_TESTED && -z $CL_ROOT && $LEG_BUILD != "$USDT_BUILD" ]]; then
		test_errors
		ERRORS_TESTED=1
	fi
	# The mechanisms that can run here, and the one auto must pick.
	local vias=switch auto_via=switch via
	[[ $LEG_BUILD == "$USDT_BUILD" ]] && vias+=" usdt" auto_via=usdt
	if watchpoints_fire; then
		vias+=" watchpoint" auto_via=watchpoint
	else
		skip "$LEG: backend-waits via=watchpoint on a backend's waits: $WATCHPOINTS_WHY"
	fi
	vias+=" auto"

	# A: a session fed through a fifo; its PID is known before it waits.
	local dir=$E2E_TMP/watch-$LEG_BUILD-$LEG_BT afd a_pid i
	mkdir -p "$dir"
	chown postgres: "$dir"
	mkfifo "$dir/a.in"
	chmod 666 "$dir/a.in"
	pgbt_bg cl_psql -o /dev/null -f "$dir/a.in"
	local a_bg=$BG_PID
	exec {afd}<>"$dir/a.in"
	printf '\\o %s\nselect pg_backend_pid();\n\\o /dev/null\n' "$dir/a.pid" >&$afd
	for ((i = 0; i < 100; i++)); do [[ -s $dir/a.pid ]] && break; sleep 0.05; done
	a_pid=$(head -n1 "$dir/a.pid")

	local pids=()
	for via in $vias; do
		render "watch-$via" backend-waits pid="$a_pid" via="$via" || continue
		local says=${SAYS[$via]:-${SAYS[$auto_via]}}
		check_contains "$LEG: backend-waits via=$via says what it uses and sees" "$(header "watch-$via")" "$says"
		check_contains "$LEG: backend-waits via=$via: its provenance too" \
			"$(grep '^// mechanism:' "$E2E_TMP/watch-$via.bt")" "// mechanism:  "
		[[ $via == watchpoint ]] && check_contains "$LEG: backend-waits via=watchpoint gives its cost" \
			"$(header "watch-$via")" "~9 us per wait event"
		lint "watch-$via" "$(cl_host_pid "$a_pid")"
		bt_launch "$E2E_TMP/watch-$via.bt" "$E2E_TMP/watch-$via-$LEG_BUILD.out"
		pids+=("$BT_PID")
	done
	bt_attached "${pids[@]}" || true

	echo "select pg_sleep(0.5);" >&$afd
	check_eq "$LEG: pg_stat_activity names A's sleep" "$(psa_wait "$a_pid" Timeout:PgSleep)" Timeout:PgSleep
	check_eq "$LEG: A back to idle" "$(psa_wait "$a_pid" Client:ClientRead)" Client:ClientRead
	sleep 0.3    # idle: Client:ClientRead

	# H holds advisory lock 7 until A waits for it, then 0.4 s more.
	{
		echo "select pg_advisory_lock(7);"
		hold_until_waited "locktype = 'advisory'" 0.4
	} >"$E2E_TMP/h.sql"
	pgbt_bg cl_psql -o /dev/null -f "$E2E_TMP/h.sql"
	local h_bg=$BG_PID t_asked c_max
	wait_for "select count(*) from pg_locks where locktype = 'advisory' and granted"
	t_asked=$(now_ms)
	echo "select pg_advisory_lock(7);" >&$afd
	check_eq "$LEG: pg_stat_activity names A's lock wait" "$(psa_wait "$a_pid" Lock:advisory)" Lock:advisory
	local st=0
	wait "$h_bg" || st=$?
	check_eq "$LEG: H held the advisory lock ~400 ms after A waited" "$st" 0
	check_eq "$LEG: A got the lock" "$(psa_wait "$a_pid" Client:ClientRead)" Client:ClientRead
	# A's wait began after it was asked to take the lock and ended before
	# it was seen idle again; H held the lock 400 ms after it saw A wait.
	c_max=$(($(now_ms) - t_asked))
	# bpftrace inherited the fifo too: no EOF, so A is told to quit.
	echo '\q' >&$afd
	exec {afd}>&-
	wait "$a_bg" || true
	sleep 0.2
	((${#pids[@]} == 0)) || bt_stop "${pids[@]}"

	local out a_idle
	for via in $vias; do
		out=$E2E_TMP/watch-$via-$LEG_BUILD.out
		[[ -e $out ]] || continue
		check_empty "$LEG: via=$via: no bpftrace errors" "$(bt_problems "$out")"
		check_near "$LEG: via=$via: A's ms in Timeout:PgSleep" "$(ms_of "$out" "$a_pid" Timeout:PgSleep)" 500 "$TOL_MS"
		check_between "$LEG: via=$via: A's ms in Lock:advisory" "$(ms_of "$out" "$a_pid" Lock:advisory)" 400 "$c_max" "$SLACK_MS"
		a_idle=$(ms_of "$out" "$a_pid" Client:ClientRead)
		check_eq "$LEG: via=$via: A's idle time in Client:ClientRead >= 300 ms (got $a_idle)" "$((a_idle >= 300))" 1
		check_eq "$LEG: via=$via: only A is seen" \
			"$(awk -F'[][, ]+' '/^@wait_us_by_pid\[/ { print $2 }' "$out" | sort -u)" "$a_pid"
	done
	cluster_stop
}

# Sums of "@MAP[KEYS, EVENT]: N" (KEYS: the first key, e.g. a kind or
# PID; EVENT the last; "" for a map keyed by KEYS alone), in ms; N in US
# (default) or ns (unit ns).
ms_in() {
	awk -v key="@$2[$3" -v ev="$4" -v unit="${5:-us}" '
		{ k = $1; for (i = 2; i < NF; i++) k = k " " $i }
		(ev == "" && k == key "]:") || (ev != "" && k == key ", " ev "]:") { s += $NF }
		END { printf "%d\n", s / (unit == "ns" ? 1000000 : 1000) }' "$1"
}

# The client backends' share (percent) of EVENT (or "on CPU") in FILE: of
# their time on CPU and in waits, Client:ClientRead (idle) aside, as
# pgbt-gen report counts it.
client_share() {
	awk -v ev="$2" '
		$1 == "@cpu_ns[1]:" { cpu += $2 / 1000 }
		$1 == "@wait_us[1," { e = $2; for (i = 3; i < NF; i++) e = e " " $i; sub(/\]:$/, "", e)
			if (e != "Client:ClientRead") { all += $NF; if (e == ev) x += $NF } }
		END { all += cpu; if (ev == "on CPU") x = cpu
			printf "%d\n", (all > 0 ? 100 * x / all + 0.5 : -1) }' "$1"
}

test_sample() {
	cluster_start "$LEG_BUILD" max_connections=150 wal_level=replica max_wal_senders=2
	render sample waits mode=sample || { cluster_stop; return 0; }
	render sample-switch waits mode=switch || { cluster_stop; return 0; }
	check_contains "$LEG: mode=sample says what it does" "$(header sample)" \
		"Sampling the wait events of postmaster PID %d's processes %d times a second (times are estimates"
	local nwin=1
	(($(bt_minor) < 24)) && nwin=2    # slots in windows of 128

	# I and W: an idle session and an idle walsender, fed through fifos.
	local dir=$E2E_TMP/sample-$LEG_BUILD-$LEG_BT ifd wfd i_pid w_pid i
	mkdir -p "$dir" && chown postgres: "$dir"
	mkfifo "$dir/i.in" "$dir/w.in" && chmod 666 "$dir/i.in" "$dir/w.in"
	pgbt_bg cl_psql -o /dev/null -f "$dir/i.in"
	local i_bg=$BG_PID
	pgbt_bg cl_psql -o /dev/null -d "dbname=postgres replication=database" -f "$dir/w.in"
	local w_bg=$BG_PID
	exec {ifd}<>"$dir/i.in" {wfd}<>"$dir/w.in"
	printf '\\o %s\nselect pg_backend_pid();\n\\o /dev/null\n' "$dir/i.pid" >&$ifd
	for ((i = 0; i < 100; i++)); do [[ -s $dir/i.pid ]] && break; sleep 0.05; done
	i_pid=$(head -n1 "$dir/i.pid")
	wait_sql "select count(*) from pg_stat_activity where backend_type = 'walsender'" ||
		fail "$LEG: the walsender W did not connect"
	w_pid=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'walsender'")

	bt_launch "$E2E_TMP/sample.bt" "$E2E_TMP/sample.out"
	local bt_sample=$BT_PID
	bt_launch "$E2E_TMP/sample-switch.bt" "$E2E_TMP/sample-switch.out"
	local bt_switch=$BT_PID
	bt_attached "$bt_sample" "$bt_switch" || true

	# B: ~2.6 s on a CPU; S: 2 s in pg_sleep meanwhile. B reads
	# pg_stat_activity first, which touches every live process's PGPROC,
	# so that the pages of shared memory they are on are mapped in B (a
	# fresh backend has mapped only those around its own: a process a tick
	# lands in cannot read a page it never touched, BPF does not fault it
	# in, and the sampler counts such slots in @slots_unread instead).
	pgbt_bg cl_psql -o /dev/null -c "select count(*) from pg_stat_activity" \
		-c "do \$\$ begin while clock_timestamp() < statement_timestamp() + interval '2.6 s'
		loop end loop; end \$\$ /* sample-burn */"
	local b_bg=$BG_PID b_pid s_pid
	pgbt_bg cl_psql -c "select pg_sleep(2) /* sample-sleep */"
	local s_bg=$BG_PID
	s_pid=$(waiting_pid "select pg_sleep(2) /* sample-sleep */")
	b_pid=$(cl_psql -c "select pid from pg_stat_activity where query like 'do % sample-burn %'
		and pid <> pg_backend_pid()")
	# B's time runnable but not running, as the kernel counts it
	# (schedstat's run_delay), over S's sleep: mode=switch counts only
	# time running as on CPU, mode=sample also time runnable.
	local b_delay0 b_delay1 b_delay_ms=
	b_delay0=$(cl_run_delay_ns "$b_pid" 2>/dev/null) || true
	wait "$s_bg" || true
	b_delay1=$(cl_run_delay_ns "$b_pid" 2>/dev/null) || true
	[[ -n $b_delay0 && -n $b_delay1 ]] && b_delay_ms=$(((b_delay1 - b_delay0) / 1000000))
	wait "$b_bg" || true
	sleep 0.2
	bt_stop "$bt_sample" "$bt_switch"
	echo '\q' >&$ifd
	echo '\q' >&$wfd
	exec {ifd}>&- {wfd}>&-
	wait "$i_bg" || true
	wait "$w_bg" || true

	local o=$E2E_TMP/sample.out sw=$E2E_TMP/sample-switch.out sampled missed tol=$((SAMPLE_TOL_MS * nwin))
	check_empty "$LEG: mode=sample: no bpftrace errors" "$(bt_problems "$o" "$sw")"
	check_eq "$LEG: mode=sample: slots read in $nwin window(s) of this bpftrace's size" \
		"$(bt_map "$o" sample_windows)" "$nwin"
	sampled=$(bt_map "$o" sample_ticks sampled)
	missed=$(bt_map "$o" sample_ticks missed)
	echo "$LEG: mode=sample: $sampled ticks sampled, $missed missed, $(bt_map "$o" slots_unread) slot reads failed"
	# Fewer by the ticks it reports missed (no process of the cluster on
	# a CPU at any firing of the tick: B preempted by other work), never
	# more.
	local short=$((${missed:-0} * 50))
	check_between "$LEG: mode=sample: S's ms in Timeout:PgSleep, from samples (less $short ms missed)" \
		"$(ms_in "$o" wait_us_by_pid "$s_pid" Timeout:PgSleep)" $((2000 - short)) 2000 "$tol"
	check_between "$LEG: mode=sample: B's ms on CPU, from samples (less $short ms missed)" \
		"$(ms_in "$o" cpu_ns_by_pid "$b_pid" "" ns)" $((2600 - short)) 2600 "$tol"
	# I was idle at every tick sampled: in one window, at each (a tick
	# more or less, at the trace's ends); in two, at every other tick, as
	# many of them as the other window's give or take one per run of
	# sampled ticks (mostly one, B's: the others are a psql's moment).
	check_near "$LEG: mode=sample: I idle (Client:ClientRead) at every sample ($sampled ticks sampled)" \
		"$(ms_in "$o" wait_us_by_pid "$i_pid" Client:ClientRead)" $((${sampled:-0} * 50)) \
		$((nwin == 1 ? 50 : 300))
	check_eq "$LEG: mode=sample: I's PID is seen in Client:ClientRead only" \
		"$(awk -v k="@wait_us_by_pid[$i_pid," '$1 == k { print $2 }' "$o" | sort -u | tr '\n' ' ')" "Client:ClientRead]: "
	# The shares agree where B ran when runnable; where it waited on a
	# run queue (other work on its CPU) mode=switch's "on CPU" is short
	# by that wait and the two modes measure different things.
	if [[ -n $b_delay_ms ]] && ((b_delay_ms <= 100)); then
		check_near "$LEG: mode=sample: client backends' share of Timeout:PgSleep near mode=switch's (%)" \
			"$(client_share "$o" Timeout:PgSleep)" "$(client_share "$sw" Timeout:PgSleep)" "$SHARE_TOL"
		check_near "$LEG: mode=sample: client backends' share on CPU near mode=switch's (%)" \
			"$(client_share "$o" "on CPU")" "$(client_share "$sw" "on CPU")" "$SHARE_TOL"
	else
		skip "$LEG: mode=sample: client backends' shares near mode=switch's: B waited ${b_delay_ms:-?} ms on a run queue during S's sleep (over 100: mode=switch does not count it on CPU)"
	fi
	# Every process of the server, seen (B's time on CPU, the others' waits).
	local pids seen missing=
	pids=$(cl_psql -c "select pid from pg_stat_activity where pid <> pg_backend_pid() order by 1")
	seen=$(awk -F'[][, ]+' '/^@(wait_us|cpu_ns)_by_pid\[/ { print $2 }' "$o" | sort -u)
	for pid in $pids; do
		grep -qx "$pid" <<<"$seen" || missing+=" $pid"
	done
	check_eq "$LEG: mode=sample: every process of the server seen (of$(tr '\n' ' ' <<<" $pids"))" "${missing# }" ""
	# The background processes under their own kinds, as mode=switch has them.
	local k ev
	for k in "0 Activity:CheckpointerMain" "2 Activity:LogicalLauncherMain" "3 Client:ClientRead"; do
		read -r k ev <<<"$k"
		check_eq "$LEG: mode=sample: $ev under kind $k (mode=switch: $(ms_in "$sw" wait_us "$k" "$ev") ms)" \
			"$(($(ms_in "$o" wait_us "$k" "$ev") > 0))" 1
	done
	check_eq "$LEG: mode=sample: W (walsender) in Client:ClientRead under kind 3, not 1" \
		"$(($(ms_in "$o" wait_us_by_pid "$w_pid" Client:ClientRead) <= $(ms_in "$o" wait_us 3 Client:ClientRead)))" 1
	check_eq "$LEG: mode=sample: no Activity: wait under the client backends" \
		"$(grep -c '^@wait_us\[1, Activity:' "$o" || true)" 0
	cluster_stop
}

first=1
for bt in $PGBT_E2E_BPFTRACES; do
	leg_use "$USDT_BUILD/$bt" && test_usdt
	# backend-waits' USDT mechanism, beside the others, once.
	[[ -n $first ]] && leg_use "$USDT_BUILD/$bt" && test_watch
	first=
done
for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_watch
	leg_use "$leg" && test_sample
done
e2e_done
