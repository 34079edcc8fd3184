// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures on the build-id's paths. Systematic fault injection
 * (/proc/thread-self/fail-nth with failslab): the system call that maps a
 * cold file is run again and again, its Nth slab allocation failing, for
 * N = 1, 2, ... until one runs with none failed. N walks through the
 * allocations of the system call, of the lookup under mmap_lock and of the
 * PENDING mapping, and of the read on the way back to user space.
 *
 * Whatever fails, each mapping that exists has exactly one MMAP3 record,
 * where MMAP2 has one: PENDING, answered with the right build-id, or with
 * IO_ERROR (no memory to read it with, or for the module's lookup), or
 * SKIPPED at once (no memory for the PENDING mapping); a failed system
 * call leaves no record. Some
 * failure must hit the PENDING mapping (a SKIPPED record), or the test did
 * not test it. No file reference is left behind: once the copies are
 * deleted, the file system's free inodes and blocks are back. Leaked memory
 * is kmemleak's to find (the project's runner scans at the end).
 *
 * Needs failslab in debugfs (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)
 * and fail-nth (CONFIG_FAULT_INJECTION); skips without them.
 */
#include <sys/stat.h>
#include <sys/statfs.h>

#include "mmap3_util.h"
#include "../kselftest_harness.h"
#include "mmap3_test.h"

#define FAILSLAB	"/sys/kernel/debug/failslab"
#define MAX_NTH		2000
#define STATUS_FOUND	1
#define STATUS_IO_ERROR	6
#define STATUS_SKIPPED	7

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

FIXTURE(fault) {
	struct ring r3, r2;
	int nth_fd;
	char ignore_gfp_wait[16], verbose[16];
	bool configured;
};

FIXTURE_VARIANT(fault) {
	bool mprotect;	/* else mmap() of one file */
};

/* The lookup, the PENDING mapping, the read: all on one mmap(). */
FIXTURE_VARIANT_ADD(fault, mmap_cold_file) { };
/* Two PENDING mappings of one system call, read in turn. */
FIXTURE_VARIANT_ADD(fault, mprotect_two_cold_files) { .mprotect = true };

FIXTURE_SETUP(fault)
{
	struct perf_event_attr attr;
	int fd;

	self->nth_fd = -1;
	if (need_root())
		SKIP(return, "%s", need_root());
	if (access(FAILSLAB, F_OK))
		SKIP(return, "no %s (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)", FAILSLAB);
	self->nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (self->nth_fd < 0)
		SKIP(return, "no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)");
	if (no_cold_fixtures())
		SKIP(return, "%s", no_cold_fixtures());
	fd = open_mmap3(_metadata, 0, 0);
	if (fd < 0)
		return;
	ASSERT_EQ(0, ring_map(&self->r3, fd, 64));
	mmap_attr(&attr, false, 0);
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ring_map(&self->r2, fd, 64));

	/*
	 * Fail GFP_KERNEL allocations too (the provider's are), and say
	 * nothing of it in the kernel log, which the runner reads for splats.
	 * The probability stays 0: only this task's Nth allocation fails.
	 */
	ASSERT_EQ(0, read_file(FAILSLAB "/ignore-gfp-wait", self->ignore_gfp_wait,
			       sizeof(self->ignore_gfp_wait)));
	ASSERT_EQ(0, read_file(FAILSLAB "/verbose", self->verbose, sizeof(self->verbose)));
	self->configured = true;
	ASSERT_EQ(0, write_file(FAILSLAB "/ignore-gfp-wait", "N"));
	ASSERT_EQ(0, write_file(FAILSLAB "/verbose", "0"));
}

FIXTURE_TEARDOWN(fault)
{
	if (self->nth_fd >= 0) {
		pwrite(self->nth_fd, "0", 1, 0);
		close(self->nth_fd);
	}
	if (self->configured) {
		write_file(FAILSLAB "/ignore-gfp-wait", self->ignore_gfp_wait);
		write_file(FAILSLAB "/verbose", self->verbose);
	}
	unlink_copies();
}

/* The records of @rs of type @type at @addr of this process. */
static int records_at(const struct records *rs, __u32 type, __u64 addr,
		      const struct mmap3_record **last)
{
	int i, n = 0;

	for (i = 0; i < rs->n; i++) {
		const struct mmap3_record *r = (const void *)rs->v[i];

		/* pid and addr are at the same offsets in MMAP2 and MMAP3. */
		if (rs->v[i]->type != type || r->addr != addr || r->pid != (__u32)getpid())
			continue;
		n++;
		if (last)
			*last = r;
	}
	return n;
}

/* The free inodes and blocks of the file system at @path, after sync. */
static int fs_free(const char *path, __u64 *inodes, __u64 *blocks)
{
	struct statfs st;

	sync();
	if (statfs(path, &st))
		return -1;
	*inodes = st.f_ffree;
	*blocks = st.f_bfree;
	return 0;
}

