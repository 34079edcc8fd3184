// SPDX-License-Identifier: GPL-2.0
/*
 * Order and destination of PERF_RECORD_MMAP3 records whose build-id is read
 * from the disk.
 *
 * The MMAP3 record is written at mapping time, in MMAP2's place, PENDING;
 * the mapping task reads the file on its way back to user space and then
 * writes the answer, PERF_RECORD_MMAP3_BUILD_ID, to its own events and to
 * the CPU-wide events of the CPU it then runs on. No task waits for
 * another one. Checked here with a slow disk (a device-mapper delay
 * target) that keeps the read going:
 *
 * - threads: T1 maps a cold file at X and reads it, T2 then maps a warm
 *   file over X with MAP_FIXED, and returns before T1's read ends. Ordered
 *   by time, the last record that covers X is T2's, as with MMAP2: the
 *   address space holds T2's file; T1's answer comes after it.
 * - fork: T1 maps a cold file and reads it, T2 forks: fork() returns while
 *   T1 still reads, and the PERF_RECORD_FORK comes between T1's MMAP3
 *   record and its answer.
 * - migration: a task maps a cold file on CPU 0 and is moved to CPU 1
 *   during the read. CPU 0's CPU-wide event has the PENDING record and no
 *   answer, CPU 1's has the answer and no MMAP3 record: both as the uapi
 *   allows a CPU-wide event.
 */
#include "mmap3_util.h"
#include "mmap3_dm.h"

#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>

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

/*
 * The MMAP3 records and the answers of process @pid that cover [@addr,
 * @addr + @len): pid, tid, addr and len are at the same offsets in both.
 */
struct covering {
	pid_t pid;
	__u64 addr, len;
	struct records rs;
};

static void covering_add(const struct perf_event_header *h, void *ctx)
{
	struct covering *c = ctx;
	const struct mmap3_record *r = (const void *)h;

	if ((h->type != PERF_RECORD_MMAP3 && h->type != PERF_RECORD_MMAP3_BUILD_ID) ||
	    r->pid != (__u32)c->pid)
		return;
	if (r->addr >= c->addr + c->len || c->addr >= r->addr + r->len)
		return;
	records_add(h, &c->rs);
}

/* The @i-th record of @c of type @type, or NULL. */
static const void *covering_nth(const struct covering *c, __u32 type, int i)
{
	int j;

	for (j = 0; j < c->rs.n; j++)
		if (c->rs.v[j]->type == type && !i--)
			return c->rs.v[j];
	return NULL;
}

static int covering_count(const struct covering *c, __u32 type)
{
	int j, n = 0;

	for (j = 0; j < c->rs.n; j++)
		n += c->rs.v[j]->type == type;
	return n;
}

static void covering_log(struct __test_metadata *_metadata, const struct covering *c)
{
	int i;

	for (i = 0; i < c->rs.n; i++) {
		const struct mmap3_answer *a = (const void *)c->rs.v[i];
		const struct mmap3_record *r = (const void *)c->rs.v[i];
		bool answer = c->rs.v[i]->type == PERF_RECORD_MMAP3_BUILD_ID;

		TH_LOG("%llu: tid %u %s %s", (unsigned long long)record_time(c->rs.v[i]), r->tid,
		       answer ? "MMAP3_BUILD_ID" : r->filename,
		       status_name(answer ? a->build_id_status : r->build_id_status));
	}
}

/* The build-id of @fx in @r, a record or an answer (the same fields). */
static void check_found(struct __test_metadata *_metadata, __u8 status, __u8 size,
			const __u8 *id, const struct fixture *fx)
{
	ASSERT_EQ(PERF_MMAP3_BUILD_ID_FOUND, status)
		TH_LOG("%s: %s", fx->path, status_name(status));
	ASSERT_EQ(fx->build_id_size, size);
	ASSERT_EQ(0, memcmp(fx->build_id, id, fx->build_id_size));
}

/*
 * Per-CPU side-band events with attr.mmap3 on this task and the threads
 * and children it makes after, read as one stream (struct ring_set).
 */
