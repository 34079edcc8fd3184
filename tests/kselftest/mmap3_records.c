// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_RECORD_MMAP3, with the kernel's built-in lookup or the mmap3 module:
 * every record is checked against what MMAP2 says of the same mapping in
 * the same run, and its build-id (resolved by its PERF_RECORD_MMAP3_BUILD_ID
 * when it was PENDING: ring_drain()) against the one the fixture was
 * linked with (MANIFEST).
 */
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "mmap3_dm.h"
#include "mmap3_util.h"

#include "../kselftest_harness.h"
#include "mmap3_test.h"

#define ID_SAMPLE_SIZE	16	/* PERF_SAMPLE_TID | PERF_SAMPLE_TIME */

struct seen {
	__u64 addr;
	int n3, n2;
	struct mmap3_record *r3;
	struct mmap2_record *r2;
};

static void collect(const struct perf_event_header *h, void *ctx)
{
	struct seen *s = ctx;
	const struct mmap3_record *r = (const void *)h;

	if (h->type != PERF_RECORD_MMAP3 && h->type != PERF_RECORD_MMAP2)
		return;
	if (r->addr != s->addr)	/* addr is at the same offset in both */
		return;
	if (h->type == PERF_RECORD_MMAP3) {
		s->n3++;
		free(s->r3);
		s->r3 = malloc(h->size);
		memcpy(s->r3, h, h->size);
	} else {
		s->n2++;
		free(s->r2);
		s->r2 = malloc(h->size);
		memcpy(s->r2, h, h->size);
	}
}

static void seen_free(struct seen *s)
{
	free(s->r3);
	free(s->r2);
	memset(s, 0, sizeof(*s));
}

static int open_mmap2(int build_id, int mmap_data)
{
	struct perf_event_attr attr;

	side_band_attr(&attr);
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.build_id = build_id;
	attr.mmap_data = mmap_data;
	return sys_perf_event_open(&attr, 0, -1, -1, 0);
}

/*
 * Opens an MMAP3 listener (@mmap_data) and an MMAP2 one (@build_id,
 * @mmap_data) on this task, each with a ring of @pages pages (none when
 * the test is skipped: no MMAP3 here).
 */
static void open_pair(struct __test_metadata *_metadata, struct ring *r3,
		      struct ring *r2, int build_id, int mmap_data, int pages)
{
	int fd3, fd2;

	fd3 = open_mmap3(_metadata, mmap_data, 0);
	if (fd3 < 0)
		return;
	ASSERT_EQ(0, ring_map(r3, fd3, pages));
	fd2 = open_mmap2(build_id, mmap_data);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ring_map(r2, fd2, pages));
}

/* Checks the layout rules of the uapi header on one MMAP3 record. */
static void check_layout(struct __test_metadata *_metadata,
			 const struct mmap3_record *r)
{
	size_t name_len = strnlen(r->filename, r->header.size - sizeof(*r));
	size_t name_size = r->header.size - sizeof(*r) - ID_SAMPLE_SIZE;
	size_t i;

	ASSERT_EQ(0, r->header.size % 8);
	ASSERT_LT(name_len, name_size);			/* NUL-terminated */
	ASSERT_EQ((name_len + 1 + 7) / 8 * 8, name_size);	/* padded to 8 */
	for (i = name_len; i < name_size; i++)
		ASSERT_EQ(0, r->filename[i]);
	ASSERT_LE(r->build_id_size, BUILD_ID_SIZE_MAX);
	for (i = r->build_id_size; i < BUILD_ID_SIZE_MAX; i++)
		ASSERT_EQ(0, r->build_id[i]);
	ASSERT_EQ(r->build_id_status == 1, r->build_id_size > 0);
}

/* Maps @path, drains both rings (@r2 may be NULL) into @s. */
static void *map_file(struct __test_metadata *_metadata, const char *path,
		      int prot, struct ring *r3, struct ring *r2, struct seen *s)
{
	void *p;
	int fd;

	fd = open(path, O_RDONLY);
	EXPECT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
	if (fd < 0)
		return NULL;
	p = mmap(NULL, 4096, prot, MAP_PRIVATE, fd, 0);
	close(fd);
	EXPECT_NE(MAP_FAILED, p);
	if (p == MAP_FAILED)
		return NULL;
	s->addr = (uintptr_t)p;
	ring_drain(r3, collect, s);
	if (r2)
		ring_drain(r2, collect, s);
	munmap(p, 4096);
	return p;
}

FIXTURE(records) {
	struct ring r3, r2;
	struct seen s;
};

FIXTURE_SETUP(records)
{
	memset(&self->s, 0, sizeof(self->s));
	open_pair(_metadata, &self->r3, &self->r2, 0, 1, 64);
}

FIXTURE_TEARDOWN(records)
{
	seen_free(&self->s);
	ring_unmap(&self->r3);
	ring_unmap(&self->r2);
}

/* Every MMAP2 field, and the misc bits, are the same in MMAP3. */
TEST_F(records, same_fields_as_mmap2)
{
	const struct mmap3_record *r3;
	const struct mmap2_record *r2;
	struct fixture fx;

	ASSERT_EQ(0, fixture_get("bid20.elf", &fx));
	ASSERT_NE(NULL, map_file(_metadata, fx.path, PROT_READ | PROT_EXEC,
				 &self->r3, &self->r2, &self->s));
	ASSERT_EQ(1, self->s.n3);
	ASSERT_EQ(1, self->s.n2);
	r3 = self->s.r3;
	r2 = self->s.r2;
	check_layout(_metadata, r3);
	check_build_id(_metadata, r3, &fx);
	ASSERT_EQ(r2->header.misc, r3->header.misc);
	ASSERT_EQ(r2->pid, r3->pid);
	ASSERT_EQ(r2->tid, r3->tid);
	ASSERT_EQ(getpid(), (pid_t)r3->pid);
	ASSERT_EQ(r2->addr, r3->addr);
	ASSERT_EQ(r2->len, r3->len);
	ASSERT_EQ(r2->pgoff, r3->pgoff);
	ASSERT_EQ(r2->maj, r3->maj);
	ASSERT_EQ(r2->min, r3->min);
	ASSERT_EQ(r2->ino, r3->ino);
	ASSERT_EQ(r2->ino_generation, r3->ino_generation);
	ASSERT_EQ(r2->prot, r3->prot);
	ASSERT_EQ(r2->flags, r3->flags);
	ASSERT_STREQ(r2->filename, r3->filename);
	ASSERT_STREQ(fx.path, r3->filename);
}

