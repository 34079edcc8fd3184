// SPDX-License-Identifier: GPL-2.0
/*
 * mmap3_demo: what upstream's PERF_RECORD_MMAP2 with attr.build_id and
 * PERF_RECORD_MMAP3 say of the same mappings, side by side, from one run,
 * next to the build-id `readelf -n` gave on the host (the fixtures'
 * MANIFEST).
 *
 *   mmap3_demo exec PROG [ARG...]  run PROG: exec and ld.so map it, after
 *				   reading its headers
 *   mmap3_demo map FILE...	   map each FILE executable without reading
 *				   it first
 *   mmap3_demo mprotect FILE...   map each FILE read-only, read it, let its
 *				   pages go (MADV_PAGEOUT), then mprotect() it
 *				   executable
 *
 * A child does it, under two per-task events: MMAP2 with attr.build_id,
 * and attr.mmap3. A PENDING MMAP3 takes the status and build-id of its
 * PERF_RECORD_MMAP3_BUILD_ID answer. The last line counts the mappings
 * whose build-id each record got right.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RING_PAGES	64
#define PAGE		4096
#define MANIFEST	"/tests/fixtures/MANIFEST"

/* The records up to the file name, as the uapi header lays them out. */
struct mmap2_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size, reserved[3];
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct mmap3_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint8_t build_id_size, build_id_status;
	uint16_t reserved;
	uint8_t build_id[20];
	char filename[];
};

struct mmap3_answer {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint8_t build_id_size, build_id_status;
	uint16_t reserved;
	uint8_t build_id[20];
};

static const char *const status_names[] = {
	"UNKNOWN", "FOUND", "NO_FILE", "NOT_ELF", "NO_BUILD_ID",
	"MALFORMED", "IO_ERROR", "SKIPPED", "PENDING",
};

struct row {
	char name[256];
	uint64_t addr;
	char mmap2[41], mmap3[41];
	int status;		/* MMAP3's, then its answer's */
	int pending;		/* the MMAP3 said PENDING */
};

static struct row rows[128];
static int nrows;

static struct row *row_at(uint64_t addr, const char *name)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (rows[i].addr == addr)
			return &rows[i];
	if (!name || nrows == 128)
		return NULL;
	snprintf(rows[nrows].name, sizeof(rows[nrows].name), "%s", name);
	rows[nrows].addr = addr;
	strcpy(rows[nrows].mmap2, "-");
	strcpy(rows[nrows].mmap3, "-");
	return &rows[nrows++];
}

