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
#
# Measured 2026-11-22 on the project's VM (2 cores, Debian's stripped 15,
# pgbench -c 2 -j 2, 3 pairs of 6 s, median TPS ratio traced/baseline; the
# machine is noisy: single ratios spread by +-0.1 and more):
#   script                 -S      TPC-B
#   lock-waits             1.065   1.011
#   locks (summary)        0.677   0.720
#   locks output=events    0.117   0.237   (every backend, no pid=)
#   lwlocks (waits)        0.900   0.987
#   lwlocks output=all     0.560   0.591
#   row-locks              0.973   0.984
#   spin-delays            0.962   0.855   (ratios 1.32 0.86 0.46; BPF 0.12% CPU)
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
