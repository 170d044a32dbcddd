#!/usr/bin/env bash
# reclaim under bpftrace against real servers (each build once, the
# bpftraces in turn: e2e_legs each, as the induced condition takes a
# 115 MB table, a cold page cache and a memory cgroup), against the
# kernel's own counters: a backend moved into a cgroup v1 memory cgroup
# limited to 24 MB reads the table, cold (caches dropped; no parallel
# workers, and io_method=sync on 18, so that the backend reads itself),
# so every page it reads is charged to the cgroup and it must free pages
# of the cgroup to get more. The script must show that backend, under
# its pg_stat_activity PID, in memcg reclaim, freeing over a quarter of
# what the table exceeds the limit by, and no global reclaim when
# /proc/vmstat's allocstall counters did not move; the pages it says the
# cluster freed must equal the delta of /proc/vmstat's pgsteal_anon +
# pgsteal_file (which counts every reclaim on the host: within 1% and 64
# pages; equal in every run so far). The backend is moved back and the
# cgroup removed on exit, also on failure.
# tests/run: alone
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

CG=/sys/fs/cgroup/memory/pgbt-reclaim-$$
CG_HOME=     # the memory cgroup of the backend we moved, to move it back
CG_PID=

cg_cleanup() {
	if [[ -n $CG_PID && -n $CG_HOME ]]; then
		echo "$CG_PID" >"/sys/fs/cgroup/memory$CG_HOME/cgroup.procs" 2>/dev/null || true
	fi
	CG_PID=
	if [[ -d $CG ]]; then
		# a task left there (the backend, if it could not be moved
		# back) exits with its cluster; rmdir then succeeds
		local i
		for ((i = 0; i < 50; i++)); do
			rmdir "$CG" 2>/dev/null && break
			sleep 0.1
		done
	fi
	return 0
}
pgbt_on_exit cg_cleanup

# The sum of /proc/vmstat's counters named NAME...
vmstat_sum() {
	local re
	re=$(printf '%s|' "$@")
	awk -v re="^(${re%|})\$" '$1 ~ re { s += $2 } END { print s + 0 }' /proc/vmstat
}

# The sum of values of map MAP in bpftrace output FILE.
map_sum() {
	awk -v m="@$2[" 'index($0, m) == 1 { s += $NF } END { print s + 0 }' "$1"
}

test_leg() {
	if [[ ! -w /sys/fs/cgroup/memory/cgroup.procs ]]; then
		skip "$LEG: reclaim: no cgroup v1 memory controller at /sys/fs/cgroup/memory"
		return 0
	fi
	# The backend itself reads: no parallel workers; PostgreSQL 18's IO
	# workers (io_method=worker) would read for it, charging their own
	# cgroup.
	local io=
	[[ $LEG_BUILD == 18* ]] && io=io_method=sync
	cluster_start "$LEG_BUILD" autovacuum=off max_parallel_workers_per_gather=0 $io
	# Frozen and checkpointed: the scan sets no hint bits, so it dirties
	# no page (dirty pages in a 24 MB cgroup without swap got the backend
	# OOM-killed in two runs).
	cl_psql -c "create table big as select g, repeat('x', 200) as pad from generate_series(1, 500000) g" \
		-c "vacuum (freeze) big" -c "checkpoint"
	local rc=0 out=$E2E_TMP/rc.out
	render rc reclaim || rc=1
	((rc == 0)) || { cluster_stop; return 0; }

	# Cold: the table's pages must be read again, into the cgroup.
	sync
	echo 1 >/proc/sys/vm/drop_caches
	mkdir "$CG"
	echo $((24 << 20)) >"$CG/memory.limit_in_bytes"

	bt_start "$E2E_TMP/rc.bt" "$out" || { cluster_stop; cg_cleanup; return 0; }
	local steal0 stall0 steal1 stall1
	steal0=$(vmstat_sum pgsteal_anon pgsteal_file)
	stall0=$(vmstat_sum 'allocstall_[a-z0-9]*')
	pgbt_bg cl_psql -c "select pg_sleep(3)" -c "select count(*) from big"
	local session=$BG_PID pid
	wait_sql "select count(*) from pg_stat_activity where wait_event = 'PgSleep'" ||
		fail "$LEG: the session did not start"
	pid=$(cl_psql -c "select pid from pg_stat_activity where wait_event = 'PgSleep'")
	CG_PID=$(cl_host_pid "$pid")
	CG_HOME=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' "/proc/$CG_PID/cgroup")
	echo "$CG_PID" >"$CG/cgroup.procs"
	local i
	for ((i = 0; i < 600; i++)); do
		pgbt_alive "$session" || break
		sleep 0.1
	done
	pgbt_alive "$session" && fail "$LEG: the scan did not end within 60 s"
	local scan_rc=0
	wait "$session" 2>/dev/null || scan_rc=$?
	check_eq "$LEG: the scan succeeded in the cgroup (psql exit status)" "$scan_rc" 0
	steal1=$(vmstat_sum pgsteal_anon pgsteal_file)
	stall1=$(vmstat_sum 'allocstall_[a-z0-9]*')
	bt_stop
	cg_cleanup

	local n us pages global mine size
	size=$(cl_psql -c "select pg_relation_size('big')")
	n=$(bt_map "$out" reclaims "$pid, memcg")
	mine=$(bt_map "$out" reclaimed_pages "$pid, memcg")
	us=$(bt_map "$out" reclaim_us "$pid, memcg")
	global=$(bt_map "$out" reclaims "$pid, global")
	pages=$(map_sum "$out" reclaimed_pages)
	# It read the table through a 24 MB cgroup: it freed much of what
	# exceeds the limit (all of it in most runs; 44% in one run on 18,
	# whose reads partly hit pages the cache still held).
	check_eq "$LEG: the backend reclaimed in its cgroup (${n:-0} times)" "$((${n:-0} >= 1))" 1
	check_eq "$LEG: freeing over a quarter of the table beyond the limit (${mine:-0} pages of $((size / 4096)))" \
		"$((${mine:-0} * 4096 * 4 >= size - (24 << 20)))" 1
	check_eq "$LEG: and spent time there (${us:-0} us)" "$((${us:-0} > 0))" 1
	if ((stall1 == stall0)); then
		check_eq "$LEG: no global reclaim (none in /proc/vmstat)" "${global:-0}" 0
	else
		skip "$LEG: global reclaim on the host meanwhile ($((stall1 - stall0)) allocstalls): not compared"
	fi
	check_near "$LEG: pages freed, /proc/vmstat's pgsteal delta" "$pages" "$((steal1 - steal0))" \
		$(((steal1 - steal0) / 100 + 64))
	check_empty "$LEG: no warnings" "$(bt_problems "$out")"
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