static int cpu_rings_open(struct __test_metadata *_metadata, struct ring_set *rings)
{
	struct perf_event_attr attr;
	int i, fd, n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(rings, 0, sizeof(*rings));
	for (i = 0; i < n && i < RING_SET_MAX; i++) {
		mmap_attr(&attr, true, 0);
		attr.inherit = 1;
		attr.task = 1;
		fd = sys_perf_event_open(&attr, 0, i, -1, 0);
		if (fd < 0 || ring_map(&rings->ring[i], fd, 16))
			return -1;
		rings->n++;
	}
	return 0;
}

FIXTURE(slow_disk) {
	struct dm_disk disk;
	bool disk_up;
	struct fixture cold;
	struct ring_set rings;
};

FIXTURE_SETUP(slow_disk)
{
	const char *why = need_root() ?: dm_disk_missing();

	if (why)
		SKIP(return, "%s", why);
	if (!require_mmap3(_metadata))
		return;
	ASSERT_EQ(0, dm_disk_setup(&self->disk, "mmap3order"))
		TH_LOG("%s", strerror(errno));
	self->disk_up = true;
	ASSERT_EQ(0, fixture_get("bid16.elf", &self->cold));
	snprintf(self->cold.path, sizeof(self->cold.path), "%s/bid16.elf", self->disk.mnt);
}

FIXTURE_TEARDOWN(slow_disk)
{
	rings_unmap(&self->rings);
	if (!self->disk_up)
		return;
	dm_disk_delay(&self->disk, 0);
	dm_disk_teardown(&self->disk);
}

TEST_F_TIMEOUT(slow_disk, map_fixed_over_pending_mapping, 120)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	struct covering c = { .pid = getpid(), .len = psz };
	struct dm_mapper a = { .len = psz };
	const struct mmap3_record *t1, *t2;
	const struct mmap3_answer *answer;
	struct fixture warm;
	__u64 t2_returned;
	size_t warm_size;
	uint8_t *bytes;
	pthread_t thread;
	int fd2;
	void *x;

	ASSERT_EQ(0, fixture_get("bid20.elf", &warm));
	a.fd = open(self->cold.path, O_RDONLY);	/* the inode stays in memory */
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
	ASSERT_EQ(0, cpu_rings_open(_metadata, &self->rings)) TH_LOG("%s", strerror(errno));

	/* T1 sleeps in the read of the slow disk: its mapping is made. */
	ASSERT_EQ(0, dm_mapper_start(&thread, &a))
		TH_LOG("T1 never waited for the disk: nothing read on its way back");
	ASSERT_EQ(0, load_acquire(&a.mapped));
	/* T2 (this thread) maps a warm file over it, and does not wait for T1. */
	ASSERT_EQ(x, mmap(x, psz, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd2, 0));
	t2_returned = now_ns();
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(1, a.mapped);
	dm_disk_delay(&self->disk, 0);
	TH_LOG("T2's mmap() returned %.1f ms before T1's", (a.returned - t2_returned) / 1e6);
	ASSERT_LT(t2_returned, a.returned) TH_LOG("T2's mapping waited for T1's read");

	/* The address space holds T2's file. */
	ASSERT_EQ(0, memcmp(x, bytes, warm_size < psz ? warm_size : psz));
	free(bytes);

	/* In time order (struct ring_set). */
	rings_flush(&self->rings, covering_add, &c);
	covering_log(_metadata, &c);
	ASSERT_EQ(2, covering_count(&c, PERF_RECORD_MMAP3))
		TH_LOG("not T1's and T2's MMAP3 records for X");
	ASSERT_EQ(1, covering_count(&c, PERF_RECORD_MMAP3_BUILD_ID))
		TH_LOG("not T1's answer alone");
	t1 = covering_nth(&c, PERF_RECORD_MMAP3, 0);
	t2 = covering_nth(&c, PERF_RECORD_MMAP3, 1);
	answer = covering_nth(&c, PERF_RECORD_MMAP3_BUILD_ID, 0);
	ASSERT_EQ((__u32)a.tid, t1->tid);
	ASSERT_TRUE(mmap3_was_pending(t1));
	check_found(_metadata, t1->build_id_status, t1->build_id_size, t1->build_id, &self->cold);
	ASSERT_EQ((__u32)gettid(), t2->tid) TH_LOG("the last record is not T2's");
	check_found(_metadata, t2->build_id_status, t2->build_id_size, t2->build_id, &warm);
	check_pending(_metadata, t2, false, false);
	ASSERT_LT(record_time(&t2->header), record_time(&answer->header))
		TH_LOG("T1's answer came before T2 mapped X");

	records_free(&c.rs);
	munmap(x, psz);
	close(a.fd);
	close(fd2);
}

