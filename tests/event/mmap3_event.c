// SPDX-License-Identifier: GPL-2.0
/*
 * The trace event mmap3:build_id (DESIGN.md, "The build-id trace event"),
 * read from a tracefs instance of the test's own, on any kernel the module
 * loads on, with the series or without it:
 *
 * - matches_mmap2: the test maps the fixtures, from the cold disk (after
 *   drop_caches) and warm, with an MMAP2 side-band perf event open on
 *   itself. Each MMAP2 record has exactly one event, with the same pid,
 *   tid, address, length, offset, device, inode, generation, protection,
 *   flags and name, in the same order, in increasing time, with the
 *   build-id and status of MANIFEST (fixtures.py, from readelf -n).
 * - map_fixed_over_deferred_mapping: T1 maps a cold file at X from a slow
 *   disk (its read deferred), T2 maps a warm file over X with MAP_FIXED
 *   meanwhile. Ordered by time, the last event for X is T2's, with the
 *   warm file's build-id, as the address space says; T1's has the cold
 *   file's.
 * - exit_during_deferred_read: a child's thread maps cold files from a
 *   slow disk, one after another, and its process exits while the thread
 *   waits for a read. Each mapping that was made has exactly one event,
 *   with MANIFEST's build-id or SKIPPED (the task never returned to user
 *   space: nothing was read); none says IO_ERROR.
 *
 * - mmap3_attr: perf_event_open() with attr.mmap3 succeeds where the
 *   kernel has the series (its perf_mmap3_lookup() in /proc/kallsyms)
 *   and fails with EINVAL, the kernel's answer to an unknown attribute
 *   bit, where it has not, the module loaded either way.
 *
 * Skipped when the event is not there (the module is not loaded). Built
 * with the kselftest harness, beside tests/kselftest/ whose helpers it uses.
 */
#include "../kselftest/mmap3_util.h"
#include "../kselftest/mmap3_dm.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"

#define TRACEFS		"/sys/kernel/tracing"
#define EVENT_DIR	TRACEFS "/events/mmap3/build_id"
#define INSTANCE	TRACEFS "/instances/mmap3_event"
#define ENABLE		INSTANCE "/events/mmap3/build_id/enable"
#define READ_DELAY_MS	300

/* One event, from its printed line (DESIGN.md's tokens, in order). */
struct event {
	unsigned int pid, tid, maj, min, prot, flags;
	unsigned long long addr, len, pgoff, ino, gen, time;
	char status[16];
	char build_id[2 * BUILD_ID_SIZE_MAX + 1];
	char file[PATH_MAX];
};

struct events {
	struct event *v;
	int n;
};

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Parses one line of the instance's trace: 0, or -1 if not an event's. */
static int event_parse(const char *line, struct event *e)
{
	const char *p = strstr(line, "build_id: pid=");
	int end = -1;

	if (!p)
		return -1;
	if (sscanf(p + strlen("build_id: "),
		   "pid=%u tid=%u addr=0x%llx len=0x%llx pgoff=0x%llx dev=%u:%u ino=%llu gen=%llu prot=0x%x flags=0x%x status=%15s build_id=%40s time=%llu file=%n",
		   &e->pid, &e->tid, &e->addr, &e->len, &e->pgoff, &e->maj, &e->min, &e->ino,
		   &e->gen, &e->prot, &e->flags, e->status, e->build_id, &e->time, &end) != 14 ||
	    end < 0)
		return -1;
	p += strlen("build_id: ") + end;
	snprintf(e->file, sizeof(e->file), "%.*s", (int)strcspn(p, "\n"), p);
	return 0;
}

/* Stops the instance's event and reads what it gave, of process @pid. */
static int events_read(struct events *evs, pid_t pid)
{
	char line[PATH_MAX + 512];
	struct event e;
	FILE *fp;

	if (write_str(ENABLE, "0"))
		return -1;
	fp = fopen(INSTANCE "/trace", "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (event_parse(line, &e) || e.pid != (unsigned int)pid)
			continue;
		evs->v = realloc(evs->v, (evs->n + 1) * sizeof(*evs->v));
		if (!evs->v)
			break;
		evs->v[evs->n++] = e;
	}
	fclose(fp);
	return evs->v || !evs->n ? 0 : -1;
}

