#!/usr/bin/env bash
# The e2e harness itself (tests/lib/cluster.sh and e2e.sh), without pgbt-gen:
# the checks and skips count and report as tests/run expects, and a loop
# over no legs fails; on every leg a throwaway cluster starts (on the host,
# or in a container), is the major asked for, CL_PID is its postmaster,
# bpftrace sees its backends through a uprobe, and cluster_stop leaves
# nothing; two clusters run side by side; a test that dies halfway still
# leaves no server, process or directory behind.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

# A child test script that sources e2e.sh; prints its path.
child_script() {
	local body=$2 f=$E2E_TMP/$1.sh
	printf 'set -euo pipefail\nsource %q\n%s\n' "$PGBT_ROOT/tests/lib/e2e.sh" "$body" >"$f"
	echo "$f"
}

# Runs a child script; sets CHILD_OUT, CHILD_ERR, CHILD_STATUS.
run_child() {
	CHILD_STATUS=0
	bash "$1" >"$E2E_TMP/child.out" 2>"$E2E_TMP/child.err" || CHILD_STATUS=$?
	CHILD_OUT=$(cat "$E2E_TMP/child.out")
	CHILD_ERR=$(cat "$E2E_TMP/child.err")
}

test_checks() {
	run_child "$(child_script checks '
check_eq "eq" abc abc
check_eq "eq differs" abc abd
check_near "near" 10.4 10 0.5
check_near "near too far" 12 10 0.5
check_near "near not a number" 12x 10 1
check_contains "contains" "one two three" "two"
check_contains "contains missing" "one two" "[tw]*"
check_empty "empty" ""
check_empty "not empty" " "
e2e_done')"
	check_eq "checks: summary line" "$(tail -n 1 <<<"$CHILD_OUT")" "4 passed, 5 failed, 0 skipped"
	check_eq "checks: exit status with failures" "$CHILD_STATUS" 1
	check_eq "checks: FAIL lines on stderr" "$(grep -c '^FAIL: ' <<<"$CHILD_ERR")" 5
	check_contains "checks: eq message" "$CHILD_ERR" "FAIL: eq differs: got 'abc', want 'abd'"

	run_child "$(child_script passing 'pass "fine"; e2e_done')"
	check_eq "passing: summary line" "$(tail -n 1 <<<"$CHILD_OUT")" "1 passed, 0 failed, 0 skipped"

	run_child "$(child_script skipping 'pass "fine"; skip "not here: no such build"; e2e_done')"
	check_eq "skipping: summary line" "$(tail -n 1 <<<"$CHILD_OUT")" "1 passed, 0 failed, 1 skipped"
	check_contains "skipping: the skip is named" "$CHILD_OUT" "skip: not here: no such build"
	check_eq "skipping: exit status" "$CHILD_STATUS" 0

	# No legs to run is a failure, not a pass over nothing.
	run_child "$(child_script nolegs 'PGBT_E2E_BUILDS=" " PGBT_E2E_LEGS=
for leg in $(e2e_legs_checked all); do pass "$leg"; done
e2e_done')"
	check_eq "no legs: summary line" "$(tail -n 1 <<<"$CHILD_OUT")" "0 passed, 1 failed, 0 skipped"
	check_eq "no legs: exit status" "$CHILD_STATUS" 1

	# A leg whose build is not installed is a named skip.
	run_child "$(child_script missing 'leg_use 99/system || true; e2e_done')"
	check_contains "missing build: skipped, saying why" "$CHILD_OUT" "skip: 99/system: "
	check_eq "passing: exit status" "$CHILD_STATUS" 0

	# A failing command outside any check ends the test with a located failure.
	run_child "$(child_script aborts 'pass "before"
false
pass "never"
e2e_done')"
	check_eq "abort: summary line" "$(tail -n 1 <<<"$CHILD_OUT")" "1 passed, 1 failed, 0 skipped"
	check_eq "abort: exit status" "$CHILD_STATUS" 1
	check_contains "abort: stderr names the line" "$CHILD_ERR" "aborts.sh:4: 'false' exited with status 1"

	# A failed leg's files are kept aside before the next leg overwrites
	# them; a leg that passed keeps none.
	PGBT_KEEP_TMP=1 run_child "$(child_script keeps 'for leg in 15/system 15/trixie 15/system; do
  leg_use "$leg" || continue
  echo "$leg" >"$E2E_TMP/out"
  [[ $leg == */trixie ]] && fail "the trixie leg" || pass "$leg"
done
echo "tmp=$E2E_TMP"
e2e_done')"
	local tmp kept
	tmp=$(sed -n 's/^tmp=//p' <<<"$CHILD_OUT")
	kept=$(cd "$tmp" 2>/dev/null && for d in failed-leg.*; do echo "$d: $(cat "$d/out" 2>/dev/null)"; done) || true
	check_contains "a failed leg's files: kept aside" "$kept" ": 15/trixie"
	check_eq "a failed leg's files: only its" "$(wc -l <<<"$kept")" 1
	[[ -z $tmp || $tmp != /tmp/pgbt-e2e.* ]] || rm -rf "$tmp"
}

