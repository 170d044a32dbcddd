#!/usr/bin/env bash
# Every script in `pgbt-gen list`, rendered for each leg (every server
# build, rendered for and compiled by each bpftrace) with its default
# parameters, and on one leg per build (the bpftraces taken in turn, so
# each meets every combination on some builds) with every combination of
# its choice parameters (and, for scripts that name relations, with -d
# CONNINFO too, at 20 names and at the default number) and with its
# integer parameters at their bounds, keeps to
# the bpftrace subset that runs on 0.17 through current releases
# (tests/lint/bt-subset.sh) and compiles (bt_compile: compile-only; from
# bpftrace 0.27 loaded and attached with --dry-run, but for a watchpoint)
# without a word on stderr, warnings included. The compilations
# run two at a time (they are CPU-bound and time nothing); a program that
# differs from one already compiled by the same bpftrace only in PIDs,
# addresses and (without USDT) the binary's path takes that one's result
# (same_key), about half of them; one compiled clean in an earlier run
# is not compiled again (LINT_CACHE). A rendering on
# a hardware watchpoint (via=watchpoint) is rendered and compiled whether
# or not this machine's watchpoints fire (tests/lib/e2e.sh exports
# PGBT_WATCHPOINT_CHECK=off).
# The lint itself is checked on a file of known violations, so it cannot
# pass by finding nothing.
#
# Two files run it, side by side: this one the default renderings on
# every leg, tests/e2e/lint-combos.sh (LINT_PART=combos) the other
# combinations on one leg per build (together, 1500 s were too few).
# tests/run timeout: 1500
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
LINT_PART=${LINT_PART:-defaults}