/* The expected build-id and status of a fixture, as the event prints them. */
static void fixture_want(const struct fixture *f, char *id, char *status)
{
	if (f->build_id_size)
		build_id_hex(f->build_id, f->build_id_size, id);
	else
		snprintf(id, 2, "-");
	snprintf(status, sizeof(f->status), "%s", f->status);
}

FIXTURE(event) {
	struct events evs;
	struct dm_disk disk;
	bool disk_up;
};

FIXTURE_SETUP(event)
{
	memset(self, 0, sizeof(*self));
	if (access(EVENT_DIR, F_OK))
		SKIP(return, "no event mmap3:build_id (insmod mmap3.ko)");
	rmdir(INSTANCE);	/* what a failed run left */
	ASSERT_EQ(0, mkdir(INSTANCE, 0755)) TH_LOG("%s: %s", INSTANCE, strerror(errno));
	ASSERT_EQ(0, write_str(INSTANCE "/buffer_size_kb", "4096"));
	ASSERT_EQ(0, write_str(ENABLE, "1")) TH_LOG("enable: %s", strerror(errno));
}

FIXTURE_TEARDOWN(event)
{
	if (self->disk_up) {
		dm_disk_delay(&self->disk, 0);
		dm_disk_teardown(&self->disk);
	}
	write_str(ENABLE, "0");
	rmdir(INSTANCE);
	free(self->evs.v);
}

/* The slow disk of the tests that need a read to take a while. */
static int slow_disk_up(struct __test_metadata *_metadata, FIXTURE_DATA(event) *self)
{
	const char *missing = dm_disk_missing();

	if (missing) {
		TH_LOG("%s", missing);
		return -1;
	}
	if (dm_disk_setup(&self->disk, "mmap3_event"))
		return -1;
	self->disk_up = true;
	return 0;
}

/* MMAP2 records of the calling thread, kept for comparison. */
struct mmap2s {
	pid_t tid;
	struct mmap2_record *v[64];
	int n;
};

static void mmap2_keep(const struct perf_event_header *h, void *ctx)
{
	struct mmap2s *m = ctx;
	const struct mmap2_record *r = (const void *)h;

	if (h->type != PERF_RECORD_MMAP2 || r->tid != (__u32)m->tid || m->n == ARRAY_SIZE(m->v))
		return;
	m->v[m->n] = malloc(h->size);
	if (m->v[m->n])
		memcpy(m->v[m->n++], h, h->size);
}

