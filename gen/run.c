/* pgbt-gen run SCRIPT: renders SCRIPT, then becomes the bpftrace it was
 * rendered for, reading the rendering on stdin: "bpftrace -p PID -" for a
 * script that follows one process (so that bpftrace attaches its probes to
 * that process alone), "bpftrace -" for the others. The rendering goes
 * through an anonymous file, not a pipe: no writer process to wait for. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* An anonymous file holding text, at offset 0, or -1. */
static int text_file(const char *text)
{
	size_t left = strlen(text);
	int fd = memfd_create("pgbt-gen", 0);

	while (fd >= 0 && left) {
		ssize_t n = write(fd, text, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		text += n;
		left -= (size_t)n;
	}
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int cli_run(const struct cli *cli)
{
	struct pgbt_err err = { .msg = "" };
	struct cli_rendered info;
	char *out = NULL, pid[16];
	char *argv[5];
	int fd, argc = 0;

	if (cli_render(cli, &out, &info, &err) < 0) {
		fprintf(stderr, "pgbt-gen: %s\n", err.msg);
		return 1;
	}
	if (!info.bpftrace[0]) {
		fprintf(stderr, "pgbt-gen: run: no bpftrace to run (rendered for a version, or none on "
			"PATH): name the program with --bpftrace PATH\n");
		free(out);
		return 1;
	}
	fd = text_file(out);
	free(out);
	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) {
		fprintf(stderr, "pgbt-gen: run: cannot hand the script to bpftrace: %s\n",
			strerror(errno));
		return 1;
	}
	close(fd);
	argv[argc++] = info.bpftrace;
	if (info.run_pid) {
		snprintf(pid, sizeof(pid), "%d", (int)info.run_pid);
		argv[argc++] = "-p";
		argv[argc++] = pid;
	}
	argv[argc++] = "-";
	argv[argc] = NULL;
	fprintf(stderr, "pgbt-gen: running %s%s%s - (%s rendered on stdin)\n", info.bpftrace,
		info.run_pid ? " -p " : "", info.run_pid ? pid : "", cli->script);
	fflush(NULL);
	execvp(argv[0], argv);
	fprintf(stderr, "pgbt-gen: run: %s: %s\n", argv[0], strerror(errno));
	return 1;
}
