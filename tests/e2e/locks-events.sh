#!/usr/bin/env bash
# lock-events, text and JSON (relation opens and closes, JSON lines, stacks)
# and lock-waits stacks= under bpftrace against real servers (Debian's
# stripped 15, source-built 17 and 18), with known workloads:
#   - traced session S (pid=S) runs SELECT * FROM t, then ALTER TABLE t
#     RENAME COLUMN: the SELECT shows t opened by name with AccessShareLock
#     (rel-openrv), its lock, and opens/closes of t's OID; the ALTER shows
#     t's AccessExclusiveLock taken, then t opened with it; text and
#     JSON, attached at once, tell the same events from S's
#     SELECT on, and every JSON line parses (jq);
#   - E and F deadlock on two rows (E, deadlock_timeout 200 ms, is the
#     victim): with stacks=deadlock, lock-waits prints the stack of E's wait
#     (ProcSleep first, then the caller line), lock-events a deadlock line for E
#     with DeadLockReport's stack, and lock-events format=json a deadlock object
#     with its caller; F's lines carry no stack;
#   - with -d, a table named q"t (a double quote) prints JSON-escaped: the
#     JSON lines parse and name it public.q"t; the query's own name for it
#     (rel-openrv) is not printed in JSON ("unsafe_name");
#   - one backend traced, the others untouched (every build with every
#     bpftrace): lock-events pid=T runs three ways at once, as its Run line
#     says (bpftrace -p T's host PID), without -p, and through pgbt-gen
#     run. While another session O alone works, the probes of the
#     bpftrace without -p run in O and, from bpftrace 0.20 on, those of
#     the one with -p never do (0.17: they do, as documented); then T runs
#     statements and all three print the same events of T, none of O.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$(dirname "$0")/../lib/lock-sessions.sh"

# bpftrace names stack frames through /proc/PID as it prints them; without
# its symbol cache the output falls behind (docs/scripts/locks.md says so).
export BPFTRACE_CACHE_USER_SYMBOLS=1

# SQL that waits until table NAME exists (created once tracing runs).
wait_for_table() {
	cat <<-SQL
	do \$\$ begin
	  while not exists (select 1 from pg_class where relname = '$1') loop
	    perform pg_sleep(0.02);
	  end loop;
	end \$\$;
	SQL
}

# The text events of PID in FILE from its first query line on, one a line:
# EVENT MODE HOW WAIT_US LOCK..., "query" without its text, release-all as
# "release-all transaction|advisory".
text_events() {
	awk -v p="$2" '$1 ~ /^[0-9][0-9]:/ && $2 == p {
		if ($3 == "query") { on = 1; print "query"; next }
		if (!on) next
		if ($3 == "release-all") { print "release-all", ($7 == "advisory" ? "advisory" : "transaction"); next }
		$1 = ""; $2 = ""; print substr($0, 3)
	}' "$1"
}