/*
 * A path of @len characters under @base, made of directories of 200
 * characters and a file name that fills the rest; the directories are
 * created. 0, or -1 when @len is too short for @base.
 */
static int long_path(char *out, size_t len, const char *base)
{
	size_t n;

	snprintf(out, len + 1, "%s", base);
	if (mkdir(out, 0755) && errno != EEXIST)
		return -1;
	while ((n = strlen(out)) + 1 + 255 < len) {
		out[n] = '/';
		memset(out + n + 1, 'd', 200);
		out[n + 201] = 0;
		if (mkdir(out, 0755) && errno != EEXIST)
			return -1;
	}
	if (n + 2 > len)
		return -1;
	out[n] = '/';
	memset(out + n + 1, 'f', len - n - 1);
	out[len] = 0;
	return 0;
}

/* Removes what long_path() made. */
static void long_path_remove(char *path, const char *base)
{
	char *slash;

	unlink(path);
	while ((slash = strrchr(path, '/')) && slash - path >= (long)strlen(base)) {
		*slash = 0;
		rmdir(path);
	}
}

/*
 * The longest name perf_event_mmap() reports (d_path() into PATH_MAX - 8
 * bytes: 4087 characters and the NUL) comes out as MMAP2's, NUL-terminated
 * and padded; one character more is "//toolong" in both.
 */
TEST_F(records, longest_name)
{
	const char *base = "/tmp/mmap3-longest-name";
	static char path[PATH_MAX + 8];
	size_t lens[] = { PATH_MAX - 9, PATH_MAX - 8 };
	struct fixture fx;
	int i;

	ASSERT_EQ(0, fixture_get("bid20.elf", &fx));
	for (i = 0; i < 2; i++) {
		const struct mmap3_record *r3;
		const struct mmap2_record *r2;

		seen_free(&self->s);
		memset(&self->s, 0, sizeof(self->s));
		ASSERT_EQ(0, long_path(path, lens[i], base)) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(lens[i], strlen(path));
		ASSERT_EQ(0, copy_file(fx.path, path));
		ASSERT_NE(NULL, map_file(_metadata, path, PROT_READ | PROT_EXEC,
					 &self->r3, &self->r2, &self->s));
		ASSERT_EQ(1, self->s.n3);
		ASSERT_EQ(1, self->s.n2);
		r3 = self->s.r3;
		r2 = self->s.r2;
		check_layout(_metadata, r3);
		check_build_id(_metadata, r3, &fx);
		ASSERT_STREQ(r2->filename, r3->filename);
		ASSERT_STREQ(i ? "//toolong" : path, r3->filename);
		long_path_remove(path, base);
	}
	rmdir(base);
}

/* A data mapping (no PROT_EXEC) is reported with mmap_data, as MMAP2 does. */
TEST_F(records, data_mapping)
{
	struct fixture fx;

	ASSERT_EQ(0, fixture_get("bid16.elf", &fx));
	ASSERT_NE(NULL, map_file(_metadata, fx.path, PROT_READ, &self->r3,
				 &self->r2, &self->s));
	ASSERT_EQ(1, self->s.n3);
	ASSERT_EQ(1, self->s.n2);
	ASSERT_TRUE(self->s.r3->header.misc & PERF_RECORD_MISC_MMAP_DATA);
	ASSERT_EQ(self->s.r2->header.misc, self->s.r3->header.misc);
	check_layout(_metadata, self->s.r3);
	check_build_id(_metadata, self->s.r3, &fx);
}

/* Anonymous memory: NO_FILE, executable or data. */
TEST_F(records, anonymous)
{
	int prots[] = { PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		void *p = mmap(NULL, 8192, prots[i], MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT_NE(MAP_FAILED, p);
		seen_free(&self->s);
		self->s.addr = (uintptr_t)p;
		ring_drain(&self->r3, collect, &self->s);
		ring_drain(&self->r2, collect, &self->s);
		munmap(p, 8192);
		ASSERT_EQ(1, self->s.n3);
		ASSERT_EQ(1, self->s.n2);
		ASSERT_STREQ(self->s.r2->filename, self->s.r3->filename);
		ASSERT_EQ(2, self->s.r3->build_id_status);	/* NO_FILE */
		check_layout(_metadata, self->s.r3);
	}
}

/* A character device is never read: SKIPPED. */
TEST_F(records, device_skipped)
{
	ASSERT_NE(NULL, map_file(_metadata, "/dev/zero", PROT_READ | PROT_EXEC,
				 &self->r3, &self->r2, &self->s));
	ASSERT_EQ(1, self->s.n3);
	ASSERT_STREQ("/dev/zero", self->s.r3->filename);
	ASSERT_EQ(7, self->s.r3->build_id_status);	/* SKIPPED */
	check_layout(_metadata, self->s.r3);
}

/* Secret memory is never read: SKIPPED. */
TEST_F(records, secretmem_skipped)
{
	void *p;
	int fd;

	fd = syscall(__NR_memfd_secret, 0);
	if (fd < 0)
		SKIP(return, "memfd_secret: %s", strerror(errno));
	ASSERT_EQ(0, ftruncate(fd, 4096));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, p);
	self->s.addr = (uintptr_t)p;
	ring_drain(&self->r3, collect, &self->s);
	munmap(p, 4096);
	ASSERT_EQ(1, self->s.n3);
	ASSERT_EQ(7, self->s.r3->build_id_status);	/* SKIPPED */
}

