/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the MMAP3 selftests: perf_event_open(), ring buffer
 * draining, the record layouts of DESIGN.md, and the fixture manifest that
 * says which build-id each test file was linked with.
 */
#ifndef MMAP3_UTIL_H
#define MMAP3_UTIL_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#define BUILD_ID_SIZE_MAX	20

/* PERF_RECORD_MMAP3 up to the file name (DESIGN.md, normative). */
struct mmap3_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint8_t build_id_size;
	uint8_t build_id_status;
	uint16_t reserved;
	uint8_t build_id[BUILD_ID_SIZE_MAX];
	char filename[];
};
_Static_assert(sizeof(struct mmap3_record) == 96,
	       "DESIGN.md: 96 bytes before the file name, a multiple of 8");

/* PERF_RECORD_MMAP2 up to the file name. */
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
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[BUILD_ID_SIZE_MAX];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

static inline int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				      int cpu, int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* A software dummy event on the calling task: side-band records only. */
static inline void side_band_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_id_all = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

struct ring {
	int fd;
	size_t data_size;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	unsigned char *copy;	/* one record, contiguous */
	uint64_t lost;		/* sum of PERF_RECORD_LOST */
};

/* Maps the ring of @fd with @pages data pages (a power of two). */
static inline int ring_map(struct ring *r, int fd, size_t pages)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (pages + 1) * psz, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -1;
	r->fd = fd;
	r->meta = p;
	r->data = (unsigned char *)p + psz;
	r->data_size = pages * psz;
	r->copy = malloc(65536);
	r->lost = 0;
	return r->copy ? 0 : -1;
}

static inline void ring_unmap(struct ring *r)
{
	munmap(r->meta, r->data_size + sysconf(_SC_PAGESIZE));
	free(r->copy);
	close(r->fd);
}

/*
 * Calls @fn on each record written since the last call, in order, with the
 * record copied out contiguously; counts PERF_RECORD_LOST. Returns the
 * number of records.
 */
static inline int ring_drain(struct ring *r,
			     void (*fn)(const struct perf_event_header *h, void *ctx),
			     void *ctx)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int n = 0;

	while (tail < head) {
		size_t off = tail % r->data_size, i;
		struct perf_event_header *h = (void *)(r->data + off);
		uint16_t size;

		/* The header itself can wrap: copy it byte by byte. */
		for (i = 0; i < sizeof(*h); i++)
			r->copy[i] = r->data[(off + i) % r->data_size];
		size = ((struct perf_event_header *)r->copy)->size;
		for (i = 0; i < size; i++)
			r->copy[i] = r->data[(off + i) % r->data_size];
		h = (void *)r->copy;
		if (h->type == PERF_RECORD_LOST)
			r->lost += ((uint64_t *)(h + 1))[1];
		if (fn)
			fn(h, ctx);
		n++;
		tail += size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

/* One line of the fixture manifest: <file> <build-id hex | none> <status>. */
struct fixture {
	char path[PATH_MAX + 256];
	uint8_t build_id[BUILD_ID_SIZE_MAX];
	int build_id_size;
	char status[32];
};

static inline int hex_to_bytes(const char *hex, uint8_t *out, int max)
{
	int n = 0;

	while (hex[0] && hex[1] && n < max) {
		unsigned int b;

		if (sscanf(hex, "%2x", &b) != 1)
			return -1;
		out[n++] = b;
		hex += 2;
	}
	return hex[0] ? -1 : n;
}

/*
 * The fixtures (fixtures.py's output): $MMAP3_FIXTURES, else ./fixtures
 * (where `make` in this directory puts them), else /tests/fixtures (the
 * project's QEMU guest). The cold copy, on a block device whose page cache
 * the tests drop: $MMAP3_COLD_FIXTURES, else /mnt (the guest's ext2 disk).
 */
static inline const char *fixtures_warm(void)
{
	static char here[PATH_MAX];

	if (getenv("MMAP3_FIXTURES"))
		return getenv("MMAP3_FIXTURES");
	/* Absolute, as the kernel reports file names. */
	if (!here[0] && (access("fixtures/MANIFEST", R_OK) || !realpath("fixtures", here)))
		snprintf(here, sizeof(here), "/tests/fixtures");
	return here;
}

static inline const char *fixtures_cold(void)
{
	return getenv("MMAP3_COLD_FIXTURES") ?: "/mnt";
}

/* @dir/@name in a static buffer (one of four, used in turn). */
static inline const char *fixture_path(const char *dir, const char *name)
{
	static char bufs[4][PATH_MAX + 256];
	static int next;
	char *buf = bufs[next++ % 4];

	snprintf(buf, sizeof(bufs[0]), "%s/%s", dir, name);
	return buf;
}

/*
 * Looks up @name (a file name without directory) in the MANIFEST that
 * fixtures.py wrote from the build-ids it linked the files with; the file
 * is @dir/@name (@dir: fixtures_warm() or fixtures_cold()) and must exist.
 */
static inline int fixture_get_in(const char *dir, const char *name,
				 struct fixture *f)
{
	char path[PATH_MAX + 16], line[512], file[256], bid[64], status[32];
	FILE *fp;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/MANIFEST", fixtures_warm());
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%255s %63s %31s", file, bid, status) != 3 ||
		    strcmp(file, name))
			continue;
		snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
		snprintf(f->status, sizeof(f->status), "%s", status);
		f->build_id_size = strcmp(bid, "none") ?
			hex_to_bytes(bid, f->build_id, BUILD_ID_SIZE_MAX) : 0;
		ret = f->build_id_size < 0 || access(f->path, F_OK) ? -1 : 0;
		break;
	}
	fclose(fp);
	return ret;
}

