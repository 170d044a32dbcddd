#!/usr/bin/env bash
# io-latency under bpftrace against real servers (every leg: each server
# build with each bpftrace), against what the server reports, on a table
# larger than shared buffers (so its scan misses and writes out the
# buffers whose hint bits it set), with -d (names), slow_ms=1 and an
# interval (compiled, not reached):
#   - EXPLAIN (ANALYZE, BUFFERS) of a count(*): its shared read and
#     written blocks exactly the script's client-backend reads and writes
#     of that table's main fork, under its name, database OID and
#     pg_relation_filenode (on 18 through the IO workers, and with
#     io_method=sync on 18-waitprobes);
#   - a CHECKPOINT after an insert, with log_checkpoints: "sync files=N"
#     exactly the script's successful fsyncs (relation and SLRU files),
#     "wrote N buffers" the checkpointer's block writes (at most 1% fewer), "longest"
#     (ms, truncated) the script's longest fsync within 3 ms, or the
#     checkpointer's run-queue wait through the checkpoint if longer (the
#     server's timing holds the call and any preemption around it);
#   - slow_ms: a request line for an operation exactly when its longest
#     request reached 1 ms, each at least 1 ms; fsync lines under the
#     checkpointer's PID as pg_stat_activity shows it (in the container
#     too).
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

# The sum of values of map MAP in bpftrace output FILE whose key has TEXT.
map_sum() {
	awk -v m="@$2[" -v t="$3" 'index($0, m) == 1 && index($0, t) { s += $NF } END { print s + 0 }' "$1"
}

