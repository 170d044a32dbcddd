#!/usr/bin/env bash
# clock-syscalls under bpftrace against real servers (one leg per build:
# the figures are the kernel's, the build only names the PIDs), against
# strace -c on the same processes. The condition the script is for, a
# clocksource the vDSO cannot read, cannot be induced here: this VM's
# clocksources, tsc and kvm-clock (stable), both serve clock_gettime and
# gettimeofday in the vDSO (checked by hand: no system call for 10000
# of each on either), so that case is a named skip (unless a clocksource
# here does send them to the kernel: then the first check compares them).
# What runs:
# - on each clocksource (switched machine-wide and restored on exit,
#   also on failure), a backend's 100000 clock_timestamp() and an EXPLAIN
#   ANALYZE (a clock read per row per node): its clock system calls, as
#   the script counts them under its pg_stat_activity PID, equal strace
#   -c's count for it (zero on both: the server reads the clock in the
#   vDSO);
# - on the server with the preloaded shim, the same backend: its clock
#   system calls, as the script counts them, equal strace -c's, and are
#   over 100000 (one per clock_timestamp() at least);
# - the counting itself, on calls that always reach the kernel: python's
#   time.process_time() (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)) 5000
#   times in a process outside the cluster: the host-wide count for that
#   clock is at least strace's for that process, and the cluster's count
#   does not move.
# tests/run: alone
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

CS=/sys/devices/system/clocksource/clocksource0
INDUCED=    # legs and clocksources where the backend's reads reached the kernel
CS_SAVED=$(cat "$CS/current_clocksource")
restore_clocksource() {
	[[ $(cat "$CS/current_clocksource") == "$CS_SAVED" ]] ||
		echo "$CS_SAVED" >"$CS/current_clocksource" || true
	return 0
}
pgbt_on_exit restore_clocksource

# Calls in strace -c's summary FILE (0 if none).
strace_calls() {
	awk '$NF != "total" && $NF != "syscall" && $1 ~ /^[0-9.]+$/ { s += $4 } END { print s + 0 }' "$1"
}

# The sum of map MAP's values whose key starts with KEY, in bpftrace
# output FILE.
map_sum() {
	awk -v m="@$2[$3" 'index($0, m) == 1 { s += $NF } END { print s + 0 }' "$1"
}

# Once strace traces HOST (at most 10 s, then 0.3 s for its first stop),
# ends backend PID's first sleep: what it runs next, strace counts. (The
# sleep it cancels is long, so that a slow attach never misses the start;
# its psql goes on after the error, ON_ERROR_STOP=0.)
cancel_when_traced() {
	local pid=$1 host=$2 i
	for ((i = 0; i < 100; i++)); do
		[[ $(awk '$1 == "TracerPid:" { print $2 }' "/proc/$host/status" 2>/dev/null) == 0 ]] || break
		sleep 0.1
	done
	sleep 0.3
	cl_psql -c "select pg_cancel_backend($pid)" >/dev/null
}

# One backend under strace while it reads the clock many ways; sets
# STRACED (strace's count) and PID. $1: a label.
traced_backend() {
	pgbt_bg cl_psql -v ON_ERROR_STOP=0 -c "select pg_sleep(60), 'cs-$1'" \
		-c "select count(clock_timestamp()) from generate_series(1, 100000)" \
		-c "explain analyze select count(*) from generate_series(1, 100000)" \
		-c "select pg_sleep(30), 'cs-$1-done'" >/dev/null 2>"$E2E_TMP/psql-$1.err"
	local session=$BG_PID host st
	wait_sql "select count(*) from pg_stat_activity where query like '%''cs-$1''%' and wait_event = 'PgSleep'" ||
		fail "$LEG: session $1 did not start"
	PID=$(cl_psql -c "select pid from pg_stat_activity where query like '%''cs-$1''%' and wait_event = 'PgSleep'")
	host=$(cl_host_pid "$PID")
	pgbt_bg strace -qq -c -f -p "$host" -e trace=clock_gettime,gettimeofday,time -o "$E2E_TMP/strace-$1"
	st=$BG_PID
	cancel_when_traced "$PID" "$host"
	wait_sql "select count(*) from pg_stat_activity where query like '%''cs-$1-done''%' and wait_event = 'PgSleep'" ||
		fail "$LEG: session $1 did not finish"
	pgbt_bg_stop "$st" INT
	pgbt_bg_stop "$session"
	STRACED=$(strace_calls "$E2E_TMP/strace-$1")
}

