// SPDX-License-Identifier: GPL-2.0
/*
 * Order and destination of deferred PERF_RECORD_MMAP3 records.
 *
 * A record whose build-id must be read from the disk is written after the
 * mapping, on the way back to user space. perf orders records by their
 * time and takes the last record for an address as what is mapped there,
 * and it reads each CPU's buffer for the CPU-wide events of that CPU; so,
 * checked here with a slow disk (a device-mapper delay target) to keep the
 * read going:
 *
 * - threads: T1 maps a cold file at X (its record deferred), T2 then maps
 *   a warm file over X with MAP_FIXED. Ordered by time, the last record
 *   that covers X must be T2's, as it is with MMAP2, written under
 *   mmap_lock: the address space holds T2's file.
 * - migration: a task maps a cold file on CPU 0 and is moved to CPU 1
 *   during the read. The record belongs to CPU 0's CPU-wide events, as
 *   MMAP2's does, and not to CPU 1's, with the task's pid and tid.
 * - fork: T1 maps a cold file at X, T2 then forks. perf gives the child a
 *   copy of its view of the parent's mappings at the PERF_RECORD_FORK, so
 *   that record must come after T1's, or the child, which has T1's file at
 *   X, has nothing there in perf.
 */
#include "mmap3_util.h"
#include "mmap3_dm.h"

#include <pthread.h>
#include <sched.h>

#include "../kselftest_harness.h"
#include "mmap3_test.h"

#define READ_DELAY_MS	500

/* sample_id of side_band_attr(): pid, tid, time, at the end of the record. */
struct sample_id {
	__u32 pid, tid;
	__u64 time;
};

static struct sample_id record_sample_id(const struct perf_event_header *h)
{
	struct sample_id id;

	memcpy(&id, (const char *)h + h->size - sizeof(id), sizeof(id));
	return id;
}

/* MMAP3 records of process @pid that cover [@addr, @addr + @len). */
struct covering {
	pid_t pid;
	__u64 addr, len;
	struct records rs;
};

static void covering_add(const struct perf_event_header *h, void *ctx)
{
	struct covering *c = ctx;
	const struct mmap3_record *r = (const void *)h;

	if (h->type != PERF_RECORD_MMAP3 || r->pid != (__u32)c->pid)
		return;
	if (r->addr >= c->addr + c->len || c->addr >= r->addr + r->len)
		return;
	records_add(h, &c->rs);
}

static int by_time(const void *a, const void *b)
{
	__u64 ta = record_sample_id(*(struct perf_event_header *const *)a).time;
	__u64 tb = record_sample_id(*(struct perf_event_header *const *)b).time;

	return ta < tb ? -1 : ta > tb;
}

static void check_found(struct __test_metadata *_metadata,
			const struct mmap3_record *r, const struct fixture *fx)
{
	ASSERT_STREQ(fx->path, r->filename);
	ASSERT_EQ(1, r->build_id_status)
		TH_LOG("%s: %s", r->filename, status_name(r->build_id_status));
	ASSERT_EQ(fx->build_id_size, r->build_id_size);
	ASSERT_EQ(0, memcmp(fx->build_id, r->build_id, fx->build_id_size));
}

/* Per-CPU side-band events with attr.mmap3 on @pid (-1: CPU-wide). */
struct cpu_rings {
	int n;
	struct ring ring[64];
};

static int cpu_rings_open(struct __test_metadata *_metadata, struct cpu_rings *cr, pid_t pid,
			  int inherit)
{
	struct perf_event_attr attr;
	int i, fd;

	cr->n = sysconf(_SC_NPROCESSORS_ONLN);
	if (cr->n > 64)
		cr->n = 64;
	for (i = 0; i < cr->n; i++) {
		mmap_attr(&attr, true, 0);
		attr.inherit = inherit;
		fd = sys_perf_event_open(&attr, pid, i, -1, 0);
		if (fd < 0)
			return -1;
		if (ring_map(&cr->ring[i], fd, 16))
			return -1;
	}
	return 0;
}

static void cpu_rings_close(struct cpu_rings *cr)
{
	int i;

	for (i = 0; i < cr->n; i++) {
		close(cr->ring[i].fd);
		ring_unmap(&cr->ring[i]);
	}
}

FIXTURE(slow_disk) {
	struct dm_disk disk;
	bool disk_up;
};

FIXTURE_SETUP(slow_disk)
{
	const char *why = need_root() ?: dm_disk_missing();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, dm_disk_setup(&self->disk, "mmap3order"))
		TH_LOG("%s", strerror(errno));
	self->disk_up = true;
}

