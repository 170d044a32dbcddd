#!/usr/bin/env bash
# tests/lint/imports.sh: the tree has no import circle, and circles planted
# in a copy of it (by an include, by a call, through several units) are
# found, one line each, while names in comments and strings tie nothing.
# make unit copies this file to build/tests/test_imports; tests/run runs
# it from the repository's root.
set -uo pipefail
lint=tests/lint/imports.sh
passed=0 failed=0
tmp=$(mktemp -d /tmp/pgbt-imports.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# A fresh copy of the C tree, to plant in.
copy() {
	rm -rf "$tmp/tree" && mkdir -p "$tmp/tree" && cp -r lib gen report "$tmp/tree/"
}

# expect_circle WHAT WANT...: the lint fails on the copy, with one line per
# circle, and some line holds every WANT.
expect_circle() {
	local what=$1 out rc=0 line found=
	shift
	out=$("$lint" "$tmp/tree" 2>&1) || rc=$?
	if ((rc != 1)); then
		fail "$what: exit status $rc, want 1 (output: $out)"
		return
	fi
	while IFS= read -r line; do
		[[ $line == circle:* ]] || { fail "$what: not a circle line: $line"; return; }
		local want all=1
		for want in "$@"; do [[ $line == *"$want"* ]] || all=; done
		[[ -n $all ]] && found=1
	done <<<"$out"
	if [[ -n $found ]]; then ok; else fail "$what: no line naming $* in: $out"; fi
}

expect_none() {
	local what=$1 out rc=0
	out=$("$lint" "$tmp/tree" 2>&1) || rc=$?
	if ((rc == 0)) && [[ -z $out ]]; then ok; else fail "$what: exit $rc: $out"; fi
}

# The tree as it is.
if out=$("$lint" 2>&1) && [[ -z $out ]]; then ok; else fail "the tree has circles: $out"; fi

copy
expect_none "an untouched copy"

# Two headers that include each other.
copy
printf '#include "buf.h"\n' >>"$tmp/tree/lib/common/err.h"
printf '#include "err.h"\n' >>"$tmp/tree/lib/common/buf.h"
expect_circle "a planted include pair" "lib/common/buf -> lib/common/err -> lib/common/buf" \
	"lib/common/err.h includes lib/common/buf.h" "lib/common/buf.h includes lib/common/err.h"

# A call back up: err.c uses the template tree, which includes err.h.
copy
printf 'void planted(void) { pgbt_tree_free(0, 0); }\n' >>"$tmp/tree/lib/common/err.c"
expect_circle "a planted call" "lib/common/err.c uses pgbt_tree_free" \
	"lib/template/template_tree.h includes lib/common/err.h"

# A longer loop: the bottom includes the top, which reaches it through others.
copy
printf '#include "gen/cli.h"\n' >>"$tmp/tree/lib/common/buf.c"
expect_circle "a planted loop through several units" "lib/common/buf.c includes gen/cli.h" \
	"gen/cli"

# Two circles: two lines.
copy
printf '#include "buf.h"\n' >>"$tmp/tree/lib/common/err.h"
printf '#include "err.h"\n' >>"$tmp/tree/lib/common/buf.h"
printf '#include "lib/found/usdt.h"\n' >>"$tmp/tree/lib/found/elfimg.h"
n=$("$lint" "$tmp/tree" 2>&1 | grep -c '^circle: ')
if [[ $n == 2 ]]; then ok; else fail "two planted circles: $n lines, want 2"; fi

# Names in comments and strings, a static namesake: no tie.
copy
cat >>"$tmp/tree/lib/common/err.c" <<'EOF'
/* pgbt_tree_free(nodes, n) is the template's */
static const char *planted_text = "pgbt_tree_free(";
static void pgbt_tree_parse(void) { (void)planted_text; }
// cli_render(
static void planted(void) { pgbt_tree_parse(); }
EOF
expect_none "names in comments, strings and static namesakes"

echo "$passed passed, $failed failed"
((failed == 0))
