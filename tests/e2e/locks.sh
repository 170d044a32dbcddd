#!/usr/bin/env bash
# lock-waits (and locks) under bpftrace against real servers (Debian's
# stripped 15, source-built 17 and 18) with induced, known contention:
#   - session A holds ACCESS EXCLUSIVE on t until B's SELECT waits, then
#     600 ms more: B waits ~600 ms on relation t in AccessShareLock, and the
#     release that ends it is A's;
#   - C holds advisory lock 4242 until D waits, then 300 ms more;
#   - E and F deadlock on two rows; E (deadlock_timeout 200 ms) is the victim.
# lock-waits runs twice at once, through USDT (auto) and through uprobes
# (probe=uprobe), and both must tell the same story. locks (summary) runs
# alongside and must count K SELECTs on t as K fast-path AccessShareLocks,
# plus B's one that waited (shared table, ~600 ms in the wait histogram);
# then locks (events, pid=S) must show the catalog locks of S's CREATE TABLE
# and nothing of other backends.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$(dirname "$0")/../lib/lock-sessions.sh"

K=25   # SELECTs on t counted by locks

# Runs SQL (stdin) in the background, output to FILE; its first line is
# the backend PID.
session_bg() {
	local file=$1
	{ echo "select pg_backend_pid();"; cat; } | cl_psql >"$file" 2>&1 &
}

# The contention scenarios; sets PID_A .. PID_F, T_OID, DB_OID.
contention() {
	cl_psql -c "create table t (a int); insert into t values (1), (2);
		create table d (a int primary key); insert into d values (1), (2);"
	T_OID=$(cl_psql -c "select 't'::regclass::oid")
	DB_OID=$(cl_psql -c "select oid from pg_database where datname = 'postgres'")

	# A holds ACCESS EXCLUSIVE on t; B's SELECT waits for it.
	session_bg "$E2E_TMP/a.out" <<-SQL
	begin;
	lock table t in access exclusive mode;
	$(hold_until_waited "relation = 't'::regclass" 0.6)
	commit;
	SQL
	local a_job=$!
	wait_for "select count(*) from pg_locks where relation = 't'::regclass and mode = 'AccessExclusiveLock' and granted"
	PID_B=$(printf 'select pg_backend_pid();\nselect count(*) from t;\n' | cl_psql | sed -n 1p)
	wait "$a_job"
	PID_A=$(head -n1 "$E2E_TMP/a.out")

	# C holds advisory lock 4242; D waits for it.
	session_bg "$E2E_TMP/c.out" <<-SQL
	select pg_advisory_lock(4242);
	$(hold_until_waited "locktype = 'advisory' and objid = 4242" 0.3)
	select pg_advisory_unlock(4242);
	SQL
	local c_job=$!
	wait_for "select count(*) from pg_locks where locktype = 'advisory' and objid = 4242 and granted"
	PID_D=$(printf 'select pg_backend_pid();\nselect pg_advisory_lock(4242);\n' | cl_psql | sed -n 1p)
	wait "$c_job"
	PID_C=$(head -n1 "$E2E_TMP/c.out")

	# E and F lock rows 1 and 2 in opposite orders. E checks for deadlock
	# after 200 ms, F after 10 s, so E is the victim.
	session_bg "$E2E_TMP/e.out" <<-SQL
	set deadlock_timeout = '200ms';
	begin;
	update d set a = a where a = 1;
	select pg_sleep(0.3);
	update d set a = a where a = 2;
	commit;
	SQL
	local e_job=$!
	PID_F=$(cl_psql <<-SQL 2>&1 | sed -n 1p
	select pg_backend_pid();
	set deadlock_timeout = '10s';
	begin;
	update d set a = a where a = 2;
	select pg_sleep(0.3);
	update d set a = a where a = 1;
	commit;
	SQL
	)
	wait "$e_job" || true    # E fails: deadlock detected
	PID_E=$(head -n1 "$E2E_TMP/e.out")
	check_contains "pg$V: E was the deadlock victim" "$(cat "$E2E_TMP/e.out")" "deadlock detected"
}