static inline void build_id_hex(const uint8_t *id, int size, char *out)
{
	int i;

	for (i = 0; i < size; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * size] = 0;
}

static inline int fixture_get(const char *name, struct fixture *f)
{
	return fixture_get_in(fixtures_warm(), name, f);
}

/* The status names of DESIGN.md, indexed by value. */
static const char *const mmap3_status_names[] = {
	"UNKNOWN", "FOUND", "NO_FILE", "NOT_ELF", "NO_BUILD_ID", "MALFORMED",
	"IO_ERROR", "SKIPPED",
};

static inline int mmap3_status(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(mmap3_status_names) / sizeof(mmap3_status_names[0]); i++)
		if (!strcmp(name, mmap3_status_names[i]))
			return i;
	return -1;
}

/* Opens a side-band event with attr.mmap3 on the calling task. */
static inline int mmap3_open(int mmap_data, int inherit)
{
	struct perf_event_attr attr;

	side_band_attr(&attr);
	attr.mmap3 = 1;
	attr.mmap_data = mmap_data;
	attr.inherit = inherit;
	return sys_perf_event_open(&attr, 0, -1, -1, 0);
}

/* Drops the page cache, so that files on fixtures_cold() are read from disk. */
static inline int drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	sync();
	ret = write(fd, "3\n", 2) == 2 ? 0 : -1;
	close(fd);
	return ret;
}

/* Side-band attr for MMAP3 (@mmap3) or MMAP2 records, data mappings too with @mmap_data. */
static inline void mmap_attr(struct perf_event_attr *attr, bool mmap3, int mmap_data)
{
	side_band_attr(attr);
	if (mmap3) {
		attr->mmap3 = 1;
	} else {
		attr->mmap = 1;
		attr->mmap2 = 1;
	}
	attr->mmap_data = mmap_data;
}

/* The records read from a ring, each copied out, in ring order. */
struct records {
	struct perf_event_header **v;
	int n, cap;
};

static inline void records_add(const struct perf_event_header *h, void *ctx)
{
	struct records *rs = ctx;
	struct perf_event_header *copy;

	if (rs->n == rs->cap) {
		int cap = rs->cap ? 2 * rs->cap : 64;
		void *v = realloc(rs->v, cap * sizeof(*rs->v));

		if (!v)
			abort();
		rs->v = v;
		rs->cap = cap;
	}
	copy = malloc(h->size);
	if (!copy)
		abort();
	memcpy(copy, h, h->size);
	rs->v[rs->n++] = copy;
}

/* Appends the records written to @r since the last read to @rs. */
static inline int ring_read(struct ring *r, struct records *rs)
{
	return ring_drain(r, records_add, rs);
}

