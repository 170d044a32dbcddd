# Sourced by every tests/e2e/*.sh (run as root, by tests/run or directly):
#
#   #!/usr/bin/env bash
#   set -euo pipefail
#   source "$(dirname "$0")/../lib/e2e.sh"
#   for v in $PGBT_E2E_VERSIONS; do
#     cluster_start "$v"
#     check_eq "pg$v major" "$(cl_psql -c 'show server_version_num')" ...
#     cluster_stop
#   done
#   e2e_done
#
# It sources tests/lib/cluster.sh (clusters, cl_psql, background processes,
# the EXIT trap that stops them all: see the top of that file) and adds:
#
#   Legs. Every e2e check runs on a "leg": a PostgreSQL server build
#   (cluster.sh's pg_bindir) traced by a bpftrace version:
#   e2e_legs all|each        print the legs to run, "BUILD/BPFTRACE" a line:
#                            all: every build with every bpftrace (for the
#                            exact-figure checks); each: every build once,
#                            the bpftrace versions taken in turn (offset by
#                            the test's name, so files pair them
#                            differently). PGBT_E2E_LEGS, when set, is the
#                            list itself. An empty list fails the test.
#   leg_use LEG              make LEG current: LEG_BUILD, LEG_BT, LEG (a label
#                            such as "ct17/bpftrace-0.23.2" for messages),
#                            and PGBT_BPFTRACE (exported: pgbt-gen renders
#                            for it, bt_start runs it). A leg that cannot run
#                            here (a build not installed...) is skipped:
#                            skip says why, and leg_use returns 1. The
#                            files of the leg before, if it failed a
#                            check, are first copied to
#                            $E2E_TMP/failed-leg.BUILD_BPFTRACE.
#   PGBT_E2E_BUILDS          builds for e2e_legs (default "15 15-debug 17 18
#                            ct17 emb16 emb14 ct13"); PGBT_E2E_BPFTRACES: bpftraces (default
#                            "system trixie sid": /usr/bin's, Debian 13's and
#                            Debian unstable's; see bt_path).
#
#   pass MSG / fail MSG      count a result; fail prints "FAIL: MSG" to stderr.
#   skip MSG                 a check that cannot run here: counted and listed
#                            by tests/run, never as passed.
#   check_eq WHAT GOT WANT   exact string comparison.
#   check_near WHAT GOT WANT TOLERANCE
#                            numbers (integers or decimals), |GOT-WANT| <= TOL.
#   check_between WHAT GOT LO HI SLACK
#                            numbers, LO - SLACK <= GOT <= HI + SLACK: a
#                            figure between two the kernel or the server
#                            gives for windows just inside and just
#                            outside the script's own.
#   check_contains WHAT HAYSTACK NEEDLE
#                            NEEDLE is a fixed string (no pattern).
#   check_empty WHAT VALUE
#   now_ms                   milliseconds of the wall clock, for spans a test
#                            times itself.
#   e2e_done                 print "N passed, N failed, N skipped" (the last
#                            line tests/run reads) and exit 1 if anything
#                            failed.
#   render NAME [-d CONNINFO] SCRIPT [PARAM=VALUE...]
#                            pgbt-gen -p CL_PID [-d ..] SCRIPT PARAMS into
#                            $E2E_TMP/NAME.bt (its stderr in NAME.err), one
#                            check that it rendered (naming the refusal);
#                            returns 1 if it did not.
#   bt_start SCRIPT_FILE OUTFILE
#                            bpftrace SCRIPT_FILE in the background, stdout and
#                            stderr to OUTFILE; returns once it has attached
#                            (in its event loop); sets BT_PID. Returns 1 (after fail)
#                            if it exits or does not attach within 30 s.
#                            Strings of BT_STRLEN bytes (default 200, as the
#                            bench; from 0.27 bpftrace's own 1024, see
#                            bt_launch); BT_FLAGS: more words for bpftrace
#                            (e.g. -f json).
#                            A script that follows one backend runs as its
#                            Run line says, with bpftrace -p PID (bt_run_pid);
#                            BT_NO_P=1 runs it without, to compare.
#   bt_run_pid SCRIPT_FILE   the PID a rendering's Run line (its second line,
#                            "// Run: ... | bpftrace -p PID -") tells bpftrace
#                            -p to attach to; nothing for other scripts.
#   bt_problems FILE...      bpftrace's errors and warnings in output FILEs,
#                            but for three that say nothing about the script:
#                            RLIMIT_MEMLOCK, bpftrace 0.23's "File exists"
#                            when two CPUs count a new key at once (its issue
#                            4068; that one event is lost), and 0.27's "Could
#                            not read functions from .../available_filter_
#                            functions" on a kernel that keeps that file
#                            from root (lockdown; see bt_problems).
#   check_bt_quiet WHAT FILE...
#                            passes when bt_problems FILEs is empty; skips by
#                            name when its only problems are libbcc's stray
#                            closes (bt_stray_closes), fails otherwise.
#   bt_recursion_misses [PID]
#                            how many times the kernel skipped bpftrace PID's
#                            programs (default BT_PID) because another BPF
#                            program ran on that CPU: tracepoint programs do
#                            not nest (the recursion_misses of its program fds).
#   bt_probe_runs [PID]      how many times bpftrace PID's uprobe and USDT
#                            programs ran (default BT_PID), in every process:
#                            what -p spares the others. Needs
#                            kernel.bpf_stats_enabled=1 (else it stays 0).
#   bt_launch SCRIPT_FILE OUTFILE
#   bt_launch_run OUTFILE SCRIPT [NAME=VALUE...]
#                            pgbt-gen -p CL_PID run SCRIPT PARAMS: rendered,
#                            then pgbt-gen becomes PGBT_BPFTRACE on it (with
#                            -p for a script that follows one backend), as a
#                            user runs it; sets BT_PID like bt_launch.
#   bt_attached PID...       bt_start in two halves, so that several
#                            bpftraces compile side by side: bt_launch
#                            starts one (sets BT_PID), bt_attached waits
#                            until each has attached (returns 1, after
#                            fail, if one did not).
#   bt_stop [PID...]         SIGINT (END blocks print) to each, wait for
#                            their exits, then SIGKILL and fail. Default
#                            PID: BT_PID. The wait grows with the probes
#                            attached (see bt_stop); the failure says how
#                            long it waited and what bpftrace was doing.
#   bt_stop_after_reports PATTERN PID...
#                            bt_stop for bpftraces with interval reports,
#                            each 300 ms after its next report (see there).
#   wait_sql SQL [WANT]      waits up to 30 s for SQL (cl_psql, the current
#                            cluster) to print WANT (default 1); returns 1
#                            if it never does.
#   bt_map FILE MAP [KEYS]   the value of @MAP[KEYS] (of @MAP without KEYS)
#                            in bpftrace output FILE, as last printed; KEYS
#                            as bpftrace prints them ("other, 4211, read").
#   bt_compile FILE          what bpftrace ($PGBT_BPFTRACE) says compiling
#                            FILE, bt_problems' harmless lines aside: empty
#                            when it compiles without a word. Up to 0.26
#                            compile-only (nothing is attached); from 0.27
#                            --dry-run: compiled, loaded and attached, then
#                            stopped before the first event, so the
#                            verifier's and the attach's errors show too.
#   bt_minor                 the minor version of $PGBT_BPFTRACE (27 for
#                            v0.27.1), asked once per program.
#   bt_cut TEXT N            TEXT as $PGBT_BPFTRACE prints a string read
#                            with strings of N bytes (BT_STRLEN=N).
#   jobs_run CMD...          CMD in the background, at most two at once
#                            (waits for a slot first): for CPU-bound work
#                            that times nothing, such as compilations.
#   jobs_wait                waits for every job of jobs_run.
#   E2E_TMP                  a scratch dir for this test (mode 755, so postgres
#                            can read files in it), removed at exit unless
#                            PGBT_KEEP_TMP=1 or a check failed (kept then
#                            unless PGBT_KEEP_TMP=0).
#   PGBT_GEN                 absolute path of build/pgbt-gen (env overrides).
#
# Checks always return 0, so one failed check does not end the test; any
# other failing command does (set -e), and then the EXIT trap cleans up,
# counts one more failure naming the command and line, and prints the
# summary, so tests/run still gets an explanation and a closing line.