test_leg() {
	local io=
	[[ $LEG_BUILD == 18-waitprobes ]] && io=io_method=sync
	cluster_start "$LEG_BUILD" autovacuum=off fsync=on log_checkpoints=on checkpoint_timeout=3600 \
		max_parallel_workers_per_gather=0 $io
	# All clean after the checkpoint, pg_xact too: the scan's hint bits
	# dirty the table's pages, what the scan does not write out is the
	# next checkpoint's to write, and no SLRU page is (15 to 17 count
	# those in "wrote N buffers"; the script counts relation blocks).
	cl_psql -c "create table big as select g, repeat('x', 200) as pad from generate_series(1, 200000) g" \
		-c "insert into big select g, 'y' from generate_series(1, 20000) g" -c "checkpoint" >/dev/null
	local conn="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres" rc=0 out=$E2E_TMP/io.out
	render io -d "$conn" io-latency slow_ms=1 interval=3600 || rc=1
	((rc == 0)) || { cluster_stop; return 0; }
	local db file key ckpt
	db=$(cl_psql -c "select oid from pg_database where datname = current_database()")
	file=$(cl_psql -c "select pg_relation_filenode('big')")
	ckpt=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	key="public.big, $db, $file, main"
	local log0
	log0=$(wc -l <"$CL_LOG")
	bt_start "$E2E_TMP/io.bt" "$out" || { cluster_stop; return 0; }
	local bt=$BT_PID

	local plan read written
	plan=$(cl_psql -c "explain (analyze, buffers, costs off, timing off) select count(*) from big" |
		grep -A1 "Seq Scan on big" | grep "Buffers:")
	read=$(sed -n 's/.* read=\([0-9]*\).*/\1/p' <<<"$plan")
	written=$(sed -n 's/.* written=\([0-9]*\).*/\1/p' <<<"$plan")
	# The checkpointer's run-queue wait (ns) through the checkpoint: a
	# preemption between the server's clock reads and the call counts in
	# its "longest", not in the script's.
	local rq0 rq1
	rq0=$(cl_run_delay_ns "$ckpt")
	cl_psql -c "checkpoint"
	rq1=$(cl_run_delay_ns "$ckpt")
	sleep 0.3
	bt_stop

	local line files wrote longest
	line=$(tail -n +"$((log0 + 1))" "$CL_LOG" | grep "checkpoint complete" | tail -n 1)
	files=$(sed -n 's/.*sync files=\([0-9]*\).*/\1/p' <<<"$line")
	wrote=$(sed -n 's/.*wrote \([0-9]*\) buffers.*/\1/p' <<<"$line")
	longest=$(sed -n 's/.*longest=\([0-9.]*\) s.*/\1/p' <<<"$line" | awk '{ printf "%d", $1 * 1000 + 0.5 }')
	check_eq "$LEG: the scan read blocks and wrote some ($plan)" "$((${read:-0} > 1000 && ${written:-0} > 0))" 1
	check_eq "$LEG: reads of big, EXPLAIN's shared read" \
		"$(bt_map "$out" read_blocks "client backend, $key")" "$read"
	check_eq "$LEG: writes of big by the backend, EXPLAIN's shared written" \
		"$(bt_map "$out" write_blocks "client backend, $key")" "${written:-}"
	check_eq "$LEG: the checkpoint logged ($line)" "$((${files:-0} > 0))" 1
	check_eq "$LEG: fsyncs, the checkpoint's sync files" \
		"$(($(map_sum "$out" fsyncs checkpointer) + $(map_sum "$out" slru_fsyncs /)))" "$files"
	check_eq "$LEG: big's main fork among them" "$(bt_map "$out" fsyncs "checkpointer, $key")" 1
	# Never more; under load a few fewer (4 of 3785 once in CI on 18): a
	# uprobe whose BPF program the kernel skipped leaves no trace in
	# bpftrace's output. At most 1% short, then.
	# Or fewer by no more than the runs the kernel counted as skipped
	# (recursion_misses): 81 of 3663 short (2%) once in a busy CI, whether
	# by skips is not confirmed.
	local cw skipped=${_BT_MISSES[$bt]:-0}
	cw=$(map_sum "$out" write_blocks checkpointer)
	check_eq "$LEG: the checkpointer's block writes ($cw), the buffers it wrote ($wrote), at most 1% fewer or $skipped skipped runs" \
		"$((cw <= ${wrote:-0} && (cw * 100 >= ${wrote:-0} * 99 || cw + skipped >= ${wrote:-0})))" 1
	local max_us=0 v
	for v in $(awk 'index($0, "@fsync_max_us[checkpointer") == 1 || index($0, "@slru_fsync_max_us[") == 1 { print $NF }' "$out"); do
		((v > max_us)) && max_us=$v
	done
	# The server times each call from just before it to just after (a
	# preemption there counts: up to 2 ms more than the call seen once
	# in 40 legs; 4 ms in a CI whose CPUs were busy); its "longest" is
	# truncated to ms. Short by 3 ms at most, then, or by the
	# checkpointer's run-queue wait through the checkpoint if longer.
	local rq_ms=$(((rq1 - rq0 + 999999) / 1000000)) short=3
	((rq_ms > short)) && short=$rq_ms
	check_eq "$LEG: longest fsync ($((max_us / 1000)) ms), the checkpoint's longest (${longest:-?} ms) within -$short..+1 ms (run queue: $rq_ms ms)" \
		"$((max_us / 1000 <= ${longest:--9} + 1 && max_us / 1000 >= ${longest:--9} - short))" 1

	# Request lines: TIME PID KIND (one or two words) OP MS ...; as "PID
	# OP MS" here.
	awk '$1 ~ /^[0-9][0-9]:[0-9][0-9]:/ {
		for (i = 3; i <= 5; i++) if ($i ~ /^(read|write|fsync)$/) { print $2, $i, $(i + 1); break }
	}' "$out" >"$E2E_TMP/io.lines"
	local op max lines bad
	for op in read write fsync; do
		# (SLRU fsyncs have their own map)
		max=$(awk -v m="@${op}_max_us[" -v m2="@slru_${op}_max_us[" \
			'(index($0, m) == 1 || index($0, m2) == 1) && $NF > x { x = $NF } END { print x + 0 }' "$out")
		lines=$(awk -v op="$op" '$2 == op' "$E2E_TMP/io.lines" | wc -l)
		check_eq "$LEG: $op lines ($lines) exactly when the longest $op ($max us) took 1 ms" \
			"$((lines > 0))" "$((max >= 1000))"
	done
	check_empty "$LEG: no request line under 1 ms" "$(awk '$3 < 1' "$E2E_TMP/io.lines")"
	bad=$(awk -v p="$ckpt" '$2 == "fsync" && $1 != p' "$E2E_TMP/io.lines")
	check_empty "$LEG: fsync lines under the checkpointer's pg_stat_activity PID ($ckpt)" "$bad"
	check_empty "$LEG: no warnings" "$(bt_problems "$out")"
	cluster_stop
}

for leg in $(e2e_legs_checked all); do
	leg_use "$leg" && test_leg
done
e2e_done
