/* libFuzzer target: an ELF file (lib/found/elfimg.c) and its USDT notes
 * (lib/found/usdt.c). The input is written to a memory file and opened by path,
 * as pgbt-gen opens a server binary. */
#include "lib/found/elfimg.h"
#include "lib/found/usdt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgbt_elf *elf;
	struct pgbt_usdt usdt;
	struct pgbt_sym sym;
	struct pgbt_err err;
	char version[256];
	int major;
	unsigned char bytes[16];

	if (fd < 0) {
		fd = memfd_create("fuzz-elf", 0);
		if (fd < 0) {
			perror("fuzz_elf: memfd_create");
			exit(1);
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
		perror("fuzz_elf: write");
		exit(1);
	}
	elf = pgbt_elf_open(path, &err);
	if (!elf)
		return 0;
	pgbt_elf_build_id(elf);
	pgbt_elf_is_pie(elf);
	pgbt_elf_load_vaddr(elf);
	if (pgbt_elf_symbol(elf, "LockNames", &sym, &err) == 0)
		pgbt_elf_read(elf, sym.value, bytes, sizeof(bytes), &err);
	pgbt_elf_pg_version(elf, version, sizeof(version), &major, &err);
	if (pgbt_usdt_read(elf, &usdt, &err) == 0) {
		pgbt_usdt_count(&usdt, "postgresql", "query__start");
		pgbt_usdt_free(&usdt);
	}
	pgbt_elf_close(elf);
	return 0;
}