/* A file whose reads fail: IO_ERROR, and the record is still written. */
TEST_F(records, read_error)
{
	struct dm_disk disk;
	char path[PATH_MAX + 16];
	void *p;
	int fd;

	const char *why = need_root() ?: dm_disk_missing();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, dm_disk_setup(&disk, "mmap3err")) TH_LOG("%s", strerror(errno));
	snprintf(path, sizeof(path), "%s/nobid.elf", disk.mnt);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, drop_page_cache());
	ASSERT_EQ(0, dm_disk_fail(&disk));
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	self->s.addr = (uintptr_t)p;
	ring_drain(&self->r3, collect, &self->s);
	ring_drain(&self->r2, collect, &self->s);
	munmap(p, 4096);
	close(fd);
	dm_disk_teardown(&disk);
	ASSERT_EQ(1, self->s.n3);
	ASSERT_EQ(1, self->s.n2);
	ASSERT_STREQ(path, self->s.r3->filename);
	ASSERT_EQ(6, self->s.r3->build_id_status);	/* IO_ERROR */
	check_layout(_metadata, self->s.r3);
	/* A new mount: no cache knows the file, read on the way back. */
	check_pending(_metadata, self->s.r3, true, true);
}

/* Each fixture, warm, gets the status and build-id MANIFEST gives it. */
FIXTURE(status) {
	struct ring r3;
	struct seen s;
};

FIXTURE_VARIANT(status) {
	const char *file;
};

FIXTURE_VARIANT_ADD(status, build_id_20) { .file = "bid20.elf" };
FIXTURE_VARIANT_ADD(status, build_id_16) { .file = "bid16.elf" };
FIXTURE_VARIANT_ADD(status, no_build_id) { .file = "nobid.elf" };
FIXTURE_VARIANT_ADD(status, not_elf) { .file = "notelf.txt" };
FIXTURE_VARIANT_ADD(status, note_past_first_page) { .file = "latenote.elf" };
FIXTURE_VARIANT_ADD(status, note_header_across_pages) { .file = "straddle-note.elf" };
FIXTURE_VARIANT_ADD(status, build_id_across_pages) { .file = "straddle-desc.elf" };
FIXTURE_VARIANT_ADD(status, phdrs_unaligned_across_pages) { .file = "straddle-phdr.elf" };
FIXTURE_VARIANT_ADD(status, truncated) { .file = "bad-truncated.elf" };
FIXTURE_VARIANT_ADD(status, phoff_past_end) { .file = "bad-phoff.elf" };
FIXTURE_VARIANT_ADD(status, phnum_65535) { .file = "bad-phnum.elf" };
FIXTURE_VARIANT_ADD(status, filesz_overflow) { .file = "bad-filesz.elf" };
FIXTURE_VARIANT_ADD(status, descsz_21) { .file = "bad-descsz21.elf" };
FIXTURE_VARIANT_ADD(status, descsz_overflow) { .file = "bad-descsz-huge.elf" };

FIXTURE_SETUP(status)
{
	int fd;

	memset(&self->s, 0, sizeof(self->s));
	fd = open_mmap3(_metadata, 0, 0);
	if (fd < 0)
		return;
	ASSERT_EQ(0, ring_map(&self->r3, fd, 16));
}

FIXTURE_TEARDOWN(status)
{
	seen_free(&self->s);
	ring_unmap(&self->r3);
}

TEST_F(status, warm)
{
	struct fixture fx;

	ASSERT_EQ(0, fixture_get(variant->file, &fx));
	ASSERT_NE(NULL, map_file(_metadata, fx.path, PROT_READ | PROT_EXEC,
				 &self->r3, NULL, &self->s));
	ASSERT_EQ(1, self->s.n3);
	check_layout(_metadata, self->s.r3);
	check_build_id(_metadata, self->s.r3, &fx);
	check_pending(_metadata, self->s.r3, false, false);
}

TEST_F(status, cold)
{
	struct fixture fx;

	if (need_root())
		SKIP(return, "%s", need_root());
	if (fixture_get_in(fixtures_cold(), variant->file, &fx))
		SKIP(return, "no block-backed copy of %s in %s (MMAP3_COLD_FIXTURES)",
		     variant->file, fixtures_cold());
	ASSERT_EQ(0, drop_page_cache());
	ASSERT_NE(NULL, map_file(_metadata, fx.path, PROT_READ | PROT_EXEC,
				 &self->r3, NULL, &self->s));
	ASSERT_EQ(1, self->s.n3);
	check_layout(_metadata, self->s.r3);
	check_build_id(_metadata, self->s.r3, &fx);
	/* The module may have cached the fixture in an earlier test. */
	check_pending(_metadata, self->s.r3, true, false);
}

/*
 * The upstream gap, in the same run: after drop_caches (and after
 * MADV_PAGEOUT), MMAP2 with build_id has no build-id for a file on a block
 * device; MMAP3 says PENDING, and its answer has the right one. A fresh
 * copy of the fixture: no cache knows it.
 */
FIXTURE(cold) {
	struct ring r3, r2;
	struct seen s;
};

FIXTURE_VARIANT(cold) {
	const char *file;
	int pageout;
};

FIXTURE_VARIANT_ADD(cold, drop_caches) { .file = "exec20.elf" };
FIXTURE_VARIANT_ADD(cold, madv_pageout) { .file = "rewrite.new", .pageout = 1 };

FIXTURE_SETUP(cold)
{
	memset(&self->s, 0, sizeof(self->s));
	open_pair(_metadata, &self->r3, &self->r2, 1, 0, 16);
}

FIXTURE_TEARDOWN(cold)
{
	seen_free(&self->s);
	ring_unmap(&self->r3);
	ring_unmap(&self->r2);
	unlink_copies();
}

