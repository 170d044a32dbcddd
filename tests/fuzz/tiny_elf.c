/* A seed for fuzz_elf: a static ELF of about 2 KB (built without libc by
 * tests/fuzz/seeds.sh) with what pgbt reads in a server binary: a version
 * string, a symbol, a build-id and USDT notes, one with a semaphore. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

const char pg_version_str[] =
	"PostgreSQL 17.2 on x86_64-pc-linux-gnu, compiled by gcc, 64-bit";
unsigned short postgresql_query__start_semaphore __attribute__((section(".probes")));
unsigned short postgresql_lock__wait__start_semaphore __attribute__((section(".probes")));
long LockNames[2] = { 1, 2 };

void _start(void)
{
	STAP_PROBE1(postgresql, query__start, LockNames[0]);
	STAP_PROBE2(postgresql, lock__wait__start, LockNames[1], 3);
	for (;;)
		;
}
