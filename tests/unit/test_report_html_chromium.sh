#!/usr/bin/env bash
# pgbt-gen report --html as a browser reads it: the pages of the captures
# in tests/unit/report/ rendered by headless Chromium (Debian's chromium),
# and the DOM it built checked: the SVG charts with a band per client
# backend wait event, the heatmap's cells, the tables with their numbers;
# then a screenshot of the waits page, a PNG. Without chromium every check
# is a skip, by name (never a pass).
#
#   tests/unit/test_report_html_chromium.sh [--docs]
#
# --docs (or PGBT_DOCS_IMG=1) also copies the screenshot to
# docs/img/report-waits.png, the picture docs/report.md shows; a plain run
# leaves the tree as it was. make unit copies this file to
# build/tests/test_report_html_chromium; tests/run runs it from the
# repository's root.
set -uo pipefail
passed=0 failed=0 skipped=0
build=${PGBT_FIXTURES:-build/fixtures}
build=${build%/fixtures}
gen=$build/pgbt-gen
docs=${PGBT_DOCS_IMG:-}
[[ ${1:-} == --docs ]] && docs=1

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok; else fail "$what"; fi; }
skip() { skipped=$((skipped + 1)); echo "skip: $*"; }
done_() { echo "$passed passed, $failed failed, $skipped skipped"; exit $((failed > 0)); }

browser=
for b in chromium chromium-headless-shell; do
	command -v "$b" >/dev/null && { browser=$b; break; }
done
if [[ -z $browser ]]; then
	skip "no chromium: the HTML report was not rendered in a browser (Debian's chromium)"
	done_
fi
if [[ ! -x $gen ]]; then
	fail "no $gen (make unit builds it)"
	done_
fi

tmp=$(mktemp -d /tmp/pgbt-html-chromium.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# One Chromium run, with a profile of its own, bounded in time.
run_browser() {
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/profile" "$@" 2>>"$tmp/browser.log"
}

# page NAME CAPTURE: the page of a capture, at $tmp/NAME.html.
page() {
	"$gen" report --format none --html "$tmp/$1.html" <"tests/unit/report/$2" 2>"$tmp/$1.err" ||
		fail "$2: pgbt-gen report: $(head -c 300 "$tmp/$1.err")"
}

# The text of the first element starting at a line matching START, up to
# the first line after it matching END.
between() {
	awk -v s="$2" -v e="$3" 'index($0, s) { on = 1 } on { print } on && index($0, e) { exit }' "$1"
}

count() { grep -o -- "$2" "$1" | wc -l; }

# --- the synthetic waits of three intervals --------------------------------
page syn waits-intervals-synthetic.json
if run_browser --dump-dom "file://$tmp/syn.html" >"$tmp/syn.dom" && [[ -s $tmp/syn.dom ]]; then
	ok
	between "$tmp/syn.dom" 'data-section="client backend">' '</figure>' >"$tmp/syn.chart"
	check "the DOM has the page's charts" \
		test "$(count "$tmp/syn.dom" '<svg')" -eq "$(count "$tmp/syn.html" '<svg')" -a \
		"$(count "$tmp/syn.dom" '<svg')" -ge 2
	# on CPU, IO:WALSync, Lock:transactionid, Extension:x<&"y>'z, Timeout:PgSleep
	check "five bands for the client backends' events" \
		test "$(count "$tmp/syn.chart" '<g class="band"')" -eq 5
	for e in 'on CPU' 'IO:WALSync' 'Lock:transactionid' 'Timeout:PgSleep'; do
		check "a band for $e" grep -q "data-event=\"$e\"" "$tmp/syn.chart"
	done
	# (a serializer may write < > ' in an attribute value as they are)
	check "the escaped event is text, not markup" \
		grep -Eq 'data-event="Extension:x(&lt;|<)&amp;&quot;y(&gt;|>)(&#39;|.)z"' "$tmp/syn.chart"
	check "one bar segment per band and report it has" \
		test "$(grep -c '<rect x=' "$tmp/syn.chart")" -eq 9
	check "the whole trace's table" grep -q '<table class="report" data-table="waits">' "$tmp/syn.dom"
	check "IO:WALSync's time in it: 450 ms" \
		grep -q 'data-column="sum" data-value="0.45">450 ms<' "$tmp/syn.dom"
	check "its share: 22.0%" \
		grep -q 'data-column="share" data-value="0.219512195">22.0%<' "$tmp/syn.dom"
else
	fail "$browser --dump-dom: $(tail -c 500 "$tmp/browser.log")"
fi

# --- query-latency: a heatmap ---------------------------------------------------
page ql query-latency-bt0.23.json
if run_browser --dump-dom "file://$tmp/ql.html" >"$tmp/ql.dom" && [[ -s $tmp/ql.dom ]]; then
	ok
	check "the heatmap's cells" \
		test "$(count "$tmp/ql.dom" '<rect class="cell"')" -eq "$(count "$tmp/ql.html" '<rect class="cell"')" -a \
		"$(count "$tmp/ql.dom" '<rect class="cell"')" -gt 20
	check "their counts add up to the histogram's: 32947 statements per table" \
		test "$(between "$tmp/ql.dom" 'data-table="all">' '</figure>' |
			grep -o 'data-count="[0-9]*"' | tr -dc '0-9\n' | awk '{ n += $1 } END { print n + 0 }')" -eq 32947
	check "the y axis says log2 bucket bounds" grep -q 'log2 bucket upper bound' "$tmp/ql.dom"
else
	fail "$browser --dump-dom: $(tail -c 500 "$tmp/browser.log")"
fi

# --- a picture of the waits page -------------------------------------------------
page pgb waits-pgbench-synthetic.json
run_browser --hide-scrollbars --window-size=1100,1500 --screenshot="$tmp/waits.png" \
	"file://$tmp/pgb.html" >/dev/null
check "a screenshot of the waits page (a PNG of some size)" \
	test "$(head -c 8 "$tmp/waits.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a -a \
	"$(stat -c %s "$tmp/waits.png" 2>/dev/null || echo 0)" -gt 20000
if [[ -n $docs && -s $tmp/waits.png ]]; then
	mkdir -p docs/img && cp "$tmp/waits.png" docs/img/report-waits.png &&
		echo "docs/img/report-waits.png written" >&2
fi
done_
