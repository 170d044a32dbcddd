#!/usr/bin/env bash
# run-queue under bpftrace against real servers (one leg per build: the
# figures are the kernel's, the build only names the PIDs), against the
# kernel's own per-task figures:
# a backend forked after tracing began counts to 40M (CPU-bound) pinned
# to CPU 0 with two busy loops pinned there too, is moved to CPU 1 and
# back with taskset meanwhile, then sleeps. Its run-queue time must be
# large (it shared a CPU with two loops) and within the run_delay of
# /proc/PID/schedstat: never more (1 ms allowed), at least 97% of it (the
# kernel counts from the enqueue, the script from the wakeup tracepoint
# or the preempting switch: 0.5 to 2% less seen), its waits the
# timeslices there the same way (97%), its migrations /proc/PID/sched's
# se.nr_migrations,
# under the PID pg_stat_activity shows (in the container too). A control
# backend doing the same count on CPU 1 (with the test's own processes,
# and the first for the 0.3 s it is moved there) must be within its own
# run_delay the same way (90%: 1 to 5.3% less seen so far, sharing CPU 1
# with the test's own processes), so neither backend's waits are counted
# under the other's PID (the bound that shows it is "at most").
# tests/run: alone
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

# The most the kernel's run_delay may exceed the script's count, per wait
# (timeslice): the kernel dates a wait from its run-queue clock at the
# start of the switch or wake-up, the script from the tracepoint after it.
# From tests/README's stress runs.
GAP_PER_WAIT_US=40

# The host's steal time so far, in microseconds (/proc/stat's clock
# ticks, 100 a second).
steal_us() {
	awk '$1 == "cpu" { print $9 * 10000 }' /proc/stat
}

# Checks that US, a backend's run-queue time as the script counts it over
# WAITS waits, lies between the kernel's RUN_DELAY (us) less
# GAP_PER_WAIT_US a wait and RUN_DELAY itself, 1 ms allowed either way.
# A wait whose end the script did not see (UNSEEN of them) it ends at the
# process's last pick, dated by its time on CPU since, which leaves out
# the steal time of that run: so, when there were any, the script may
# count up to STOLEN us more (the host's steal while tracing, one tick
# more for /proc/stat's rounding).
within_run_delay() {
	local what=$1 us=$2 delay=$3 waits=$4 unseen=$5 stolen=$6 gap more=0
	gap=$(((delay - us) / (waits > 0 ? waits : 1)))
	if ((unseen > 0)); then more=$((stolen + 10000)); fi
	check_between "$LEG: $what (us; the kernel's run_delay less $GAP_PER_WAIT_US us a wait, to it; $gap us a wait short over $waits waits; $unseen unseen switch-ins, ${stolen} us stolen)" \
		"$us" "$((delay - waits * GAP_PER_WAIT_US))" "$((delay + more))" 1000
}

test_leg() {
	cluster_start "$LEG_BUILD" autovacuum=off
	local out=$E2E_TMP/rq.out
	render rq run-queue && bt_start "$E2E_TMP/rq.bt" "$out" || { cluster_stop; return 0; }
	local steal0
	steal0=$(steal_us)

	pgbt_bg cl_psql -c "select count(*) from generate_series(1, 40000000)" -c "select pg_sleep(60)"
	local session=$BG_PID pid host hog1 hog2
	wait_sql "select count(*) from pg_stat_activity where query like 'select count(*) from generate_series(1, 40000000)%'" ||
		fail "$LEG: the counting session did not start"
	pid=$(cl_psql -c "select pid from pg_stat_activity where query like 'select count(*) from generate_series(1, 40000000)%'")
	host=$(cl_host_pid "$pid")
	taskset -pc 0 "$host" >/dev/null
	# The control: the same count, alone on CPU 1 (but for the 0.3 s the
	# other is moved there).
	pgbt_bg cl_psql -c "select count(*) from generate_series(1, 40000001)" -c "select pg_sleep(60)"
	local control=$BG_PID cpid chost
	wait_sql "select count(*) from pg_stat_activity where query like 'select count(*) from generate_series(1, 40000001)%'" ||
		fail "$LEG: the control session did not start"
	cpid=$(cl_psql -c "select pid from pg_stat_activity where query like 'select count(*) from generate_series(1, 40000001)%'")
	chost=$(cl_host_pid "$cpid")
	taskset -pc 1 "$chost" >/dev/null
	pgbt_bg taskset -c 0 sh -c 'while :; do :; done'; hog1=$BG_PID
	pgbt_bg taskset -c 0 sh -c 'while :; do :; done'; hog2=$BG_PID
	sleep 1
	taskset -pc 1 "$host" >/dev/null
	sleep 0.3
	taskset -pc 0 "$host" >/dev/null
	wait_sql "select count(*) from pg_stat_activity where pid = $pid and wait_event = 'PgSleep'" ||
		fail "$LEG: the session did not reach its pg_sleep"
	wait_sql "select count(*) from pg_stat_activity where pid = $cpid and wait_event = 'PgSleep'" ||
		fail "$LEG: the control session did not reach its pg_sleep"
	pgbt_bg_stop "$hog1"; pgbt_bg_stop "$hog2"
	sleep 0.2
	bt_stop
	local stolen unseen
	stolen=$(($(steal_us) - steal0))
	unseen=$(bt_map "$out" unseen_switch_ins)
	# The kernel's figures while both backends sleep (nothing changes them;
	# they sleep a minute, so the control, done first, is still there).
	local delay_us slices migrations
	read -r _ delay_us slices <"/proc/$host/schedstat"
	delay_us=$((delay_us / 1000))
	migrations=$(awk '$1 == "se.nr_migrations" { print $3 }' "/proc/$host/sched")
	local cdelay_us
	read -r _ cdelay_us _ <"/proc/$chost/schedstat"
	cdelay_us=$((cdelay_us / 1000))
	pgbt_bg_stop "$session"
	pgbt_bg_stop "$control"

	local us waits moved
	us=$(bt_map "$out" runq_us_by_pid "$pid")
	waits=$(bt_map "$out" runq_waits_by_pid "$pid")
	moved=$(bt_map "$out" migrations_by_pid "$pid")
	check_eq "$LEG: the backend waited over 300 ms on CPU 0's queue (${us:-0} us)" \
		"$((${us:-0} > 300000))" 1
	within_run_delay "its run-queue time" "${us:-0}" "$delay_us" "${waits:-0}" "${unseen:-0}" "$stolen"
	# Each wait ends in a timeslice; a few the script did not see begin.
	check_eq "$LEG: its run-queue waits (${waits:-0}): at most the kernel's timeslices ($slices), at least 97% of them" \
		"$((${waits:-0} <= slices + 2 && (${waits:-0} + 2) * 100 >= slices * 97))" 1
	check_eq "$LEG: its migrations, the kernel's se.nr_migrations" "${moved:-0}" "$migrations"
	check_eq "$LEG: moved at least twice by taskset" "$((${migrations:-0} >= 2))" 1
	local cus cwaits
	cus=$(bt_map "$out" runq_us_by_pid "$cpid")
	cwaits=$(bt_map "$out" runq_waits_by_pid "$cpid")
	within_run_delay "the control's run-queue time" "${cus:-0}" "$cdelay_us" "${cwaits:-0}" "${unseen:-0}" "$stolen"
	check_empty "$LEG: no warnings" "$(bt_problems "$out")"
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
