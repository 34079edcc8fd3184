// SPDX-License-Identifier: GPL-2.0
/*
 * Map files executable without reading them:
 *
 *   mapexec FILE...
 *
 * Each FILE is mapped whole, PROT_READ | PROT_EXEC, with mmap() alone: no
 * read() comes before, as one would from a loader, so a file whose pages
 * are not in the page cache (a cold disk, after drop_caches) has no
 * build-id note there at mapping time, and its PERF_RECORD_MMAP3 record
 * says PENDING, answered by a PERF_RECORD_MMAP3_BUILD_ID record on the way
 * back to user space. Exits 0 when every mapping was made.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	int i, fd;

	if (argc < 2) {
		fprintf(stderr, "usage: mapexec FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		fd = open(argv[i], O_RDONLY);
		if (fd < 0 || fstat(fd, &st) ||
		    mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror(argv[i]);
			return 1;
		}
		close(fd);
	}
	return 0;
}
