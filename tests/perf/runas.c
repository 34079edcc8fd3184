// SPDX-License-Identifier: GPL-2.0
/*
 * runas UID PROG [ARGS...]: run PROG as user and group UID, without
 * supplementary groups and so without the capabilities of root (the
 * guest's busybox has no tool for that). The perf tests use it to run
 * perf where /proc/PID/map_files is not allowed (no CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE).
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *end;
	long id;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID PROG [ARGS...]\n");
		return 2;
	}
	id = strtol(argv[1], &end, 10);
	if (*end || id <= 0) {
		fprintf(stderr, "runas: bad user id '%s'\n", argv[1]);
		return 2;
	}
	if (setgroups(0, NULL) || setgid(id) || setuid(id)) {
		perror("runas");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
