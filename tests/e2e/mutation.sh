#!/usr/bin/env bash
# The suite bites: pgbt-gen made to emit one wrong fact, through the
# options any user has (--layouts-dir, --scripts-dir: a copy with one fact
# changed), must make an e2e test fail on Debian's stripped 15 (where the
# built-in layout is what pgbt-gen uses), on every host, whether or not
# its hardware watchpoints fire:
#   a wrong offset       nextXid's offset in the 15 layout (the XIDs land
#                        elsewhere): xid-oid.sh (the watched address holds
#                        no nextXid; where watchpoints fire, the counts)
#   a wrong enumerator   WAIT_EVENT_PG_SLEEP's value in the 15 layout
#                        (pg_sleep is named another event): waits.sh
#   a wrong address      xid-rate and xid-events watching nextOid instead
#                        of nextXid: xid-oid.sh
#   a wrong function     xid-rate and xid-events returning from
#                        GetNewObjectId instead of GetNewTransactionId
#                        (the uprobe path): xid-oid.sh
#   a wrong return value xid-events taking nextXid as the XID returned + 2:
#                        xid-oid.sh
#   the same in another  BufferUsage.shared_blks_read's offset in the 15
#   test                 layout, and query-profile reading pgWalUsage for
#                        pgBufferUsage: queries.sh
# A control run through the same wrapper with unchanged copies passes, so
# each failure comes from its planted defect. The same offset and
# enumerator planted in the 16 (14) layout must fail the same tests on
# emb16 (emb14): without DWARF there, the layout is checked nowhere else.
# tests/run: exclusive watchpoints
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

REAL_GEN=$PGBT_GEN
LEG_15=15/system

# A pgbt-gen that passes ARGS first; its path.
wrapper() {
	local f=$E2E_TMP/gen-$RANDOM
	printf '#!/bin/sh\nexec %q %s "$@"\n' "$REAL_GEN" "$*" >"$f"
	chmod 755 "$f"
	echo "$f"
}

# Runs e2e test FILE on LEG (default the 15 leg) with pgbt-gen GEN; prints
# its summary.
run_with() {
	local gen=$1 file=$2 leg=${3:-$LEG_15}
	PGBT_GEN=$gen PGBT_E2E_LEGS=$leg bash "$PGBT_ROOT/tests/e2e/$file" \
		>"$E2E_TMP/run.out" 2>"$E2E_TMP/run.err" || true
	tail -n 1 "$E2E_TMP/run.out"
}

# A control run's verdict, "missed" when it passed; when it failed, what
# failed goes to stderr, so a log says which check was not its defect's.
control_verdict() {
	local v
	v=$(verdict "$1")
	[[ $v == missed ]] || grep -m 5 'FAIL' "$E2E_TMP/run.err" | sed 's/^/    control: /' >&2 || true
	echo "$v"
}

# "caught" when SUMMARY has failures, "missed" when not.
verdict() {
	[[ $1 =~ ^[0-9]+\ passed,\ ([0-9]+)\ failed ]] && ((BASH_REMATCH[1] > 0)) && echo caught || echo missed
}

# Plants SED in layout FILE (a copy in $layouts, where it must then hold
# NEEDLE), runs e2e test TEST on LEG (default the 15 leg), which must
# fail: WHAT names the defect. The copy is restored after.
planted_layout_caught() {
	local file=$1 sed=$2 needle=$3 test=$4 what=$5 leg=${6:-$LEG_15} got
	sed -i "$sed" "$layouts/$file"
	check_contains "$what was planted in $file" "$(cat "$layouts/$file")" "$needle"
	got=$(run_with "$(wrapper --layouts-dir "$layouts")" "$test" "$leg")
	check_eq "$what is caught by $test on ${leg%%/*} ($got)" "$(verdict "$got")" caught
	cp "$PGBT_ROOT/lib/types/layouts/$file" "$layouts/"
}

if why=$(pg_build_missing 15); then
	skip "mutations: $why"
	e2e_done
fi

