#!/usr/bin/env bash
# xid-rate, xid-events and oid-consumers under bpftrace against real
# servers, on every leg (every server build with every bpftrace: Debian's
# stripped 15, the debug builds, the npm builds without DWARF or USDT,
# Debian's 17 and 13 in containers), with a known workload and exact
# figures, through each mechanism side by side on the same workload:
#   uprobe      (via=uprobe, what via=auto picks) on every host;
#   watchpoint  (via=watchpoint) where this machine's hardware watchpoints
#               fire, a skip by name elsewhere.
# Session A runs K `SELECT pg_current_xact_id()` and must show exactly K
# XIDs under the PID pg_backend_pid() gave it, each event carrying the XID
# it was given plus one; session B creates N tables and then, in one
# transaction, takes S savepoints that each write (1 + S more XIDs, S of
# them subtransactions'): N + 1 + S XIDs, and exactly the OIDs the
# catalogs gave its tables. On every host, with or without watchpoints,
# the addresses the watchpoint renderings watch hold what the server says:
# nextXid = the XID pg_current_snapshot() says comes next, and nextOid
# moves by B's OIDs. On the builds with debug info
# (15-debug, 18), once more with every type fact taken from gdb
# (--resolver gdb): the same addresses, and where watchpoints fire the same
# exact figures.
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

K=37   # XIDs burnt by session A
N=12   # tables created by session B
S=10   # savepoints of B's last transaction, each with a write
B_XIDS=$((N + 1 + S))
RENDER_FLAGS=()   # more pgbt-gen options for every rendering
SCRIPTS="xid-rate xid-events oid-consumers"

