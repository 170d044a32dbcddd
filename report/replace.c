/* Whole-file replacement (report/replace.h). */
#include "replace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* DIR/.NAME.PID.tmp for DIR/NAME: in the same directory, so that the
 * rename stays on one file system and is atomic. */
static void temp_name(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) + 1 : 0;

	snprintf(out, len, "%.*s.%s.%d.tmp", dir, path, path + dir, (int)getpid());
}

int rp_replace_file(const char *path, const char *data, size_t len, const char *what,
		    struct pgbt_err *err)
{
	char tmp[PATH_MAX + 32];
	int fd;

	temp_name(path, tmp, sizeof(tmp));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return pgbt_fail(err, "%s: %s", what, strerror(errno));
	for (size_t o = 0; o < len;) {
		ssize_t n = write(fd, data + o, len - o);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			pgbt_fail(err, "%s: write failed: %s", tmp, n < 0 ? strerror(errno) : "no room");
			close(fd);
			unlink(tmp);
			return -1;
		}
		o += (size_t)n;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		pgbt_fail(err, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