/* The PERF_RECORD_FORK of process @pid, and the records that cover X. */
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

/*
 * T2 forks while T1 reads the build-id of its mapping: fork() copies the
 * address space at once, T1's pending read takes no lock it needs. fork()
 * takes less than half the disk's delay, and returns before T1's mmap()
 * does.
 */
TEST_F_TIMEOUT(slow_disk, fork_does_not_wait_for_pending_read, 120)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	struct fork_seen f = { .c = { .pid = getpid(), .len = psz } };
	struct dm_mapper a = { .len = psz };
	const struct mmap3_answer *answer;
	const struct mmap3_record *t1;
	__u64 fork_start, fork_end;
	pthread_t thread;
	int status;
	void *x;

	a.fd = open(self->cold.path, O_RDONLY);
	ASSERT_LE(0, a.fd);
	x = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	a.at = x;
	f.c.addr = (unsigned long)x;
	ASSERT_EQ(0, drop_page_cache());
	ASSERT_EQ(0, dm_disk_delay(&self->disk, READ_DELAY_MS));
	ASSERT_EQ(0, cpu_rings_open(_metadata, &self->rings)) TH_LOG("%s", strerror(errno));

	/* T1 sleeps in the read of the slow disk: its mapping is made. */
	ASSERT_EQ(0, dm_mapper_start(&thread, &a))
		TH_LOG("T1 never waited for the disk: nothing read on its way back");
	/*
	 * T1's MMAP3 record is written, PENDING, while T1 reads: two rounds
	 * give it to the reader (struct ring_set), which holds it.
	 */
	rings_drain(&self->rings, NULL, NULL);
	rings_drain(&self->rings, NULL, NULL);
	ASSERT_EQ(1, self->rings.rd.pending);
	ASSERT_EQ(0, self->rings.rd.answered);
	/* T2 (this thread) forks while T1's read is pending. */
	fork_start = now_ns();
	f.pid = fork();
	if (!f.pid)
		_exit(0);
	fork_end = now_ns();
	ASSERT_LE(0, f.pid);
	ASSERT_EQ(0, load_acquire(&a.mapped)) TH_LOG("T1's read ended before fork() returned");
	ASSERT_EQ(f.pid, waitpid(f.pid, &status, 0));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(1, a.mapped);
	dm_disk_delay(&self->disk, 0);
	TH_LOG("fork() took %.1f ms, and returned %.1f ms before T1's mmap(); the delay: %d ms",
	       (fork_end - fork_start) / 1e6, (a.returned - fork_end) / 1e6, READ_DELAY_MS);
	ASSERT_LT(fork_end, a.returned);
	ASSERT_GT(READ_DELAY_MS * 1000000ULL / 2, fork_end - fork_start)
		TH_LOG("fork() took as long as a read of the disk");

	rings_flush(&self->rings, fork_find, &f);
	covering_log(_metadata, &f.c);
	ASSERT_EQ(1, covering_count(&f.c, PERF_RECORD_MMAP3)) TH_LOG("not T1's record alone");
	ASSERT_EQ(1, covering_count(&f.c, PERF_RECORD_MMAP3_BUILD_ID));
	t1 = covering_nth(&f.c, PERF_RECORD_MMAP3, 0);
	answer = covering_nth(&f.c, PERF_RECORD_MMAP3_BUILD_ID, 0);
	ASSERT_TRUE(mmap3_was_pending(t1));
	check_found(_metadata, t1->build_id_status, t1->build_id_size, t1->build_id, &self->cold);
	ASSERT_EQ(1, f.n) TH_LOG("%d PERF_RECORD_FORK of the child", f.n);
	TH_LOG("T1's MMAP3 at %llu, the child's FORK at %llu, T1's answer at %llu",
	       (unsigned long long)record_time(&t1->header), (unsigned long long)f.time,
	       (unsigned long long)record_time(&answer->header));
	ASSERT_LT(record_time(&t1->header), f.time);
	ASSERT_LT(f.time, record_time(&answer->header));

	records_free(&f.c.rs);
	munmap(x, psz);
	close(a.fd);
}

