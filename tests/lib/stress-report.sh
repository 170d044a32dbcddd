#!/usr/bin/env bash
# What repeated runs of e2e files said, check by check (tests/run with
# PGBT_STRESS=N calls it with one file per run: that run's stdout and
# stderr). A check is its label, digits after the leg shown as '#', so the
# same check matches from run to run.
#
# Prints every check that failed at least once (passes, failures), then,
# for each check with a tolerance (check_near), how far its figure was from
# the one wanted: the worst and the median |got - want| as a share of the
# tolerance, over all runs, the closest calls first; for a check between
# bounds (check_between), how far past the nearer bound, as a share of
# the slack (0 when inside).
set -euo pipefail
(($#)) || { echo "usage: stress-report.sh RUN_OUTPUT..." >&2; exit 2; }

awk '
function key(what,   leg, rest, i) {
	i = index(what, ": ")
	if (i == 0) { leg = ""; rest = what } else { leg = substr(what, 1, i + 1); rest = substr(what, i + 2) }
	gsub(/[0-9]+(\.[0-9]+)?/, "#", rest)
	return leg rest
}
function near(k, got, want, tol,   d) {
	d = got - want; if (d < 0) d = -d
	r = (tol > 0) ? d / tol : (d > 0 ? 99 : 0)
	nn[k]++; share[k, nn[k]] = r
}
# A figure between two bounds (check_between): how far past the nearer
# bound, as a share of the slack (<= 1 passes; 0 at the bound itself).
function between(k, got, lo, hi, slack,   over) {
	over = (got < lo) ? lo - got : (got > hi) ? got - hi : 0
	r = (slack > 0) ? over / slack : (over > 0 ? 99 : 0)
	nn[k]++; share[k, nn[k]] = r
}
FNR == 1 { runs++ }
/^ok: / {
	line = substr($0, 5)
	if (match(line, / = [-+0-9.eE]+ \(want \[[-+0-9.eE]+, [-+0-9.eE]+\] \+- [-+0-9.eE]+\)$/)) {
		what = substr(line, 1, RSTART - 1); split(substr(line, RSTART + 3), f, /[][ (),]+/)
		k = key(what); pass[k]++; between(k, f[1], f[3], f[4], f[6])
	} else if (match(line, / = [-+0-9.eE]+ \(want [-+0-9.eE]+ \+- [-+0-9.eE]+\)$/)) {
		what = substr(line, 1, RSTART - 1); split(substr(line, RSTART + 3), f, /[ ()]+/)
		k = key(what); pass[k]++; near(k, f[1], f[3], f[5])
	} else {
		i = length(line); while (i > 0 && substr(line, i, 3) != " = ") i--
		k = key(i > 0 ? substr(line, 1, i - 1) : line); pass[k]++
	}
	next
}
/^FAIL: / {
	line = substr($0, 7)
	i = index(line, ": got ")
	what = i ? substr(line, 1, i - 1) : line
	k = key(what); fails[k]++
	if (match(line, /: got [-+0-9.eE]+, want \[[-+0-9.eE]+, [-+0-9.eE]+\] \+- [-+0-9.eE]+$/)) {
		split(substr(line, RSTART + 6), f, /[][ ,]+/); between(k, f[1], f[3], f[4], f[6])
	} else if (match(line, /: got [-+0-9.eE]+, want [-+0-9.eE]+ \+- [-+0-9.eE]+$/)) {
		split(substr(line, RSTART + 6), f, /[ ,]+/); near(k, f[1], f[3], f[5])
	}
}
END {
	printf "stress: %d runs\n", runs
	printf "checks that failed (passed, failed):\n"
	for (k in fails) printf "  %s (%d, %d)\n", k, pass[k], fails[k] | "sort"
	close("sort")
	printf "checks with a tolerance: worst and median |got - want| / tolerance (runs):\n"
	for (k in nn) {
		n = nn[k]
		for (i = 1; i <= n; i++) {    # insertion sort (mawk has no asort)
			x = share[k, i]
			for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]
			v[j + 1] = x
		}
		printf "  %5.2f %5.2f (%d)  %s\n", v[n], v[int((n + 1) / 2)], n, k | "sort -rn"
	}
	close("sort -rn")
}' "$@"
