#!/usr/bin/env bash
# Every pgbt-gen command on the runbook pages (examples/*.md) renders for a
# real server and compiles on each bpftrace, so a page never shows a
# command that no longer works. The pages' variables are set as they say:
# PGDATA the server's data directory, BACKEND a backend's
# pg_stat_activity.pid, CONNINFO a connection string. A page without a
# command, or a command this test cannot run, fails. The compilations run
# two at a time (jobs_run: CPU-bound, they time nothing).
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

# The pgbt-gen part of each command line of PAGE (before any | or >), one
# a line; indented lines of code blocks only.
commands_of() {
	sed -n 's/^    \(sudo \)\{0,1\}\(pgbt-gen .*\)$/\2/p' "$1" | sed 's/ *[|>].*//'
}

# What bpftrace says compiling FILE, in FILE.cc.
compile() {
	bt_compile "$1" >"$1.cc"
}

test_leg() {
	# shellcheck disable=SC2046 # query_id_guc: one word or none
	cluster_start "$LEG_BUILD" $(query_id_guc "$LEG_BUILD")
	local page cmd n out i=0 checks=()
	export PGDATA=$CL_DATA
	export BACKEND CONNINFO="host=$CL_SOCK port=$CL_PORT user=postgres dbname=postgres"
	BACKEND=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	for page in "$PGBT_ROOT"/examples/*.md; do
		[[ ${page##*/} == README.md ]] && continue
		n=0
		while read -r cmd; do
			n=$((n + 1))
			i=$((i + 1)) out=$E2E_TMP/cmd-$i.bt
			# The page's words, with pgbt-gen the one under test.
			if ! eval "\"\$PGBT_GEN\" ${cmd#pgbt-gen }" >"$out" 2>"$out.err"; then
				# A script the page names may need what this build lacks
				# (sorts: USDT; by=queryid: 14's query_id); its one-line
				# refusal says so.
				if [[ ! -s $out && $(wc -l <"$out.err") == 1 ]] &&
					grep -qE 'has no USDT probes|needs PostgreSQL 14 or later' "$out.err"; then
					skip "$LEG: ${page##*/}: '$cmd': $(cat "$out.err")"
				else
					fail "$LEG: ${page##*/}: '$cmd' does not render: $(cat "$out.err")"
				fi
				continue
			fi
			checks+=("$out"$'\t'"$LEG: ${page##*/}: '$cmd' compiles")
			jobs_run compile "$out"
		done < <(commands_of "$page")
		((n > 0)) || fail "${page##*/}: no pgbt-gen command found"
	done
	jobs_wait
	local c
	for c in "${checks[@]}"; do
		check_empty "${c#*$'\t'}" "$(cat "${c%%$'\t'*}.cc")"
	done
	cluster_stop
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" && test_leg
done
e2e_done
