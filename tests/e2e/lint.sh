#!/usr/bin/env bash
# Every script in `pgbt-gen list`, rendered with its default parameters for
# Debian's stripped 15 and the debug builds of 17 and 18, keeps to the
# bpftrace subset that runs on 0.17 through current releases
# (tests/lint/bt-subset.sh) and compiles on the installed bpftrace
# (--test codegen: no probe is attached). The lint itself is checked on a
# file of known violations, so it cannot pass by finding nothing.
# Besides the defaults, every combination of a script's choice parameters
# is rendered and compiled too, and scripts that name relations also with
# -d CONNINFO: bpftrace's stderr (warnings included) must stay empty.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

LINT=$PGBT_ROOT/tests/lint/bt-subset.sh

test_lint_finds_violations() {
	local got
	got=$("$LINT" "$PGBT_ROOT/tests/lint/violations.bt" 42 | sed "s|^$PGBT_ROOT/||") || true
	check_eq "the lint finds every known violation" "$got" \
		"$(cat "$PGBT_ROOT/tests/lint/violations.expected")"
}

# Every combination of SCRIPT's choice parameters, one line each
# ("output=events probe=uprobe"); one empty line when it has none.
choice_sets() {
	local src=$PGBT_ROOT/scripts/$1.bt sets=("") name values v set
	while read -r name values; do
		local next=()
		for set in "${sets[@]}"; do
			for v in ${values//|/ }; do next+=("${set:+$set }$name=$v"); done
		done
		sets=("${next[@]}")
	done < <(awk '$1 == "//@" && $2 == "param" && $4 ~ /^choice:/ { print $3, substr($4, 8) }' "$src")
	printf '%s\n' "${sets[@]}"
}

# Renders SCRIPT with ARGS and checks that bpftrace compiles it silently.
# A combination refused without a backend (waits mode=watch, lwlocks
# output=events) is rendered again with pid= a live backend's PID
# ($LINT_BACKEND). One the generator still refuses for this build (its
# one-line error, empty stdout) is the script's own choice: skipped, not
# failed.
compiles_clean() {
	local v=$1 script=$2 label=$3 out=$E2E_TMP/$script-$v-$RANDOM.bt; shift 3
	if ! "$PGBT_GEN" -p "$CL_PID" "$@" "$script" >"$out" 2>"$out.err"; then
		if grep -q '^//@ param pid backend ' "$PGBT_ROOT/scripts/$script.bt" &&
			"$PGBT_GEN" -p "$CL_PID" "$@" pid="$LINT_BACKEND" "$script" >"$out" 2>"$out.err"; then
			label+=" pid=backend"
		else
			echo "skip: pg$v: $script $label: $(cat "$out.err")"
			return 0
		fi
	fi
	check_empty "pg$v: $script $label compiles without a word on stderr" \
		"$(timeout 60 bpftrace --test codegen "$out" 2>&1 | grep -v RLIMIT_MEMLOCK)"
}

test_version() {
	local v=$1 script out
	cluster_start "$v"
	# A backend for the parameters that name one: the checkpointer will do.
	LINT_BACKEND=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	local listing
	# A script that fails to load makes list fail: not a shorter list.
	listing=$("$PGBT_GEN" list 2>"$E2E_TMP/list.err") ||
		fail "pg$v: pgbt-gen list fails: $(cat "$E2E_TMP/list.err")"
	for script in $(awk 'NR > 1 { print $1 }' <<<"$listing"); do
		out=$E2E_TMP/$script-$v.bt
		if ! "$PGBT_GEN" -p "$CL_PID" "$script" >"$out" 2>"$out.err"; then
			fail "pg$v: $script does not render: $(cat "$out.err")"
			continue
		fi
		check_empty "pg$v: $script keeps to the portable subset" "$("$LINT" "$out" "$CL_PID" 2>&1)"
		check_empty "pg$v: $script compiles on $(bpftrace --version)" \
			"$(timeout 60 bpftrace --test codegen "$out" 2>&1 | grep -v RLIMIT_MEMLOCK)"
		local set conn="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres" named=
		grep -q '{{for [A-Za-z_]* in relations' "$PGBT_ROOT/scripts/$script.bt" && named=1
		while read -r set; do
			# shellcheck disable=SC2086 # a set is several NAME=VALUE words
			[[ -n $set ]] && compiles_clean "$v" "$script" "($set)" $set
			[[ -n $named ]] && compiles_clean "$v" "$script" "(-d${set:+, $set})" -d "$conn" $set max_relations=20
		done < <(choice_sets "$script")
	done
	cluster_stop
}

test_lint_finds_violations
for v in $PGBT_E2E_VERSIONS; do
	test_version "$v"
done
e2e_done
