#!/usr/bin/env bash
# A server in its own mount and PID namespaces, the way containers run it:
# its binary lives at a path that exists only inside (a bind mount), and
# the PIDs it knows are not the host's. pgbt-gen is given the host PID,
# reaches the binary through /proc/PID/root, and the rendered script counts
# the container's XIDs exactly, under the PID pg_backend_pid() gives in the
# container. -D on its data directory finds the same postmaster (its
# postmaster.pid holds the namespace's PID). (Debian 13's 17 in the trixie
# root, the "ct17" build, runs every other e2e test as a container too.)
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

K=7
PG15=/usr/lib/postgresql/15

start_contained_server() {
	CT_DIR=$E2E_TMP/ct; CT_MNT=$CT_DIR/mnt; CT_DATA=$CT_DIR/data
	mkdir -p "$CT_MNT" && chown -R postgres: "$CT_DIR"
	runuser -u postgres -- "$PG15/bin/initdb" -D "$CT_DATA" -A trust -U postgres --no-sync \
		>"$CT_DIR/initdb.log" 2>&1
	CT_PORT=$(_pgbt_free_port)
	pgbt_bg unshare --mount --propagation private --pid --fork --kill-child bash -c '
		mount --bind "$1" "$2" &&
		exec runuser -u postgres -- "$2/bin/postgres" -D "$3" -c port="$4" \
			-c listen_addresses= -c unix_socket_directories="$5" -c fsync=off' \
		_ "$PG15" "$CT_MNT" "$CT_DATA" "$CT_PORT" "$CT_DIR" >"$CT_DIR/server.log" 2>&1
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -S $CT_DIR/.s.PGSQL.$CT_PORT ]] && break
		sleep 0.1
	done
	# The host PIDs of the server: the processes whose cwd is its data dir.
	CT_PIDS=$(cluster_pids "$CT_DATA")
}

ct_psql() {
	runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -h "$CT_DIR" -p "$CT_PORT" postgres "$@"
}

start_contained_server
check_eq "the binary's path does not exist outside the container" \
	"$(test -e "$CT_MNT/bin/postgres" && echo exists || echo absent)" absent
backend=$(echo "$CT_PIDS" | tail -n 1)
rc=0
"$PGBT_GEN" -p "$backend" xid-events >"$E2E_TMP/xe.bt" 2>"$E2E_TMP/xe.err" || rc=$?
check_eq "renders for a contained server ($(cat "$E2E_TMP/xe.err"))" "$rc" 0
postmaster=$(sed -n 's|^// postmaster: PID \([0-9]*\).*|\1|p' "$E2E_TMP/xe.bt")
check_contains "the binary is reached through /proc/PID/root" "$(cat "$E2E_TMP/xe.bt")" \
	"// binary:     /proc/$postmaster/root$CT_MNT/bin/postgres"
check_contains "the path inside the container is shown" "$(cat "$E2E_TMP/xe.bt")" \
	"($CT_MNT/bin/postgres inside the process's root)"
[[ $(head -n1 "$CT_DATA/postmaster.pid") != "$postmaster" ]] && pass "namespace PID differs from host PID" ||
	fail "namespace PID equals host PID: the PID namespace did not take"

# -D: postmaster.pid holds the namespace's PID; pgbt-gen finds our PID for
# that postmaster, not a host process that happens to have the same number.
rc=0
"$PGBT_GEN" -D "$CT_DATA" xid-events >"$E2E_TMP/d.out" 2>"$E2E_TMP/d.err" || rc=$?
check_eq "-D of a contained server renders ($(cat "$E2E_TMP/d.err"))" "$rc" 0
check_contains "-D of a contained server: its postmaster" "$(cat "$E2E_TMP/d.out")" \
	"// postmaster: PID $postmaster,"
check_contains "-D of a contained server: the PIDs are the container's" "$(cat "$E2E_TMP/d.out")" \
	"its postmaster is PID $(head -n1 "$CT_DATA/postmaster.pid") there, $postmaster here"

bt_start "$E2E_TMP/xe.bt" "$E2E_TMP/xe.out"
# The session sleeps after its XIDs, so that its host PID can be read.
: >"$E2E_TMP/session.out"
{ echo "select pg_backend_pid();"; for _ in $(seq "$K"); do echo "select pg_current_xact_id();"; done
  echo "select pg_sleep(1);"; } | ct_psql >"$E2E_TMP/session.out" &
session=$!
# Its host PID read as soon as it names itself, while its XIDs and sleep
# keep it alive (a busy CI took over 5 s to see all its lines, and the
# session had ended by then).
for ((i = 0; i < 400; i++)); do [[ $(head -n1 "$E2E_TMP/session.out") =~ ^[0-9]+$ ]] && break; sleep 0.05; done
nspid=$(head -n1 "$E2E_TMP/session.out")
hostpid=$(pgbt_host_pid "$postmaster" "$nspid")
wait "$session"
out=$(cat "$E2E_TMP/session.out")
xids=$(sed -n "2,$((K + 1))p" <<<"$out")
sleep 0.5
bt_stop
check_eq "the container's $K XIDs under its pg_backend_pid() $nspid, each carrying XID + 1" \
	"$(awk -v p="$nspid" '$2 == p { print $3 }' "$E2E_TMP/xe.out" | paste -sd' ')" \
	"$(awk '{ print $1 + 1 }' <<<"$xids" | paste -sd' ')"
check_contains "the host's PID of the container's $nspid, listed at the end" \
	"$(cat "$E2E_TMP/xe.out")" "@host_pid[$nspid]: $hostpid"
e2e_done
