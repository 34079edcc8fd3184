// SPDX-License-Identifier: GPL-2.0
/*
 * Stress tests of PERF_RECORD_MMAP3, with exact accounting: each worker
 * thread maps at addresses of its own (a region per thread, each mapping at
 * a new address, MAP_FIXED_NOREPLACE), so (pid, tid, addr, len) names one
 * mapping, and logs every mapping it made in shared memory. Per-CPU
 * system-wide mmap3 events, read as one stream (struct ring_set: a task
 * answers a PENDING record on the CPU it then runs on) by a reader thread,
 * collect the records, each PENDING one resolved by its answer; the test
 * then pairs records and mappings. A mapping without its record, a record
 * matched twice, a record in a worker's region that no worker made, a
 * field that differs from the mapping's, a PENDING record without its
 * answer, an answer in a worker's region without its PENDING record or
 * given twice, and any PERF_RECORD_LOST fail the test.
 *
 * stress.accounting runs for $MMAP3_STRESS_SECONDS (default 20): processes
 * and threads map files (the fixtures, warm on the initramfs and cold on
 * the ext2 disk at /mnt; malformed ones; a sparse 4 GiB file; a file whose
 * reads fail, on a device-mapper error target; /dev/zero; a FIFO;
 * anonymous memory), while a rewriter rewrites six files on tmpfs and on
 * /mnt between fixtures (write(2) in place, truncate and write, rename over
 * a new copy), maps files deleted while open and drops the page cache; a
 * process forks and execs /mnt/busybox, another opens and closes mmap3
 * events; a swapper puts one of two ext2 images with the same metadata
 * (fixtures.py's, and a copy with another build-id for x) on one loop
 * device in turn, mounts it, maps x from two threads and, every other
 * time, a child process, and unmounts it. Every FOUND build-id must be one
 * that the mapped file had during the test, as MANIFEST gives it (each
 * rewritten file goes through build-ids of its own), and for x, the one of
 * the image mounted during that mapping; other statuses are counted per
 * file. A mapping of a
 * rewritten file that no rewrite overlapped, from before open() until
 * mmap() returned, must have exactly the status and build-id of the
 * version then in place (or IO_ERROR). Each exec must give
 * exactly one executable record of /mnt/busybox. The mappings, execs and
 * event open/close cycles must reach floors (below), per second of
 * $MMAP3_STRESS_SECONDS: the run goes on for up to as long again while
 * they have not.
 *
 * unload.rmmod_under_traffic runs $MMAP3_UNLOAD_CYCLES cycles (default
 * 20; the project's 4-CPU guest run passes 200 on the debug kernel) of:
 * open per-CPU events; threads map files from a device-mapper delay target,
 * most with their pages dropped (their reads on the way back to user space
 * are slow, and pending), with the kernel's built-in lookup, then the
 * module loaded (every other cycle with cache_entries=0, so that every
 * mapping is read), then unloaded, with the events open and reads in
 * flight; the workers stop, the events are read and closed. No event pins
 * the module: delete_module() succeeds at once. Every mapping has exactly
 * one record, every PENDING record one answer, whichever provider looked
 * it up and whichever read it. The runner fails on any kernel splat.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "mmap3_dm.h"
#include "mmap3_util.h"
#include "../kselftest_harness.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define PAGE		4096UL
#define MAX_CPUS	64
#define MAX_FILES	64
#define MAX_IDS		4
#define STATUSES	8
#define FOUND		1
#define NO_FILE		2
#define NOT_ELF		3
#define NO_BUILD_ID	4
#define MALFORMED	5
#define IO_ERROR	6
#define SKIPPED		7
#define BIT(n)		(1U << (n))
#define BIT_ULL(n)	(1ULL << (n))

/*
 * Worker thread g maps at REGION_BASE + g * REGION_SIZE + n * STRIDE for
 * its n-th mapping: no address is ever used twice by a thread. 4 Mi
 * mappings per thread, more than the logs hold.
 */
#define REGION_BASE	0x100000000000ULL	/* 16 TiB */
#define REGION_SIZE	BIT_ULL(38)
#define MAX_WORKERS	64
#define STRIDE		(64 * 1024ULL)
#define REGION_END	(REGION_BASE + MAX_WORKERS * REGION_SIZE)

static pid_t gettid_(void)
{
	return syscall(__NR_gettid);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* What a worker may map, and what its records may say. */
enum kind { K_FILE, K_ANON, K_DEVZERO, K_FIFO };
enum method { M_NONE, M_IN_PLACE, M_TRUNCATE, M_RENAME };

struct version {
	struct fixture fx;	/* MANIFEST's line of the fixture */
	char *data;
	size_t size;
};

struct sfile {
	char path[PATH_MAX];
	enum kind kind;
	bool pick;		/* mapper threads pick it */
	bool deleted;		/* its name may end in " (deleted)" */
	const char *note;	/* shown after the path in the tally */
	uint32_t allowed;	/* BIT(status) of the statuses it may get */
	int nids;		/* the build-ids FOUND may carry */
	struct { uint8_t id[BUILD_ID_SIZE_MAX]; int size; } ids[MAX_IDS];
	uint32_t hash, hash_deleted;
	/* Rewritten files: how, and between which fixtures. */
	enum method method;
	int nver;
	struct version ver[3];
};

static struct sfile files[MAX_FILES];
static int nfiles;

static struct sfile *add_file(enum kind kind, const char *path, bool pick)
{
	struct sfile *f = &files[nfiles++];
	char name[PATH_MAX + 16];

	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->pick = pick;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->hash = name_hash(path);
	snprintf(name, sizeof(name), "%s (deleted)", path);
	f->hash_deleted = name_hash(name);
	return f;
}

static void allow_id(struct sfile *f, const struct fixture *fx)
{
	int i;

	f->allowed |= BIT(mmap3_status(fx->status));
	if (!fx->build_id_size)
		return;
	for (i = 0; i < f->nids; i++)
		if (f->ids[i].size == fx->build_id_size &&
		    !memcmp(f->ids[i].id, fx->build_id, fx->build_id_size))
			return;
	if (f->nids < MAX_IDS) {
		memcpy(f->ids[f->nids].id, fx->build_id, fx->build_id_size);
		f->ids[f->nids++].size = fx->build_id_size;
	}
}

/*
 * A fixture that is not rewritten: MANIFEST's status, or without memory
 * SKIPPED (for the PENDING mapping) or IO_ERROR (for the read).
 */
static int add_fixture(const char *dir, const char *name)
{
	struct fixture fx;
	struct sfile *f;

	if (fixture_get_in(dir, name, &fx))
		return -1;
	f = add_file(K_FILE, fx.path, true);
	allow_id(f, &fx);
	f->allowed |= BIT(IO_ERROR) | BIT(SKIPPED);
	return 0;
}

/* The whole MANIFEST, to name the fixture a wrong build-id belongs to. */
static struct fixture manifest[64];
static int nmanifest;

static int load_manifest(void)
{
	char path[PATH_MAX + 16], line[512], name[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/MANIFEST", fixtures_warm());
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (nmanifest < 64 && fgets(line, sizeof(line), fp))
		if (sscanf(line, "%255s", name) == 1 &&
		    !fixture_get(name, &manifest[nmanifest]))
			nmanifest++;
	fclose(fp);
	return nmanifest ? 0 : -1;
}

static const char *whose_id(const uint8_t *id, int size)
{
	int i;

	for (i = 0; i < nmanifest; i++)
		if (manifest[i].build_id_size == size &&
		    !memcmp(manifest[i].build_id, id, size))
			return strrchr(manifest[i].path, '/') + 1;
	return "no fixture's";
}

static char *read_whole(const char *path, size_t *size)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size ?: 1);
	if (buf && read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*size = st.st_size;
	return buf;
}

static int write_all(int fd, const char *data, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(fd, data + done, size - done < 65536 ? size - done : 65536);

		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/* Writes version @v of rewritten file @f, the way @f is rewritten. */
static int rewrite(struct sfile *f, int v)
{
	const struct version *ver = &f->ver[v];
	char tmp[PATH_MAX + 8];
	int fd, ret;

	switch (f->method) {
	case M_IN_PLACE:	/* same inode, overwritten, then cut to size */
		fd = open(f->path, O_WRONLY | O_CREAT, 0755);
		if (fd < 0)
			return -1;
		ret = write_all(fd, ver->data, ver->size) ?: ftruncate(fd, ver->size);
		close(fd);
		return ret;
	case M_TRUNCATE:	/* same inode, emptied, then written */
		fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0)
			return -1;
		ret = write_all(fd, ver->data, ver->size);
		close(fd);
		return ret;
	case M_RENAME:		/* a new inode replaces the old one */
		snprintf(tmp, sizeof(tmp), "%s.new", f->path);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0)
			return -1;
		ret = write_all(fd, ver->data, ver->size);
		close(fd);
		return ret ?: rename(tmp, f->path);
	default:
		return -1;
	}
}

