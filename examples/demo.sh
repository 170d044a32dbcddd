#!/usr/bin/env bash
# pgbt in one command (make demo [SCRIPT=name], as root).
#
#   examples/demo.sh [SCRIPT] [NAME=VALUE...]
#       Starts a throwaway cluster of Debian's PostgreSQL 15 (stripped, as
#       users run it), runs a small known workload against it for ~20 s,
#       renders SCRIPT (default xid-rate) with pgbt-gen for that server,
#       shows where the rendered values came from, runs it under bpftrace
#       for 12 s, then stops everything.
#   examples/demo.sh -p PID | -D DATADIR [SCRIPT] [NAME=VALUE...]
#       Renders SCRIPT for that running server instead and runs it until
#       Ctrl-C. Nothing is started or stopped.
#
# NAME=VALUE are passed to pgbt-gen (default: interval=2 for scripts that
# take an interval). Env: SCRIPT (when no SCRIPT argument), PGBT_GEN (the
# generator, default build/pgbt-gen), PGBT_DEMO_PG (PostgreSQL of the
# throwaway cluster, default 15; see pg_bindir in tests/lib/cluster.sh),
# PGBT_DEMO_TPS (pgbench's rate, default 50 transactions/s).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# Cluster functions and an EXIT trap that stops the cluster and workload.
source "$here/../tests/lib/cluster.sh"

PGBT_GEN=${PGBT_GEN:-$PGBT_ROOT/build/pgbt-gen}
WORKLOAD_SECS=20   # outlasts pgbt-gen + bpftrace's attach + BPF_SECS
BPF_SECS=12
TPS=${PGBT_DEMO_TPS:-50}

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

target=() script= params=()
while (($#)); do
	case "$1" in
	-p | --pid) target=(-p "${2:?demo: -p needs a PID}"); shift 2 ;;
	-D | --datadir) target=(-D "${2:?demo: -D needs a data directory}"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see examples/demo.sh --help)" ;;
	*=*) params+=("$1"); shift ;;
	*) [[ -z $script ]] || die "two scripts named: '$script' and '$1'"; script=$1; shift ;;
	esac
done
script=${script:-${SCRIPT:-xid-rate}}

