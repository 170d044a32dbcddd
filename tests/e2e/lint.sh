#!/usr/bin/env bash
# Every script in `pgbt-gen list`, rendered for each leg (every server
# build, rendered for and compiled by each bpftrace) with its default
# parameters, and on one leg per build (the bpftraces taken in turn, so
# each meets every combination on some builds) with every combination of
# its choice parameters (and, for scripts that name relations, with -d
# CONNINFO too, at 20 names and at the default number) and with its
# integer parameters at their bounds, keeps to
# the bpftrace subset that runs on 0.17 through current releases
# (tests/lint/bt-subset.sh) and compiles (bt_compile: compile-only, and
# from bpftrace 0.27 loaded and attached with --dry-run) without a word
# on stderr, warnings included. The compilations
# run two at a time (they are CPU-bound and time nothing).
# The lint itself is checked on a file of known violations, so it cannot
# pass by finding nothing.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

LINT=$PGBT_ROOT/tests/lint/bt-subset.sh
# Combinations a script refuses on purpose, by the reason it gives.
REFUSALS=(
	"mode=usdt needs a build with the USDT probes postgresql:wait__event__start/end"
	"stacks=all and -d do not fit together in the BPF stack"
)
# ... and those it refuses on majors before 14 only.
REFUSALS_BEFORE_14=(
	"by=queryid needs PostgreSQL 14 or later"
)

test_lint_finds_violations() {
	local got
	got=$("$LINT" "$PGBT_ROOT/tests/lint/violations.bt" 42 | sed "s|^$PGBT_ROOT/||") || true
	check_eq "the lint finds every known violation" "$got" \
		"$(cat "$PGBT_ROOT/tests/lint/violations.expected")"
	# Map iteration: in a rendering for 0.21 or later only, and no other loop.
	local loop='BEGIN { @m[1] = 1; for ($kv : @m) { print($kv.0); } }'
	printf '// bpftrace:   v0.23.2 (as asked)\n%s\n' "$loop" >"$E2E_TMP/for-0.23.bt"
	printf '// bpftrace:   v0.20.0 (as asked)\n%s\n' "$loop" >"$E2E_TMP/for-0.20.bt"
	printf '// bpftrace:   v0.23.2 (as asked)\nBEGIN { while (1) { } }\n' >"$E2E_TMP/while-0.23.bt"
	check_empty "the lint accepts for (\$kv : @map) rendered for 0.23" "$("$LINT" "$E2E_TMP/for-0.23.bt" 2>&1)"
	check_contains "the lint refuses for (\$kv : @map) rendered for 0.20" \
		"$("$LINT" "$E2E_TMP/for-0.20.bt" 2>&1 || true)" "for-0.20.bt:2: loop"
	check_contains "the lint refuses while rendered for 0.23" \
		"$("$LINT" "$E2E_TMP/while-0.23.bt" 2>&1 || true)" "while-0.23.bt:2: loop"
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

# SCRIPT's integer parameters at their lowest, then at their highest (a
# bound can change the code LLVM makes: min_ms=0 folds a comparison
# away), a line each where one differs from its default.
int_bounds() {
	awk '$1 == "//@" && $2 == "param" && $4 ~ /^int:/ {
		split(substr($4, 5), r, /\.\./)
		if (r[1] != $5) { lo = lo " " $3 "=" r[1]; l = 1 }
		if (r[2] != $5) { hi = hi " " $3 "=" r[2]; h = 1 }
	}
	END { if (l) print substr(lo, 2); if (h) print substr(hi, 2) }' "$PGBT_ROOT/scripts/$1.bt"
}

# Whether SCRIPT names relations (-d): a loop over them in its template
# or in a fragment it includes.
uses_relations() {
	local dir=$PGBT_ROOT/scripts inc
	grep -q '{{for [A-Za-z_]* in relations' "$dir/$1.bt" && return 0
	for inc in $(sed -n 's/.*{{include \([A-Za-z0-9_-]*\).*/\1/p' "$dir/$1.bt"); do
		grep -q '{{for [A-Za-z_]* in relations' "$dir/include/$inc.bt" && return 0
	done
	return 1
}

# Compilations to check, two at a time (jobs_run): JOBS holds
# "FILE<TAB>LABEL" for each, in order; FILE.lint and FILE.cc get what the
# subset lint and bpftrace said.
JOBS=()