TEST_F_TIMEOUT(fault, one_record_and_its_answer, 900)
{
	int nth, i, nfiles = variant->mprotect ? 2 : 1, io_errors = 0, skipped = 0;
	int failed_calls = 0;
	size_t psz = sysconf(_SC_PAGESIZE);
	__u64 inodes0, blocks0, inodes1 = 0, blocks1 = 0;
	char list[512] = "", skips[512] = "";
	bool injected = true;

	ASSERT_EQ(0, fs_free(fixtures_cold(), &inodes0, &blocks0));
	for (nth = 1; injected && nth <= MAX_NTH; nth++) {
		struct records rs3 = { 0 }, rs2 = { 0 };
		struct fixture fx[2];
		int fd[2], ret, err;
		char buf[32], *base;

		/*
		 * Fresh cold files: the lookup misses, the read is pending.
		 * O_NOATIME: mmap() updates the atime of a file it maps, and on
		 * ext4 that reads ahead the inode table, a varying number of
		 * allocations (each failure tolerated) that would put the
		 * provider's at no fixed N.
		 */
		for (i = 0; i < nfiles; i++) {
			ASSERT_EQ(0, fresh_copy(i ? "bid16.elf" : "bid20.elf", &fx[i]));
			fd[i] = open(fx[i].path, O_RDONLY | O_NOATIME);
			ASSERT_LE(0, fd[i]);
		}
		ASSERT_EQ(0, drop_page_cache());
		base = mmap(NULL, 2 * psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, base);
		if (variant->mprotect) {
			/*
			 * Data mappings, not recorded, made executable below:
			 * looked up cold, so not cached by the module either.
			 */
			for (i = 0; i < 2; i++)
				ASSERT_EQ(base + i * psz,
					  mmap(base + i * psz, psz, PROT_READ,
					       MAP_PRIVATE | MAP_FIXED, fd[i], 0));
		} else {
			ASSERT_EQ(0, munmap(base, 2 * psz));
		}
		ring_drain(&self->r3, NULL, NULL);
		ring_drain(&self->r2, NULL, NULL);

		/* Nothing but the system call between arming and reading. */
		snprintf(buf, sizeof(buf), "%d", nth);
		ASSERT_EQ((ssize_t)strlen(buf), pwrite(self->nth_fd, buf, strlen(buf), 0));
		if (variant->mprotect)
			ret = mprotect(base, 2 * psz, PROT_READ | PROT_EXEC);
		else
			ret = mmap(base, psz, PROT_READ | PROT_EXEC,
				   MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd[0], 0) == base ? 0 : -1;
		err = errno;
		ASSERT_LT(0, pread(self->nth_fd, buf, sizeof(buf) - 1, 0));
		ASSERT_EQ(1, pwrite(self->nth_fd, "0", 1, 0));
		injected = atoi(buf) == 0;	/* the Nth allocation came, and failed */

		ring_read(&self->r3, &rs3);
		ring_read(&self->r2, &rs2);
		if (ret) {
			TH_LOG("N=%d: the system call failed: %s", nth, strerror(err));
			ASSERT_TRUE(injected);
			failed_calls++;
		}
		for (i = 0; i < nfiles; i++) {
			const struct mmap3_record *r = NULL;
			__u64 addr = (uintptr_t)base + i * psz;
			int n2 = records_at(&rs2, PERF_RECORD_MMAP2, addr, NULL);
			int n3 = records_at(&rs3, PERF_RECORD_MMAP3, addr, &r);

			ASSERT_EQ(n2, n3) TH_LOG("N=%d, %s: %d MMAP2 records, %d MMAP3",
						 nth, fx[i].path, n2, n3);
			ASSERT_GE(1, n3);
			if (!ret && !variant->mprotect)
				ASSERT_EQ(1, n3);
			if (!n3)
				continue;
			if (r->build_id_status == STATUS_SKIPPED) {
				skipped++;
				if (strlen(skips) < sizeof(skips) - 16)
					snprintf(skips + strlen(skips), sizeof(skips) - strlen(skips),
						 " %d", nth);
				ASSERT_FALSE(mmap3_was_pending(r));
				ASSERT_TRUE(injected) TH_LOG("SKIPPED with no failure injected");
				continue;
			}
			if (r->build_id_status == STATUS_IO_ERROR) {
				io_errors++;
				if (strlen(list) < sizeof(list) - 16)
					snprintf(list + strlen(list), sizeof(list) - strlen(list),
						 " %d", nth);
				ASSERT_EQ(0, r->build_id_size);
				ASSERT_TRUE(injected) TH_LOG("IO_ERROR with no failure injected");
				continue;
			}
			ASSERT_EQ(STATUS_FOUND, r->build_id_status)
				TH_LOG("N=%d, %s: status %u", nth, fx[i].path,
				       r->build_id_status);
			check_pending(_metadata, r, true, true);
			ASSERT_EQ(fx[i].build_id_size, r->build_id_size);
			ASSERT_EQ(0, memcmp(fx[i].build_id, r->build_id, r->build_id_size));
		}
		ASSERT_EQ(0, self->r3.lost + self->r2.lost);
		records_free(&rs3);
		records_free(&rs2);
		munmap(base, 2 * psz);
		for (i = 0; i < nfiles; i++)
			close(fd[i]);
		unlink_copies();
	}
	TH_LOG("%d runs, the last with no failure; %d system calls failed", nth - 1,
	       failed_calls);
	TH_LOG("%d SKIPPED, at N =%s; %d IO_ERROR, at N =%s", skipped, skips, io_errors, list);
	ASSERT_FALSE(injected) TH_LOG("still failing allocations at N=%d", MAX_NTH);
	ASSERT_LT(0, skipped) TH_LOG("no failed allocation reached the PENDING mapping");

	/* The deleted copies are freed: no file reference was left. */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, fs_free(fixtures_cold(), &inodes1, &blocks1));
		if (inodes1 == inodes0 && blocks1 == blocks0)
			break;
		usleep(20000);
	}
	TH_LOG("%s: free inodes %llu -> %llu, free blocks %llu -> %llu", fixtures_cold(),
	       inodes0, inodes1, blocks0, blocks1);
	ASSERT_EQ(inodes0, inodes1) TH_LOG("a file of the copies is still referenced");
	ASSERT_EQ(blocks0, blocks1);
}

TEST_HARNESS_MAIN
