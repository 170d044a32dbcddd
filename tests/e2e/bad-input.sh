#!/usr/bin/env bash
# Every kind of bad input gets one line on stderr naming the input and the
# cause, a non-zero exit, and nothing on stdout, so `pgbt-gen ... | bpftrace -`
# never runs half a script.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

TEMPLATES=$PGBT_ROOT/tests/e2e/templates

# expect_fail WHAT NEEDLE CMD...: CMD fails, says NEEDLE in one line, prints nothing.
expect_fail() {
	local what=$1 needle=$2 rc=0; shift 2
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" </dev/null || rc=$?
	check_eq "$what: exit status is non-zero" "$([[ $rc -ne 0 ]] && echo nonzero || echo 0)" nonzero
	check_empty "$what: nothing on stdout" "$(cat "$E2E_TMP/out")"
	check_eq "$what: one line on stderr" "$(wc -l <"$E2E_TMP/err")" 1
	check_contains "$what: message" "$(cat "$E2E_TMP/err")" "$needle"
}

test_processes() {
	local gone
	sleep 0 & gone=$!; wait "$gone"
	while kill -0 "$gone" 2>/dev/null; do gone=$((gone + 1)); done
	expect_fail "no such PID" "process $gone: no such process" "$PGBT_GEN" -p "$gone" xid-rate
	expect_fail "a PID that is not PostgreSQL" "process $$: not a PostgreSQL process (its executable is" \
		"$PGBT_GEN" -p $$ xid-rate
	expect_fail "a PID that is not a number" "-p '12x': not a process ID" "$PGBT_GEN" -p 12x xid-rate
	expect_fail "-D of a directory with no server" "$E2E_TMP: no postmaster.pid" \
		"$PGBT_GEN" -D "$E2E_TMP" xid-rate
}

test_binaries() {
	local pg15=/usr/lib/postgresql/15/bin/postgres
	expect_fail "a non-ELF binary" "/etc/passwd: not an ELF file" "$PGBT_GEN" --scripts-dir "$TEMPLATES" --bin /etc/passwd transam-offsets
	head -c 100000 "$pg15" >"$E2E_TMP/truncated"
	expect_fail "a truncated binary" "$E2E_TMP/truncated: corrupt ELF" \
		"$PGBT_GEN" --scripts-dir "$TEMPLATES" --bin "$E2E_TMP/truncated" transam-offsets
	expect_fail "a binary that is not PostgreSQL" "/bin/ls: no PostgreSQL version string" \
		"$PGBT_GEN" --scripts-dir "$TEMPLATES" --bin /bin/ls transam-offsets
	# A stripped server of a major pgbt has no layout for: Debian's 15 with
	# its version string changed to 12 (same length, so the ELF stays whole).
	LC_ALL=C sed 's/PostgreSQL 15\./PostgreSQL 12./' "$pg15" >"$E2E_TMP/postgres12"
	expect_fail "no DWARF and no layout for the version" \
		"no built-in layout for PostgreSQL 12 on x86_64 (it has 13, 14, 15, 16, 17, 18 there); install the server's debug symbols (its -dbgsym or -debuginfo package), set DEBUGINFOD_URLS, or trace a server of a major it has" \
		"$PGBT_GEN" --scripts-dir "$TEMPLATES" --bin "$E2E_TMP/postgres12" transam-offsets
	# --resolver gdb: gdb not installed, and a build without debug info.
	expect_fail "--resolver gdb without gdb" "--resolver gdb: gdb is not installed (no gdb on PATH)" \
		env PATH=/nonexistent "$PGBT_GEN" --bpftrace 0.23 --resolver gdb \
		--scripts-dir "$TEMPLATES" --bin "$pg15" transam-offsets
	if command -v gdb >/dev/null; then
		expect_fail "--resolver gdb without debug info" \
			"--resolver gdb: $pg15: GNU gdb" \
			"$PGBT_GEN" --resolver gdb --scripts-dir "$TEMPLATES" --bin "$pg15" transam-offsets
		check_contains "--resolver gdb without debug info: says so" \
			"$(cat "$E2E_TMP/err")" "finds no debug info for it"
	else
		skip "--resolver gdb without debug info: gdb is not installed (tests/setup/install-deps.sh)"
	fi
	# A fact gdb cannot answer, on the debug build of 15: the fact and gdb's words.
	local dbg15=$PGBT_CACHE/pg15/bin/postgres
	if [[ -x $dbg15 ]] && command -v gdb >/dev/null; then
		mkdir -p "$E2E_TMP/tpl"
		sed 's/(TransamVariablesData|VariableCacheData), nextXid/VariableCacheData, noSuchMember/
		     s/transam-offsets/no-such-member/' \
			"$TEMPLATES/transam-offsets.bt" >"$E2E_TMP/tpl/no-such-member.bt"
		expect_fail "--resolver gdb: a fact gdb cannot answer" \
			"gdb cannot answer offsetof(VariableCacheData, noSuchMember): There is no member named noSuchMember." \
			"$PGBT_GEN" --resolver gdb --scripts-dir "$E2E_TMP/tpl" --bin "$dbg15" no-such-member
	else
		skip "--resolver gdb: a fact gdb cannot answer: no gdb or no $dbg15 ($(pg_build_missing 15-debug))"
	fi
	expect_fail "--bin for a script that needs a running server" \
		"xid-rate needs a running server: {{ &(TransamVariables|ShmemVariableCache)->(nextXid|nextFullXid) }}" \
		"$PGBT_GEN" --bin "$pg15" xid-rate
}