source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"

pgbt_take_machine_lock

set -Eeuo pipefail    # -E: the ERR trap below also sees failures in functions

: "${PGBT_GEN:=$PGBT_ROOT/build/pgbt-gen}"
: "${PGBT_E2E_BUILDS:=15 15-debug 17 18 ct17 emb16 emb14 ct13}"
: "${PGBT_E2E_BPFTRACES:=system trixie sid}"
: "${PGBT_BPFTRACE:=bpftrace}"
export PGBT_GEN PGBT_E2E_BUILDS PGBT_E2E_BPFTRACES PGBT_BPFTRACE
# Scripts on hardware watchpoints render whether or not this machine's
# watchpoints fire (tests read and compile them); a test that counts with
# one asks watchpoints_fire first and skips, by name, where they do not.
export PGBT_WATCHPOINT_CHECK=off

# True if hardware watchpoints fire on this machine (pgbt-gen's own test,
# made once per test file); else WATCHPOINTS_WHY says why not.
watchpoints_fire() {
	if [[ -z ${_WATCHPOINTS_TESTED:-} ]]; then
		WATCHPOINTS_WHY=$(PGBT_WATCHPOINT_CHECK= "$PGBT_GEN" check-watchpoints 2>&1 >/dev/null) &&
			WATCHPOINTS_WHY=
		WATCHPOINTS_WHY=${WATCHPOINTS_WHY#pgbt-gen: }
		_WATCHPOINTS_TESTED=1
	fi
	[[ -z $WATCHPOINTS_WHY ]]
}

declare -g E2E_PASSED=0 E2E_FAILED=0 E2E_SKIPPED=0 E2E_DONE= E2E_ERR= BT_PID=
declare -g LEG= LEG_BUILD= LEG_BT= E2E_LEGS_USED=
declare -gA _BT_PROBES=()    # bpftrace PID -> N of its "Attaching N probes..."
declare -gA _BT_OUT=() _BT_SCRIPT=()    # bpftrace PID -> its output file, its script
declare -gA _BT_MISSES=()    # bpftrace PID -> its recursion misses when bt_stop signalled it
E2E_TMP=$(mktemp -d /tmp/pgbt-e2e.XXXXXX)
chmod 755 "$E2E_TMP"

render() {
	local name=$1 opts=() script rc=0; shift
	while [[ ${1:-} == -* ]]; do opts+=("$1" "$2"); shift 2; done
	script=$1; shift
	"$PGBT_GEN" -p "$CL_PID" "${opts[@]}" "$script" "$@" >"$E2E_TMP/$name.bt" 2>"$E2E_TMP/$name.err" || rc=$?
	check_eq "$LEG: $script${*:+ $*}${opts[0]:+ ${opts[0]}} renders ($(head -c 300 "$E2E_TMP/$name.err"))" "$rc" 0
	((rc == 0))
}

pass() {
	E2E_PASSED=$((E2E_PASSED + 1))
	printf 'ok: %s\n' "$*"
}

fail() {
	E2E_FAILED=$((E2E_FAILED + 1))
	printf 'FAIL: %s\n' "$*" >&2
}

skip() {
	E2E_SKIPPED=$((E2E_SKIPPED + 1))
	printf 'skip: %s\n' "$*"
}

# The program of a bpftrace name: "system" (the one on PATH), "trixie"
# (Debian 13's, tests/setup/debian-root.sh trixie) or "sid" (Debian
# unstable's, debian-root.sh sid: a moving suite, whose root the set-up
# may have found unavailable, saying why); fails with why not.
bt_path() {
	local p why
	case "$1" in
	system) p=$(command -v bpftrace) || { echo "no bpftrace on PATH (tests/setup/install-deps.sh)"; return 1; } ;;
	trixie|sid) p=$PGBT_CACHE/bin/bpftrace-$1
		if [[ ! -x $p ]]; then
			why=$(cat "$PGBT_CACHE/root-$1.unavailable" 2>/dev/null) || true
			echo "no $p${why:+: $why} (tests/setup/debian-root.sh $1)"
			return 1
		fi ;;
	*) echo "'$1' is not a bpftrace name (want system, trixie, sid)"; return 1 ;;
	esac
	echo "$p"
}

