# Throwaway PostgreSQL clusters and tracked background processes, for the
# e2e tests (through tests/lib/e2e.sh) and examples/demo.sh. Source it from
# bash running as root; it sets no shell options of its own.
#
# Design: several clusters can run at once. Each has a NAME (default: the
# MAJOR argument, e.g. "17" or "15-debug"); cluster_start makes the new one
# current, and the CL_* variables always describe the current cluster.
# cluster_use NAME switches back to another one. Every cluster lives in its
# own mktemp -d directory, so nothing is shared between them but the kernel.
#
#   pg_bindir MAJOR          print the bin dir of a PostgreSQL build:
#                              15        /usr/lib/postgresql/15/bin (Debian's
#                                        stripped build, the one users run)
#                              15-debug  $PGBT_CACHE/pg15/bin
#                              17, 18    $PGBT_CACHE/pg17/bin, .../pg18/bin
#                              17-waitprobes  $PGBT_CACHE/pg17-waitprobes/bin
#                                        (17 with USDT wait-event probes;
#                                        any build-postgres.sh variant)
#                            ($PGBT_CACHE defaults to /var/cache/pgbt). A
#                            missing build is an error, not a skip.
#   cluster_start [-n NAME] MAJOR [GUC=VALUE ...]
#                            initdb + start a cluster listening only on a
#                            unix socket; extra settings go to postgresql.conf
#                            (they win over the light defaults below). Sets
#                            CL_NAME CL_MAJOR (numeric) CL_BIN CL_DIR (temp
#                            dir) CL_DATA CL_PORT CL_SOCK (socket dir) CL_PID
#                            (postmaster) CL_LOG (server log).
#   cluster_use NAME         make NAME current (sets CL_*).
#   cluster_stop [NAME]      immediate stop, wait until every process of the
#                            data dir is gone, remove the temp dir. Default:
#                            the current cluster (CL_* are then cleared).
#   cluster_names            print the names of running clusters, one a line.
#   cluster_pids DATADIR     print PIDs of processes whose cwd is DATADIR
#                            (postgres chdirs there: postmaster + children).
#   cl_psql ARGS...          psql -X -q -At -v ON_ERROR_STOP=1 as postgres on
#                            the current cluster, db postgres. It runs in
#                            CL_DIR (postgres cannot enter root's cwd), so
#                            give SQL with -c or on stdin, not a relative -f.
#   cl_run PROG ARGS...      run $CL_BIN/PROG as postgres in CL_DIR with
#                            PGHOST/PGPORT/PGDATABASE/PGUSER set (pgbench...).
#   pgbt_bg CMD...           start CMD in the background, tracked; sets BG_PID.
#   pgbt_bg_stop PID [SIG]   signal PID and its descendants (default TERM),
#                            SIGKILL after 5 s, reap it.
#   pgbt_on_exit FUNC        run FUNC STATUS from the EXIT trap, after the
#                            cleanup, in registration order; FUNC may set
#                            PGBT_EXIT_STATUS to change the exit status.
#
# An EXIT trap (INT and TERM exit through it) kills every tracked background
# process and stops every cluster, so a failing or interrupted script leaves
# no server behind. It is installed when this file is sourced; scripts that
# need their own EXIT work register it with pgbt_on_exit instead of trap.

# Repository root, from this file's location, so callers may run anywhere.
PGBT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${PGBT_CACHE:=/var/cache/pgbt}"

declare -gA _PGBT_CLUSTERS=()   # name -> "major<TAB>bin<TAB>dir<TAB>port<TAB>pid"
declare -ga _PGBT_BG_PIDS=()    # background processes started by pgbt_bg
declare -ga _PGBT_EXIT_HOOKS=()
declare -g BG_PID=

