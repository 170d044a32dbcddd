#!/usr/bin/env bash
# shm-failures under bpftrace against real servers (every leg: each server
# build with each bpftrace), each server in a mount namespace of its own
# with a 4 MB tmpfs on /dev/shm (PGBT_CL_SHM_SIZE), filled by the test to
# 64 kB of free space, as a container's /dev/shm that others filled:
#   - a query that runs without parallel workers (no segment) prints
#     nothing;
#   - a parallel count(*) fails with the server's "could not resize
#     shared memory segment ... to N bytes: No space left on device", and
#     shm-failures prints exactly one block: that session's PID
#     (pg_backend_pid()), fallocate ENOSPC of N bytes inside dsm_create(N)
#     called from GetSessionDsmHandle (a parallel query's first segment,
#     the session's, since PostgreSQL 11), the statement's text, and on
#     Debian's packages (frame pointers) dsm_create in its user stack.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

# As the script's USAGE says: bpftrace 0.17 names stack frames well only
# with its symbol cache.
export BPFTRACE_CACHE_USER_SYMBOLS=1

test_leg() {
	# posix: initdb picks sysv where it finds /dev/shm unwritable (the
	# container's root at initdb time).
	PGBT_CL_SHM_SIZE=4m cluster_start "$LEG_BUILD" dynamic_shared_memory_type=posix \
		max_parallel_workers_per_gather=2 parallel_setup_cost=0 parallel_tuple_cost=0 \
		min_parallel_table_scan_size=0
	local shm=/proc/$CL_PID/root/dev/shm rc=0 free
	check_eq "$LEG: the server's /dev/shm is the 4 MB tmpfs" \
		"$(stat -f -c '%T %b' "$shm")" "tmpfs 1024"
	cl_psql -c "create table big as select generate_series(1, 20000) a" -c "analyze big" >/dev/null
	# Leave 16 pages (64 kB): the server's own segments stay, a parallel
	# query's first one (about 192 kB) cannot be had.
	free=$(stat -f -c '%a' "$shm")
	dd if=/dev/zero of="$shm/filler" bs=4k count=$((free - 16)) 2>/dev/null || true
	check_eq "$LEG: /dev/shm filled to 16 free pages" "$(stat -f -c '%a' "$shm")" 16

	render shm shm-failures || rc=1
	((rc == 0)) || { cluster_stop; return 0; }
	local out=$E2E_TMP/shm.out
	# Strings at bpftrace's default size before 0.20 (it keeps them on
	# BPF's stack), text_len's 200 after; from 0.27 bpftrace's own (1024:
	# it warns of a str() as long as its maximum, the NUL counted).
	local strlen=64
	[[ $("$PGBT_BPFTRACE" --version) =~ v0\.([0-9]+) ]] && ((BASH_REMATCH[1] >= 20)) && strlen=200
	((BASH_REMATCH[1] >= 27)) && strlen=
	BT_STRLEN=$strlen bt_start "$E2E_TMP/shm.bt" "$out" || { cluster_stop; return 0; }

	check_eq "$LEG: a serial count(*) works" \
		"$(cl_psql -c "set max_parallel_workers_per_gather = 0" -c "select count(*) from big")" 20000
	local pid err bytes
	# The session outlives its error by a second, as an application's
	# would: bpftrace names the caller from the live process.
	pid=$(cl_psql -v ON_ERROR_STOP=0 -c "select pg_backend_pid()" -c "select count(*) from big" \
		-c "select pg_sleep(1)" 2>"$E2E_TMP/q.err" | head -n 1) || true
	err=$(cat "$E2E_TMP/q.err")
	check_contains "$LEG: the parallel count(*) fails for lack of room in /dev/shm" "$err" \
		"No space left on device"
	bytes=$(sed -n 's/.*could not resize shared memory segment ".*" to \([0-9]*\) bytes.*/\1/p' <<<"$err")
	[[ -n $bytes ]] || fail "$LEG: no size in the server's error: $err"
	sleep 0.5    # bpftrace prints from its event loop
	bt_stop

	# TIME PID CALL ERROR BYTES "bytes," "in" dsm_create(N) "called" "from" CALLER
	local lines
	lines=$(grep -E '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] ' "$out" || true)
	check_eq "$LEG: one failure, the parallel query's" "$(grep -c . <<<"$lines")" 1
	check_eq "$LEG: its PID, call, error, size, segment and caller" \
		"$(awk '{ print $2, $3, $4, $5, $8, $11 }' <<<"$lines")" \
		"$pid fallocate ENOSPC $bytes dsm_create($bytes) GetSessionDsmHandle"
	check_eq "$LEG: its statement" "$(sed -n 's/^    statement: //p' "$out")" "select count(*) from big"
	# The stack walk reaches dsm_create on Debian's packages (15, and 17
	# and 13 in their containers); on the source and embedded builds (-O2, no frame
	# pointers) it stops at libc's frame, and the line above is what shows.
	if [[ $LEG_BUILD == 15 || $LEG_BUILD == ct* ]]; then
		check_contains "$LEG: dsm_create in its stack" "$(sed -n '/^    stack:/,$p' "$out")" "dsm_create+"
	fi
	check_bt_quiet "$LEG: no warnings" "$out"
	cluster_stop
}

for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg
done
e2e_done
