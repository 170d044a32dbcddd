#!/usr/bin/env bash
# Every script in `pgbt-gen list`, with its default parameters and with
# every combination of its choice parameters (and, for scripts that name
# relations, with -d CONNINFO too), rendered for each leg (every server
# build, rendered for and compiled by each bpftrace), keeps to the bpftrace
# subset that runs on 0.17 through current releases
# (tests/lint/bt-subset.sh) and compiles (--test codegen: no probe is
# attached) without a word on stderr, warnings included. The lint itself is
# checked on a file of known violations, so it cannot pass by finding
# nothing.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

LINT=$PGBT_ROOT/tests/lint/bt-subset.sh
# Combinations a script refuses on purpose, by the reason it gives.
REFUSALS=(
	"mode=usdt needs a build with the USDT probes postgresql:wait__event__start/end"
	"stacks=all and -d do not fit together in the BPF stack"
	"this build has no USDT probes sort__start/done"
)

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

# Renders SCRIPT with ARGS and checks that it keeps to the subset and that
# bpftrace compiles it silently. A combination refused without a backend
# (waits mode=watch, lwlocks output=events) is rendered again with pid= a
# live backend's PID ($LINT_BACKEND). One the generator still refuses must
# be refused for a reason the script states (REFUSALS), with one line on
# stderr and nothing on stdout; any other refusal fails.
compiles_clean() {
	local script=$1 label=$2 out=$E2E_TMP/$script-$RANDOM.bt backend=; shift 2
	if ! "$PGBT_GEN" -p "$CL_PID" "$@" "$script" >"$out" 2>"$out.err"; then
		if grep -q '^//@ param pid backend ' "$PGBT_ROOT/scripts/$script.bt" &&
			"$PGBT_GEN" -p "$CL_PID" "$@" pid="$LINT_BACKEND" "$script" >"$out" 2>"$out.err"; then
			label+=" pid=backend"
			backend=$(cl_host_pid "$LINT_BACKEND")
		else
			local why
			why=$(cat "$out.err")
			if [[ -s $out || $(wc -l <"$out.err") != 1 ]] || ! grep -qF -f <(printf '%s\n' "${REFUSALS[@]}") <<<"$why"; then
				fail "$LEG: $script $label: refused: $why"
			else
				pass "$LEG: $script $label: refused as its script says ($why)"
			fi
			return 0
		fi
	fi
	check_empty "$LEG: $script $label keeps to the portable subset" \
		"$("$LINT" "$out" "$CL_PID" $backend 2>&1)"
	check_empty "$LEG: $script $label compiles without a word on stderr" \
		"$(timeout 60 "$PGBT_BPFTRACE" --test codegen "$out" 2>&1 | grep -v RLIMIT_MEMLOCK)"
}

test_leg() {
	local script out
	cluster_start "$LEG_BUILD"
	# A backend for the parameters that name one: the checkpointer will do.
	LINT_BACKEND=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	local listing
	# A script that fails to load makes list fail: not a shorter list.
	listing=$("$PGBT_GEN" list 2>"$E2E_TMP/list.err") ||
		fail "$LEG: pgbt-gen list fails: $(cat "$E2E_TMP/list.err")"
	for script in $(awk 'NR > 1 { print $1 }' <<<"$listing"); do
		out=$E2E_TMP/$script.bt
		if ! "$PGBT_GEN" -p "$CL_PID" "$script" >"$out" 2>"$out.err"; then
			if [[ ! -s $out && $(wc -l <"$out.err") == 1 ]] &&
				grep -qF -f <(printf '%s\n' "${REFUSALS[@]}") "$out.err"; then
				pass "$LEG: $script refused on this build as its script says ($(cat "$out.err"))"
			else
				fail "$LEG: $script does not render: $(cat "$out.err")"
			fi
			continue
		fi
		check_empty "$LEG: $script keeps to the portable subset" "$("$LINT" "$out" "$CL_PID" 2>&1)"
		check_empty "$LEG: $script compiles" \
			"$(timeout 60 "$PGBT_BPFTRACE" --test codegen "$out" 2>&1 | grep -v RLIMIT_MEMLOCK)"
		local set conn="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres" named=
		grep -q '{{for [A-Za-z_]* in relations' "$PGBT_ROOT/scripts/$script.bt" && named=1
		while read -r set; do
			# shellcheck disable=SC2086 # a set is several NAME=VALUE words
			[[ -n $set ]] && compiles_clean "$script" "($set)" $set
			[[ -n $named ]] && compiles_clean "$script" "(-d${set:+, $set})" -d "$conn" $set max_relations=20
		done < <(choice_sets "$script")
	done
	cluster_stop
}

test_lint_finds_violations
for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg
done
e2e_done
