#!/usr/bin/env bash
# What an XID costs through each mechanism of xid-rate on this machine:
#
#   sudo bench/xid-cost.sh [OUT_DIR]
#
# 1. build/calibrate's rows for the probes each mechanism takes: a
#    uretprobe whose function starts with push %rbp (GetNewTransactionId
#    on most builds) or endbr64 (CET builds such as Debian 13's: the
#    kernel single-steps it), and a hardware watchpoint on a shared
#    mapping (nextXid's place), where watchpoints fire: the trap's cost
#    per event in a hot loop and in a client/server pair.
# 2. bench/waits-cost.sh: xid-rate under pgbench TPC-B (one XID per
#    transaction) at a fixed rate, on Debian's 15 (push) and on Debian
#    13's 17 (ct17, endbr64), with nothing attached (an idle bpftrace),
#    via=uprobe under each bpftrace here and via=watchpoint (where they
#    fire): BPF time per XID (the uprobe and perf-event programs: not
#    server-gone's tracepoints, which run for every process of the
#    machine) and the CPU time the machine spends per transaction, less
#    that with nothing attached in the same round.
#
# Holds /tmp/pgbt-e2e.lock throughout (about 20 minutes). Results in
# OUT_DIR (default bench/results/xid-mechanisms): probe-cost.csv, and per
# build BUILD/runs.csv, BUILD/summary.txt. Env: XC_RATE (TPS pgbench
# holds, 2000), XC_ROUNDS (5), XC_SECONDS (10 per window), XC_BUILDS
# ("15 ct17"), XC_CALIBRATE (1; 0 skips step 1).
set -euo pipefail
source "$(dirname "$0")/../tests/lib/cluster.sh"
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || bench_die "run as root"
out=${1:-$BENCH_RESULTS/xid-mechanisms}
mkdir -p "$out"
: "${XC_RATE:=2000}" "${XC_ROUNDS:=5}" "${XC_SECONDS:=10}" "${XC_BUILDS:=15 ct17}"

bench_lock
calibrate_build
"$PGBT_GEN" check-watchpoints >"$out/watchpoints.txt" 2>&1 && fire=1 || fire=
{ date -u '+%Y-%m-%d %H:%MZ'; uptime; } >"$out/machine.txt"

rows=(uprobe-push uretprobe-push uprobe-endbr uretprobe-endbr)
[[ -n $fire ]] && rows+=(watchpoint watchpoint-shm)
if [[ ${XC_CALIBRATE:-1} == 1 ]]; then
	bench_log "calibrate: ${rows[*]}"
	"$BENCH_CALIBRATE" -c "${rows[@]}" >"$out/probe-cost.csv" 2>"$out/calibrate.log" ||
		bench_log "calibrate failed: $(tail -n 1 "$out/calibrate.log")"
fi

# The bpftraces here: the system's, Debian 13's and unstable's roots.
variants=("none=$(command -v bpftrace):@$BENCH_DIR/programs/nothing.bt")
for bt in "$(command -v bpftrace)" "$PGBT_CACHE"/bin/bpftrace-trixie "$PGBT_CACHE"/bin/bpftrace-sid; do
	[[ -x $bt ]] || continue
	v=$("$bt" --version 2>/dev/null | sed -n 's/^bpftrace v0\.\([0-9]*\).*/\1/p')
	variants+=("uprobe$v=$bt")
	[[ -n $fire ]] && variants+=("watch$v=$bt") && export "WC_ARGS_watch$v=via=watchpoint"
done
for build in $XC_BUILDS; do
	bench_log "xid-rate on $build: ${variants[*]%%=*}"
	mkdir -p "$out/$build"
	WC_LOCK=0 WC_BUILD=$build WC_SCRIPT=xid-rate WC_ARGS=via=uprobe WC_SHAPE=tpcb \
		WC_RATE=$XC_RATE WC_ROUNDS=$XC_ROUNDS WC_SECONDS=$XC_SECONDS WC_BASE=none \
		WC_PROG_TYPES="2 7" WC_OUT="$out/$build" \
		"$BENCH_DIR/waits-cost.sh" "${variants[@]}" >"$out/$build/summary.txt"
	rm -f "$out/$build"/*.log "$out/$build"/*-diff "$out/$build"/sort.sql "$out/$build"/pgbench.out
done
{ date -u '+%Y-%m-%d %H:%MZ'; uptime; } >>"$out/machine.txt"
bench_log "done: $out"
