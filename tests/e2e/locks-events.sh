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
#     (rel-openrv) is not printed in JSON ("unsafe_name").
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

test_leg() {
	cluster_start "$LEG_BUILD"
	opens_and_closes
	deadlock_stacks
	escaped_names
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
