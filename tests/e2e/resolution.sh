#!/usr/bin/env bash
# What pgbt-gen resolves is what gdb says: on the builds with debug info
# (15, 17, 18 from source), every address in the rendered scripts equals
# gdb's `print &TransamVariables->nextXid` (ShmemVariableCache on 15), and
# every fact of the built-in layouts equals the DWARF of its major (for
# 17, whose source can no longer be had, the DWARF of a file compiled
# against trixie's server headers). Debug info in a separate file is found
# by build-id. On emb16 (no DWARF), gdb
# reads the pointer through .symtab alone and the rendered address is it
# plus the built-in layout's offset.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

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
	"$PGBT_GEN" -p "$CL_PID" xid-rate >"$E2E_TMP/xid.bt"
	"$PGBT_GEN" -p "$CL_PID" oid-consumers >"$E2E_TMP/oid.bt"
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

# A build without DWARF: gdb knows the global's address from .symtab but
# not its type, so it reads the pointer as a plain word.
test_against_gdb_nodwarf() {
	local v=$1 var=ShmemVariableCache why ptr
	if why=$(pg_build_missing "$v"); then
		skip "$v against gdb: $why"
		return 0
	fi
	cluster_start "$v"
	"$PGBT_GEN" -p "$CL_PID" xid-rate >"$E2E_TMP/xid.bt"
	"$PGBT_GEN" -p "$CL_PID" oid-consumers >"$E2E_TMP/oid.bt"
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
	# Port's GSSAPI member is a pointer: the headers need the names only.
	mkdir -p "$E2E_TMP/stub/gssapi"
	printf '%s\n' 'typedef unsigned int OM_uint32;' \
		'typedef struct { unsigned long length; void *value; } gss_buffer_desc;' \
		'typedef void *gss_cred_id_t, *gss_ctx_id_t, *gss_name_t;' >"$E2E_TMP/stub/gssapi/gssapi.h"
	if ! gcc -g -O0 -I"$E2E_TMP/stub" -I"$inc" -o "$E2E_TMP/types$major" \
		"$PGBT_ROOT/tests/e2e/layout-types.c" 2>"$E2E_TMP/types.err"; then
		fail "layout $major: layout-types.c does not compile against $inc: $(head -n 3 "$E2E_TMP/types.err")"
		return 0
	fi
	out=$("$PGBT_GEN" check-layouts --bin "$E2E_TMP/types$major" 2>&1) || rc=$?
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

for v in 15-debug 17 18; do
	test_against_gdb "$v"
done
test_against_gdb_nodwarf emb16
for major in 15 17 18; do
	test_layouts "$major"
done
# No build of 16 with debug info can be had here (no Debian suite has its
# source): its layout is checked live on emb16 by the e2e tests instead.
skip "layout 16 against the DWARF of a 16 build: none can be built here (no source for 16); checked live on emb16 by the e2e tests"
test_layouts_from_headers 17 "$PGBT_CACHE/root-trixie"
test_build_id_lookup
e2e_done
