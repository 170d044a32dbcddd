# Sourced by tests/lib/e2e.sh, last: where an e2e file's time goes.
#
# The harness's own steps are timed by phase (cluster: cluster_start and
# cluster_stop; render; attach: bt_start, bpftrace compiling its program
# and attaching; detach: bt_stop; compile: bt_compile and jobs_wait, the
# compile-only checks) and by leg (from one leg_use to the next); the
# rest of a leg (workloads, sleeps, checks) is "other". With
# PGBT_TIMES=FILE (tests/run sets it), a file appends one line per leg
# and phase to FILE at exit: "TEST<TAB>LEG<TAB>PHASE<TAB>SECONDS", LEG
# "-" for what it does outside a leg, PHASE "total" for the whole leg.
# tests/run adds them up after the last test.

declare -gA _E2E_US=()         # "LEG PHASE" -> microseconds
declare -g _E2E_LEG_KEY=- _E2E_LEG_T0=${EPOCHREALTIME/./}

# Adds the time since START (microseconds, ${EPOCHREALTIME/./}) to PHASE
# of the current leg.
_e2e_spent() {
	local key="$_E2E_LEG_KEY $1" now=${EPOCHREALTIME/./}
	_E2E_US[$key]=$((${_E2E_US[$key]:-0} + now - $2))
}

# Wraps function FUNC so that its run time counts to PHASE. The wrapper
# keeps set -e as it was: a failing FUNC still ends the test where it
# would have (its time is then not counted).
_e2e_time_phase() {
	local phase=$1 f=$2
	eval "_untimed_$f() $(declare -f "$f" | tail -n +2)"
	eval "$f() { local _t=\${EPOCHREALTIME/./} _rc; _untimed_$f \"\$@\"; _rc=\$?; _e2e_spent $phase \$_t; return \$_rc; }"
}

# Closes the current leg's total and opens LEG's (leg_use calls it).
_e2e_leg_begin() {
	local now=${EPOCHREALTIME/./} key="$_E2E_LEG_KEY total"
	_E2E_US[$key]=$((${_E2E_US[$key]:-0} + now - _E2E_LEG_T0))
	_E2E_LEG_KEY=$1 _E2E_LEG_T0=$now
}

_e2e_times_write() {
	[[ -n ${PGBT_TIMES:-} ]] || return 0
	_e2e_leg_begin -
	local key test=${0##*/}
	for key in "${!_E2E_US[@]}"; do
		printf '%s\t%s\t%s\t%d.%06d\n' "$test" "${key% *}" "${key##* }" \
			$((_E2E_US[$key] / 1000000)) $((_E2E_US[$key] % 1000000))
	done >>"$PGBT_TIMES"
}

_e2e_time_phase cluster cluster_start
_e2e_time_phase cluster cluster_stop
_e2e_time_phase render render
_e2e_time_phase attach bt_launch
_e2e_time_phase attach bt_attached
_e2e_time_phase detach bt_stop
_e2e_time_phase compile bt_compile
_e2e_time_phase compile jobs_wait
pgbt_on_exit _e2e_times_write