TEST_F(cold, mmap2_misses_mmap3_finds)
{
	struct fixture fx;

	if (no_cold_fixtures())
		SKIP(return, "%s", no_cold_fixtures());
	ASSERT_EQ(0, fresh_copy(variant->file, &fx));
	ASSERT_EQ(0, drop_page_cache());
	if (variant->pageout) {
		/*
		 * Bring the file in, then push its pages out again. On one CPU:
		 * a page just read sits in that CPU's LRU batch, and
		 * MADV_PAGEOUT drains only the batch of the CPU it runs on.
		 */
		int fd = open(fx.path, O_RDONLY), tries = 0;
		cpu_set_t all, one;
		unsigned char vec;
		void *p;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, madvise(p, 4096, MADV_POPULATE_READ));
		do {
			ASSERT_EQ(0, madvise(p, 4096, MADV_PAGEOUT));
			ASSERT_EQ(0, mincore(p, 4096, &vec));
		} while ((vec & 1) && ++tries < 10 && !usleep(10000));
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
		ASSERT_FALSE(vec & 1) TH_LOG("MADV_PAGEOUT left the page in memory");
		munmap(p, 4096);
		ring_drain(&self->r3, NULL, NULL);
		ring_drain(&self->r2, NULL, NULL);
	}
	ASSERT_NE(NULL, map_file(_metadata, fx.path, PROT_READ | PROT_EXEC,
				 &self->r3, &self->r2, &self->s));
	ASSERT_EQ(1, self->s.n3);
	ASSERT_EQ(1, self->s.n2);
	check_build_id(_metadata, self->s.r3, &fx);
	check_pending(_metadata, self->s.r3, true, true);
	TH_LOG("MMAP2 with build_id: %s",
	       self->s.r2->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID ?
	       "has a build-id" : "no build-id (upstream's no-fault parser)");
	ASSERT_FALSE(self->s.r2->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
}

/* A file rewritten in place and mapped again gets its new build-id. */
FIXTURE(rewrite) {
	struct ring r3;
	struct seen s;
};

FIXTURE_VARIANT(rewrite) {
	const char *dir;	/* NULL: fixtures_cold() */
	int settle;	/* seconds between writing and the first mmap */
};

FIXTURE_VARIANT_ADD(rewrite, block_device) { };
FIXTURE_VARIANT_ADD(rewrite, block_device_settled) { .settle = 2 };
FIXTURE_VARIANT_ADD(rewrite, tmpfs) { .dir = "/tmp" };
FIXTURE_VARIANT_ADD(rewrite, tmpfs_settled) { .dir = "/tmp", .settle = 1 };

FIXTURE_SETUP(rewrite)
{
	int fd;

	memset(&self->s, 0, sizeof(self->s));
	fd = open_mmap3(_metadata, 0, 0);
	if (fd < 0)
		return;
	ASSERT_EQ(0, ring_map(&self->r3, fd, 16));
}

FIXTURE_TEARDOWN(rewrite)
{
	seen_free(&self->s);
	ring_unmap(&self->r3);
}

/* Copies @from over @to in place: same inode, new contents. */
static int copy_in_place(const char *from, const char *to)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open(from, O_RDONLY);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	return n;
}

TEST_F(rewrite, new_build_id)
{
	struct fixture old, new;
	char path[256];
	struct stat st1, st2;

	if (!variant->dir && need_root())
		SKIP(return, "%s", need_root());
	ASSERT_EQ(0, fixture_get("rewrite.elf", &old));
	ASSERT_EQ(0, fixture_get("rewrite.new", &new));
	snprintf(path, sizeof(path), "%s/rewritten-%d.elf",
		 variant->dir ?: fixtures_cold(), getpid());

	ASSERT_EQ(0, copy_in_place(old.path, path));
	sleep(variant->settle);
	ASSERT_NE(NULL, map_file(_metadata, path, PROT_READ | PROT_EXEC,
				 &self->r3, NULL, &self->s));
	ASSERT_EQ(1, self->s.n3);
	snprintf(old.path, sizeof(old.path), "%s", path);
	check_build_id(_metadata, self->s.r3, &old);
	ASSERT_EQ(0, stat(path, &st1));

	seen_free(&self->s);
	ASSERT_EQ(0, copy_in_place(new.path, path));
	ASSERT_EQ(0, stat(path, &st2));
	ASSERT_EQ(st1.st_ino, st2.st_ino);	/* in place */
	ASSERT_NE(NULL, map_file(_metadata, path, PROT_READ | PROT_EXEC,
				 &self->r3, NULL, &self->s));
	ASSERT_EQ(1, self->s.n3);
	snprintf(new.path, sizeof(new.path), "%s", path);
	check_build_id(_metadata, self->s.r3, &new);
	unlink(path);
}

/*
 * exec: the records of the executable and of its interpreter carry their
 * build-ids and come before the first user sample of the new image. An
 * executable whose note is beyond what exec reads (farnote.elf), cold: its
 * record says PENDING, and its answer, too, comes before the first sample.
 */
struct exec_seen {
	const char *exe, *interp;
	int exe_at, answer_at, interp_at, first_sample_at, n;
	struct mmap3_record exe_rec, interp_rec;
};

static void exec_collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_answer *a = (const void *)h;
	const struct mmap3_record *r = (const void *)h;
	struct exec_seen *e = ctx;

	e->n++;
	if (h->type == PERF_RECORD_SAMPLE && e->first_sample_at < 0)
		e->first_sample_at = e->n;
	if (h->type == PERF_RECORD_MMAP3_BUILD_ID && e->exe_at > 0 && e->answer_at < 0 &&
	    a->addr == e->exe_rec.addr && a->tid == e->exe_rec.tid)
		e->answer_at = e->n;
	if (h->type != PERF_RECORD_MMAP3)
		return;
	if (!strcmp(r->filename, e->exe) && e->exe_at < 0) {
		e->exe_at = e->n;
		e->exe_rec = *r;
	}
	if (e->interp && !strcmp(r->filename, e->interp) && e->interp_at < 0) {
		e->interp_at = e->n;
		e->interp_rec = *r;
	}
}