# Renders SCRIPT via=VIA for the current cluster into $E2E_TMP/SCRIPT-VIA.bt.
render_xid_oid() {
	local script=$1 via=$2; shift 2
	local out=$E2E_TMP/$script-$via.bt rc=0 mech
	"$PGBT_GEN" "${RENDER_FLAGS[@]}" "$@" "$script" via="$via" >"$out" 2>"$E2E_TMP/$script.err" || rc=$?
	check_eq "$LEG: $script via=$via renders ($(head -c 300 "$E2E_TMP/$script.err"))" "$rc" 0
	check_contains "$LEG: $script via=$via: provenance names the postmaster" \
		"$(cat "$out")" "// postmaster: PID $CL_PID"
	mech="a uretprobe on GetNew"
	[[ $via == watchpoint ]] && mech="a hardware watchpoint on next"
	[[ $via == auto ]] && mech="a uretprobe on GetNew"    # cheaper on every machine measured
	check_contains "$LEG: $script via=$via: provenance says which mechanism" \
		"$(grep '^// mechanism:' "$out")" "// mechanism:  $mech"
	check_contains "$LEG: $script via=$via: its first line (after the report's) says it too" \
		"$(sed -n '/^BEGIN/,/^}/p' "$out" | grep printf | grep -v -m1 '{{report}}\|"pgbt ')" "through $mech"
	if [[ ${RENDER_FLAGS[*]} == "--resolver gdb" && $script == xid-rate && $via == watchpoint ]]; then
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

# The header counts of OUT's intervals add up to its final count, which
# equals the sum of its final per-backend map MAP.
check_totals() {
	local out=$1 what=$2 map=$3 label=$4 final
	final=$(sed -n "s/^\([0-9]*\) $what while tracing.*/\1/p" "$out")
	check_eq "$LEG: $label: interval counts add up to the final count" \
		"$(awk -v w="$what" '$3 == w { s += $2 } END { print s + 0 }' "$out")" "$final"
	check_eq "$LEG: $label: final count = sum of the per-backend totals" \
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

# The unsigned integer of SIZE bytes at ADDR in the postmaster's memory.
peek() {
	dd if="/proc/$CL_PID/mem" bs=8 count="$2" skip="$(($1))" iflag=skip_bytes,count_bytes \
		status=none | od -An -tu"$2" | tr -d ' '
}

# The address a watchpoint rendering watches.
watched() {
	sed -n 's/^watchpoint:\(0x[0-9a-f]*\):[0-9]*:w$/\1/p' "$E2E_TMP/$1-watchpoint.bt"
}

# The watchpoint renderings' nextXid holds the XID the server says comes
# next (read around the query, in case something takes one meanwhile).
check_nextxid_address() {
	local addr before after next
	addr=$(watched xid-rate)
	check_eq "$LEG: xid-rate and xid-events watch the same address" "$(watched xid-events)" "$addr"
	[[ -n $addr ]] || return 0
	before=$(peek "$addr" 8)
	next=$(cl_psql -c "select pg_snapshot_xmax(pg_current_snapshot())")
	after=$(peek "$addr" 8)
	if [[ $before =~ ^[0-9]+$ && $after =~ ^[0-9]+$ ]] && ((before <= next && next <= after)); then
		pass "$LEG: the watched nextXid ($addr) holds the next XID the server gives ($next)"
	else
		fail "$LEG: the watched nextXid ($addr) holds '$before'..'$after', the server says the next XID is $next"
	fi
}

# The mechanisms that count here, into MECHS: uprobe always (but with
# --resolver gdb, whose types only the watchpoint uses), watchpoint where
# they fire.
set_mechanisms() {
	MECHS=uprobe
	[[ -n ${RENDER_FLAGS[*]} ]] && MECHS=
	if watchpoints_fire; then
		MECHS+=" watchpoint"
	else
		skip "$LEG: $SCRIPTS via=watchpoint, counting: $WATCHPOINTS_WHY"
	fi
}

test_leg() {
	cluster_start "$LEG_BUILD"
	local backend via script pids=()
	backend=$(cl_host_pid "$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")")
	set_mechanisms

	# Three ways to name the server: its data directory, a child, the
	# postmaster. Every mechanism is rendered (the watchpoint's addresses
	# are checked where watchpoints do not fire too); auto's is read only.
	for via in uprobe watchpoint auto; do
		[[ -n ${RENDER_FLAGS[*]} && $via != watchpoint ]] && continue
		render_xid_oid xid-rate "$via" -D "$CL_DATA" interval=1
		render_xid_oid xid-events "$via" -p "$backend"
		render_xid_oid oid-consumers "$via" -p "$CL_PID" interval=1
	done
	check_contains "$LEG: -p of a child finds its postmaster" \
		"$(cat "$E2E_TMP/xid-events-watchpoint.bt")" "(parent of the named PID $backend)"
	check_nextxid_address

	# Every mechanism's three scripts, compiled side by side.
	for via in $MECHS; do
		for script in $SCRIPTS; do
			bt_launch "$E2E_TMP/$script-$via.bt" "$E2E_TMP/$script-$via.out"
			pids+=("$BT_PID")
		done
	done
	((${#pids[@]} == 0)) || bt_attached "${pids[@]}" || { cluster_stop; return 0; }

	# Session A: one backend, K XIDs, printing its PID first.
	local a_out a_pid
	a_out=$( { echo "select pg_backend_pid();"
		   for _ in $(seq "$K"); do echo "select pg_current_xact_id();"; done; } | cl_psql)
	a_pid=$(head -n1 <<<"$a_out")
	# Session B: N tables with a fixed-width column (no TOAST table), then
	# S subtransactions that each write a row. nextOid is read around it.
	local b_pid oid_addr oid0 oid1 oids_made
	oid_addr=$(watched oid-consumers)
	oid0=$(peek "$oid_addr" 4)
	b_pid=$( { echo "select pg_backend_pid();"
		   for i in $(seq "$N"); do echo "create table oidt_$i (a int);"; done
		   echo "begin; insert into oidt_1 values (0);"
		   for i in $(seq "$S"); do echo "savepoint s$i; insert into oidt_1 values ($i);"; done
		   echo "commit;"; } | cl_psql)
	oid1=$(peek "$oid_addr" 4)
	# A new cluster's first OID skips the range initdb used: from
	# FirstNormalObjectId (16384, transam.h).
	((oid0 >= 16384)) || oid0=16384
	oids_made=$(cl_psql -c "select (select count(*) from pg_class where relname like 'oidt\_%')
		+ (select count(*) from pg_type where typname like 'oidt\_%' or typname like '\_oidt\_%')")
	check_eq "$LEG: the watched nextOid ($oid_addr) moved by B's OIDs ($oid0 -> $oid1)" \
		"$((oid1 - oid0))" "$oids_made"
	# Two more interval reports from each counter, so the last one covers
	# a whole interval after the workload (a fixed sleep was not always
	# enough on a loaded machine).
	for via in $MECHS; do
		wait_for_reports "$E2E_TMP/xid-rate-$via.out" XIDs
		wait_for_reports "$E2E_TMP/oid-consumers-$via.out" OIDs
	done
	((${#pids[@]} == 0)) || bt_stop "${pids[@]}"
	for via in $MECHS; do
		check_counts "$via" "$a_out" "$a_pid" "$b_pid" "$oids_made"
	done
	cluster_stop
}

# The exact figures of mechanism VIA's outputs.
check_counts() {
	local via=$1 a_out=$2 a_pid=$3 b_pid=$4 oids_made=$5 want got
	local events=$E2E_TMP/xid-events-$via.out rate=$E2E_TMP/xid-rate-$via.out oids=$E2E_TMP/oid-consumers-$via.out
	check_bt_quiet "$LEG: via=$via: bpftrace says nothing of concern" "$events" "$rate" "$oids"

	# xid-events: one line per XID of A, carrying nextXid = XID + 1.
	want=$(tail -n +2 <<<"$a_out" | awk '{ print $1 + 1 }' | paste -sd' ')
	got=$(awk -v p="$a_pid" '$2 == p { print $3 }' "$events" | paste -sd' ')
	check_eq "$LEG: xid-events via=$via: A's $K events and their NEXT_XID values" "$got" "$want"
	check_eq "$LEG: xid-events via=$via: B's XIDs, $S of them subtransactions'" \
		"$(awk -v p="$b_pid" '$2 == p' "$events" | wc -l)" "$B_XIDS"

	# xid-rate: the final per-backend totals are exact; the per-interval
	# header counts add up to the final total.
	check_eq "$LEG: xid-rate via=$via: A's XIDs in the final total" \
		"$(map_sum @total_xids_by_pid "$rate" "$a_pid")" "$K"
	check_eq "$LEG: xid-rate via=$via: B's XIDs in the final total" \
		"$(map_sum @total_xids_by_pid "$rate" "$b_pid")" "$B_XIDS"
	check_totals "$rate" XIDs @total_xids_by_pid "xid-rate via=$via"
	check_near "$LEG: xid-rate via=$via: A's XIDs over the per-interval lists" \
		"$(map_sum @xids_by_pid "$rate" "$a_pid")" "$K" 1

	# oid-consumers: B's OIDs are exactly those the catalogs hold; A took none.
	check_eq "$LEG: oid-consumers via=$via: B's OIDs = relations + types created ($oids_made)" \
		"$(map_sum @total_oids_by_pid "$oids" "$b_pid")" "$oids_made"
	check_eq "$LEG: oid-consumers via=$via: A took no OID" \
		"$(map_sum @total_oids_by_pid "$oids" "$a_pid")" 0
	check_totals "$oids" OIDs @total_oids_by_pid "oid-consumers via=$via"
	check_near "$LEG: oid-consumers via=$via: B's OIDs over the per-interval lists" \
		"$(map_sum @oids_by_pid "$oids" "$b_pid")" "$oids_made" 1
}

for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg
done
# --resolver gdb on the builds with debug info, once each.
RENDER_FLAGS=(--resolver gdb)
gdb_legs=0
for leg in $(e2e_legs each); do
	[[ ${leg%%/*} == 15-debug || ${leg%%/*} == 18 ]] || continue
	gdb_legs=$((gdb_legs + 1))
	leg_use "$leg" && LEG+=" --resolver gdb" && test_leg
done
((gdb_legs)) || skip "--resolver gdb: no leg of 15-debug or 18 in this run's legs"
e2e_done