test_scripts_and_parameters() {
	expect_fail "an unknown script" "no script 'nosuch' (pgbt-gen list shows them)" "$PGBT_GEN" nosuch
	expect_fail "a script name with a path" "'../etc/x': not a script name" "$PGBT_GEN" ../etc/x
	expect_fail "an unknown parameter" "xid-rate: no parameter 'intervl' (it has: interval, via)" \
		"$PGBT_GEN" xid-rate intervl=2
	expect_fail "a parameter out of range" "xid-rate: interval='0': not an integer in 1..3600" \
		"$PGBT_GEN" xid-rate interval=0
	expect_fail "a parameter with trailing junk" "interval='5s': not an integer" \
		"$PGBT_GEN" xid-rate interval=5s
	expect_fail "a parameter carrying bpftrace code" "not an integer in 1..3600" \
		"$PGBT_GEN" xid-rate 'interval=1 { system("touch /tmp/pwned"); }'
	expect_fail "two targets" "give one" "$PGBT_GEN" -p 1 -D /tmp xid-rate
	expect_fail "--check-with: not gdb" "--check-with 'lldb': want gdb or gdb-if-able" \
		"$PGBT_GEN" --check-with lldb xid-rate
	expect_fail "--resolver: not gdb" "--resolver 'lldb': want gdb or libdw" \
		"$PGBT_GEN" --resolver lldb xid-rate
	expect_fail "--bpftrace: no such program" "--bpftrace /nonexistent/bpftrace: no such program" \
		"$PGBT_GEN" --bpftrace /nonexistent/bpftrace xid-rate
	expect_fail "--bpftrace: not a bpftrace" "/bin/true --version: 'true (GNU coreutils)" \
		"$PGBT_GEN" --bpftrace /bin/true xid-rate
	expect_fail "--bpftrace: a program that fails" "/bin/false --version failed" \
		"$PGBT_GEN" --bpftrace /bin/false xid-rate
	expect_fail "PGBT_BPFTRACE: no such program" "--bpftrace nosuch-bpftrace: no such program" \
		env PGBT_BPFTRACE=nosuch-bpftrace "$PGBT_GEN" xid-rate
}

