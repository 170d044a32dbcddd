#!/usr/bin/env bash
# The command line and the installation: list shows every script with what
# it needs; --help and --version; `make install` puts the binary, the
# templates and the man page under DESTDIR/PREFIX; a copied pgbt-gen works
# alone (templates are built in) and --scripts-dir overrides them.
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

test_list() {
	local out f name summary
	out=$("$PGBT_GEN" list)
	check_contains "list: header" "$out" "SCRIPT"
	for f in "$PGBT_ROOT"/scripts/*.bt; do
		name=$(basename "$f" .bt)
		summary=$(sed -n "s/^ \* $name\t//p" "$f" | head -n1)
		check_contains "list: $name with its summary" "$out" "$summary"
	done
	check_contains "list: what xid-rate needs" "$(grep '^xid-rate ' <<<"$out")" \
		"running server, DWARF or layout"
}

test_help_version() {
	local out rc=0
	out=$("$PGBT_GEN" --help) || rc=$?
	check_eq "--help exits 0" "$rc" 0
	check_contains "--help: usage" "$out" "Usage: pgbt-gen [TARGET] SCRIPT [NAME=VALUE...]"
	check_eq "--version" "$("$PGBT_GEN" --version)" \
		"pgbt-gen $(sed -n '1s/^pgbt (\([^)]*\)).*/\1/p' "$PGBT_ROOT/debian/changelog")"
}

test_install() {
	local dest=$E2E_TMP/dest
	make -s -C "$PGBT_ROOT" install DESTDIR="$dest" PREFIX=/opt/pgbt >/dev/null
	check_eq "install: binary" "$(test -x "$dest/opt/pgbt/bin/pgbt-gen" && echo yes)" yes
	check_eq "install: templates" "$(cd "$dest/opt/pgbt/share/pgbt/scripts" && ls ./*.bt ./include/*.bt 2>/dev/null | paste -sd' ')" \
		"$(cd "$PGBT_ROOT/scripts" && ls ./*.bt ./include/*.bt 2>/dev/null | paste -sd' ')"
	local man
	man=$(MANWIDTH=200 man -l "$dest/opt/pgbt/share/man/man1/pgbt-gen.1" 2>/dev/null | col -bx | tr -s " ")
	check_contains "install: man page renders" "$man" "pgbt-gen - render bpftrace"
	# its SCRIPTS section: every script listed, each with its summary
	check_eq "install: the man page lists every script with its summary" \
		"$(awk '/^SCRIPTS/ { on = 1; next } /^[A-Z]/ { on = 0 } on && /^ [a-z0-9-]+( [A-Z]|$)/ { print $1 }' <<<"$man" | paste -sd' ')" \
		"$("$PGBT_GEN" list | awk 'NR > 1 { print $1 }' | paste -sd' ')"
	check_contains "install: the man page gives waits' summary" "$man" \
		"$("$PGBT_GEN" help waits | head -n 1 | cut -f 2 | cut -c 1-40)"

	# A copy of the binary alone, in an empty directory, renders for a live
	# server exactly what the build tree's does.
	mkdir -p "$E2E_TMP/alone" && cp "$dest/opt/pgbt/bin/pgbt-gen" "$E2E_TMP/alone/"
	cluster_start 15
	local a b
	a=$(cd "$E2E_TMP/alone" && ./pgbt-gen -p "$CL_PID" xid-events)
	b=$("$PGBT_GEN" -p "$CL_PID" xid-events)
	check_eq "copied binary renders the same script" "$a" "$b"
	check_contains "copied binary: built-in template" "$a" "from xid-events (built in)"
	# --scripts-dir: the installed templates give the same body, with their origin.
	a=$("$PGBT_GEN" --scripts-dir "$dest/opt/pgbt/share/pgbt/scripts" -p "$CL_PID" xid-events)
	check_contains "--scripts-dir names the file" "$a" \
		"from xid-events ($dest/opt/pgbt/share/pgbt/scripts/xid-events.bt)"
	check_eq "--scripts-dir: same program" "$(grep -v '^// Rendered' <<<"$a")" \
		"$(grep -v '^// Rendered' <<<"$b")"
	cluster_stop
}

