#!/usr/bin/env bash
# A Debian root of another release, for what the tests need from it: a
# newer bpftrace, or a distribution's own PostgreSQL to run as a container
# would. Built once with debootstrap into $PGBT_CACHE/root-SUITE (default
# /var/cache/pgbt) and reused; prints its path on stdout.
#
#   tests/setup/debian-root.sh trixie     bpftrace 0.23, postgresql-17 (+ its
#                                         server headers), as Debian 13 ships
#   tests/setup/debian-root.sh bullseye   postgresql-13, as Debian 11 ships
#   tests/setup/debian-root.sh sid        bpftrace as Debian unstable ships it
#                                         (0.27.1 on 2026-11-27; sid moves:
#                                         ROOT/.pgbt-root names what it got)
#
# Packages come from the suite as it is today (no pinned version that the
# registry could stop serving); the root records what it got in
# ROOT/.pgbt-root and says it on stderr. A program of the root runs on the
# host through the root's own loader (see write_wrapper), or inside it with
# chroot.
#
# sid is Debian's moving suite: on some days its bpftrace cannot be
# installed (a transition, a package removed) and nothing here can fix
# that. A sid root that cannot be had is unavailable, not broken: one line
# on stderr, the reason in $PGBT_CACHE/root-sid.unavailable (the tests skip
# its bpftrace, saying why), exit status 3. Any other failure is exit 1.
set -euo pipefail

suite=${1:?usage: debian-root.sh SUITE}
case "$suite" in
  trixie)   packages=bpftrace,postgresql-17,postgresql-server-dev-17 ;;
  bullseye) packages=postgresql-13,postgresql-server-dev-13 ;;
  sid)      packages=bpftrace ;;
  *) echo "debian-root: no package set for suite '$suite' (known: trixie, bullseye, sid)" >&2; exit 2 ;;
esac

cache=${PGBT_CACHE:-/var/cache/pgbt}
root=$cache/root-$suite
marker=$root/.pgbt-root

# The root's bpftrace, runnable on the host through the root's own loader
# and libraries: $PGBT_CACHE/bin/bpftrace-SUITE (trixie, sid).
write_wrapper() {
  case "$suite" in trixie|sid) ;; *) return 0 ;; esac
  mkdir -p "$cache/bin"
  printf '%s\n' '#!/bin/sh' "# Debian $suite's bpftrace from $root, with that root's libraries." \
    "exec \"$root/lib64/ld-linux-x86-64.so.2\" --library-path \"$root/usr/lib/x86_64-linux-gnu\" \"$root/usr/bin/bpftrace\" \"\$@\"" \
    >"$cache/bin/bpftrace-$suite.new"
  chmod 755 "$cache/bin/bpftrace-$suite.new"
  mv "$cache/bin/bpftrace-$suite.new" "$cache/bin/bpftrace-$suite"
}

if [ -f "$marker" ] && grep -qxF "packages $packages" "$marker"; then
  write_wrapper
  echo "$root"; exit 0
fi

command -v debootstrap >/dev/null || {
  echo "debian-root: debootstrap is not installed (tests/setup/install-deps.sh installs it)" >&2; exit 1; }
source "$(dirname "$0")/debian-mirror.sh"
mirror=$(debian_mirror debian-root) || exit 1

echo "debian-root: debootstrap $suite with $packages into $root" >&2
rm -rf "$root.new"
mkdir -p "$cache"
unavailable=$cache/root-$suite.unavailable
log=$cache/debootstrap-$suite.log
if ! debootstrap --variant=minbase --include="$packages" "$suite" "$root.new" "$mirror" >"$log" 2>&1; then
  if [ "$suite" = sid ]; then
    # debootstrap's own reason: its last E: line (a package it could not
    # find, fetch or configure).
    why="debootstrap sid failed: $(grep '^E: ' "$log" | tail -n 1 | cut -c4-200)"
    [ "$why" != "debootstrap sid failed: " ] || why="debootstrap sid failed (see $log)"
    echo "$why" >"$unavailable"
    echo "debian-root: sid unavailable: $why" >&2
    rm -rf "$root.new"
    exit 3
  fi
  echo "debian-root: debootstrap $suite failed; last lines of $log:" >&2
  tail -n 15 "$log" >&2
  exit 1
fi
# Clusters are created by the tests, not by the package's post-install.
rm -rf "$root.new"/var/lib/postgresql/*/main "$root.new"/etc/postgresql/*/main
{
  echo "packages $packages"
  chroot "$root.new" dpkg-query -W -f='${Package} ${Version}\n' $(tr , ' ' <<<"$packages")
} >"$root.new/.pgbt-root"
rm -rf "$root"
mv "$root.new" "$root"
rm -f "$unavailable"
write_wrapper
echo "debian-root: $suite: $(sed 1d "$root/.pgbt-root" | paste -sd, | sed 's/,/, /g')" >&2
echo "$root"
