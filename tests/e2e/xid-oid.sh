#!/usr/bin/env bash
# xid-rate, xid-events and oid-consumers under bpftrace against real
# servers, on every leg (every server build with every bpftrace: Debian's
# stripped 15, the debug builds, Debian 13's 17 in a container), with a
# known workload and exact figures: session A runs K `SELECT
# pg_current_xact_id()` and must show exactly K XIDs under the PID
# pg_backend_pid() gave it, each event carrying the XID it was given plus
# one; session B creates N tables, which must show N XIDs and exactly the
# OIDs the catalogs gave them. Also: a restart of the server ends the
# scripts with a line saying so, instead of counting on. On the builds
# with debug info (15-debug, 18), once more with every type fact taken
# from gdb (--resolver gdb): the same exact figures.
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

K=40   # XIDs burnt by session A
N=12   # tables created by session B
RENDER_FLAGS=()   # more pgbt-gen options for every rendering

# Renders SCRIPT for the current cluster into $E2E_TMP/SCRIPT.bt.
render_xid_oid() {
	local script=$1; shift
	local out=$E2E_TMP/$script.bt rc=0
	"$PGBT_GEN" "${RENDER_FLAGS[@]}" "$@" "$script" >"$out" 2>"$E2E_TMP/$script.err" || rc=$?
	check_eq "$LEG: $script renders ($(head -c 300 "$E2E_TMP/$script.err"))" "$rc" 0
	check_contains "$LEG: $script provenance names the postmaster" \
		"$(cat "$out")" "// postmaster: PID $CL_PID"
	if [[ ${RENDER_FLAGS[*]} == "--resolver gdb" && $script == xid-rate ]]; then
		check_contains "$LEG: $script: its types from gdb" \
			"$(grep '^// types:' "$out")" "(--resolver gdb): "
		check_contains "$LEG: $script: its offset from gdb" \
			"$(cat "$out")" "Data.nextXid at offset 8, size 8 (gdb)"
	fi
}

# Sum of "@MAP[PID]: n" lines in FILE (over every interval printed).
map_sum() {
	awk -v key="$1[$3]:" '$1 == key { s += $2 } END { print s + 0 }' "$2"
}

