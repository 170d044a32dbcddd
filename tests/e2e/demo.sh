#!/usr/bin/env bash
# The README's first command, as a new user runs it: examples/demo.sh (what
# `make demo` runs after installing the packages and building) starts a
# throwaway cluster of Debian's stripped 15 with its workload and runs
# xid-rate (via=auto) under the system's bpftrace for 12 s, with the
# generator's watchpoint check on (as for a user; the other tests turn it
# off). It must exit 0 whether or not this machine's hardware watchpoints
# fire: it says it traces through the uretprobe on GetNewTransactionId,
# and its end summary counts XIDs under the PID of the psql session the
# demo names, which takes about 12 a second (10 pg_current_xact_id()
# and a temporary table created and dropped each second): over 12 s of
# tracing, between 60 and 200 (the exact counts are xid-oid.sh's).
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

test_demo() {
	local out=$E2E_TMP/demo.out rc=0 burner n why
	if why=$(pg_build_missing 15); then
		skip "demo: $why"
		return 0
	fi
	env -u PGBT_WATCHPOINT_CHECK PGBT_GEN="$PGBT_GEN" "$PGBT_ROOT/examples/demo.sh" >"$out" 2>&1 || rc=$?
	check_eq "demo: exits 0 ($(tail -n 3 "$out" | tr '\n' ' '))" "$rc" 0
	check_contains "demo: traces through the uretprobe, on any machine" "$(cat "$out")" \
		"through a uretprobe on GetNewTransactionId"
	burner=$(sed -n 's/^ *backend PID \([0-9]*\)$/\1/p' "$out" | head -n 1)
	n=$(awk -v k="@total_xids_by_pid[${burner:-none}]:" 'index($0, k) == 1 { print $NF }' "$out")
	check_eq "demo: the psql session's XIDs (PID ${burner:-none}: ${n:-none}), 60 to 200 in 12 s" \
		"$((${n:-0} >= 60 && ${n:-0} <= 200))" 1
	check_empty "demo: no bpftrace errors" "$(grep -i '^error\|^stdin:.*error' "$out" || true)"
}

test_demo
e2e_done
