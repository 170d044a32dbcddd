#!/usr/bin/env bash
# No import circles in pgbt's C: prints one line per circle and exits 1 if
# there is any, else prints nothing and exits 0.
#
#   tests/lint/imports.sh [ROOT]      (default: this repository)
#
# A unit is a source and its header (lib/found/proc.c with
# lib/found/proc.h) under lib/, gen/ and report/. Unit A imports unit B
# when a file of A includes a header of B (by a name from ROOT, or bare
# from the same folder, as the Makefile's -iquote . reads them), or when
# A's .c uses a function that only B's .c defines (gen/cli.h declares the
# functions of several gen/*.c: their calls are what ties those). A
# circle is a set of units each reaching the others through imports; its
# line shows one loop through it, with what ties each step (and the
# circle's other units, when it has more):
#   circle: lib/x/a -> lib/y/b -> lib/x/a (lib/x/a.c includes lib/y/b.h; lib/y/b.c uses pgbt_a_x)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

files=$(find lib gen report -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
[[ -n $files ]] || { echo "imports.sh: no C files under $root/{lib,gen,report}" >&2; exit 2; }

# shellcheck disable=SC2086 # one word per file
circles=$(awk -v list="$files" '
BEGIN { n = split(list, l, "\n"); for (i = 1; i <= n; i++) exists[l[i]] = 1 }
function unit(path) { sub(/\.[ch]$/, "", path); return path }
function dirof(path) { return path ~ /\// ? substr(path, 1, match(path, /\/[^\/]*$/)) : "" }
function edge(a, b, why) {
	if (a == b) return
	if (!((a, b) in why_of)) { why_of[a, b] = why; out[a] = out[a] " " b }
	units[a] = 1; units[b] = 1
}
# Code with comments, strings and character literals blanked.
function code(line,    s, q) {
	if (in_comment) {
		if (!(q = index(line, "*/"))) return ""
		line = substr(line, q + 2); in_comment = 0
	}
	gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
	gsub(/\047([^\047\\]|\\.)*\047/, "0", line)
	gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", line)
	sub(/\/\/.*/, "", line)
	if ((q = index(line, "/*"))) { line = substr(line, 1, q - 1); in_comment = 1 }
	return line
}
FNR == 1 { in_comment = 0; u = unit(FILENAME); units[u] = 1; is_c = FILENAME ~ /\.c$/ }
# Includes: bare from the same folder first, else from the root.
/^[ \t]*#[ \t]*include[ \t]*"/ {
	name = $0; sub(/^[^"]*"/, "", name); sub(/".*/, "", name)
	if ((dirof(FILENAME) name) in exists) edge(u, unit(dirof(FILENAME) name), FILENAME " includes " dirof(FILENAME) name)
	else if (name in exists) edge(u, unit(name), FILENAME " includes " name)
	next
}
is_c {
	line = code($0)
	# A definition: a line at the margin naming a function, not ending a
	# declaration; "static" ones are the file'"'"'s own.
	if (line ~ /^[A-Za-z_][A-Za-z0-9_ \t*]*[ \t*][A-Za-z_][A-Za-z0-9_]*\(/ && line !~ /;[ \t]*$/ &&
	    line !~ /^(typedef|extern|return|else|if|while|for|switch|do)[ \t(]/) {
		name = line; sub(/\(.*/, "", name); sub(/.*[ \t*]/, "", name)
		if (line ~ /^static[ \t]/) own[FILENAME, name] = 1
		else if (name == "main") ;   # the program'"'"'s entry: nobody'"'"'s import
		else { defs[name] = defs[name] " " u; defined_in[name] = FILENAME }
	}
	n = split(line, words, /[^A-Za-z0-9_]+/)
	for (i = 1; i <= n; i++)
		if (words[i] ~ /^[A-Za-z_]/) used[FILENAME, words[i]] = 1
}
# Tarjan: the strongly connected units.
function connect(v,    rest, w, k) {
	index_of[v] = low[v] = ++counter; stack[++top] = v; on_stack[v] = 1
	rest = out[v]
	while (rest != "") {
		sub(/^ /, "", rest); w = rest; sub(/ .*/, "", w)
		if (index(rest, " ")) rest = substr(rest, index(rest, " ")); else rest = ""
		if (!(w in index_of)) { connect(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (on_stack[w] && index_of[w] < low[v]) low[v] = index_of[w]
	}
	if (low[v] == index_of[v]) {
		k = ++ncomp
		do { w = stack[top--]; on_stack[w] = 0; comp[w] = k; size[k]++ } while (w != v)
	}
}
# One loop from s back to s inside its component (breadth first).
function loop(s,    q, head, tail, v, rest, w, path, why, x) {
	split("", prev); head = 1; tail = 0; q[++tail] = s; prev[s] = ""
	while (head <= tail) {
		v = q[head++]; rest = out[v]
		while (rest != "") {
			sub(/^ /, "", rest); w = rest; sub(/ .*/, "", w)
			if (index(rest, " ")) rest = substr(rest, index(rest, " ")); else rest = ""
			if (comp[w] != comp[s]) continue
			if (w == s) {
				path = s; why = why_of[v, s]
				for (x = v; x != s; x = prev[x]) { path = x " -> " path; why = why_of[prev[x], x] "; " why }
				return s " -> " path " (" why ")"
			}
			if (!(w in prev)) { prev[w] = v; q[++tail] = w }
		}
	}
}
END {
	for (k in used) {
		split(k, p, SUBSEP); f = p[1]; name = p[2]
		if (!(name in defs) || (f, name) in own) continue
		# a name two units define is no tie to either
		if (split(defs[name], d, " ") != 1) continue
		edge(unit(f), d[1], f " uses " name)
	}
	for (v in units) if (!(v in index_of)) connect(v)
	for (v in units)
		if (size[comp[v]] > 1 && (!(comp[v] in first) || v < first[comp[v]]))
			first[comp[v]] = v
	for (v in units) if (size[comp[v]] > 1) members[comp[v]] = members[comp[v]] " " v
	for (k in first) {
		line = "circle: " loop(first[k])
		# a larger circle holds more loops than the one shown: name all
		if (split(line, steps, " -> ") - 1 < size[k]) line = line ", among" members[k]
		print line
	}
}
' $files | LC_ALL=C sort)
[[ -z $circles ]] || { printf '%s\n' "$circles"; exit 1; }