pg_bindir() {
	local v=${1:?usage: pg_bindir MAJOR}
	local dir marker=
	case "$v" in
	15) dir=/usr/lib/postgresql/15/bin ;;
	*-debug) dir=$PGBT_CACHE/pg${v%-debug}/bin marker=$PGBT_CACHE/pg${v%-debug}/.pgbt-built ;;
	[0-9]*) dir=$PGBT_CACHE/pg$v/bin marker=$PGBT_CACHE/pg$v/.pgbt-built ;;
	*) echo "pg_bindir: '$v' is not a PostgreSQL version (want 15, 15-debug, 17, 18, 17-waitprobes)" >&2; return 2 ;;
	esac
	if [[ ! -x $dir/postgres ]]; then
		echo "pg_bindir: PostgreSQL $v: no $dir/postgres (install it: tests/setup/install-deps.sh, tests/setup/build-postgres.sh ${v%-debug})" >&2
		return 1
	fi
	# A build still running has binaries but no marker yet.
	if [[ -n $marker && ! -f $marker ]]; then
		echo "pg_bindir: PostgreSQL $v: build in $(dirname "$marker") is not finished (no $marker)" >&2
		return 1
	fi
	printf '%s\n' "$dir"
}

# True if something listens on PORT: TCP on any address, or a unix socket
# named .s.PGSQL.PORT anywhere (another cluster, Debian's own on 5432...).
_pgbt_port_busy() {
	local port=$1 name rec p
	[[ -n $(ss -Hltn "sport = :$port" 2>/dev/null) ]] && return 0
	ss -Hlx 2>/dev/null | grep -q "\.s\.PGSQL\.${port}[[:space:]]" && return 0
	for name in "${!_PGBT_CLUSTERS[@]}"; do
		rec=${_PGBT_CLUSTERS[$name]}
		IFS=$'\t' read -r _ _ _ p _ <<<"$rec"
		[[ $p == "$port" ]] && return 0
	done
	return 1
}

_pgbt_free_port() {
	local port
	for ((port = 54300; port < 54400; port++)); do
		_pgbt_port_busy "$port" || { echo "$port"; return 0; }
	done
	echo "cluster_start: no free port in 54300-54399" >&2
	return 1
}

# Sets CL_* from the registry entry NAME.
_pgbt_cl_load() {
	local name=$1 rec=${_PGBT_CLUSTERS[$1]}
	IFS=$'\t' read -r CL_MAJOR CL_BIN CL_DIR CL_PORT CL_PID <<<"$rec"
	CL_NAME=$name
	CL_DATA=$CL_DIR/data
	CL_SOCK=$CL_DIR
	CL_LOG=$CL_DIR/server.log
}

_pgbt_cl_clear() {
	CL_NAME= CL_MAJOR= CL_BIN= CL_DIR= CL_DATA= CL_PORT= CL_SOCK= CL_PID= CL_LOG=
}
_pgbt_cl_clear