# Checked up front: failing after a cluster is up would waste the user's time.
preflight() {
	((EUID == 0)) || die "bpftrace and the throwaway cluster need root: run 'make demo' as root (su - or sudo -i)"
	[[ -x $PGBT_GEN ]] || die "no generator at $PGBT_GEN: build it with 'make'"
	command -v bpftrace >/dev/null || die "bpftrace is not installed (tests/setup/install-deps.sh installs it)"
	# interval=2 makes the reports come often enough to watch, but only
	# scripts that declare the parameter accept it.
	if ((${#params[@]} == 0)) && grep -q '^//@ param interval ' "$PGBT_ROOT/scripts/$script.bt" 2>/dev/null; then
		params=(interval=2)
	fi
	return 0
}

# Renders the script into FILE; on failure shows pgbt-gen's message.
render() {
	local file=$1
	say "Rendering: $(echo pgbt-gen "${target[@]}" "$script" "${params[@]}")"
	if ! "$PGBT_GEN" "${target[@]}" "$script" "${params[@]}" >"$file" 2>"$file.err"; then
		cat "$file.err" >&2
		die "pgbt-gen could not render '$script' for ${target[*]} (message above; 'pgbt-gen list' shows the scripts)"
	fi
	echo "    $(wc -l <"$file") lines. Its provenance header says where every value came from:"
	# The comment block pgbt-gen writes after the template's description.
	local header
	header=$(awk '/^\/\/ Rendered by/ { p = 1 } p && !/^\/\// { exit } p' "$file")
	[[ -n $header ]] || header=$(head -n 25 "$file")
	sed 's/^/    /' <<<"$header"
}

# Runs bpftrace on FILE (for SECS seconds, or until Ctrl-C when SECS is 0).
run_bpftrace() {
	local file=$1 secs=$2 interrupted= status=0
	local cmd=(env BPFTRACE_STRLEN=200 BPFTRACE_MAX_STRLEN=200 bpftrace -)
	# --foreground: bpftrace stays in our process group, so Ctrl-C reaches
	# it and it prints its END summary.
	((secs > 0)) && cmd=(timeout --foreground -s INT "$secs" "${cmd[@]}")
	# Ctrl-C ends bpftrace, not the demo: the cleanup and summary still run.
	trap 'interrupted=1' INT
	# bpftrace warns about RLIMIT_MEMLOCK where it cannot raise it; on
	# current kernels (memcg accounting) that limit does not matter. Its
	# stderr goes through the filter, stdout straight to ours (fd 3); the
	# filter ignores Ctrl-C so bpftrace's last messages still get through.
	set +e
	{ "${cmd[@]}" <"$file" 2>&1 >&3 3>&- |
		(trap '' INT; exec grep -v "couldn't set RLIMIT_MEMLOCK") >&2; } 3>&1
	status=${PIPESTATUS[0]}
	set -e
	trap 'exit 130' INT
	# 124: timeout stopped it as planned.
	if ((status != 0 && status != 124)) && [[ -z $interrupted ]]; then
		die "bpftrace exited with status $status (its message is above)"
	fi
	return 0
}

# Backend PIDs with this application_name, space-separated.
backend_pids() {
	cl_psql -c "select string_agg(pid::text, ' ' order by pid) from pg_stat_activity where application_name = '$1'"
}

# One session, for SECS seconds: about 10 pg_current_xact_id() a second,
# each its own transaction, and once a second a temporary table created and
# dropped (2 more XIDs, and OIDs for oid-consumers).
burn_xids() {
	local secs=$1 i
	for ((i = 0; i < secs * 10; i++)); do
		echo "select pg_current_xact_id(); select pg_sleep(0.1);"
		((i % 10 == 9)) && echo "create temp table pgbt_demo (a int); drop table pgbt_demo;"
	done | PGAPPNAME=pgbt-demo-xid cl_psql >/dev/null
}

start_workload() {
	local tmp=$1 i bench= burner=
	say "Loading pgbench's tables (pgbench -i -s 1)"
	cl_run pgbench -i -s 1 -q >"$tmp/pgbench-init.log" 2>&1 ||
		{ cat "$tmp/pgbench-init.log" >&2; die "pgbench -i failed on the demo cluster"; }

	say "Starting the workload for ${WORKLOAD_SECS} s, in the background"
	pgbt_bg cl_run pgbench -n -c 2 -j 1 -R "$TPS" -T "$WORKLOAD_SECS" >"$tmp/pgbench.log" 2>&1
	pgbt_bg burn_xids "$WORKLOAD_SECS" 2>"$tmp/burner.log"
	# Their backends are what pgbt sees: wait until both clients are in.
	for ((i = 0; i < 50; i++)); do
		bench=$(backend_pids pgbench) burner=$(backend_pids pgbt-demo-xid)
		[[ $(wc -w <<<"$bench") -ge 2 && -n $burner ]] && break
		sleep 0.1
	done
	[[ -n $bench && -n $burner ]] ||
		{ cat "$tmp/pgbench.log" >&2; die "the workload's sessions did not show up in pg_stat_activity"; }
	echo "    pgbench, 2 clients, about $TPS transactions/s in all, one XID each:"
	echo "        backend PIDs $bench"
	echo "    a psql session taking about 12 XIDs/s: 10 pg_current_xact_id() calls, and"
	echo "    a temporary table created and dropped (which also takes OIDs) every second:"
	echo "        backend PID $burner"
	echo "    Other PIDs you may see are the server's own (autovacuum, checkpointer...)."
}

demo_throwaway() {
	local tmp
	tmp=$(mktemp -d /tmp/pgbt-demo.XXXXXX)
	DEMO_TMP=$tmp
	pgbt_on_exit demo_cleanup

	say "Starting a throwaway PostgreSQL ${PGBT_DEMO_PG:-15} cluster"
	cluster_start "${PGBT_DEMO_PG:-15}"
	echo "    binary $CL_BIN/postgres, data directory $CL_DATA"
	echo "    postmaster PID $CL_PID, unix socket only ($CL_SOCK, port $CL_PORT)"
	start_workload "$tmp"

	target=(-p "$CL_PID")
	render "$tmp/$script.bt"

	say "Running it for ${BPF_SECS} s (Ctrl-C stops it earlier): bpftrace - <$tmp/$script.bt"
	run_bpftrace "$tmp/$script.bt" "$BPF_SECS"
	say "Done. Stopping the workload and the cluster."
}

demo_cleanup() {
	rm -rf "${DEMO_TMP:?}"
}

demo_target() {
	local tmp
	tmp=$(mktemp -d /tmp/pgbt-demo.XXXXXX)
	DEMO_TMP=$tmp
	pgbt_on_exit demo_cleanup
	render "$tmp/$script.bt"
	say "Running it until Ctrl-C: bpftrace - <$tmp/$script.bt"
	run_bpftrace "$tmp/$script.bt" 0
}

preflight
if ((${#target[@]})); then
	demo_target
else
	demo_throwaway
fi
