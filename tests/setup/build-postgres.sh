#!/usr/bin/env bash
# Builds PostgreSQL MAJOR (13, 15, 17 or 18) from the Debian source package with
# debug info and USDT probes, into $PGBT_CACHE/pgMAJOR (default
# /var/cache/pgbt). Cached: a finished build is reused. Prints the install
# prefix on stdout.
#
#   tests/setup/build-postgres.sh 17   ->  /var/cache/pgbt/pg17
#
# MAJOR-VARIANT builds the same source with tests/setup/pgMAJOR-*.patch for
# that variant applied, into its own prefix (rebuilt when the patch changes):
#   18-waitprobes  USDT probes wait__event__start/end in
#                  pgstat_report_wait_start/end (pg18-wait-event-probes.patch)
#                  ->  /var/cache/pgbt/pg18-waitprobes
#
# A suite may list a source whose files the registry no longer serves (seen
# for 17). Then the build is unavailable, not broken: one line on stderr,
# the reason in $PGBT_CACHE/pgNAME.unavailable (the tests skip that build
# and say why), and exit status 3. Any other failure is exit status 1.
#
# PGBT_BUILD_UNTIL=configure stops after a successful configure (nothing is
# installed), PGBT_BUILD_UNTIL=source once the source is fetched (and
# patched): tests/setup/check-fresh.sh proves downloads and configure
# steps that way, in an empty cache.
set -euo pipefail
# Run from make, PostgreSQL's makefiles would inherit MAKELEVEL/MAKEFLAGS
# and skip generating their headers (utils/errcodes.h): start clean.
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES

name=${1:?usage: build-postgres.sh MAJOR[-VARIANT]}
major=${name%%-*}
setup_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
patch=
case "$name" in
  "$major") ;;
  18-waitprobes) patch=$setup_dir/pg18-wait-event-probes.patch ;;
  *) echo "build-postgres: no build variant '$name' (known: 13, 15, 17, 18, 18-waitprobes)" >&2; exit 2 ;;
esac
case "$major" in
  13) suite=bullseye ;;
  15) suite=bookworm ;;
  17) suite=trixie ;;
  18) suite=sid ;;
  *) echo "build-postgres: no source suite known for PostgreSQL $major" >&2; exit 2 ;;
esac

cache=${PGBT_CACHE:-/var/cache/pgbt}
prefix=$cache/pg$name
patch_id=
[ -z "$patch" ] || patch_id=" + $(basename "$patch") $(sha256sum "$patch" | cut -c1-16)"
if [ -x "$prefix/bin/postgres" ] && [ -f "$prefix/.pgbt-built" ] &&
   { [ -z "$patch" ] || grep -qF -- "$patch_id" "$prefix/.pgbt-built"; }; then
  echo "$prefix"; exit 0
fi

# A private apt configuration, so the system's sources stay untouched.
# Builds may run side by side (check-fresh.sh): one at a time sets up the
# lists and fetches its source (the lock is released before configure).
apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$cache/src"
exec {apt_lock}>"$cache/apt.lock"
flock "$apt_lock"
source "$(dirname "$0")/debian-mirror.sh"
mirror=$(debian_mirror build-postgres) || exit 1
for s in bullseye bookworm trixie sid; do
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $s main"
done > "$apt_dir/sources.list.new"
# Lists fetched for another set of suites are fetched again.
if ! cmp -s "$apt_dir/sources.list.new" "$apt_dir/sources.list"; then
  rm -rf "$apt_dir/lists" && mkdir -p "$apt_dir/lists/partial"
fi
mv "$apt_dir/sources.list.new" "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)

unavailable=$cache/pg$name.unavailable
srcdir=$(ls -d "$cache/src/pg$major"/postgresql-"$major"*/ 2>/dev/null | head -n1 || true)
if [ -z "$srcdir" ]; then
  echo "build-postgres: fetching postgresql-$major source ($suite)" >&2
  [ -n "$(ls "$apt_dir/lists" 2>/dev/null | grep -v partial)" ] || apt-get "${apt_opts[@]}" update -qq >&2
  rm -rf "$cache/src/pg$major" && mkdir -p "$cache/src/pg$major"
  if ! (cd "$cache/src/pg$major" && apt-get "${apt_opts[@]}" source -qq --download-only \
        "postgresql-$major/$suite" >"$cache/src/pg$major.fetch.log" 2>&1); then
    status=$(sed -n 's/^E: Failed to fetch .* \([0-9][0-9][0-9]  *[A-Za-z][A-Za-z ]*[a-z]\) *\[.*/\1/p' \
      "$cache/src/pg$major.fetch.log" | head -n1)
    why="the postgresql-$major source that $suite lists could not be downloaded (${status:-see $cache/src/pg$major.fetch.log})"
    echo "$why" >"$unavailable"
    echo "build-postgres: PostgreSQL $name unavailable: $why" >&2
    rm -rf "$cache/src/pg$major"
    exit 3
  fi
  orig=$(ls "$cache/src/pg$major"/postgresql-"$major"_*.orig.tar.* | head -n1)
  tar -C "$cache/src/pg$major" -xf "$orig"
  srcdir=$(ls -d "$cache/src/pg$major"/postgresql-"$major"*/ | head -n1)
fi

# A variant patches its own copy, unpacked afresh, so the plain source stays
# as released.
if [ -n "$patch" ]; then
  orig=$(ls "$cache/src/pg$major"/postgresql-"$major"_*.orig.tar.* | head -n1)
  rm -rf "$cache/src/pg$name" && mkdir -p "$cache/src/pg$name"
  tar -C "$cache/src/pg$name" -xf "$orig"
  srcdir=$(ls -d "$cache/src/pg$name"/postgresql-"$major"*/ | head -n1)
  patch -d "$srcdir" -p1 -s <"$patch" >&2
fi
flock -u "$apt_lock"
if [ "${PGBT_BUILD_UNTIL:-}" = source ]; then
  echo "build-postgres: $(basename "$srcdir")${patch_id} fetched${patch:+ and patched} in $srcdir" >&2
  exit 0
fi

echo "build-postgres: building $(basename "$srcdir")${patch_id} into $prefix" >&2
rm -f "$prefix/.pgbt-built"
builddir=$cache/build/pg$name
rm -rf "$builddir" && mkdir -p "$builddir"
cd "$builddir"
"$srcdir/configure" --prefix="$prefix" --enable-debug --enable-dtrace --without-icu \
  CFLAGS="-O2 -g" >configure.log 2>&1 || { tail -20 configure.log >&2; exit 1; }
if [ "${PGBT_BUILD_UNTIL:-}" = configure ]; then
  echo "build-postgres: $(basename "$srcdir")${patch_id} configured in $builddir" >&2
  exit 0
fi
make -j"$(nproc)" -s >make.log 2>&1 || { tail -30 make.log >&2; exit 1; }
make -s install >install.log 2>&1 || { tail -20 install.log >&2; exit 1; }
echo "$(basename "$srcdir")$patch_id" > "$prefix/.pgbt-built"
rm -f "$unavailable"
echo "$prefix"