# The header counts of SCRIPT's intervals add up to its final count, which
# equals the sum of its final per-backend map MAP.
check_totals() {
	local script=$1 what=$2 map=$3 out=$E2E_TMP/$1.out final
	final=$(sed -n "s/^\([0-9]*\) $what while tracing.*/\1/p" "$out")
	check_eq "$LEG: $script: interval counts add up to the final count" \
		"$(awk -v w="$what" '$3 == w { s += $2 } END { print s + 0 }' "$out")" "$final"
	check_eq "$LEG: $script: final count = sum of the per-backend totals" \
		"$(awk -v m="$map[" 'index($1, m) == 1 { s += $2 } END { print s + 0 }' "$out")" "$final"
}

# Waits (up to 15 s) until FILE has two more "TIME  N WHAT (" interval
# headers than now.
wait_for_reports() {
	local file=$1 what=$2 start i
	start=$(grep -c " $what (" "$file" || true)
	for ((i = 0; i < 150; i++)); do
		(( $(grep -c " $what (" "$file" || true) >= start + 2 )) && return 0
		sleep 0.1
	done
	fail "$LEG: no new $what interval reports in $file within 15 s"
}

test_leg() {
	cluster_start "$LEG_BUILD"
	local backend
	backend=$(cl_host_pid "$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")")

	# Three ways to name the server: its data directory, a child, the postmaster.
	render_xid_oid xid-rate -D "$CL_DATA" interval=1
	render_xid_oid xid-events -p "$backend"
	render_xid_oid oid-consumers -p "$CL_PID" interval=1
	check_contains "$LEG: -p of a child finds its postmaster" \
		"$(cat "$E2E_TMP/xid-events.bt")" "(parent of the named PID $backend)"

	bt_start "$E2E_TMP/xid-rate.bt" "$E2E_TMP/xid-rate.out"; local bt_rate=$BT_PID
	bt_start "$E2E_TMP/xid-events.bt" "$E2E_TMP/xid-events.out"; local bt_events=$BT_PID
	bt_start "$E2E_TMP/oid-consumers.bt" "$E2E_TMP/oid-consumers.out"; local bt_oids=$BT_PID

	# Session A: one backend, K XIDs, printing its PID first.
	local a_out a_pid
	a_out=$( { echo "select pg_backend_pid();"
		   for _ in $(seq "$K"); do echo "select pg_current_xact_id();"; done; } | cl_psql)
	a_pid=$(head -n1 <<<"$a_out")
	# Session B: N tables with a fixed-width column (no TOAST table).
	local b_pid
	b_pid=$( { echo "select pg_backend_pid();"
		   for i in $(seq "$N"); do echo "create table oidt_$i (a int);"; done; } | cl_psql)
	local oids_made
	oids_made=$(cl_psql -c "select (select count(*) from pg_class where relname like 'oidt\_%')
		+ (select count(*) from pg_type where typname like 'oidt\_%' or typname like '\_oidt\_%')")
	# Two more interval reports from each counter, so the last one covers
	# a whole interval after the workload (a fixed sleep was not always
	# enough on a loaded machine).
	wait_for_reports "$E2E_TMP/xid-rate.out" XIDs
	wait_for_reports "$E2E_TMP/oid-consumers.out" OIDs
	bt_stop "$bt_rate"; bt_stop "$bt_events"; bt_stop "$bt_oids"

	# xid-events: one line per XID of A, carrying nextXid = XID + 1.
	local want got
	want=$(tail -n +2 <<<"$a_out" | awk '{ print $1 + 1 }' | paste -sd' ')
	got=$(awk -v p="$a_pid" '$2 == p { print $3 }' "$E2E_TMP/xid-events.out" | paste -sd' ')
	check_eq "$LEG: xid-events: A's $K events and their NEXT_XID values" "$got" "$want"
	check_eq "$LEG: xid-events: B's CREATE TABLEs take one XID each" \
		"$(awk -v p="$b_pid" '$2 == p' "$E2E_TMP/xid-events.out" | wc -l)" "$N"

	# xid-rate: the final per-backend totals are exact; the per-interval
	# header counts add up to the final total.
	check_eq "$LEG: xid-rate: A's XIDs in the final total" \
		"$(map_sum @total_xids_by_pid "$E2E_TMP/xid-rate.out" "$a_pid")" "$K"
	check_eq "$LEG: xid-rate: B's XIDs in the final total" \
		"$(map_sum @total_xids_by_pid "$E2E_TMP/xid-rate.out" "$b_pid")" "$N"
	check_totals xid-rate XIDs @total_xids_by_pid
	check_near "$LEG: xid-rate: A's XIDs over the per-interval lists" \
		"$(map_sum @xids_by_pid "$E2E_TMP/xid-rate.out" "$a_pid")" "$K" 1

	# oid-consumers: B's OIDs are exactly those the catalogs hold; A took none.
	check_eq "$LEG: oid-consumers: B's OIDs = relations + types created ($oids_made)" \
		"$(map_sum @total_oids_by_pid "$E2E_TMP/oid-consumers.out" "$b_pid")" "$oids_made"
	check_eq "$LEG: oid-consumers: A took no OID" \
		"$(map_sum @total_oids_by_pid "$E2E_TMP/oid-consumers.out" "$a_pid")" 0
	check_totals oid-consumers OIDs @total_oids_by_pid
	check_near "$LEG: oid-consumers: B's OIDs over the per-interval lists" \
		"$(map_sum @oids_by_pid "$E2E_TMP/oid-consumers.out" "$b_pid")" "$oids_made" 1

	cluster_stop
}

for leg in $(e2e_legs_checked all); do
	if ! watchpoints_fire; then
		E2E_LEGS_USED=1   # a leg seen, and skipped by name
		skip "$leg: xid-rate, xid-events, oid-consumers: $WATCHPOINTS_WHY"
		continue
	fi
	leg_use "$leg" && test_leg
done
# --resolver gdb on the builds with debug info, once each.
RENDER_FLAGS=(--resolver gdb)
gdb_legs=0
for leg in $(e2e_legs each); do
	[[ ${leg%%/*} == 15-debug || ${leg%%/*} == 18 ]] || continue
	gdb_legs=$((gdb_legs + 1))
	if ! watchpoints_fire; then
		E2E_LEGS_USED=1
		skip "$leg --resolver gdb: xid-rate, xid-events, oid-consumers: $WATCHPOINTS_WHY"
		continue
	fi
	leg_use "$leg" && LEG+=" --resolver gdb" && test_leg
done
((gdb_legs)) || skip "--resolver gdb: no leg of 15-debug or 18 in this run's legs"
e2e_done