# Runs a command as postgres from DIR: PostgreSQL programs resolve their own
# path by chdir'ing and warn when they cannot get back to root's cwd.
# setpriv execs the command itself, so signals reach it directly; runuser
# (the fallback) stays as its parent and answers SIGTERM with "Session
# terminated" and a 2 s grace period.
_pgbt_as_postgres() {
	local dir=$1; shift
	if command -v setpriv >/dev/null; then
		(cd "$dir" && _pgbt_close_lock && HOME=$_PGBT_PG_HOME USER=postgres LOGNAME=postgres \
			exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$@")
	else
		(cd "$dir" && _pgbt_close_lock && exec runuser -u postgres -- "$@")
	fi
}

# One e2e test or bench at a time on a machine: they share the cores that
# timings need and the 4 debug registers that watchpoints use. Takes
# /tmp/pgbt-e2e.lock on PGBT_LOCK_FD, saying MESSAGE on stderr if it must
# wait; children of a holder (PGBT_E2E_LOCKED) run under the holder's lock.
pgbt_take_machine_lock() {
	[[ -n ${PGBT_E2E_LOCKED:-} ]] && return 0
	exec {PGBT_LOCK_FD}>/tmp/pgbt-e2e.lock
	if ! flock -n "$PGBT_LOCK_FD"; then
		[[ -n ${1:-} ]] && printf '%s\n' "$1" >&2
		flock "$PGBT_LOCK_FD"
	fi
	export PGBT_E2E_LOCKED=1
}

# e2e.sh holds a lock on an fd (PGBT_LOCK_FD) while a test runs. A server
# (pg_ctl detaches it) or a background process that outlived a killed test
# would hold it forever and hang every later test: they do not inherit it.
_pgbt_close_lock() {
	if [[ -n ${PGBT_LOCK_FD:-} ]]; then
		exec {PGBT_LOCK_FD}>&-
	fi
	return 0
}
_PGBT_PG_HOME=$(getent passwd postgres | cut -d: -f6)
: "${_PGBT_PG_HOME:=/}"

cluster_start() {
	local name=
	if [[ ${1:-} == -n ]]; then name=${2:?cluster_start: -n needs a NAME}; shift 2; fi
	local v=${1:?usage: cluster_start [-n NAME] MAJOR [GUC=VALUE ...]}; shift
	name=${name:-$v}
	if [[ -n ${_PGBT_CLUSTERS[$name]:-} ]]; then
		echo "cluster_start: a cluster named '$name' is already running (pass -n NAME)" >&2
		return 1
	fi
	local bin dir port major setting
	bin=$(pg_bindir "$v") || return 1
	port=$(_pgbt_free_port) || return 1
	dir=$(mktemp -d /tmp/pgbt-cl.XXXXXX)    # /tmp: postgres must reach it
	chmod 755 "$dir"
	chown postgres: "$dir"
	# Registered before initdb, so the EXIT trap removes the dir on failure.
	_PGBT_CLUSTERS[$name]=$(printf '%s\t%s\t%s\t%s\t%s' "?" "$bin" "$dir" "$port" "")

	if ! _pgbt_as_postgres "$dir" "$bin/initdb" -D "$dir/data" -U postgres -A trust \
		-E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1; then
		echo "cluster_start: initdb of PostgreSQL $v in $dir/data failed:" >&2
		tail -n 20 "$dir/initdb.log" >&2
		cluster_stop "$name" || true
		return 1
	fi
	# Light settings: a test server should start fast and not touch disks
	# or the network. Settings given by the caller come last and win.
	{
		echo "# pgbt test cluster '$name'"
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "shared_buffers = 32MB"
		echo "max_connections = 30"
		echo "fsync = off"
		echo "synchronous_commit = off"
		echo "full_page_writes = off"
		echo "wal_level = minimal"
		echo "max_wal_senders = 0"
		echo "huge_pages = off"
		echo "jit = off"
		echo "logging_collector = off"
		for setting in "$@"; do
			[[ $setting == *=* ]] || { echo "cluster_start: '$setting' is not GUC=VALUE" >&2; cluster_stop "$name" || true; return 2; }
			echo "${setting%%=*} = '$(sed "s/'/''/g" <<<"${setting#*=}")'"
		done
	} >>"$dir/data/postgresql.conf"

	if ! _pgbt_as_postgres "$dir" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		start >"$dir/pg_ctl.log" 2>&1; then
		echo "cluster_start: PostgreSQL $v in $dir/data did not start:" >&2
		tail -n 20 "$dir/pg_ctl.log" "$dir/server.log" >&2 2>/dev/null || true
		cluster_stop "$name" || true
		return 1
	fi
	local pid
	pid=$(head -n 1 "$dir/data/postmaster.pid")
	major=$(cat "$dir/data/PG_VERSION")    # "15", "17": what initdb wrote
	_PGBT_CLUSTERS[$name]=$(printf '%s\t%s\t%s\t%s\t%s' "$major" "$bin" "$dir" "$port" "$pid")
	_pgbt_cl_load "$name"
}

cluster_use() {
	local name=${1:?usage: cluster_use NAME}
	if [[ -z ${_PGBT_CLUSTERS[$name]:-} ]]; then
		echo "cluster_use: no running cluster named '$name' (running: ${!_PGBT_CLUSTERS[*]})" >&2
		return 1
	fi
	_pgbt_cl_load "$name"
}

cluster_names() {
	local name
	for name in "${!_PGBT_CLUSTERS[@]}"; do printf '%s\n' "$name"; done
}

cluster_pids() {
	local data=${1:?usage: cluster_pids DATADIR} p cwd
	for p in /proc/[0-9]*; do
		cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
		# After rm -rf the link reads "DIR (deleted)".
		[[ $cwd == "$data" || $cwd == "$data (deleted)" ]] && echo "${p#/proc/}"
	done
	return 0
}

cluster_stop() {
	local name=${1:-$CL_NAME}
	if [[ -z $name || -z ${_PGBT_CLUSTERS[$name]:-} ]]; then
		echo "cluster_stop: no running cluster named '${name}'" >&2
		return 1
	fi
	local major bin dir port pid i left rc=0
	IFS=$'\t' read -r major bin dir port pid <<<"${_PGBT_CLUSTERS[$name]}"
	if [[ -f $dir/data/postmaster.pid ]]; then
		_pgbt_as_postgres "$dir" "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop \
			>>"$dir/pg_ctl.log" 2>&1 || true
	fi
	# pg_ctl may fail (crashed or wedged server): whatever still runs in the
	# data dir is killed, so no test leaves a server behind.
	for ((i = 0; i < 100; i++)); do
		left=$(cluster_pids "$dir/data")
		[[ -z $left ]] && break
		((i == 50)) && kill -KILL $left 2>/dev/null
		sleep 0.1
	done
	if [[ -n $left ]]; then
		echo "cluster_stop: processes of $dir/data still running: $left" >&2
		rc=1
	fi
	rm -rf "$dir"
	unset "_PGBT_CLUSTERS[$name]"
	[[ $name == "$CL_NAME" ]] && _pgbt_cl_clear
	return $rc
}

cl_psql() {
	[[ -n $CL_NAME ]] || { echo "cl_psql: no current cluster (cluster_start first)" >&2; return 1; }
	_pgbt_as_postgres "$CL_DIR" "$CL_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-h "$CL_SOCK" -p "$CL_PORT" -U postgres -d postgres "$@"
}

cl_run() {
	[[ -n $CL_NAME ]] || { echo "cl_run: no current cluster (cluster_start first)" >&2; return 1; }
	local prog=${1:?usage: cl_run PROG ARGS...}; shift
	PGHOST=$CL_SOCK PGPORT=$CL_PORT PGDATABASE=postgres PGUSER=postgres \
		_pgbt_as_postgres "$CL_DIR" "$CL_BIN/$prog" "$@"
}

pgbt_bg() {
	# A command is exec'd, so BG_PID is its own PID (signals reach it).
	if [[ $(type -t "$1") == file ]]; then
		(_pgbt_close_lock; exec "$@") &
	else
		(_pgbt_close_lock; "$@") &
	fi
	BG_PID=$!
	_PGBT_BG_PIDS+=("$BG_PID")
}

# True while PID runs: a zombie (exited, not yet reaped) counts as gone.
pgbt_alive() {
	local state
	state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
	[[ -n $state && $state != Z ]]
}

_pgbt_descendants() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do
		_pgbt_descendants "$c"
		echo "$c"
	done
}

