#!/usr/bin/env bash
# session-trace under bpftrace against real servers (every build once, the
# bpftraces in turn), one bpftrace a leg run as its Run line says
# (bpftrace -p, with -d for names, -f json for the summary; output=text
# and output=json on alternate legs), on a scripted session T of known
# behaviour (psql 18's, for \bind):
#   - SELECT pg_sleep(0.2): a Timeout:PgSleep wait between 200 ms and the
#     statement's time as psql timed it, off CPU;
#   - an UPDATE of a row that session H holds until T waits, then 300 ms
#     more: T's lock wait (ShareLock on H's transactionid, granted, one
#     holder: H) between 300 ms and T's statement time, as locks.sh checks
#     lock-waits, and its Lock:transactionid wait;
#   - EXPLAIN (ANALYZE, BUFFERS) of a count(*) of a table whose blocks
#     VACUUM FULL left out of shared buffers: its reads under its name
#     (-d), in blocks, EXPLAIN's read=;
#   - SELECT 1/0: an error line with SQLSTATE 22012, which ends the
#     statement with it;
#   - SELECT $1::int + 1 \bind 41: the extended protocol (the others simple);
#   - a sort over work_mem: a temporary file, temporary blocks written;
# the statements in order, every line under T's PID (none of H's), the
# phases on bpftrace 0.20+; and pgbt-gen report's summary of the same
# JSON (per statement text: calls, elapsed, on CPU, each wait event,
# blocks, rows) equal to the sums of the trace's lines.
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$(dirname "$0")/../lib/lock-sessions.sh"

PSQL18=$PGBT_CACHE/pg18/bin/psql