TEST_F_TIMEOUT(event, matches_mmap2, 120)
{
	static const char *const names[] = {
		"bid20.elf", "bid16.elf", "nobid.elf", "exec20.elf", "latenote.elf",
		"farnote.elf",
	};
	const char *const dirs[] = { fixtures_cold(), fixtures_warm() };
	char want_id[2 * BUILD_ID_SIZE_MAX + 1], want_status[32];
	struct mmap2s m = { .tid = gettid() };
	struct perf_event_attr attr;
	void *maps[2 * ARRAY_SIZE(names)];
	size_t len[ARRAY_SIZE(maps)];
	int d, i, j, nmaps = 0, fd;
	struct ring ring;
	const char *skip;

	if (access(fixture_path(fixtures_cold(), "MANIFEST"), F_OK))
		SKIP(return, "no cold fixtures in %s", fixtures_cold());
	side_band_attr(&attr);
	attr.mmap = 1;
	attr.mmap2 = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	skip = fd < 0 ? perf_open_skip(errno, false) : NULL;
	if (skip)
		SKIP(return, "%s", skip);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(0, ring_map(&ring, fd, 64));

	ASSERT_EQ(0, drop_page_cache());
	for (d = 0; d < 2; d++) {
		for (i = 0; i < (int)ARRAY_SIZE(names); i++) {
			struct fixture f;
			struct stat st;
			int file;

			ASSERT_EQ(0, fixture_get_in(dirs[d], names[i], &f)) TH_LOG("%s", names[i]);
			file = open(f.path, O_RDONLY);
			ASSERT_LE(0, file);
			ASSERT_EQ(0, fstat(file, &st));
			len[nmaps] = st.st_size;
			maps[nmaps] = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
			ASSERT_NE(MAP_FAILED, maps[nmaps]);
			nmaps++;
			close(file);
		}
	}
	ring_drain(&ring, mmap2_keep, &m);
	ASSERT_EQ(0, ring.lost);
	ring_unmap(&ring);
	ASSERT_EQ(0, events_read(&self->evs, getpid()));
	ASSERT_EQ(nmaps, m.n) TH_LOG("%d mappings, %d MMAP2 records", nmaps, m.n);

	/* Each MMAP2 record, in order: the next event of this thread for it. */
	for (i = 0, j = 0; i < m.n; i++) {
		const struct mmap2_record *r = m.v[i];
		const struct event *e = NULL;
		struct fixture f;

		for (; j < self->evs.n; j++) {
			if (self->evs.v[j].tid == r->tid && self->evs.v[j].addr == r->addr) {
				e = &self->evs.v[j++];
				break;
			}
		}
		ASSERT_NE(NULL, e) TH_LOG("no event, in order, for MMAP2 %s at %#llx", r->filename,
					  (unsigned long long)r->addr);
		EXPECT_EQ(r->len, e->len);
		EXPECT_EQ(r->pgoff, e->pgoff);
		EXPECT_EQ(r->maj, e->maj);
		EXPECT_EQ(r->min, e->min);
		EXPECT_EQ(r->ino, e->ino);
		EXPECT_EQ(r->ino_generation, e->gen);
		EXPECT_EQ(r->prot, e->prot);
		EXPECT_EQ(r->flags, e->flags);
		EXPECT_STREQ(r->filename, e->file);
		ASSERT_EQ(0, fixture_get_in(i < (int)ARRAY_SIZE(names) ? dirs[0] : dirs[1],
					    strrchr(r->filename, '/') + 1, &f));
		fixture_want(&f, want_id, want_status);
		EXPECT_STREQ(want_id, e->build_id) TH_LOG("%s", e->file);
		EXPECT_STREQ(want_status, e->status) TH_LOG("%s", e->file);
		if (e > self->evs.v)
			EXPECT_LE(e[-1].time, e->time) TH_LOG("%s: time goes back", e->file);
	}
	/* And no other event for these addresses. */
	for (j = 0, d = 0; j < self->evs.n; j++)
		for (i = 0; i < nmaps; i++)
			d += self->evs.v[j].addr == (unsigned long)maps[i];
	EXPECT_EQ(nmaps, d) TH_LOG("%d events for %d mappings", d, nmaps);

	for (i = 0; i < nmaps; i++)
		munmap(maps[i], len[i]);
	for (i = 0; i < m.n; i++)
		free(m.v[i]);
	close(fd);
}

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