test_leg() {
	cluster_start "$LEG_BUILD" autovacuum=off
	local out=$E2E_TMP/cs.out
	render cs clock-syscalls && bt_start "$E2E_TMP/cs.bt" "$out" || { cluster_stop; return 0; }

	local cs PID STRACED
	declare -A pids=() straced=()
	for cs in $(cat "$CS/available_clocksource"); do
		echo "$cs" >"$CS/current_clocksource"
		traced_backend "$cs"
		pids[$cs]=$PID straced[$cs]=$STRACED
	done
	restore_clocksource

	local py=0
	if command -v python3 >/dev/null; then
		strace -c -e trace=clock_gettime -o "$E2E_TMP/strace-py" \
			python3 -c 'import time
for _ in range(5000): time.process_time()'
		py=$(strace_calls "$E2E_TMP/strace-py")
	fi
	bt_stop

	for cs in "${!pids[@]}"; do
		check_eq "$LEG: on $cs, the backend's clock system calls, strace's" \
			"$(map_sum "$out" clock_syscalls "${pids[$cs]}, ")" "${straced[$cs]}"
		((straced[$cs] == 0)) || INDUCED+=" $LEG_BUILD/$cs"
	done
	if ((py > 0)); then
		local host
		host=$(map_sum "$out" host_clock_syscalls "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)")
		check_eq "$LEG: host-wide CPU-time clock reads ($host), at least python's ($py)" \
			"$((host >= py && py >= 5000))" 1
		check_eq "$LEG: none of them the cluster's" \
			"$(grep -c '^@clock_syscalls\[.*CLOCK_PROCESS_CPUTIME_ID' "$out" || true)" 0
	else
		skip "$LEG: clock-syscalls: no python3 for calls that always reach the kernel"
	fi
	check_empty "$LEG: no warnings" "$(bt_problems "$out")"
	cluster_stop
}

# The server's clock reads sent to the kernel by a preloaded shim, as a
# clocksource without vDSO sends them.
test_induced() {
	if [[ -n ${_PGBT_CT_BUILDS[$LEG_BUILD]:-} ]]; then
		skip "$LEG: clock reads sent to the kernel: the shim is built for the host's libc, not the container's"
		return 0
	fi
	LD_PRELOAD=$SHIM cluster_start "$LEG_BUILD" autovacuum=off
	check_eq "$LEG: the server runs with the shim" "$(grep -q no-vdso.so "/proc/$CL_PID/maps" && echo yes)" yes
	local rc=0 out=$E2E_TMP/cs-induced.out pid host session st straced
	"$PGBT_GEN" -p "$CL_PID" clock-syscalls >"$E2E_TMP/cs.bt" 2>"$E2E_TMP/cs.err" || rc=$?
	check_eq "$LEG: clock-syscalls renders for it ($(head -c 300 "$E2E_TMP/cs.err"))" "$rc" 0
	((rc == 0)) || { cluster_stop; return 0; }
	# The same window for both: bpftrace, then strace, attach while the
	# backend sleeps (no clock reads while it does; strace's attaching
	# wakes it, and it reads the clock once more: both see that read),
	# the sleep is cancelled (both see what that reads), and bpftrace and
	# then strace detach while it sleeps again.
	pgbt_bg cl_psql -v ON_ERROR_STOP=0 -c "select pg_sleep(60), 'cs-shim'" \
		-c "select count(clock_timestamp()) from generate_series(1, 100000)" \
		-c "explain analyze select count(*) from generate_series(1, 100000)" \
		-c "select pg_sleep(30), 'cs-shim-done'" >/dev/null 2>"$E2E_TMP/psql-shim.err"
	session=$BG_PID
	wait_sql "select count(*) from pg_stat_activity where query like '%''cs-shim''%' and wait_event = 'PgSleep'" ||
		fail "$LEG: the session did not start"
	pid=$(cl_psql -c "select pid from pg_stat_activity where query like '%''cs-shim''%' and wait_event = 'PgSleep'")
	host=$(cl_host_pid "$pid")
	bt_start "$E2E_TMP/cs.bt" "$out" || { cluster_stop; return 0; }
	pgbt_bg strace -qq -c -f -p "$host" -e trace=clock_gettime,gettimeofday,time -o "$E2E_TMP/strace-shim"
	st=$BG_PID
	check_eq "$LEG: bpftrace attached while the backend still slept" \
		"$(cl_psql -c "select count(*) from pg_stat_activity where pid = $pid and query like '%''cs-shim''%'")" 1
	cancel_when_traced "$pid" "$host"
	wait_sql "select count(*) from pg_stat_activity where query like '%''cs-shim-done''%' and wait_event = 'PgSleep'" ||
		fail "$LEG: the session did not finish"
	bt_stop
	pgbt_bg_stop "$st" INT
	pgbt_bg_stop "$session"
	straced=$(strace_calls "$E2E_TMP/strace-shim")
	check_eq "$LEG: without vDSO, the backend's clock system calls, strace's" \
		"$(map_sum "$out" clock_syscalls "$pid, ")" "$straced"
	check_eq "$LEG: without vDSO, over 100000 of them ($straced)" "$((straced > 100000))" 1
	((straced == 0)) || INDUCED+=" $LEG_BUILD/shim"
	check_empty "$LEG: no warnings (without vDSO)" "$(bt_problems "$out")"
	cluster_stop
}

SHIM_DIR=$(mktemp -d /tmp/pgbt-novdso.XXXXXX)    # postgres must read it
remove_shim() { rm -rf "$SHIM_DIR"; }
pgbt_on_exit remove_shim
SHIM=$SHIM_DIR/no-vdso.so
chmod 755 "$SHIM_DIR"
gcc -shared -fPIC -O2 -o "$SHIM" "$PGBT_ROOT/tests/e2e/no-vdso.c"

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" || continue
	test_leg
	test_induced
done
# Once, by name, if nothing sent the server's clock reads to the kernel.
if [[ -z $INDUCED ]]; then
	skip "clock-syscalls: server clock reads reaching the kernel not induced (no clocksource without vDSO, no shim run)"
fi
e2e_done
