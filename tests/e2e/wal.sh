#!/usr/bin/env bash
# wal under bpftrace against real servers (every leg: each server build
# with each bpftrace), against what the server reports: a COPY of 500000
# rows into a table of an earlier transaction (WAL-logged at
# wal_level=minimal), alone on a server without autovacuum:
#   - WAL bytes within 1% of the pg_current_wal_insert_lsn() difference
#     (the LSN also counts page headers, 0.3%), at least 99% of them under
#     the COPY's PID (pg_backend_pid(), in the container too);
#   - records exactly pg_stat_wal's wal_records (reset before); on 13,
#     which has no pg_stat_wal, a second session's INSERT: its records
#     exactly EXPLAIN (ANALYZE, WAL)'s, plus its commit record;
#   - segment switches exactly the segments the LSN crossed, once the WAL
#     is flushed.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

test_leg() {
	cluster_start "$LEG_BUILD" autovacuum=off
	cl_psql -c "create table w (a int, b text)" >/dev/null
	local rc=0 out=$E2E_TMP/wal.out
	render wal wal interval=0 || rc=1
	((rc == 0)) || { cluster_stop; return 0; }
	((CL_MAJOR < 14)) || cl_psql -c "select pg_stat_reset_shared('wal')" >/dev/null
	bt_start "$E2E_TMP/wal.bt" "$out" || { cluster_stop; return 0; }

	local lsn0 lsn1 pid
	lsn0=$(cl_psql -c "select pg_current_wal_insert_lsn()")
	pid=$(seq 1 500000 | awk '{ print $1 "\tx" }' |
		cl_psql -c "select pg_backend_pid()" -c "copy w from stdin")
	lsn1=$(cl_psql -c "select pg_current_wal_insert_lsn()")
	local ins_pid ins_records
	if ((CL_MAJOR < 14)); then
		{ read -r ins_pid; read -r ins_records; } < <(cl_psql -c "select pg_backend_pid()" \
			-c "explain (analyze, wal, costs off, timing off, summary off, format json)
				insert into w select g, 'y' from generate_series(1, 1000) g" |
			sed -n '1p; s/.*"WAL Records": \([0-9]*\).*/\1/p')
	fi
	wait_sql "select pg_current_wal_flush_lsn() >= '$lsn1'" t ||
		fail "$LEG: WAL not flushed up to $lsn1 within 30 s"
	sleep 0.3
	bt_stop

	local diff bytes records switches segs stat_records
	diff=$(cl_psql -c "select pg_wal_lsn_diff('$lsn1', '$lsn0')::bigint")
	segs=$(cl_psql -c "select ((pg_wal_lsn_diff('$lsn1', '0/0') - 1) / 16777216)::bigint -
		(pg_wal_lsn_diff('$lsn0', '0/0') / 16777216)::bigint")
	((CL_MAJOR < 14)) || stat_records=$(cl_psql -c "select wal_records from pg_stat_wal")
	bytes=$(bt_map "$out" wal_bytes)
	records=$(bt_map "$out" wal_records)
	switches=$(bt_map "$out" segment_switches)
	check_near "$LEG: WAL bytes, the LSN's advance ($diff) within 1%" "${bytes:-0}" "$diff" $((diff / 100))
	check_eq "$LEG: at least 99% of them the COPY's" \
		"$(($(bt_map "$out" wal_bytes_by_pid "$pid") * 100 >= ${bytes:-0} * 99))" 1
	if ((CL_MAJOR >= 14)); then
		check_eq "$LEG: records, pg_stat_wal's" "${records:-0}" "$stat_records"
	else
		check_eq "$LEG: the INSERT's records, EXPLAIN's ($ins_records) and its commit's" \
			"$(bt_map "$out" wal_records_by_pid "$ins_pid")" "$((${ins_records:-0} + 1))"
	fi
	check_eq "$LEG: segment switches, the segments crossed" "${switches:-0}" "$segs"
	check_eq "$LEG: at least one segment switch" "$((segs >= 1))" 1
	check_empty "$LEG: no warnings" "$(bt_problems "$out")"
	cluster_stop
}

for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg
done
e2e_done