# The minor version of $PGBT_BPFTRACE, asked once per program (sid's and
# trixie's start through their root's loader).
declare -gA _BT_MINOR=()
bt_minor() {
	local p=$PGBT_BPFTRACE
	if [[ -z ${_BT_MINOR[$p]:-} ]]; then
		_BT_MINOR[$p]=$("$p" --version 2>/dev/null | sed -n 's/^bpftrace v0\.\([0-9]*\).*/\1/p')
	fi
	echo "${_BT_MINOR[$p]}"
}

# bpftrace's warnings and errors in FILE...; not RLIMIT_MEMLOCK's (harmless
# on current kernels), nor bpftrace 0.23's "File exists" (a count it lost,
# accounted for by check_count: bt_lost), nor bpftrace 0.27's "Could not
# read functions from .../available_filter_functions": it reads that list
# of the kernel functions kprobes may trace at every start, whatever the
# script, and a kernel in lockdown (this VM's) refuses it even to root,
# mounted or not. pgbt's scripts trace no kernel function.
_BT_HARMLESS='RLIMIT_MEMLOCK\|^WARNING: Could not read functions from [^ ]*/available_filter_functions\. '
bt_problems() {
	grep -hi 'error\|warning' "$@" | grep -v "$_BT_HARMLESS"'\|WARNING: File exists$' || true
}

# bpftrace's "failed to close perf event FDs for probe: P" at exit says
# P's perf event was closed before: libbcc 0.26 (Debian 12) and 0.31
# (Debian 13) close a stray descriptor number while loading a process's
# symbols (ustack, usym), and now and then it is one of bpftrace's (seen
# here: about 1 run in 100 of shm-failures on 0.17 with its symbol
# cache, most runs on one build without it). The probe stopped there.
# Nothing a script can avoid but naming no stacks; bcc fixed one such
# case in 0.33.
bt_stray_closes() {
	grep -h 'failed to close perf event FDs for probe' "$@" || true
}

check_bt_quiet() {
	local what=$1; shift
	local all stray
	all=$(bt_problems "$@")
	stray=$(bt_stray_closes "$@")
	if [[ -n $all && $all == "$stray" ]]; then
		skip "$what: libbcc closed bpftrace's perf event of $(sed 's/.*probe: //' <<<"$stray" | paste -sd, -) (a stray close while naming a stack: bt_stray_closes)"
	else
		check_empty "$what" "$all"
	fi
}