LINT=$PGBT_ROOT/tests/lint/bt-subset.sh
# Combinations a script refuses on purpose, by the reason it gives.
REFUSALS=(
	"mode=usdt needs a build with the USDT probes postgresql:wait__event__start/end"
	"via=usdt needs a build with the USDT probes postgresql:wait__event__start/end"
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
	printf '// bpftrace:   v0.25.0 (as asked)\nBEGIN { while (1) { } }\n' >"$E2E_TMP/while-0.25.bt"
	check_empty "the lint accepts for (\$kv : @map) rendered for 0.23" "$("$LINT" "$E2E_TMP/for-0.23.bt" 2>&1)"
	check_contains "the lint refuses for (\$kv : @map) rendered for 0.20" \
		"$("$LINT" "$E2E_TMP/for-0.20.bt" 2>&1 || true)" "for-0.20.bt:2: loop"
	check_contains "the lint refuses while rendered for 0.25" \
		"$("$LINT" "$E2E_TMP/while-0.25.bt" 2>&1 || true)" "while-0.25.bt:2: while"
	local v
	for v in 0.17.0 0.23.2; do
		printf '// bpftrace:   v%s (as asked)\nBEGIN { while (1) { } }\n' "$v" >"$E2E_TMP/while-$v.bt"
		check_empty "the lint accepts while rendered for $v" "$("$LINT" "$E2E_TMP/while-$v.bt" 2>&1)"
	done
	# A loop over a range: from 0.24.
	local range='BEGIN { $n = 3; for ($i : 0..$n) { print($i); } }'
	printf '// bpftrace:   v0.24.1 (as asked)\n%s\n' "$range" >"$E2E_TMP/range-0.24.bt"
	printf '// bpftrace:   v0.23.2 (as asked)\n%s\n' "$range" >"$E2E_TMP/range-0.23.bt"
	check_empty "the lint accepts for (\$i : A..B) rendered for 0.24" "$("$LINT" "$E2E_TMP/range-0.24.bt" 2>&1)"
	check_contains "the lint refuses for (\$i : A..B) rendered for 0.23" \
		"$("$LINT" "$E2E_TMP/range-0.23.bt" 2>&1 || true)" "range-0.23.bt:2: range loop"
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
# "FILE<TAB>LABEL<TAB>COMPILED" for each, in order; FILE.lint gets what
# the subset lint said, COMPILED.cc what bpftrace said compiling FILE or
# the same program (SAME).
JOBS=()

# The same program, for the compiler: renderings for two servers differ in
# numbers bpftrace only carries (the postmaster's and a backend's PID,
# addresses, and the offsets, sizes and enumerators of the server's
# build: every number is one), the cluster's directory and port (a
# report's header names them, the directory as the server sees it: a
# container's is not CL_DIR; the same length each time) and, for
# uprobes, in the binary's path. One
# of each such set is compiled, per bpftrace; the others take its result.
# A program with USDT probes keeps its path: bpftrace reads their
# arguments from the binary. An integer parameter at its bound
# (KEEP_NUMBERS set) keeps its numbers: its value can change the code
# LLVM makes.
declare -A SAME=() SAME_AS=() KEY_OF=()
KEEP_NUMBERS=
same_key() {
	local out=$1 backend=$2 bin=$CL_BIN numbers='s/\b[0-9][0-9]*\b/N/g'
	grep -q '^usdt:' "$out" && bin=KEEP
	[[ -z $KEEP_NUMBERS ]] || numbers='s/^$//'
	{
		echo "$PGBT_BPFTRACE"
		sed -e '/^[[:space:]]*\/\//d' -e '/^\/\*/,/^ \*\//d' "$out" |
			sed -e "s|$bin/|BIN/|g" -e "s|$CL_DIR/|CLUSTER/|g" -e 's|/pgbt-cl\.[A-Za-z0-9]\{6\}/|/CLUSTER/|g' \
				-e "s/, port $CL_PORT, /, port PORT, /" -e "s/\b$CL_PID\b/PM/g" ${backend:+-e "s/\b$backend\b/BE/g"} \
				-e 's/0x[0-9a-f]\{9,\}/ADDR/g' -e "$numbers"
	} | sha1sum | cut -c1-16
}

# Programs bpftrace compiled clean in an earlier run are not compiled
# again (a compile is ~1 s of CPU, and most renderings do not change
# between runs): a file in $LINT_CACHE named by the program's same_key,
# the bpftrace (its --version and the versions of its root's bpftrace,
# LLVM, libbpf, libelf and libc packages), the kernel, and the code of
# bt_compile and same_key. Only clean results are kept: a program that
# failed is compiled every time. PGBT_LINT_CACHE=off compiles all.
LINT_CACHE=$PGBT_CACHE/lint-clean
declare -A TOOLCHAIN=() FROM_CACHE=()
toolchain_id() {
	local p=$PGBT_BPFTRACE admin=/var/lib/dpkg
	[[ -z ${TOOLCHAIN[$p]:-} ]] || return 0
	[[ $p == "$PGBT_CACHE"/bin/bpftrace-* ]] && admin=$PGBT_CACHE/root-${p##*-}/var/lib/dpkg
	TOOLCHAIN[$p]=$({
		"$p" --version 2>&1
		uname -r
		# the packages bpftrace compiles and loads with
		dpkg-query --admindir="$admin" -W -f '${Package} ${Version}\n' |
			grep -E '^(bpftrace|libllvm[0-9]+|libclang-cpp[0-9]+|libclang1-[0-9]+|libbpf1|libbpfcc|libelf1(t64)?|libdw1(t64)?|libc6) '
		declare -f bt_compile same_key
	} | sha1sum | cut -c1-16)
}
# (toolchain_id first: a $(...) would forget what it learned)
cache_file() { echo "$LINT_CACHE/$1-${TOOLCHAIN[$PGBT_BPFTRACE]}"; }

lint_and_compile() {
	local out=$1 backend=$2 compile=$3
	"$LINT" "$out" "$CL_PID" $backend >"$out.lint" 2>&1 || true
	[[ -z $compile ]] || bt_compile "$out" >"$out.cc"
}

queue() {
	local out=$1 label=$2 backend=${3:-} key compiled compile=1
	key=$(same_key "$out" "$backend")
	toolchain_id
	compiled=${SAME[$key]:-}
	if [[ -z $compiled ]]; then
		SAME[$key]=$out SAME_AS[$out]="$LEG: $label" compiled=$out
		if [[ ${PGBT_LINT_CACHE:-on} != off && -e $(cache_file "$key") ]]; then
			compile= FROM_CACHE[$out]=1
			: >"$out.cc"
		fi
	else
		compile=
	fi
	KEY_OF[$out]=$key
	JOBS+=("$out"$'\t'"$label"$'\t'"$compiled")
	jobs_run lint_and_compile "$out" "$backend" "$compile"
}

# Waits for the queued compilations and checks what each said.
check_queued() {
	local job out label compiled same
	jobs_wait
	for job in "${JOBS[@]}"; do
		IFS=$'\t' read -r out label compiled <<<"$job"
		same=
		[[ $compiled == "$out" ]] || same=" (compiled as the same program: ${SAME_AS[$compiled]})"
		[[ -z ${FROM_CACHE[$compiled]:-} ]] || same+=" (clean in an earlier run: same program, bpftrace, kernel)"
		check_empty "$LEG: $label keeps to the portable subset" "$(cat "$out.lint")"
		check_empty "$LEG: $label compiles without a word on stderr$same" "$(cat "$compiled.cc")"
		if [[ $compiled == "$out" && -z ${FROM_CACHE[$out]:-} && ! -s $out.cc ]]; then
			mkdir -p "$LINT_CACHE"
			: >"$(cache_file "${KEY_OF[$out]}")"
		fi
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
		[[ $LINT_PART == combos ]] || render_and_queue "$script" ""
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
		KEEP_NUMBERS=1
		while read -r set; do
			# shellcheck disable=SC2086 # several NAME=VALUE words
			render_and_queue "$script" "($set)" $set
		done < <(int_bounds "$script")
		KEEP_NUMBERS=
	done
	check_queued
	cluster_stop
}

if [[ $LINT_PART == combos ]]; then
	# The legs that render every combination: one per build.
	for leg in $(e2e_legs_checked each); do
		leg_use "$leg" && test_leg combos
	done
else
	test_lint_finds_violations
	for leg in $(e2e_legs_checked all); do
		leg_use "$leg" && test_leg ""
	done
fi
e2e_done
