# Tracers: what a traced run attaches (sourced by bench/run).
#
# A CONFIG names one tracer:
#   none          nothing (bench/pgbench.sh pauses 1 s instead): the traced
#                 window is a baseline too, so the table shows how far two
#                 baselines differ on this machine
#   script:NAME   a pgbt script: `pgbt-gen -p POSTMASTER NAME $BENCH_ARGS_NAME`
#                 (NAME with - as _; e.g. BENCH_ARGS_xid_rate="interval=5")
#                 run by bpftrace
#   script:NAME/P=V/...  the same with parameters P=V; the value BACKEND
#                 stands for the PID of one of pgbench's backends, e.g.
#                 script:lwlocks/pid=BACKEND
#   peer:NAME     another way to get the same kind of answer (bench/peers.sh)
#   count:CONFIG  only counts the events of every attach point of bpftrace
#                 tracer CONFIG's program (rendered, not started), by
#                 point, printing the counts every second (bench/predict.sh).
#                 Each hit traps, whatever the program's predicates then
#                 decide, so none is kept.
#
#   tracer_start CONFIG DIR   start it for the current cluster; returns once
#                             it is attached. On failure returns 1 with the
#                             reason in TRACER_ERROR (one line).
#   tracer_stop DIR           stop it (SIGINT: bpftrace prints its END
#                             maps); 1 with TRACER_ERROR if it had died.
# Output goes to DIR/trace.out, the rendered program to DIR/trace.bt.

TRACER_ERROR= TR_PID= TR_SIG=INT
# Set: bt_launch leaves the program in DIR/trace.bt and starts nothing.
BT_RENDER_ONLY=

# Every script pgbt-gen knows, in its listing order: new scripts are
# measured without any change here.
bench_scripts() {
	"$PGBT_GEN" list | awk 'NR > 1 { print $1 }'
}

tracer_start() {
	local config=$1 dir=$2
	TRACER_ERROR= TR_PID= TR_SIG=INT
	case $config in
	script:*) script_start "${config#script:}" "$dir" ;;
	peer:*) "peer_start_${config#peer:}" "$dir" ;;
	count:*)
		BT_RENDER_ONLY=1 tracer_start "${config#count:}" "$dir" || return 1
		count_program "$(attach_points "$dir/trace.bt" | paste -sd,)" >"$dir/trace.bt"
		bt_launch "$dir/trace.bt" "$dir/trace.out" ;;
	*) TRACER_ERROR="unknown config $config"; return 1 ;;
	esac
}

# A program counting the events of SPEC (attach points, comma-separated)
# by attach point; every second a "--" line, then the counts (not at the
# end: the last second is partial).
count_program() {
	printf '%s { @n[probe] = count(); }\n' "$1"
	printf 'interval:s:1 { printf("--\\n"); print(@n); clear(@n); }\nEND { clear(@n); }\n'
}

# The attach points of bpftrace program FILE that fire in the traced
# processes, one per line (not BEGIN, END or interval): the words that
# open a line, up to its predicate or action, commas dropped.
attach_points() {
	awk '{ for (i = 1; i <= NF && $i ~ /^(uprobe|uretprobe|usdt|watchpoint|tracepoint):/; i++) {
		p = $i; sub(/,$/, "", p); print p } }' "$1" | sort -u
}

script_start() {
	local name=${1%%/*} dir=$2 var args=() p backend
	var=BENCH_ARGS_${name//-/_}
	read -r -a args <<<"${!var:-}"
	if [[ $1 == */* ]]; then
		IFS=/ read -r -a p <<<"${1#*/}"
		args+=("${p[@]}")
	fi
	if [[ " ${args[*]} " == *=BACKEND" "* ]]; then
		backend=$(cl_psql -c "select pid from pg_stat_activity where application_name = 'pgbench'
			and backend_type = 'client backend' order by pid limit 1")
		[[ -n $backend ]] || { TRACER_ERROR="no pgbench backend for BACKEND"; return 1; }
		args=("${args[@]/%=BACKEND/=$backend}")
	fi
	if ! "$PGBT_GEN" -p "$CL_PID" "$name" "${args[@]}" >"$dir/trace.bt" 2>"$dir/render.err"; then
		TRACER_ERROR="render failed: $(head -n1 "$dir/render.err")"
		return 1
	fi
	bt_launch "$dir/trace.bt" "$dir/trace.out"
}

# bpftrace PROGRAM_FILE > OUT in the background; returns once attached.
# bpftrace runs as the README tells users to run it: default settings
# (string size 64), and -p PID where the program's Run line says so (a
# script that follows one backend). BT_ENV (NAME=VALUE ...) adds settings
# a peer needs.
bt_launch() {
	local prog=$1 out=$2 i p=() run_pid
	[[ -n $BT_RENDER_ONLY ]] && return 0
	run_pid=$(sed -n '2s/^\/\/ Run: .* -p \([0-9][0-9]*\) -   (from a file: .*/\1/p' "$prog")
	[[ -n $run_pid ]] && p=(-p "$run_pid")
	: >"$out"
	pgbt_bg env ${BT_ENV:-} bpftrace "${p[@]}" "$prog" >"$out" 2>&1
	TR_PID=$BG_PID TR_SIG=INT
	for ((i = 0; i < 300; i++)); do
		if grep -q '^Attaching' "$out"; then
			# "Attaching" comes before the probes are live: ready once
			# bpftrace has stopped using CPU (compiled and attached).
			_bt_wait_idle "$TR_PID"
			pgbt_alive "$TR_PID" && return 0
			break
		fi
		pgbt_alive "$TR_PID" || break
		sleep 0.1
	done
	if pgbt_alive "$TR_PID"; then
		TRACER_ERROR="bpftrace did not attach within 30 s"
	else
		TRACER_ERROR="bpftrace failed: $(grep -v -e RLIMIT_MEMLOCK -e '^Attaching' -e '^$' "$out" | head -n1)"
	fi
	pgbt_bg_stop "$TR_PID" KILL
	TR_PID=
	return 1
}

# Waits until PID has used at most 50 ms of CPU in each of two 0.2 s
# intervals (compiling and attaching keep bpftrace at 100%; a script that
# prints every event keeps it somewhat busy for good), at most 5 s.
_bt_wait_idle() {
	local pid=$1 i last= now quiet=0
	for ((i = 0; i < 25; i++)); do
		now=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || return 0
		if [[ -n $last ]] && ((now - last <= 5)); then
			quiet=$((quiet + 1))
			((quiet >= 2)) && return 0
		else
			quiet=0
		fi
		last=$now
		sleep 0.2
	done
}

tracer_stop() {
	local dir=$1 i
	[[ -n $TR_PID ]] || return 0
	if ! pgbt_alive "$TR_PID"; then
		TRACER_ERROR="tracer exited during the run: $(grep -v -e RLIMIT_MEMLOCK -e '^$' "$dir/trace.out" | tail -n1)"
		pgbt_bg_stop "$TR_PID"
		TR_PID=
		return 1
	fi
	kill -"$TR_SIG" "$TR_PID" 2>/dev/null || true
	for ((i = 0; i < 150; i++)); do
		pgbt_alive "$TR_PID" || break
		sleep 0.1
	done
	pgbt_bg_stop "$TR_PID" KILL
	TR_PID=
	return 0
}