/*
 * A task maps a cold file on CPU 0, and is moved to CPU 1 while it reads
 * it. Each CPU's CPU-wide event is read alone, as a consumer of that CPU
 * would: CPU 0's has the MMAP3 record, PENDING, with no answer; CPU 1's
 * has the answer, with the file's build-id, and no MMAP3 record.
 */
TEST_F_TIMEOUT(slow_disk, cpu_wide_answer_where_the_task_runs, 120)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	const struct mmap3_answer *answer;
	struct perf_event_attr attr;
	const struct mmap3_record *r;
	int go[2], status, i, file, fd;
	struct covering c[2];
	struct ring ring[2];
	cpu_set_t set;
	pid_t child;
	char ch;
	void *x;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: nothing to migrate to");
	file = open(self->cold.path, O_RDONLY);
	ASSERT_LE(0, file);
	x = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	ASSERT_EQ(0, drop_page_cache());
	ASSERT_EQ(0, dm_disk_delay(&self->disk, READ_DELAY_MS));
	for (i = 0; i < 2; i++) {
		mmap_attr(&attr, true, 0);
		fd = open_event(_metadata, &attr, -1, i);
		if (fd < 0)
			return;
		ASSERT_EQ(0, ring_map(&ring[i], fd, 16));
		ring[i].rd.cpu_wide = true;
	}

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
		ring_flush(&ring[i], covering_add, &c[i]);
		TH_LOG("CPU %d: %d MMAP3 records, %d answers; %llu PENDING unanswered, %llu answers without their MMAP3 record",
		       i, covering_count(&c[i], PERF_RECORD_MMAP3),
		       covering_count(&c[i], PERF_RECORD_MMAP3_BUILD_ID),
		       (unsigned long long)ring[i].rd.unanswered,
		       (unsigned long long)ring[i].rd.orphans);
	}
	ASSERT_EQ(1, covering_count(&c[0], PERF_RECORD_MMAP3))
		TH_LOG("CPU 0's CPU-wide event lost the mapping made there");
	ASSERT_EQ(0, covering_count(&c[0], PERF_RECORD_MMAP3_BUILD_ID))
		TH_LOG("CPU 0's CPU-wide event got the answer written on CPU 1");
	r = covering_nth(&c[0], PERF_RECORD_MMAP3, 0);
	ASSERT_EQ(PERF_MMAP3_BUILD_ID_PENDING, r->build_id_status);
	ASSERT_EQ((__u32)child, r->tid);
	ASSERT_EQ((__u32)child, record_sample_id(&r->header).tid);

	ASSERT_EQ(0, covering_count(&c[1], PERF_RECORD_MMAP3))
		TH_LOG("CPU 1's CPU-wide event got a mapping made on CPU 0");
	ASSERT_EQ(1, covering_count(&c[1], PERF_RECORD_MMAP3_BUILD_ID))
		TH_LOG("CPU 1's CPU-wide event lost the answer written there");
	answer = covering_nth(&c[1], PERF_RECORD_MMAP3_BUILD_ID, 0);
	check_found(_metadata, answer->build_id_status, answer->build_id_size, answer->build_id,
		    &self->cold);
	ASSERT_EQ((__u32)child, answer->tid);
	ASSERT_EQ((__u32)child, record_sample_id(&answer->header).tid);
	/* It names the mapping CPU 0's record names. */
	ASSERT_EQ(r->addr, answer->addr);
	ASSERT_EQ(r->len, answer->len);
	ASSERT_EQ(r->pgoff, answer->pgoff);
	ASSERT_EQ(r->ino, answer->ino);
	ASSERT_EQ(r->header.misc, answer->header.misc);

	for (i = 0; i < 2; i++) {
		records_free(&c[i].rs);
		ring_unmap(&ring[i]);
	}
	munmap(x, psz);
	close(file);
}

TEST_HARNESS_MAIN