# Checks the lock-waits output FILE (label WHAT).
check_lock_waits() {
	local what=$1 file=$2 line
	# TIME PID WAIT_MS MODE RESULT WOKEN_BY LOCKTYPE FIELDS...
	line=$(awk -v p="$PID_B" '$2 == p' "$file")
	check_eq "pg$V: $what: B waited once" "$(wc -l <<<"$line")" 1
	check_eq "pg$V: $what: B's wait" "$(awk '{ print $4, $5, $6, $7, $8, $9 }' <<<"$line")" \
		"AccessShareLock granted $PID_A relation db=$DB_OID rel=$T_OID"
	check_near "pg$V: $what: B's wait in ms" "$(awk '{ print $3 }' <<<"$line")" 625 25

	line=$(awk -v p="$PID_D" '$2 == p' "$file")
	check_eq "pg$V: $what: D's advisory wait" "$(awk '{ print $4, $5, $6, $7, $8, $9 }' <<<"$line")" \
		"ExclusiveLock granted $PID_C advisory db=$DB_OID key=4242"
	check_near "pg$V: $what: D's wait in ms" "$(awk '{ print $3 }' <<<"$line")" 325 25

	line=$(awk -v p="$PID_E" '$2 == p' "$file")
	check_eq "pg$V: $what: E, the deadlock victim" "$(awk '{ print $4, $5, $6, $7 }' <<<"$line")" \
		"ShareLock deadlock - transactionid"
	check_near "pg$V: $what: E waited deadlock_timeout (ms)" "$(awk '{ print $3 }' <<<"$line")" 210 10
	line=$(awk -v p="$PID_F" '$2 == p' "$file")
	check_eq "pg$V: $what: F, let in by E's abort" "$(awk '{ print $4, $5, $6, $7 }' <<<"$line")" \
		"ShareLock granted $PID_E transactionid"
	check_eq "pg$V: $what: only the waits of B, D, E, F" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ { print $2 }' "$file" | sort -n | paste -sd' ')" \
		"$(printf '%s\n' "$PID_B" "$PID_D" "$PID_E" "$PID_F" | sort -n | paste -sd' ')"
}

# Checks the locks summary output FILE.
check_locks_summary() {
	local file=$1
	check_eq "pg$V: locks: K SELECTs on t, fast path" \
		"$(awk -v k="@acquired[relation, $DB_OID, $T_OID, 0, AccessShareLock, fast]:" 'index($0, k) == 1 { print $NF }' "$file")" "$K"
	check_eq "pg$V: locks: B's SELECT on t, shared table (A held a strong lock)" \
		"$(awk -v k="@acquired[relation, $DB_OID, $T_OID, 0, AccessShareLock, shared]:" 'index($0, k) == 1 { print $NF }' "$file")" 1
	check_eq "pg$V: locks: CREATE TABLE t and A's LOCK TABLE" \
		"$(awk -v k="@acquired[relation, $DB_OID, $T_OID, 0, AccessExclusiveLock, shared]:" 'index($0, k) == 1 { print $NF }' "$file")" 2
	check_eq "pg$V: locks: D's advisory lock" \
		"$(awk -v k="@acquired[advisory, $DB_OID, 0, 4242, ExclusiveLock, shared]:" 'index($0, k) == 1 { print $NF }' "$file")" 2
	# B's ~600 ms wait in the [512K, 1M) us bucket of relation/AccessShareLock.
	check_eq "pg$V: locks: B's wait in the histogram" \
		"$(awk '/^@wait_us\[/ { cur = $0 } /^\[512K, 1M\)/ && cur ~ /relation, AccessShareLock/ { print $3 }' "$file")" 1
}

# The events of session S's CREATE TABLE (pid=S): S starts, waits until
# the test creates table go_s (after bpftrace attached), then works.
traced_create_table() {
	local s_pid new_oid out=$E2E_TMP/locks-events.out
	session_bg "$E2E_TMP/s.out" <<-SQL
	do \$\$ begin
	  while not exists (select 1 from pg_class where relname = 'go_s') loop
	    perform pg_sleep(0.02);
	  end loop;
	end \$\$;
	create table created_here (a int);
	select count(*) from t;
	SQL
	local s_job=$!
	wait_for "select count(*) from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()"
	s_pid=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()")
	render locks-events locks output=events pid="$s_pid"
	bt_start "$E2E_TMP/locks-events.bt" "$out"
	cl_psql -c "create table go_s (); select count(*) from t" >/dev/null   # not S's: must not show
	wait "$s_job"
	sleep 0.5
	bt_stop
	new_oid=$(cl_psql -c "select 'created_here'::regclass::oid")
	check_eq "pg$V: locks events: only S's lines" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ { print $2 }' "$out" | sort -u)" "$s_pid"
	local want
	for want in "acquire RowExclusiveLock fast 0 relation db=$DB_OID rel=1259" \
		"acquire RowExclusiveLock fast 0 relation db=$DB_OID rel=1249" \
		"acquire RowExclusiveLock fast 0 relation db=$DB_OID rel=1247" \
		"acquire AccessShareLock shared 0 object db=$DB_OID classid=2615 objid=2200 objsubid=0" \
		"acquire AccessExclusiveLock shared 0 relation db=$DB_OID rel=$new_oid" \
		"acquire ExclusiveLock shared 0 transactionid" \
		"release RowExclusiveLock - - relation db=$DB_OID rel=1249" \
		"release-all - - - transaction's locks" \
		"acquire AccessShareLock fast 0 relation db=$DB_OID rel=$T_OID"; do
		check_contains "pg$V: locks events of CREATE TABLE" \
			"$(awk '{ $1 = ""; $2 = ""; print substr($0, 3) }' "$out")" "$want"
	done
}