# help SCRIPT: the header (every line of it), each parameter with its
# type, default and meaning, the needs; with a target, whether it renders
# there (with the parameters given) and why not. Bad input: one line on
# stderr, nothing on stdout.
test_help_script() {
	local out rc=0 f=$PGBT_ROOT/scripts/io-latency.bt line
	out=$("$PGBT_GEN" help io-latency) || rc=$?
	check_eq "help io-latency exits 0" "$rc" 0
	while IFS= read -r line; do
		check_contains "help io-latency: header line '${line:0:40}'" "$out" "$line"
	done < <(sed -n '3,/^ \*\//s/^ \* //p' "$f" | grep -v '^$' | head -n 12)
	check_contains "help io-latency: slow_ms with type, default, meaning" "$out" \
		"slow_ms         integer 0..600000, default 0: print each request taking at least this many ms (0: none)"
	check_contains "help io-latency: needs" "$out" "Needs: running server, DWARF or layout."
	rc=0; out=$("$PGBT_GEN" help no-such-script 2>"$E2E_TMP/help.err") || rc=$?
	check_eq "help of an unknown script: exit 1, nothing on stdout" "$rc:$out" "1:"
	check_eq "help of an unknown script: one line naming it" \
		"$(wc -l <"$E2E_TMP/help.err"):$(grep -c "no-such-script" "$E2E_TMP/help.err")" "1:1"
	rc=0; out=$("$PGBT_GEN" help 2>"$E2E_TMP/help.err") || rc=$?
	check_eq "help without a script: usage error (2), nothing on stdout" "$rc:$out" "2:"
	cluster_start 15
	rc=0; out=$("$PGBT_GEN" -p "$CL_PID" help waits per_backend=off) || rc=$?
	check_contains "help with a target: it renders there" "$out" "On this server: it renders"
	rc=0; out=$("$PGBT_GEN" -p "$CL_PID" help backend-waits) || rc=$?
	check_eq "help with a target that cannot render it: exit 1" "$rc" 1
	check_contains "help with a target: why not" "$out" "On this server: it does not render: "
	# A script that follows one backend: how to run it (bpftrace -p), and
	# with a target and pid=, the exact command.
	check_contains "help lock-events: how to run it" "$("$PGBT_GEN" help lock-events)" \
		"Run: with pid=PID, give bpftrace -p and that backend's PID on this host"
	local b
	b=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	check_contains "help with a target and pid=: the command" \
		"$("$PGBT_GEN" -p "$CL_PID" help lock-events pid="$b")" \
		"On this server: it renders; run it as  $PGBT_GEN -p $CL_PID lock-events pid=$b | bpftrace -p $b -"
	cluster_stop
}

# pgbt-gen run: bad input is one line on stderr and nothing else (the
# runs themselves: tests/e2e/locks-events.sh).
test_run() {
	local rc=0 out
	out=$("$PGBT_GEN" run 2>"$E2E_TMP/run.err") || rc=$?
	check_eq "run without a script: usage error (2), nothing on stdout" "$rc:$out" "2:"
	check_eq "run without a script: one line" "$(wc -l <"$E2E_TMP/run.err")" 1
	cluster_start 15
	rc=0; out=$("$PGBT_GEN" --bpftrace 0.23 -p "$CL_PID" run xid-rate 2>"$E2E_TMP/run.err") || rc=$?
	check_eq "run rendered for a version: exit 1, nothing on stdout" "$rc:$out" "1:"
	check_eq "run rendered for a version: one line saying why" \
		"$(wc -l <"$E2E_TMP/run.err"):$(grep -c 'no bpftrace to run' "$E2E_TMP/run.err")" "1:1"
	rc=0; out=$("$PGBT_GEN" -p "$CL_PID" run lock-events pid=1 2>"$E2E_TMP/run.err") || rc=$?
	check_eq "run of a script that does not render: exit 1, one line" \
		"$rc:$out:$(wc -l <"$E2E_TMP/run.err")" "1::1"
	cluster_stop
}