lint_and_compile() {
	local out=$1 backend=$2
	"$LINT" "$out" "$CL_PID" $backend >"$out.lint" 2>&1 || true
	bt_compile "$out" >"$out.cc"
}

queue() {
	local out=$1 label=$2 backend=${3:-}
	JOBS+=("$out"$'\t'"$label")
	jobs_run lint_and_compile "$out" "$backend"
}

# Waits for the queued compilations and checks what each said.
check_queued() {
	local job out label
	jobs_wait
	for job in "${JOBS[@]}"; do
		out=${job%%$'\t'*} label=${job#*$'\t'}
		check_empty "$LEG: $label keeps to the portable subset" "$(cat "$out.lint")"
		check_empty "$LEG: $label compiles without a word on stderr" "$(cat "$out.cc")"
	done
	JOBS=()
}

# Renders SCRIPT with ARGS and queues its lint and compilation. A
# rendering refused for want of a backend (backend-waits,
# lwlock-events) is rendered again with pid= a live backend's PID
# ($LINT_BACKEND). One the generator still refuses must be refused for a
# reason the script states (REFUSALS), with one line on stderr and nothing
# on stdout; any other refusal fails.
render_and_queue() {
	local script=$1 label=$2 out=$E2E_TMP/$script-$RANDOM$RANDOM.bt backend=; shift 2
	if ! "$PGBT_GEN" -p "$CL_PID" "$@" "$script" >"$out" 2>"$out.err"; then
		if grep -q 'pid=PID' "$out.err" && grep -q '^//@ param pid backend ' "$PGBT_ROOT/scripts/$script.bt" &&
			"$PGBT_GEN" -p "$CL_PID" "$@" pid="$LINT_BACKEND" "$script" >"$out" 2>"$out.err"; then
			label+=" pid=backend"
			backend=$(cl_host_pid "$LINT_BACKEND")
		else
			local why refusals=("${REFUSALS[@]}")
			((CL_MAJOR >= 14)) || refusals+=("${REFUSALS_BEFORE_14[@]}")
			why=$(cat "$out.err")
			if [[ -s $out || $(wc -l <"$out.err") != 1 ]] || ! grep -qF -f <(printf '%s\n' "${refusals[@]}") <<<"$why"; then
				fail "$LEG: $script${label:+ $label}: refused: $why"
			else
				pass "$LEG: $script${label:+ $label}: refused as its script says ($why)"
			fi
			return 0
		fi
	fi
	queue "$out" "$script${label:+ $label}" "$backend"
}

test_leg() {
	local script combos=$1
	cluster_start "$LEG_BUILD"
	# A backend for the parameters that name one: the checkpointer will do.
	LINT_BACKEND=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	local listing
	# A script that fails to load makes list fail: not a shorter list.
	listing=$("$PGBT_GEN" list 2>"$E2E_TMP/list.err") ||
		fail "$LEG: pgbt-gen list fails: $(cat "$E2E_TMP/list.err")"
	for script in $(awk 'NR > 1 { print $1 }' <<<"$listing"); do
		render_and_queue "$script" ""
		[[ -n $combos ]] || continue
		local set conn="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres" named=
		uses_relations "$script" && named=1
		# -d at the default max_relations too: every name is code in
		# BEGIN, and a program can grow too long to compile (bpftrace
		# 0.27 with a small BPFTRACE_MAX_STRLEN; README, Troubleshooting).
		[[ -n $named ]] && render_and_queue "$script" "(-d, defaults)" -d "$conn"
		while read -r set; do
			# shellcheck disable=SC2086 # a set is several NAME=VALUE words
			[[ -n $set ]] && render_and_queue "$script" "($set)" $set
			[[ -n $named ]] && render_and_queue "$script" "(-d${set:+, $set})" -d "$conn" $set max_relations=20
		done < <(choice_sets "$script")
		while read -r set; do
			# shellcheck disable=SC2086 # several NAME=VALUE words
			render_and_queue "$script" "($set)" $set
		done < <(int_bounds "$script")
	done
	check_queued
	cluster_stop
}

test_lint_finds_violations
# The legs that render every combination: one per build.
combo_legs=" $(e2e_legs each | paste -sd' ') "
for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg "$([[ $combo_legs == *" $leg "* ]] && echo combos)"
done
e2e_done
