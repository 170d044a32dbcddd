#!/usr/bin/env bash
# The wait-event scripts under bpftrace against real servers (every leg:
# each server build with each bpftrace), with waits of known length, each
# named by pg_stat_activity while it happens:
#   S: SELECT pg_sleep(0.5)                    ~500 ms in Timeout:PgSleep
#   B: UPDATE of a row that A holds ~700 ms   that time in Lock:transactionid
#   C: pg_advisory_lock that A holds ~400 ms  that time in Lock:advisory
# (B's and C's expected times are measured by the test: from when
# pg_stat_activity first shows them waiting to A's release.)
#   A: idle in its transaction meanwhile        Client:ClientRead
# waits (by backend), waits-by-query (by query text) and offcpu-stacks (by
# stack, folded as its documentation says) must all show them; so must waits
# per_backend=off in its totals (with no per-backend map) and waits
# interval=1 summed over its reports (each wait in the one report of the
# second it ended in). Also: the wait-event layouts match the DWARF of the
# debug builds.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$(dirname "$0")/../lib/lock-sessions.sh"    # waiting_pid, psa_wait, wait_span

TOL_MS=100

# Milliseconds charged to PID and EVENT in "@MAP[PID, EVENT]: US" lines.
ms_of() {
	awk -v key="$1[$3," -v ev="$4]:" '$1 == key && $2 == ev { s += $3 } END { printf "%d\n", s / 1000 }' "$2"
}

# Milliseconds in "@wait_us[KIND, EVENT]: US" lines of FILE, summed over
# the process kinds and every report (interval=) in it.
total_ms() {
	awk -v ev="$2]:" '$1 ~ /^@wait_us\[[0-9]+,$/ && $2 == ev { s += $3 }
		END { printf "%d\n", s / 1000 }' "$1"
}

