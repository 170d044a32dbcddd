#!/usr/bin/env bash
# The suite bites: pgbt-gen made to emit one wrong fact, through the
# options any user has (--layouts-dir, --scripts-dir: a copy with one fact
# changed), must make an e2e test fail on Debian's stripped 15 (where the
# built-in layout is what pgbt-gen uses):
#   a wrong offset       nextXid's offset in the 15 layout (the XIDs land
#                        elsewhere): xid-oid.sh
#   a wrong enumerator   WAIT_EVENT_PG_SLEEP's value in the 15 layout
#                        (pg_sleep is named another event): waits.sh
#   a wrong address      xid-rate and xid-events watching nextOid instead
#                        of nextXid: xid-oid.sh
# A control run through the same wrapper with unchanged copies passes, so
# each failure comes from its planted defect. The same offset and
# enumerator planted in the 16 layout must fail the same tests on emb16
# (16 without DWARF: its layout is checked nowhere else).
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

REAL_GEN=$PGBT_GEN
LEG_15=15/system LEG_16=emb16/system

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

# "caught" when SUMMARY has failures, "missed" when not.
verdict() {
	[[ $1 =~ ^[0-9]+\ passed,\ ([0-9]+)\ failed ]] && ((BASH_REMATCH[1] > 0)) && echo caught || echo missed
}

if why=$(pg_build_missing 15); then
	skip "mutations: $why"
	e2e_done
fi

layouts=$E2E_TMP/layouts scripts=$E2E_TMP/scripts
mkdir -p "$layouts" "$scripts"
cp "$PGBT_ROOT"/lib/layouts/*.layout "$layouts/"
cp -r "$PGBT_ROOT"/scripts/. "$scripts/"

# Control: the unchanged copies, through the same wrapper.
got=$(run_with "$(wrapper --layouts-dir "$layouts" --scripts-dir "$scripts")" xid-oid.sh)
check_eq "control: xid-oid.sh passes with unchanged copies ($got)" "$(verdict "$got")" missed
check_contains "control: it ran checks" "$got" " passed, 0 failed"

# A wrong offset.
sed -i 's/^member VariableCacheData nextXid 8 8$/member VariableCacheData nextXid 16 8/' "$layouts/15.layout"
check_contains "the offset was planted" "$(cat "$layouts/15.layout")" "nextXid 16 8"
got=$(run_with "$(wrapper --layouts-dir "$layouts")" xid-oid.sh)
check_eq "a wrong offset (nextXid at 16) is caught by xid-oid.sh ($got)" "$(verdict "$got")" caught
cp "$PGBT_ROOT/lib/layouts/15.layout" "$layouts/"

# A wrong enumerator: PgSleep takes the code of the event before it.
sed -i 's/^enumerator WAIT_EVENT_PG_SLEEP 0x09000002$/enumerator WAIT_EVENT_PG_SLEEP 0x09000001/' \
	"$layouts/15-waits.layout"
check_contains "the enumerator was planted" "$(cat "$layouts/15-waits.layout")" \
	"WAIT_EVENT_PG_SLEEP 0x09000001"
got=$(run_with "$(wrapper --layouts-dir "$layouts")" waits.sh)
check_eq "a wrong enumerator (PG_SLEEP) is caught by waits.sh ($got)" "$(verdict "$got")" caught

# A wrong address: the XID scripts watching the next OID.
sed -i 's/->nextXid$/->nextOid/' "$scripts/xid-rate.bt" "$scripts/xid-events.bt"
check_eq "the address was planted" "$(grep -c -- '->nextOid$' "$scripts/xid-rate.bt" "$scripts/xid-events.bt" |
	awk -F: '{ s += $2 } END { print s }')" 2
got=$(run_with "$(wrapper --scripts-dir "$scripts")" xid-oid.sh)
check_eq "a wrong address (nextOid for nextXid) is caught by xid-oid.sh ($got)" "$(verdict "$got")" caught

# 16 on emb16: the same offset and enumerator, in the 16 layout.
if why=$(pg_build_missing emb16); then
	skip "mutations of the 16 layout on emb16: $why"
	e2e_done
fi
got=$(run_with "$(wrapper --layouts-dir "$layouts")" xid-oid.sh "$LEG_16")
check_eq "16 control: xid-oid.sh passes on emb16 with unchanged copies ($got)" "$(verdict "$got")" missed
check_contains "16 control: it ran checks" "$got" " passed, 0 failed"
sed -i 's/^member VariableCacheData nextXid 8 8$/member VariableCacheData nextXid 16 8/' "$layouts/16.layout"
check_contains "the 16 offset was planted" "$(cat "$layouts/16.layout")" "nextXid 16 8"
got=$(run_with "$(wrapper --layouts-dir "$layouts")" xid-oid.sh "$LEG_16")
check_eq "16: a wrong offset (nextXid at 16) is caught by xid-oid.sh on emb16 ($got)" "$(verdict "$got")" caught
cp "$PGBT_ROOT/lib/layouts/16.layout" "$layouts/"
sed -i 's/^enumerator WAIT_EVENT_PG_SLEEP 0x09000002$/enumerator WAIT_EVENT_PG_SLEEP 0x09000001/' \
	"$layouts/16-waits.layout"
check_contains "the 16 enumerator was planted" "$(cat "$layouts/16-waits.layout")" \
	"WAIT_EVENT_PG_SLEEP 0x09000001"
got=$(run_with "$(wrapper --layouts-dir "$layouts")" waits.sh "$LEG_16")
check_eq "16: a wrong enumerator (PG_SLEEP) is caught by waits.sh on emb16 ($got)" "$(verdict "$got")" caught
e2e_done
