#!/usr/bin/env bash
# Servers the tests did not start, running through a whole test run, as
# other PostgreSQL servers run on a user's host: Debian's 15 on the host,
# and the 16 without debug info and trixie's 17 in a container where those
# builds are installed. tests/run starts them when PGBT_BYSTANDERS=1 (make
# check sets it). The tests must pass beside them and never touch them: at
# the end each still runs under the postmaster it started with, and its
# log shows no connection but the one this script made at the start.
#
#   bystanders.sh DIR   start them, write DIR/ready, wait until DIR/stop
#                       exists, check them, print "ok: ..."/"FAIL: ..."
#                       lines and "N passed, N failed"; stop them.
set -euo pipefail
source "$(dirname "$0")/cluster.sh"

dir=${1:?usage: bystanders.sh DIR}
parent=$PPID
# The runner holds the e2e lock; a bystander left behind must not.
_pgbt_close_lock
builds=()
for b in 15 emb16 ct17; do
	pg_build_missing "$b" >/dev/null || builds+=("$b")
done

# Our PID of each postmaster, and what its postmaster.pid says (the
# container's own PID for ct17).
declare -A pid_of file_pid_of
for b in "${builds[@]}"; do
	cluster_start -n "bystander-$b" "$b" log_connections=on >/dev/null
	cl_psql -c "select 1" >/dev/null
	pid_of[$b]=$CL_PID
	file_pid_of[$b]=$(head -n 1 "$CL_DATA/postmaster.pid")
	echo "bystander $b: postmaster $CL_PID, data $CL_DATA"
done
touch "$dir/ready"
# Until told to stop, or the runner is gone (then stop the servers).
while [[ ! -e $dir/stop ]]; do
	kill -0 "$parent" 2>/dev/null || exit 1
	sleep 1
done

passed=0 failed=0
check() {
	if [[ $2 == "$3" ]]; then
		echo "ok: $1"; passed=$((passed + 1))
	else
		echo "FAIL: $1: got '$2', want '$3'"; failed=$((failed + 1))
	fi
}
for b in "${builds[@]}"; do
	cluster_use "bystander-$b"
	check "bystander $b: still served by postmaster ${pid_of[$b]}" \
		"$(head -n 1 "$CL_DATA/postmaster.pid" 2>/dev/null) $(kill -0 "${pid_of[$b]}" 2>&1 && echo alive)" \
		"${file_pid_of[$b]} alive"
	# Counted before connecting again: our own first connection only.
	check "bystander $b: no connection from the tests" \
		"$(grep -c 'connection authorized' "$CL_LOG" || true)" 1
	check "bystander $b: answers" "$(cl_psql -c 'select 42' 2>&1)" 42
done
echo "$passed passed, $failed failed"
