/* Preloaded into a server (LD_PRELOAD), sends its clock reads to the
 * kernel, as they go on a host whose clocksource the vDSO cannot read
 * (tests/e2e/clock-syscalls.sh). PostgreSQL reads the clock through
 * libc's clock_gettime and gettimeofday, which this replaces. */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, clock, ts);
}

int gettimeofday(struct timeval *tv, void *tz)
{
	return (int)syscall(SYS_gettimeofday, tv, tz);
}