static void hex(const uint8_t *id, int size, char *out)
{
	int i;

	strcpy(out, "-");
	for (i = 0; i < size && i < 20; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

/* One record: executable mappings of files only. */
static void collect(const struct perf_event_header *h)
{
	const struct mmap2_record *r2 = (const void *)h;
	const struct mmap3_record *r3 = (const void *)h;
	const struct mmap3_answer *a = (const void *)h;
	struct row *row;

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (!(r2->prot & PROT_EXEC) || r2->filename[0] != '/')
			return;
		row = row_at(r2->addr, r2->filename);
		if (row && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			hex(r2->build_id, r2->build_id_size, row->mmap2);
		return;
	case PERF_RECORD_MMAP3:
		if (!(r3->prot & PROT_EXEC) || r3->filename[0] != '/')
			return;
		row = row_at(r3->addr, r3->filename);
		if (!row)
			return;
		row->status = r3->build_id_status;
		row->pending = r3->build_id_status == PERF_MMAP3_BUILD_ID_PENDING;
		hex(r3->build_id, r3->build_id_size, row->mmap3);
		return;
	case PERF_RECORD_MMAP3_BUILD_ID:
		row = row_at(a->addr, NULL);
		if (!row || row->status != PERF_MMAP3_BUILD_ID_PENDING)
			return;
		row->status = a->build_id_status;
		hex(a->build_id, a->build_id_size, row->mmap3);
		return;
	}
}

static void drain(const char *ring)
{
	const struct perf_event_mmap_page *page = (const void *)ring;
	const char *data = ring + PAGE;
	uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = page->data_tail;
	char rec[PAGE * 2];

	while (tail < head) {
		const struct perf_event_header *h = (const void *)(data + tail % (RING_PAGES * PAGE));
		size_t off = tail % (RING_PAGES * PAGE), i;

		/* A record may wrap around the end of the ring. */
		for (i = 0; i < h->size && i < sizeof(rec); i++)
			rec[i] = data[(off + i) % (RING_PAGES * PAGE)];
		collect((const void *)rec);
		tail += h->size;
	}
}

static int open_on(pid_t pid, int mmap3, char **ring)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_DUMMY,
		.sample_type	= PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all	= 1,
		.exclude_kernel	= 1,
		.disabled	= 1,
		.enable_on_exec	= 1,
	};
	int fd;

	if (mmap3)
		attr.mmap3 = 1;
	else
		attr.mmap = attr.mmap2 = attr.build_id = 1;
	fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
	if (fd < 0)
		return -1;
	*ring = mmap(NULL, (RING_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return *ring == MAP_FAILED ? -1 : fd;
}

/* The child's mappings of FILE, for map and mprotect. */
static void map_file(const char *how, const char *file)
{
	struct stat st;
	size_t len, off;
	volatile char sum = 0;
	char *p;
	int fd = open(file, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		perror(file);
		_exit(1);
	}
	len = (st.st_size + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (!strcmp(how, "map")) {
		p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	} else {
		p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		for (off = 0; p != MAP_FAILED && off < (size_t)st.st_size; off += PAGE)
			sum += p[off];
		if (p != MAP_FAILED && (madvise(p, len, MADV_PAGEOUT) ||
					mprotect(p, len, PROT_READ | PROT_EXEC)))
			p = MAP_FAILED;
	}
	if (p == MAP_FAILED) {
		perror(file);
		_exit(1);
	}
	close(fd);
}

/* The build-id readelf -n gave on the host, or "-" for none. */
static void manifest(const char *path, char *want)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char line[512], name[256], id[64];
	FILE *f = fopen(MANIFEST, "r");

	strcpy(want, "?");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %63s", name, id) == 2 && !strcmp(name, base))
			strcpy(want, strcmp(id, "none") ? id : "-");
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	int go[2], fd2, fd3, status, i, right2 = 0, right3 = 0, pending = 0;
	char *ring2, *ring3, c;
	pid_t child;

	if (argc < 3 || (strcmp(argv[1], "exec") && strcmp(argv[1], "map") &&
			 strcmp(argv[1], "mprotect"))) {
		fprintf(stderr, "usage: mmap3_demo exec PROG [ARG...] | map FILE... | mprotect FILE...\n");
		return 2;
	}
	if (pipe(go))
		return 1;
	child = fork();
	if (!child) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		if (!strcmp(argv[1], "exec")) {
			execv(argv[2], argv + 2);
			perror(argv[2]);
			_exit(127);
		}
		for (i = 2; i < argc; i++)
			map_file(argv[1], argv[i]);
		_exit(0);
	}
	close(go[0]);
	fd2 = open_on(child, 0, &ring2);
	fd3 = open_on(child, 1, &ring3);
	if (fd2 < 0 || fd3 < 0) {
		perror("perf_event_open (attr.mmap3 needs the MMAP3 series)");
		kill(child, SIGKILL);
		return 1;
	}
	/* exec enables the events; map and mprotect do not exec. */
	if (strcmp(argv[1], "exec") &&
	    (ioctl(fd2, PERF_EVENT_IOC_ENABLE, 0) || ioctl(fd3, PERF_EVENT_IOC_ENABLE, 0)))
		return 1;
	if (write(go[1], "x", 1) != 1 || waitpid(child, &status, 0) != child)
		return 1;
	drain(ring2);
	drain(ring3);

	printf("%-30s %-40s %-40s %s\n", "mapped file", "readelf -n (host)", "MMAP2+build_id",
	       "MMAP3");
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		int s = r->status < 9 ? r->status : 0;
		char want[64];

		manifest(r->name, want);
		printf("%-30s %-40s %-40s %s%s %s\n", r->name, want, r->mmap2,
		       r->pending ? "PENDING, then " : "", status_names[s], r->mmap3);
		right2 += strcmp(want, "-") && !strcmp(want, r->mmap2);
		right3 += strcmp(want, "-") && !strcmp(want, r->mmap3);
		pending += r->pending;
	}
	printf("%s: %d mappings; right build-ids: MMAP2+build_id %d, MMAP3 %d (%d PENDING first)\n",
	       argv[1], nrows, right2, right3, pending);
	/* Every mapping of a file with a build-id gets it from MMAP3. */
	for (i = 0; i < nrows; i++) {
		char want[64];

		manifest(rows[i].name, want);
		if (strcmp(want, "-") && strcmp(want, rows[i].mmap3))
			return 1;
	}
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}