static inline void records_free(struct records *rs)
{
	int i;

	for (i = 0; i < rs->n; i++)
		free(rs->v[i]);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

/*
 * One counter of /sys/kernel/debug/mmap3/stats ("<name> <value>" lines),
 * or -1 when the file or the counter is not there.
 */
static inline long long mmap3_stat(const char *name)
{
	char key[64];
	long long val, ret = -1;
	FILE *fp = fopen("/sys/kernel/debug/mmap3/stats", "r");

	if (!fp)
		return -1;
	while (fscanf(fp, "%63s %lld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			ret = val;
			break;
		}
	}
	fclose(fp);
	return ret;
}

/* The module's reference count (/sys/module/mmap3/refcnt), or -1. */
static inline long mmap3_refcnt(void)
{
	FILE *fp = fopen("/sys/module/mmap3/refcnt", "r");
	long ret = -1;

	if (!fp)
		return -1;
	if (fscanf(fp, "%ld", &ret) != 1)
		ret = -1;
	fclose(fp);
	return ret;
}

/* Copies @from to a new file @to, mode 0755, and syncs it; 0 or -1. */
static inline int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = -1;
	ssize_t n;

	in = open(from, O_RDONLY);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0755);
	if (out < 0)
		goto out_in;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			goto out_out;
	if (!n && !fsync(out))
		ret = 0;
out_out:
	close(out);
out_in:
	close(in);
	return ret;
}

/*
 * The GNU build-id of an ELF64 little-endian image, found the way
 * `readelf -n` finds it: through the PT_NOTE program headers. Returns its
 * size (and copies it to @id), 0 when there is no build-id note, -1 when
 * @data is not such an ELF image or its headers point outside it. The tests
 * use it to say what a file they made holds, independently of the module.
 */
static inline int elf_build_id(const uint8_t *data, size_t size, uint8_t *id)
{
	uint16_t phentsize, phnum, i;
	uint64_t phoff;

	if (size < 64 || memcmp(data, "\177ELF", 4) || data[4] != 2 || data[5] != 1)
		return -1;
	memcpy(&phoff, data + 0x20, 8);
	memcpy(&phentsize, data + 0x36, 2);
	memcpy(&phnum, data + 0x38, 2);
	if (phentsize < 56 || phoff > size || phnum > (size - phoff) / phentsize)
		return -1;
	for (i = 0; i < phnum; i++) {
		const uint8_t *ph = data + phoff + (uint64_t)i * phentsize;
		uint64_t off, filesz, pos, end;
		uint32_t type;

		memcpy(&type, ph, 4);
		memcpy(&off, ph + 8, 8);
		memcpy(&filesz, ph + 32, 8);
		if (type != 4)	/* PT_NOTE */
			continue;
		if (off > size || filesz > size - off)
			return -1;
		for (pos = off, end = off + filesz; end - pos >= 12;) {
			uint32_t namesz, descsz, ntype;
			uint64_t desc, next;

			memcpy(&namesz, data + pos, 4);
			memcpy(&descsz, data + pos + 4, 4);
			memcpy(&ntype, data + pos + 8, 4);
			desc = pos + 12 + (((uint64_t)namesz + 3) & ~3ULL);
			next = desc + (((uint64_t)descsz + 3) & ~3ULL);
			if (next > end)
				return -1;
			if (ntype == 3 && namesz == 4 && !memcmp(data + pos + 12, "GNU", 4)) {
				if (!descsz || descsz > BUILD_ID_SIZE_MAX)
					return -1;
				memcpy(id, data + desc, descsz);
				return descsz;
			}
			pos = next;
		}
	}
	return 0;
}

/*
 * A fixture's bytes in memory, zero-padded to @pad bytes (0: its own size),
 * in a page-aligned buffer, with what MANIFEST says of it. Returns -1 when
 * the file or its MANIFEST line is missing, or when the build-id its bytes
 * hold is not the one MANIFEST gives a FOUND file.
 */
struct elf_file {
	struct fixture fx;
	const char *name;
	uint8_t *data;
	size_t size;		/* of the fixture itself */
	size_t padded;		/* of data: what the tests write */
};

