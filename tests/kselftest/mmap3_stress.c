// SPDX-License-Identifier: GPL-2.0
/*
 * Stress, bounded in time ($MMAP3_STRESS_SECONDS, default 20): processes
 * and threads map and unmap files (warm, cold, rewritten in place, deleted
 * while mapped, truncated while read, sparse with the note at 4 GiB, the
 * malformed corpus, /dev/zero, a FIFO, a file whose reads fail) and exec,
 * while system-wide mmap3 events record and other mmap3 events are opened
 * and closed. Reports mappings made, MMAP3 records received and LOST
 * records; the kernel log is checked by the runner (oops, warnings,
 * lockdep, KASAN, kmemleak).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "mmap3_dm.h"
#include "mmap3_util.h"
#include "../kselftest_harness.h"
#include "mmap3_test.h"

#define PROCS		3
#define THREADS		2
#define MAX_FILES	64

struct shared {
	int stop;		/* __atomic */
	__u64 mappings;	/* made by the mappers, all recorded */
	__u64 failed;	/* mmap() refused (FIFO, truncated, ...) */
	__u64 execs;
	__u64 churned;	/* events opened and closed */
};

static struct shared *sh;
static char files[MAX_FILES][PATH_MAX + 32];
static int nfiles;

static bool stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED);
}

static void add_file(const char *fmt, const char *name)
{
	if (nfiles < MAX_FILES)
		snprintf(files[nfiles++], sizeof(files[0]), fmt, name);
}

static void *mapper(void *arg)
{
	unsigned int seed = (uintptr_t)arg;

	while (!stopping()) {
		const char *path = files[rand_r(&seed) % nfiles];
		int prot = rand_r(&seed) % 2 ? PROT_READ | PROT_EXEC : PROT_READ;
		int fd = open(path, O_RDONLY | O_NONBLOCK);
		void *p;

		if (fd < 0)
			continue;
		p = mmap(NULL, 4096, prot, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			__atomic_add_fetch(&sh->failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_add_fetch(&sh->mappings, 1, __ATOMIC_RELAXED);
		munmap(p, 4096);
	}
	return NULL;
}

/* Copies @from over @to in place (same inode), as a package update would not. */
static void copy_over(const char *from, const char *to, off_t size)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT, 0755);
	ssize_t n;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (out >= 0 && ftruncate(out, size) < 0)
		size = 0;
	close(in);
	close(out);
}

static void *mutator(void *arg)
{
	unsigned int seed = 7;
	int i = 0;

	while (!stopping()) {
		char path[64];
		int fd;
		void *p;

		/* Rewritten in place, and truncated to random sizes. */
		copy_over(fixture_path(fixtures_warm(), i++ % 2 ? "rewrite.new" : "rewrite.elf"),
			  "/tmp/stress-rewrite.elf", 65536);
		copy_over(fixture_path(fixtures_warm(), "bid20.elf"), "/tmp/stress-trunc.elf",
			  rand_r(&seed) % 16384);
		/* Deleted while mapped. */
		snprintf(path, sizeof(path), "/tmp/stress-deleted-%d.elf", i);
		copy_over(fixture_path(fixtures_warm(), "bid16.elf"), path, 16384);
		fd = open(path, O_RDONLY);
		unlink(path);
		p = fd < 0 ? MAP_FAILED :
			mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			__atomic_add_fetch(&sh->mappings, 1, __ATOMIC_RELAXED);
			munmap(p, 4096);
		}
		close(fd);
		if (i % 20 == 0)
			drop_page_cache();
	}
	return NULL;
}

