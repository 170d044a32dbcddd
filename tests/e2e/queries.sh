#!/usr/bin/env bash
# The statement scripts under bpftrace against real servers (every leg:
# each server build with each bpftrace), with statements the test sends
# and counts itself:
#   - query-latency: role ql_fast runs `SELECT 1` through pgbench -M
#     prepared (the extended protocol), N per client, 2 clients: exactly
#     2N + 2 statements under [DB OID, ql_fast's OID] (each client's Parse
#     of the statement, then Sync, is a round trip of its own); role
#     ql_slow runs a query then pg_sleep(0.3) through psql (simple
#     protocol): exactly two statements under its key, one in the
#     [256K, 512K) us bucket; the names tables give their names; @us
#     holds those and pgbench's three of the sleeps below. A count short by
#     exactly the increments bpftrace 0.23 warned it lost passes, saying so
#     (check_count).
#   - slow-queries min_ms=100 (text, and json with bpftrace -f json):
#     pg_sleep(0.3) through psql (simple), pgbench -M extended and -M
#     prepared (extended) each give one line with ~300 ms, the protocol,
#     the text pg_stat_activity showed (cut at 63 bytes on bpftrace 0.17),
#     and, for psql's, the PID, database and user that the session itself
#     reported; the fast statements around them give no line.
#   - query-profile: in one transaction, EXPLAIN (ANALYZE, BUFFERS, WAL)
#     of a sequential scan of a table larger than shared_buffers (it
#     reads through a ring: buffers hit and read) and
#     of an INSERT of 1000 rows, each twice: the second of each (catalog
#     caches warm) shows the shared buffers hit, read, dirtied, written
#     and the WAL records and bytes that EXPLAIN counts, exactly.
#   - query-phases: pgbench -M simple, N statements, then -M prepared, N
#     statements of one prepared `SELECT 1` (parsed, analyzed, rewritten
#     and planned once: no parameters, a generic plan), then psql's
#     pg_backend_pid() and pg_sleep(0.3): exactly 2N + 2 executions and
#     N + 3 calls of each other phase; the sleep's line has ~300 ms in
#     execute.
#   - query-profile's CPU time: a count over generate_series, with the
#     backend's /proc/self/schedstat read inside the statement (around the
#     count) and around it (in the statements before and after): ON_MS and
#     "(runnable)" lie between the kernel's CPU time and run-queue wait in
#     the two windows, their sum near EXPLAIN ANALYZE's execution time; pg_sleep(0.3) is ~300 ms in
#     Timeout:PgSleep; by=queryid keys the statements by the query_id
#     pg_stat_activity shows (compute_query_id = on), with their text.
#   - sorts: an ORDER BY with work_mem=64kB and one with 4MB (no parallel
#     workers): their lines
#     say disk and memory with the kB that EXPLAIN ANALYZE's "Sort
#     Method" shows, through USDT where the build has the probes, else
#     (emb16) through uprobes on tuplesort_*.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

N=150
# The share of a statement's time on CPU or runnable that the script and
# the kernel may put on different sides of a switch (see
# test_profile_cpu), from tests/README's stress runs.
SWITCH_SHARE=0.03
# What the script's run-queue time may fall short of the kernel's at each
# time the statement was put back on a CPU (microseconds; see
# test_profile_cpu), from tests/README's stress runs.
GAP_PER_SWITCH_US=40

# "HIT READ DIRTIED WRITTEN WAL_RECORDS WAL_BYTES" of each plan in FILE
# (psql's EXPLAIN output): its top node's Buffers and WAL lines, plus its
# planning's Buffers line if there is one.
explain_figures() {
	awk 'function flush() { if (n) print h + 0, r + 0, d + 0, w + 0, wr + 0, wb + 0 }
		/QUERY PLAN/ { flush(); n++; h = r = d = w = wr = wb = 0; top = 0; walseen = 0; next }
		/Buffers:/ && (!top || planning) {
			top = 1
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == "hit") h += kv[2]; if (kv[1] == "read") r += kv[2]
				if (kv[1] == "dirtied") d += kv[2]; if (kv[1] == "written") w += kv[2]
			}
		}
		/WAL:/ && !walseen {
			walseen = 1
			for (i = 1; i <= NF; i++) {
				split($i, kv, "="); if (kv[1] == "records") wr = kv[2]; if (kv[1] == "bytes") wb = kv[2]
			}
		}
		/Planning:/ { planning = 1; next }
		{ planning = 0 }
		END { flush() }' "$1"
}

