// SPDX-License-Identifier: GPL-2.0
/*
 * The program of the "renamed" item of `make bench` (tests/bench/renamed.sh):
 * a long-running process of a shared library that a package upgrade
 * replaces by rename while it runs. Linked with libren.so (libren.c), found
 * through its RUNPATH in the directory the item installs it in.
 *
 *   ren DIR ROUNDS
 *	once ld.so has mapped libren.so and main() runs, creates DIR/ready.PID;
 *	waits for DIR/go; works ROUNDS rounds in the library; creates
 *	DIR/done.PID and exits
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

unsigned long ren_work(unsigned long h);

static void touch(const char *dir, const char *what)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.%d", dir, what, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	unsigned long rounds, h = 0, r;
	char go[256];

	if (argc != 3) {
		fprintf(stderr, "usage: ren DIR ROUNDS\n");
		return 2;
	}
	rounds = strtoul(argv[2], NULL, 10);
	snprintf(go, sizeof(go), "%s/go", argv[1]);
	touch(argv[1], "ready");
	while (access(go, F_OK))
		usleep(2000);
	for (r = 0; r < rounds; r++)
		h = ren_work(h);
	touch(argv[1], "done");
	return h == 1;	/* h is never 1: the work cannot be optimised away */
}