# Milliseconds in "@wait_us_by_query[ID, EVENT]: US" lines of FILE, summed
# over the IDs whose "@query[ID]: TEXT" line has TEXT.
query_ms() {
	awk -v text="$2" -v ev="$3" '
		/^@query\[/ { i = index($0, "]: "); if (substr($0, i + 3) == text) ids[substr($0, 8, i - 8)] = 1 }
		/^@wait_us_by_query\[/ { i = index($0, "]: "); k = substr($0, 19, i - 19); j = index(k, ", ")
		                         if (substr(k, j + 2) == ev) us[substr(k, 1, j - 1)] += substr($0, i + 3) }
		END { for (id in ids) s += us[id]; printf "%d\n", s / 1000 }' "$1"
}

# Milliseconds in folded lines "EVENT;frame;... US" of $E2E_TMP/folded.
folded_ms() {
	awk -v ev="$1" 'index($0, ev ";") == 1 { s += $NF } END { printf "%d\n", s / 1000 }' "$E2E_TMP/folded"
}

# Milliseconds in "@wait_us_by_query[ID, EVENT]: US" lines of FILE for ID.
id_ms() {
	awk -v key="@wait_us_by_query[$2," -v ev="$3]:" '$1 == key && $2 == ev { s += $3 }
		END { printf "%d\n", s / 1000 }' "$1"
}

# "STATE CPU_MS SWITCHES" of the cluster's process PID: its scheduler state
# (S: asleep), CPU time and voluntary switches so far, so a wait the
# scripts did not see can be told from one that never left the CPU.
task_now() {
	local host st cpu vcs
	host=$(cl_host_pid "$1") || { echo "? ? ?"; return 0; }
	st=$(awk '$1 == "State:" { print $2 }' "/proc/$host/status" 2>/dev/null)
	read -r cpu _ <"/proc/$host/schedstat" 2>/dev/null || cpu=0
	vcs=$(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$host/status" 2>/dev/null)
	echo "${st:-?} $((cpu / 1000000)) ${vcs:-?}"
}

# Checks that waiter WHO slept through its wait, from task_now's readings
# at its first sight (BEFORE) and just before its release (AFTER): asleep
# both times, with at most a few ms on CPU between.
check_slept() {
	local who=$1 before=$2 after=$3 st0 cpu0 vcs0 st1 cpu1 vcs1
	read -r st0 cpu0 vcs0 <<<"$before"
	read -r st1 cpu1 vcs1 <<<"$after"
	check_eq "$LEG: $who sleeps while it waits (state, CPU ms, voluntary switches: $before, then $after)" \
		"$st0 $st1 $(( ${cpu1/\?/0} - ${cpu0/\?/0} <= 20 ))" "S S 1"
}

# pg_stat_activity.query_id of PID (what waits-by-query by=queryid keys by).
query_id() {
	cl_psql -c "select query_id from pg_stat_activity where pid = $1"
}

# The query_id of statement TEXT, as EXPLAIN VERBOSE gives it (the same
# for every run of TEXT: constants do not count). pg_stat_activity shows
# it only while the session lives, and a busy CI read it after S's psql
# had ended.
explained_query_id() {
	cl_psql -c "explain (verbose, costs off) $1" | sed -n 's/^ *Query Identifier: *//p'
}

# Checks that pg_stat_activity showed WHO's query_id PSA as EXPLAIN gives
# it, WANT, when it was read in time (PSA empty: the session had ended).
check_psa_query_id() {
	local who=$1 psa=$2 want=$3
	if [[ -n $psa ]]; then
		check_eq "$LEG: $who's query_id in pg_stat_activity is EXPLAIN's" "$psa" "$want"
	else
		echo "$LEG: $who's query_id: its session had ended before pg_stat_activity was read" >&2
	fi
}

test_leg() {
	# Query IDs: so that waits-by-query by=queryid has IDs to show.
	# shellcheck disable=SC2046 # query_id_guc: one word or none
	cluster_start "$LEG_BUILD" $(query_id_guc "$LEG_BUILD")
	if readelf -S "$CL_BIN/postgres" 2>/dev/null | grep -q '\.debug_info'; then
		local out rc=0
		out=$("$PGBT_GEN" check-layouts --bin "$CL_BIN/postgres" 2>&1) || rc=$?
		check_eq "$LEG: layouts (with the wait-event names) match DWARF ($(tail -n 3 <<<"$out"))" "$rc" 0
	fi
	cl_psql -c "create table wt (id int primary key, v int); insert into wt values (1, 0)"
	# 13 has no query_id: by=queryid is refused there, saying so.
	local qids=1
	if ((CL_MAJOR < 14)); then
		qids=
		local rc=0
		"$PGBT_GEN" -p "$CL_PID" waits-by-query by=queryid >"$E2E_TMP/qid.bt" 2>"$E2E_TMP/qid.err" || rc=$?
		check_eq "$LEG: by=queryid refused on $CL_MAJOR ($(cat "$E2E_TMP/qid.err"))" "$rc" 1
		check_contains "$LEG: by=queryid: says why" "$(cat "$E2E_TMP/qid.err")" "needs PostgreSQL 14 or later"
		check_empty "$LEG: by=queryid: nothing on stdout" "$(cat "$E2E_TMP/qid.bt")"
	else
		render waits-by-queryid waits-by-query by=queryid
	fi
	render waits waits
	render waits-nopid waits per_backend=off
	render waits-interval waits interval=1
	check_empty "$LEG: per_backend=off renders no per-backend map (outside the header)" \
		"$(sed '1,/^ \*\//d' "$E2E_TMP/waits-nopid.bt" | grep wait_us_by_pid || true)"
	check_contains "$LEG: per_backend=on renders the per-backend map" \
		"$(sed '1,/^ \*\//d' "$E2E_TMP/waits.bt")" "@wait_us_by_pid["
	render waits-by-query waits-by-query
	render offcpu-stacks offcpu-stacks
	check_contains "$LEG: waits says what it uses" "$(cat "$E2E_TMP/waits.bt")" "through sched_switch"
	# Launched together, so they compile side by side.
	bt_launch "$E2E_TMP/waits.bt" "$E2E_TMP/waits.out"
	local bt_waits=$BT_PID
	bt_launch "$E2E_TMP/waits-nopid.bt" "$E2E_TMP/waits-nopid.out"
	local bt_nopid=$BT_PID
	bt_launch "$E2E_TMP/waits-interval.bt" "$E2E_TMP/waits-interval.out"
	local bt_interval=$BT_PID
	# waits-by-query with strings of 200 bytes (the default) and of 64.
	bt_launch "$E2E_TMP/waits-by-query.bt" "$E2E_TMP/waits-by-query.out"
	local bt_query=$BT_PID
	BT_STRLEN=64 bt_launch "$E2E_TMP/waits-by-query.bt" "$E2E_TMP/waits-by-query-64.out"
	local bt_query64=$BT_PID
	local bt_queryid=
	if [[ -n $qids ]]; then
		bt_launch "$E2E_TMP/waits-by-queryid.bt" "$E2E_TMP/waits-by-queryid.out"
		bt_queryid=$BT_PID
	fi
	bt_launch "$E2E_TMP/offcpu-stacks.bt" "$E2E_TMP/offcpu-stacks.out"
	local bt_stacks=$BT_PID
	local bts=("$bt_waits" "$bt_nopid" "$bt_interval" "$bt_query" "$bt_query64" $bt_queryid "$bt_stacks")
	bt_attached "${bts[@]}" || { bt_stop "${bts[@]}"; cluster_stop; return 0; }
	local t_attached
	t_attached=$(now_ms)

	# A: a session fed through a fifo, so the test decides when it commits.
	local pgdir=$E2E_TMP/a-$LEG_BUILD-$LEG_BT afd a_pid
	local fifo=$pgdir/a.in
	mkdir -p "$pgdir"
	chown postgres: "$pgdir"    # A (psql as postgres) writes its PID there
	mkfifo "$fifo"
	chmod 666 "$fifo"
	pgbt_bg cl_psql -o /dev/null -f "$fifo"
	local a_bg=$BG_PID
	exec {afd}<>"$fifo"    # read-write: never blocks, even if psql failed
	echo "begin; update wt set v = v + 1 where id = 1; select pg_advisory_lock(42);" >&$afd
	echo "\\o $pgdir/a.pid" >&$afd
	echo "select pg_backend_pid();" >&$afd
	echo "\\o /dev/null" >&$afd
	for ((i = 0; i < 100; i++)); do [[ -s $pgdir/a.pid ]] && break; sleep 0.05; done
	a_pid=$(head -n1 "$pgdir/a.pid")

	# S: pg_sleep, named while it sleeps.
	pgbt_bg cl_psql -c "select pg_sleep(0.5) /* waits-e2e */"
	local s_bg=$BG_PID s_pid s_wait
	read -r s_pid s_wait < <(waiting_pid_wait "select pg_sleep(0.5) /* waits-e2e */")
	check_eq "$LEG: pg_stat_activity names S's wait" "$s_wait" Timeout:PgSleep
	local s_qid b_qid c_qid
	[[ -z $qids ]] || s_qid=$(query_id "$s_pid")
	wait "$s_bg" || true

	# B: blocked on A's row lock for 700 ms.
	local t_launch=$EPOCHREALTIME
	pgbt_bg cl_psql -c "update wt set v = v + 1 where id = 1 /* waits-e2e */"
	local b_bg=$BG_PID b_pid
	b_pid=$(waiting_pid "update wt set v = v + 1 where id = 1 /* waits-e2e */")
	local t0=$EPOCHREALTIME
	check_eq "$LEG: pg_stat_activity names B's wait" "$(psa_wait "$b_pid" Lock:transactionid)" Lock:transactionid
	[[ -z $qids ]] || b_qid=$(query_id "$b_pid")
	local b_before
	b_before=$(task_now "$b_pid")
	check_eq "$LEG: pg_stat_activity names idle A's wait" "$(psa_wait "$a_pid" Client:ClientRead)" Client:ClientRead
	sleep 0.7
	check_slept B "$b_before" "$(task_now "$b_pid")"
	echo "commit;" >&$afd
	# B waited from between its launch and t0 (when a poll saw it waiting)
	# to the commit: the middle of that span, give or take half of it.
	local b_ms b_tol
	read -r b_ms b_tol < <(wait_span "$t_launch" "$t0")
	wait "$b_bg" || true

	# C: blocked on A's advisory lock (session level, kept after commit) for 400 ms.
	t_launch=$EPOCHREALTIME
	pgbt_bg cl_psql -c "select pg_advisory_lock(42) /* waits-e2e */"
	local c_bg=$BG_PID c_pid
	c_pid=$(waiting_pid "select pg_advisory_lock(42) /* waits-e2e */")
	t0=$EPOCHREALTIME
	check_eq "$LEG: pg_stat_activity names C's wait" "$(psa_wait "$c_pid" Lock:advisory)" Lock:advisory
	[[ -z $qids ]] || c_qid=$(query_id "$c_pid")
	local c_before
	c_before=$(task_now "$c_pid")
	sleep 0.4
	check_slept C "$c_before" "$(task_now "$c_pid")"
	echo "select pg_advisory_unlock(42);" >&$afd
	local c_ms c_tol
	read -r c_ms c_tol < <(wait_span "$t_launch" "$t0")
	wait "$c_bg" || true
	exec {afd}>&-
	wait "$a_bg" || true
	sleep 0.3
	# Switches the kernel ran none of these programs for (another BPF
	# program running on that CPU): a wait all the scripts missed at once
	# would show here.
	local pid misses=
	for pid in "${bts[@]}"; do misses+=" $(bt_recursion_misses "$pid")"; done
	echo "$LEG: recursion misses of the seven scripts:$misses" >&2
	# interval=1 reports at least twice before the end (a short workload
	# on a busy machine gave one): 2.5 s since all attached, 20 s at most;
	# then it stops just after a report (bt_stop_after_reports says why).
	local iv=$E2E_TMP/waits-interval.out n others=()
	while (($(now_ms) - t_attached < 20000)); do
		n=$(grep -c 'wait events in the last 1 s' "$iv" || true)
		(($(now_ms) - t_attached >= 2500 && n >= 2)) && break
		sleep 0.05
	done
	for pid in "${bts[@]}"; do [[ $pid == "$bt_interval" ]] || others+=("$pid"); done
	bt_stop "${others[@]}"
	bt_stop_after_reports 'wait events in the last 1 s' "$bt_interval"

	local out=$E2E_TMP/waits.out
	check_near "$LEG: S: ms in Timeout:PgSleep" "$(ms_of @wait_us_by_pid "$out" "$s_pid" Timeout:PgSleep)" 500 "$TOL_MS"
	check_near "$LEG: B: ms in Lock:transactionid" "$(ms_of @wait_us_by_pid "$out" "$b_pid" Lock:transactionid)" "$b_ms" "$b_tol"
	check_near "$LEG: C: ms in Lock:advisory" "$(ms_of @wait_us_by_pid "$out" "$c_pid" Lock:advisory)" "$c_ms" "$c_tol"
	# A sat idle in its transaction through B's 700 ms and C's 400 ms.
	local a_idle
	a_idle=$(ms_of @wait_us_by_pid "$out" "$a_pid" Client:ClientRead)
	check_eq "$LEG: A: idle time in Client:ClientRead >= 1000 ms (got $a_idle)" "$((a_idle >= 1000))" 1
	check_contains "$LEG: totals name Timeout:PgSleep, a client backend's" "$(grep '^@wait_us\[' "$out")" "@wait_us[1, Timeout:PgSleep]:"
	check_contains "$LEG: histograms per event" "$(cat "$out")" "@wait_hist_us[1, Lock:transactionid]:"
	check_empty "$LEG: no bpftrace errors" "$(bt_problems "$out")"

	# per_backend=off: the same waits in the totals (only S slept in
	# pg_sleep, only B waited for a transaction, only C for an advisory
	# lock), the same as waits with per_backend=on traced, and no map per
	# backend at the end.
	local on=$out off=$E2E_TMP/waits-nopid.out
	check_near "$LEG: per_backend=off: ms in Timeout:PgSleep" "$(total_ms "$off" Timeout:PgSleep)" 500 "$TOL_MS"
	check_near "$LEG: per_backend=off: ms in Lock:transactionid" "$(total_ms "$off" Lock:transactionid)" "$b_ms" "$b_tol"
	check_near "$LEG: per_backend=off: ms in Lock:advisory" "$(total_ms "$off" Lock:advisory)" "$c_ms" "$c_tol"
	check_near "$LEG: per_backend=off and on agree on Timeout:PgSleep (ms)" \
		"$(total_ms "$off" Timeout:PgSleep)" "$(total_ms "$on" Timeout:PgSleep)" 5
	check_near "$LEG: per_backend=off and on agree on Lock:transactionid (ms)" \
		"$(total_ms "$off" Lock:transactionid)" "$(total_ms "$on" Lock:transactionid)" 5
	check_contains "$LEG: per_backend=off: histograms per event" "$(cat "$off")" "@wait_hist_us[1, Timeout:PgSleep]:"
	check_eq "$LEG: per_backend=off prints no @wait_us_by_pid" "$(grep -c '^@wait_us_by_pid' "$off" || true)" 0
	check_empty "$LEG: per_backend=off: no bpftrace errors" "$(bt_problems "$off")"

	# interval=1: a report a second, each with what ended in that second:
	# summed over the reports, the same waits (S's sleep ends in the first
	# seconds: were the maps not cleared after each report, every later
	# report would count it again).
	check_eq "$LEG: interval=1: reports a second, then the rest at the end" \
		"$(awk '/wait events in the last 1 s/ { n++ } /wait events since the last report/ { e++ }
			END { print (n >= 2 ? "several" : n + 0), e + 0 }' "$iv")" "several 1"
	check_near "$LEG: interval=1: ms in Timeout:PgSleep, all reports" "$(total_ms "$iv" Timeout:PgSleep)" 500 "$TOL_MS"
	check_near "$LEG: interval=1: ms in Lock:transactionid, all reports" "$(total_ms "$iv" Lock:transactionid)" "$b_ms" "$b_tol"
	check_near "$LEG: interval=1: ms in Lock:advisory, all reports" "$(total_ms "$iv" Lock:advisory)" "$c_ms" "$c_tol"
	check_near "$LEG: interval=1: S's ms by backend, all reports" "$(ms_of @wait_us_by_pid "$iv" "$s_pid" Timeout:PgSleep)" 500 "$TOL_MS"
	check_empty "$LEG: interval=1: no bpftrace errors" "$(bt_problems "$iv")"

	# waits-by-query: the same waits under each session's query text, with
	# BPFTRACE_STRLEN 200 and 64, and under the query_id pg_stat_activity
	# showed for each session while it waited.
	local f
	for f in waits-by-query waits-by-query-64; do
		out=$E2E_TMP/$f.out
		check_near "$LEG: $f: pg_sleep's ms in Timeout:PgSleep" \
			"$(query_ms "$out" "select pg_sleep(0.5) /* waits-e2e */" Timeout:PgSleep)" 500 "$TOL_MS"
		check_near "$LEG: $f: the blocked UPDATE's ms in Lock:transactionid" \
			"$(query_ms "$out" "update wt set v = v + 1 where id = 1 /* waits-e2e */" Lock:transactionid)" "$b_ms" "$b_tol"
		check_near "$LEG: $f: pg_advisory_lock's ms in Lock:advisory" \
			"$(query_ms "$out" "select pg_advisory_lock(42) /* waits-e2e */" Lock:advisory)" "$c_ms" "$c_tol"
	done
	if [[ -n $qids ]]; then
		out=$E2E_TMP/waits-by-queryid.out
		local s_id b_id c_id
		s_id=$(explained_query_id "select pg_sleep(0.5) /* waits-e2e */")
		b_id=$(explained_query_id "update wt set v = v + 1 where id = 1 /* waits-e2e */")
		c_id=$(explained_query_id "select pg_advisory_lock(42) /* waits-e2e */")
		check_psa_query_id S "$s_qid" "$s_id"
		check_psa_query_id B "$b_qid" "$b_id"
		check_psa_query_id C "$c_qid" "$c_id"
		check_near "$LEG: by queryid: S's ms in Timeout:PgSleep" "$(id_ms "$out" "$s_id" Timeout:PgSleep)" 500 "$TOL_MS"
		check_near "$LEG: by queryid: B's ms in Lock:transactionid" "$(id_ms "$out" "$b_id" Lock:transactionid)" "$b_ms" "$b_tol"
		check_near "$LEG: by queryid: C's ms in Lock:advisory" "$(id_ms "$out" "$c_id" Lock:advisory)" "$c_ms" "$c_tol"
	fi
	for f in waits-by-query waits-by-query-64 ${qids:+waits-by-queryid}; do
		check_empty "$LEG: $f: no bpftrace errors" \
			"$(bt_problems "$E2E_TMP/$f.out")"
	done

	# offcpu-stacks, folded by the awk its documentation gives: only S
	# slept in pg_sleep, only B waited for a transaction, only C for an
	# advisory lock.
	local fold
	fold=$(sed -n '/^awk/,/offcpu.txt |$/p' "$PGBT_ROOT/docs/scripts/offcpu-stacks.md")
	fold=${fold#*\'}    # the program between awk's quotes
	fold=${fold%\'*}
	awk "$fold" "$E2E_TMP/offcpu-stacks.out" >"$E2E_TMP/folded"
	# What bpftrace printed but the frames (indented, they may name
	# functions such as EmitErrorReport).
	local said slept
	said=$(grep -v '^ ' "$E2E_TMP/offcpu-stacks.out")
	check_empty "$LEG: offcpu-stacks: no bpftrace errors" "$(bt_problems /dev/stdin <<<"$said")"
	slept=$(folded_ms Timeout:PgSleep)
	check_near "$LEG: folded stacks: ms under Timeout:PgSleep" "$slept" 500 "$TOL_MS"
	# (seen once, none of the three: show what bpftrace said)
	[[ $slept != 0 ]] || _e2e_show "$(head -n 40 <<<"$said")"
	check_near "$LEG: folded stacks: ms under Lock:transactionid" "$(folded_ms Lock:transactionid)" "$b_ms" "$b_tol"
	check_near "$LEG: folded stacks: ms under Lock:advisory" "$(folded_ms Lock:advisory)" "$c_ms" "$c_tol"
	cluster_stop
}

for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg
done
e2e_done