FIXTURE_TEARDOWN(slow_disk)
{
	if (!self->disk_up)
		return;
	dm_disk_delay(&self->disk, 0);
	dm_disk_teardown(&self->disk);
}

TEST_F_TIMEOUT(slow_disk, map_fixed_over_deferred_mapping, 120)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	struct covering c = { .pid = getpid(), .len = psz };
	struct dm_mapper a = { .len = psz };
	const struct mmap3_record *last;
	struct fixture cold, warm;
	struct cpu_rings cr;
	size_t warm_size;
	uint8_t *bytes;
	pthread_t t1;
	int i, fd2, n;
	void *x;

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
	c.addr = (unsigned long)x;

	ASSERT_EQ(0, drop_page_cache());
	bytes = read_all(warm.path, 1 << 20, &warm_size);	/* warm again */
	ASSERT_NE(NULL, bytes);
	ASSERT_EQ(0, dm_disk_delay(&self->disk, READ_DELAY_MS));
	/* Before the threads: they inherit the events. */
	ASSERT_EQ(0, cpu_rings_open(_metadata, &cr, 0, 1)) TH_LOG("%s", strerror(errno));

	/* T1 sleeps in the read of the slow disk: its mapping is made. */
	ASSERT_EQ(0, dm_mapper_start(&t1, &a))
		TH_LOG("T1 never waited for the disk: no deferred read");
	ASSERT_EQ(0, load_acquire(&a.mapped));
	/* T2 (this thread) maps a warm file over it. */
	ASSERT_EQ(x, mmap(x, psz, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd2, 0));
	ASSERT_EQ(0, pthread_join(t1, NULL));
	ASSERT_EQ(1, a.mapped);
	dm_disk_delay(&self->disk, 0);

	/* The address space holds T2's file. */
	ASSERT_EQ(0, memcmp(x, bytes, warm_size < psz ? warm_size : psz));
	free(bytes);

	for (i = 0; i < cr.n; i++)
		ring_drain(&cr.ring[i], covering_add, &c);
	cpu_rings_close(&cr);
	n = c.rs.n;
	ASSERT_EQ(2, n) TH_LOG("%d MMAP3 records for X, not T1's and T2's", n);
	qsort(c.rs.v, n, sizeof(*c.rs.v), by_time);
	for (i = 0; i < n; i++) {
		const struct mmap3_record *r = (const void *)c.rs.v[i];

		TH_LOG("%llu: tid %u %s", (unsigned long long)record_sample_id(c.rs.v[i]).time,
		       r->tid, r->filename);
	}
	last = (const void *)c.rs.v[n - 1];
	check_found(_metadata, last, &warm);
	ASSERT_EQ((__u32)getpid(), last->tid) TH_LOG("the last record is not T2's");
	check_found(_metadata, (const void *)c.rs.v[0], &cold);

	records_free(&c.rs);
	munmap(x, psz);
	close(a.fd);
	close(fd2);
}

/* The MMAP3 records that cover X, and the PERF_RECORD_FORK of process @pid. */
struct fork_seen {
	struct covering c;
	pid_t pid;
	int n;
	__u64 time;
};

static void fork_find(const struct perf_event_header *h, void *ctx)
{
	struct fork_seen *f = ctx;
	const __u32 *pid = (const void *)(h + 1);	/* pid, ppid, tid, ptid */

	covering_add(h, &f->c);
	if (h->type != PERF_RECORD_FORK || pid[0] != (__u32)f->pid || pid[2] != (__u32)f->pid)
		return;
	f->n++;
	f->time = record_sample_id(h).time;
}