build_major() { pg_build_major "$@"; }

# Everything one cluster should offer; the cluster is stopped at the end.
test_leg() {
	local v=$LEG_BUILD major
	major=$(build_major "$v")
	if ! cluster_start "$v"; then
		fail "$LEG: cluster_start failed (see above)"
		return 0
	fi
	check_eq "$LEG: CL_MAJOR" "$CL_MAJOR" "$major"
	check_eq "$LEG: server major" \
		"$(cl_psql -c "select current_setting('server_version_num')::int / 10000")" "$major"
	check_eq "$LEG: CL_PID's cwd is CL_DATA" "$([[ /proc/$CL_PID/cwd -ef $CL_DATA ]] && echo same)" same
	check_eq "$LEG: CL_PID runs CL_BIN/postgres" \
		"$([[ /proc/$CL_PID/exe -ef $CL_BIN/postgres ]] && echo same)" same
	check_eq "$LEG: server listens only on its socket" "$(cl_psql -c 'show listen_addresses')" ""
	check_contains "$LEG: CL_LOG is the server log" "$(cat "$CL_LOG")" "database system is ready"

	# pg_parse_query is exported (.dynsym), so the uprobe also works on
	# Debian's stripped binary; the parent filter keeps it to this cluster.
	local bt=$E2E_TMP/pg$v-$LEG_BT.bt out=$E2E_TMP/pg$v-$LEG_BT.out tag="harness-$v-$RANDOM"
	# bpftrace prints our PIDs; the server its own (in a container, not ours).
	cat >"$bt" <<-EOF
	BEGIN { printf("ready\n"); }
	interval:s:1 { printf("tick\n"); }
	uprobe:$CL_BIN/postgres:pg_parse_query /curtask->real_parent->tgid == $CL_PID/ {
	  printf("query pid=%d q=%s\n", pid, str(arg0));
	}
	END { printf("end\n"); }
	EOF
	if bt_start "$bt" "$out"; then
		# The session sleeps on, so that its host PID can still be read.
		local backend i session=$E2E_TMP/session-$v-$LEG_BT.out
		printf 'select pg_backend_pid() as "%s";\nselect pg_sleep(2.5);\n' "$tag" |
			cl_psql >"$session" &
		for ((i = 0; i < 100; i++)); do [[ -s $session ]] && break; sleep 0.05; done
		backend=$(cl_host_pid "$(head -n1 "$session")")
		wait $!    # at least one interval tick (the first comes 1 s after attaching)
		bt_stop
		local got
		got=$(cat "$out")
		check_contains "$LEG: bpftrace BEGIN" "$got" "ready"
		check_contains "$LEG: bpftrace interval" "$got" "tick"
		check_contains "$LEG: bpftrace END after bt_stop" "$got" "end"
		check_contains "$LEG: uprobe saw the backend" "$got" \
			"query pid=$backend q=select pg_backend_pid() as \"$tag\""
	fi

	local data=$CL_DATA dir=$CL_DIR pid=$CL_PID
	cluster_stop
	check_empty "$LEG: processes left in $data" "$(cluster_pids "$data")"
	check_eq "$LEG: postmaster gone" "$(pgbt_alive "$pid" && echo alive || echo gone)" gone
	check_eq "$LEG: temp dir removed" "$([[ -e $dir ]] && echo exists || echo removed)" removed
	check_eq "$LEG: CL_* cleared" "$CL_NAME$CL_PID" ""
}