layouts=$E2E_TMP/layouts scripts=$E2E_TMP/scripts
mkdir -p "$layouts" "$scripts"
cp "$PGBT_ROOT"/lib/types/layouts/*.layout "$layouts/"
cp -r "$PGBT_ROOT"/scripts/. "$scripts/"

# Control: the unchanged copies, through the same wrapper.
got=$(run_with "$(wrapper --layouts-dir "$layouts" --scripts-dir "$scripts")" xid-oid.sh)
check_eq "control: xid-oid.sh passes with unchanged copies ($got)" "$(control_verdict "$got")" missed
check_contains "control: it ran checks" "$got" " passed, 0 failed"

planted_layout_caught 15.layout 's/^member VariableCacheData nextXid 8 8$/member VariableCacheData nextXid 16 8/' \
	"nextXid 16 8" xid-oid.sh "a wrong offset (nextXid at 16)"

# A wrong enumerator: PgSleep takes the code of the event before it.
planted_layout_caught 15-waits.layout 's/^enumerator WAIT_EVENT_PG_SLEEP 0x09000002$/enumerator WAIT_EVENT_PG_SLEEP 0x09000001/' \
	"WAIT_EVENT_PG_SLEEP 0x09000001" waits.sh "a wrong enumerator (PG_SLEEP)"

# Plants SED in the copies of SCRIPTS (which must then hold NEEDLE, once
# each), runs xid-oid.sh, which must fail: WHAT names the defect. The
# copies are restored after.
planted_script_caught() {
	local sed=$1 needle=$2 what=$3 f got; shift 3
	for f; do
		sed -i "$sed" "$scripts/$f.bt"
		check_eq "$what was planted in $f" "$(grep -cF -- "$needle" "$scripts/$f.bt")" 1
	done
	got=$(run_with "$(wrapper --scripts-dir "$scripts")" xid-oid.sh)
	check_eq "$what is caught by xid-oid.sh ($got)" "$(verdict "$got")" caught
	for f; do cp "$PGBT_ROOT/scripts/$f.bt" "$scripts/"; done
}

# A wrong address: the XID scripts watching the next OID.
planted_script_caught 's/->(nextXid|nextFullXid)$/->nextOid/' '->nextOid' \
	"a wrong address (nextOid for nextXid)" xid-rate xid-events
# A wrong function: the XID scripts counting the returns of GetNewObjectId.
planted_script_caught 's/^uretprobe:{{binary}}:GetNewTransactionId$/uretprobe:{{binary}}:GetNewObjectId/' \
	'uretprobe:{{binary}}:GetNewObjectId' "a wrong function (GetNewObjectId for GetNewTransactionId)" \
	xid-rate xid-events
# A wrong return value: nextXid as the XID + 2.
planted_script_caught 's/\$next = retval + 1;/$next = retval + 2;/' '$next = retval + 2;' \
	"a wrong return value (nextXid = XID + 2)" xid-events

# The same kinds of defect where queries.sh sees them, which needs no
# watchpoint: query-profile's buffer counts against EXPLAIN's.
got=$(run_with "$(wrapper --layouts-dir "$layouts" --scripts-dir "$scripts")" queries.sh)
check_eq "control: queries.sh passes with unchanged copies ($got)" "$(control_verdict "$got")" missed
check_contains "control: it ran checks" "$got" " passed, 0 failed"
# A wrong offset: blocks read counted from the blocks dirtied.
planted_layout_caught 15-queries.layout 's/^member BufferUsage shared_blks_read 8 8$/member BufferUsage shared_blks_read 16 8/' \
	"shared_blks_read 16 8" queries.sh "a wrong offset (shared_blks_read at 16)"
# A wrong address: query-profile's buffer counts read from the WAL's.
uses=$(grep -c '{{&pgBufferUsage}}' "$scripts/query-profile.bt" || true)
check_eq "query-profile reads pgBufferUsage" "$((uses > 0))" 1
sed -i 's/{{&pgBufferUsage}}/{{\&pgWalUsage}}/g' "$scripts/query-profile.bt"
check_eq "the pgBufferUsage address was planted (uses left)" "$(grep -c '{{&pgBufferUsage}}' "$scripts/query-profile.bt")" 0
got=$(run_with "$(wrapper --scripts-dir "$scripts")" queries.sh)
check_eq "a wrong address (pgWalUsage for pgBufferUsage) is caught by queries.sh ($got)" "$(verdict "$got")" caught
cp "$PGBT_ROOT/scripts/query-profile.bt" "$scripts/"

# MAJOR on LEG, a build without DWARF whose layout is checked nowhere
# else: the same offset and enumerator, planted in MAJOR's layout. SLEEP is
# WAIT_EVENT_PG_SLEEP's code in MAJOR; the planted one is the code before.
mutate_nodwarf() {
	local major=$1 leg=$2 sleep=$3 build=${2%%/*} wrong got why
	if why=$(pg_build_missing "$build"); then
		skip "mutations of the $major layout on $build: $why"
		return 0
	fi
	got=$(run_with "$(wrapper --layouts-dir "$layouts")" xid-oid.sh "$leg")
	check_eq "$major control: xid-oid.sh passes on $build with unchanged copies ($got)" "$(control_verdict "$got")" missed
	check_contains "$major control: it ran checks" "$got" " passed, 0 failed"
	planted_layout_caught "$major.layout" 's/^member VariableCacheData nextXid 8 8$/member VariableCacheData nextXid 16 8/' \
		"nextXid 16 8" xid-oid.sh "$major: a wrong offset (nextXid at 16)" "$leg"
	wrong=$(printf '0x%08x' $((sleep - 1)))
	planted_layout_caught "$major-waits.layout" "s/^enumerator WAIT_EVENT_PG_SLEEP $sleep\$/enumerator WAIT_EVENT_PG_SLEEP $wrong/" \
		"WAIT_EVENT_PG_SLEEP $wrong" waits.sh "$major: a wrong enumerator (PG_SLEEP)" "$leg"
}

mutate_nodwarf 16 emb16/system 0x09000002
mutate_nodwarf 14 emb14/system 0x09000001
e2e_done