# T: a psql session fed through a FIFO, so that its backend stays the same
# and idles between statements. t_sql SQL sends SQL between two \echo
# marks and returns once it is done; the psql's "Time: X ms" between them
# is its time (T_MS).
T_FD= T_PID= T_N=0 T_MS=
_t_psql() { _pgbt_as_postgres "$CL_DIR" "$1" -X -q -At -v ON_ERROR_STOP=0 -h "$CL_SOCK" -p "$CL_PORT" -U postgres -d postgres <"$2"; }
t_open() {
	local fifo=$E2E_TMP/t.in psql=$CL_CLIENT_BIN/psql
	[[ -x $PSQL18 ]] && psql=$PSQL18
	rm -f "$fifo" "$E2E_TMP/t.out"
	mkfifo -m 666 "$fifo"
	exec {T_FD}<>"$fifo"
	T_N=0
	pgbt_bg _t_psql "$psql" "$fifo" >"$E2E_TMP/t.out" 2>&1
	printf '\\timing on\n' >&"$T_FD"
	t_sql "select 'pid=' || pg_backend_pid();" || return 1
	T_PID=$(sed -n 's/^pid=//p' "$E2E_TMP/t.out")
}
t_sql() {
	local n=$((T_N + 1)) i
	T_N=$n
	printf '\\echo start-%s\n%s\n\\echo end-%s\n' "$n" "$1" "$n" >&"$T_FD"
	for ((i = 0; i < 400; i++)); do
		if grep -qx "end-$n" "$E2E_TMP/t.out"; then
			T_MS=$(awk -v s="start-$n" -v e="end-$n" '$0 == s { on = 1; next } $0 == e { on = 0 }
				on && /^Time: / { print $2 }' "$E2E_TMP/t.out" | tail -n 1)
			return 0
		fi
		sleep 0.02
	done
	fail "$LEG: session T: no answer in 8 s to: $1"
	return 1
}
t_close() { exec {T_FD}>&-; }

# The trace's events, from bpftrace -f json output FILE, one a line, in
# time order, the same for output=text and output=json:
#   TIMEKEY PID EVENT US FIELDS...   (tab-separated; US "-" for none)
#   statement: TEXT; wait: EVENT OFF_US; read, write: RELATION FORK BLOCK
#   BLOCKS; lock-wait: MODE RESULT HOLDERS FIRST LOCKTYPE; error: LEVEL
#   SQLSTATE; temp-file: BYTES; buffers: HIT READ DIRTIED WRITTEN TEMP_READ
#   TEMP_WRITTEN WAL_RECORDS WAL_FPI WAL_BYTES; end: PROTOCOL ON_US OFF_US
#   ROWS QUERY_ID SQLSTATE; a phase (parse...): nothing more.
events() {
	if [[ $2 == json ]]; then
		jq -r 'select(.type == "value" and (.data | type) == "array") | .data |
			[(.[1] | tostring | ("00000000000000000000" + .)[-20:]), (.[2] | tostring), .[0]] +
			(if .[0] == "statement" then ["-", .[5]]
			 elif .[0] == "wait" then [.[3], .[4], .[5]]
			 elif .[0] == "read" or .[0] == "write" then
				[.[3], (if .[4] != "" then .[4] else "db=\(.[5]) file=\(.[6])" end), .[7], .[8], .[9]]
			 elif .[0] == "lock-wait" then [.[3], .[4], .[5], .[6], .[7], .[8]]
			 elif .[0] == "error" then ["-", .[3], .[4]]
			 elif .[0] == "temp-file" then ["-", .[3]]
			 elif .[0] == "buffers" then ["-"] + .[3:12]
			 elif .[0] == "end" then [.[3], .[4], .[5], .[6], .[7], .[8], .[9]]
			 else [.[3]] end) | map(tostring) | join("\t")' <(grep '^{' "$1")
	else
		jq -r 'select(.type == "printf") | .data' <(grep '^{' "$1") | awk -v OFS='\t' '
			function us(ms,   part) { if (ms == "-") return "-"; split(ms, part, "."); return part[1] * 1000 + part[2] }
			function val(s) { sub(/^[a-z_]*=/, "", s); return s }
			$1 !~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+$/ || $2 !~ /^[0-9]+$/ { next }
			{ t = $1; p = $2; e = $3; u = us($4) }
			e == "statement" { x = $0; sub(/^[^:]*:[^:]*:[^:]*: /, "", x); print t, p, e, u, x; next }
			e == "wait" { print t, p, e, u, $5, us(val($6)); next }
			e == "read" || e == "write" {
				if ($5 ~ /^db=/) print t, p, e, u, $5 " " $6, $7, val($8), val($9)
				else print t, p, e, u, $5, $6, val($7), val($8); next }
			e == "lock-wait" { print t, p, e, u, $5, $6, val($7), val($8), $9; next }
			e == "error" { print t, p, e, u, $5, $6; next }
			e == "temp-file" { print t, p, e, u, val($5); next }
			e == "buffers" { printf "%s", t OFS p OFS e OFS u; for (i = 5; i <= 13; i++) printf "%s", OFS val($i); print ""; next }
			e == "end" { print t, p, e, u, $5, us(val($6)), us(val($7)), val($8), val($9), val($10); next }
			{ print t, p, e, u }'
	fi | sort -s -t$'\t' -k1,1
}

# From events: each statement's lines, "N<TAB>TEXT<TAB>EVENT<TAB>US<TAB>
# FIELDS", N its number (1, 2...); outside them "0<TAB>(between statements)".
by_statement() {
	awk -F'\t' -v OFS='\t' '
		$3 == "statement" { q = $5; n++; in_s = 1; print n, q, "statement", "-"; next }
		{
			line = (in_s ? n OFS q : 0 OFS "(between statements)") OFS $3
			for (i = 4; i <= NF; i++) line = line OFS $i
			print line
		}
		$3 == "end" { in_s = 0 }' "$1"
}

# What the summary must say, from by_statement's lines without N: "TABLE
# <TAB>QUERY<TAB>KEY<TAB>VALUE" for pgbt-gen report's tables, sorted.
summary_from_lines() {
	awk -F'\t' -v OFS='\t' '
		$2 == "end" { calls[$1]++; el[$1] += $3; on[$1] += $5; if ($7 + 0) blk[$1, "rows"] += $7 }
		$2 == "wait" { w[$1, $4] += $3; wn[$1, $4]++ }
		$2 == "buffers" {
			split("shared hit,shared read,shared dirtied,shared written,temp read,temp written,WAL records,WAL full-page images,WAL bytes", nm, ",")
			for (i = 1; i <= 9; i++) if ($(i + 3) + 0) blk[$1, nm[i]] += $(i + 3)
		}
		END {
			# (the report leaves out a row of 0: a statement off CPU throughout)
			for (q in calls) { print "calls", q, "-", calls[q]; print "elapsed", q, "-", el[q]; if (on[q]) print "oncpu", q, "-", on[q] }
			for (k in w) { split(k, a, SUBSEP); print "wait", a[1], a[2], w[k]; print "waits", a[1], a[2], wn[k] }
			for (k in blk) { split(k, a, SUBSEP); print "blocks", a[1], a[2], blk[k] }
		}' | sort
}

# The same from pgbt-gen report --format json (its last report).
summary_from_report() {
	tail -n 1 "$1" | jq -r '.tables[] | .name as $t | .rows[] |
		if $t == "statements" then
			"calls\t\(.keys.query)\t-\t\(.count)", "elapsed\t\(.keys.query)\t-\t\(.sum * 1e6 | round)"
		elif $t == "time" and .label then "oncpu\t\(.keys.query)\t-\t\(.sum * 1e6 | round)"
		elif $t == "time" then "wait\t\(.keys.query)\t\(.keys.event)\t\(.sum * 1e6 | round)",
			"waits\t\(.keys.query)\t\(.keys.event)\t\(.count)"
		elif $t == "blocks" then "blocks\t\(.keys.query)\t\(.keys.what)\t\(.sum)"
		else empty end' | sort
}

test_leg() {
	local output=$1
	# (wal_skip_threshold=0: with wal_level=minimal, a relation rewritten
	# in a transaction is fsynced at its commit, not WAL-logged through
	# shared buffers, so VACUUM FULL leaves cold out of them)
	cluster_start "$LEG_BUILD" autovacuum=off max_parallel_workers_per_gather=0 wal_skip_threshold=0 \
		$(query_id_guc "$LEG_BUILD")
	cl_psql -c "create table lk (id int primary key, v int); insert into lk values (1, 0)" \
		-c "create table cold as select g, repeat('x', 100) as pad from generate_series(1, 5000) g" \
		-c "vacuum full cold" >/dev/null
	t_open || { cluster_stop; return 0; }
	local conn="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres" out=$E2E_TMP/st-$LEG_BUILD.json
	render st -d "$conn" session-trace pid="$T_PID" output="$output" max_relations=20 || { t_close; cluster_stop; return 0; }
	check_eq "$LEG: the Run line: bpftrace -p and T's PID on this host" "$(bt_run_pid "$E2E_TMP/st.bt")" \
		"$(cl_host_pid "$T_PID")"
	# Strings: 0.17's 64 (a larger one passes BPF's stack), 200 on 0.23,
	# 0.27's own 1024 (smaller ones go on BPF's stack)
	local strlen=200
	(($(bt_minor) < 20)) && strlen=64
	(($(bt_minor) >= 27)) && strlen=
	BT_STRLEN=$strlen BT_FLAGS="-f json" bt_start "$E2E_TMP/st.bt" "$out" || { t_close; cluster_stop; return 0; }

	local sleep_ms lock_ms read_plan err_out bind=1
	t_sql "select pg_sleep(0.2);"; sleep_ms=$T_MS
	# H holds the row until T waits for it, then 300 ms more.
	session_bg "$E2E_TMP/h.out" <<-SQL
	begin;
	update lk set v = v + 1 where id = 1;
	$(hold_until_waited "locktype = 'transactionid'" 0.3)
	commit;
	SQL
	local h_job=$!
	wait_for "select count(*) from pg_locks where relation = 'lk'::regclass and mode = 'RowExclusiveLock' and granted"
	t_sql "update lk set v = v + 1 where id = 1;"; lock_ms=$T_MS
	wait "$h_job"
	local h_pid; h_pid=$(head -n 1 "$E2E_TMP/h.out")
	t_sql "explain (analyze, buffers, costs off, timing off) select count(*) from cold;"
	read_plan=$(awk '/^start-4$/ { on = 1 } /^end-4$/ { on = 0 } on' "$E2E_TMP/t.out" | grep -A1 "Seq Scan on cold" | grep "Buffers:" || true)
	t_sql "select 1/0;"
	if [[ -x $PSQL18 ]]; then
		t_sql 'select $1::int + 1 \bind 41 \g'
	else
		bind=
	fi
	t_sql "set work_mem = '64kB';"
	t_sql "select count(*) from (select g from generate_series(1, 20000) g order by g desc) s;"
	sleep 0.2
	bt_stop
	t_close

	events "$out" "$output" >"$E2E_TMP/ev-$LEG_BUILD"
	by_statement "$E2E_TMP/ev-$LEG_BUILD" >"$E2E_TMP/bs-$LEG_BUILD"
	local ev=$E2E_TMP/ev-$LEG_BUILD bs=$E2E_TMP/bs-$LEG_BUILD
	# (bpftrace's own messages, not the trace's events: an error line says ERROR)
	grep -v '^{"type": "\(printf\|value\)"' "$out" >"$out.bt" || true
	check_bt_quiet "$LEG: no warnings" "$out.bt"
	check_eq "$LEG: some 20 events or more" "$(($(wc -l <"$ev") >= 20))" 1
	check_eq "$LEG: every line under T's PID ($T_PID), none of H's ($h_pid)" \
		"$(awk -F'\t' '{ print $2 }' "$ev" | sort -u | paste -sd' ')" "$T_PID"
	local texts="select pg_sleep(0.2);
update lk set v = v + 1 where id = 1;
explain (analyze, buffers, costs off, timing off) select count(*) from cold;
select 1/0;${bind:+
select \$1::int + 1 }
set work_mem = '64kB';
select count(*) from (select g from generate_series(1, 20000) g order by g desc) s;"
	# (texts cut as bpftrace cuts its strings: 63 bytes on 0.17)
	local cut=$texts line
	if [[ $strlen == 64 ]]; then
		cut=$(while IFS= read -r line; do bt_cut "$line" 64; done <<<"$texts")
	fi
	check_eq "$LEG: T's statements, in order" "$(awk -F'\t' '$3 == "statement" { sub(/ +$/, "", $5); print $5 }' "$ev")" \
		"$(sed 's/ *$//' <<<"$cut")"
	check_eq "$LEG: each statement ends once" "$(grep -c $'\tend\t' "$ev")" "$(grep -c $'\tstatement\t' "$ev")"

	# pg_sleep(0.2): its wait, off CPU; execute's time covers it (0.20+)
	local s
	s=$(awk -F'\t' '$1 == 1' "$bs")
	check_between "$LEG: pg_sleep(0.2): Timeout:PgSleep (us), between 0.2 s and psql's ${sleep_ms} ms" \
		"$(awk -F'\t' '$3 == "wait" && $5 == "Timeout:PgSleep" { u += $4 } END { print u + 0 }' <<<"$s")" \
		200000 "$(awk -v m="$sleep_ms" 'BEGIN { printf "%d", m * 1000 }')" 0
	check_eq "$LEG: pg_sleep(0.2): its wait was off CPU (within 1 ms)" \
		"$(awk -F'\t' '$3 == "wait" && $5 == "Timeout:PgSleep" { print ($4 - $6 <= 1000) }' <<<"$s" | sort -u)" 1
	check_eq "$LEG: pg_sleep(0.2): simple protocol, no error" \
		"$(awk -F'\t' '$3 == "end" { print $5, $10 }' <<<"$s")" "simple "
	if (($(bt_minor) >= 20)); then
		check_between "$LEG: pg_sleep(0.2): its execute phase (us)" \
			"$(awk -F'\t' '$3 == "execute" { print $4 }' <<<"$s")" 200000 "$(awk -v m="$sleep_ms" 'BEGIN { printf "%d", m * 1000 }')" 0
	fi

	# the row lock
	s=$(awk -F'\t' '$1 == 2' "$bs")
	check_eq "$LEG: UPDATE: one lock wait: ShareLock granted, one holder, H ($h_pid), on a transactionid" \
		"$(awk -F'\t' '$3 == "lock-wait" { print $5, $6, $7, $8, $9 }' <<<"$s")" "ShareLock granted 1 $h_pid transactionid"
	check_between "$LEG: UPDATE: the lock wait (us), between H's 300 ms and psql's ${lock_ms} ms" \
		"$(awk -F'\t' '$3 == "lock-wait" { print $4 }' <<<"$s")" 300000 "$(awk -v m="$lock_ms" 'BEGIN { printf "%d", m * 1000 }')" 0
	check_between "$LEG: UPDATE: its Lock:transactionid wait (us)" \
		"$(awk -F'\t' '$3 == "wait" && $5 == "Lock:transactionid" { u += $4 } END { print u + 0 }' <<<"$s")" \
		300000 "$(awk -v m="$lock_ms" 'BEGIN { printf "%d", m * 1000 }')" 0

	# the cold read
	s=$(awk -F'\t' '$1 == 3' "$bs")
	local want
	want=$(sed -n 's/.* read=\([0-9]*\).*/\1/p' <<<"$read_plan")
	check_eq "$LEG: EXPLAIN read blocks of cold ($read_plan)" "$((${want:-0} > 10))" 1
	check_eq "$LEG: the reads of public.cold (main fork), in blocks, EXPLAIN's read=" \
		"$(awk -F'\t' '$3 == "read" && $5 == "public.cold" && $6 == "main" { b += $8 } END { print b + 0 }' <<<"$s")" "${want:-}"
	check_eq "$LEG: the statement's buffers read at least those" \
		"$(awk -F'\t' -v w="${want:-0}" '$3 == "buffers" { print ($6 >= w) }' <<<"$s")" 1

	# the error
	s=$(awk -F'\t' '$1 == 4' "$bs")
	check_eq "$LEG: SELECT 1/0: its error, then its end, with SQLSTATE 22012" \
		"$(awk -F'\t' '$3 == "error" { print $3, $5, $6 } $3 == "end" { print $3, $10 }' <<<"$s")" "error ERROR 22012
end 22012"
	local n=5
	if [[ -n $bind ]]; then
		check_eq "$LEG: \\bind: the extended protocol" \
			"$(awk -F'\t' -v n=$n '$1 == n && $3 == "end" { print $5, $8 }' "$bs")" "extended 1"
		n=$((n + 1))
	else
		skip "$LEG: the extended protocol: no psql 18 here ($PSQL18) for \\bind"
	fi
	n=$((n + 1))
	s=$(awk -F'\t' -v n=$n '$1 == n' "$bs")
	check_eq "$LEG: the sort over work_mem: a temporary file" \
		"$(awk -F'\t' '$3 == "temp-file" && $5 > 0 { k++ } END { print (k >= 1) }' <<<"$s")" 1
	check_eq "$LEG: the sort over work_mem: temporary blocks written" \
		"$(awk -F'\t' '$3 == "buffers" { print ($10 > 0) }' <<<"$s")" 1

	# the summary: pgbt-gen report, from the same JSON
	local rep=$E2E_TMP/rep-$LEG_BUILD.jsonl rc=0
	grep '^{' "$out" >"$out.only" || true
	"$PGBT_GEN" report --format json <"$out.only" >"$rep" 2>"$rep.err" || rc=$?
	check_eq "$LEG: pgbt-gen report reads the trace ($(head -c 300 "$rep.err"))" "$rc" 0
	check_eq "$LEG: the summary's figures, the sums of the trace's lines (diff lines report)" \
		"$(diff <(by_statement "$ev" | cut -f2- | summary_from_lines) <(summary_from_report "$rep") | head -n 20 || true)" ""
	check_eq "$LEG: the summary lists T's statements" \
		"$(summary_from_report "$rep" | awk -F'\t' '$1 == "calls" && $2 != "(between statements)"' | wc -l)" \
		"$(grep -c $'\tstatement\t' "$ev")"
	"$PGBT_GEN" report <"$out.only" >"$E2E_TMP/rep-$LEG_BUILD.txt" 2>&1 || rc=$?
	check_contains "$LEG: the summary for people" "$(cat "$E2E_TMP/rep-$LEG_BUILD.txt")" "Statements by elapsed time"
	cluster_stop
}

i=0
for leg in $(e2e_legs_checked each); do
	leg_use "$leg" || continue
	# output=text and output=json on alternate legs
	if ((i++ % 2)); then test_leg json; else test_leg text; fi
done
e2e_done