test_two_clusters() {
	local a=$1 b=$2
	cluster_start -n one "$a" || { fail "two clusters: cluster_start $a failed"; return 0; }
	local port1=$CL_PORT pid1=$CL_PID
	cl_psql -c "create table only_in_one (x int)"
	if ! cluster_start -n two "$b"; then
		fail "two clusters: cluster_start $b next to $a failed"
		cluster_stop one
		return 0
	fi
	local port2=$CL_PORT pid2=$CL_PID
	if [[ $port1 != "$port2" ]]; then
		pass "two clusters: distinct ports $port1 $port2"
	else
		fail "two clusters: both on port $port1"
	fi
	if [[ $pid1 != "$pid2" ]]; then
		pass "two clusters: distinct postmasters $pid1 $pid2"
	else
		fail "two clusters: same postmaster $pid1"
	fi
	check_eq "two clusters: two: server major" \
		"$(cl_psql -c "select current_setting('server_version_num')::int / 10000")" "$(build_major "$b")"
	check_eq "two clusters: two does not see one's table" \
		"$(cl_psql -c "select count(*) from pg_class where relname = 'only_in_one'")" 0
	cluster_use one
	check_eq "two clusters: cluster_use one: CL_PORT" "$CL_PORT" "$port1"
	check_eq "two clusters: one: server major" \
		"$(cl_psql -c "select current_setting('server_version_num')::int / 10000")" "$(build_major "$a")"
	check_eq "two clusters: one sees its table" \
		"$(cl_psql -c "select count(*) from pg_class where relname = 'only_in_one'")" 1
	cluster_stop one
	check_eq "two clusters: one's postmaster gone" "$(pgbt_alive "$pid1" && echo alive || echo gone)" gone
	cluster_use two
	check_eq "two clusters: two still answers" "$(cl_psql -c 'select 1')" 1
	check_eq "two clusters: one running cluster left" "$(cluster_names)" two
	cluster_stop two
}

# A test that dies with a server, a background process and bpftrace running.
test_exit_trap() {
	local v=$1 state=$E2E_TMP/trap.state
	local body
	body=$(cat <<-EOF
	cluster_start $v
	pgbt_bg sleep 300
	echo 'interval:s:10 { printf("x\n"); }' >"\$E2E_TMP/x.bt"
	bt_start "\$E2E_TMP/x.bt" "\$E2E_TMP/x.out"
	echo "\$CL_DATA \$CL_DIR \$CL_PID \$BG_PID \$BT_PID \$E2E_TMP" >$state
	false
	e2e_done
	EOF
	)
	run_child "$(child_script dies "$body")"
	check_eq "exit trap: dying test exits non-zero" "$CHILD_STATUS" 1
	check_contains "exit trap: summary counts the abort" "$(tail -n 1 <<<"$CHILD_OUT")" " 1 failed"
	if [[ ! -s $state ]]; then
		fail "exit trap: child did not get to its failure:"
		_e2e_show "$CHILD_ERR"
		return 0
	fi
	local data dir pm bg bt tmp
	read -r data dir pm bg bt tmp <"$state"
	check_empty "exit trap: processes left in $data" "$(cluster_pids "$data")"
	check_eq "exit trap: postmaster gone" "$(pgbt_alive "$pm" && echo alive || echo gone)" gone
	check_eq "exit trap: background process gone" "$(pgbt_alive "$bg" && echo alive || echo gone)" gone
	check_eq "exit trap: bpftrace gone" "$(pgbt_alive "$bt" && echo alive || echo gone)" gone
	check_eq "exit trap: cluster dir removed" "$([[ -e $dir ]] && echo exists || echo removed)" removed
	check_eq "exit trap: E2E_TMP removed" "$([[ -e $tmp ]] && echo exists || echo removed)" removed
}

test_checks
builds=()
for leg in $(e2e_legs_checked each); do
	leg_use "$leg" || continue
	test_leg
	builds+=("$LEG_BUILD")
done
# The first two builds side by side (the same one twice if only one).
if ((${#builds[@]})); then
	test_two_clusters "${builds[0]}" "${builds[1]:-${builds[0]}}"
	test_exit_trap "${builds[0]}"
fi
e2e_done