FIXTURE(exec) {
};

FIXTURE_VARIANT(exec) {
	const char *exe;
	const char *interp;
	bool cold;		/* a fresh copy on fixtures_cold(), page cache dropped */
};

FIXTURE_VARIANT_ADD(exec, static) { .exe = "exec20.elf" };
FIXTURE_VARIANT_ADD(exec, dynamic) { .exe = "dynamic.elf",
				     .interp = "/lib64/ld-linux-x86-64.so.2" };
FIXTURE_VARIANT_ADD(exec, far_note_cold) { .exe = "farnote.elf", .cold = true };

FIXTURE_SETUP(exec)
{
}

FIXTURE_TEARDOWN(exec)
{
	unlink_copies();
}

TEST_F(exec, records_before_first_sample)
{
	struct exec_seen e = {
		.exe_at = -1, .answer_at = -1, .interp_at = -1, .first_sample_at = -1,
	};
	struct perf_event_attr attr;
	struct fixture fx, ld;
	int go, fd3, fds, status;
	struct ring ring;
	pid_t child;

	if (variant->cold) {
		if (no_cold_fixtures())
			SKIP(return, "%s", no_cold_fixtures());
		ASSERT_EQ(0, fresh_copy(variant->exe, &fx));
	} else {
		ASSERT_EQ(0, fixture_get(variant->exe, &fx));
	}
	e.exe = fx.path;
	if (variant->interp) {
		ASSERT_EQ(0, fixture_get("ld-linux-x86-64.so.2", &ld));
		e.interp = variant->interp;
	}
	child = fork_held(fx.path, &go);
	ASSERT_LE(0, child);

	side_band_attr(&attr);
	attr.mmap3 = 1;
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	fd3 = open_child_event(_metadata, &attr, child);
	if (fd3 < 0)
		return;
	/* A sampling event into the same ring: the same clock. */
	side_band_attr(&attr);
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 20000;	/* ns */
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	fds = sys_perf_event_open(&attr, child, -1, -1, 0);
	ASSERT_LE(0, fds);
	ASSERT_EQ(0, ring_map(&ring, fd3, 64));
	ASSERT_EQ(0, ioctl(fds, PERF_EVENT_IOC_SET_OUTPUT, fd3));
	if (variant->cold)
		ASSERT_EQ(0, drop_page_cache());

	ASSERT_EQ(1, write(go, "x", 1));
	close(go);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	ring_drain(&ring, exec_collect, &e);
	close(fds);
	ring_unmap(&ring);

	TH_LOG("%d records: exe at %d (its answer at %d), interpreter at %d, first sample at %d",
	       e.n, e.exe_at, e.answer_at, e.interp_at, e.first_sample_at);
	ASSERT_LT(0, e.exe_at);
	check_build_id(_metadata, &e.exe_rec, &fx);
	ASSERT_LT(0, e.first_sample_at) TH_LOG("no user sample: the program ran too briefly");
	ASSERT_LT(e.exe_at, e.first_sample_at);
	if (variant->cold) {
		check_pending(_metadata, &e.exe_rec, true, true);
		ASSERT_LT(e.exe_at, e.answer_at);
		ASSERT_LT(e.answer_at, e.first_sample_at);
	}
	if (variant->interp) {
		ASSERT_LT(0, e.interp_at);
		check_build_id(_metadata, &e.interp_rec, &ld);
		ASSERT_LT(e.interp_at, e.first_sample_at);
	}
}

/*
 * Many threads mapping at once: one record per mapping, none lost with a
 * ring buffer sized for them all.
 */
#define THREADS		8
#define MAPS		1000

static const char *concurrent_path;

static void *mapper(void *arg)
{
	int fd = open(concurrent_path, O_RDONLY), i;

	for (i = 0; i < MAPS && fd >= 0; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			return (void *)1;
		munmap(p, 4096);
	}
	if (fd >= 0)
		close(fd);
	return fd < 0 ? (void *)1 : NULL;
}

struct count {
	const char *path;
	int records, bad;
};

static void count_collect(const struct perf_event_header *h, void *ctx)
{
	struct count *c = ctx;
	const struct mmap3_record *r = (const void *)h;

	if (h->type != PERF_RECORD_MMAP3 || strcmp(r->filename, c->path))
		return;
	c->records++;
	if (r->build_id_status != 1)
		c->bad++;
}

FIXTURE(concurrency) {};
FIXTURE_SETUP(concurrency) {}
FIXTURE_TEARDOWN(concurrency) {}

/* Bounded work (threads x mappings), minutes on the debug kernel under load. */
TEST_F_TIMEOUT(concurrency, concurrent_mappers, 600)
{
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN), i, fd;
	static struct ring_set rings;
	struct count c = { 0 };
	pthread_t t[THREADS];
	struct fixture fx;
	__u64 lost;
	void *ret;

	ASSERT_EQ(0, fixture_get("bid16.elf", &fx));
	c.path = fx.path;
	concurrent_path = fx.path;
	ASSERT_GE(RING_SET_MAX, ncpus);
	/*
	 * Inherited events cannot share one per-task ring: one event per CPU,
	 * as perf record does. 8000 records of about 140 bytes: 2 MiB per
	 * CPU is room enough even if all land on one.
	 */
	for (i = 0; i < ncpus; i++) {
		struct perf_event_attr attr;

		side_band_attr(&attr);
		attr.mmap3 = 1;
		attr.inherit = 1;
		fd = open_event(_metadata, &attr, 0, i);
		if (fd < 0)
			return;
		ASSERT_EQ(0, ring_map(&rings.ring[i], fd, 512)) TH_LOG("ring: %s", strerror(errno));
		rings.n++;
	}
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, mapper, NULL));
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(t[i], &ret));
		ASSERT_EQ(NULL, ret);
	}
	rings_flush(&rings, count_collect, &c);
	lost = rings_lost(&rings);
	rings_unmap(&rings);
	TH_LOG("%d records for %d mappings, %d without build-id, %llu lost",
	       c.records, THREADS * MAPS, c.bad, (unsigned long long)lost);
	ASSERT_EQ(0, lost);
	ASSERT_EQ(THREADS * MAPS, c.records);
	ASSERT_EQ(0, c.bad);
}