test_live() {
	cluster_start -n one 15
	local pid1=$CL_PID
	# Rendering from a binary alone, as a control for the failures above.
	local out
	out=$("$PGBT_GEN" --scripts-dir "$TEMPLATES" --bin "$CL_BIN/postgres" transam-offsets n=3)
	check_contains "offline rendering from the layout" "$out" "printf(\"nextXid at %d, n=%d\\n\", 8, 3);"
	check_contains "offline rendering says where types came from" "$out" \
		"built-in layout for PostgreSQL 15"

	expect_fail "permission denied reading the process" "permission denied reading /proc/$pid1/" \
		runuser -u nobody -- "$PGBT_GEN" -p "$pid1" xid-rate

	# -d CONNINFO: libpq's reason, with the input (passwords masked)
	local sock1=$CL_SOCK port1=$CL_PORT
	expect_fail "-d: nothing listening" \
		"-d 'host=$E2E_TMP port=1 user=postgres': cannot connect: connection to server on socket \"$E2E_TMP/.s.PGSQL.1\" failed" \
		"$PGBT_GEN" -p "$pid1" -d "host=$E2E_TMP port=1 user=postgres" lock-waits
	expect_fail "-d: no such database" "cannot connect: connection to server on socket \"$sock1/.s.PGSQL.$port1\" failed: FATAL: database \"nodb\" does not exist" \
		"$PGBT_GEN" -p "$pid1" -d "host=$sock1 port=$port1 user=postgres dbname=nodb password=sekrit" locks
	check_contains "-d: the password is masked" "$(cat "$E2E_TMP/err")" "dbname=nodb password=***'"
	check_eq "-d: the password is not shown" "$(grep -c sekrit "$E2E_TMP/err" || true)" 0
	expect_fail "-d: not a connection string" "-d 'dbname=x user': cannot connect: missing \"=\" after \"user\"" \
		"$PGBT_GEN" -p "$pid1" -d "dbname=x user" row-locks

	cluster_start -n two 18
	local pid2=$CL_PID
	expect_fail "-d: another server than the traced one" \
		"-d: the server it reached is not the traced one" \
		"$PGBT_GEN" -p "$pid1" -d "host=$CL_SOCK port=$CL_PORT user=postgres" lock-waits
	expect_fail "several servers and none chosen" "choose one with -p PID or -D DATADIR" \
		"$PGBT_GEN" xid-rate
	check_contains "several servers: both listed" "$(cat "$E2E_TMP/err")" "$pid1 ("
	check_contains "several servers: both listed" "$(cat "$E2E_TMP/err")" "$pid2 ("

	# The server exits while pgbt-gen resolves it: stop pgbt-gen just before
	# it reads shared memory, kill the postmaster, let pgbt-gen go on (on
	# the watchpoint, whose address is in shared memory; the uprobe is not).
	gdb -q -batch -ex 'set breakpoint pending on' -ex 'break pgbt_target_read_shared_ptr_in' \
		-ex "run -p $pid2 xid-rate via=watchpoint >$E2E_TMP/out 2>$E2E_TMP/err" \
		-ex "shell kill -KILL $pid2; while kill -0 $pid2 2>/dev/null && ! grep -q zombie /proc/$pid2/status 2>/dev/null; do sleep 0.05; done" \
		-ex continue --args "$PGBT_GEN" >"$E2E_TMP/gdb.out" 2>&1 || true
	check_contains "a server that exits while being resolved: exit status" \
		"$(cat "$E2E_TMP/gdb.out")" "exited with code 01"
	check_empty "a server that exits while being resolved: nothing on stdout" "$(cat "$E2E_TMP/out")"
	check_contains "a server that exits while being resolved: message" "$(cat "$E2E_TMP/err")" \
		"process $pid2: exited while being resolved"
	cluster_stop two
	cluster_stop one
}

test_processes
test_binaries
test_scripts_and_parameters
test_live
e2e_done
