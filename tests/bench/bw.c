// SPDX-License-Identifier: GPL-2.0
/*
 * The programs of the real workload (tests/bench/workload.sh), built
 * dynamic, with the loader and libraries on the benchmark's disk, once per
 * TOOL so that each has its own build-id:
 *   bw-true                 exits at once (first exec of a dynamic binary)
 *   bw-cc OUT IN            "compiles": hashes IN ROUNDS times, writes OUT
 *   bw-as OUT IN            "assembles": the same, fewer rounds
 *   bw-ld OUT IN...         "links": reads every IN, writes OUT
 * The hashing is split between the program and libbw.so.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long bw_hash(const unsigned char *p, size_t n, unsigned long h);

#ifndef ROUNDS
#define ROUNDS 0
#endif

static unsigned char buf[1 << 16];

/* The program's own share of the work. */
static unsigned long mix(const unsigned char *p, size_t n, unsigned long h)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h + p[i]) * 31 + (h >> 7);
	return h;
}

int main(int argc, char **argv)
{
	unsigned long h = 0;
	size_t len = 0;
	int i, r, fd;
	FILE *out;

	if (argc < 3)
		return ROUNDS ? 2 : 0;
	for (i = 2; i < argc; i++) {
		ssize_t n;

		fd = open(argv[i], O_RDONLY);
		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		n = read(fd, buf + len, sizeof(buf) - len);
		close(fd);
		if (n < 0)
			return 1;
		len += n;
	}
	for (r = 0; r < ROUNDS; r++) {
		h = bw_hash(buf, len, h);
		h = mix(buf, len, h);
	}
	out = fopen(argv[1], "w");
	if (!out)
		return 1;
	for (i = 0; i < 64; i++)
		fprintf(out, "%s %d %016lx\n", TOOL, i, h + i);
	return fclose(out) ? 1 : 0;
}