TEST_F_TIMEOUT(event, map_fixed_over_deferred_mapping, 120)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	char want_id[2 * BUILD_ID_SIZE_MAX + 1], want_status[32];
	struct dm_mapper a = { .len = psz };
	struct fixture cold, warm;
	struct event x_ev[4];
	uint8_t *bytes;
	size_t warm_size;
	pthread_t t1;
	int i, n, fd2;
	void *x;

	if (slow_disk_up(_metadata, self))
		SKIP(return, "no slow disk");
	ASSERT_EQ(0, fixture_get("bid16.elf", &cold));
	snprintf(cold.path, sizeof(cold.path), "%s/bid16.elf", self->disk.mnt);
	ASSERT_EQ(0, fixture_get("bid20.elf", &warm));
	a.fd = open(cold.path, O_RDONLY);	/* the inode stays in memory */
	ASSERT_LE(0, a.fd);
	fd2 = open(warm.path, O_RDONLY);
	ASSERT_LE(0, fd2);
	x = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	a.at = x;

	ASSERT_EQ(0, drop_page_cache());
	bytes = read_all(warm.path, 1 << 20, &warm_size);	/* warm again */
	ASSERT_NE(NULL, bytes);
	ASSERT_EQ(0, dm_disk_delay(&self->disk, READ_DELAY_MS));

	/* T1 sleeps in the read of the slow disk: its mapping is made. */
	ASSERT_EQ(0, dm_mapper_start(&t1, &a)) TH_LOG("T1 never waited for the disk: no deferred read");
	ASSERT_EQ(0, load_acquire(&a.mapped));
	/* T2 (this thread) maps a warm file over it. */
	ASSERT_EQ(x, mmap(x, psz, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd2, 0));
	ASSERT_EQ(0, pthread_join(t1, NULL));
	ASSERT_EQ(1, a.mapped);
	dm_disk_delay(&self->disk, 0);
	/* The address space holds T2's file. */
	ASSERT_EQ(0, memcmp(x, bytes, warm_size < psz ? warm_size : psz));
	free(bytes);

	ASSERT_EQ(0, events_read(&self->evs, getpid()));
	for (i = 0, n = 0; i < self->evs.n; i++) {
		if (self->evs.v[i].addr != (unsigned long)x)
			continue;
		ASSERT_GT(ARRAY_SIZE(x_ev), n);
		x_ev[n++] = self->evs.v[i];
	}
	ASSERT_EQ(2, n) TH_LOG("%d events for X, not T1's and T2's", n);
	qsort(x_ev, n, sizeof(*x_ev), by_time);
	for (i = 0; i < n; i++)
		TH_LOG("%llu: tid %u %s %s %s", x_ev[i].time, x_ev[i].tid, x_ev[i].status,
		       x_ev[i].build_id, x_ev[i].file);
	ASSERT_EQ((unsigned int)a.tid, x_ev[0].tid);
	fixture_want(&cold, want_id, want_status);
	EXPECT_STREQ(want_id, x_ev[0].build_id);
	EXPECT_STREQ(cold.path, x_ev[0].file);
	ASSERT_EQ((unsigned int)gettid(), x_ev[1].tid) TH_LOG("the last event for X is not T2's");
	fixture_want(&warm, want_id, want_status);
	EXPECT_STREQ(want_id, x_ev[1].build_id);
	EXPECT_STREQ(warm.path, x_ev[1].file);

	munmap(x, psz);
	close(a.fd);
	close(fd2);
}

/* What the child of exit_during_deferred_read shares with the test. */
struct mapper {
	char dir[PATH_MAX];
	int tid;
	int started;	/* mmap() calls begun */
	int returned;	/* mmap() calls that returned */
};

static const char *const cold_names[] = {
	"bid20.elf", "bid16.elf", "exec20.elf", "latenote.elf", "farnote.elf",
};

static void *mapper_loop(void *arg)
{
	struct mapper *m = arg;
	int fds[ARRAY_SIZE(cold_names)];
	int i;

	/* Their inodes read first: the thread waits for nothing but the reads. */
	for (i = 0; i < (int)ARRAY_SIZE(cold_names); i++) {
		fds[i] = open(fixture_path(m->dir, cold_names[i]), O_RDONLY);
		if (fds[i] < 0)
			return NULL;
	}
	store_release(&m->tid, gettid());
	for (i = 0;; i = (i + 1) % ARRAY_SIZE(cold_names)) {
		__atomic_add_fetch(&m->started, 1, __ATOMIC_RELEASE);
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fds[i], 0) == MAP_FAILED)
			break;
		__atomic_add_fetch(&m->returned, 1, __ATOMIC_RELEASE);
		/* Cold again: the file's next mapping is read from the disk too. */
		posix_fadvise(fds[i], 0, 0, POSIX_FADV_DONTNEED);
	}
	return NULL;
}

