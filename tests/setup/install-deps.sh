#!/usr/bin/env bash
# Installs what pgbt's build, tests and bench need, and mounts tracefs.
# Idempotent: packages already present are not fetched again.
set -euo pipefail

packages=(
  build-essential pkg-config libelf-dev libdw-dev libdebuginfod-dev libpq-dev libjson-c-dev
  bpftrace gdb dwarves clang libclang-rt-14-dev
  postgresql-15 postgresql-contrib
  bison flex libreadline-dev zlib1g-dev systemtap-sdt-dev dpkg-dev
  gnuplot-nox dwz man-db bsdextrautils debootstrap debhelper lintian
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  jq curl prometheus prometheus-node-exporter
  chromium fonts-dejavu-core
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Tracepoints need tracefs (and older tools look under debugfs).
if [ -z "$(ls -A /sys/kernel/debug 2>/dev/null)" ]; then
  mount -t debugfs nodev /sys/kernel/debug 2>/dev/null || true
fi
if [ ! -e /sys/kernel/tracing/events ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
[ -e /sys/kernel/tracing/events/sched ] || {
  echo "install-deps: tracefs is not mounted at /sys/kernel/tracing" >&2; exit 1; }
