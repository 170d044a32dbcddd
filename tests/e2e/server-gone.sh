#!/usr/bin/env bash
# A script never counts for a server that is gone: xid-rate, waits,
# lock-waits, query-latency, wal and run-queue (one of each kind of probe:
# watchpoint, sched tracepoint, USDT/uprobes, uretprobes, interval),
# attached to a server, stop by themselves
# with one line saying why when the server restarts (pg_ctl restart), when
# it starts afresh after a backend crashed (the postmaster stays, its
# shared memory does not), and when a container's server stops. Nothing
# is counted after it.
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

SCRIPTS="xid-rate waits lock-waits query-latency wal run-queue"
# xid-rate on its watchpoint (it stops by the same probes wherever
# watchpoints fire or not); the others as rendered by default.
declare -A ARGS=([xid-rate]=via=watchpoint)

# Starts every script of $SCRIPTS against the current cluster; their
# bpftrace PIDs in BTS (name -> PID).
start_all() {
	local s
	declare -gA BTS=()
	for s in $SCRIPTS; do
		# shellcheck disable=SC2086 # NAME=VALUE words
		"$PGBT_GEN" -p "$CL_PID" "$s" ${ARGS[$s]:-} >"$E2E_TMP/$s.bt"
		bt_start "$E2E_TMP/$s.bt" "$E2E_TMP/$s.out" || return 1
		BTS[$s]=$BT_PID
	done
}

# Each script has stopped by itself within 15 s of EVENT, saying WHY.
check_all_stopped() {
	local event=$1 why=$2 s i
	for s in $SCRIPTS; do
		for ((i = 0; i < 150; i++)); do
			pgbt_alive "${BTS[$s]}" || break
			sleep 0.1
		done
		if pgbt_alive "${BTS[$s]}"; then
			fail "$LEG: $s still runs 15 s after $event"
			bt_stop "${BTS[$s]}"
			continue
		fi
		pgbt_bg_stop "${BTS[$s]}"
		check_contains "$LEG: $s stopped after $event, saying why" \
			"$(cat "$E2E_TMP/$s.out")" "$why"
	done
}

test_leg() {
	cluster_start "$LEG_BUILD"
	local pm=$CL_PID
	if [[ -n $CL_ROOT ]]; then
		# A container's server: its postmaster is PID 1 there; it stops.
		start_all
		kill -TERM "$CL_PID"
		check_all_stopped "the container's server stopped" "pgbt: the postmaster (PID $pm)"
		cluster_stop || true
		return 0
	fi

	start_all
	_pgbt_as_postgres "$CL_DIR" "$CL_BIN/pg_ctl" -D "$CL_DATA" -m fast -w -t 60 restart \
		>>"$CL_DIR/pg_ctl.log" 2>&1
	check_all_stopped "pg_ctl restart" "pgbt: the postmaster (PID $pm)"
	# The cluster runs on under a new postmaster.
	CL_PID=$(head -n 1 "$CL_DATA/postmaster.pid")
	_PGBT_CLUSTERS[$CL_NAME]=$(printf '%s\t%s\t%s\t%s\t%s\t%s' "$CL_MAJOR" "$CL_BIN" "$CL_DIR" \
		"$CL_PORT" "$CL_PID" -)
	check_eq "$LEG: the restart started a new postmaster" "$([[ $CL_PID != "$pm" ]] && echo new)" new

	# A backend killed: the postmaster stays, and reinitializes.
	start_all
	local victim
	victim=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	kill -KILL "$victim"
	check_all_stopped "a crash restart" \
		"the postmaster (PID $CL_PID) released its shared memory"
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