# Every script's help has the parts of its header (usage, what it cannot
# see, its cost line, the page of its documentation), the page exists,
# docs/scripts/README.md links it, and the header stays short (the long
# explanations live on the page).
test_help_every_script() {
	local f name out lines problems
	for f in "$PGBT_ROOT"/scripts/*.bt; do
		name=$(basename "$f" .bt) problems=""
		out=$("$PGBT_GEN" help "$name" 2>&1) || problems+=" help-fails"
		[[ $out == *$'\nUSAGE: pgbt-gen '* ]] || problems+=" no-usage"
		[[ $out == *$'\nNot seen'* ]] || problems+=" no-not-seen"
		[[ $out == *$'\nCost: '* ]] || problems+=" no-cost-line"
		[[ $out == *$'\nDocumentation: docs/scripts/'"$name.md"$'\n'* ]] || problems+=" no-doc-line"
		[[ -f $PGBT_ROOT/docs/scripts/$name.md ]] || problems+=" no-doc-page"
		grep -q "]($name.md)" "$PGBT_ROOT/docs/scripts/README.md" || problems+=" not-in-doc-index"
		lines=$(sed -n '2,/^ \*\//p' "$f" | wc -l)
		((lines <= 26)) || problems+=" header-of-$lines-lines"
		check_empty "help $name: header parts, doc page, short header" "$problems"
	done
}

# A template chooses USDT where the build has the probe (Debian's 15 is
# built with --enable-dtrace), a uprobe where not (a copy with its notes
# removed).
test_usdt_choice() {
	local pg15=/usr/lib/postgresql/15/bin/postgres templates=$PGBT_ROOT/tests/e2e/templates
	check_contains "USDT where the build has it" \
		"$("$PGBT_GEN" --scripts-dir "$templates" --bin "$pg15" probe-choice)" \
		"usdt:$pg15:postgresql:query__start"
	objcopy --remove-section .note.stapsdt "$pg15" "$E2E_TMP/postgres-nousdt"
	check_contains "a uprobe where it does not" \
		"$("$PGBT_GEN" --scripts-dir "$templates" --bin "$E2E_TMP/postgres-nousdt" probe-choice)" \
		"uprobe:$E2E_TMP/postgres-nousdt:exec_simple_query"
}

# {{include NAME}} inserts scripts/include/NAME.bt, rendered with the
# including script's target; a missing fragment is an error naming it.
test_include() {
	local pg15=/usr/lib/postgresql/15/bin/postgres templates=$PGBT_ROOT/tests/e2e/templates
	local out rc=0
	out=$("$PGBT_GEN" --scripts-dir "$templates" --bin "$pg15" include-user) || rc=$?
	check_eq "include: renders" "$rc" 0
	check_contains "include: the fragment, rendered for the target" "$out" \
		$'\t@tag[10] = "advisory";\n\texit();'
	rc=0
	out=$("$PGBT_GEN" --scripts-dir "$templates" --bin "$pg15" include-missing 2>"$E2E_TMP/inc.err") || rc=$?
	check_eq "include: missing fragment exits non-zero" "$((rc != 0))" 1
	check_eq "include: missing fragment, nothing on stdout" "$out" ""
	check_eq "include: the error names the line and the fragment" "$(cat "$E2E_TMP/inc.err")" \
		"pgbt-gen: include-missing:10: {{include no-such-fragment}}: no include/no-such-fragment.bt in $templates"
	check_eq "list: fragments are not scripts" \
		"$("$PGBT_GEN" list | awk 'NR > 1 { print $1 }' | grep -c /)" 0
}

# A script on a hardware watchpoint is refused where watchpoints never
# fire (it would print zeros); rendered, and says nothing, where they do.
# The XID scripts' default (via=auto) takes no watchpoint: it renders on
# either kind of machine.
test_watchpoint_check() {
	local rc=0 out
	cluster_start 15
	out=$(PGBT_WATCHPOINT_CHECK= "$PGBT_GEN" -p "$CL_PID" xid-rate 2>"$E2E_TMP/wp.err") || rc=$?
	check_eq "xid-rate (via=auto) renders on any machine" "$rc:$(cat "$E2E_TMP/wp.err")" "0:"
	check_eq "xid-rate (via=auto) takes no watchpoint" "$(grep -c '^watchpoint:' <<<"$out" || true)" 0
	# backend-waits (via=auto) is never refused: its watchpoint where they
	# fire, else (Debian's 15 has no USDT wait probes) sched_switch.
	local bp want=sched_switch
	bp=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	watchpoints_fire && want="a hardware watchpoint"
	rc=0
	out=$(PGBT_WATCHPOINT_CHECK= "$PGBT_GEN" -p "$CL_PID" backend-waits pid="$bp" 2>"$E2E_TMP/wp.err") || rc=$?
	# (stderr: the Run line's command, where the mechanism follows the backend)
	check_eq "backend-waits (via=auto) renders on any machine" \
		"$rc:$(grep -v "^pgbt-gen: backend-waits follows PID $bp: run it as " "$E2E_TMP/wp.err")" "0:"
	if [[ $want == sched_switch ]]; then
		check_eq "backend-waits via sched_switch: no bpftrace -p (tracepoints must see others)" \
			"$(grep -c "^// Run:" <<<"$out")" 0
	else
		check_eq "backend-waits via a watchpoint: run with bpftrace -p" "$(grep -c "^// Run: .* -p $bp -" <<<"$out")" 1
	fi
	check_contains "backend-waits (via=auto) takes what works here" "$(grep '^// mechanism:' <<<"$out")" \
		"// mechanism:  $want"
	rc=0
	out=$(PGBT_WATCHPOINT_CHECK= "$PGBT_GEN" -p "$CL_PID" xid-rate via=watchpoint 2>"$E2E_TMP/wp.err") || rc=$?
	if watchpoints_fire; then
		check_eq "watchpoints fire here: xid-rate via=watchpoint renders" "$rc:$(cat "$E2E_TMP/wp.err")" "0:"
		check_contains "watchpoints fire here: xid-rate has its watchpoint" "$out" $'\nwatchpoint:0x'
		cluster_stop
		return 0
	fi
	check_eq "watchpoints never fire here: xid-rate via=watchpoint refused, nothing on stdout" "$rc:$out" "1:"
	check_eq "watchpoints never fire here: the refusal is one line" "$(wc -l <"$E2E_TMP/wp.err")" 1
	check_contains "watchpoints never fire here: the refusal names the cause" "$(cat "$E2E_TMP/wp.err")" \
		"pgbt-gen: xid-rate: this machine's hardware watchpoints do not fire"
	rc=0
	PGBT_WATCHPOINT_CHECK= "$PGBT_GEN" -p "$CL_PID" waits >/dev/null 2>&1 || rc=$?
	check_eq "watchpoints never fire here: a script without one still renders" "$rc" 0
	rc=0
	PGBT_WATCHPOINT_CHECK= "$PGBT_GEN" check-watchpoints >/dev/null 2>&1 || rc=$?
	check_eq "watchpoints never fire here: check-watchpoints exits 1" "$rc" 1
	cluster_stop
}

test_list
test_include
test_watchpoint_check
test_help_version
test_help_script
test_run
test_help_every_script
test_usdt_choice
test_install
e2e_done
