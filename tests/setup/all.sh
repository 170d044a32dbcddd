#!/usr/bin/env bash
# Everything the tests need, installed idempotently (make test-deps runs
# it): the host's packages first, then the PostgreSQL source builds (CPU)
# while the Debian roots and the npm packages download beside them. Each
# step's output goes to stderr with its name; a build or package that
# cannot be had (exit 3: its tests are skipped by name) is not a failure.
# Prints each step's result and time at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
start=$SECONDS

"$here/install-deps.sh"

# run NAME CMD...: CMD with its output prefixed by NAME; its status and
# time in $log/NAME.
log=$(mktemp -d /tmp/pgbt-setup.XXXXXX)
trap 'rm -rf "$log"' EXIT
run() {
	local name=$1 t=$SECONDS rc=0; shift
	"$@" 2>&1 >/dev/null | sed -u "s|^|[$name] |" >&2 || rc=${PIPESTATUS[0]}
	echo "$rc $((SECONDS - t))" >"$log/$name"
}

{
	for s in trixie bullseye sid; do run "root-$s" "$here/debian-root.sh" "$s"; done
	for m in 14 16; do run "embedded-$m" "$here/embedded-postgres.sh" "$m"; done
	for m in 13 15 17 18; do run "arm64-$m" "$here/debian-arm64.sh" "$m"; done
} &
downloads=$!
for b in 13 15 17 18 18-waitprobes; do run "pg$b" "$here/build-postgres.sh" "$b"; done
wait "$downloads"

failed=
for f in "$log"/*; do
	read -r rc secs <"$f"
	case $rc in
		0) printf 'setup: ok    %-20s %4d s\n' "${f##*/}" "$secs" ;;
		3) printf 'setup: skip  %-20s %4d s  (cannot be had: its tests are skipped)\n' "${f##*/}" "$secs" ;;
		*) printf 'setup: FAIL  %-20s %4d s  (exit %d)\n' "${f##*/}" "$secs" "$rc"; failed=1 ;;
	esac
done
printf 'setup: %d s in all\n' $((SECONDS - start))
[[ -z $failed ]]
