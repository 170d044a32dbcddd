# How fast pgbt-gen renders, next to the tools people use by hand to get
# the same numbers (sourced by bench/run).
#
#   gen_speed_scripts MAJOR   pgbt-gen -p POSTMASTER SCRIPT, for every script,
#                             on the current cluster
#   gen_speed_refs            pahole -C <the XID struct> BINARY and
#                             gdb -batch -p POSTMASTER -ex 'print &<global>->nextXid'
# Each command runs BENCH_GEN_RUNS times (gdb at most 5: it takes ~0.5 s);
# wall time per run (median, range, in ms, measured around
# /usr/bin/time, which costs every tool the same ~1 ms) and the largest
# max RSS. A tool that fails (pahole and gdb on a stripped binary) is
# recorded with its message. Rows go to $BENCH_WORK/gen-speed.csv.

GEN_HEADER=major,backends,tool,what,runs,median_ms,min_ms,max_ms,max_rss_kb,status

# gen_time TOOL WHAT RUNS CHECK CMD...: CHECK is a fixed string the output
# must contain (gdb exits 0 even when it cannot print).
gen_time() {
	local tool=$1 what=$2 runs=$3 check=$4; shift 4
	local i t0 t1 rss max_rss=0 status=ok out=$BENCH_WORK/gen.out
	local -a ms=()
	for ((i = 0; i < runs; i++)); do
		t0=$EPOCHREALTIME
		if ! /usr/bin/time -f %M -o "$BENCH_WORK/gen.rss" "$@" >"$out" 2>&1 ||
			! grep -qF -- "$check" "$out"; then
			# The last line says why (gdb first talks about threads).
			status="failed: $(grep -v -e '^\[' -e '^$' -e '^warning' "$out" | tail -n1)"
			break
		fi
		t1=$EPOCHREALTIME
		ms+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 }')")
		rss=$(tail -n1 "$BENCH_WORK/gen.rss")
		((rss > max_rss)) && max_rss=$rss
	done
	local row="$CL_MAJOR,$BENCH_BACKENDS,$tool,\"$what\",${#ms[@]}"
	if ((${#ms[@]})); then
		row+=",$(printf '%s\n' "${ms[@]}" | stat_median),$(printf '%s\n' "${ms[@]}" | stat_min)"
		row+=",$(printf '%s\n' "${ms[@]}" | stat_max),$max_rss"
	else
		row+=",,,,"
	fi
	printf '%s,"%s"\n' "$row" "${status//\"/\'}" >>"$BENCH_WORK/gen-speed.csv"
	bench_log "gen-speed pg$CL_MAJOR ${BENCH_BACKENDS} backends: $tool $what: ${ms[*]:-} ms; $status"
}

gen_speed_scripts() {
	local s var args
	for s in $(bench_scripts); do
		var=BENCH_ARGS_${s//-/_}
		read -r -a args <<<"${!var:-}"
		# a backend to follow: any child of the postmaster renders alike
		args=("${args[@]/%=BACKEND/=$(pgrep -P "$CL_PID" | head -n 1)}")
		gen_time pgbt-gen "$s" "$BENCH_GEN_RUNS" "postmaster: PID $CL_PID" \
			"$PGBT_GEN" -p "$CL_PID" "$s" "${args[@]}"
	done
}

gen_speed_refs() {
	local struct=TransamVariablesData global=TransamVariables gdb_runs=$BENCH_GEN_RUNS
	if ((CL_MAJOR < 17)); then struct=VariableCacheData global=ShmemVariableCache; fi
	((gdb_runs > 5)) && gdb_runs=5
	gen_time pahole "-C $struct" "$BENCH_GEN_RUNS" nextXid pahole -C "$struct" "$CL_BIN/postgres"
	gen_time gdb "print &$global->nextXid" "$gdb_runs" '$1 = (' \
		gdb -batch -p "$CL_PID" -ex "print &$global->nextXid"
}
