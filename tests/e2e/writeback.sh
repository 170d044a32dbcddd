#!/usr/bin/env bash
# writeback under bpftrace against real servers (each build once, the
# bpftraces in turn: e2e_legs each, as the induced condition lowers the
# host's dirty limits), against the kernel's own delay accounting: a
# backend writes 300 MB with COPY ... TO a file (no WAL, no reads: its
# I/O sleeps are mostly its dirty-page pauses), first within the host's
# usual dirty limits (never throttled), then with vm.dirty_bytes at 2 MB
# and vm.dirty_background_bytes at 1 MB. The second must show pauses
# (2 to 117 seen, with the disk's speed) under its pg_stat_activity PID,
# their total between two kernel figures: no more than the backend's
# block I/O delay (/proc/PID/stat field 42, kernel.task_delayacct turned
# on for the test: 10 ms ticks), which also counts its other I/O sleeps
# (printed), and at least the pauses the kernel asked for, less a jiffy
# each; the first none; and background writeback on some device. The sysctls are
# restored on exit, also on failure.
# tests/run: alone
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

SYSCTLS=(vm.dirty_bytes vm.dirty_background_bytes vm.dirty_ratio vm.dirty_background_ratio
	kernel.task_delayacct)
declare -A SAVED=()
for s in "${SYSCTLS[@]}"; do SAVED[$s]=$(sysctl -n "$s"); done

# The *_bytes and *_ratio sysctls exclude each other (setting one zeroes
# the other; 0 is refused): restore whichever was in force.
restore_sysctls() {
	local kind
	for kind in dirty dirty_background; do
		if [[ ${SAVED[vm.${kind}_bytes]} != 0 ]]; then
			sysctl -qw "vm.${kind}_bytes=${SAVED[vm.${kind}_bytes]}" || true
		else
			sysctl -qw "vm.${kind}_ratio=${SAVED[vm.${kind}_ratio]}" || true
		fi
	done
	sysctl -qw "kernel.task_delayacct=${SAVED[kernel.task_delayacct]}" || true
	return 0
}
pgbt_on_exit restore_sysctls

# Block I/O delay of host PID $1 so far, in 10 ms ticks.
blkio_ticks() {
	awk '{ print $42 }' "/proc/$1/stat"
}

# A session that sleeps a second (for us to read its PID), writes 300 MB to
# a file in the data directory (COPY TO wants an absolute path), then
# sleeps (for us to read its figures before it exits). Sets SESSION, PID
# (its pg_stat_activity PID) and HOST (ours for it).
COPY_SQL="do \$\$ begin execute format('copy (select repeat(''x'', 1000) from generate_series(1, 300000)) to %L', current_setting('data_directory') || '/wb.out'); end \$\$"
start_writer() {
	pgbt_bg cl_psql -c "select pg_sleep(1), 'wb-$1'" -c "$COPY_SQL" -c "select pg_sleep(30), 'wb-$1-done'" >/dev/null
	SESSION=$BG_PID
	wait_sql "select count(*) from pg_stat_activity where query like '%''wb-$1''%' and wait_event = 'PgSleep'" ||
		fail "$LEG: writer $1 did not start"
	PID=$(cl_psql -c "select pid from pg_stat_activity where query like '%''wb-$1''%' and wait_event = 'PgSleep'")
	HOST=$(cl_host_pid "$PID")
}

# Waits for the writer to reach its last sleep.
writer_done() {
	wait_sql "select count(*) from pg_stat_activity where query like '%''wb-$1-done''%' and wait_event = 'PgSleep'" ||
		fail "$LEG: writer $1 did not finish its COPY within 30 s"
}

test_leg() {
	cluster_start "$LEG_BUILD" autovacuum=off
	local out=$E2E_TMP/wb.out
	render wb writeback && bt_start "$E2E_TMP/wb.bt" "$out" || { cluster_stop; return 0; }

	# Within the usual limits (a fifth of RAM): never throttled.
	local SESSION PID HOST free_pid
	start_writer free
	free_pid=$PID
	writer_done free
	pgbt_bg_stop "$SESSION"
	sync

	sysctl -qw kernel.task_delayacct=1 vm.dirty_background_bytes=$((1 << 20)) vm.dirty_bytes=$((2 << 20))
	start_writer low
	local ticks0 ticks1
	ticks0=$(blkio_ticks "$HOST")
	writer_done low
	ticks1=$(blkio_ticks "$HOST")
	restore_sysctls
	pgbt_bg_stop "$SESSION"
	bt_stop

	local n us asked
	n=$(bt_map "$out" pauses "$PID")
	us=$(bt_map "$out" pause_us "$PID")
	asked=$(bt_map "$out" pause_requested_ms "$PID")
	check_eq "$LEG: no pause within the usual limits" "$(bt_map "$out" pauses "$free_pid")" ""
	# How often depends on the disk's pace against the writer's (2 to 117
	# seen): at least once; the kernel's figures below check the pauses.
	check_eq "$LEG: the writer paused under 2 MB (${n:-0} times)" "$((${n:-0} >= 1))" 1
	local delay_ms=$(((ticks1 - ticks0) * 10)) ms=$((${us:-0} / 1000))
	# Between two kernel figures: the block I/O delay counts every I/O
	# sleep of the backend (in 10 ms ticks, read twice), the pauses among
	# them; and each pause is at least what the kernel asked, to a jiffy.
	check_eq "$LEG: its pauses ($ms ms), no more than its block I/O delay ($delay_ms ms)" \
		"$((ms <= delay_ms + 20))" 1
	check_eq "$LEG: the kernel asked for pauses ($asked ms), each up to a jiffy less than slept" \
		"$((${asked:-0} > 0 && ${asked:-0} <= ms + ${n:-0} * 10))" 1
	# The rest of the delay, other I/O sleeps in the write path, is not a
	# figure the kernel gives apart: 20 to 60 ms seen on one machine, 100
	# to 190 ms on another.
	echo "note: $LEG: other I/O sleeps $((delay_ms - ms)) ms"
	check_eq "$LEG: background writeback seen" \
		"$(($(grep -c '^@writeback_works\[.*, background\]: [1-9]' "$out" || true) >= 1))" 1
	check_empty "$LEG: no warnings" "$(bt_problems "$out")"
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
