// SPDX-License-Identifier: GPL-2.0
/*
 * The mmap3 module's lifecycle: it cannot be unloaded while an mmap3 event
 * exists, and survives load/unload cycles with traffic. Needs the module at
 * $MMAP3_MODULE (default /tests/mmap3.ko); leaves it loaded.
 */
#include "mmap3_util.h"
#include "../kselftest_harness.h"

static const char *module_path(void)
{
	return getenv("MMAP3_MODULE") ?: "/tests/mmap3.ko";
}

static int load(void)
{
	int fd = open(module_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

static int unload(void)
{
	return syscall(__NR_delete_module, "mmap3", O_NONBLOCK);
}

static bool loaded(void)
{
	return access("/sys/module/mmap3", F_OK) == 0;
}

FIXTURE(lifecycle) {
};

FIXTURE_SETUP(lifecycle)
{
	struct perf_event_attr attr;
	int fd;

	side_band_attr(&attr);
	attr.mmap3 = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0 && errno == EINVAL)
		SKIP(return, "kernel without attr.mmap3");
	if (fd >= 0)
		close(fd);
	if (access(module_path(), R_OK))
		SKIP(return, "no module at %s", module_path());
	if (!loaded())
		ASSERT_EQ(0, load());
}

FIXTURE_TEARDOWN(lifecycle)
{
	if (!loaded())
		load();
}

TEST_F(lifecycle, busy_while_event_open)
{
	int fd = mmap3_open(0, 0);

	ASSERT_LE(0, fd);
	errno = 0;
	ASSERT_EQ(-1, unload());
	/* delete_module() says EWOULDBLOCK (EAGAIN) for a module in use. */
	ASSERT_EQ(EWOULDBLOCK, errno);
	ASSERT_TRUE(loaded());
	close(fd);
	ASSERT_EQ(0, unload()) TH_LOG("rmmod after close: %s", strerror(errno));
	ASSERT_FALSE(loaded());
	/* Without the provider, the ABI says EOPNOTSUPP. */
	ASSERT_EQ(-1, mmap3_open(0, 0));
	ASSERT_EQ(EOPNOTSUPP, errno);
	ASSERT_EQ(0, load());
}

static void count_found(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r = (const void *)h;

	if (h->type == PERF_RECORD_MMAP3 && r->build_id_status == 1)
		(*(int *)ctx)++;
}

/* 100 loads and unloads: minutes on the debug kernel under load. */
TEST_F_TIMEOUT(lifecycle, load_unload_cycles, 600)
{
	struct fixture fx;
	int i, found = 0;

	ASSERT_EQ(0, fixture_get("bid20.elf", &fx));
	for (i = 0; i < 100; i++) {
		struct ring ring;
		int fd, file;
		void *p;

		ASSERT_EQ(0, unload()) TH_LOG("cycle %d: %s", i, strerror(errno));
		ASSERT_EQ(0, load()) TH_LOG("cycle %d: %s", i, strerror(errno));
		if (i % 2)
			continue;	/* every other cycle without traffic */
		fd = mmap3_open(0, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ring_map(&ring, fd, 8));
		file = open(fx.path, O_RDONLY);
		ASSERT_LE(0, file);
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
		ASSERT_NE(MAP_FAILED, p);
		munmap(p, 4096);
		close(file);
		ring_drain(&ring, count_found, &found);
		ring_unmap(&ring);
	}
	ASSERT_EQ(50, found);
}

TEST_HARNESS_MAIN