# The same from the JSON lines of FILE.
json_events() {
	jq -r --argjson p "$2" 'select(.pid == $p) |
		if .event == "query" then "query"
		elif (.event | startswith("xact-")) then "\(.event) lxid=\(.lxid)"
		elif .event == "error" then "error \(.level)"
		elif .event == "inval" or .event == "deadlock" then .event
		elif .event == "release-all" then "release-all \(.locks)"
		elif .event == "rel-openrv" then
			"rel-openrv \(.mode) - - relation \(if .schemaname then .schemaname + "." else "" end)\(.relname)"
		else "\(.event) \(.mode) \(.how // "-") \(.wait_us // "-") \(.locktype) " +
			(if .locktype == "relation" or .locktype == "extend" then "db=\(.db) rel=\(.rel)"
			 elif .locktype == "transactionid" then "xid=\(.xid)"
			 elif .locktype == "virtualxid" then "vxid=\(.vxid)"
			 elif .locktype == "object" then "db=\(.db) classid=\(.classid) objid=\(.objid) objsubid=\(.objsubid)"
			 elif .locktype == "advisory" and .key then "db=\(.db) key=\(.key)"
			 elif .locktype == "advisory" then "db=\(.db) key=\(.key1),\(.key2)"
			 elif .locktype == "tuple" then "db=\(.db) rel=\(.rel) page=\(.page) tuple=\(.tuple)"
			 elif .locktype == "page" then "db=\(.db) rel=\(.rel) page=\(.page)"
			 else "db=\(.db) field2=\(.field2) field3=\(.field3) field4=\(.field4)" end)
		end' <(grep '^{' "$1") | awk '$1 == "query" { on = 1 } on'
}

# S's SELECT and ALTER TABLE, traced by lock-events as text and as JSON.
opens_and_closes() {
	local ev=$E2E_TMP/open-events.out js=$E2E_TMP/open-json.out s_pid t_oid db_oid
	cl_psql -c "create table t (a int); insert into t values (1), (2)"
	t_oid=$(cl_psql -c "select 't'::regclass::oid")
	db_oid=$(cl_psql -c "select oid from pg_database where datname = 'postgres'")
	session_bg "$E2E_TMP/s.out" <<-SQL
	$(wait_for_table go_s)
	select * from t;
	alter table t rename column a to b;
	SQL
	local s_job=$!
	wait_for "select count(*) from pg_stat_activity where query like 'do %go_s%' and pid <> pg_backend_pid()"
	s_pid=$(cl_psql -c "select pid from pg_stat_activity where query like 'do %go_s%' and pid <> pg_backend_pid()")
	render open-events lock-events pid="$s_pid"
	render open-json lock-events format=json pid="$s_pid"
	bt_launch "$E2E_TMP/open-events.bt" "$ev"; local bt1=$BT_PID
	bt_launch "$E2E_TMP/open-json.bt" "$js"; local bt2=$BT_PID
	bt_attached "$bt1" "$bt2"
	cl_psql -c "create table go_s ()"
	wait "$s_job"
	sleep 0.5
	bt_stop "$bt1" "$bt2"

	local sel alter
	sel=$(text_events "$ev" "$s_pid" | awk '/^query/ { n++ } n == 1')
	alter=$(text_events "$ev" "$s_pid" | awk '/^query/ { n++ } n == 2')
	# (catalog lookups may come between the open by name and t's lock)
	check_eq "$LEG: SELECT: t opened by name with AccessShareLock, then locked" \
		"$(awk -v l="acquire AccessShareLock fast 0 relation db=$db_oid rel=$t_oid" '
			$0 == "rel-openrv AccessShareLock - - relation t" && !o { o = NR; print }
			$0 == l && o && !a { a = NR; print }' <<<"$sel")" \
		"rel-openrv AccessShareLock - - relation t
acquire AccessShareLock fast 0 relation db=$db_oid rel=$t_oid"
	check_eq "$LEG: SELECT: t opened by OID (NoLock: the lock is held)" \
		"$(grep -c "^rel-open NoLock - - relation db=$db_oid rel=$t_oid\$" <<<"$sel" | awk '{ print ($1 >= 1) }')" 1
	# every open of t is closed: by name (openrv, whose open by OID may be
	# inlined) or by OID
	local opens closes openrv
	opens=$(grep -c "^rel-open [A-Za-z]* - - relation db=$db_oid rel=$t_oid\$" <<<"$sel" || true)
	openrv=$(grep -c "^rel-openrv .* relation t\$" <<<"$sel" || true)
	closes=$(grep -c "^rel-close NoLock - - relation db=$db_oid rel=$t_oid\$" <<<"$sel" || true)
	check_eq "$LEG: SELECT: t closed as often as opened ($opens by OID, $openrv by name)" \
		"$(( closes == opens || closes == opens + openrv ))" 1
	check_eq "$LEG: ALTER TABLE: AccessExclusiveLock on t, then t opened with it" \
		"$(grep -m2 "relation db=$db_oid rel=$t_oid\$" <<<"$alter")" \
		"acquire AccessExclusiveLock shared 0 relation db=$db_oid rel=$t_oid
rel-open AccessExclusiveLock - - relation db=$db_oid rel=$t_oid"
	check_eq "$LEG: ALTER TABLE: t closed" \
		"$(grep -c "^rel-close NoLock - - relation db=$db_oid rel=$t_oid\$" <<<"$alter" | awk '{ print ($1 >= 1) }')" 1
	check_eq "$LEG: every JSON line parses" \
		"$(grep '^{' "$js" | jq -c . >/dev/null 2>&1 && echo ok || echo "jq failed")" ok
	check_eq "$LEG: the JSON lines are the text lines' events (diff json text)" \
		"$(diff <(json_events "$js" "$s_pid") <(text_events "$ev" "$s_pid") | head -n 20 || true)" ""
	check_eq "$LEG: some 40 events or more compared" \
		"$(text_events "$ev" "$s_pid" | wc -l | awk '{ print ($1 >= 40) }')" 1
	check_bt_quiet "$LEG: events and json: no warnings" "$ev" "$js"
}

# E and F deadlock; lock-waits and locks with stacks=deadlock.
deadlock_stacks() {
	local w=$E2E_TMP/dl-waits.out ev=$E2E_TMP/dl-events.out js=$E2E_TMP/dl-json.out line
	cl_psql -c "create table d (a int primary key); insert into d values (1), (2)"
	render dl-waits lock-waits stacks=deadlock
	render dl-events lock-events stacks=deadlock
	render dl-json lock-events format=json stacks=deadlock
	bt_launch "$E2E_TMP/dl-waits.bt" "$w"; local bt1=$BT_PID
	bt_launch "$E2E_TMP/dl-events.bt" "$ev"; local bt2=$BT_PID
	bt_launch "$E2E_TMP/dl-json.bt" "$js"; local bt3=$BT_PID
	bt_attached "$bt1" "$bt2" "$bt3"
	stage_deadlock 1    # E lives on 1 s after its error: bpftrace names its frames
	local pid_e=$DEADLOCK_E pid_f=$DEADLOCK_F
	sleep 0.5
	bt_stop "$bt1" "$bt2" "$bt3"

	# lock-waits: E's line, then its stack's own line (time, PID, "stack"),
	# ProcSleep first, the caller line last. Frames are indented; any other
	# line (the next wait's, END's summary) ends a stack.
	local stack
	stack=$(awk -v p="$pid_e" '$1 ~ /^[0-9][0-9]:/ { on = ($2 == p); if (on) print ($3 == "stack" ? $3 : $5); next }
		on && /^[ \t]/ { $1 = $1; print; next } NF { on = 0 }' "$w")
	check_eq "$LEG: lock-waits: E's deadlock line, then ProcSleep's frame" \
		"$(sed -n 1,3p <<<"$stack" | paste -sd' ')" "deadlock stack ProcSleep+0"
	check_eq "$LEG: lock-waits: E's stack ends with its caller" \
		"$(tail -n1 <<<"$stack" | awk '{ print $1 }')" "caller:"
	if readelf -S "$CL_BIN/postgres" 2>/dev/null | grep -q '\.symtab'; then
		# WaitOnLock is static: named only where the binary keeps .symtab
		check_eq "$LEG: lock-waits: ProcSleep's caller" "$(tail -n1 <<<"$stack")" "caller: WaitOnLock"
	fi
	check_eq "$LEG: lock-waits: F's granted wait has no stack" \
		"$(awk -v p="$pid_f" '$1 ~ /^[0-9][0-9]:/ { on = ($2 == p); if (on) print $5; next }
			on && /^[ \t]/ { print "frame"; next } NF { on = 0 }' "$w" | paste -sd' ')" "granted"
	check_eq "$LEG: lock-waits: no backend listed as still waiting at the end" \
		"$(awk '/^Backends still waiting/ { on = 1; next } /^Holders/ { on = 0 } on && NF' "$w" | wc -l)" 0
	check_eq "$LEG: lock-waits: the end's list is there (a wait was seen)" \
		"$(grep -c '^Backends still waiting' "$w")" 1
	# locks: E's deadlock line and DeadLockReport's stack; F has no deadlock
	stack=$(awk -v p="$pid_e" '$1 ~ /^[0-9][0-9]:/ { on = ($2 == p && $3 == "deadlock"); if (on) print $3; next }
		on && /^[ \t]/ { $1 = $1; print; next } NF { on = 0 }' "$ev")
	check_eq "$LEG: lock-events: E's deadlock line, then DeadLockReport's frame" \
		"$(sed -n 1,2p <<<"$stack" | paste -sd' ')" "deadlock DeadLockReport+0"
	check_eq "$LEG: lock-events: the deadlock stack ends with its caller" \
		"$(tail -n1 <<<"$stack" | awk '{ print $1 }')" "caller:"
	check_eq "$LEG: lock-events: the only deadlock line is E's" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ && $3 == "deadlock" { print $2 }' "$ev" | paste -sd' ')" "$pid_e"
	check_eq "$LEG: lock-events: E's error" \
		"$(awk -v p="$pid_e" '$1 ~ /^[0-9][0-9]:/ && $2 == p && $3 == "error" { print $4 }' "$ev")" ERROR
	check_eq "$LEG: lock-events json: every line parses" \
		"$(grep '^{' "$js" | jq -c . >/dev/null 2>&1 && echo ok || echo "jq failed")" ok
	check_eq "$LEG: lock-events json: E's deadlock, with a caller" \
		"$(grep '^{' "$js" | jq -r 'select(.event == "deadlock") | "\(.pid) \(.caller | length > 0)"')" "$pid_e true"
	check_eq "$LEG: lock-events json: no other event has a caller (stacks=deadlock)" \
		"$(grep '^{' "$js" | jq -r 'select(.event != "deadlock" and .caller) | .event' | wc -l)" 0
}

# A name that needs escaping, with -d: JSON stays parseable.
escaped_names() {
	local conn="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres" rc=0
	local ev=$E2E_TMP/q-events.out js=$E2E_TMP/q-json.out
	cl_psql -c 'create table "q""t" (a int)'
	local q_oid; q_oid=$(cl_psql -c "select '\"q\"\"t\"'::regclass::oid")
	render q-events -d "$conn" lock-events format=text
	render q-json -d "$conn" lock-events format=json
	bt_launch "$E2E_TMP/q-events.bt" "$ev"; local bt1=$BT_PID
	bt_launch "$E2E_TMP/q-json.bt" "$js"; local bt2=$BT_PID
	bt_attached "$bt1" "$bt2"
	local pid_q
	pid_q=$(printf 'select pg_backend_pid();\nselect count(*) from "q""t";\n' | cl_psql | sed -n 1p)
	sleep 0.5
	bt_stop "$bt1" "$bt2"
	check_eq "$LEG: -d json: every line parses" \
		"$(grep '^{' "$js" | jq -c . >/dev/null 2>&1 && echo ok || echo "jq failed")" ok
	check_eq "$LEG: -d json: q\"t's lock, by its name" \
		"$(grep '^{' "$js" | jq -r --argjson p "$pid_q" --argjson r "$q_oid" \
			'select(.pid == $p and .event == "acquire" and .rel == $r) | "\(.mode) \(.name)"')" \
		'AccessShareLock public.q"t'
	check_eq "$LEG: -d json: the query's name for q\"t is not printed" \
		"$(grep '^{' "$js" | jq -r --argjson p "$pid_q" \
			'select(.pid == $p and .event == "rel-openrv") | "\(.relname) \(.unsafe_name)"')" "null true"
	check_eq "$LEG: -d events: q\"t's lock, its name escaped as in JSON" \
		"$(awk -v p="$pid_q" '$2 == p && $3 == "acquire" && $NF ~ /q/ { print $4, $NF }' "$ev")" \
		'AccessShareLock public.q\"t'
	check_eq "$LEG: -d events: the query's name as written" \
		"$(awk -v p="$pid_q" '$2 == p && $3 == "rel-openrv" { print $4, $NF }' "$ev")" \
		'AccessShareLock q"t'
}

# A psql session fed through a FIFO, so that its backend stays the same
# and idles between statements: sess_open NAME (SESS_PID[NAME] is its
# pg_stat_activity.pid), sess_sql NAME SQL (returns once SQL is done),
# sess_close NAME.
declare -gA SESS_FD=() SESS_PID=() SESS_N=()
_sess_psql() { cl_psql <"$1"; }    # (a background command's stdin is /dev/null)
sess_open() {
	local name=$1 fifo=$E2E_TMP/$1.in fd
	rm -f "$fifo"
	mkfifo -m 666 "$fifo"
	exec {fd}<>"$fifo"
	SESS_FD[$name]=$fd SESS_N[$name]=0
	pgbt_bg _sess_psql "$fifo" >"$E2E_TMP/$name.out" 2>&1
	sess_sql "$name" "select 'pid=' || pg_backend_pid();" || return 1
	SESS_PID[$name]=$(sed -n 's/^pid=//p' "$E2E_TMP/$name.out")
}
sess_sql() {
	local name=$1 n=$((SESS_N[$1] + 1)) i
	SESS_N[$name]=$n
	printf '%s\nselect %s;\n' "$2" "'done-$n'" >&"${SESS_FD[$name]}"
	for ((i = 0; i < 400; i++)); do
		grep -qx "done-$n" "$E2E_TMP/$name.out" && return 0
		sleep 0.05
	done
	fail "$LEG: session $name: no answer in 20 s to: $2"
	return 1
}
sess_close() {
	local fd=${SESS_FD[$1]}
	exec {fd}>&-
}

# T's events in lock-events output FILE, without their time, sorted.
events_of() {
	awk -v p="$2" '$1 ~ /^[0-9][0-9]:/ && $2 == p { $1 = ""; print }' "$1" | sort
}

# lock-events pid=T as its Run line says (bpftrace -p), without -p, and
# through pgbt-gen run, on the same workload: T's events the same in all
# three, the other backend's probes untouched where bpftrace can.
one_backend() {
	local p=$E2E_TMP/ob-p.out n=$E2E_TMP/ob-nop.out r=$E2E_TMP/ob-run.out
	local t o host minor bt_p bt_n bt_r p0 p1 n0 n1 i
	cl_psql -c "create table ob (a int); insert into ob values (1), (2)"
	sess_open t && sess_open o || return 0
	t=${SESS_PID[t]} o=${SESS_PID[o]} host=$(cl_host_pid "${SESS_PID[t]}")
	render ob lock-events pid="$t" || return 0
	check_eq "$LEG: the Run line: bpftrace -p and T's PID on this host" "$(bt_run_pid "$E2E_TMP/ob.bt")" "$host"
	check_eq "$LEG: stderr: one line, the same command" \
		"$(wc -l <"$E2E_TMP/ob.err") $(grep -c "follows PID $host: run it as .* lock-events pid=$t | .*bpftrace.* -p $host -  (" "$E2E_TMP/ob.err")" "1 1"
	bt_launch "$E2E_TMP/ob.bt" "$p"; bt_p=$BT_PID
	BT_NO_P=1 bt_launch "$E2E_TMP/ob.bt" "$n"; bt_n=$BT_PID
	bt_launch_run "$r" lock-events pid="$t"; bt_r=$BT_PID
	bt_attached "$bt_p" "$bt_n" "$bt_r" || return 0
	check_eq "$LEG: pgbt-gen run: says what it runs" \
		"$(grep -c "^pgbt-gen: running .*bpftrace.* -p $host - (lock-events rendered on stdin)" "$r")" 1

	# O alone works: its lock requests, opens and statements.
	p0=$(bt_probe_runs "$bt_p") n0=$(bt_probe_runs "$bt_n")
	for ((i = 0; i < 10; i++)); do sess_sql o "select count(*) from ob;"; done
	p1=$(bt_probe_runs "$bt_p") n1=$(bt_probe_runs "$bt_n")
	check_eq "$LEG: O's statements trap in the bpftrace without -p" "$((n1 - n0 >= 50))" 1
	minor=$("$PGBT_BPFTRACE" --version | sed -n 's/^bpftrace v0\.\([0-9]*\).*/\1/p')
	if ((minor >= 20)); then
		check_eq "$LEG: with -p, no probe of T's bpftrace ran in O" "$((p1 - p0))" 0
	else
		check_eq "$LEG: with -p, bpftrace 0.$minor's uprobes still run in O (it cannot scope them)" \
			"$((p1 - p0 >= 50))" 1
	fi

	# T works: the same events, however bpftrace was started.
	sess_sql t "begin; lock table ob in share mode; select count(*) from ob; commit;"
	sess_sql t "insert into ob values (3); select * from ob where a = 3;"
	sleep 0.5
	bt_stop "$bt_p" "$bt_n" "$bt_r"
	check_eq "$LEG: T's events, with -p as without (diff)" \
		"$(diff <(events_of "$p" "$t") <(events_of "$n" "$t") | head -n 20 || true)" ""
	check_eq "$LEG: T's events, through pgbt-gen run as without -p (diff)" \
		"$(diff <(events_of "$r" "$t") <(events_of "$n" "$t") | head -n 20 || true)" ""
	check_eq "$LEG: some 20 events of T or more compared" "$(($(events_of "$n" "$t" | wc -l) >= 20))" 1
	check_eq "$LEG: T's events include its table lock" \
		"$(events_of "$p" "$t" | grep -c " acquire ShareLock .* relation ")" 1
	check_eq "$LEG: nothing of O in any of them" "$(cat "$p" "$n" "$r" | awk -v o="$o" '$2 == o' | wc -l)" 0
	check_bt_quiet "$LEG: one backend: no warnings" "$p" "$n" "$r"
	sess_close t
	sess_close o
}

# Program run counts (bt_probe_runs) for the whole test, as it was after.
bpf_stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
restore_bpf_stats() { sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_was"; }
pgbt_on_exit restore_bpf_stats

# Every leg runs one_backend; the legs of "each" the rest too.
each=" $(e2e_legs each | tr '\n' ' ') "
for leg in $(e2e_legs_checked all); do
	leg_use "$leg" || continue
	cluster_start "$LEG_BUILD"
	one_backend
	if [[ $each == *" $leg "* ]]; then
		opens_and_closes
		deadlock_stacks
		escaped_names
	fi
	cluster_stop
done
e2e_done