test_version() {
	V=$1
	local i
	cluster_start "$V"
	render lock-waits lock-waits
	render lock-waits-uprobe lock-waits probe=uprobe
	if [[ $V == 15 || $V == 17 || $V == 18 ]]; then
		check_contains "pg$V: lock-waits uses USDT on this build" \
			"$(cat "$E2E_TMP/lock-waits.bt")" "postgresql:lock__wait__start"
	fi
	check_contains "pg$V: probe=uprobe uses ProcSleep" \
		"$(cat "$E2E_TMP/lock-waits-uprobe.bt")" ":ProcSleep"

	bt_start "$E2E_TMP/lock-waits.bt" "$E2E_TMP/lock-waits.out"; local bt1=$BT_PID
	bt_start "$E2E_TMP/lock-waits-uprobe.bt" "$E2E_TMP/lock-waits-uprobe.out"; local bt2=$BT_PID
	render locks locks
	bt_start "$E2E_TMP/locks.bt" "$E2E_TMP/locks.out"; local bt3=$BT_PID
	contention
	for ((i = 0; i < K; i++)); do echo "select count(*) from t;"; done | cl_psql >/dev/null
	sleep 0.5
	bt_stop "$bt1"; bt_stop "$bt2"; bt_stop "$bt3"
	check_lock_waits lock-waits "$E2E_TMP/lock-waits.out"
	check_lock_waits "lock-waits probe=uprobe" "$E2E_TMP/lock-waits-uprobe.out"
	check_locks_summary "$E2E_TMP/locks.out"
	traced_create_table

	cluster_stop
}

# The lock mode names written in the scripts are lockdefs.h's #defines.
check_mode_names() {
	local v src defs
	for v in 15 17 18; do
		src=$(ls -d "$PGBT_CACHE"/src/pg$v/postgresql-$v.*/src/include/storage/lockdefs.h 2>/dev/null | head -n1)
		[[ -n $src ]] || { fail "no lockdefs.h source for PostgreSQL $v under $PGBT_CACHE/src"; continue; }
		defs=$(awk '$1 == "#define" && $2 ~ /Lock$/ && $3 ~ /^[1-8]$/ { print $3 "=" $2 }' "$src" | paste -sd' ')
		local s
		for s in lock-waits locks; do
			check_eq "mode names in scripts/$s.bt match PostgreSQL $v's lockdefs.h" \
				"$(sed -n 's/^[[:space:]]*@mode\[\([1-8]\)\] = "\([A-Za-z]*\)";.*/\1=\2/p' "$PGBT_ROOT/scripts/$s.bt" | paste -sd' ')" "$defs"
		done
		# LockTagTypeNames[] lists them in enum LockTagType order, as the
		# scripts do (USERLOCK..ADVISORY; 16+ adds applytransaction last).
		src=${src%/src/include/storage/lockdefs.h}/src/backend/utils/adt/lockfuncs.c
		defs=$(sed -n '/LockTagTypeNames\[\] = {/,/};/s/^[[:space:]]*"\([a-z]*\)",*$/\1/p' "$src" | head -n 11 | paste -sd' ')
		for s in lock-waits locks; do
			check_eq "lock tag names in scripts/$s.bt match PostgreSQL $v's lockfuncs.c" \
				"$(sed -n 's/^[[:space:]]*@tagname\[{{LOCKTAG_[A-Z_]*}}\] = "\([a-z]*\)";.*/\1/p' "$PGBT_ROOT/scripts/$s.bt" | paste -sd' ')" "$defs"
		done
	done
}

check_mode_names
for v in $PGBT_E2E_VERSIONS; do
	test_version "$v"
done
e2e_done
