#!/bin/sh
# Writes seed inputs for the fuzz targets into DIR/NAME/ from real inputs:
# each template with the fragments it includes (fuzz_template's format),
# as is and with the tags that need a live server replaced by 1 (so that
# rendering for fuzz_template's offline target goes past them),
# each layout file, the reader's bpftrace -f json captures
# (tests/unit/report/), the ELF fixtures of the unit tests (built by make
# unit) and a 2 KB ELF (tests/fuzz/tiny_elf.c, with and without symbols). The kept corpus, tests/fuzz/corpus/NAME, is these merged with
# what fuzzing found:
#   build/fuzz/fuzzers/fuzz_NAME -merge=1 tests/fuzz/corpus/NAME DIR/NAME
set -eu
dir=${1:?usage: tests/fuzz/seeds.sh DIR}
fixtures=${PGBT_FIXTURES:-build/fixtures}
mkdir -p "$dir/template" "$dir/layout" "$dir/elf" "$dir/report"

for t in scripts/*.bt; do
	out="$dir/template/${t##*/}"
	cat "$t" >"$out"
	for name in $(sed -n 's/^[[:space:]]*{{include \([^ }]*\).*/\1/p' "$t" | sort -u); do
		printf '\n%%%%%% %s\n' "$name" >>"$out"
		cat "scripts/include/$name.bt" >>"$out"
	done
	sed 's/{{ *\(postmaster\.pid\|shmem\.base\|[&*][^}]*\|backend([^}]*\) *}}/1/g' \
		"$out" >"${out%.bt}.offline.bt"
done
cp lib/types/layouts/*.layout "$dir/layout/"
cp tests/unit/report/*.json "$dir/report/"
for f in fake_postgres.stripped usdt_probes.stripped usdt_probes; do
	cp "$fixtures/$f" "$dir/elf/$f"
done
${CC:-cc} -Os -nostdlib -static -fno-asynchronous-unwind-tables -Wl,--build-id \
	-Wl,-z,noseparate-code -o "$dir/elf/tiny" tests/fuzz/tiny_elf.c
strip -o "$dir/elf/tiny.stripped" "$dir/elf/tiny"
# the same for aarch64, whose USDT arguments are written "-8@[x0, 8]"
if command -v aarch64-linux-gnu-gcc >/dev/null; then
	sed 's/on x86_64-pc-linux-gnu/on aarch64-unknown-linux-gnu/' tests/fuzz/tiny_elf.c >"$dir/tiny-a64.c"
	aarch64-linux-gnu-gcc -Os -nostdlib -static -fno-asynchronous-unwind-tables \
		-Wl,--build-id -Wl,-z,noseparate-code -Wl,-z,max-page-size=16 \
		-isystem "/usr/include/$(${CC:-cc} -dumpmachine)" -o "$dir/elf/tiny-a64" "$dir/tiny-a64.c"
	aarch64-linux-gnu-strip -o "$dir/elf/tiny-a64.stripped" "$dir/elf/tiny-a64"
	rm "$dir/tiny-a64.c"
fi