/* A rewritten file, @method, going through the fixtures @names. */
static int add_rewritten(const char *dir, const char *base, enum method method,
			 const char *const names[], int n)
{
	char path[PATH_MAX];
	struct sfile *f;
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, base);
	f = add_file(K_FILE, path, true);
	f->method = method;
	f->deleted = method == M_RENAME;
	f->nver = n;
	for (i = 0; i < n; i++) {
		if (fixture_get(names[i], &f->ver[i].fx))
			return -1;
		f->ver[i].data = read_whole(f->ver[i].fx.path, &f->ver[i].size);
		if (!f->ver[i].data)
			return -1;
		allow_id(f, &f->ver[i].fx);
	}
	/* Read while being rewritten: any of these, or the read failed. */
	f->allowed |= BIT(NOT_ELF) | BIT(NO_BUILD_ID) | BIT(MALFORMED) | BIT(IO_ERROR);
	return rewrite(f, 0);
}

/* One mapping a worker made. */
struct mapping {
	uint32_t pid, tid;
	uint64_t addr;
	uint64_t t0, t1;	/* before open(), after mmap() returned */
	uint32_t len;
	uint16_t file;		/* index in files[]; NO_MAPPING: none made */
	uint8_t prot;
	uint8_t pgoff;		/* pages */
};

#define NO_MAPPING	0xffff

/* One MMAP3 record in a worker region, as collected (resolved). */
struct rec {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t prot, hash;
	uint16_t misc;
	uint8_t status, size;
	uint8_t id[BUILD_ID_SIZE_MAX];
	bool layout_ok;		/* the uapi's layout: sizes, padding, zeroes */
};

/* Whether @r is laid out as the uapi says: only the build-id's bytes set. */
static bool layout_ok(const struct mmap3_record *r)
{
	size_t room = r->header.size > sizeof(*r) ? r->header.size - sizeof(*r) : 0;
	size_t i;

	if (r->header.size % 8 || !room || (r->reserved && !mmap3_was_pending(r)) ||
	    r->build_id_size > BUILD_ID_SIZE_MAX || strnlen(r->filename, room) == room)
		return false;
	for (i = r->build_id_size; i < BUILD_ID_SIZE_MAX; i++)
		if (r->build_id[i])
			return false;
	return true;
}

/* One executable record of the exec'ed program. */
struct exec_rec {
	uint32_t pid;
	uint8_t status, size;
	uint8_t id[BUILD_ID_SIZE_MAX];
};

struct collector {
	struct ring_set rings;	/* CPU-wide, one per CPU */
	int stop;		/* load_acquire(), store_release() */
	struct rec *recs;
	size_t nrecs, cap;
	struct exec_rec *execs;
	size_t nexecs, exec_cap;
	const char *exec_path;
	uint64_t records, lost;
	/* In the worker regions: answers, and records resolved by one. */
	uint64_t answers, resolved;
	struct mmap3_reader read;	/* the counters of rings.rd, once closed */
	bool oom;
};

static bool in_regions(uint64_t addr)
{
	return addr >= REGION_BASE && addr < REGION_END;
}

static void collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r = (const void *)h;
	struct collector *c = ctx;

	if (h->type == PERF_RECORD_MMAP3_BUILD_ID)
		c->answers += in_regions(((const struct mmap3_answer *)h)->addr);
	if (h->type != PERF_RECORD_MMAP3)
		return;
	c->records++;
	if (in_regions(r->addr)) {
		struct rec *x;

		c->resolved += mmap3_was_pending(r);
		if (c->nrecs == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 65536;
			struct rec *p = realloc(c->recs, cap * sizeof(*p));

			if (!p) {
				c->oom = true;
				return;
			}
			c->recs = p;
			c->cap = cap;
		}
		x = &c->recs[c->nrecs++];
		x->pid = r->pid;
		x->tid = r->tid;
		x->addr = r->addr;
		x->len = r->len;
		x->pgoff = r->pgoff;
		x->prot = r->prot;
		x->misc = h->misc;
		x->layout_ok = layout_ok(r);
		x->hash = x->layout_ok ? name_hash(r->filename) : 0;
		x->status = r->build_id_status;
		x->size = r->build_id_size;
		memcpy(x->id, r->build_id, BUILD_ID_SIZE_MAX);
	} else if (c->exec_path && (r->prot & PROT_EXEC) &&
		   !strcmp(r->filename, c->exec_path)) {
		struct exec_rec *x;

		if (c->nexecs == c->exec_cap) {
			size_t cap = c->exec_cap ? 2 * c->exec_cap : 4096;
			struct exec_rec *p = realloc(c->execs, cap * sizeof(*p));

			if (!p) {
				c->oom = true;
				return;
			}
			c->execs = p;
			c->exec_cap = cap;
		}
		x = &c->execs[c->nexecs++];
		x->pid = r->pid;
		x->status = r->build_id_status;
		x->size = r->build_id_size;
		memcpy(x->id, r->build_id, BUILD_ID_SIZE_MAX);
	}
}

static void *reader(void *arg)
{
	struct collector *c = arg;

	while (!load_acquire(&c->stop)) {
		rings_drain(&c->rings, collect, c);
		usleep(1000);
	}
	return NULL;
}

/* System-wide mmap3 events, one per CPU, with @pages data pages each. */
static int open_events(struct collector *c, int ncpus, size_t pages)
{
	int i;

	c->rings.rd.cpu_wide = true;
	for (i = 0; i < ncpus; i++) {
		struct perf_event_attr attr;
		int fd;

		side_band_attr(&attr);
		attr.mmap3 = 1;
		attr.mmap_data = 1;
		fd = sys_perf_event_open(&attr, -1, i, -1, 0);
		if (fd < 0)
			return -1;
		if (ring_map(&c->rings.ring[i], fd, pages)) {
			close(fd);
			return -1;
		}
		c->rings.n = i + 1;
	}
	return 0;
}

/* Reads the last records, and closes the events. */
static void close_events(struct collector *c)
{
	rings_flush(&c->rings, collect, c);
	c->lost += rings_lost(&c->rings);
	c->read = c->rings.rd;
	rings_unmap(&c->rings);
}

/*
 * The pairing of the records in the worker regions: each PENDING one
 * answered, no answer without its PENDING record or given twice. The
 * events are CPU-wide on every CPU: a task answers on the CPU it then
 * runs on, which has one of them, so none is missed.
 */
static void check_answers(struct __test_metadata *_metadata, const struct collector *c)
{
	TH_LOG("%llu PENDING records read, %llu answered, %llu without an answer, %llu answers without their record",
	       (unsigned long long)c->read.pending, (unsigned long long)c->read.answered,
	       (unsigned long long)c->read.unanswered, (unsigned long long)c->read.orphans);
	TH_LOG("in the worker regions: %llu records resolved by an answer, %llu answers",
	       (unsigned long long)c->resolved, (unsigned long long)c->answers);
	EXPECT_EQ(c->answers, c->resolved)
		TH_LOG("answers in the worker regions without their PENDING record, or given twice");
}

/* The outcome of pairing mappings with records. */
struct tally {
	uint64_t mappings, required, matched;
	uint64_t missing, duplicate, unexpected, wrong_field, wrong_status, wrong_id;
	uint64_t unanswered;		/* PENDING records without their answer */
	uint64_t settled, stale;	/* of rewritten files, between two rewrites */
	uint64_t by_status[MAX_FILES][STATUSES];
	uint64_t by_id[MAX_FILES][MAX_IDS];
};

#define REPORT_EACH	4	/* mismatches of each kind shown */

/* The log entries, hashed by (pid, tid, addr, len). */
struct index {
	uint32_t *slot;		/* entry + 1; 0: empty */
	size_t mask;
};