# The same figures of the statements of PID in query-profile's FILE, in
# order (TIME PID MS ON_MS OFF_MS HIT READ DIRTY WRITE TMP_R TMP_W WAL_REC
# WAL_FPI WAL_BYTES TEXT; a wait event's line has "off-CPU" as MS).
profile_figures() {
	awk -v p="$2" '$1 ~ /^[0-9][0-9]:/ && $2 == p && $3 ~ /^[0-9]/ { print $6, $7, $8, $9, $12, $14 }' "$1"
}

# Field F of query-profile's line in FILE for the statement whose text
# starts with TEXT (its first 20 bytes).
profile_field() {
	awk -v t="${3:0:20}" -v f="$2" '$1 ~ /^[0-9][0-9]:/ && $3 ~ /^[0-9]/ && index($0, t) { print $f }' "$1"
}

# The off-CPU milliseconds under wait event EVENT of the statement of FILE
# whose text starts with TEXT: the event lines follow its line.
profile_wait() {
	awk -v t="${3:0:20}" -v e="$2" '$1 ~ /^[0-9][0-9]:/ && $3 ~ /^[0-9]/ { on = index($0, t) > 0; next }
		on && $3 == "off-CPU" && $4 == e { print $5 }' "$1"
}

# Calls counted in histogram @us_by_phase[PHASE] of FILE.
phase_calls() {
	awk -v k="@us_by_phase[$2]:" '$1 ~ /^@/ { on = ($1 == k); next }
		on && /^\[/ { match($0, /[0-9]+ \|/); n += substr($0, RSTART, RLENGTH - 2) } END { print n + 0 }' "$1"
}

# query-phases' counts, on the current cluster.
test_phases() {
	local rc=0 out=$E2E_TMP/qph.out
	render qph query-phases min_ms=200 || rc=1
	((rc == 0)) || return 0
	BT_STRLEN=64 bt_start "$E2E_TMP/qph.bt" "$out" || return 0
	local m
	for m in simple prepared; do
		cl_run pgbench -n -M "$m" -t "$N" -f "$E2E_TMP/fast.sql" >"$E2E_TMP/pgb.out" 2>&1 ||
			fail "$LEG: pgbench -M $m: $(tail -n 3 "$E2E_TMP/pgb.out")"
	done
	local pid
	pid=$(printf 'select pg_backend_pid();\nselect pg_sleep(0.3);\n' | cl_run psql -X -q -At | sed -n 1p)
	sleep 0.3
	bt_stop
	local phase
	for phase in parse analyze rewrite plan; do
		check_eq "$LEG: query-phases: $phase, once per simple statement and per Parse" \
			"$(phase_calls "$out" "$phase")" $((N + 3))
	done
	check_eq "$LEG: query-phases: execute, once per statement" "$(phase_calls "$out" execute)" $((2 * N + 2))
	# TIME PID MS PARSE ANALYZE REWRITE PLAN EXECUTE OTHER TEXT
	check_eq "$LEG: query-phases: only the sleep is over 200 ms" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ { print $2, $10, $11 }' "$out")" "$pid select pg_sleep(0.3);"
	check_near "$LEG: query-phases: the sleep's execute (ms)" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ { print int($8) }' "$out")" 305 25
	check_empty "$LEG: query-phases: no warnings" "$(bt_problems "$out")"
}

# sorts against EXPLAIN ANALYZE, on the current cluster (pt from test_profile).
test_sorts() {
	local rc=0 out=$E2E_TMP/so.out
	render so sorts || rc=1
	((rc == 0)) || return 0
	BT_STRLEN=64 bt_start "$E2E_TMP/so.bt" "$out" || return 0
	cl_run psql -X -q >"$E2E_TMP/sort-explain.out" <<-SQL
	set max_parallel_workers_per_gather = 0;
	set work_mem = '64kB';
	explain (analyze, costs off, timing off) select * from pt order by b desc, a;
	set work_mem = '4MB';
	explain (analyze, costs off, timing off) select * from (select a from pt limit 1000) s order by a;
	SQL
	sleep 0.3
	bt_stop
	local want
	want=$(sed -n 's/.*Sort Method: .*\(Disk\|Memory\): \([0-9]*\)kB.*/\1 \2/p' "$E2E_TMP/sort-explain.out" |
		sed 's/^Disk/disk/; s/^Memory/memory/' | paste -sd' ')
	# TIME PID KIND KEYS WORK_MEM_KB METHOD SPACE_KB MS PAR TEXT
	check_eq "$LEG: sorts: on disk and in memory, with EXPLAIN ANALYZE's kB" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ { print $6, $7 }' "$out" | paste -sd' ')" "$want"
	check_eq "$LEG: sorts: work_mem at their start" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ { print $5 }' "$out" | paste -sd' ')" "64 4096"
	# USDT where the build has the probes, else uprobes on tuplesort_*
	local how="uprobes on tuplesort_begin_*, tuplesort_end"
	readelf -n "$CL_BIN/postgres" 2>/dev/null | grep -q 'Name: sort__start' && how="USDT sort__start/done"
	# (in the header BEGIN prints, after bpftrace's own first lines)
	check_contains "$LEG: sorts: the mechanism the build allows" "$(grep -m 1 '^Tracing' "$out")" "through $how."
	check_empty "$LEG: sorts: no warnings" "$(bt_problems "$out")"
}

# query-profile against EXPLAIN, on the current cluster.
test_profile() {
	local rc=0 qp=$E2E_TMP/qp.out
	render qp query-profile min_ms=0 || rc=1
	((rc == 0)) || return 0
	# 5000 pages: more than the test's 32 MB of shared_buffers (4096)
	cl_psql -c "create table pt as select g a, repeat('x', 100) b from generate_series(1, 300000) g" >/dev/null
	BT_STRLEN=64 bt_start "$E2E_TMP/qp.bt" "$qp" || return 0
	local e="explain (analyze, buffers, wal, costs off, timing off, summary off)" out=$E2E_TMP/explain.out
	cl_run psql -X -q <<-SQL >"$out"
	select pg_backend_pid();
	begin;
	$e select count(*) from pt;
	$e select count(*) from pt;
	$e insert into pt select g, 'y' from generate_series(1, 1000) g;
	$e insert into pt select g, 'y' from generate_series(1, 1000) g;
	commit;
	SQL
	sleep 0.3
	bt_stop
	local pid; pid=$(awk 'NR == 3 { print $1 }' "$out")
	local explain profile
	explain=$(explain_figures "$out")
	profile=$(profile_figures "$qp" "$pid")
	check_eq "$LEG: query-profile: a sequential scan, as EXPLAIN counts it" \
		"$(sed -n 4p <<<"$profile")" "$(sed -n 2p <<<"$explain")"
	check_eq "$LEG: query-profile: the scan read blocks (through the ring)" \
		"$(sed -n 4p <<<"$profile" | awk '{ print ($2 > 0) }')" 1
	check_eq "$LEG: query-profile: an INSERT's buffers and WAL, as EXPLAIN counts them" \
		"$(sed -n 6p <<<"$profile")" "$(sed -n 4p <<<"$explain")"
	check_eq "$LEG: query-profile: the INSERT's WAL records" "$(sed -n 6p <<<"$profile" | awk '{ print $5 }')" 1000
	check_empty "$LEG: query-profile: no warnings" "$(bt_problems "$qp")"
	test_profile_cpu
}

# query-profile's time on and off CPU against what the backend itself
# reads from the kernel (/proc/self/schedstat: time on CPU, time waiting
# on a run queue) around the work of a statement that burns CPU (inside
# it: between statements the backend waits for the client, and the run
# queue's delay in waking it is not the statement's), and against EXPLAIN
# ANALYZE's execution time; a pg_sleep(0.3) in Timeout:PgSleep; by=queryid
# keyed by what pg_stat_activity.query_id shows (compute_query_id = on).
test_profile_cpu() {
	local rc=0 out=$E2E_TMP/qpc.out outq=$E2E_TMP/qpq.out sql=$E2E_TMP/qpc.sql
	"$PGBT_GEN" -p "$CL_PID" query-profile min_ms=0 >"$E2E_TMP/qpc.bt" 2>"$E2E_TMP/qpc.err" || rc=$?
	# by=queryid: query_id is new in 14 (waits.sh checks 13's refusal)
	local qids=1
	((CL_MAJOR >= 14)) || qids=
	[[ -z $qids ]] ||
		"$PGBT_GEN" -p "$CL_PID" query-profile min_ms=0 by=queryid >"$E2E_TMP/qpq.bt" 2>>"$E2E_TMP/qpc.err" || rc=$?
	check_eq "$LEG: query-profile by=statement${qids:+ and by=queryid} render ($(head -c 300 "$E2E_TMP/qpc.err"))" "$rc" 0
	((rc == 0)) || return 0
	BT_STRLEN=64 bt_launch "$E2E_TMP/qpc.bt" "$out"
	local bt1=$BT_PID bt2=
	if [[ -n $qids ]]; then
		BT_STRLEN=64 bt_launch "$E2E_TMP/qpq.bt" "$outq"
		bt2=$BT_PID
	fi
	bt_attached "$bt1" $bt2 || { bt_stop "$bt1" $bt2; return 0; }
	local burn="explain (analyze, timing off) select pg_temp.burn()"
	local nap="select pg_sleep(0.3) /* qp-sleep */"
	local qid="select query_id from pg_stat_activity where pid = pg_backend_pid()"
	[[ -n $qids ]] || qid="select 0"
	cl_run psql -X -q -At >"$sql" 2>&1 <<-SQL
	set work_mem = '256MB';
	${qids:+set compute_query_id = on;}
	create function pg_temp.burn() returns bigint language plpgsql as \$\$
	declare n bigint;
	begin
		raise notice 'schedstat %', pg_read_file('/proc/self/schedstat');
		select count(*) into n from generate_series(1, 2000000);
		raise notice 'schedstat %', pg_read_file('/proc/self/schedstat');
		return n;
	end \$\$;
	select 'outer ' || pg_read_file('/proc/self/schedstat');
	$burn;
	select 'outer ' || pg_read_file('/proc/self/schedstat');
	$nap;
	$qid;
	SQL
	sleep 0.3
	bt_stop "$bt1" $bt2
	# the two schedstat notices ("on-CPU-ns run-queue-ns slices"), the
	# plan, the query ID
	local s0 s1 o0 o1 exec_ms qid_got
	s0=$(sed -n 's/^NOTICE: *schedstat \([0-9]* [0-9]* [0-9]*\)$/\1/p' "$sql" | sed -n 1p)
	s1=$(sed -n 's/^NOTICE: *schedstat \([0-9]* [0-9]* [0-9]*\)$/\1/p' "$sql" | sed -n 2p)
	o0=$(sed -n 's/^outer \([0-9]* [0-9]* [0-9]*\)$/\1/p' "$sql" | sed -n 1p)
	o1=$(sed -n 's/^outer \([0-9]* [0-9]* [0-9]*\)$/\1/p' "$sql" | sed -n 2p)
	exec_ms=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' "$sql")
	qid_got=$(tail -n 1 "$sql")
	local on_ms off_ms ms runq_ms unseen
	on_ms=$(profile_field "$out" 4 "$burn")
	off_ms=$(profile_field "$out" 5 "$burn")
	ms=$(profile_field "$out" 3 "$burn")
	runq_ms=$(profile_wait "$out" "(runnable)" "$burn")
	# switches the kernel did not show (other tracers' programs running on
	# that CPU) leave time "(unseen)", on CPU or not: allowed for
	unseen=$(profile_wait "$out" "(unseen)" "$burn")
	# The kernel's figures in two windows: inside the statement (the
	# function's reads, around the burn) and around it (the statements
	# before and after: they add the ends of those statements and the
	# wake-ups from the client between them). The statement's own time on
	# CPU and runnable lies between the two, but for SWITCH_SHARE of them:
	# at each switch the kernel draws the line between running and
	# waiting at its run-queue clock, at the start of the switch, the
	# script at the switch's tracepoint after it, and the script's time on
	# CPU includes what the kernel leaves out of a task's (interrupts, and
	# the host's steal time in a VM); 0.1 ms for the rounding.
	local slack
	slack=$(awk -v u="${unseen:-0}" 'BEGIN { print 0.1 + u }')
	check_between "$LEG: query-profile: a CPU-bound statement's ON_MS, within the kernel's CPU time" \
		"${on_ms:-0}" "$(widen "$(ms_between "$s0" "$s1" 1)" -1)" "$(widen "$(ms_between "$o0" "$o1" 1)" 1)" "$slack"
	# The kernel counts a wait on a run queue from its clock's update at
	# the start of the switch that took the task off (and to the one at
	# the start of the switch that brought it back), the script from the
	# tracepoint later in each: up to GAP_PER_SWITCH_US less per return to
	# a CPU (the third schedstat field counts them).
	local inner_runq switches gap_us
	inner_runq=$(ms_between "$s0" "$s1" 2)
	switches=$(awk -v a="$(cut -d' ' -f3 <<<"$s0")" -v b="$(cut -d' ' -f3 <<<"$s1")" 'BEGIN { print b - a }')
	gap_us=$(awk -v k="$inner_runq" -v g="${runq_ms:-0}" -v n="$switches" 'BEGIN { printf "%.1f", n ? (k - g) * 1000 / n : 0 }')
	check_between "$LEG: query-profile: its time runnable, within the kernel's run-queue wait (short by $gap_us us per return to a CPU, $switches of them)" \
		"${runq_ms:-0}" \
		"$(awk -v m="$(widen "$inner_runq" -1)" -v n="$switches" -v g="$GAP_PER_SWITCH_US" 'BEGIN { printf "%.3f", m - n * g / 1000 }')" \
		"$(widen "$(ms_between "$o0" "$o1" 2)" 1)" "$slack"
	# A CPU-bound statement can still sleep under no wait event (a page
	# fault's read, reclaim throttled under memory pressure: 80 ms once
	# in CI, where the kernel's CPU and run-queue times agreed with the
	# script's): that time is the statement's too.
	local noevent
	noevent=$(profile_wait "$out" "(no-event)" "$burn")
	check_near "$LEG: query-profile: its ON_MS + time runnable + off CPU under no event (${noevent:-0} ms), near EXPLAIN ANALYZE's execution time" \
		"$(awk -v a="${on_ms:-0}" -v b="${runq_ms:-0}" -v c="${noevent:-0}" 'BEGIN { printf "%.3f", a + b + c }')" "$exec_ms" \
		"$(awk -v e="$exec_ms" -v u="${unseen:-0}" 'BEGIN { print 10 + e * 0.03 + u }')"
	check_near "$LEG: query-profile: ON_MS + OFF_MS = MS" \
		"$(awk -v a="${on_ms:-0}" -v b="${off_ms:-0}" 'BEGIN { printf "%.3f", a + b }')" "${ms:-x}" 0.002
	check_near "$LEG: query-profile: the sleep's off-CPU time in Timeout:PgSleep" \
		"$(profile_wait "$out" Timeout:PgSleep "$nap")" 305 25
	check_empty "$LEG: query-profile (CPU): no warnings" "$(bt_problems "$out")"
	if [[ -z $qids ]]; then
		skip "$LEG: query-profile by=queryid: no query_id before 14"
		return 0
	fi
	check_eq "$LEG: query-profile by=queryid: pg_stat_activity's query_id, its text, once" \
		"$(grep -E "^@(calls|query)\[$qid_got\]: " "$outq" | sort | paste -sd'|')" \
		"@calls[$qid_got]: 1|@query[$qid_got]: $(bt_cut "$qid" 64)"
	local sleep_id
	sleep_id=$(awk -v t="$nap" 'index($0, "]: " t) { sub(/^@query\[/, ""); sub(/\].*/, ""); print }' "$outq")
	check_near "$LEG: query-profile by=queryid: the sleep's Timeout:PgSleep (us)" \
		"$(bt_map "$outq" off_cpu_us "${sleep_id:-x}, Timeout:PgSleep")" 305000 25000
	check_empty "$LEG: query-profile by=queryid: no warnings" "$(bt_problems "$outq")"
}

# MS less (SIGN -1) or more (1) SWITCH_SHARE of it.
widen() {
	awk -v m="$1" -v s="$2" -v f="$SWITCH_SHARE" 'BEGIN { printf "%.3f", m * (1 + s * f) }'
}

# Milliseconds between two readings of /proc/PID/schedstat ("ON_NS
# RUNQ_NS SLICES"), of field N (1: on CPU, 2: waiting on a run queue).
ms_between() {
	awk -v a="$(cut -d' ' -f"$3" <<<"$1")" -v b="$(cut -d' ' -f"$3" <<<"$2")" \
		'BEGIN { printf "%.3f", (b - a) / 1e6 }'
}

# Sum of the counts in histogram @MAP[KEY] of FILE.
hist_total() {
	awk -v k="$2:" '$1 ~ /^@/ { on = (index($0, k) == 1); next } on && /^\[/ { s += $3 } END { print s + 0 }' "$1"
}

# The count of histogram @MAP[KEY]'s bucket BUCKET (e.g. "[256K, 512K)").
hist_bucket() {
	awk -v k="$2:" -v b="$3" '$1 ~ /^@/ { on = (index($0, k) == 1); next }
		on && index($0, b) == 1 { print $3 }' "$1"
}

test_leg() {
	cluster_start "$LEG_BUILD"
	local db; db=$(cl_psql -c "select current_database()")
	cl_psql -c "create role ql_fast login; create role ql_slow login" >/dev/null
	local db_oid fast_oid slow_oid
	db_oid=$(cl_psql -c "select oid from pg_database where datname = current_database()")
	fast_oid=$(cl_psql -c "select 'ql_fast'::regrole::oid")
	slow_oid=$(cl_psql -c "select 'ql_slow'::regrole::oid")
	printf 'select 1;\n' >"$E2E_TMP/fast.sql"
	printf 'select pg_sleep(0.3);\n' >"$E2E_TMP/sleep.sql"
	chmod 644 "$E2E_TMP"/*.sql

	local rc=0
	render ql query-latency || rc=1
	render sq slow-queries min_ms=100 || rc=1
	"$PGBT_GEN" -p "$CL_PID" slow-queries min_ms=100 output=json >"$E2E_TMP/sqj.bt" 2>>"$E2E_TMP/sq.err" || rc=$?
	check_eq "$LEG: slow-queries output=json renders" "$rc" 0
	((rc == 0)) || { cluster_stop; return 0; }

	local ql=$E2E_TMP/ql.out sq=$E2E_TMP/sq.out sqj=$E2E_TMP/sqj.out
	# Strings at bpftrace's default size: 64 bytes before 0.20 (a larger
	# size overflows slow-queries' BPF stack, as its documentation says),
	# up to 1024 after.
	local strlen=64
	[[ $("$PGBT_BPFTRACE" --version) =~ v0\.([0-9]+) ]] && ((BASH_REMATCH[1] >= 20)) && strlen=1024
	BT_STRLEN=$strlen bt_launch "$E2E_TMP/ql.bt" "$ql"; local bt1=$BT_PID
	BT_STRLEN=$strlen bt_launch "$E2E_TMP/sq.bt" "$sq"; local bt2=$BT_PID
	BT_STRLEN=$strlen BT_FLAGS="-f json" bt_launch "$E2E_TMP/sqj.bt" "$sqj"; local bt3=$BT_PID
	bt_attached "$bt1" "$bt2" "$bt3" || { bt_stop "$bt1" "$bt2" "$bt3"; cluster_stop; return 0; }

	cl_run pgbench -n -M prepared -c 2 -t "$N" -U ql_fast -f "$E2E_TMP/fast.sql" >"$E2E_TMP/pgb.out" 2>&1 ||
		fail "$LEG: pgbench: $(tail -n 3 "$E2E_TMP/pgb.out")"
	# psql's text is longer than bpftrace 0.17's strings: cut there,
	# whole on later ones (text_len=200).
	local text="select pg_sleep(0.3) /* $(printf 'abcdefghij%.0s' 1 2 3 4 5 6 7 8) */;" want_text
	want_text=$(bt_cut "$text" "$strlen")
	local who
	who=$(printf 'select pg_backend_pid(), current_database(), current_user;\n%s\n' "$text" |
		cl_run psql -X -q -At -F ' ' -U ql_slow | sed -n 1p)
	local m
	for m in extended prepared; do
		cl_run pgbench -n -M "$m" -t 1 -f "$E2E_TMP/sleep.sql" >>"$E2E_TMP/pgb.out" 2>&1 ||
			fail "$LEG: pgbench -M $m: $(tail -n 3 "$E2E_TMP/pgb.out")"
	done
	sleep 0.3
	bt_stop "$bt1" "$bt2" "$bt3"

	check_count "$LEG: query-latency: pgbench -M prepared's statements, exactly" \
		"$(hist_total "$ql" "@us_by_db_user[$db_oid, $fast_oid]")" $((2 * N + 2)) "$ql" @us_by_db_user "$bt1"
	check_count "$LEG: query-latency: in total" \
		"$(hist_total "$ql" "@us")" $((2 * N + 7)) "$ql" @us "$bt1"
	check_count "$LEG: query-latency: psql's two statements" \
		"$(hist_total "$ql" "@us_by_db_user[$db_oid, $slow_oid]")" 2 "$ql" @us_by_db_user "$bt1"
	check_eq "$LEG: query-latency: the sleep in [256K, 512K)" \
		"$(hist_bucket "$ql" "@us_by_db_user[$db_oid, $slow_oid]" "[256K, 512K)")" 1
	check_eq "$LEG: query-latency: the names of the database and roles" \
		"$(grep -E "^@(db_names\[$db_oid\]|user_names\[($fast_oid|$slow_oid)\]):" "$ql" | sort | paste -sd' ')" \
		"$(printf '%s\n' "@db_names[$db_oid]: $db" "@user_names[$fast_oid]: ql_fast" "@user_names[$slow_oid]: ql_slow" |
			sort | paste -sd' ')"

	# TIME PID DATABASE USER PROTOCOL MS TEXT
	local lines; lines=$(awk '$1 ~ /^[0-9][0-9]:/' "$sq")
	check_eq "$LEG: slow-queries: three statements over 100 ms, no other" "$(grep -c . <<<"$lines")" 3
	local psql_pid=${who%% *}
	check_eq "$LEG: slow-queries: psql's sleep: PID, database, user, protocol, text" \
		"$(awk -v p="$psql_pid" '$2 == p { $1 = ""; $6 = ""; print }' <<<"$lines" | xargs)" \
		"$who simple $want_text"
	check_near "$LEG: slow-queries: psql's sleep in ms" \
		"$(awk -v p="$psql_pid" '$2 == p { print int($6) }' <<<"$lines")" 305 25
	check_eq "$LEG: slow-queries: pgbench's two, extended protocol" \
		"$(awk -v p="$psql_pid" '$2 != p { print $3, $4, $5, $7, $8 }' <<<"$lines" | sort -u)" \
		"$db postgres extended select pg_sleep(0.3);"
	check_eq "$LEG: slow-queries: output=json, three objects" \
		"$(grep -c '"type": "value"' "$sqj")" 3
	check_contains "$LEG: slow-queries: output=json, psql's" "$(cat "$sqj")" \
		",$psql_pid,\"$db\",\"ql_slow\",\"simple\","
	# (stderr's lines, e.g. RLIMIT_MEMLOCK's, are in the same file)
	check_eq "$LEG: slow-queries output=json: every line is JSON" \
		"$(grep '^{' "$sqj" | python3 -c 'import json, sys
n = 0
for l in sys.stdin:
    json.loads(l); n += 1
print(n)' 2>&1)" "$(grep -c '^{' "$sqj")"
	check_empty "$LEG: query-latency and slow-queries: no warnings" "$(bt_problems "$ql" "$sq" "$sqj")"
	test_profile
	test_phases
	test_sorts
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