/*
 * A mapping of every kind, executable and data, under an mmap3 event with
 * attr.mmap_data and an MMAP2 event: each has exactly one MMAP3 record, as
 * it has one MMAP2 record, with the status the uapi gives its kind, and
 * data mappings have PERF_RECORD_MISC_MMAP_DATA. None is UNKNOWN (0),
 * which is never emitted: ring_drain() checks that of every MMAP3 record
 * that any of these tests reads.
 */
#define MAX_KINDS	16

/* How a kind's record gets its answer (check_pending()), on its first mapping. */
enum answered { WARM, COLD, NOT_READ };

struct kind {
	const char *what;
	int fd;			/* -1: anonymous */
	int flags;		/* MAP_PRIVATE or MAP_SHARED (| MAP_ANONYMOUS) */
	int prot;		/* added to PROT_READ (| PROT_EXEC) */
	int status;
	enum answered answered;	/* NOT_READ: no file to read, never PENDING */
	bool data_only;
	struct fixture fx;	/* the build-id, for FOUND */
};

struct kind_list {
	struct kind k[MAX_KINDS];
	int n;
};

FIXTURE(kinds) {
	struct ring r3, r2;
	struct kind_list kinds;
	struct dm_disk disk;
	bool disk_up;
};

FIXTURE_SETUP(kinds)
{
	open_pair(_metadata, &self->r3, &self->r2, 0, 1, 64);
}

FIXTURE_TEARDOWN(kinds)
{
	int i;

	for (i = 0; i < self->kinds.n; i++)
		if (self->kinds.k[i].fd >= 0)
			close(self->kinds.k[i].fd);
	if (self->disk_up)
		dm_disk_teardown(&self->disk);
	unlink_copies();
	ring_unmap(&self->r3);
	ring_unmap(&self->r2);
}

/* Adds a kind: a fixture, or @path when not NULL, opened read-only. */
static struct kind *add_kind(struct __test_metadata *_metadata,
			     struct kind_list *l, const char *what,
			     const char *name, const char *path, int status)
{
	struct kind *k = &l->k[l->n];

	ASSERT_GT(MAX_KINDS, l->n);
	memset(k, 0, sizeof(*k));
	k->what = what;
	k->status = status;
	k->answered = status == 2 || status == 7 ? NOT_READ : WARM;
	k->flags = MAP_PRIVATE;
	k->fd = -1;
	if (name)
		ASSERT_EQ(0, fixture_get(name, &k->fx));
	if (path || name) {
		k->fd = open(path ?: k->fx.path, O_RDONLY);
		ASSERT_LE(0, k->fd) TH_LOG("%s: %s", path ?: k->fx.path, strerror(errno));
	}
	l->n++;
	return k;
}

/* A copy of the fixture @name in a file @fd (memfd, or deleted). */
static int fill_from(const char *name, int fd)
{
	char buf[65536];
	struct fixture fx;
	ssize_t n;
	int in;

	if (fixture_get(name, &fx))
		return -1;
	in = open(fx.path, O_RDONLY);
	if (in < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, n) != n)
			n = -1;
	close(in);
	return n;
}

