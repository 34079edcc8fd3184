// SPDX-License-Identifier: GPL-2.0
/*
 * Two files mapped executable at one address, the second over the first
 * with MAP_FIXED, by another thread, while the first mapping's build-id
 * is still being read:
 *
 *   mapfixed FIRST SECOND
 *
 * The main thread maps FIRST at ADDR (MAP_FIXED_NOREPLACE); a second
 * thread waits until /proc/self/maps shows FIRST there and maps SECOND
 * over it. When FIRST's build-id note is not in the page cache (a cold
 * disk), its trace event mmap3:build_id comes from the read on the main
 * thread's way back to user space, after SECOND's MMAP2 record: the
 * event of FIRST then names a mapping that is no longer there, and a
 * reader must not give its build-id to SECOND's map. Prints "raced" when
 * SECOND was mapped before the main thread's mmap() returned, else
 * "in order"; exits 0 when both mmap() calls succeed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ADDR 0x600000000000UL
#define LEN 4096UL

static const char *first, *second;
static volatile int first_returned, second_mapped;

static int mapped_at_addr(void)
{
	char line[512], want[64];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "%lx-", ADDR);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)) && strstr(line, first))
			found = 1;
	fclose(f);
	return found;
}

static void *map_second(void *arg)
{
	int fd = open(second, O_RDONLY);
	void *p;

	(void)arg;
	if (fd < 0) {
		perror(second);
		exit(1);
	}
	while (!mapped_at_addr())
		;
	p = mmap((void *)ADDR, LEN, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap MAP_FIXED");
		exit(1);
	}
	second_mapped = !first_returned;
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;
	void *p;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: mapfixed FIRST SECOND\n");
		return 2;
	}
	first = argv[1];
	second = argv[2];
	fd = open(first, O_RDONLY);
	if (fd < 0) {
		perror(first);
		return 1;
	}
	if (pthread_create(&thread, NULL, map_second, NULL))
		return 1;
	p = mmap((void *)ADDR, LEN, PROT_READ | PROT_EXEC,
		 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	first_returned = 1;
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_join(thread, NULL);
	printf("%s\n", second_mapped ? "raced" : "in order");
	return 0;
}