static void *churner(void *arg)
{
	while (!stopping()) {
		int fd = mmap3_open(1, 0);

		if (fd >= 0) {
			close(fd);
			__atomic_add_fetch(&sh->churned, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void worker(int id)
{
	pthread_t t[THREADS + 2];
	int i;

	/* Gone with the test, however it ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);

	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, mapper, (void *)(uintptr_t)(id * 100 + i + 1));
	if (id == 0)
		pthread_create(&t[THREADS], NULL, mutator, NULL);
	if (id == 1)
		pthread_create(&t[THREADS], NULL, churner, NULL);
	if (id == 2) {
		const char *exe = fixture_path(fixtures_cold(), "exec20.elf");

		while (!stopping()) {
			pid_t pid = fork();

			if (!pid) {
				execl(exe, exe, NULL);
				_exit(127);
			}
			if (pid > 0 && waitpid(pid, NULL, 0) == pid)
				__atomic_add_fetch(&sh->execs, 1, __ATOMIC_RELAXED);
		}
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (id < 2)
		pthread_join(t[THREADS], NULL);
	_exit(0);
}

/* The files: fixtures warm and cold, hostile ones, special ones. */
static int setup_files(void)
{
	static const char *const names[] = {
		"bid20.elf", "bid16.elf", "nobid.elf", "notelf.txt", "latenote.elf",
		"bad-truncated.elf", "bad-phoff.elf", "bad-phnum.elf",
		"bad-filesz.elf", "bad-descsz21.elf", "bad-descsz-huge.elf",
		"libc.so.6",
	};
	char buf[16384];
	int i, in, out;
	ssize_t n;

	for (i = 0; i < (int)ARRAY_SIZE(names); i++) {
		add_file("%s", fixture_path(fixtures_warm(), names[i]));
		add_file("%s", fixture_path(fixtures_cold(), names[i]));
	}
	copy_over(fixture_path(fixtures_warm(), "rewrite.elf"), "/tmp/stress-rewrite.elf", 65536);
	copy_over(fixture_path(fixtures_warm(), "bid20.elf"), "/tmp/stress-trunc.elf", 16384);
	add_file("%s", "/tmp/stress-rewrite.elf");
	add_file("%s", "/tmp/stress-trunc.elf");
	add_file("%s", "/dev/zero");
	if (mkfifo("/tmp/stress-fifo", 0600))
		return -1;
	add_file("%s", "/tmp/stress-fifo");
	/* Sparse, 4 GiB, its build-id note at the end (latenote.elf's layout). */
	in = open(fixture_path(fixtures_warm(), "latenote.elf"), O_RDONLY);
	out = open("/tmp/stress-sparse.elf", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	n = read(in, buf, sizeof(buf));
	if (n <= 0 || write(out, buf, n) != n || ftruncate(out, 4ULL << 30))
		return -1;
	close(in);
	close(out);
	add_file("%s", "/tmp/stress-sparse.elf");
	return 0;
}

struct tally {
	__u64 records, by_status[8];
};

static void tally(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r = (const void *)h;
	struct tally *t = ctx;

	if (h->type != PERF_RECORD_MMAP3)
		return;
	t->records++;
	if (r->build_id_status < 8)
		t->by_status[r->build_id_status]++;
}

FIXTURE(stress) {
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

/* The test bounds itself; the harness only catches a hang (1 hour). */
TEST_F_TIMEOUT(stress, run, 3600)
{
	int seconds = atoi(getenv("MMAP3_STRESS_SECONDS") ?: "");
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN), i, fd;
	struct tally t = { 0 };
	struct ring ring[64];
	struct dm_disk disk;
	pid_t pids[PROCS];
	__u64 lost = 0;
	time_t end;

	if (need_root())
		SKIP(return, "%s", need_root());
	if (seconds <= 0)
		seconds = 20;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);

	ASSERT_EQ(0, setup_files());
	/* A file whose reads fail. */
	if (!dm_disk_missing() && !dm_disk_setup(&disk, "mmap3stress")) {
		char path[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/bid20.elf", disk.mnt);
		fd = open(path, O_RDONLY);	/* keeps the inode */
		drop_page_cache();
		ASSERT_EQ(0, dm_disk_fail(&disk));
		add_file("%s", path);
	} else {
		disk.name[0] = 0;
	}

	for (i = 0; i < ncpus && i < 64; i++) {
		struct perf_event_attr attr;

		side_band_attr(&attr);
		attr.mmap3 = 1;
		attr.mmap_data = 1;
		fd = open_event(_metadata, &attr, -1, i);
		if (fd < 0)
			return;
		ASSERT_EQ(0, ring_map(&ring[i], fd, 256));
	}

	for (i = 0; i < PROCS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			worker(i);
	}
	end = time(NULL) + seconds;
	while (time(NULL) < end) {
		for (i = 0; i < ncpus; i++)
			ring_drain(&ring[i], tally, &t);
		usleep(1000);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < PROCS; i++)
		ASSERT_EQ(pids[i], waitpid(pids[i], NULL, 0));
	for (i = 0; i < ncpus; i++) {
		ring_drain(&ring[i], tally, &t);
		lost += ring[i].lost;
		ring_unmap(&ring[i]);
	}
	if (disk.name[0])
		dm_disk_teardown(&disk);
	unlink("/tmp/stress-fifo");
	unlink("/tmp/stress-sparse.elf");

	TH_LOG("%d s: %llu mappings (+%llu refused), %llu execs, %llu events churned",
	       seconds, (unsigned long long)sh->mappings,
	       (unsigned long long)sh->failed, (unsigned long long)sh->execs,
	       (unsigned long long)sh->churned);
	TH_LOG("%llu MMAP3 records, %llu lost", (unsigned long long)t.records,
	       (unsigned long long)lost);
	for (i = 1; i < 8; i++)
		TH_LOG("  %-12s %llu", mmap3_status_names[i],
		       (unsigned long long)t.by_status[i]);
	/* Every mapping made is recorded (execs and the runner add more). */
	ASSERT_LE(sh->mappings, t.records + lost);
	ASSERT_LT(0, t.by_status[6]) TH_LOG("no IO_ERROR seen");
}

TEST_HARNESS_MAIN