pgbt_bg_stop() {
	local pid=${1:?usage: pgbt_bg_stop PID [SIG]} sig=${2:-TERM} i tree
	# The whole tree, collected before anything dies and reparents. Parents
	# go first, so a shell does not live to report "Terminated" for its child.
	tree="$pid $(_pgbt_descendants "$pid")"
	kill -"$sig" $tree 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		pgbt_alive "$pid" || break
		sleep 0.1
	done
	pgbt_alive "$pid" && kill -KILL $tree 2>/dev/null
	wait "$pid" 2>/dev/null || true
	local keep=() p
	for p in "${_PGBT_BG_PIDS[@]}"; do [[ $p == "$pid" ]] || keep+=("$p"); done
	_PGBT_BG_PIDS=("${keep[@]}")
	return 0
}

pgbt_on_exit() {
	_PGBT_EXIT_HOOKS+=("${1:?usage: pgbt_on_exit FUNC}")
}

_pgbt_cleanup() {
	local pid name
	for pid in "${_PGBT_BG_PIDS[@]}"; do
		pgbt_alive "$pid" && pgbt_bg_stop "$pid" TERM
	done
	_PGBT_BG_PIDS=()
	for name in "${!_PGBT_CLUSTERS[@]}"; do
		cluster_stop "$name" || true
	done
}

_pgbt_on_exit() {
	PGBT_EXIT_STATUS=$?
	local status=$PGBT_EXIT_STATUS hook
	set +e    # cleanup must run to the end whatever fails
	trap - ERR
	# A second Ctrl-C (or timeout's signal to the whole group) must not cut
	# the cleanup short and leave a server running.
	trap '' INT TERM
	_pgbt_cleanup
	for hook in "${_PGBT_EXIT_HOOKS[@]}"; do "$hook" "$status"; done
	exit "$PGBT_EXIT_STATUS"
}

trap _pgbt_on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
