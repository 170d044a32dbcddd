#!/usr/bin/env bash
# What pgbt-gen resolves is what gdb says: on the builds with debug info
# (15, 17, 18 from source), the watchpoint address (via=watchpoint)
# equals gdb's `print &TransamVariables->nextXid` (ShmemVariableCache on
# 15); every fact in the provenance blocks of every script's default
# rendering and of the XID and OID scripts' watchpoint renderings
# (addresses, enumerators, offsets, sizes: about 80), and a backend's addresses as
# backend-waits reads them in it, equal gdb's answers in the same
# process; and
# every fact of the built-in layouts equals the DWARF of its major (for
# 17, whose source can no longer be had, the DWARF of a file compiled
# against trixie's server headers). Debug info in a separate file is found
# by build-id. On emb16 and emb14 (no DWARF), gdb
# reads the pointer through .symtab alone and the rendered address is it
# plus the built-in layout's offset.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$PGBT_ROOT/tests/lib/layout-types.sh"

TEMPLATES=$PGBT_ROOT/tests/e2e/templates

# The address on the watchpoint line of a rendered script.
watch_addr() {
	sed -n 's/^watchpoint:\(0x[0-9a-f]*\):.*/\1/p' "$1"
}

# gdb's answer for EXPR in the postmaster.
gdb_addr() {
	gdb -q -batch -p "$CL_PID" -ex "print $1" 2>/dev/null |
		sed -n 's/^\$1 = ([^)]*) \(0x[0-9a-f]*\).*/\1/p'
}

test_against_gdb() {
	local v=$1 major=${1%-debug} var=TransamVariables why
	if why=$(pg_build_missing "$v"); then
		skip "pg$v against gdb: $why"
		return 0
	fi
	[[ $major == 15 ]] && var=ShmemVariableCache
	cluster_start "$v"
	"$PGBT_GEN" -p "$CL_PID" xid-rate via=watchpoint >"$E2E_TMP/xid.bt"
	"$PGBT_GEN" -p "$CL_PID" oid-consumers via=watchpoint >"$E2E_TMP/oid.bt"
	local want
	want=$(gdb_addr "&$var->nextXid")
	check_eq "pg$v: &$var->nextXid as gdb prints it" "$(watch_addr "$E2E_TMP/xid.bt")" "$want"
	check_contains "pg$v: gdb answered" "$want" "0x"
	want=$(gdb_addr "&$var->nextOid")
	check_contains "pg$v: gdb answered for nextOid" "$want" "0x"
	check_eq "pg$v: &$var->nextOid as gdb prints it" "$(watch_addr "$E2E_TMP/oid.bt")" "$want"
	check_contains "pg$v: types came from DWARF" "$(cat "$E2E_TMP/xid.bt")" \
		"// types:      DWARF in $CL_BIN/postgres"
	cluster_stop
}

# gdb's answers for the facts in the provenance blocks of rendered scripts
# (FILEs), attached to PID in one batch: addresses (&G, &G->m, *G, and
# backend($pid, ...) where PID is that backend; the first of "(A|B)" that
# gdb knows), enumerators, offsetof and sizeof.
# Writes "FACT: pgbt-gen VALUE, gdb VALUE" to OUT for each that differs or
# that gdb did not answer, and sets PROV_N to the number of facts asked.
# Every spelling of EXPR with each "(A|B)" group one of its names, joined
# by "|": "&(T|S)->(x|y)" -> "&T->x|&S->x|&T->y|&S->y".
spellings() {
	if [[ $1 =~ ^(.*)\(([A-Za-z_0-9]+)\|([A-Za-z_0-9]+)\)(.*)$ ]]; then
		local pre=${BASH_REMATCH[1]} a=${BASH_REMATCH[2]} b=${BASH_REMATCH[3]} post=${BASH_REMATCH[4]}
		echo "$(spellings "$pre$a$post")|$(spellings "$pre$b$post")"
	else
		echo "$1"
	fi
}

