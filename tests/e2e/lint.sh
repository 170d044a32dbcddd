#!/usr/bin/env bash
# Every script in `pgbt-gen list`, rendered with its default parameters for
# Debian's stripped 15 and the debug builds of 17 and 18, keeps to the
# bpftrace subset that runs on 0.17 through current releases
# (tests/lint/bt-subset.sh) and compiles on the installed bpftrace
# (--test codegen: no probe is attached). The lint itself is checked on a
# file of known violations, so it cannot pass by finding nothing.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

LINT=$PGBT_ROOT/tests/lint/bt-subset.sh

test_lint_finds_violations() {
	local got
	got=$("$LINT" "$PGBT_ROOT/tests/lint/violations.bt" 42 | sed "s|^$PGBT_ROOT/||") || true
	check_eq "the lint finds every known violation" "$got" \
		"$(cat "$PGBT_ROOT/tests/lint/violations.expected")"
}

test_version() {
	local v=$1 script out
	cluster_start "$v"
	for script in $("$PGBT_GEN" list | awk 'NR > 1 { print $1 }'); do
		out=$E2E_TMP/$script-$v.bt
		if ! "$PGBT_GEN" -p "$CL_PID" "$script" >"$out" 2>"$out.err"; then
			fail "pg$v: $script does not render: $(cat "$out.err")"
			continue
		fi
		check_empty "pg$v: $script keeps to the portable subset" "$("$LINT" "$out" "$CL_PID" 2>&1)"
		check_empty "pg$v: $script compiles on $(bpftrace --version)" \
			"$(timeout 60 bpftrace --test codegen "$out" 2>&1 | grep -v RLIMIT_MEMLOCK)"
	done
	cluster_stop
}

test_lint_finds_violations
for v in $PGBT_E2E_VERSIONS; do
	test_version "$v"
done
e2e_done