TEST_F_TIMEOUT(event, exit_during_deferred_read, 120)
{
	char want_id[2 * BUILD_ID_SIZE_MAX + 1], want_status[32];
	int i, status, skipped = 0, found = 0, mapped;
	struct mapper *m;
	pid_t child;

	if (slow_disk_up(_metadata, self))
		SKIP(return, "no slow disk");
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0, sizeof(*m));
	snprintf(m->dir, sizeof(m->dir), "%s", self->disk.mnt);
	ASSERT_EQ(0, drop_page_cache());
	ASSERT_EQ(0, dm_disk_delay(&self->disk, READ_DELAY_MS));

	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		pthread_t t;

		if (pthread_create(&t, NULL, mapper_loop, m))
			_exit(1);
		/* The process exits while its thread waits for a read. */
		while (load_acquire(&m->returned) < 2 || dm_wait_read(&m->tid))
			usleep(1000);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	dm_disk_delay(&self->disk, 0);

	ASSERT_EQ(0, events_read(&self->evs, child));
	mapped = load_acquire(&m->started);
	TH_LOG("%d mmap() calls begun, %d returned, %d events", mapped,
	       load_acquire(&m->returned), self->evs.n);
	/* Every mapping begun was made (none failed): one event each. */
	for (i = 0; i < self->evs.n; i++) {
		const struct event *e = &self->evs.v[i];
		const char *name = strrchr(e->file, '/');
		struct fixture f;

		if (!name || strncmp(e->file, m->dir, strlen(m->dir)))
			continue;	/* the child's own mappings: libc, vDSO */
		ASSERT_EQ(0, fixture_get_in(m->dir, name + 1, &f));
		fixture_want(&f, want_id, want_status);
		if (!strcmp(e->status, "SKIPPED")) {
			EXPECT_STREQ("-", e->build_id);
			skipped++;
		} else {
			EXPECT_STREQ(want_status, e->status) TH_LOG("%s", e->file);
			EXPECT_STREQ(want_id, e->build_id) TH_LOG("%s", e->file);
			found++;
		}
		EXPECT_EQ((unsigned int)m->tid, e->tid);
	}
	TH_LOG("%d FOUND, %d SKIPPED", found, skipped);
	EXPECT_EQ(mapped, found + skipped);
	EXPECT_LE(load_acquire(&m->returned), found);
	munmap(m, sizeof(*m));
}

/* Whether /proc/kallsyms names @sym (a function of the kernel itself). */
static bool kernel_has(const char *sym)
{
	char line[512], name[256];
	bool found = false;
	FILE *fp = fopen("/proc/kallsyms", "r");

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp))
		found = sscanf(line, "%*s %*s %255s", name) == 1 && !strcmp(name, sym);
	fclose(fp);
	return found;
}

/*
 * attr.mmap3, bit 40 of the flags word that follows read_format (DESIGN.md,
 * "ABI"), set by hand: this test builds with any kernel's headers.
 */
static void set_attr_mmap3(struct perf_event_attr *attr)
{
	__u64 flags;
	char *word = (char *)&attr->read_format + sizeof(attr->read_format);

	memcpy(&flags, word, sizeof(flags));
	flags |= 1ULL << 40;
	memcpy(word, &flags, sizeof(flags));
}

TEST_F(event, mmap3_attr)
{
	bool series = kernel_has("perf_mmap3_lookup");
	struct perf_event_attr attr;
	int fd;

	if (access("/proc/kallsyms", R_OK) || !kernel_has("perf_event_mmap"))
		SKIP(return, "no /proc/kallsyms to tell the kernel's series by");
	side_band_attr(&attr);
	set_attr_mmap3(&attr);
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	TH_LOG("series: %s; attr.mmap3: %s", series ? "yes" : "no", fd < 0 ? strerror(errno) : "opened");
	if (series) {
		ASSERT_LE(0, fd);
		close(fd);
	} else {
		ASSERT_EQ(-1, fd);
		ASSERT_EQ(EINVAL, errno);
	}
}

TEST_HARNESS_MAIN