gdb_check_provenance() {
	local pid=$1 out=$2; shift 2
	: >"$out"
	local -a facts=() wants=() args=()
	local line expr want i=0 alt t m
	while IFS= read -r line; do
		expr= want=
		if [[ $line =~ ^//\ \ \ ([\&*].*)\ =\ (0x[0-9a-f]+)$ ]]; then
			expr=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		elif [[ $line =~ ^//\ \ \ backend\(\$pid,\ (.*)\)\ =\ (0x[0-9a-f]+)\ \(read\ in\ backend\ PID\ ([0-9]+)\)$ ]]; then
			[[ ${BASH_REMATCH[3]} == "$pid" ]] || continue
			expr=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		elif [[ $line =~ ^//\ \ \ ([A-Z][A-Z0-9_]*)\ =\ (0x[0-9a-f]+)\ \(DWARF\)$ ]]; then
			expr="(long)${BASH_REMATCH[1]}" want=${BASH_REMATCH[2]}
		elif [[ $line =~ ^//\ \ \ offsetof\(([A-Za-z_0-9]+),\ ([A-Za-z_0-9.]+)\)\ =\ ([0-9]+)\ \(DWARF\)$ ]]; then
			t=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]} want=${BASH_REMATCH[3]}
			expr="(long)&(($t *)0)->$m|(long)&((struct $t *)0)->$m"
		elif [[ $line =~ ^//\ \ \ sizeof\(([A-Za-z_0-9]+)\)\ =\ ([0-9]+)\ \(DWARF\)$ ]]; then
			t=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
			expr="sizeof($t)|sizeof(struct $t)"
		else
			continue
		fi
		# pgbt-gen's "*G" is the pointer stored in G: gdb's "G".
		[[ $expr =~ ^\*([A-Za-z_0-9|()]+)$ ]] && expr=${BASH_REMATCH[1]}
		facts+=("${line#//   }") wants+=("$want")
		# "(A|B)->(x|y)" and the struct-tag forms: every spelling.
		[[ $expr == *"("*"|"*")"* ]] && expr=$(spellings "$expr")
		IFS='|' read -ra alt <<<"$expr"
		for expr in "${alt[@]}"; do
			args+=(-ex "echo @@ $i\\n" -ex "print/x $expr")
		done
		i=$((i + 1))
	done < <(grep -h '^//   ' "$@" | sort -u)
	PROV_N=$i
	((i > 0)) || return 0
	local answers
	answers=$(gdb -q -batch -p "$pid" "${args[@]}" 2>/dev/null |
		awk '/^@@ / { k = $2; next }
		     k != "" && /^\$[0-9]+ = / && !(k in got) { v = $NF; got[k] = v; print k, v }')
	local -A got=()
	while read -r i want; do got[$i]=$want; done <<<"$answers"
	for ((i = 0; i < PROV_N; i++)); do
		if [[ -z ${got[$i]:-} ]] || (( ${got[$i]} != ${wants[$i]} )); then
			echo "${facts[$i]}: pgbt-gen ${wants[$i]}, gdb ${got[$i]:-no answer}"
		fi
	done >"$out"
}

# Every fact of every script's default rendering, and the backend
# addresses of backend-waits, against gdb on a build with debug info.
test_provenance_against_gdb() {
	local v=$1 why s bp diff
	if why=$(pg_build_missing "$v"); then
		skip "pg$v: provenance against gdb: $why"
		return 0
	fi
	cluster_start "$v"
	for s in $("$PGBT_GEN" list | awk 'NR > 1 { print $1 }'); do
		"$PGBT_GEN" -p "$CL_PID" "$s" >"$E2E_TMP/prov-$s.bt" 2>/dev/null || true
	done
	# the addresses the watchpoint mechanism watches, which the default
	# (via=auto: uprobes) renderings do not need
	for s in xid-rate xid-events oid-consumers; do
		"$PGBT_GEN" -p "$CL_PID" "$s" via=watchpoint >"$E2E_TMP/prov-$s-watchpoint.bt"
	done
	# ... and the sampler's (ProcGlobal's lists, PGPROC's slots), which
	# waits's default rendering does not need either
	"$PGBT_GEN" -p "$CL_PID" waits mode=sample >"$E2E_TMP/prov-waits-sample.bt"
	gdb_check_provenance "$CL_PID" "$E2E_TMP/prov.diff" "$E2E_TMP"/prov-*.bt
	diff=$(cat "$E2E_TMP/prov.diff")
	check_eq "pg$v: every fact of the scripts' provenance equals gdb's ($PROV_N facts)" "$diff" ""
	# At least the addresses, enumerators and offsets of 2026-11 (about 90).
	check_eq "pg$v: $PROV_N provenance facts asked of gdb, at least 80" "$((PROV_N >= 80))" 1
	pgbt_bg cl_psql -c "select pg_sleep(30)"
	local sleeper=$BG_PID i
	for ((i = 0; i < 100; i++)); do
		bp=$(cl_psql -c "select pid from pg_stat_activity where wait_event = 'PgSleep'")
		[[ -n $bp ]] && break
		sleep 0.1
	done
	"$PGBT_GEN" -p "$CL_PID" backend-waits pid="$bp" >"$E2E_TMP/watch.bt"
	gdb_check_provenance "$bp" "$E2E_TMP/watch.diff" "$E2E_TMP/watch.bt"
	diff=$(cat "$E2E_TMP/watch.diff")
	check_eq "pg$v: a backend's addresses (backend-waits) equal gdb's in it ($PROV_N facts)" "$diff" ""
	check_eq "pg$v: backend facts asked of gdb" "$((PROV_N >= 1))" 1
	pgbt_bg_stop "$sleeper"
	cluster_stop
}

# pgbt-gen --check-with gdb: on a build with debug info every script
# renders with gdb's agreement in its provenance (those that follow one
# backend with pid= the checkpointer, whose facts gdb reads in it); a gdb that answers
# otherwise (a stand-in on PATH) makes it fail naming the facts, with
# nothing on stdout; without DWARF, strict fails for the facts gdb cannot
# answer and gdb-if-able renders, saying how many.
test_check_with_gdb() {
	local v=$1 why s out rc n=0 bad=
	if why=$(pg_build_missing "$v"); then
		skip "pg$v: --check-with gdb: $why"
		return 0
	fi
	cluster_start "$v"
	# for the scripts that follow one backend: the checkpointer will do
	local backend
	backend=$(cl_psql -c "select pid from pg_stat_activity where backend_type = 'checkpointer'")
	for s in $("$PGBT_GEN" list | awk 'NR > 1 { print $1 }'); do
		rc=0
		out=$("$PGBT_GEN" -p "$CL_PID" --check-with gdb "$s" 2>&1) || rc=$?
		if [[ $rc != 0 && $out == *"pid=PID"* ]]; then
			rc=0
			out=$("$PGBT_GEN" -p "$CL_PID" --check-with gdb "$s" pid="$backend" 2>&1) || rc=$?
		fi
		# sorts needs USDT, which the source builds lack: its refusal
		# comes before any check.
		[[ $rc != 0 && $out == *"has no USDT probes"* ]] && continue
		n=$((n + 1))
		[[ $rc == 0 && $out == *"//   checked with GNU gdb"*" 0 it could not answer"* ]] ||
			bad+="$s: ${out:0:300}; "
	done
	check_eq "pg$v: every script ($n) renders with --check-with gdb, gdb agreeing" "$bad" ""
	# A gdb that answers 1 to every print (speaking just enough of its
	# machine interface: "TOKEN-command" in, console output and
	# "TOKEN^done" out).
	mkdir -p "$E2E_TMP/fakegdb"
	cat >"$E2E_TMP/fakegdb/gdb" <<-'GDB'
	#!/bin/sh
	pid=
	while [ $# -gt 0 ]; do [ "$1" = -p ] && pid=$2; shift; done
	while IFS= read -r line; do
		tok=${line%%-*}
		case $line in
		*'"show version"'*) printf '%s\n' '~"GNU gdb (a stand-in) 0\n"' ;;
		*'"info proc"'*) printf '~"process %s\\n"\n' "$pid" ;;
		*'"print'*) printf '%s\n' '~"$1 = 0x1\n"' ;;
		*-gdb-exit*) printf '%s^exit\n' "$tok"; exit 0 ;;
		esac
		printf '%s^done\n' "$tok"
	done
	GDB
	chmod +x "$E2E_TMP/fakegdb/gdb"
	rc=0
	out=$(PATH=$E2E_TMP/fakegdb:$PATH "$PGBT_GEN" -p "$CL_PID" --check-with gdb xid-rate via=watchpoint \
		2>"$E2E_TMP/cw.err") || rc=$?
	check_eq "pg$v: a gdb that disagrees: non-zero exit" "$((rc != 0))" 1
	check_empty "pg$v: a gdb that disagrees: nothing on stdout" "$out"
	check_contains "pg$v: a gdb that disagrees: the facts named" "$(cat "$E2E_TMP/cw.err")" \
		"2 of 2 facts differ from gdb's answers"
	check_contains "pg$v: a gdb that disagrees: both answers" "$(cat "$E2E_TMP/cw.err")" \
		"->(nextXid|nextFullXid) = 0x"
	cluster_stop
}

# --resolver gdb: every script rendered with its type facts from gdb is the
# default rendering (from libdw) byte for byte, but for the lines naming
# where types came from ("// types:", "(gdb)" for "(DWARF)"); a script
# that does not render must fail either way.
test_resolver_gdb() {
	local v=$1 why s rc rc_gdb n=0 bad= diffs
	if why=$(pg_build_missing "$v"); then
		skip "pg$v: --resolver gdb: $why"
		return 0
	fi
	cluster_start "$v"
	for s in $("$PGBT_GEN" list | awk 'NR > 1 { print $1 }'); do
		rc=0 rc_gdb=0
		"$PGBT_GEN" -p "$CL_PID" "$s" >"$E2E_TMP/dw-$s.bt" 2>/dev/null || rc=$?
		"$PGBT_GEN" -p "$CL_PID" --resolver gdb "$s" >"$E2E_TMP/gdb-$s.bt" \
			2>"$E2E_TMP/gdb-$s.err" || rc_gdb=$?
		if [[ $rc != 0 || $rc_gdb != 0 ]]; then
			[[ $rc != 0 && $rc_gdb != 0 ]] ||
				bad+="$s: exit $rc with libdw, $rc_gdb with gdb ($(head -c 200 "$E2E_TMP/gdb-$s.err")); "
			continue
		fi
		n=$((n + 1))
		grep -q '^// types:      GNU gdb .* (--resolver gdb): [0-9]* questions in [0-9]* ms$' \
			"$E2E_TMP/gdb-$s.bt" || ! grep -q '^// types:' "$E2E_TMP/gdb-$s.bt" ||
			bad+="$s: its types line does not name gdb; "
		diffs=$(diff <(grep -v '^// types:' "$E2E_TMP/dw-$s.bt") \
			<(grep -v '^// types:' "$E2E_TMP/gdb-$s.bt" |
			  sed 's/(gdb\([,)]\)/(DWARF\1/g') | head -n 6) ||
			bad+="$s: $diffs; "
	done
	check_eq "pg$v: every script ($n) renders the same with --resolver gdb" "$bad" ""
	check_eq "pg$v: --resolver gdb: at least 20 scripts compared" "$((n >= 20))" 1
	# xid-rate's watchpoint, whose address needs types (its uprobe none)
	"$PGBT_GEN" -p "$CL_PID" xid-rate via=watchpoint >"$E2E_TMP/dw-xid-watch.bt"
	"$PGBT_GEN" -p "$CL_PID" --resolver gdb xid-rate via=watchpoint >"$E2E_TMP/gdb-xid-watch.bt"
	check_contains "pg$v: --resolver gdb: xid-rate's types from gdb" \
		"$(grep '^// types:' "$E2E_TMP/gdb-xid-watch.bt")" "(--resolver gdb)"
	check_empty "pg$v: --resolver gdb: xid-rate via=watchpoint renders the same" \
		"$(diff <(grep -v '^// types:' "$E2E_TMP/dw-xid-watch.bt") \
			<(grep -v '^// types:' "$E2E_TMP/gdb-xid-watch.bt" | sed 's/(gdb\([,)]\)/(DWARF\1/g'))"
	cluster_stop
}

test_check_with_gdb_nodwarf() {
	local v=$1 why out rc=0
	if why=$(pg_build_missing "$v"); then
		skip "$v: --check-with gdb: $why"
		return 0
	fi
	cluster_start "$v"
	out=$("$PGBT_GEN" -p "$CL_PID" --check-with gdb xid-rate via=watchpoint 2>&1) || rc=$?
	check_eq "$v: --check-with gdb without DWARF fails" "$((rc != 0))" 1
	check_contains "$v: for the fact gdb cannot answer" "$out" "->(nextXid|nextFullXid) = 0x"
	check_contains "$v: saying so" "$out" "gdb gave no answer"
	rc=0
	out=$("$PGBT_GEN" -p "$CL_PID" --check-with gdb-if-able xid-rate via=watchpoint 2>&1) || rc=$?
	check_eq "$v: --check-with gdb-if-able renders" "$rc" 0
	check_contains "$v: saying what gdb could not answer" "$out" "1 it could not answer (no debug info)"
	cluster_stop
}

# A build without DWARF: gdb knows the global's address from .symtab but
# not its type, so it reads the pointer as a plain word.
test_against_gdb_nodwarf() {
	local v=$1 var=ShmemVariableCache why ptr
	if why=$(pg_build_missing "$v"); then
		skip "$v against gdb: $why"
		return 0
	fi
	cluster_start "$v"
	"$PGBT_GEN" -p "$CL_PID" xid-rate via=watchpoint >"$E2E_TMP/xid.bt"
	"$PGBT_GEN" -p "$CL_PID" oid-consumers via=watchpoint >"$E2E_TMP/oid.bt"
	ptr=$(gdb -q -batch -p "$CL_PID" -ex "print/x *(unsigned long *)&$var" 2>/dev/null |
		sed -n 's/^\$1 = \(0x[0-9a-f]*\).*/\1/p')
	check_contains "$v: gdb read $var through .symtab" "$ptr" "0x"
	check_eq "$v: &$var->nextXid is gdb's $var + 8" "$(watch_addr "$E2E_TMP/xid.bt")" \
		"$(printf '0x%x' $((${ptr:-0} + 8)))"
	check_eq "$v: &$var->nextOid is gdb's $var + 0" "$(watch_addr "$E2E_TMP/oid.bt")" \
		"$(printf '0x%x' $((${ptr:-0})))"
	check_contains "$v: types came from the built-in layout" "$(cat "$E2E_TMP/xid.bt")" \
		"// types:      pgbt's built-in layout for PostgreSQL $CL_MAJOR"
	cluster_stop
}

test_layouts() {
	local major=$1 out rc=0 why
	if why=$(pg_build_missing "$major"); then
		skip "layout $major against the DWARF of a $major build: $why"
		return 0
	fi
	out=$("$PGBT_GEN" check-layouts --bin "$PGBT_CACHE/pg$major/bin/postgres" 2>&1) || rc=$?
	check_eq "layout $major matches the DWARF of pg$major ($out)" "$rc" 0
	check_contains "layout $major: facts checked" "$out" "0 mismatches"
	# A layout that lost its facts would check nothing: at least those
	# of the 15 layout when this test was written (about 500).
	local n
	n=$(sed -n 's/.*: \([0-9]*\) facts checked.*/\1/p' <<<"$out")
	check_eq "layout $major: checked $n facts, at least 450" "$((${n:-0} >= 450))" 1
}

# The layout of MAJOR against the DWARF of tests/e2e/layout-types.c
# compiled with -g against the server headers of a distribution's
# postgresql-server-dev-MAJOR in ROOT (trixie's for 17, whose source can no
# longer be had), for a major without a debug build here.
test_layouts_from_headers() {
	local major=$1 root=$2 inc out rc=0 n
	inc=$root/usr/include/postgresql/$major/server
	if [[ ! -r $inc/postgres.h ]]; then
		skip "layout $major against its server headers: no $inc (tests/setup/debian-root.sh)"
		return 0
	fi
	if ! layout_types_build gcc "$inc" "$E2E_TMP/types$major"; then
		fail "layout $major: layout-types.c does not compile against $inc: $LAYOUT_TYPES_ERR"
		return 0
	fi
	# Types private to a source file are in no installed header: their facts
	# are left out here, by name (the live e2e tests check them).
	local private=Tuplesortstate dir=$E2E_TMP/layouts-headers$major
	mkdir -p "$dir"
	cp "$PGBT_ROOT"/lib/types/layouts/*.layout "$dir/"
	sed -i "/^member $private /d" "$dir/$major"*.layout
	skip "layout $major against its server headers: $private's facts (tuplesort.c's own, in no header)"
	out=$("$PGBT_GEN" --layouts-dir "$dir" check-layouts --bin "$E2E_TMP/types$major" 2>&1) || rc=$?
	check_eq "layout $major matches the DWARF of its server headers ($out)" "$rc" 0
	check_contains "layout $major (headers): facts checked" "$out" "0 mismatches"
	n=$(sed -n 's/.*: \([0-9]*\) facts checked.*/\1/p' <<<"$out")
	check_eq "layout $major (headers): checked $n facts, at least 450" "$((${n:-0} >= 450))" 1
}

# A stripped server whose debug info lives in a .build-id tree, the way
# distributions ship -dbgsym packages (any debug build of 17+ will do).
test_build_id_lookup() {
	local bin=$PGBT_CACHE/pg18/bin/postgres dir=$E2E_TMP/debug id out
	[[ -x $PGBT_CACHE/pg17/bin/postgres ]] && bin=$PGBT_CACHE/pg17/bin/postgres
	if [[ ! -x $bin ]]; then
		skip "debug info by build-id: no debug build of 17 or 18 ($(pg_build_missing 18))"
		return 0
	fi
	id=$(readelf -n "$bin" | sed -n 's/.*Build ID: *//p')
	mkdir -p "$dir/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$bin" "$dir/.build-id/${id:0:2}/${id:2}.debug"
	strip -o "$E2E_TMP/postgres" "$bin"
	out=$(PGBT_DEBUGINFO_PATH=$dir "$PGBT_GEN" --scripts-dir "$TEMPLATES" \
		--bin "$E2E_TMP/postgres" transam-offsets)
	check_contains "stripped 17+: debug info found by build-id" "$out" \
		"// types:      DWARF in $dir/.build-id/${id:0:2}/${id:2}.debug"
	check_contains "stripped 17+: offset from it" "$out" "nextXid at %d, n=%d\\n\", 8,"
}

# MyBEEntry is static in 13, so a stripped 13 (Debian's) has no symbol
# for it: pgbt-gen finds the pointer pgstat_report_activity loads and
# keeps it only if the server's processes confirm it. On a stripped copy
# of the 13 source build: the address its symbol table gave before
# stripping; and with a wrong layout fact the confirmation fails, so the
# render is refused rather than reading a wrong pointer.
test_found_static() {
	local why cache=$E2E_TMP/cache13 want out rc=0
	if why=$(pg_build_missing 13); then
		skip "MyBEEntry found in code on a stripped 13: $why"
		return 0
	fi
	mkdir -p "$cache" && cp -a "$PGBT_CACHE/pg13" "$cache/"
	strip "$cache/pg13/bin/postgres"
	want=$(nm "$PGBT_CACHE/pg13/bin/postgres" | awk '$3 == "MyBEEntry" { print $1 }')
	want=$(printf '0x%x' "$((16#${want:-0}))")
	PGBT_CACHE=$cache cluster_start -n stripped13 13
	check_eq "stripped 13: no MyBEEntry symbol" "$(nm -D "$CL_BIN/postgres" | grep -cw MyBEEntry)" 0
	out=$("$PGBT_GEN" -p "$CL_PID" slow-queries)
	check_contains "stripped 13: MyBEEntry found where its symbol was ($want)" "$out" \
		"the pointer pgstat_report_activity loads first from $want;"
	check_contains "stripped 13: types from the 13 layout" "$out" \
		"// types:      pgbt's built-in layout for PostgreSQL 13"
	mkdir -p "$E2E_TMP/wrong13"
	cp "$PGBT_ROOT"/lib/types/layouts/*.layout "$E2E_TMP/wrong13/"
	sed -i 's/^member PgBackendStatus st_procpid 4 4$/member PgBackendStatus st_procpid 8 4/' \
		"$E2E_TMP/wrong13/13-waits.layout"
	out=$("$PGBT_GEN" --layouts-dir "$E2E_TMP/wrong13" -p "$CL_PID" slow-queries 2>"$E2E_TMP/err") || rc=$?
	check_eq "stripped 13, wrong st_procpid: refused" "$rc" 1
	check_empty "stripped 13, wrong st_procpid: nothing on stdout" "$out"
	check_contains "stripped 13, wrong st_procpid: says why" "$(cat "$E2E_TMP/err")" \
		"none of the"
	cluster_stop
}

for v in 15-debug 17 18; do
	test_against_gdb "$v"
	test_provenance_against_gdb "$v"
	test_check_with_gdb "$v"
done
for v in 15-debug 18; do
	test_resolver_gdb "$v"
done
for v in emb16 emb14; do
	test_against_gdb_nodwarf "$v"
	test_check_with_gdb_nodwarf "$v"
done
for major in 13 15 17 18; do
	test_layouts "$major"
done
# No build of 16 with debug info can be had here (no Debian suite has its
# source): its layout is checked live on emb16 by the e2e tests instead.
skip "layout 16 against the DWARF of a 16 build: none can be built here (no source for 16); checked live on emb16 by the e2e tests"
# Nor of 14: its layout was checked once against the DWARF of 14.13's
# source when it was written, and is checked live on emb14.
skip "layout 14 against the DWARF of a 14 build: none can be built here (no source for 14); checked live on emb14 by the e2e tests"
test_layouts_from_headers 17 "$PGBT_CACHE/root-trixie"
test_layouts_from_headers 13 "$PGBT_CACHE/root-bullseye"
test_build_id_lookup
test_found_static
e2e_done
