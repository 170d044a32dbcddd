# Helpers for e2e tests that stage lock waits between sessions of the
# current cluster (tests/lib/cluster.sh). Messages name the version in $V.

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
