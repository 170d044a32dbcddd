#!/usr/bin/env bash
# Overhead of the lock scripts (lock-waits, locks, lwlocks, row-locks,
# spin-delays): pgbench -S -c 2 and TPC-B -c 2 TPS with each rendered
# script attached against a baseline in the same run (A B A B pairs, median
# of the per-pair ratios), through bench/waits-overhead.sh, which takes the
# machine-wide lock /tmp/pgbt-e2e.lock while it measures. Run as root.
#
# USAGE: bench/locks-overhead.sh [-v MAJOR] [-n PAIRS] [-T SECONDS] [SCRIPT[:NAME=V,...]...]
#   default: -v 15 -n 3 -T 8 and every lock script in its default mode,
#   plus the expensive modes (locks output=events, lwlocks output=all).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
V=15 PAIRS=3 SECS=8
while getopts "v:n:T:" o; do
	case $o in
	v) V=$OPTARG ;; n) PAIRS=$OPTARG ;; T) SECS=$OPTARG ;;
	*) sed -n '2,11p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
scripts=("$@")
((${#scripts[@]})) || scripts=(lock-waits locks locks:output=events lwlocks lwlocks:output=all
	row-locks spin-delays)
exec "$here/waits-overhead.sh" -v "$V" -n "$PAIRS" -T "$SECS" "${scripts[@]}"
