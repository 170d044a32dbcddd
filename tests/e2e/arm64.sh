#!/usr/bin/env bash
# What can be checked of aarch64 on this x86-64 machine, from Debian's arm64
# packages of 13, 15, 17 and 18 (tests/setup/debian-arm64.sh): every
# built-in layout fact for aarch64 equals the DWARF of
# tests/e2e/layout-types.c cross-compiled (Debian's gcc-aarch64-linux-gnu)
# from that major's arm64 server headers, with the server's tuplesort.c
# where tests/setup/build-postgres.sh has its source; a wrong fact written
# for one machine fails the check on that machine only; pgbt-gen renders
# for Debian's arm64 servers with the aarch64 facts and registers, and
# refuses a major without aarch64 offsets in one line. Nothing runs on
# arm64 here; the ELF side is tests/unit/test_arm64.c.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$PGBT_ROOT/tests/lib/layout-types.sh"

CROSS_CC=aarch64-linux-gnu-gcc
TEMPLATES=$PGBT_ROOT/tests/e2e/templates

# ARM64_DIR: the unpacked packages of MAJOR; returns 1 after a named skip.
arm64_dir() {
	local major=$1 why
	ARM64_DIR=$PGBT_CACHE/arm64/pg$major
	[[ -x $ARM64_DIR/bin/postgres ]] && return 0
	why=$(cat "$PGBT_CACHE/arm64/pg$major.unavailable" 2>/dev/null) ||
		why="not unpacked (tests/setup/debian-arm64.sh $major)"
	skip "arm64 PostgreSQL $major: $why"
	return 1
}

