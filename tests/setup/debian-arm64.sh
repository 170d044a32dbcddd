#!/usr/bin/env bash
# Debian's arm64 PostgreSQL MAJOR, unpacked (never installed, never run):
# the server binary of postgresql-MAJOR (stripped, with USDT notes) and the
# server headers of postgresql-server-dev-MAJOR, for the tests of what pgbt
# can check about aarch64 on this x86-64 machine (tests/e2e/arm64.sh,
# tests/unit/test_arm64.c). Into $PGBT_CACHE/arm64/pgMAJOR (default
# /var/cache/pgbt); cached: a finished unpack is reused. Prints its path.
#
#   tests/setup/debian-arm64.sh 15   ->  /var/cache/pgbt/arm64/pg15
#                                        bin/postgres, include/server/...
#
# The suite that has each major: bullseye 13, bookworm 15, trixie 17,
# sid 18 (no reachable suite has 14 or 16). Packages come from the suite
# as it is today, whatever version it lists (the unpack records it in
# .pgbt-arm64). apt runs with a private configuration whose native
# architecture is arm64, so neither the system's sources nor dpkg's
# architectures change.
#
# A package the suite no longer lists or the registry no longer serves
# makes the major unavailable, not broken: one line on stderr, the reason
# in $PGBT_CACHE/arm64/pgMAJOR.unavailable (the tests skip it by name),
# exit status 3. Any other failure is exit status 1.
set -euo pipefail

major=${1:?usage: debian-arm64.sh MAJOR}
case "$major" in
  13) suite=bullseye ;;
  15) suite=bookworm ;;
  17) suite=trixie ;;
  18) suite=sid ;;
  *) echo "debian-arm64: no suite known to have arm64 PostgreSQL $major (known: 13, 15, 17, 18)" >&2; exit 2 ;;
esac
packages="postgresql-$major postgresql-server-dev-$major"

cache=${PGBT_CACHE:-/var/cache/pgbt}
dest=$cache/arm64/pg$major
marker=$dest/.pgbt-arm64
unavailable=$cache/arm64/pg$major.unavailable
if [ -x "$dest/bin/postgres" ] && [ -f "$marker" ] && grep -qxF "packages $packages ($suite)" "$marker"; then
  echo "$dest"; exit 0
fi

source "$(dirname "$0")/debian-mirror.sh"
mirror=$(debian_mirror debian-arm64) || exit 1
apt_dir=$cache/apt-arm64
mkdir -p "$apt_dir/lists/partial" "$cache/arm64"
# One major at a time: they share the package lists (check-fresh.sh runs
# its steps side by side).
exec 9>"$cache/arm64/.lock"
flock 9
for s in bullseye bookworm trixie sid; do
  echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $s main"
done >"$apt_dir/sources.list.new"
if ! cmp -s "$apt_dir/sources.list.new" "$apt_dir/sources.list"; then
  rm -rf "$apt_dir/lists" && mkdir -p "$apt_dir/lists/partial"
fi
mv "$apt_dir/sources.list.new" "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o Dir::State::status=/dev/null
          -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
          -o APT::Architecture=arm64 -o APT::Architectures::=arm64)

unavailable() {
  echo "$1" >"$unavailable"
  echo "debian-arm64: arm64 PostgreSQL $major unavailable: $1" >&2
  exit 3
}

dl=$(mktemp -d "$cache/arm64/dl.XXXXXX")
trap 'rm -rf "$dl"' EXIT
# The lists are fetched again when they cannot name the packages (first
# run, or lists older than what the registry now serves).
for attempt in cached fresh; do
  if [ "$attempt" = fresh ] || [ -z "$(find "$apt_dir/lists" -maxdepth 1 -type f -name '*Packages*')" ]; then
    apt-get "${apt_opts[@]}" update -qq >"$dl/update.log" 2>&1 ||
      unavailable "the $suite arm64 package lists could not be fetched ($(grep -m1 '^[EW]:' "$dl/update.log" || tail -n 1 "$dl/update.log"))"
  fi
  # _apt cannot write into our directory: download as root, quietly.
  if (cd "$dl" && apt-get "${apt_opts[@]}" -o APT::Sandbox::User=root download -qq \
        "postgresql-$major/$suite" "postgresql-server-dev-$major/$suite" >"$dl/download.log" 2>&1); then
    break
  fi
  [ "$attempt" = fresh ] &&
    unavailable "$packages ($suite, arm64) could not be downloaded ($(grep -m1 '^E:' "$dl/download.log" || tail -n 1 "$dl/download.log"))"
done

echo "debian-arm64: unpacking $packages ($suite) into $dest" >&2
rm -rf "$dest.new" "$dl/x" && mkdir -p "$dl/x" "$dest.new/include"
for deb in "$dl"/*.deb; do
  dpkg-deb -x "$deb" "$dl/x"
done
mv "$dl/x/usr/lib/postgresql/$major/bin" "$dest.new/bin"
mv "$dl/x/usr/include/postgresql/$major/server" "$dest.new/include/server"
case "$(od -An -tx1 -j18 -N2 "$dest.new/bin/postgres" | tr -d ' ')" in
  b700) ;;   # e_machine 183, EM_AARCH64
  *) echo "debian-arm64: $dest.new/bin/postgres is not an aarch64 ELF file" >&2; exit 1 ;;
esac
{
  echo "packages $packages ($suite)"
  for deb in "$dl"/*.deb; do dpkg-deb -f "$deb" Package Version | paste -sd' '; done
} >"$dest.new/.pgbt-arm64"
rm -rf "$dest"
mv "$dest.new" "$dest"
rm -f "$unavailable"
echo "$dest"