# How many increments of map MAP (e.g. @us_by_db_user) bpftrace lost in
# FILE, its output: bpftrace 0.23 creates a per-CPU map's key with
# BPF_NOEXIST, so when two CPUs create the same key at once the second
# update fails with EEXIST and that CPU's count is dropped, with a warning
# quoting the source line (bpftrace issue 4068, fixed in 0.24).
bt_lost() {
	local file=$1 map=$2
	awk -v m="$map" '
		/WARNING: File exists$/ { w = 1; next }
		w == 1 && /retcode: -17/ { w = 2; next }
		w == 2 { if (match($0, /@[A-Za-z0-9_]*/) && substr($0, RSTART, RLENGTH) == m) n++; w = 0; next }
		{ w = 0 }
		END { print n + 0 }' "$file"
}

# Exact count GOT of map MAP in bpftrace output FILE against WANT: equal,
# or short by exactly the increments bpftrace said it lost (bt_lost), or,
# given the bpftrace's PID (stopped by bt_stop), short by no more than the
# runs of its programs the kernel skipped (a uprobe's program is skipped,
# not queued, while another BPF program is active on that CPU; bpftrace
# does not say so).
check_count() {
	local what=$1 got=$2 want=$3 file=$4 map=$5 pid=${6:-} lost skipped
	lost=$(bt_lost "$file" "$map")
	skipped=0
	[[ -z $pid ]] || skipped=${_BT_MISSES[$pid]:-0}
	if [[ $got == "$want" ]]; then
		pass "$what = $want"
	elif ((lost > 0)) && [[ $got =~ ^[0-9]+$ ]] && ((got + lost == want)); then
		pass "$what = $got + $lost that bpftrace 0.23 lost and warned of (two CPUs created a key of $map at once)"
	elif ((skipped > 0)) && [[ $got =~ ^[0-9]+$ ]] && ((got < want && got + skipped >= want)); then
		pass "$what = $got, short of $want by no more than the $skipped runs of its programs the kernel skipped"
	else
		fail "$what: got '$got', want '$want' (bpftrace warned of $lost lost increments of $map; the kernel skipped its programs $skipped times)"
	fi
	return 0
}

# The environment setting bpftrace's string size to N: BPFTRACE_STRLEN was
# renamed BPFTRACE_MAX_STRLEN in 0.20 (and later ones warn about the old).
bt_strlen_env() {
	local v
	v=$(bt_minor)
	if [[ -n $v ]] && ((v >= 20)); then
		echo "BPFTRACE_MAX_STRLEN=$1"
	else
		echo "BPFTRACE_STRLEN=$1 BPFTRACE_MAX_STRLEN=$1"
	fi
}