static uint64_t key_hash(uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len)
{
	uint64_t h = addr ^ ((uint64_t)tid << 40) ^ ((uint64_t)pid << 20) ^ len;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static int index_build(struct index *ix, const struct mapping *log, size_t n)
{
	size_t size = 1024, i;

	while (size < 2 * n)
		size *= 2;
	ix->slot = calloc(size, sizeof(*ix->slot));
	if (!ix->slot)
		return -1;
	ix->mask = size - 1;
	for (i = 0; i < n; i++) {
		const struct mapping *m = &log[i];
		size_t s;

		if (m->file == NO_MAPPING)
			continue;
		s = key_hash(m->pid, m->tid, m->addr, m->len) & ix->mask;
		while (ix->slot[s])
			s = (s + 1) & ix->mask;
		ix->slot[s] = i + 1;
	}
	return 0;
}

static long index_find(const struct index *ix, const struct mapping *log,
		       const struct rec *r)
{
	size_t s = key_hash(r->pid, r->tid, r->addr, r->len) & ix->mask;

	for (; ix->slot[s]; s = (s + 1) & ix->mask) {
		const struct mapping *m = &log[ix->slot[s] - 1];

		if (m->pid == r->pid && m->tid == r->tid && m->addr == r->addr &&
		    m->len == r->len)
			return ix->slot[s] - 1;
	}
	return -1;
}

static void describe(char *buf, size_t size, const struct rec *r)
{
	char hex[41];

	build_id_hex(r->id, r->size < BUILD_ID_SIZE_MAX ? r->size : BUILD_ID_SIZE_MAX, hex);
	snprintf(buf, size, "pid %u tid %u addr %#llx len %llu pgoff %llu prot %#x, %s '%s'",
		 r->pid, r->tid, (unsigned long long)r->addr,
		 (unsigned long long)r->len, (unsigned long long)r->pgoff, r->prot,
		 r->status < STATUSES ? mmap3_status_names[r->status] : "?", hex);
}

/*
 * The rewrites, in the order the rewriter made them: file @file became
 * version @version (NO_VERSION: the rewrite failed) between @t0 and @t1.
 */
struct rewrite_event {
	uint64_t t0, t1;
	uint16_t file;
	uint8_t version;
};

#define NO_VERSION	0xff

/* The rewrites of each file, in order; NULL: no rewrites to check against. */
static struct rewrite_event *rewrites[MAX_FILES];
static uint32_t nrewrites[MAX_FILES];

static int rewrites_by_file(const struct rewrite_event *ev, uint32_t n)
{
	uint32_t i;
	int f;

	for (f = 0; f < nfiles; f++) {
		rewrites[f] = calloc(n + 1, sizeof(*ev));
		if (!rewrites[f])
			return -1;
		nrewrites[f] = 0;
	}
	for (i = 0; i < n; i++)
		rewrites[ev[i].file][nrewrites[ev[i].file]++] = ev[i];
	return 0;
}

/*
 * The version rewritten file files[@fi] had all through mapping @m (version
 * 0, written before the workers started, if no rewrite came before), or -1
 * if a rewrite overlapped the mapping.
 */
static int version_at(int fi, const struct mapping *m)
{
	const struct rewrite_event *ev = rewrites[fi];
	uint32_t lo = 0, hi = nrewrites[fi];

	/* The last rewrite that began before mmap() returned: ev[lo - 1]. */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (ev[mid].t0 < m->t1)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	return ev[lo - 1].t1 < m->t0 && ev[lo - 1].version != NO_VERSION ?
	       ev[lo - 1].version : -1;
}

/* Checks record @r against the mapping @m it is the record of. */
static void check_fields(struct __test_metadata *_metadata, struct tally *t,
			 const struct mapping *m, const struct rec *r)
{
	const struct sfile *f = &files[m->file];
	bool exec = m->prot & PROT_EXEC, ok;
	char what[256];
	int i;

	ok = r->layout_ok && r->prot == m->prot &&
	     !!(r->misc & PERF_RECORD_MISC_MMAP_DATA) == !exec &&
	     (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
	switch (f->kind) {
	case K_FILE:
		ok = ok && r->pgoff == m->pgoff * PAGE &&
		     (r->hash == f->hash || (f->deleted && r->hash == f->hash_deleted));
		break;
	case K_ANON:
		ok = ok && r->hash == name_hash("//anon");
		break;
	default:
		ok = ok && r->hash == f->hash;
	}
	if (!ok) {
		t->wrong_field++;
		if (t->wrong_field <= REPORT_EACH) {
			describe(what, sizeof(what), r);
			TH_LOG("wrong field: %s, for prot %#x pgoff %u of %s", what,
			       m->prot, m->pgoff, f->path);
		}
	}

	if (r->status == PERF_MMAP3_BUILD_ID_PENDING) {
		t->unanswered++;
		if (t->unanswered <= REPORT_EACH) {
			describe(what, sizeof(what), r);
			TH_LOG("no answer: %s, for %s", what, f->path);
		}
		return;
	}
	if (r->status >= STATUSES || !(f->allowed & BIT(r->status)) ||
	    (r->status == FOUND ? !r->size : r->size) || r->size > BUILD_ID_SIZE_MAX) {
		t->wrong_status++;
		if (t->wrong_status <= REPORT_EACH) {
			describe(what, sizeof(what), r);
			TH_LOG("wrong status: %s, for %s", what, f->path);
		}
		return;
	}
	t->by_status[m->file][r->status]++;
	if (r->status == FOUND) {
		for (i = 0; i < f->nids; i++)
			if (f->ids[i].size == r->size && !memcmp(f->ids[i].id, r->id, r->size))
				break;
		if (i < f->nids) {
			t->by_id[m->file][i]++;
		} else {
			t->wrong_id++;
			if (t->wrong_id <= REPORT_EACH) {
				describe(what, sizeof(what), r);
				TH_LOG("wrong build-id: %s, for %s%s: %s build-id", what,
				       f->path, f->note ?: "", whose_id(r->id, r->size));
			}
			return;
		}
	}

	/*
	 * A rewritten file that no rewrite touched from before it was opened
	 * until mmap() returned: the record must say what it was then.
	 */
	i = f->nver > 1 && rewrites[m->file] ? version_at(m->file, m) : -1;
	if (i >= 0) {
		const struct fixture *fx = &f->ver[i].fx;

		t->settled++;
		if (r->status == IO_ERROR ||
		    (r->status == mmap3_status(fx->status) && r->size == fx->build_id_size &&
		     !memcmp(r->id, fx->build_id, r->size)))
			return;
		t->stale++;
		if (t->stale <= REPORT_EACH) {
			describe(what, sizeof(what), r);
			TH_LOG("stale: %s, for %s, which was %s (%s) all through the mapping",
			       what, f->path, strrchr(fx->path, '/') + 1, fx->status);
		}
	}
}

/*
 * Pairs @nlog mappings with @nrecs records; @required(m) says whether the
 * mapping must have its record (else it may have one). Counts into @t.
 */
static int match(struct __test_metadata *_metadata, struct tally *t,
		 const struct mapping *log, size_t nlog, const struct rec *recs,
		 size_t nrecs, bool (*required)(const struct mapping *m, void *arg),
		 void *arg)
{
	uint8_t *seen = calloc(nlog ?: 1, 1);
	struct index ix;
	char what[256];
	size_t i;

	if (!seen || index_build(&ix, log, nlog))
		return -1;
	for (i = 0; i < nrecs; i++) {
		long e = index_find(&ix, log, &recs[i]);

		if (e < 0) {
			t->unexpected++;
			if (t->unexpected <= REPORT_EACH) {
				describe(what, sizeof(what), &recs[i]);
				TH_LOG("a record of no mapping: %s", what);
			}
			continue;
		}
		if (seen[e]++) {
			t->duplicate++;
			if (t->duplicate <= REPORT_EACH) {
				describe(what, sizeof(what), &recs[i]);
				TH_LOG("a second record of one mapping: %s", what);
			}
			continue;
		}
		t->matched++;
		check_fields(_metadata, t, &log[e], &recs[i]);
	}
	for (i = 0; i < nlog; i++) {
		const struct mapping *m = &log[i];

		if (m->file == NO_MAPPING)
			continue;
		t->mappings++;
		if (required && !required(m, arg))
			continue;
		t->required++;
		if (seen[i])
			continue;
		t->missing++;
		if (t->missing <= REPORT_EACH)
			TH_LOG("no record of: pid %u tid %u addr %#llx len %u prot %#x of %s",
			       m->pid, m->tid, (unsigned long long)m->addr, m->len,
			       m->prot, files[m->file].path);
	}
	free(ix.slot);
	free(seen);
	return 0;
}

static void print_tally(struct __test_metadata *_metadata, const struct tally *t)
{
	char line[512];
	int f, s, n;

	TH_LOG("%llu mappings (%llu that must have a record), %llu records matched:",
	       (unsigned long long)t->mappings, (unsigned long long)t->required,
	       (unsigned long long)t->matched);
	TH_LOG("%llu missing, %llu duplicated, %llu of no mapping,",
	       (unsigned long long)t->missing, (unsigned long long)t->duplicate,
	       (unsigned long long)t->unexpected);
	TH_LOG("%llu with a wrong field, %llu with a wrong status, %llu with a wrong build-id,",
	       (unsigned long long)t->wrong_field, (unsigned long long)t->wrong_status,
	       (unsigned long long)t->wrong_id);
	TH_LOG("%llu PENDING without their answer", (unsigned long long)t->unanswered);
	if (t->settled) {
		TH_LOG("%llu mappings of rewritten files between two rewrites,",
		       (unsigned long long)t->settled);
		TH_LOG("%llu of them with the answer of another version",
		       (unsigned long long)t->stale);
	}
	for (f = 0; f < nfiles; f++) {
		n = snprintf(line, sizeof(line), "%-36s%s", files[f].path,
			     files[f].note ?: "");
		for (s = 1; s < STATUSES; s++)
			if (t->by_status[f][s] && n < (int)sizeof(line))
				n += snprintf(line + n, sizeof(line) - n, " %s %llu",
					      mmap3_status_names[s],
					      (unsigned long long)t->by_status[f][s]);
		if (files[f].nver && n < (int)sizeof(line)) {
			n += snprintf(line + n, sizeof(line) - n, " (FOUND:");
			for (s = 0; s < files[f].nids && n < (int)sizeof(line); s++)
				n += snprintf(line + n, sizeof(line) - n, " %s %llu",
					      whose_id(files[f].ids[s].id, files[f].ids[s].size),
					      (unsigned long long)t->by_id[f][s]);
			if (n < (int)sizeof(line))
				snprintf(line + n, sizeof(line) - n, ")");
		}
		TH_LOG("  %s", line);
	}
}

static bool tally_clean(const struct tally *t)
{
	return !t->missing && !t->duplicate && !t->unexpected && !t->wrong_field &&
	       !t->wrong_status && !t->wrong_id && !t->stale && !t->unanswered;
}

static void expect_clean(struct __test_metadata *_metadata, const struct tally *t)
{
	EXPECT_EQ(0, t->missing) TH_LOG("mappings without their record");
	EXPECT_EQ(0, t->duplicate) TH_LOG("mappings with more than one record");
	EXPECT_EQ(0, t->unexpected) TH_LOG("records of mappings no worker made");
	EXPECT_EQ(0, t->wrong_field) TH_LOG("records with a field unlike the mapping's");
	EXPECT_EQ(0, t->wrong_status) TH_LOG("records with a status the file cannot have");
	EXPECT_EQ(0, t->wrong_id) TH_LOG("build-ids the file never had");
	EXPECT_EQ(0, t->unanswered) TH_LOG("PENDING records without their answer");
	EXPECT_EQ(0, t->stale) TH_LOG("answers of another version of the file than the one mapped");
}

/*
 * Maps files[@fi] (through @fd when it is not -1) at worker @g's @n-th
 * address, @pages long, @pgoff pages in, its page cache dropped first when
 * @drop, and logs the mapping in @m, with the time before the file is
 * opened and after mmap() returned. Returns the address, or NULL (and
 * m->file is NO_MAPPING) when the mapping could not be made.
 */
static void *map_at(int g, uint64_t n, int fi, int fd, int prot, int pages,
		    int pgoff, bool drop, struct mapping *m)
{
	const struct sfile *f = &files[fi];
	uint64_t addr = REGION_BASE + g * REGION_SIZE + n * STRIDE;
	size_t len = pages * PAGE;
	int flags = MAP_PRIVATE | MAP_FIXED_NOREPLACE, own = -1;
	void *p;

	m->file = NO_MAPPING;
	if (n >= REGION_SIZE / STRIDE)
		return NULL;	/* the region is used up: a failed mapping */
	m->t0 = now_ns();
	if (f->kind == K_ANON) {
		flags |= MAP_ANONYMOUS;
		pgoff = 0;
	} else if (fd < 0) {
		own = open(f->path, O_RDONLY | O_NONBLOCK);
		fd = own;
		if (fd < 0)
			return NULL;
	}
	if (drop)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	p = mmap((void *)addr, len, prot, flags, f->kind == K_ANON ? -1 : fd, pgoff * PAGE);
	m->t1 = now_ns();
	if (own >= 0)
		close(own);
	if (p == MAP_FAILED)
		return NULL;
	if (p != (void *)addr) {	/* a kernel without MAP_FIXED_NOREPLACE */
		munmap(p, len);
		return NULL;
	}
	m->pid = getpid();
	m->tid = gettid_();
	m->addr = addr;
	m->len = len;
	m->prot = prot;
	m->pgoff = f->kind == K_FILE ? pgoff : 0;
	m->file = fi;
	return p;
}

/*
 * stress.accounting
 */
#define PROCS		3
#define THREADS		2
#define LOG_MAX		(2UL << 20)	/* mappings: 80 MiB of log */
#define EXEC_MAX	65536
#define RW_MAX		65536
#define RING_PAGES	1024		/* 4 MiB per CPU */

/*
 * The floors, per second of the run. Measured on the test kernel under
 * QEMU TCG on a 2-core host shared with other work (load average 3 to 11),
 * 5 s runs: with 2 CPUs 2700 to 23100 mappings/s, 4.4 to 86 execs/s, 3400
 * to 18000 event open/close cycles/s; with 4 CPUs (more vCPUs than host
 * cores: an IPI, a TLB shootdown, waits for a vCPU thread the host has
 * descheduled) 1200 to 9300, 0.8 to 32, 4100 to 15500. The load of the
 * host, not the CPU count, decides: the floors are a third of the lowest
 * of all these. The debug kernel (KASAN, lockdep, PREEMPT), 60 s with 2
 * CPUs on the same loaded host: 52 mappings/s, 0.4 execs/s, 26 event
 * open/close cycles/s; its floors are a fifth of that, and the KCSAN
 * kernel's the same. Below them the workers did next to nothing: they are
 * stuck, or something serialises them.
 */
struct floors {
	const char *kernel;
	double maps, execs, churns;
};

static const struct floors floors[] = {
	{ "test", 400, 0.25, 1100 },
	{ "debug", 10, 0.08, 5 },
	{ "kcsan", 10, 0.08, 5 },
};

struct shared {
	int go, stop;		/* load_acquire(), store_release() */
	uint64_t nlog;		/* log entries taken */
	uint64_t refused, failed;	/* mmap() refused: the FIFO; others */
	uint64_t execs, exec_failed;
	uint64_t churns, churn_failed;
	uint64_t rewrites, rewrite_failed;
	uint64_t swaps, swap_failed;
	uint32_t written[MAX_FILES];	/* BIT(version) of those written */
	uint32_t nexec;
	uint32_t exec_pid[EXEC_MAX];
	uint32_t nrw;
	struct rewrite_event rw[RW_MAX];
	struct mapping log[];
};

static struct shared *sh;
static const char *exec_path = "/mnt/busybox";

/* The next log entry, or NULL (and the run stops) when the log is full. */
static struct mapping *log_entry(void)
{
	uint64_t i = __atomic_fetch_add(&sh->nlog, 1, __ATOMIC_RELAXED);

	if (i < LOG_MAX)
		return &sh->log[i];
	store_release(&sh->stop, 1);
	return NULL;
}

static void wait_go(void)
{
	while (!load_acquire(&sh->go) && !load_acquire(&sh->stop))
		usleep(1000);
}

static void *mapper(void *arg)
{
	int g = (uintptr_t)arg, rewritten[MAX_FILES], nrew = 0, i;
	unsigned int seed = g * 7919 + 1;
	uint64_t seq = 0;

	for (i = 0; i < nfiles; i++)
		if (files[i].pick && files[i].nver)
			rewritten[nrew++] = i;
	wait_go();
	while (!load_acquire(&sh->stop)) {
		struct mapping *m = log_entry();
		int fi, prot;
		void *p;

		if (!m)
			break;
		/* Half of the mappings are of the files being rewritten. */
		if (nrew && rand_r(&seed) % 2) {
			fi = rewritten[rand_r(&seed) % nrew];
		} else {
			do
				fi = rand_r(&seed) % nfiles;
			while (!files[fi].pick);
		}
		prot = rand_r(&seed) % 2 ? PROT_READ | PROT_EXEC : PROT_READ;
		p = map_at(g, seq++, fi, -1, prot, 1 + rand_r(&seed) % 4,
			   rand_r(&seed) % 4, false, m);
		if (p)
			munmap(p, m->len);
		else if (files[fi].kind == K_FIFO)
			__atomic_add_fetch(&sh->refused, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&sh->failed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void mapper_proc(int id)
{
	pthread_t t[THREADS];
	int i;

	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, mapper, (void *)(uintptr_t)(id * THREADS + i));
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

/*
 * Rewrites the rewritten files in turn, each to its next fixture; maps
 * files[@deleted] after unlinking it (worker region @g); drops the page
 * cache every quarter of a second, so that /mnt is read from the disk.
 */
static void rewriter_proc(int g, int deleted)
{
	const struct version *src = &files[deleted].ver[0];
	int version[MAX_FILES] = { 0 }, rew[MAX_FILES], nrew = 0, i;
	uint64_t seq = 0, last_drop = now_ns();

	for (i = 0; i < nfiles; i++)
		if (files[i].nver > 1)
			rew[nrew++] = i;
	wait_go();
	for (i = 0; !load_acquire(&sh->stop); i++) {
		int f = rew[i % nrew], v = (version[f] + 1) % files[f].nver, fd;
		struct rewrite_event *ev = sh->nrw < RW_MAX ? &sh->rw[sh->nrw] : NULL;
		struct mapping *m;
		void *p;

		if (!ev) {	/* mappings must not outrun the log of rewrites */
			store_release(&sh->stop, 1);
			break;
		}
		ev->file = f;
		ev->t0 = now_ns();
		ev->version = rewrite(&files[f], v) ? NO_VERSION : v;
		ev->t1 = now_ns();
		__atomic_store_n(&sh->nrw, sh->nrw + 1, __ATOMIC_RELEASE);
		if (ev->version == NO_VERSION) {
			__atomic_add_fetch(&sh->rewrite_failed, 1, __ATOMIC_RELAXED);
		} else {
			version[f] = v;
			__atomic_or_fetch(&sh->written[f], BIT(v), __ATOMIC_RELAXED);
			__atomic_add_fetch(&sh->rewrites, 1, __ATOMIC_RELAXED);
		}

		/* Written, opened, unlinked, then mapped. */
		fd = open(files[deleted].path, O_RDWR | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write_all(fd, src->data, src->size) ||
		    unlink(files[deleted].path)) {
			__atomic_add_fetch(&sh->rewrite_failed, 1, __ATOMIC_RELAXED);
		} else {
			m = log_entry();
			if (m) {
				p = map_at(g, seq++, deleted, fd, PROT_READ | PROT_EXEC, 1, 0,
					   false, m);
				if (p)
					munmap(p, PAGE);
				else
					__atomic_add_fetch(&sh->failed, 1, __ATOMIC_RELAXED);
			}
		}
		if (fd >= 0)
			close(fd);

		if (now_ns() - last_drop > 250000000ULL) {
			drop_page_cache();
			last_drop = now_ns();
		}
	}
	_exit(0);
}

/*
 * x on two ext2 images in turn on one loop device (swap_setup()): A, the
 * fixtures' images/ext2.img, whose x is bid20.elf, and B, A with x's
 * build-id replaced. files[swap.file[i]] is x while image i is mounted:
 * its only build-id is that image's.
 */
#define SWAP_MAPS	4	/* mappings by each mapper per mount */

static struct {
	char dir[64], img[2][64], loop[32];
	int file[2];
	bool on;
} swap = { .dir = "/tmp/stress-swap", .img = { "/tmp/stress-swap-a.img",
						 "/tmp/stress-swap-b.img" } };

struct swap_mapper {
	int g, fi;
	uint64_t *seq;
	unsigned int seed;
};

/* SWAP_MAPS mappings of files[@s->fi] in worker region @s->g, some cold. */
static void *swap_maps(void *arg)
{
	struct swap_mapper *s = arg;
	int i;

	for (i = 0; i < SWAP_MAPS && !load_acquire(&sh->stop); i++) {
		struct mapping *m = log_entry();
		void *p;

		if (!m)
			break;
		p = map_at(s->g, (*s->seq)++, s->fi, -1, PROT_READ | PROT_EXEC,
			   1 + rand_r(&s->seed) % 2, 0, !(rand_r(&s->seed) % 4), m);
		if (p)
			munmap(p, m->len);
		else
			__atomic_add_fetch(&sh->failed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Puts image A or B on the loop device, mounts it, maps x from this
 * thread, another one and every other time a child process (worker
 * regions @g, @g + 1, @g + 2), unmounts it; again until the run stops.
 */
static void swapper_proc(int g)
{
	uint64_t seq[2] = { 0 }, child_seq;
	unsigned int seed = 4241;
	int loop_fd = -1, cycle;

	wait_go();
	for (cycle = 0; swap.on && !load_acquire(&sh->stop); cycle++) {
		int img = rand_r(&seed) % 2, ret, status;
		struct swap_mapper s[3];
		pthread_t t;
		pid_t child = -1;

		if (loop_fd < 0)
			loop_fd = loop_attach(swap.img[img], O_RDONLY,
					      LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR,
					      swap.loop, sizeof(swap.loop));
		else if (loop_reattach(swap.loop, &loop_fd, swap.img[img], O_RDONLY,
				       LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR))
			loop_fd = -1;
		if (loop_fd < 0 || mount(swap.loop, swap.dir, "ext2", MS_RDONLY, NULL))
			break;
		s[0] = (struct swap_mapper){ g, swap.file[img], &seq[0], rand_r(&seed) };
		s[1] = (struct swap_mapper){ g + 1, swap.file[img], &seq[1], rand_r(&seed) };
		child_seq = (uint64_t)cycle * SWAP_MAPS;
		s[2] = (struct swap_mapper){ g + 2, swap.file[img], &child_seq, rand_r(&seed) };
		ret = pthread_create(&t, NULL, swap_maps, &s[1]);
		if (cycle % 2) {
			child = fork();
			if (!child) {
				swap_maps(&s[2]);
				_exit(0);
			}
		}
		swap_maps(&s[0]);
		if (!ret)
			pthread_join(t, NULL);
		if (child > 0)
			waitpid(child, &status, 0);
		if (ret || (child < 0 && cycle % 2) || umount2(swap.dir, 0))
			break;
		__atomic_add_fetch(&sh->swaps, 1, __ATOMIC_RELAXED);
	}
	if (swap.on && !load_acquire(&sh->stop))
		__atomic_add_fetch(&sh->swap_failed, 1, __ATOMIC_RELAXED);
	if (loop_fd >= 0)
		close(loop_fd);
	_exit(0);
}

/*
 * The two images of the swapper, and x's entry for each; or no swapper
 * (logged) without loop devices, ext2 or the image.
 */
static int swap_setup(struct __test_metadata *_metadata)
{
	const char *image = fixture_path(fixtures_warm(), "images/ext2.img"), *why;
	struct fixture fx[2];
	uint8_t *data[2];
	size_t size;
	long at;
	int i, fd;

	if (access("/dev/loop-control", F_OK) || access(image, R_OK) || !fs_supported("ext2")) {
		TH_LOG("no loop devices, ext2 or %s: no image swapping", image);
		return 0;
	}
	if (fixture_get("bid20.elf", &fx[0]))
		return -1;
	at = image_pair(image, 16 << 20, &fx[0], &data[0], &data[1], &size, &why);
	if (at < 0) {
		TH_LOG("%s: %s", image, why);
		return -1;
	}
	fx[1] = fx[0];
	memcpy(fx[1].build_id, data[1] + at, fx[1].build_id_size);
	if (mkdir(swap.dir, 0755) && errno != EEXIST)
		return -1;
	for (i = 0; i < 2; i++) {
		struct sfile *f;
		char path[sizeof(swap.dir) + 2];

		fd = open(swap.img[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write_all(fd, (char *)data[i], size))
			return -1;
		close(fd);
		free(data[i]);
		snprintf(path, sizeof(path), "%s/x", swap.dir);
		swap.file[i] = nfiles;
		f = add_file(K_FILE, path, false);
		f->note = i ? " (image B)" : " (image A)";
		allow_id(f, &fx[i]);
		f->allowed |= BIT(IO_ERROR);
	}
	swap.on = true;
	return 0;
}

static void exec_proc(void)
{
	wait_go();
	while (!load_acquire(&sh->stop)) {
		int status;
		pid_t pid = fork();

		if (!pid) {
			execl(exec_path, "busybox", "true", NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			__atomic_add_fetch(&sh->exec_failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (sh->nexec < EXEC_MAX)
			sh->exec_pid[sh->nexec++] = pid;
		__atomic_add_fetch(&sh->execs, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

static void churn_proc(void)
{
	wait_go();
	while (!load_acquire(&sh->stop)) {
		int fd = mmap3_open(1, 0);

		if (fd < 0) {
			__atomic_add_fetch(&sh->churn_failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		close(fd);
		__atomic_add_fetch(&sh->churns, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/* Checks each exec: exactly one executable record of the program, right build-id. */
static void check_execs(struct __test_metadata *_metadata, const struct collector *c,
			struct fixture *prog, uint64_t *bad, uint64_t *io_errors)
{
	uint32_t i, j;

	*bad = *io_errors = 0;
	for (i = 0; i < sh->nexec; i++) {
		uint32_t pid = sh->exec_pid[i], want = 0, got = 0;
		bool wrong = false;

		for (j = 0; j < i && sh->exec_pid[j] != pid; j++)
			;
		if (j < i)
			continue;	/* a pid used again: counted the first time */
		for (j = 0; j < sh->nexec; j++)
			want += sh->exec_pid[j] == pid;
		for (j = 0; j < c->nexecs; j++) {
			const struct exec_rec *x = &c->execs[j];

			if (x->pid != pid)
				continue;
			got++;
			if (x->status == IO_ERROR && !x->size)
				(*io_errors)++;
			else if (x->status != FOUND || x->size != prog->build_id_size ||
				 memcmp(x->id, prog->build_id, x->size))
				wrong = true;
		}
		if (got == want && !wrong)
			continue;
		if (++*bad <= REPORT_EACH)
			TH_LOG("exec of %s by pid %u: %u executable records (want %u)%s",
			       exec_path, pid, got, want, wrong ? ", a wrong build-id" : "");
	}
}

/* The floors of @kernel ($MMAP3_KERNEL; the test kernel by default). */
static const struct floors *floors_of(const char *kernel)
{
	unsigned int i;

	if (!kernel || !*kernel)
		kernel = "test";
	for (i = 0; i < ARRAY_SIZE(floors); i++)
		if (!strcmp(kernel, floors[i].kernel))
			return &floors[i];
	return NULL;
}

/*
 * Whether the workers did, so far, the mappings, execs and event
 * open/close cycles that @floor asks of @seconds.
 */
static bool floors_met(const struct floors *floor, int seconds)
{
	return __atomic_load_n(&sh->nlog, __ATOMIC_RELAXED) >= floor->maps * seconds &&
	       __atomic_load_n(&sh->execs, __ATOMIC_RELAXED) >= floor->execs * seconds &&
	       __atomic_load_n(&sh->churns, __ATOMIC_RELAXED) >= floor->churns * seconds;
}

static struct dm_disk err_disk;
static int err_fd = -1;

FIXTURE(stress) {
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
	int i;

	for (i = 0; i < nfiles; i++) {
		char tmp[PATH_MAX + 8];

		if (!files[i].nver)
			continue;
		unlink(files[i].path);
		snprintf(tmp, sizeof(tmp), "%.*s.new", PATH_MAX - 1, files[i].path);
		unlink(tmp);
	}
	if (swap.on) {
		umount2(swap.dir, MNT_DETACH);
		rmdir(swap.dir);
		unlink(swap.img[0]);
		unlink(swap.img[1]);
	}
	unlink("/tmp/stress-fifo");
	unlink("/tmp/stress-sparse.elf");
	unlink("/tmp/stress-deleted.elf");
	if (err_fd >= 0)
		close(err_fd);
	if (err_disk.name[0])
		dm_disk_teardown(&err_disk);
}

/* The files of stress.accounting. */
static int stress_files(struct __test_metadata *_metadata)
{
	static const char *const fixtures[] = {
		"bid20.elf", "nobid.elf", "notelf.txt", "bad-truncated.elf",
		"bad-phoff.elf", "bad-phnum.elf", "bad-filesz.elf",
		"bad-descsz21.elf", "bad-descsz-huge.elf",
	};
	/* Each rewritten file has build-ids no other file has. */
	static const char *const t_in_place[] = { "bid16.elf", "rewrite.elf" };
	static const char *const t_truncate[] = { "rewrite.new", "exec20.elf", "notelf.txt" };
	static const char *const t_rename[] = {
		"dynamic.elf", "ld-linux-x86-64.so.2", "nobid.elf"
	};
	static const char *const m_in_place[] = { "latenote.elf", "notelf.txt" };
	static const char *const m_truncate[] = { "farnote.elf", "nobid.elf" };
	static const char *const m_rename[] = { "libc.so.6", "bad-descsz21.elf" };
	static const char *const deleted[] = { "nobid.elf" };
	struct fixture fx;
	struct sfile *f;
	unsigned int i;
	char *data;
	size_t size;
	int fd;

	nfiles = 0;
	for (i = 0; i < ARRAY_SIZE(fixtures); i++) {
		if (add_fixture(fixtures_warm(), fixtures[i]) ||
		    add_fixture(fixtures_cold(), fixtures[i])) {
			TH_LOG("fixture %s not in MANIFEST, or not in %s and %s",
			       fixtures[i], fixtures_warm(), fixtures_cold());
			return -1;
		}
	}
	if (add_fixture(fixtures_cold(), "busybox"))
		return -1;
	if (add_rewritten("/tmp", "stress-in-place.elf", M_IN_PLACE, t_in_place, 2) ||
	    add_rewritten("/tmp", "stress-truncate.elf", M_TRUNCATE, t_truncate, 3) ||
	    add_rewritten("/tmp", "stress-rename.elf", M_RENAME, t_rename, 3) ||
	    add_rewritten(fixtures_cold(), "stress-in-place.elf", M_IN_PLACE, m_in_place, 2) ||
	    add_rewritten(fixtures_cold(), "stress-truncate.elf", M_TRUNCATE, m_truncate, 2) ||
	    add_rewritten(fixtures_cold(), "stress-rename.elf", M_RENAME, m_rename, 2)) {
		TH_LOG("cannot set up the rewritten files: %s", strerror(errno));
		return -1;
	}
	/* Deleted while open: only the rewriter maps it. */
	f = add_file(K_FILE, "/tmp/stress-deleted.elf", false);
	f->deleted = true;
	f->nver = 1;
	if (fixture_get(deleted[0], &f->ver[0].fx))
		return -1;
	f->ver[0].data = read_whole(f->ver[0].fx.path, &f->ver[0].size);
	if (!f->ver[0].data)
		return -1;
	allow_id(f, &f->ver[0].fx);
	f->allowed |= BIT(IO_ERROR);

	/* Sparse, 4 GiB: bid20.elf, then a hole. */
	if (fixture_get("bid20.elf", &fx))
		return -1;
	data = read_whole(fx.path, &size);
	fd = open("/tmp/stress-sparse.elf", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (!data || fd < 0 || write_all(fd, data, size) || ftruncate(fd, 4ULL << 30))
		return -1;
	close(fd);
	free(data);
	f = add_file(K_FILE, "/tmp/stress-sparse.elf", true);
	allow_id(f, &fx);
	f->allowed |= BIT(IO_ERROR);

	add_file(K_DEVZERO, "/dev/zero", true)->allowed = BIT(SKIPPED);
	add_file(K_ANON, "//anon", true)->allowed = BIT(NO_FILE);
	if (mkfifo("/tmp/stress-fifo", 0600) && errno != EEXIST)
		return -1;
	add_file(K_FIFO, "/tmp/stress-fifo", true);

	if (swap_setup(_metadata))
		return -1;

	/* A file whose reads fail: IO_ERROR, and nothing else. */
	if (!access("/dev/mapper/control", F_OK) && !dm_disk_setup(&err_disk, "mmap3stress")) {
		char path[sizeof(err_disk.mnt) + sizeof("/bid20.elf")];

		snprintf(path, sizeof(path), "%s/bid20.elf", err_disk.mnt);
		err_fd = open(path, O_RDONLY);	/* keeps the inode */
		if (err_fd < 0 || drop_page_cache() || dm_disk_fail(&err_disk))
			return -1;
		add_file(K_FILE, path, true)->allowed = BIT(IO_ERROR);
	} else {
		err_disk.name[0] = 0;
		TH_LOG("no device mapper: no file whose reads fail");
	}
	return 0;
}

/* The test bounds itself; the harness only catches a hang (1 hour). */
TEST_F_TIMEOUT(stress, accounting, 3600)
{
	int seconds = atoi(getenv("MMAP3_STRESS_SECONDS") ?: "");
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN), i, deleted = -1, nproc = 0;
	const struct floors *floor = floors_of(getenv("MMAP3_KERNEL"));
	double elapsed, maps, execs, churns;
	uint64_t bad_execs, exec_io_errors, t_start;
	static struct collector c;
	static struct tally t;
	struct fixture prog;
	pthread_t rd;
	pid_t pids[PROCS + 4];

	if (seconds <= 0)
		seconds = 20;
	ASSERT_GE(MAX_CPUS, ncpus);
	ASSERT_EQ(0, load_manifest());
	ASSERT_EQ(0, fixture_get_in(fixtures_cold(), "busybox", &prog));
	exec_path = "/mnt/busybox";
	ASSERT_STREQ(exec_path, prog.path) TH_LOG("the program to exec must be %s", exec_path);
	sh = mmap(NULL, sizeof(*sh) + LOG_MAX * sizeof(struct mapping),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, stress_files(_metadata));
	for (i = 0; i < nfiles; i++) {
		if (!strcmp(files[i].path, "/tmp/stress-deleted.elf"))
			deleted = i;
		if (files[i].nver)
			sh->written[i] = BIT(0);
	}
	ASSERT_LE(0, deleted);

	ASSERT_EQ(0, open_events(&c, ncpus, RING_PAGES)) TH_LOG("mmap3 events: %s", strerror(errno));
	c.exec_path = exec_path;
	ASSERT_NE(NULL, floor) TH_LOG("MMAP3_KERNEL=%s: no floors for that kernel",
				      getenv("MMAP3_KERNEL"));

	/* The workers wait for sh->go: fork before the reader thread exists. */
	for (i = 0; i < PROCS + 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i])
			continue;
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* should the test stop short */
		if (i < PROCS)
			mapper_proc(i);
		else if (i == PROCS)
			rewriter_proc(PROCS * THREADS, deleted);
		else if (i == PROCS + 1)
			exec_proc();
		else if (i == PROCS + 2)
			churn_proc();
		else
			swapper_proc(PROCS * THREADS + 1);
	}
	nproc = PROCS + 4;
	ASSERT_EQ(0, pthread_create(&rd, NULL, reader, &c));

	/*
	 * @seconds, and up to as long again while the workers have not done
	 * the work the floors ask of @seconds: a loaded host runs the guest
	 * slower, and the floors check that the workers make progress, not
	 * how fast the host is.
	 */
	t_start = now_ns();
	store_release(&sh->go, 1);
	while (!load_acquire(&sh->stop)) {
		uint64_t ns = now_ns() - t_start;

		if (ns >= 2 * seconds * 1000000000ULL ||
		    (ns >= seconds * 1000000000ULL && floors_met(floor, seconds)))
			break;
		usleep(10000);
	}
	store_release(&sh->stop, 1);
	elapsed = (now_ns() - t_start) / 1e9;
	for (i = 0; i < nproc; i++) {
		int status;

		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("worker %d: status %#x", i, status);
	}
	/*
	 * Every record, and every answer, is written before its mapping task
	 * returns to user space or exits: all are in.
	 */
	store_release(&c.stop, 1);
	pthread_join(rd, NULL);
	close_events(&c);

	/* What each rewritten file was: only the versions written count. */
	for (i = 0; i < nfiles; i++) {
		struct sfile *f = &files[i];
		int v;

		if (f->nver < 2)
			continue;
		f->nids = 0;
		f->allowed &= ~BIT(FOUND);
		for (v = 0; v < f->nver; v++)
			if (sh->written[i] & BIT(v))
				allow_id(f, &f->ver[v].fx);
	}

	ASSERT_FALSE(c.oom);
	ASSERT_EQ(0, rewrites_by_file(sh->rw, sh->nrw));
	ASSERT_EQ(0, match(_metadata, &t, sh->log,
			   sh->nlog < LOG_MAX ? sh->nlog : LOG_MAX, c.recs, c.nrecs,
			   NULL, NULL));
	check_execs(_metadata, &c, &prog, &bad_execs, &exec_io_errors);

	maps = t.mappings / elapsed;
	execs = sh->execs / elapsed;
	churns = sh->churns / elapsed;
	TH_LOG("%s kernel, %d CPUs, %.1f s%s: %llu mappings (%.0f/s, floor %.0f; %llu refused),",
	       floor->kernel, ncpus, elapsed, sh->nlog >= LOG_MAX ? " (the log is full)" : "",
	       (unsigned long long)t.mappings, maps, floor->maps,
	       (unsigned long long)sh->refused);
	TH_LOG("%llu execs (%.1f/s, floor %.3g),",
	       (unsigned long long)sh->execs, execs, floor->execs);
	TH_LOG("%llu event open/close cycles (%.0f/s, floor %.0f), %llu rewrites, %llu image swaps",
	       (unsigned long long)sh->churns, churns, floor->churns,
	       (unsigned long long)sh->rewrites, (unsigned long long)sh->swaps);
	TH_LOG("%llu MMAP3 records, %llu of the workers' mappings, %llu lost",
	       (unsigned long long)c.records, (unsigned long long)c.nrecs,
	       (unsigned long long)c.lost);
	TH_LOG("%llu of execs of %s (%llu IO_ERROR)", (unsigned long long)c.nexecs, exec_path,
	       (unsigned long long)exec_io_errors);
	print_tally(_metadata, &t);
	check_answers(_metadata, &c);

	EXPECT_EQ(0, c.lost) TH_LOG("PERF_RECORD_LOST: the rings were too small");
	expect_clean(_metadata, &t);
	EXPECT_LT(0, c.resolved) TH_LOG("no record of the workers was PENDING: nothing was cold");
	EXPECT_EQ(0, bad_execs);
	EXPECT_EQ(0, sh->failed) TH_LOG("mappings that could not be made");
	EXPECT_EQ(0, sh->exec_failed) TH_LOG("execs of %s failed", exec_path);
	EXPECT_EQ(0, sh->churn_failed) TH_LOG("mmap3 events could not be opened");
	EXPECT_EQ(0, sh->rewrite_failed) TH_LOG("files could not be rewritten");
	EXPECT_LT(0, sh->refused) TH_LOG("the FIFO was never tried");
	if (swap.on) {
		EXPECT_EQ(0, sh->swap_failed) TH_LOG("the image swapper stopped short");
		EXPECT_LT(0, sh->swaps) TH_LOG("no image was swapped");
	}
	if (err_disk.name[0])
		EXPECT_LT(0, t.by_status[nfiles - 1][IO_ERROR]) TH_LOG("no IO_ERROR seen");
	EXPECT_LE(floor->maps * seconds, t.mappings)
		TH_LOG("mappings: fewer than %.0f in %.1f s", floor->maps * seconds, elapsed);
	EXPECT_LE(floor->execs * seconds, sh->execs)
		TH_LOG("execs: fewer than %.1f in %.1f s", floor->execs * seconds, elapsed);
	EXPECT_LE(floor->churns * seconds, sh->churns)
		TH_LOG("event open/close: fewer than %.0f in %.1f s",
		       floor->churns * seconds, elapsed);
	free(c.recs);
	free(c.execs);
}

/*
 * unload.rmmod_under_traffic
 */
#define UNLOAD_RING_PAGES	256
#define UNLOAD_LOG_MAX		BIT(18)
#define UNLOAD_PHASE_MS		30	/* built-in, module, built-in again */
#define DELAY_MS		10

static const char *module_path(void)
{
	return getenv("MMAP3_MODULE") ?: "/tests/mmap3.ko";
}

static int load_module(const char *params)
{
	int fd = open(module_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, params, 0);
	close(fd);
	return ret;
}

static int unload_module(void)
{
	return syscall(__NR_delete_module, "mmap3", O_NONBLOCK);
}

enum phase { PAUSE, RUN, QUIT };

struct unload {
	int phase;		/* load_acquire(), store_release() */
	int paused;		/* workers waiting in PAUSE */
	uint64_t nlog;
	struct mapping *log;
	uint64_t refused;
};

static struct unload *u;

static void *unload_worker(void *arg)
{
	int g = (uintptr_t)arg;
	unsigned int seed = g * 131 + 7;
	uint64_t seq = 0;

	for (;;) {
		struct mapping *m;
		uint64_t i;
		void *p;
		int fi;

		if (load_acquire(&u->phase) == QUIT)
			break;
		if (load_acquire(&u->phase) == PAUSE) {
			__atomic_add_fetch(&u->paused, 1, __ATOMIC_SEQ_CST);
			while (load_acquire(&u->phase) == PAUSE)
				usleep(500);
			__atomic_sub_fetch(&u->paused, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		i = __atomic_fetch_add(&u->nlog, 1, __ATOMIC_RELAXED);
		if (i >= UNLOAD_LOG_MAX) {
			usleep(1000);
			continue;
		}
		m = &u->log[i];
		fi = rand_r(&seed) % nfiles;
		/* Three in four with the pages dropped: the read goes to the disk. */
		p = map_at(g, seq++, fi, -1,
			   rand_r(&seed) % 2 ? PROT_READ | PROT_EXEC : PROT_READ, 1, 0,
			   rand_r(&seed) % 4, m);
		if (!p) {
			__atomic_add_fetch(&u->refused, 1, __ATOMIC_RELAXED);
			continue;
		}
		munmap(p, m->len);
	}
	return NULL;
}

/* Drains @c for @ms milliseconds. */
static void drain_for(struct collector *c, int ms)
{
	uint64_t t0 = now_ns();

	do {
		rings_drain(&c->rings, collect, c);
		usleep(2000);
	} while (now_ns() - t0 < ms * 1000000ULL);
}

/* How many mappings of the log were in flight (in mmap(), or in its read) at @t. */
static uint64_t in_flight_at(uint64_t t)
{
	uint64_t i, n = u->nlog < UNLOAD_LOG_MAX ? u->nlog : UNLOAD_LOG_MAX, in = 0;

	for (i = 0; i < n; i++)
		in += u->log[i].file != NO_MAPPING && u->log[i].t0 < t && u->log[i].t1 > t;
	return in;
}

static struct dm_disk delay_disk;

FIXTURE(unload) {
	bool was_loaded;	/* the module, when the test began */
};

FIXTURE_SETUP(unload)
{
	int fd;

	self->was_loaded = mmap3_module_loaded();
	delay_disk.name[0] = 0;
	fd = mmap3_open(0, 0);
	if (fd < 0 && errno == EINVAL)
		SKIP(return, "kernel without attr.mmap3");
	if (fd >= 0)
		close(fd);
	if (access(module_path(), R_OK))
		SKIP(return, "no module at %s", module_path());
	if (access("/dev/mapper/control", F_OK))
		SKIP(return, "no device mapper");
}

FIXTURE_TEARDOWN(unload)
{
	if (delay_disk.name[0])
		dm_disk_teardown(&delay_disk);
	/* Leave the module as the test found it. */
	if (self->was_loaded && !mmap3_module_loaded())
		load_module("");
	if (!self->was_loaded && mmap3_module_loaded())
		unload_module();
}

TEST_F_TIMEOUT(unload, rmmod_under_traffic, 3600)
{
	const char *kernel = getenv("MMAP3_KERNEL") ?: "test";
	int cycles = atoi(getenv("MMAP3_UNLOAD_CYCLES") ?: "");
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN), nworkers, i, cycle;
	uint64_t at_load = 0, at_unload = 0, lost = 0, start = now_ns();
	static const char *const names[] = {
		"bid20.elf", "bid16.elf", "nobid.elf", "notelf.txt", "exec20.elf",
		"rewrite.elf", "rewrite.new", "latenote.elf", "dynamic.elf",
		"bad-truncated.elf", "bad-phoff.elf", "bad-descsz21.elf",
		"ld-linux-x86-64.so.2", "busybox", "libc.so.6", "farnote.elf",
	};
	pthread_t workers[MAX_WORKERS];
	static struct collector total;	/* the counters of every cycle's */
	static struct tally t;

	if (cycles <= 0)
		cycles = 20;
	nworkers = 2 * ncpus;
	ASSERT_GE(MAX_CPUS, ncpus);
	ASSERT_GE(MAX_WORKERS, nworkers);
	ASSERT_EQ(0, load_manifest());

	ASSERT_EQ(0, dm_disk_setup(&delay_disk, "mmap3delay")) TH_LOG("%s", strerror(errno));
	if (dm_disk_delay(&delay_disk, DELAY_MS))
		SKIP(return, "no dm-delay target: %s", strerror(errno));
	nfiles = 0;
	for (i = 0; i < (int)ARRAY_SIZE(names); i++) {
		const char *name = names[i];

		ASSERT_EQ(0, add_fixture(delay_disk.mnt, name))
			TH_LOG("%s/%s: not there, or not in MANIFEST", delay_disk.mnt, name);
	}

	u = mmap(NULL, sizeof(*u), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, u);
	u->log = calloc(UNLOAD_LOG_MAX, sizeof(*u->log));
	ASSERT_NE(NULL, u->log);
	store_release(&u->phase, PAUSE);

	if (mmap3_module_loaded())
		ASSERT_EQ(0, unload_module()) TH_LOG("rmmod mmap3 before the test: %s",
						     strerror(errno));
	for (i = 0; i < nworkers; i++)
		ASSERT_EQ(0, pthread_create(&workers[i], NULL, unload_worker,
					    (void *)(uintptr_t)i));

	for (cycle = 0; cycle < cycles; cycle++) {
		static struct collector c;
		uint64_t t_load, t_unload;

		while (__atomic_load_n(&u->paused, __ATOMIC_SEQ_CST) < nworkers)
			usleep(500);
		memset(&c, 0, sizeof(c));
		ASSERT_EQ(0, open_events(&c, ncpus, UNLOAD_RING_PAGES))
			TH_LOG("cycle %d: events: %s", cycle, strerror(errno));
		u->nlog = 0;
		store_release(&u->phase, RUN);

		/* The built-in lookup, the module, the built-in lookup again. */
		drain_for(&c, UNLOAD_PHASE_MS);
		t_load = now_ns();
		ASSERT_EQ(0, load_module(cycle % 2 ? "" : "cache_entries=0"))
			TH_LOG("cycle %d: load: %s", cycle, strerror(errno));
		drain_for(&c, UNLOAD_PHASE_MS);
		t_unload = now_ns();
		ASSERT_EQ(0, unload_module())
			TH_LOG("cycle %d: rmmod with events open: %s", cycle, strerror(errno));
		ASSERT_FALSE(mmap3_module_loaded());
		drain_for(&c, UNLOAD_PHASE_MS);

		/* Every mapping made, and answered, before the events are read. */
		store_release(&u->phase, PAUSE);
		while (__atomic_load_n(&u->paused, __ATOMIC_SEQ_CST) < nworkers)
			usleep(500);
		close_events(&c);
		at_load += in_flight_at(t_load);
		at_unload += in_flight_at(t_unload);
		lost += c.lost;
		total.answers += c.answers;
		total.resolved += c.resolved;
		total.read.pending += c.read.pending;
		total.read.answered += c.read.answered;
		total.read.unanswered += c.read.unanswered;
		total.read.orphans += c.read.orphans;
		ASSERT_FALSE(c.oom);
		ASSERT_EQ(0, match(_metadata, &t, u->log,
				   u->nlog < UNLOAD_LOG_MAX ? u->nlog : UNLOAD_LOG_MAX,
				   c.recs, c.nrecs, NULL, NULL));
		free(c.recs);
		free(c.execs);
		if (!tally_clean(&t) || lost || c.answers != c.resolved)
			break;
	}
	store_release(&u->phase, QUIT);
	for (i = 0; i < nworkers; i++)
		pthread_join(workers[i], NULL);

	TH_LOG("%d cycles in %.1f s on %d CPUs (%s kernel), %d workers, reads delayed %d ms:",
	       cycle, (now_ns() - start) / 1e9, ncpus, kernel, nworkers, DELAY_MS);
	TH_LOG("mappings in flight at insmod: %llu, at rmmod: %llu; %llu refused; %llu lost",
	       (unsigned long long)at_load, (unsigned long long)at_unload,
	       (unsigned long long)u->refused, (unsigned long long)lost);
	print_tally(_metadata, &t);
	check_answers(_metadata, &total);
	EXPECT_EQ(0, lost);
	expect_clean(_metadata, &t);
	EXPECT_EQ(0, u->refused);
	EXPECT_LT(0, at_unload) TH_LOG("no mapping was in flight at rmmod: no race");
	EXPECT_LT(0, total.resolved) TH_LOG("no record was PENDING: no read on the way back");
	EXPECT_EQ(cycles, cycle);
}

TEST_HARNESS_MAIN
