# Peers: other ways to get the answers pgbt's scripts give, measured in the
# same harness (sourced by bench/run; contract in bench/tracers.sh).
#
#   gdb-watchpoint   the by-hand method: gdb prints &TransamVariables->nextXid
#                    (ShmemVariableCache before 17), then a bpftrace one-liner
#                    counts writes with a watchpoint. Needs DWARF: on a
#                    stripped build gdb cannot say where the member is.
#   usdt-query-hist  the plain USDT query__start/query__done latency
#                    histogram everyone writes first (simple protocol only).
#   wait-watchpoints pg_wait_tracer's approach: a hardware watchpoint on
#                    wait_event_info in the PGPROC of each pgbench backend
#                    (at most 4: the CPU has 4 debug registers).
#   psql-poll        no eBPF: one psql session sampling pg_stat_activity's
#                    wait events at 10 Hz (\watch 0.1).

BENCH_PEERS="gdb-watchpoint usdt-query-hist wait-watchpoints psql-poll"

peer_start_gdb-watchpoint() {
	local dir=$1 global=TransamVariables out addr
	((CL_MAJOR < 17)) && global=ShmemVariableCache
	if ! readelf -S "$CL_BIN/postgres" 2>/dev/null | grep -q '\.debug_info'; then
		TRACER_ERROR="cannot run: no debug info in $CL_BIN/postgres (gdb needs DWARF to find &$global->nextXid)"
		return 1
	fi
	out=$(gdb -batch -p "$CL_PID" -ex "print &$global->nextXid" 2>&1)
	addr=$(sed -n 's/^\$1 = ([^)]*) \(0x[0-9a-f]*\).*/\1/p' <<<"$out")
	if [[ -z $addr ]]; then
		TRACER_ERROR="gdb cannot: $(grep -v -e '^\[' -e '^$' -e 'warning:' <<<"$out" | tail -n1)"
		return 1
	fi
	cat >"$dir/trace.bt" <<-EOF
	watchpoint:$addr:8:w { @count[comm] = count(); }
	interval:s:1 { time("%H:%M:%S: "); print(@count); clear(@count); }
	EOF
	bt_launch "$dir/trace.bt" "$dir/trace.out"
}

peer_start_usdt-query-hist() {
	local dir=$1 bin=$CL_BIN/postgres
	cat >"$dir/trace.bt" <<-EOF
	usdt:$bin:postgresql:query__start { @start[tid] = nsecs; }
	usdt:$bin:postgresql:query__done /@start[tid]/
	{ @query_us = hist((nsecs - @start[tid]) / 1000); delete(@start[tid]); }
	END { clear(@start); }
	EOF
	bt_launch "$dir/trace.bt" "$dir/trace.out"
}

# 8 bytes of process PID's memory at ADDR, as 0x...
_peek_u64() {
	local v
	v=$(dd if="/proc/$1/mem" iflag=skip_bytes,count_bytes skip="$(($2))" count=8 bs=8 \
		status=none 2>/dev/null | od -An -tx8 | tr -d ' ')
	[[ -n $v ]] && printf '0x%s\n' "$v"
}

peer_start_wait-watchpoints() {
	local dir=$1 myproc off pid proc n=0 debug_bin
	# &MyProc in the live server (.dynsym is enough); the member offset from
	# DWARF, the built-in layout, or else the source-built debug binary of
	# the same major (same struct layout within a major).
	myproc=$("$PGBT_GEN" --scripts-dir "$BENCH_DIR/templates" -p "$CL_PID" myproc 2>&1 |
		sed -n 's/^myproc=//p')
	off=$("$PGBT_GEN" --scripts-dir "$BENCH_DIR/templates" --bin "$CL_BIN/postgres" pgproc-wait 2>/dev/null |
		sed -n 's/^offset=//p')
	debug_bin=$PGBT_CACHE/pg$CL_MAJOR/bin/postgres
	if [[ -z $off && -x $debug_bin ]]; then
		off=$("$PGBT_GEN" --scripts-dir "$BENCH_DIR/templates" --bin "$debug_bin" pgproc-wait 2>/dev/null |
			sed -n 's/^offset=//p')
	fi
	if [[ -z $myproc || -z $off ]]; then
		TRACER_ERROR="cannot find PGPROC.wait_event_info (MyProc '$myproc', offset '$off')"
		return 1
	fi
	: >"$dir/trace.bt"
	for pid in $(cl_psql -c "select pid from pg_stat_activity where application_name = 'pgbench' order by pid limit 4"); do
		proc=$(_peek_u64 "$pid" "$myproc") || continue
		[[ $proc == 0x0000000000000000 ]] && continue
		printf 'watchpoint:0x%x:4:w { @events[pid, *(uint32 *)uptr(0x%x)] = count(); }\n' \
			$((proc + off)) $((proc + off)) >>"$dir/trace.bt"
		n=$((n + 1))
	done
	if ((n == 0)); then
		TRACER_ERROR="no pgbench backend found to watch"
		return 1
	fi
	bt_launch "$dir/trace.bt" "$dir/trace.out"
}

peer_start_psql-poll() {
	local dir=$1
	cat >"$dir/trace.bt" <<-'EOF'
	select now(), wait_event_type, wait_event, count(*) from pg_stat_activity group by 2, 3
	\watch 0.1
	EOF
	chmod 644 "$dir/trace.bt"
	pgbt_bg cl_psql -f "$dir/trace.bt" >"$dir/trace.out" 2>&1
	TR_PID=$BG_PID TR_SIG=TERM
	sleep 0.5
	if ! pgbt_alive "$TR_PID" || [[ ! -s $dir/trace.out ]]; then
		TRACER_ERROR="psql \\watch did not start: $(head -n1 "$dir/trace.out")"
		pgbt_bg_stop "$TR_PID" KILL
		TR_PID=
		return 1
	fi
}
