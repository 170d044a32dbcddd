#!/bin/sh
# The man page (stdin) with an entry per script of `PGBT_GEN list` (its
# name and summary) after the line that marks their place: the list comes
# from the scripts themselves, so a new script needs no edit here.
set -eu
gen=$1
list=$("$gen" list) || exit 1
awk -v list="$list" '
	{ print }
	/^\.\\" Each script.s entry is added here/ {
		n = split(list, line, "\n")
		for (i = 2; i <= n; i++) {
			# "NAME  NEEDS...   SUMMARY": the summary starts with a capital
			# after three blanks.
			if (!match(line[i], /   [A-Z]/))
				continue
			name = line[i]; sub(/ .*/, "", name)
			print ".TP"
			print ".B " name
			print substr(line[i], RSTART + 3)
		}
	}'
