#!/usr/bin/env bash
# blk-noise under bpftrace against real servers (one leg per build: the
# figures are the kernel's, the build only names the PIDs), against the kernel's own counts: a cold
# count(*) of a 25 MB table (written out with sync, the page cache
# dropped) while dd reads 20 MB with O_DIRECT from a cgroup of its own on
# the same disk:
#   - the reading backend's bytes (under its pg_stat_activity PID) equal
#     its /proc/PID/io read_bytes (io_method=sync on 18, whose IO workers
#     read for it by default);
#   - the neighbour's read bytes, under its cgroup's id, are dd's 20 MB
#     (within 1%: the file's metadata is read back too), less up to 1 MB
#     for each program run the kernel skipped (a completion interrupting
#     another BPF program on its CPU is not traced; the kernel counts it);
#   - the cluster's reads have a latency histogram;
#   - all of that after 6000 bios written to a device that makes no
#     requests (zram0, as LVM and md devices: their bios go on to other
#     devices), which the script must not keep anything for (bpftrace's
#     maps hold 4096 keys: it would stop counting).
# tests/run: alone
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

NOISE_CG=/sys/fs/cgroup/unified/pgbt-noise-$$
remove_noise_cgroup() { [[ -d $NOISE_CG ]] && rmdir "$NOISE_CG" 2>/dev/null; return 0; }
pgbt_on_exit remove_noise_cgroup

# zram0 as a device without requests, if it is here and unused.
ZRAM=/sys/block/zram0
zram_free() { [[ -w $ZRAM/disksize && $(cat "$ZRAM/disksize") == 0 ]]; }
ZRAM_USED=
zram_reset() { [[ -n $ZRAM_USED ]] && echo 1 >"$ZRAM/reset"; ZRAM_USED=; return 0; }
pgbt_on_exit zram_reset

# 6000 bios of 4 kB written with O_DIRECT to zram0 (0 if it cannot be used).
bios_without_requests() {
	if ! zram_free || ! echo 64M 2>/dev/null >"$ZRAM/disksize"; then
		echo 0
		return 0
	fi
	ZRAM_USED=1
	if dd if=/dev/zero of=/dev/zram0 bs=4k count=6000 oflag=direct status=none; then
		echo 6000
	else
		echo 0
	fi
	zram_reset
}

# The bytes /proc/PID/io says a process has read from disk (0 when gone).
backend_read_bytes() {
	awk '$1 == "read_bytes:" { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/io" 2>/dev/null
}

test_leg() {
	# 18 reads through IO workers by default: io_method=sync makes the
	# backend read for itself, as before 18.
	local gucs=(autovacuum=off shared_buffers=2MB) major=${LEG_BUILD//[!0-9-]/}
	((${major%%-*} >= 18)) && gucs+=(io_method=sync)
	cluster_start "$LEG_BUILD" "${gucs[@]}"
	cl_psql -c "create table big as select g, repeat('x', 200) as t from generate_series(1, 100000) g" \
		-c "checkpoint" >/dev/null
	local noise=$E2E_TMP/noise
	dd if=/dev/urandom of="$noise" bs=1M count=20 status=none
	sync
	echo 1 >/proc/sys/vm/drop_caches
	dd if=/dev/zero of=/dev/null count=1 status=none    # dd itself in memory again
	local out=$E2E_TMP/blk.out
	render blk blk-noise && bt_start "$E2E_TMP/blk.bt" "$out" || { cluster_stop; return 0; }
	local bios
	bios=$(bios_without_requests)

	# dd begins once the backend has read from disk: the script counts
	# others' IO only on devices the cluster has used since tracing began.
	pgbt_bg cl_psql -c "select pg_backend_pid()" -c "select count(*) from big" -c "select pg_sleep(3)" \
		>"$E2E_TMP/session.out"
	local session=$BG_PID i pid= host= cgid
	for ((i = 0; i < 1000; i++)); do
		pid=$(head -n 1 "$E2E_TMP/session.out")
		[[ -n $pid ]] && host=$(cl_host_pid "$pid") && (($(backend_read_bytes "$host") > 1000000)) && break
		sleep 0.01
	done
	# dd before the cluster's first request would go uncounted (see above).
	((i < 1000)) || fail "$LEG: the backend ($pid, host PID $host) had not read 1 MB before dd began"
	mkdir -p "$NOISE_CG"
	cgid=$(stat -c %i "$NOISE_CG")
	pgbt_bg sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if="$2" of=/dev/null bs=1M iflag=direct status=none' \
		_ "$NOISE_CG" "$noise"
	local dd=$BG_PID
	for ((i = 0; i < 300; i++)); do
		[[ $(cl_psql -c "select wait_event from pg_stat_activity where pid = $pid") == PgSleep ]] && break
		sleep 0.1
	done
	wait "$dd" || fail "$LEG: dd failed"
	local read_bytes
	read_bytes=$(backend_read_bytes "$host")
	sleep 0.3
	local skipped
	skipped=$(bt_recursion_misses)
	bt_stop
	pgbt_bg_stop "$session"

	check_eq "$LEG: the backend's read bytes, its /proc/PID/io read_bytes" \
		"$(bt_map "$out" read_bytes_by_pid "$pid")" "$read_bytes"
	check_eq "$LEG: it read from disk (${read_bytes:-0} bytes)" "$((${read_bytes:-0} > 4000000))" 1
	# dd's 20 MB, and the file's own metadata read back after the cache
	# was dropped (about 130 kB); a skipped completion loses a request,
	# one of dd's 1 MB at most: the range is 1% either side, less that.
	local lost=$((skipped * 1048576))
	((bios > 0)) || skip "$LEG: bios on a device without requests (zram0 missing or in use)"
	# (and, to tell a lost request from one charged elsewhere: its
	# requests, and what the root cgroup read)
	check_near "$LEG: the neighbour's reads, under its cgroup ($cgid; $(bt_map "$out" requests "other, $cgid, read") requests; root cgroup $(bt_map "$out" bytes "other, 1, read") bytes; after $bios bios without requests; $skipped program runs skipped)" \
		"$(bt_map "$out" bytes "other, $cgid, read")" $((20971520 - lost / 2)) $((209715 + lost / 2))
	check_contains "$LEG: its cgroup named" "$(cat "$out")" "cgroup $cgid: unified:/${NOISE_CG##*/}"
	check_contains "$LEG: a latency histogram of the cluster's reads" "$(cat "$out")" "@latency_us[cluster, read]:"
	check_empty "$LEG: no warnings" "$(bt_problems "$out")"
	remove_noise_cgroup
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