TEST_F(kinds, one_record_each_never_unknown)
{
	static const char *const prot_name[] = { "data", "exec" };
	char tmp[PATH_MAX + 32];
	struct kind *k;
	int i, p, fd;

	add_kind(_metadata, &self->kinds, "ELF, 20-byte build-id", "bid20.elf", NULL, 1);
	add_kind(_metadata, &self->kinds, "ELF, 16-byte build-id", "bid16.elf", NULL, 1);
	add_kind(_metadata, &self->kinds, "ELF, note past the first page", "latenote.elf", NULL, 1);
	add_kind(_metadata, &self->kinds, "ELF without a build-id", "nobid.elf", NULL, 4);
	add_kind(_metadata, &self->kinds, "not ELF", "notelf.txt", NULL, 3);
	add_kind(_metadata, &self->kinds, "malformed ELF (descsz 21)", "bad-descsz21.elf", NULL, 5);
	add_kind(_metadata, &self->kinds, "private anonymous memory", NULL, NULL, 2)->flags =
		MAP_PRIVATE | MAP_ANONYMOUS;
	add_kind(_metadata, &self->kinds, "shared anonymous memory", NULL, NULL, 2)->flags =
		MAP_SHARED | MAP_ANONYMOUS;
	/* Shared needs a writable fd: read-only, MAP_SHARED maps privately. */
	k = add_kind(_metadata, &self->kinds, "shared /dev/zero (shmem)", NULL, NULL, 2);
	k->flags = MAP_SHARED;
	k->fd = open("/dev/zero", O_RDWR);
	ASSERT_LE(0, k->fd);
	add_kind(_metadata, &self->kinds, "private /dev/zero (a device)", NULL, "/dev/zero", 7);

	/* An ELF file in a memfd: a file, read like any other. */
	k = add_kind(_metadata, &self->kinds, "memfd holding an ELF file", NULL, NULL, 1);
	ASSERT_EQ(0, fixture_get("bid20.elf", &k->fx));
	k->fd = memfd_create("mmap3-kind", 0);
	ASSERT_LE(0, k->fd);
	ASSERT_EQ(0, fill_from("bid20.elf", k->fd));

	/* A file deleted while open. */
	k = add_kind(_metadata, &self->kinds, "file deleted while open", NULL, NULL, 1);
	ASSERT_EQ(0, fixture_get("bid16.elf", &k->fx));
	snprintf(tmp, sizeof(tmp), "%s/mmap3-kind-%d", getenv("TMPDIR") ?: "/tmp", getpid());
	k->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0700);
	ASSERT_LE(0, k->fd) TH_LOG("%s: %s", tmp, strerror(errno));
	unlink(tmp);
	ASSERT_EQ(0, fill_from("bid16.elf", k->fd));

	fd = syscall(__NR_memfd_secret, 0);
	if (fd >= 0 && !ftruncate(fd, 4096)) {
		k = add_kind(_metadata, &self->kinds, "secret memory", NULL, NULL, 7);
		k->fd = fd;
		k->flags = MAP_SHARED;
		k->prot = PROT_WRITE;
		k->data_only = true;
	} else {
		TH_LOG("not covered: secret memory (memfd_secret: %s)", strerror(errno));
		if (fd >= 0)
			close(fd);
	}

	/* Files read from the disk (the page cache dropped): PENDING. */
	if (!no_cold_fixtures()) {
		k = add_kind(_metadata, &self->kinds, "ELF read from the disk", NULL, NULL, 1);
		k->answered = COLD;
		ASSERT_EQ(0, fresh_copy("exec20.elf", &k->fx));
		k->fd = open(k->fx.path, O_RDONLY);
		ASSERT_LE(0, k->fd);
		k = add_kind(_metadata, &self->kinds, "malformed ELF read from the disk",
			     NULL, NULL, 5);
		k->answered = COLD;
		ASSERT_EQ(0, fresh_copy("bad-phoff.elf", &k->fx));
		k->fd = open(k->fx.path, O_RDONLY);
		ASSERT_LE(0, k->fd);
	} else {
		TH_LOG("not covered: files read from the disk (%s)", no_cold_fixtures());
	}
	/* A file whose reads fail. */
	if (!need_root() && !dm_disk_missing()) {
		ASSERT_EQ(0, dm_disk_setup(&self->disk, "mmap3kinds"))
			TH_LOG("%s", strerror(errno));
		self->disk_up = true;
		snprintf(tmp, sizeof(tmp), "%s/nobid.elf", self->disk.mnt);
		add_kind(_metadata, &self->kinds, "file whose reads fail", NULL, tmp, 6)->answered =
			COLD;
	} else {
		TH_LOG("not covered: a file whose reads fail (%s)",
		       need_root() ?: dm_disk_missing());
	}
	ASSERT_EQ(0, drop_page_cache());
	if (self->disk_up)
		ASSERT_EQ(0, dm_disk_fail(&self->disk));

	for (i = 0; i < self->kinds.n; i++) {
		k = &self->kinds.k[i];
		for (p = k->data_only ? 0 : 1; p >= 0; p--) {
			int prot = PROT_READ | (p ? PROT_EXEC : 0) | k->prot;
			struct seen s = { 0 };
			void *m;

			m = mmap(NULL, 4096, prot, k->flags, k->fd, 0);
			ASSERT_NE(MAP_FAILED, m) TH_LOG("%s, %s: %s", k->what, prot_name[p],
							strerror(errno));
			s.addr = (uintptr_t)m;
			ring_drain(&self->r3, collect, &s);
			ring_drain(&self->r2, collect, &s);
			munmap(m, 4096);
			TH_LOG("%-34s %s: %d MMAP3 (%s), %d MMAP2", k->what, prot_name[p], s.n3,
			       s.r3 ? mmap3_status_names[s.r3->build_id_status] : "-", s.n2);
			EXPECT_EQ(1, s.n2);
			ASSERT_EQ(s.n2, s.n3);
			ASSERT_EQ(k->status, s.r3->build_id_status);
			ASSERT_EQ(!p, !!(s.r3->header.misc & PERF_RECORD_MISC_MMAP_DATA));
			ASSERT_EQ(s.r2->header.misc, s.r3->header.misc);
			check_layout(_metadata, s.r3);
			/* The first mapping: the second finds what the first read. */
			if (k->answered == COLD && p == 1)
				check_pending(_metadata, s.r3, true, true);
			if (k->answered == WARM && p == 1)
				check_pending(_metadata, s.r3, false, false);
			if (k->answered == NOT_READ)
				ASSERT_FALSE(mmap3_was_pending(s.r3));
			if (k->status == 1) {
				snprintf(k->fx.path, sizeof(k->fx.path), "%s", s.r3->filename);
				check_build_id(_metadata, s.r3, &k->fx);
			}
			seen_free(&s);
		}
	}
	ASSERT_EQ(0, self->r3.lost + self->r2.lost);
}

/*
 * attr.mmap_data: two mmap3 events on this task, one with it and one
 * without, each with its own ring buffer. A data mapping (PROT_READ, no
 * PROT_EXEC) gets a record with PERF_RECORD_MISC_MMAP_DATA on the first
 * only; an executable mapping gets one on each, without that bit. Whether
 * the module answers from the page cache, reads the file on the way back
 * to user space, or answers from its cache.
 */
FIXTURE(mmap_data) {
	struct ring rings[2];	/* with attr.mmap_data, without */
};

FIXTURE_VARIANT(mmap_data) {
	const char *source;	/* "page cache", "disk" or "build-id cache" */
};

FIXTURE_VARIANT_ADD(mmap_data, page_cache) { .source = "page cache" };
FIXTURE_VARIANT_ADD(mmap_data, read_from_disk) { .source = "disk" };
FIXTURE_VARIANT_ADD(mmap_data, build_id_cache) { .source = "build-id cache" };

FIXTURE_SETUP(mmap_data)
{
	int fd;

	if (strcmp(variant->source, "page cache") && no_cold_fixtures())
		SKIP(return, "%s", no_cold_fixtures());
	fd = open_mmap3(_metadata, 1, 0);
	if (fd < 0)
		return;
	ASSERT_EQ(0, ring_map(&self->rings[0], fd, 16));
	fd = open_mmap3(_metadata, 0, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ring_map(&self->rings[1], fd, 16));
}