static inline int elf_file_load(const char *name, size_t pad, struct elf_file *e)
{
	uint8_t id[BUILD_ID_SIZE_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	memset(e, 0, sizeof(*e));
	e->name = name;
	if (fixture_get(name, &e->fx))
		return -1;
	fd = open(e->fx.path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	e->size = st.st_size;
	e->padded = pad > e->size ? pad : e->size;
	e->data = aligned_alloc(4096, (e->padded + 4095) / 4096 * 4096);
	if (!e->data) {
		close(fd);
		return -1;
	}
	memset(e->data, 0, (e->padded + 4095) / 4096 * 4096);
	n = pread(fd, e->data, e->size, 0);
	close(fd);
	if (n != (ssize_t)e->size)
		return -1;
	if (!strcmp(e->fx.status, "FOUND") &&
	    (elf_build_id(e->data, e->padded, id) != e->fx.build_id_size ||
	     memcmp(id, e->fx.build_id, e->fx.build_id_size)))
		return -1;
	return 0;
}

static inline void elf_file_free(struct elf_file *e)
{
	free(e->data);
	e->data = NULL;
}

/*
 * Waits until the coarse clock, the one that stamps ctime, has moved past
 * the second of @fd's ctime: from then on any change that updates ctime
 * gives the file a different one, so a cache validated by ctime may keep
 * what it reads now. The tests wait so, to give such a cache every chance
 * to be wrong.
 */
static inline int wait_past_ctime(int fd)
{
	struct timespec now;
	struct stat st;
	int i;

	if (fstat(fd, &st))
		return -1;
	for (i = 0; i < 300; i++) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > st.st_ctim.tv_sec)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* The MMAP3 record(s) of one mapping, as mmap3_map() saw them. */
struct mmap3_capture {
	uint64_t addr;
	int n;			/* MMAP3 records with that address */
	int n_other;		/* other MMAP3 records */
	/* The last record of the mapping, up to PATH_MAX of its file name. */
	unsigned char rec[sizeof(struct mmap3_record) + PATH_MAX] __attribute__((aligned(8)));
};

static inline const struct mmap3_record *captured(const struct mmap3_capture *c)
{
	return (const struct mmap3_record *)c->rec;
}

static inline void mmap3_capture_one(const struct perf_event_header *h, void *ctx)
{
	struct mmap3_capture *c = ctx;
	const struct mmap3_record *r = (const void *)h;
	size_t size = h->size;

	if (h->type != PERF_RECORD_MMAP3)
		return;
	if (r->addr != c->addr) {
		c->n_other++;
		return;
	}
	c->n++;
	if (size > sizeof(c->rec))
		size = sizeof(c->rec);
	memset(c->rec, 0, sizeof(c->rec));
	memcpy(c->rec, h, size);
	c->rec[sizeof(c->rec) - 1] = 0;
}

/*
 * Maps @len bytes of @fd with @prot and @flags, with an mmap3 event
 * (attr.mmap_data set) on the calling thread open around it, unmaps it, and
 * captures its MMAP3 record(s) in @c. Returns 0, or -1 with errno set
 * (EOPNOTSUPP: no mmap3 provider).
 */
static inline int mmap3_map(int fd, size_t len, int prot, int flags,
			    struct mmap3_capture *c)
{
	struct ring ring;
	void *p;
	int ev;

	memset(c, 0, sizeof(*c));
	ev = mmap3_open(1, 0);
	if (ev < 0)
		return -1;
	if (ring_map(&ring, ev, 16)) {
		close(ev);
		return -1;
	}
	p = mmap(NULL, len, prot, flags, fd, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		ring_unmap(&ring);
		errno = err;
		return -1;
	}
	c->addr = (uintptr_t)p;
	ring_drain(&ring, mmap3_capture_one, c);
	munmap(p, len);
	ring_unmap(&ring);
	return 0;
}

/* One page of @fd, PROT_READ | PROT_EXEC: what a loader maps. */
static inline int mmap3_map_exec(int fd, struct mmap3_capture *c)
{
	return mmap3_map(fd, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, c);
}

#endif /* MMAP3_UTIL_H */