# The aarch64 layout of MAJOR against the DWARF of its arm64 headers.
test_layouts() {
	local major=$1 out rc=0 n srcs=()
	local dir=$E2E_TMP/layouts$major
	arm64_dir "$major" || return 0
	if ! command -v "$CROSS_CC" >/dev/null; then
		skip "layout $major on aarch64: no $CROSS_CC (tests/setup/install-deps.sh)"
		return 0
	fi
	mkdir -p "$dir"
	cp "$PGBT_ROOT"/lib/types/layouts/*.layout "$dir/"
	# Tuplesortstate is tuplesort.c's own, in no header: from the source
	# build-postgres.sh fetched, else left out by name.
	srcs=("$PGBT_CACHE/src/pg$major/postgresql-$major"*/src/backend/utils/sort/tuplesort.c)
	[[ -f ${srcs[0]} ]] || srcs=()
	if ((${#srcs[@]} == 0)); then
		sed -i '/^member Tuplesortstate /d' "$dir/$major"*.layout
		skip "layout $major on aarch64: Tuplesortstate (tuplesort.c's own): no $major source ($(cat "$PGBT_CACHE/pg$major.unavailable" 2>/dev/null || echo "tests/setup/build-postgres.sh $major"))"
	fi
	if ! layout_types_build "$CROSS_CC" "$ARM64_DIR/include/server" "$E2E_TMP/types$major" \
		"${srcs[@]:0:1}"; then
		fail "layout $major on aarch64: does not compile against $ARM64_DIR/include/server: $LAYOUT_TYPES_ERR"
		return 0
	fi
	check_eq "layout $major: the file is aarch64" "$(od -An -tx1 -j18 -N2 "$E2E_TMP/types$major" | tr -d ' ')" b700
	out=$("$PGBT_GEN" --layouts-dir "$dir" check-layouts --bin "$E2E_TMP/types$major" 2>&1) || rc=$?
	check_eq "layout $major on aarch64 matches the DWARF of its arm64 headers ($(tail -n 3 <<<"$out"))" "$rc" 0
	check_contains "layout $major: aarch64's facts checked" "$out" \
		"built-in layout for PostgreSQL $major on aarch64: "
	check_contains "layout $major on aarch64: no mismatch" "$out" ", 0 mismatches"
	n=$(sed -n 's/.*: \([0-9]*\) facts checked.*/\1/p' <<<"$out")
	check_eq "layout $major on aarch64: checked $n facts, at least 450" "$((${n:-0} >= 450))" 1
}

# A fact written for one machine is checked on that machine only: a wrong
# nextXid offset for aarch64 fails against the aarch64 DWARF and passes
# against x86-64's (the 15 source build), and the other way round.
test_fact_per_machine() {
	local machine other x86=$PGBT_CACHE/pg15/bin/postgres arm=$E2E_TMP/types15 rc out
	if [[ ! -x $arm ]]; then
		skip "a fact per machine: no aarch64 DWARF of 15 (above)"
		return 0
	fi
	if [[ ! -x $x86 ]]; then
		skip "a fact per machine: no 15 source build ($(pg_build_missing 15-debug || true))"
		return 0
	fi
	for machine in aarch64 x86_64; do
		mkdir -p "$E2E_TMP/planted-$machine"
		cp "$PGBT_ROOT"/lib/types/layouts/*.layout "$E2E_TMP/planted-$machine/"
		printf '%s\n' "machine $machine" "member VariableCacheData nextXid 16 8" \
			>>"$E2E_TMP/planted-$machine/15.layout"
		for other in "$arm:aarch64" "$x86:x86_64"; do
			rc=0
			out=$("$PGBT_GEN" --layouts-dir "$E2E_TMP/planted-$machine" check-layouts \
				--bin "${other%:*}" 2>&1) || rc=$?
			if [[ ${other#*:} == "$machine" ]]; then
				check_eq "nextXid at 16 for $machine: fails on ${other#*:}" "$rc" 1
				check_contains "nextXid at 16 for $machine: named on ${other#*:}" "$out" \
					"VariableCacheData.nextXid is at 8 size 8 in DWARF, 16 size 8 here"
			else
				check_eq "nextXid at 16 for $machine: not checked on ${other#*:} ($(tail -n 2 <<<"$out"))" "$rc" 0
			fi
		done
	done
}

# Debian's arm64 server, rendered from the binary alone: the aarch64 facts
# and registers, said so in the provenance.
test_render() {
	local major=$1 out rc=0 sleep=0x9000002 wei=712
	arm64_dir "$major" || return 0
	((major == 13)) && sleep=0x9000001 wei=684
	out=$("$PGBT_GEN" --scripts-dir "$TEMPLATES" --bin "$ARM64_DIR/bin/postgres" machine-facts 2>&1) || rc=$?
	check_eq "arm64 $major: renders ($(tail -n 1 <<<"$out"))" "$rc" 0
	check_contains "arm64 $major: types from the aarch64 layout" "$out" \
		"// types:      pgbt's built-in layout for PostgreSQL $major on aarch64 ("
	check_contains "arm64 $major: the machine" "$out" "// machine: aarch64 (aarch64 branch)"
	check_contains "arm64 $major: aarch64's registers" "$out" \
		'printf("caller %lx, ip %lx\n", reg("r30"), reg("pc"));'
	check_contains "arm64 $major: offsets and an enumerator" "$out" \
		"    8,
	    $wei, $sleep);"
}

# A major whose layout has no aarch64 offsets: one line, nothing rendered.
test_no_aarch64_offsets() {
	local rc=0
	arm64_dir 15 || return 0
	# Debian's arm64 15 relabelled 16 (same length: the ELF stays whole)
	LC_ALL=C sed 's/PostgreSQL 15\./PostgreSQL 16./' "$ARM64_DIR/bin/postgres" >"$E2E_TMP/postgres16"
	"$PGBT_GEN" --scripts-dir "$TEMPLATES" --bin "$E2E_TMP/postgres16" machine-facts \
		>"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
	check_eq "arm64 16: refused" "$rc" 1
	check_empty "arm64 16: nothing on stdout" "$(cat "$E2E_TMP/out")"
	check_eq "arm64 16: one line on stderr" "$(wc -l <"$E2E_TMP/err")" 1
	check_contains "arm64 16: says why" "$(cat "$E2E_TMP/err")" \
		"no built-in layout for PostgreSQL 16 on aarch64 (it has 13, 15, 17, 18 there)"
}

# pgbt-gen's own C compiles for aarch64, warnings as errors (syntax and
# types only: no arm64 libelf, libdw or libpq to link with here).
test_compiles() {
	local f bad=
	if ! command -v "$CROSS_CC" >/dev/null; then
		skip "pgbt-gen's C for aarch64: no $CROSS_CC (tests/setup/install-deps.sh)"
		return 0
	fi
	# shellcheck disable=SC2046 # pkg-config's words
	for f in "$PGBT_ROOT"/lib/*/*.c "$PGBT_ROOT"/report/*.c "$PGBT_ROOT"/gen/*.c; do
		"$CROSS_CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation \
			-Wno-stringop-truncation -fsyntax-only -iquote "$PGBT_ROOT" \
			$(pkg-config --cflags libelf libdw libpq 2>/dev/null) \
			-DPGBT_VERSION='"test"' "$f" 2>>"$E2E_TMP/cross.err" || bad="$bad ${f##*/}"
	done
	check_eq "pgbt-gen's C compiles for aarch64 ($(head -n 3 "$E2E_TMP/cross.err" | tr '\n' ' '))" "${bad:-none}" none
}

test_compiles
for major in 13 15 17 18; do
	test_layouts "$major"
	test_render "$major"
done
test_fact_per_machine
test_no_aarch64_offsets
e2e_done
