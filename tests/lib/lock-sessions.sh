# Helpers for the lock e2e tests: rendering a script for the current
# cluster, and staging lock waits between sessions of it
# (tests/lib/cluster.sh). Messages name the version in $V.

# Renders SCRIPT [NAME=VALUE...] for the current cluster into $E2E_TMP/NAME.bt.
render() {
	local name=$1 script=$2; shift 2
	local out=$E2E_TMP/$name.bt rc=0
	"$PGBT_GEN" -p "$CL_PID" "$script" "$@" >"$out" 2>"$E2E_TMP/$name.err" || rc=$?
	check_eq "pg$V: $name renders ($(head -c 300 "$E2E_TMP/$name.err"))" "$rc" 0
}

# Waits until SQL (a count) returns 1.
wait_for() {
	local sql=$1 i
	for ((i = 0; i < 200; i++)); do
		[[ $(cl_psql -c "$sql") == 1 ]] && return 0
		sleep 0.05
	done
	fail "pg$V: timed out waiting for: $sql"
	return 1
}

# SQL that holds on until someone waits for a lock matching COND (a
# pg_locks condition), then SECONDS more: the waiter's wait is then about
# SECONDS long, however long it took to start.
hold_until_waited() {
	local cond=$1 secs=$2
	cat <<-SQL
	do \$\$ begin
	  while not exists (select 1 from pg_locks where not granted and $cond) loop
	    perform pg_sleep(0.01);
	  end loop;
	end \$\$;
	select pg_sleep($secs);
	SQL
}
