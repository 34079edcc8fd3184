// SPDX-License-Identifier: GPL-2.0
/*
 * mmap3_demo: run a command and print, for each executable mapping it
 * made, the build-id `readelf -n` gave on the host (MANIFEST), the one in
 * its PERF_RECORD_MMAP3 record, and the one in upstream's MMAP2 record with
 * attr.build_id, side by side, from one run.
 *
 *   mmap3_demo COMMAND [ARG...]
 *   mmap3_demo --map FILE...	map each FILE executable, as a loader does,
 *				without reading it first
 */
#include <sys/wait.h>

#include "../tests/kselftest/mmap3_util.h"

struct row {
	char name[256];
	uint64_t addr;
	int status;		/* MMAP3 */
	char mmap3[41];
	char mmap2[41];
};

static struct row rows[64];
static int nrows;

static struct row *row_at(uint64_t addr, const char *name)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (rows[i].addr == addr)
			return &rows[i];
	if (nrows == 64)
		return NULL;
	snprintf(rows[nrows].name, sizeof(rows[nrows].name), "%s", name);
	rows[nrows].addr = addr;
	strcpy(rows[nrows].mmap2, "-");
	strcpy(rows[nrows].mmap3, "-");
	return &rows[nrows++];
}

static void collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r3 = (const void *)h;
	const struct mmap2_record *r2 = (const void *)h;
	struct row *row;

	if (h->type == PERF_RECORD_MMAP3 && (r3->prot & PROT_EXEC) &&
	    r3->filename[0] == '/') {
		row = row_at(r3->addr, r3->filename);
		if (!row)
			return;
		row->status = r3->build_id_status;
		build_id_hex(r3->build_id, r3->build_id_size, row->mmap3);
	}
	if (h->type == PERF_RECORD_MMAP2 && (r2->prot & PROT_EXEC) &&
	    r2->filename[0] == '/') {
		row = row_at(r2->addr, r2->filename);
		if (row && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			build_id_hex(r2->build_id, r2->build_id_size, row->mmap2);
	}
}

static int open_on(pid_t pid, int mmap3, int on_exec)
{
	struct perf_event_attr attr;

	side_band_attr(&attr);
	attr.mmap3 = mmap3;
	attr.mmap = attr.mmap2 = attr.build_id = !mmap3;
	attr.disabled = on_exec;
	attr.enable_on_exec = on_exec;
	return sys_perf_event_open(&attr, pid, -1, -1, 0);
}

int main(int argc, char **argv)
{
	struct ring r3, r2;
	int go[2], fd3, fd2, status, i, ok = 0;
	int map = argc > 1 && !strcmp(argv[1], "--map");
	pid_t child;

	if (argc < 2 + map) {
		fprintf(stderr, "usage: mmap3_demo COMMAND [ARG...] | --map FILE...\n");
		return 2;
	}
	if (pipe(go))
		return 1;
	child = fork();
	if (!child) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 2; map && i < argc; i++) {
			int fd = open(argv[i], O_RDONLY);

			if (fd < 0 || mmap(NULL, 4096, PROT_READ | PROT_EXEC,
					   MAP_PRIVATE, fd, 0) == MAP_FAILED) {
				perror(argv[i]);
				_exit(1);
			}
			close(fd);
		}
		if (map)
			_exit(0);
		execv(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	close(go[0]);
	fd3 = open_on(child, 1, !map);
	fd2 = open_on(child, 0, !map);
	if (fd3 < 0 || fd2 < 0) {
		perror("perf_event_open (a kernel with the MMAP3 patches?)");
		kill(child, SIGKILL);
		return 1;
	}
	if (ring_map(&r3, fd3, 64) || ring_map(&r2, fd2, 64)) {
		perror("mmap");
		return 1;
	}
	if (write(go[1], "x", 1) != 1 || waitpid(child, &status, 0) != child)
		return 1;
	ring_drain(&r3, collect, NULL);
	ring_drain(&r2, collect, NULL);

	printf("%-28s %-10s %-42s %-42s %s\n", "mapped file", "MMAP3", "build-id (readelf -n)",
	       "MMAP3 build-id", "MMAP2+build_id");
	for (i = 0; i < nrows; i++) {
		const char *base = strrchr(rows[i].name, '/') + 1;
		char want[41] = "?";
		struct fixture fx;

		if (!fixture_get(base, &fx))
			build_id_hex(fx.build_id, fx.build_id_size, want);
		printf("%-28s %-10s %-42s %-42s %s\n", rows[i].name,
		       mmap3_status_names[rows[i].status < 8 ? rows[i].status : 0],
		       want, rows[i].mmap3, rows[i].mmap2);
		ok += !strcmp(want, rows[i].mmap3);
	}
	printf("%d of %d mapped files: MMAP3 build-id equals readelf -n\n", ok, nrows);
	return ok == nrows ? 0 : 1;
}
