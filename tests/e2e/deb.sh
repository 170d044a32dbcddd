#!/usr/bin/env bash
# The Debian package: `make deb` builds it and lintian finds nothing to say
# (make deb fails otherwise; run here again to show the tags); apt accepts
# it with nothing else to install; installed, /usr/bin/pgbt-gen has the
# package's version and renders, for a running server on each leg, the same
# program as the build tree's pgbt-gen, from its built-in templates or the
# installed ones, that keeps to the portable subset and that bpftrace
# compiles; the man page and docs are where man and users look. Then
# dpkg -r takes it all away again. A machine that already has pgbt
# installed (or a /usr/bin/pgbt-gen of another origin) is left alone: skip.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

LINT=$PGBT_ROOT/tests/lint/bt-subset.sh
VERSION=$(sed -n '1s/^pgbt (\([^)]*\)).*/\1/p' "$PGBT_ROOT/debian/changelog")
DEB=$E2E_TMP/deb/pgbt_${VERSION}_amd64.deb
BUILT= INSTALLED=

# dpkg's state of package pgbt: "ii" installed, "" never or no more.
pgbt_state() {
	dpkg-query -W -f='${db:Status-Abbrev}' pgbt 2>/dev/null | tr -d ' ' || true
}

# Whatever happens, the package does not outlive the test.
remove_on_exit() {
	[[ -n $INSTALLED ]] && dpkg -r pgbt >/dev/null 2>&1
	return 0
}
pgbt_on_exit remove_on_exit

why_not_here() {
	local p
	[[ $(id -u) == 0 ]] || { echo "not root"; return 0; }
	[[ -z $(pgbt_state) ]] || { echo "pgbt is installed here already ($(pgbt_state)): not touched"; return 0; }
	[[ ! -e /usr/bin/pgbt-gen ]] || { echo "/usr/bin/pgbt-gen exists (not from the package): not touched"; return 0; }
	for p in dpkg-buildpackage dh lintian apt-get; do
		command -v "$p" >/dev/null || { echo "no $p (tests/setup/install-deps.sh)"; return 0; }
	done
	return 1
}

test_build() {
	local rc=0
	# The unit tests are tests/run's own: not again inside the build.
	DEB_BUILD_OPTIONS=nocheck make -s -C "$PGBT_ROOT" deb DEB_DIR="$E2E_TMP/deb" \
		>"$E2E_TMP/make-deb.out" 2>&1 || rc=$?
	check_eq "make deb exits 0" "$rc" 0
	((rc == 0)) || { _e2e_show "$(cat "$E2E_TMP/make-deb.out")"; return 0; }
	BUILT=1
	check_empty "lintian: no tag but the overridden ones" \
		"$(lintian "$E2E_TMP/deb/pgbt_${VERSION}_amd64.changes" 2>&1 | grep -v 'running with root privileges')"
	check_eq "package version is debian/changelog's" "$(dpkg-deb -f "$DEB" Version)" "$VERSION"
	check_contains "shlibs: libpq, libdw, libelf" "$(dpkg-deb -f "$DEB" Depends)" "libpq5"
	check_contains "shlibs: libdw" "$(dpkg-deb -f "$DEB" Depends)" "libdw1"
	check_contains "shlibs: libelf" "$(dpkg-deb -f "$DEB" Depends)" "libelf1"
	check_eq "bpftrace recommended" "$(dpkg-deb -f "$DEB" Recommends)" "bpftrace"
}