FIXTURE_TEARDOWN(mmap_data)
{
	ring_unmap(&self->rings[0]);
	ring_unmap(&self->rings[1]);
	unlink_copies();
}

/* Maps @fx's file with @prot; the records of @rings[0], [1] in @with, @without. */
static void map_both(struct __test_metadata *_metadata, struct ring *rings,
		     const struct fixture *fx, int prot, struct seen *with,
		     struct seen *without)
{
	int fd = open(fx->path, O_RDONLY);
	void *p;

	ASSERT_LE(0, fd);
	p = mmap(NULL, 4096, prot, MAP_PRIVATE, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, p);
	with->addr = (uintptr_t)p;
	without->addr = (uintptr_t)p;
	ring_drain(&rings[0], collect, with);
	ring_drain(&rings[1], collect, without);
	munmap(p, 4096);
}

TEST_F(mmap_data, each_event_gets_what_it_asked_for)
{
	struct seen with[2] = { 0 }, without[2] = { 0 };
	struct fixture fx;
	int i;

	if (!strcmp(variant->source, "page cache")) {
		ASSERT_EQ(0, fixture_get("bid16.elf", &fx));
	} else {
		ASSERT_EQ(0, fresh_copy("bid16.elf", &fx));
		if (!strcmp(variant->source, "build-id cache")) {
			/* Read once, once its ctime is in the past: then cached. */
			struct seen a = { 0 }, b = { 0 };

			sleep(1);
			map_both(_metadata, self->rings, &fx, PROT_READ | PROT_EXEC, &a, &b);
			seen_free(&a);
			seen_free(&b);
		}
		ASSERT_EQ(0, drop_page_cache());
	}
	/* [0]: data, [1]: executable. */
	map_both(_metadata, self->rings, &fx, PROT_READ, &with[0], &without[0]);
	map_both(_metadata, self->rings, &fx, PROT_READ | PROT_EXEC, &with[1], &without[1]);
	TH_LOG("%s, from the %s: with mmap_data %d data + %d exec records, without %d + %d",
	       fx.path, variant->source, with[0].n3, with[1].n3, without[0].n3, without[1].n3);

	ASSERT_EQ(0, without[0].n3) TH_LOG("a data mapping reached an event without mmap_data");
	/*
	 * The first mapping, the data one: PENDING from the disk, at once
	 * from the page cache; from the module's cache at once, but that is
	 * its policy (without it, the page cache was dropped: PENDING).
	 */
	ASSERT_EQ(1, with[0].n3);
	check_pending(_metadata, with[0].r3, strcmp(variant->source, "page cache"),
		      !strcmp(variant->source, "disk"));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, with[i].n3);
		ASSERT_EQ(!i, !!(with[i].r3->header.misc & PERF_RECORD_MISC_MMAP_DATA));
		ASSERT_EQ(i ? PROT_READ | PROT_EXEC : PROT_READ, with[i].r3->prot);
		check_build_id(_metadata, with[i].r3, &fx);
	}
	ASSERT_EQ(1, without[1].n3);
	ASSERT_FALSE(without[1].r3->header.misc & PERF_RECORD_MISC_MMAP_DATA);
	ASSERT_EQ(0, memcmp(with[1].r3, without[1].r3, sizeof(*with[1].r3)))
		TH_LOG("the two events' records of the executable mapping differ");
	check_build_id(_metadata, without[1].r3, &fx);
	ASSERT_EQ(0, self->rings[0].lost + self->rings[1].lost);
	for (i = 0; i < 2; i++) {
		seen_free(&with[i]);
		seen_free(&without[i]);
	}
}

/*
 * With only an mmap3 event without attr.mmap_data, a data mapping of a cold
 * file gives no record, and the file is not read (a lookup under mmap_lock
 * reads nothing; no event took the mapping as PENDING); an executable one
 * gives its record, and the file is read.
 */
TEST(data_mapping_without_mmap_data)
{
	int work0, work1, work2;
	struct seen s = { 0 };
	struct ring ring;
	struct fixture fx;
	int fd, file;
	void *p;

	if (no_cold_fixtures())
		SKIP(return, "%s", no_cold_fixtures());
	fd = open_mmap3(_metadata, 0, 0);
	if (fd < 0)
		return;
	ASSERT_EQ(0, ring_map(&ring, fd, 16));
	ASSERT_EQ(0, fresh_copy("bid20.elf", &fx));
	file = open(fx.path, O_RDONLY);
	unlink_copies();
	ASSERT_LE(0, file);
	ASSERT_EQ(0, drop_page_cache());

	work0 = files_read(&file, 1);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, file, 0);
	ASSERT_NE(MAP_FAILED, p);
	work1 = files_read(&file, 1);
	s.addr = (uintptr_t)p;
	ring_drain(&ring, collect, &s);
	munmap(p, 4096);
	TH_LOG("data mapping: %d records, file read %d -> %d", s.n3, work0, work1);
	ASSERT_EQ(0, s.n3);
	ASSERT_EQ(0, work0);
	ASSERT_EQ(0, work1) TH_LOG("the file of a mapping no event records was read");

	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
	ASSERT_NE(MAP_FAILED, p);
	work2 = files_read(&file, 1);
	s.addr = (uintptr_t)p;
	ring_drain(&ring, collect, &s);
	munmap(p, 4096);
	close(file);
	TH_LOG("executable mapping: %d records, file read %d -> %d", s.n3, work1, work2);
	ASSERT_EQ(1, s.n3);
	ASSERT_EQ(1, work2);
	ASSERT_FALSE(s.r3->header.misc & PERF_RECORD_MISC_MMAP_DATA);
	check_build_id(_metadata, s.r3, &fx);
	check_pending(_metadata, s.r3, true, true);
	seen_free(&s);
	ring_unmap(&ring);
}

TEST_HARNESS_MAIN
