#!/usr/bin/env bash
# Checks a rendered bpftrace program against the language subset that runs
# on bpftrace 0.17 through current releases, and against pgbt's own rules.
# Prints one line per violation ("FILE:LINE: rule") and exits 1 if any.
#
#   tests/lint/bt-subset.sh rendered.bt [POSTMASTER_PID [BACKEND_PID]]
#
# With POSTMASTER_PID, every probe that can fire for foreign processes
# (uprobes, USDT, watchpoints, tracepoints, profile) must carry a predicate
# naming it (or BACKEND_PID, the one backend a rendering was asked to
# follow), or testing state that such a filtered probe set for this
# process (@map[pid], @map[tid]): uprobes and system-wide watchpoints fire
# for any process, and -p does not filter uprobes before bpftrace 0.20.
# A probe that must see every process (a scheduler or block event, whose
# task is not the one it concerns) says so in a comment line right above
# it: "// every process: WHY".
#
# A rendering for a newer bpftrace (its provenance line "// bpftrace:
# v0.23.2 ...", written by pgbt-gen) may use what that version has: map
# iteration, `for ($kv : @map)`, from 0.21; a loop over a range, `for ($i :
# A..B)`, from 0.24. Without that line: 0.17. `while` (in 0.17; deprecated
# from 0.25 in favour of range loops, and 0.27 warns) only in a rendering
# for a bpftrace before 0.25 (bpftrace's CHANGELOG.md: 0.24.0 "For loops
# now support `..` ranges", 0.25.0 "`while` is now deprecated").
set -euo pipefail
file=${1:?usage: bt-subset.sh FILE [POSTMASTER_PID]}
pm=${2:-}
backend=${3:-}

awk -v file="$file" -v pm="$pm" -v backend="$backend" '
function bad(rule) { printf("%s:%d: %s\n", file, NR, rule); n++ }
# Code only: drop // comments and /* */ blocks (strings keep their
# slashes). A // comment goes first: "// tools/*.bt" opens no block.
{
	line = $0
	if (match($0, /^\/\/ bpftrace: +v[0-9]+\.[0-9]+/)) {
		split(substr($0, RSTART, RLENGTH), ver, /v|\./)
		minor = ver[3] + 0 + 1000 * ver[2]    # 0.21 -> 21
	}
	if ($0 ~ /^\/\/ every process: [^ ]/) { every = 1; next }
	if (!in_block) {
		sub(/^[ \t]*\/\/.*/, "", line)
		sub(/[ \t]+\/\/[^"]*$/, "", line)
	}
	if (in_block) { if (sub(/.*\*\//, "", line)) in_block = 0; else next }
	while (match(line, /\/\*/)) {
		rest = substr(line, RSTART + 2)
		if (match(rest, /\*\//)) line = substr(line, 1, RSTART - 1) substr(rest, RSTART + 2)
		else { line = substr(line, 1, RSTART - 1); in_block = 1 }
	}
	sub(/^[ \t]*\/\/.*/, "", line)
	sub(/[ \t]+\/\/[^"]*$/, "", line)
	# {{pg_pid}} in a container: the PID in the server namespace
	gsub(/\(uint64\)\*\(uint32 \*\)kptr\(\(uint8 \*\)curtask->thread_pid \+ sizeof\(struct pid\) \+ [0-9]+ \* sizeof\(struct upid\)\)/, "pid", line)
}
line ~ /\{\{|\}\}/                      { bad("unrendered placeholder") }
line ~ /^BEGIN/                         { if (++begins > 1) bad("more than one BEGIN") }
line ~ /^END/                           { if (++ends > 1) bad("more than one END") }
line ~ /(^|[^a-z_])config[ \t]*=/       { bad("config block (bpftrace >= 0.20)") }
line ~ /(^|[;{ \t])let[ \t]/            { bad("let (bpftrace >= 0.22)") }
line ~ /(^|[;{ \t])while[ \t]*\(/     { if (minor >= 25) bad("while (0.17 to 0.24 only: 0.25 deprecates it)") }
line ~ /(^|[;{ \t])for[ \t]*\(/ {
	if (line ~ /(^|[;{ \t])for[ \t]*\(\$[A-Za-z_0-9]+[ \t]*:[ \t]*@[A-Za-z_0-9]+[ \t]*\)/) {
		if (minor < 21)
			bad("loop (not in 0.17; for ($kv : @map) from 0.21, for a rendering that says so)")
	} else if (line ~ /(^|[;{ \t])for[ \t]*\(\$[A-Za-z_0-9]+[ \t]*:[ \t]*[^;]*\.\.[^;]*\)/) {
		if (minor < 24)
			bad("range loop (not before 0.24; for ($i : A..B) from 0.24, for a rendering that says so)")
	} else {
		bad("loop (not in 0.17; for ($kv : @map) from 0.21, for ($i : A..B) from 0.24, for a rendering that says so)")
	}
}
line ~ /(^|[;{ \t])(break|continue)[ \t]*;/ { bad("break/continue") }
line ~ /offsetof[ \t]*\(/               { bad("offsetof() (bpftrace >= 0.18): emit numbers") }
line ~ /uaddr[ \t]*\(/                  { bad("uaddr() (unrelocated before 0.25): emit addresses") }
line ~ /(^|[^a-z_])args\./              { bad("args.field (>= 0.19): use args->field") }
line ~ /^(interval|profile):([a-z]+:)?[0-9]+(ns|us|ms|s|m|h|hz)([ \t,{].*)?$/ { bad("duration literal in probe: use interval:s:N") }
line ~ /^(kprobe|kretprobe|kfunc|kretfunc|fentry|fexit):/ { bad("kprobes are not available on the kernels pgbt targets") }
line ~ /^watchpoint:/ {
	if (line !~ /^watchpoint:0x[0-9a-f]+:[1248]:(w|rw)[ \t]*$/) bad("watchpoint not as watchpoint:0xADDR:LEN:w|rw")
	if (++watchpoints > 4) bad("more than 4 watchpoints (4 debug registers)")
}
# A probe that can fire for other processes must filter to the cluster.
line ~ /^(uprobe|uretprobe|usdt|watchpoint|tracepoint|profile|software|rawtracepoint):/ {
	want_filter = every ? 0 : NR; every = 0; next
}
line !~ /^[ \t]*$/ { every = 0 }
want_filter && line ~ /^[ \t]*$/ { next }
want_filter {
	# Either the postmaster itself, or state a filtered probe keyed by
	# this process (@map[pid] / @map[tid]).
	if (pm != "" && (line !~ /^\// || (index(line, pm) == 0 && (backend == "" || index(line, "pid == " backend) == 0) &&
	    line !~ /@[A-Za-z_0-9]+\[(pid|tid)\]/))) {
		printf("%s:%d: probe without a predicate naming the postmaster %s\n", file, want_filter, pm)
		n++
	}
	want_filter = 0
}
END { exit n ? 1 : 0 }
' "$file"