test_install() {
	local sim rc=0
	# apt resolves the dependencies; on this machine they are all there, so
	# installing changes nothing but pgbt.
	sim=$(apt-get install -s --no-install-recommends "$DEB" 2>&1) || rc=$?
	check_eq "apt-get install -s: resolves" "$rc" 0
	check_eq "apt-get install -s: installs pgbt alone" \
		"$(awk '$1 == "Inst" { print $2 }' <<<"$sim" | paste -sd' ')" "pgbt"
	# Anything more would change the machine beyond what dpkg -r undoes.
	[[ $(awk '$1 == "Inst" { print $2 }' <<<"$sim" | paste -sd' ') == pgbt ]] || return 0
	INSTALLED=1
	rc=0
	apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "$DEB" \
		>"$E2E_TMP/apt.out" 2>&1 || rc=$?
	check_eq "apt-get install ./pgbt_${VERSION}_amd64.deb exits 0" "$rc" 0
	((rc == 0)) || _e2e_show "$(cat "$E2E_TMP/apt.out")"
	check_eq "installed" "$(pgbt_state)" "ii"
	[[ $(pgbt_state) == ii ]] || return 0
	check_eq "/usr/bin/pgbt-gen --version" "$(/usr/bin/pgbt-gen --version)" "pgbt-gen $VERSION"
	check_eq "man finds pgbt-gen(1)" "$(man -w pgbt-gen 2>&1)" "/usr/share/man/man1/pgbt-gen.1.gz"
	check_contains "man page renders" \
		"$(MANWIDTH=200 man pgbt-gen 2>/dev/null | col -bx | tr -s ' ')" "pgbt-gen - render bpftrace"
	check_contains "man page names the version" "$(zcat /usr/share/man/man1/pgbt-gen.1.gz | head -n 1)" \
		"\"pgbt $VERSION\""
	check_eq "copyright and README" \
		"$(cd /usr/share/doc/pgbt && ls README.md.gz copyright 2>&1 | paste -sd' ')" "README.md.gz copyright"
	check_eq "runbooks in the docs" \
		"$(cd /usr/share/doc/pgbt/examples && ls ./*.md | paste -sd' ')" \
		"$(cd "$PGBT_ROOT/examples" && ls ./*.md | paste -sd' ')"
	check_eq "templates installed" \
		"$(cd /usr/share/pgbt/scripts && ls ./*.bt ./include/*.bt 2>/dev/null | paste -sd' ')" \
		"$(cd "$PGBT_ROOT/scripts" && ls ./*.bt ./include/*.bt 2>/dev/null | paste -sd' ')"
}

test_render_leg() {
	local out=$E2E_TMP/xid-rate-$LEG_BUILD.bt rc=0
	cluster_start "$LEG_BUILD"
	/usr/bin/pgbt-gen -p "$CL_PID" xid-rate >"$out" 2>"$out.err" || rc=$?
	check_eq "$LEG: installed pgbt-gen renders xid-rate" "$rc:$(cat "$out.err")" "0:"
	check_eq "$LEG: it is a bpftrace program" "$(head -n 1 "$out")" "#!/usr/bin/env bpftrace"
	check_empty "$LEG: xid-rate keeps to the portable subset" "$("$LINT" "$out" "$CL_PID" 2>&1)"
	check_empty "$LEG: xid-rate compiles without a word on stderr" \
		"$(bt_compile "$out")"
	# The origin line names the template file; the rest is the same.
	check_empty "$LEG: installed templates give the same program (diff)" \
		"$(diff <(/usr/bin/pgbt-gen --scripts-dir /usr/share/pgbt/scripts -p "$CL_PID" xid-rate 2>&1 |
			grep -v '^// Rendered') <(grep -v '^// Rendered' "$out"))"
	if [[ -x $PGBT_GEN ]]; then
		check_empty "$LEG: same program as the build tree's pgbt-gen (diff)" \
			"$(diff <("$PGBT_GEN" -p "$CL_PID" xid-rate 2>&1) "$out")"
	else
		skip "$LEG: no $PGBT_GEN to compare with (make)"
	fi
	cluster_stop
}

test_remove() {
	local rc=0
	dpkg -r pgbt >"$E2E_TMP/remove.out" 2>&1 || rc=$?
	check_eq "dpkg -r pgbt exits 0" "$rc" 0
	BUILT= INSTALLED=
	check_eq "removed without a trace in dpkg" "$(pgbt_state | sed 's/^un$//')" ""
	check_eq "files gone" "$(ls -d /usr/bin/pgbt-gen /usr/share/pgbt /usr/share/doc/pgbt \
		/usr/share/man/man1/pgbt-gen.1.gz 2>/dev/null)" ""
}

if why=$(why_not_here); then
	skip "the Debian package: $why"
	e2e_done
fi
test_build
[[ -z $BUILT ]] || test_install
if [[ $(pgbt_state) == ii ]]; then
	for leg in $(e2e_legs_checked each); do
		leg_use "$leg" && test_render_leg
	done
fi
[[ -z $INSTALLED ]] || test_remove
e2e_done
