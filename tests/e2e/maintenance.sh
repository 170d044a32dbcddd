#!/usr/bin/env bash
# The maintenance scripts under bpftrace against real servers (every leg:
# each server build with each bpftrace), against what the server reports:
#   - vacuum -d: VACUUM mt after deleting 1000 of its 5000 rows gives one
#     "command vacuum public.mt" line whose live and dead tuples are
#     pg_stat_user_tables' n_live_tup and n_dead_tup after it; ANALYZE mt
#     one "command analyze public.mt" line; autovacuum (naptime 1 s, av's
#     thresholds 0) of av after a DELETE one "autovacuum vacuum public.av"
#     line with av's n_live_tup.
#   - checkpoints: a CHECKPOINT after an INSERT gives one line whose
#     buffers, synced files and WAL files added / removed / recycled are
#     those of the server's own "checkpoint complete" log line, caused by
#     "requested immediate force wait" (the log's "checkpoint starting").
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

# The figures of the last "checkpoint complete" line of the server's log:
# "BUFFERS SYNCED ADDED REMOVED RECYCLED".
logged_checkpoint() {
	grep 'checkpoint complete: wrote' "$CL_DIR/server.log" | tail -n 1 |
		sed -E 's/.*wrote ([0-9]+) buffers.* ([0-9]+) WAL file\(s\) added, ([0-9]+) removed, ([0-9]+) recycled.*sync files=([0-9]+).*/\1 \5 \2 \3 \4/'
}

test_leg() {
	cluster_start "$LEG_BUILD" autovacuum_naptime=1 log_checkpoints=on
	local conn="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres" rc=0
	cl_psql >/dev/null <<-SQL
	create table mt (a int, b text) with (autovacuum_enabled = off);
	insert into mt select g, repeat('x', 50) from generate_series(1, 5000) g;
	create table av (a int) with (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0,
	  autovacuum_analyze_threshold = 1000000);
	SQL
	render vac -d "$conn" vacuum || rc=1
	render ck checkpoints || rc=1
	((rc == 0)) || { cluster_stop; return 0; }
	local vac=$E2E_TMP/vac.out ck=$E2E_TMP/ck.out
	bt_launch "$E2E_TMP/vac.bt" "$vac"; local bt1=$BT_PID
	bt_launch "$E2E_TMP/ck.bt" "$ck"; local bt2=$BT_PID
	bt_attached "$bt1" "$bt2" || { bt_stop "$bt1" "$bt2"; cluster_stop; return 0; }

	# mt's tuples as its VACUUM reported them (ANALYZE reports its own).
	# The DELETE's session flushes its counts as it exits: they must be in
	# before VACUUM's report, and that report in before the view is read
	# (on 14 a statistics collector takes both in asynchronously).
	cl_psql -c "delete from mt where a <= 1000" >/dev/null
	wait_sql "select count(*) from pg_stat_user_tables where relname = 'mt' and n_dead_tup >= 1000" ||
		fail "$LEG: the DELETE's dead tuples never reached pg_stat_user_tables"
	cl_psql -c "vacuum mt" >/dev/null
	wait_sql "select count(*) from pg_stat_user_tables where relname = 'mt' and vacuum_count > 0" ||
		fail "$LEG: VACUUM's report never reached pg_stat_user_tables"
	local mt_stats
	mt_stats=$(cl_psql -F ' ' -c "select n_live_tup, n_dead_tup from pg_stat_user_tables where relname = 'mt'")
	cl_psql -c "analyze mt" >/dev/null
	cl_psql -c "insert into av select generate_series(1, 1000)" -c "delete from av where a <= 500" >/dev/null
	wait_sql "select count(*) from pg_stat_user_tables where relname = 'av' and autovacuum_count > 0" ||
		fail "$LEG: no autovacuum of av within 30 s"
	cl_psql -c "insert into mt select g, 'y' from generate_series(1, 3000) g" -c "checkpoint" >/dev/null
	sleep 0.5
	bt_stop "$bt1" "$bt2"

	# TIME PID WHO OP MS HIT READ DIRTY WAL_BYTES LIVE DEAD TABLE
	local stats line
	line=$(awk '$1 ~ /^[0-9][0-9]:/ && $NF == "public.mt" && $4 == "vacuum"' "$vac")
	check_eq "$LEG: vacuum: VACUUM mt once, with the tuples it reported" \
		"$(awk '{ print $3, $10, $11 }' <<<"$line")" "command $mt_stats"
	check_eq "$LEG: vacuum: ANALYZE mt once" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ && $NF == "public.mt" && $4 == "analyze" { print $3 }' "$vac")" command
	stats=$(cl_psql -c "select n_live_tup from pg_stat_user_tables where relname = 'av'")
	check_eq "$LEG: vacuum: autovacuum of av, with its live tuples" \
		"$(awk '$1 ~ /^[0-9][0-9]:/ && $NF == "public.av" && $4 == "vacuum" { print $3, $10 }' "$vac" | sort -u)" \
		"autovacuum $stats"

	# TIME PID KIND TOTAL_MS WRITE_MS SYNC_MS BUFFERS SYNCED LONGEST_MS WAL+ WAL- WAL~ CAUSE
	line=$(awk '$1 ~ /^[0-9][0-9]:/ && / requested immediate force wait$/' "$ck")
	check_eq "$LEG: checkpoints: the CHECKPOINT, once" "$(grep -c . <<<"$line")" 1
	check_eq "$LEG: checkpoints: its buffers, synced files, WAL files as the server logged them" \
		"$(awk '{ print $7, $8, $10, $11, $12 }' <<<"$line")" "$(logged_checkpoint)"
	check_contains "$LEG: checkpoints: the server logged the same cause" \
		"$(grep 'checkpoint starting' "$CL_DIR/server.log" | tail -n 1)" "immediate force wait"
	check_eq "$LEG: checkpoints: by the checkpointer" "$(awk '{ print $2 }' <<<"$line")" \
		"$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")"
	check_empty "$LEG: vacuum and checkpoints: no warnings" "$(bt_problems "$vac" "$ck")"
	cluster_stop
}

for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg
done
e2e_done
