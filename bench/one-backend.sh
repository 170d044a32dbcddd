#!/usr/bin/env bash
# What a script that follows one backend costs all the others: the script
# follows an idle session (pid=IDLE, which never takes a lock), pgbench -S
# runs on two other backends, and bpftrace runs it as pgbt-gen's Run line
# says (bpftrace -p IDLE) or without -p, on each bpftrace of the test
# set-up. Every event a probe sees is then another backend's: what it
# costs is what the others pay.
#
#   sudo bench/one-backend.sh [OUT]     (default bench/results/one-backend)
#
# Three series of bench/waits-cost.sh (its windows, its CSV columns), each
# variant once per round in turning order: lock-events flat out (TPS),
# lock-events at a fixed rate every variant can hold (CPU time per
# transaction: the whole cost, where TPS only mirrors it), lwlock-events
# flat out (USDT probes on Debian's 15), session-trace flat out (its
# watchpoint armed on the idle backend where this machine's fire).
# OB_ROUNDS (5), OB_SECONDS (10), OB_RATE (1000 TPS), OB_SERIES (default
# all four: lock-events-select lock-events-rate lwlock-events-select
# session-trace-select). Holds /tmp/pgbt-e2e.lock for each
# series, as the bench does; a window others disturbed is measured again,
# up to 8 times (WC_REDO).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${PGBT_CACHE:=/var/cache/pgbt}"
out=${1:-$here/results/one-backend}
mkdir -p "$out"
: "${OB_ROUNDS:=5}" "${OB_SECONDS:=10}" "${OB_RATE:=1000}"
: "${OB_SERIES:=lock-events-select lock-events-rate lwlock-events-select session-trace-select}"

variants=(none=none)
for bt in "$(command -v bpftrace)" "$PGBT_CACHE/bin/bpftrace-trixie" "$PGBT_CACHE/bin/bpftrace-sid"; do
	[[ -x $bt ]] || { echo "one-backend: no $bt: its variants are left out" >&2; continue; }
	v=$("$bt" --version | sed -n 's/^bpftrace v\([0-9]*\.[0-9]*\).*/\1/p')
	variants+=("$v=$bt" "$v-p=$bt -p")
done

series() {
	local name=$1 tmp; shift
	tmp=$(mktemp -d /tmp/one-backend.XXXXXX)
	echo "== $name: $* ${variants[*]}" >&2
	env "$@" WC_REDO="${WC_REDO:-8}" WC_IDLE=1 WC_BASE=none WC_ROUNDS="$OB_ROUNDS" WC_SECONDS="$OB_SECONDS" WC_OUT="$tmp" \
		"$here/waits-cost.sh" "${variants[@]}" | tee "$out/$name.txt"
	cp "$tmp/runs.csv" "$out/$name.csv"
	rm -rf "$tmp"
}

for s in $OB_SERIES; do
	case $s in
	lock-events-select) series "$s" WC_SCRIPT=lock-events WC_ARGS=pid=IDLE WC_SHAPE=select ;;
	lock-events-rate) series "$s" WC_SCRIPT=lock-events WC_ARGS=pid=IDLE WC_SHAPE=select WC_RATE="$OB_RATE" ;;
	lwlock-events-select) series "$s" WC_SCRIPT=lwlock-events WC_ARGS=pid=IDLE WC_SHAPE=select ;;
	session-trace-select) series "$s" WC_SCRIPT=session-trace WC_ARGS=pid=IDLE WC_SHAPE=select WC_STRLEN=64 ;;
	*) echo "one-backend: no series '$s'" >&2; exit 2 ;;
	esac
done