TEST_F_TIMEOUT(slow_disk, fork_after_deferred_mapping, 120)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	struct fork_seen f = { .c = { .pid = getpid(), .len = psz } };
	struct dm_mapper a = { .len = psz };
	struct covering *c = &f.c;
	struct cpu_rings cr;
	struct fixture cold;
	pthread_t t1;
	int i, status;
	__u64 t_map;
	void *x;

	ASSERT_EQ(0, fixture_get("bid16.elf", &cold));
	snprintf(cold.path, sizeof(cold.path), "%s/bid16.elf", self->disk.mnt);
	a.fd = open(cold.path, O_RDONLY);
	ASSERT_LE(0, a.fd);
	x = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	a.at = x;
	c->addr = (unsigned long)x;
	ASSERT_EQ(0, drop_page_cache());
	ASSERT_EQ(0, dm_disk_delay(&self->disk, READ_DELAY_MS));
	ASSERT_EQ(0, cpu_rings_open(_metadata, &cr, 0, 1)) TH_LOG("%s", strerror(errno));

	/* T1 sleeps in the read of the slow disk: its mapping is made. */
	ASSERT_EQ(0, dm_mapper_start(&t1, &a))
		TH_LOG("T1 never waited for the disk: no deferred read");
	/* T2 (this thread) forks while T1's record waits for the read. */
	f.pid = fork();
	ASSERT_LE(0, f.pid);
	if (!f.pid)
		_exit(0);
	ASSERT_EQ(f.pid, waitpid(f.pid, &status, 0));
	ASSERT_EQ(0, pthread_join(t1, NULL));
	ASSERT_EQ(1, a.mapped);
	dm_disk_delay(&self->disk, 0);

	for (i = 0; i < cr.n; i++)
		ring_drain(&cr.ring[i], fork_find, &f);
	cpu_rings_close(&cr);
	ASSERT_EQ(1, c->rs.n) TH_LOG("%d MMAP3 records for X, not T1's", c->rs.n);
	check_found(_metadata, (const void *)c->rs.v[0], &cold);
	ASSERT_EQ(1, f.n) TH_LOG("%d PERF_RECORD_FORK of the child", f.n);
	t_map = record_sample_id(c->rs.v[0]).time;
	TH_LOG("T1's MMAP3 at %llu, the child's FORK at %llu", (unsigned long long)t_map,
	       (unsigned long long)f.time);
	ASSERT_LT(t_map, f.time) TH_LOG("the child's FORK came before T1's mapping it copied");

	records_free(&c->rs);
	munmap(x, psz);
	close(a.fd);
}

TEST_F_TIMEOUT(slow_disk, cpu_wide_event_of_the_mapping_cpu, 120)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	struct covering c[2];
	struct cpu_rings cr;
	struct fixture cold;
	int go[2], status, i, file;
	cpu_set_t set;
	pid_t child;
	char ch;
	void *x;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: nothing to migrate to");
	ASSERT_EQ(0, fixture_get("bid16.elf", &cold));
	snprintf(cold.path, sizeof(cold.path), "%s/bid16.elf", self->disk.mnt);
	file = open(cold.path, O_RDONLY);
	ASSERT_LE(0, file);
	x = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	ASSERT_EQ(0, drop_page_cache());
	ASSERT_EQ(0, dm_disk_delay(&self->disk, READ_DELAY_MS));
	ASSERT_EQ(0, cpu_rings_open(_metadata, &cr, -1, 0)) TH_LOG("%s", strerror(errno));

	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(go[1]);
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(1);
		if (read(go[0], &ch, 1) != 1)
			_exit(2);
		if (mmap(x, psz, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, file, 0) ==
		    MAP_FAILED)
			_exit(3);
		_exit(sched_getcpu() == 1 ? 0 : 4);
	}
	close(go[0]);
	ASSERT_EQ(1, write(go[1], "x", 1));
	/* Once it sleeps in the read, it may only run on CPU 1. */
	for (i = 0; i < 20000 && task_state(child) != 'D'; i++)
		usleep(100);
	ASSERT_GT(20000, i) TH_LOG("the child never waited for the disk");
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	ASSERT_EQ(0, sched_setaffinity(child, sizeof(set), &set));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child did not end on CPU 1");
	dm_disk_delay(&self->disk, 0);

	for (i = 0; i < 2; i++) {
		c[i] = (struct covering){ .pid = child, .addr = (unsigned long)x, .len = psz };
		ring_drain(&cr.ring[i], covering_add, &c[i]);
	}
	cpu_rings_close(&cr);
	TH_LOG("records: %d for CPU 0's events, %d for CPU 1's", c[0].rs.n, c[1].rs.n);
	ASSERT_EQ(1, c[0].rs.n) TH_LOG("CPU 0's CPU-wide event lost the mapping made there");
	ASSERT_EQ(0, c[1].rs.n) TH_LOG("CPU 1's CPU-wide event got a mapping made on CPU 0");
	check_found(_metadata, (const void *)c[0].rs.v[0], &cold);
	ASSERT_EQ((__u32)child, ((const struct mmap3_record *)c[0].rs.v[0])->tid);
	ASSERT_EQ((__u32)child, record_sample_id(c[0].rs.v[0]).tid);

	records_free(&c[0].rs);
	munmap(x, psz);
	close(file);
}

TEST_HARNESS_MAIN