# Up to 0.26 a string of N bytes keeps N - 1 of them; 0.27 keeps N and,
# now that it can tell a string was cut, adds its truncation trailer
# (str_trunc_trailer, "..").
bt_cut() {
	local text=$1 n=$2 v
	v=$(bt_minor)
	if ((${v:-0} >= 27)); then
		((${#text} <= n)) || text="${text:0:n}.."
	else
		text=${text:0:n-1}
	fi
	printf '%s\n' "$text"
}

e2e_legs() {
	local mode=${1:?usage: e2e_legs all|each} b t i=0 n
	local -a builds bts
	# Called in $(...): a file tells e2e_done that legs were asked for.
	: >"$E2E_TMP/.legs-asked"
	if [[ -n ${PGBT_E2E_LEGS:-} ]]; then
		printf '%s\n' $PGBT_E2E_LEGS
		return 0
	fi
	read -ra builds <<<"$PGBT_E2E_BUILDS"
	read -ra bts <<<"$PGBT_E2E_BPFTRACES"
	n=${#bts[@]}
	((n)) || return 0
	local offset=$(($(cksum <<<"${0##*/}" | cut -d' ' -f1) % n))
	for b in "${builds[@]}"; do
		if [[ $mode == all ]]; then
			for t in "${bts[@]}"; do echo "$b/$t"; done
		else
			echo "$b/${bts[(i + offset) % n]}"
		fi
		i=$((i + 1))
	done
}

# The legs of MODE: for leg in $(e2e_legs_checked all); do leg_use... A
# test that asked for legs and used none (an empty list: a loop over
# nothing would pass by checking nothing) fails in e2e_done.
e2e_legs_checked() {
	e2e_legs "$@"
}

# The files of a leg that failed a check, copied aside before the next
# leg writes over them (the scratch dir is kept when a check failed, but
# its files would be the last leg's only).
declare -g _E2E_FAILED_AT_LEG=0
_e2e_keep_failed_leg() {
	if [[ -n $LEG ]] && ((E2E_FAILED > _E2E_FAILED_AT_LEG)); then
		local dir=$E2E_TMP/failed-leg.${LEG//\//_}
		mkdir -p "$dir"
		find "$E2E_TMP" -maxdepth 1 -type f ! -name '.*' -exec cp -p {} "$dir/" \;
		echo "e2e: $LEG failed: its files are kept in $dir" >&2
	fi
	_E2E_FAILED_AT_LEG=$E2E_FAILED
}

leg_use() {
	local leg=${1:?usage: leg_use BUILD/BPFTRACE} why path version
	_e2e_keep_failed_leg
	E2E_LEGS_USED=1
	_e2e_leg_begin "$leg"
	LEG_BUILD=${leg%%/*} LEG_BT=${leg#*/}
	[[ $leg == */* ]] || LEG_BT=system
	LEG="$LEG_BUILD/$LEG_BT"
	if why=$(pg_build_missing "$LEG_BUILD"); then
		skip "$LEG: $why"
		return 1
	fi
	if ! path=$(bt_path "$LEG_BT"); then
		skip "$LEG: $path"
		return 1
	fi
	version=$("$path" --version 2>/dev/null | sed -n 's/^bpftrace v//p')
	[[ -n $version ]] || { fail "$LEG: $path --version says no version"; return 1; }
	PGBT_BPFTRACE=$path
	export PGBT_BPFTRACE
	bt_minor >/dev/null    # asked here, so jobs_run's subshells know it
	LEG="$LEG_BUILD/bpftrace-$version"
	return 0
}

check_eq() {
	local what=$1 got=$2 want=$3
	if [[ $got == "$want" ]]; then
		pass "$what = $want"
	else
		fail "$what: got '$got', want '$want'"
	fi
	return 0
}

_e2e_is_number() {
	[[ $1 =~ ^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]]
}

check_near() {
	local what=$1 got=$2 want=$3 tol=$4 arg
	for arg in "$got" "$want" "$tol"; do
		if ! _e2e_is_number "$arg"; then
			fail "$what: '$arg' is not a number (got '$got', want $want +- $tol)"
			return 0
		fi
	done
	if awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'; then
		pass "$what = $got (want $want +- $tol)"
	else
		fail "$what: got $got, want $want +- $tol"
	fi
	return 0
}

check_between() {
	local what=$1 got=$2 lo=$3 hi=$4 slack=$5 arg
	for arg in "$got" "$lo" "$hi" "$slack"; do
		if ! _e2e_is_number "$arg"; then
			fail "$what: '$arg' is not a number (got '$got', want [$lo, $hi] +- $slack)"
			return 0
		fi
	done
	if awk -v g="$got" -v l="$lo" -v h="$hi" -v s="$slack" 'BEGIN { exit !(g >= l - s && g <= h + s) }'; then
		pass "$what = $got (want [$lo, $hi] +- $slack)"
	else
		fail "$what: got $got, want [$lo, $hi] +- $slack"
	fi
	return 0
}

check_contains() {
	local what=$1 hay=$2 needle=$3
	if [[ -z $needle ]]; then
		fail "$what: nothing to look for (an empty needle matches anything)"
	elif [[ $hay == *"$needle"* ]]; then
		pass "$what contains '$needle'"
	else
		fail "$what: no '$needle' in:"
		_e2e_show "$hay"
	fi
	return 0
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

check_empty() {
	local what=$1 value=$2
	if [[ -z $value ]]; then
		pass "$what is empty"
	else
		fail "$what: want empty, got:"
		_e2e_show "$value"
	fi
	return 0
}

# Indented text on stderr, cut to its last 40 lines so a log stays readable.
_e2e_show() {
	local n
	n=$(printf '%s\n' "$1" | wc -l)
	((n > 40)) && echo "    ... ($((n - 40)) lines before)" >&2
	printf '%s\n' "$1" | tail -n 40 | sed 's/^/    | /' >&2
}

_e2e_summary() {
	printf '%d passed, %d failed, %d skipped\n' "$E2E_PASSED" "$E2E_FAILED" "$E2E_SKIPPED"
}

e2e_done() {
	if [[ -e $E2E_TMP/.legs-asked && -z $E2E_LEGS_USED ]]; then
		fail "no legs to run (PGBT_E2E_LEGS / PGBT_E2E_BUILDS / PGBT_E2E_BPFTRACES empty)"
	fi
	E2E_DONE=1
	_e2e_summary
	((E2E_FAILED == 0)) || exit 1
	exit 0
}

bt_start() {
	bt_launch "$@" && bt_attached "$BT_PID"
}

bt_run_pid() {
	sed -n '2s/^\/\/ Run: .* -p \([0-9][0-9]*\) -   (from a file: .*/\1/p' "$1"
}

bt_launch() {
	local script=${1:?usage: bt_launch SCRIPT_FILE OUTFILE} out=${2:?usage: bt_launch SCRIPT_FILE OUTFILE}
	local p=() run_pid
	[[ -r $script ]] || { fail "bt_launch: cannot read script $script"; return 1; }
	run_pid=$(bt_run_pid "$script")
	[[ -n $run_pid && -z ${BT_NO_P:-} ]] && p=(-p "$run_pid")
	: >"$out"
	local strlen=${BT_STRLEN:-200}
	# From 0.27, bpftrace's own size (1024) unless a test asks: there a
	# smaller one makes each relation name of -d cost more code, and some
	# 80 names take a program past the reach of a BPF jump (LLVM's
	# "Branch target out of insn range"), which users of the default
	# never meet (README, Troubleshooting).
	[[ -z ${BT_STRLEN:-} ]] && (($(bt_minor) >= 27)) && strlen=
	# shellcheck disable=SC2046,SC2086  # words for env; BT_FLAGS: for bpftrace (-f json)
	pgbt_bg env ${strlen:+$(bt_strlen_env "$strlen")} "$PGBT_BPFTRACE" ${BT_FLAGS:-} "${p[@]}" "$script" >"$out" 2>&1
	BT_PID=$BG_PID
	_BT_OUT[$BT_PID]=$out _BT_SCRIPT[$BT_PID]=$script
}

bt_launch_run() {
	local out=${1:?usage: bt_launch_run OUTFILE SCRIPT [NAME=VALUE...]} script=${2:?usage: bt_launch_run OUTFILE SCRIPT [NAME=VALUE...]}
	shift 2
	: >"$out"
	local strlen=${BT_STRLEN:-200}
	[[ -z ${BT_STRLEN:-} ]] && (($(bt_minor) >= 27)) && strlen=    # as bt_launch
	# shellcheck disable=SC2046  # words for env
	pgbt_bg env ${strlen:+$(bt_strlen_env "$strlen")} "$PGBT_GEN" -p "$CL_PID" run "$script" "$@" >"$out" 2>&1
	BT_PID=$BG_PID
	_BT_OUT[$BT_PID]=$out _BT_SCRIPT[$BT_PID]="pgbt-gen run $script"
}

bt_attached() {
	local pid rc=0 deadline
	# 30 s for one; compiling several at once shares the CPUs.
	deadline=$((${EPOCHREALTIME/./} + (30 + 10 * ($# - 1)) * 1000000))
	for pid; do
		_bt_wait_attached "$pid" "$deadline" || rc=1
	done
	return $rc
}

_bt_wait_attached() {
	local pid=$1 deadline=$2 out=${_BT_OUT[$1]} script=${_BT_SCRIPT[$1]}
	while :; do
		# "Attaching N probes..." (stdout, before 0.24) comes before
		# the probes are live, BEGIN's output too ("Attached N probes",
		# on stderr from 0.24, after them); bpftrace waits in
		# epoll_wait only in its event loop, which it enters once every
		# probe is attached.
		if grep -q '^Attach\(ing\|ed\) [0-9]* probe\|"attached_probes"' "$out" &&
			[[ $(cat "/proc/$pid/wchan" 2>/dev/null) == do_epoll_wait ]]; then
			_BT_PROBES[$pid]=$(sed -n 's/^Attach\(ing\|ed\) \([0-9]*\) probe.*/\2/p; s/.*"probes": \([0-9]*\).*/\1/p' \
				"$out" | head -n 1)
			return 0
		fi
		if ! pgbt_alive "$pid"; then
			local st=0
			wait "$pid" 2>/dev/null || st=$?
			fail "bt_start: bpftrace $script exited (status $st) before attaching:"
			_e2e_show "$(cat "$out")"
			pgbt_bg_stop "$pid"
			return 1
		fi
		((${EPOCHREALTIME/./} < deadline)) || break
		sleep 0.1
	done
	fail "bt_start: bpftrace $script did not attach in time:"
	_e2e_show "$(cat "$out")"
	pgbt_bg_stop "$pid" KILL
	return 1
}

# bpftrace 0.17 takes a while to exit: it closes its probes one by one, and
# for each uprobe or USDT site (each location counts in "Attaching N
# probes") the kernel waits for RCU grace periods (synchronize_rcu_tasks_
# trace and synchronize_rcu in perf_uprobe_destroy). Measured here (2
# vCPUs): 0.12 s per site idle, 0.15 s with the CPUs busy, about twice that
# while another bpftrace detaches at the same time; a USDT site with a
# semaphore adds ~0.3 ms per process mapping the binary. Hence the wait:
# 10 s plus 0.5 s per probe (lock-events, 21 probes: 2.5 s measured,
# 20 s allowed; waits mode=usdt, 191: 23 s measured, 105 s allowed).
#
# bpftrace 0.17 also misses a SIGINT now and then (the cause of the
# "still running 15 s after SIGINT" flakes): its event loop acts on the
# flag the handler sets only when epoll_wait fails with EINTR or an event
# arrives, so a signal that is handled outside epoll_wait's sleep (between
# two of its 100 ms waits) is not seen by a script with no more events,
# and bpftrace idles on with every probe attached (fixed upstream after
# 0.17: the loop also tests the flag). Measured: SIGINT at a random time to
# an idle bpftrace, 0 of 20 missed on an idle machine, 1 of 20 with 4 busy
# loops; 1 of the ~68 bt_stops of 3 locks.sh runs. Normally the first
# probe is closed ~0.15 s after SIGINT; if bpftrace is still idle in
# epoll_wait with all its perf events open 3 s after a SIGINT, the signal
# is sent again (safe: END has not run and the handler is still
# installed), and bt_stop says so on stderr.
_BT_STOP_BASE_S=10
_BT_STOP_PER_PROBE_S=0.5

# Probe perf events bpftrace PID still holds (every probe is one, or one per
# CPU; the perf buffers are one per CPU too, so this only goes down while
# it detaches).
_bt_perf_fds() {
	local n
	n=$(ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'perf_event') || true
	echo "${n:-0}"
}

bt_recursion_misses() {
	local pid=${1:-$BT_PID}
	# (0 for a bpftrace that has exited: awk finds no fdinfo to read)
	awk '$1 == "recursion_misses:" { n += $2 } END { print n + 0 }' "/proc/$pid"/fdinfo/* 2>/dev/null || echo 0
}

bt_probe_runs() {
	local pid=${1:-$BT_PID}
	# prog_type 2 (BPF_PROG_TYPE_KPROBE): uprobes, uretprobes, USDT
	awk '$1 == "prog_type:" { t = $2 } $1 == "run_cnt:" && t == 2 { n += $2 } END { print n + 0 }' \
		"/proc/$pid"/fdinfo/* 2>/dev/null
}

bt_stop() {
	local pids=("$@") pid
	((${#pids[@]})) || pids=("$BT_PID")
	[[ -n ${pids[0]} ]] || { fail "bt_stop: no bpftrace running (bt_start first)"; return 0; }
	# All are signalled first, so they detach side by side.
	for pid in "${pids[@]}"; do _bt_signal "$pid"; done
	_bt_stop_wait_all "${pids[@]}"
}

# bt_stop_after_reports PATTERN PID...: bpftraces that report at an
# interval, each signalled 300 ms after its next report began (a new line
# matching PATTERN in its output; 5 s at most), then waited for as
# bt_stop does. bpftrace drops what is still queued when its SIGINT
# comes: a stop between a report's print() and its clear() has the end
# report count that report's figures again (CI saw a wal interval
# counted twice, waits' four sums doubled).
bt_stop_after_reports() {
	local pattern=$1 pid n; shift
	local -A n0=() t_new=()
	local pending=("$@") left t0
	t0=$(now_ms)
	for pid in "$@"; do n0[$pid]=$(grep -c -- "$pattern" "${_BT_OUT[$pid]}" || true); done
	while ((${#pending[@]})); do
		left=()
		for pid in "${pending[@]}"; do
			if [[ -z ${t_new[$pid]:-} ]]; then
				n=$(grep -c -- "$pattern" "${_BT_OUT[$pid]}" || true)
				((n > n0[$pid])) && t_new[$pid]=$(now_ms)
			fi
			if (($(now_ms) - t0 >= 5000)) ||
				{ [[ -n ${t_new[$pid]:-} ]] && (($(now_ms) - t_new[$pid] >= 300)); }; then
				_bt_signal "$pid"
			else
				left+=("$pid")
			fi
		done
		pending=("${left[@]}")
		sleep 0.05
	done
	_bt_stop_wait_all "$@"
}

# SIGINT to bpftrace PID, with what _bt_stop_wait needs to know.
declare -gA _BT_T0=() _BT_FDS0=()
_bt_signal() {
	local pid=$1
	_BT_MISSES[$pid]=$(bt_recursion_misses "$pid")
	_BT_FDS0[$pid]=$(_bt_perf_fds "$pid")
	_BT_T0[$pid]=$(date +%s%N)
	kill -INT "$pid" 2>/dev/null || true
}

# Each signalled bpftrace waited for as long as the probes of all of them
# take to detach.
_bt_stop_wait_all() {
	local pid probes=0
	for pid in "$@"; do probes=$((probes + ${_BT_PROBES[$pid]:-0})); done
	for pid in "$@"; do
		_bt_stop_wait "$pid" "${_BT_T0[$pid]}" "${_BT_FDS0[$pid]}" "$probes"
		unset "_BT_T0[$pid]" "_BT_FDS0[$pid]"
	done
	return 0
}

# Waits for bpftrace PID, sent SIGINT at T0 (ns) with FDS0 perf events
# open, to exit: as long as PROBES probes take to detach (see above).
_bt_stop_wait() {
	local pid=$1 t0=$2 fds0=$3 probes=$4 limit_ds ds fds wchan sent=1 last=0
	limit_ds=$(awk -v b="$_BT_STOP_BASE_S" -v p="$_BT_STOP_PER_PROBE_S" -v n="$probes" \
		'BEGIN { printf "%d", (b + p * n) * 10 }')
	while pgbt_alive "$pid"; do
		ds=$((($(date +%s%N) - t0) / 100000000))
		((ds >= limit_ds)) && break
		if ((ds - last >= 30)); then
			wchan=$(cat "/proc/$pid/wchan" 2>/dev/null) || true
			fds=$(_bt_perf_fds "$pid")
			if [[ $wchan == do_epoll_wait ]] && ((fds == fds0)); then
				echo "bt_stop: bpftrace (pid $pid) missed the SIGINT (idle in its event loop, all $fds perf events open $(((ds - last) / 10)) s later): sent it again" >&2
				kill -INT "$pid" 2>/dev/null || true
				sent=$((sent + 1))
			fi
			last=$ds
		fi
		sleep 0.1
	done
	if pgbt_alive "$pid"; then
		wchan=$(cat "/proc/$pid/wchan" 2>/dev/null) || true
		fds=$(_bt_perf_fds "$pid")
		fail "bt_stop: bpftrace (pid $pid, ${_BT_PROBES[$pid]:-0} probes) still running $((limit_ds / 10)) s after SIGINT (sent $sent times), in ${wchan:-?} with $fds of its $fds0 perf events still open; killed"
		_e2e_show "$(cat "/proc/$pid/stack" 2>/dev/null)"
		pgbt_bg_stop "$pid" KILL
	else
		pgbt_bg_stop "$pid"    # reaps it and forgets it
	fi
	unset "_BT_PROBES[$pid]" "_BT_OUT[$pid]" "_BT_SCRIPT[$pid]"
	[[ $pid == "$BT_PID" ]] && BT_PID=
	return 0
}

# Compile-only flags by version: --test codegen up to 0.23, --test-mode
# codegen in 0.24, --mode codegen from 0.25. From 0.27 --dry-run instead,
# which also loads and attaches (and prints nothing when clean): a
# program the verifier rejects, or a uprobe bpftrace refuses to place, is
# found as a run would find it (compile-only mode says nothing of either),
# at ~1.5x the time.
bt_compile() {
	local v mode
	v=$(bt_minor)
	v=${v:-0}
	if ((v <= 23)); then mode=(--test codegen)
	elif ((v == 24)); then mode=(--test-mode codegen)
	elif ((v <= 26)); then mode=(--mode codegen)
	# 0.27: loaded and attached, so the verifier's and the attach's errors
	# show as in a run; but not a watchpoint, whose debug registers a test
	# beside this one may need (tests/run: exclusive watchpoints).
	elif grep -q '^watchpoint:' "$1"; then mode=(--mode codegen)
	else mode=(--dry-run)
	fi
	local out rc=0
	out=$(timeout 60 "$PGBT_BPFTRACE" "${mode[@]}" "$1" 2>&1) || rc=$?
	[[ -z $out ]] || grep -v "$_BT_HARMLESS" <<<"$out" || true
	((rc == 0)) || echo "bt_compile: $PGBT_BPFTRACE ${mode[*]} exited with status $rc"
}

# Job slots: two, for this VM's two CPUs.
declare -ga E2E_JOBS=()
jobs_run() {
	if ((${#E2E_JOBS[@]} >= 2)); then
		wait -n "${E2E_JOBS[@]}" 2>/dev/null || true
		local pid alive=()
		for pid in "${E2E_JOBS[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive+=("$pid")
		done
		E2E_JOBS=("${alive[@]}")
	fi
	"$@" </dev/null &
	E2E_JOBS+=("$!")
}

jobs_wait() {
	((${#E2E_JOBS[@]} == 0)) || wait "${E2E_JOBS[@]}" 2>/dev/null || true
	E2E_JOBS=()
}

# The first failing command of the test itself (not of a $(...) subshell,
# whose failure reaches here through the command that used it).
_e2e_on_err() {
	local status=$1 cmd=$2 where=$3 i
	[[ $BASHPID == "$$" && -z $E2E_ERR ]] || return 0
	# Inside a helper, also say which line of the test called it.
	for ((i = 1; i < ${#FUNCNAME[@]} - 1; i++)); do
		where+=" in ${FUNCNAME[i]} (called at ${BASH_SOURCE[i + 1]##*/}:${BASH_LINENO[i]})"
	done
	E2E_ERR="$where: '$cmd' exited with status $status"
}
trap '_e2e_on_err $? "$BASH_COMMAND" "${BASH_SOURCE[0]##*/}:$LINENO"' ERR

# Called by cluster.sh's EXIT trap after clusters and processes are gone.
_e2e_exit_hook() {
	local status=$1
	# A failure's bpftrace output is what explains it: kept unless told not
	# to (PGBT_KEEP_TMP=0), and always with PGBT_KEEP_TMP=1.
	if [[ ${PGBT_KEEP_TMP:-} == 1 || ( ${PGBT_KEEP_TMP:-} != 0 && $E2E_FAILED -gt 0 ) ]]; then
		echo "e2e: kept $E2E_TMP" >&2
	else
		rm -rf "$E2E_TMP"
	fi
	[[ -n $E2E_DONE ]] && return 0
	if [[ -n $E2E_ERR ]]; then
		fail "test aborted at $E2E_ERR"
	else
		fail "test ended (status $status) without e2e_done"
	fi
	_e2e_summary
	PGBT_EXIT_STATUS=1
}
pgbt_on_exit _e2e_exit_hook

wait_sql() {
	local sql=$1 want=${2:-1} i
	for ((i = 0; i < 300; i++)); do
		[[ $(cl_psql -c "$sql") == "$want" ]] && return 0
		sleep 0.1
	done
	return 1
}

bt_map() {
	awk -v k="@$2${3:+[$3]}:" 'index($0, k) == 1 { v = $NF } END { print v }' "$1"
}

source "$(dirname "${BASH_SOURCE[0]}")/e2e-times.sh"
