# Helpers for the lock and wait e2e tests: staging lock waits (and a
# deadlock) between sessions of the current cluster (tests/lib/cluster.sh),
# finding a waiting backend and its wait in pg_stat_activity. Messages name
# the leg in $LEG (tests/lib/e2e.sh).

# Waits until SQL (a count) returns 1.
wait_for() {
	local sql=$1 i
	for ((i = 0; i < 200; i++)); do
		[[ $(cl_psql -c "$sql") == 1 ]] && return 0
		sleep 0.05
	done
	fail "$LEG: timed out waiting for: $sql"
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

# The PID of the backend running a query that starts with PREFIX, once
# it is waiting (5 s at most).
waiting_pid() {
	local pid
	read -r pid _ < <(waiting_pid_wait "$1")
	echo "$pid"
}

# ... and "Class:Name" of that wait, from the same look: a short wait
# (S's 0.5 s sleep) can be over before a second query (CI: on a busy
# machine, a container's psql came after it).
waiting_pid_wait() {
	local prefix=$1 row= i
	for ((i = 0; i < 100; i++)); do
		row=$(cl_psql -c "select pid || ' ' || wait_event_type || ':' || wait_event
			from pg_stat_activity where query like '$prefix%'
			and wait_event is not null and pid <> pg_backend_pid() limit 1")
		[[ -n $row ]] && break
		sleep 0.05
	done
	echo "$row"
}

# "Class:Name" of PID's current wait in pg_stat_activity, polled until it
# is WANT (or 5 s pass); prints what it saw last.
psa_wait() {
	local pid=$1 want=$2 got= i
	for ((i = 0; i < 100; i++)); do
		got=$(cl_psql -c "select coalesce(wait_event_type, '') || ':' || coalesce(wait_event, '')
			from pg_stat_activity where pid = $pid")
		[[ $got == "$want" ]] && break
		sleep 0.05
	done
	echo "$got"
}

# Runs SQL from stdin in a background session (its job is $!) whose first
# output line, in FILE, is its PID.
session_bg() {
	local file=$1
	{ echo "select pg_backend_pid();"; cat; } | cl_psql >"$file" 2>&1 &
}

# E and F lock rows 1 and 2 of table d (the caller creates it) in opposite
# orders. E checks for deadlock after 200 ms, F after 10 s, so E is the
# victim; E's session stays LINGER seconds (default 0) after its error, so
# that bpftrace can still name the frames of a live process. Sets
# DEADLOCK_E and DEADLOCK_F (their PIDs); E's output is $E2E_TMP/e.out.
stage_deadlock() {
	local linger=${1:-0} e_job
	session_bg "$E2E_TMP/e.out" <<-SQL
	set deadlock_timeout = '200ms';
	\set ON_ERROR_STOP 0
	begin;
	update d set a = a where a = 1;
	select pg_sleep(0.3);
	update d set a = a where a = 2;
	rollback;
	select pg_sleep($linger);
	SQL
	e_job=$!
	DEADLOCK_F=$(cl_psql <<-SQL 2>&1 | sed -n 1p
	select pg_backend_pid();
	set deadlock_timeout = '10s';
	begin;
	update d set a = a where a = 2;
	select pg_sleep(0.3);
	update d set a = a where a = 1;
	commit;
	SQL
	)
	wait "$e_job" || true    # E fails: deadlock detected
	DEADLOCK_E=$(head -n1 "$E2E_TMP/e.out")
	check_contains "$LEG: E was the deadlock victim" "$(cat "$E2E_TMP/e.out")" "deadlock detected"
}

# "MS TOL" of a wait that ends now and began between LAUNCH and SEEN
# ($EPOCHREALTIME values, SEEN when a poll saw it waiting): the middle of
# the span, and half its width plus TOL_MS (timer and scheduling slack).
wait_span() {
	local now=${EPOCHREALTIME/./} lo hi
	hi=$(( (now - ${1/./}) / 1000 )) lo=$(( (now - ${2/./}) / 1000 ))
	echo "$(( (lo + hi) / 2 )) $(( (hi - lo + 1) / 2 + TOL_MS ))"
}
