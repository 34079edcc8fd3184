// SPDX-License-Identifier: GPL-2.0
/*
 * The mmap3 module's lifecycle: no mmap3 event pins it (it unloads with
 * events open, which go on with the kernel's built-in lookup), it takes
 * over from the built-in lookup and gives the mappings back to it with an
 * event open (one record for each mapping, the right build-id from
 * either, each PENDING record answered once whichever provider reads),
 * survives load/unload cycles with traffic, is the one module provider (a
 * second one gets -EBUSY, and registers once mmap3 is gone), and its cache
 * stays within cache_entries, evicting (with none, cache_entries=0, it defers
 * nothing it can parse in memory). Needs the module at $MMAP3_MODULE
 * (default ./mmap3.ko) and the second provider, built from mmap3_provider/,
 * at $MMAP3_TEST_PROVIDER (default ./mmap3_provider/mmap3_test_provider.ko);
 * leaves mmap3 loaded as it found it.
 */
#include <pthread.h>

#include "mmap3_util.h"
#include "../kselftest_harness.h"
#include "mmap3_test.h"

#define STATUS_FOUND	1
#define STATUS_SKIPPED	7

static const char *module_path(void)
{
	return getenv("MMAP3_MODULE") ?: "mmap3.ko";
}

static const char *provider_path(void)
{
	return getenv("MMAP3_TEST_PROVIDER") ?: "mmap3_provider/mmap3_test_provider.ko";
}

/* finit_module() of @path with @params; 0, or -1 with errno. */
static int load_module(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret, err;

	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, params, 0);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

static int load(void)
{
	return load_module(module_path(), "");
}

static int unload(void)
{
	return syscall(__NR_delete_module, "mmap3", O_NONBLOCK);
}

/* /sys/module/mmap3/parameters/cache_entries, or -1. */
static long cache_entries_param(void)
{
	FILE *fp = fopen("/sys/module/mmap3/parameters/cache_entries", "r");
	long val = -1;

	if (!fp)
		return -1;
	if (fscanf(fp, "%ld", &val) != 1)
		val = -1;
	fclose(fp);
	return val;
}

FIXTURE(lifecycle) {
	long cache_entries;	/* as found */
};

FIXTURE_SETUP(lifecycle)
{
	int fd;

	if (need_root())
		SKIP(return, "%s", need_root());
	fd = mmap3_open(0, 0);
	if (fd < 0 && errno == EINVAL)
		SKIP(return, "kernel without attr.mmap3");
	if (fd >= 0)
		close(fd);
	if (access(module_path(), R_OK))
		SKIP(return, "no module at %s (MMAP3_MODULE)", module_path());
	if (!mmap3_module_loaded())
		ASSERT_EQ(0, load());
	self->cache_entries = cache_entries_param();
}

/* mmap3 loaded again as the test found it, the second provider gone. */
FIXTURE_TEARDOWN(lifecycle)
{
	char params[64] = "";

	unlink_copies();
	syscall(__NR_delete_module, "mmap3_test_provider", O_NONBLOCK);
	if (mmap3_module_loaded() && cache_entries_param() == self->cache_entries)
		return;
	unload();
	if (self->cache_entries >= 0)
		snprintf(params, sizeof(params), "cache_entries=%ld", self->cache_entries);
	load_module(module_path(), params);
}

/*
 * An mmap3 event made while the module provides does not pin it: rmmod
 * succeeds with the event open, whose next mapping gets its record, with
 * the file's build-id, from the built-in lookup.
 */
TEST_F(lifecycle, unload_with_event_open)
{
	struct mmap3_capture c = { 0 };
	struct fixture fx;
	struct ring ring;
	int fd, file;
	void *p;

	ASSERT_EQ(0, fixture_get("bid20.elf", &fx));
	fd = mmap3_open(0, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ring_map(&ring, fd, 8));
	ASSERT_EQ(0, unload()) TH_LOG("rmmod with an event open: %s", strerror(errno));
	ASSERT_FALSE(mmap3_module_loaded());
	file = open(fx.path, O_RDONLY);
	ASSERT_LE(0, file);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
	ASSERT_NE(MAP_FAILED, p);
	c.addr = (uintptr_t)p;
	ring_drain(&ring, mmap3_capture_one, &c);
	munmap(p, 4096);
	close(file);
	ring_unmap(&ring);
	check_record(_metadata, "mapped after rmmod, the event made before", &c, &fx);
	ASSERT_EQ(0, load());
}

/*
 * One mmap3 event, made without the module, open across an insmod and an
 * rmmod of it: a mapping before, one while the module provides (its
 * lookups count it) and one after; each gets exactly one MMAP3 record,
 * with the file's build-id.
 */
TEST_F(lifecycle, handover_with_event_open)
{
	struct fixture fx;
	struct records rs = { 0 };
	struct ring ring;
	uintptr_t addr[3];
	int fd, file, i, j, n;
	long long before;

	ASSERT_EQ(0, fixture_get("bid20.elf", &fx));
	ASSERT_EQ(0, unload()) TH_LOG("rmmod mmap3: %s", strerror(errno));
	fd = mmap3_open(0, 0);
	ASSERT_LE(0, fd) TH_LOG("attr.mmap3 without the module: %s", strerror(errno));
	ASSERT_EQ(0, ring_map(&ring, fd, 8));
	file = open(fx.path, O_RDONLY);
	ASSERT_LE(0, file) TH_LOG("%s: %s", fx.path, strerror(errno));
	before = -1;
	for (i = 0; i < 3; i++) {
		void *p;

		if (i == 1) {
			ASSERT_EQ(0, load())
				TH_LOG("insmod with an event open: %s", strerror(errno));
			before = mmap3_module_work();
			ASSERT_LE(0, before) TH_LOG("no /sys/kernel/debug/mmap3/stats");
		}
		if (i == 2) {
			ASSERT_LT(before, mmap3_module_work())
				TH_LOG("the module did not look it up");
			ASSERT_EQ(0, unload())
				TH_LOG("rmmod, the event made before insmod: %s",
				       strerror(errno));
		}
		/* Kept until all three are made: three addresses. */
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
		ASSERT_NE(MAP_FAILED, p);
		addr[i] = (uintptr_t)p;
	}
	for (i = 0; i < 3; i++)
		munmap((void *)addr[i], 4096);
	close(file);
	ring_read(&ring, &rs);
	ring_unmap(&ring);
	for (i = 0; i < 3; i++) {
		for (n = 0, j = 0; j < rs.n; j++) {
			const struct mmap3_record *r = (const void *)rs.v[j];

			if (rs.v[j]->type != PERF_RECORD_MMAP3 || r->addr != addr[i])
				continue;
			n++;
			check_build_id(_metadata, r, &fx);
		}
		EXPECT_EQ(1, n) TH_LOG("mapping %d (%s): %d MMAP3 records", i,
				       i == 1 ? "the module's" : "the built-in provider's", n);
	}
	records_free(&rs);
}

static void count_found(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r = (const void *)h;

	if (h->type == PERF_RECORD_MMAP3 && r->build_id_status == 1)
		(*(int *)ctx)++;
}

/* A thread that loads and unloads mmap3 @cycles times, then sets @done. */
struct cycler {
	int cycles;
	int done;
	int failed;	/* the cycle that failed, + 1 */
	int err;
};

static void *load_cycles(void *arg)
{
	struct cycler *y = arg;
	int i;

	for (i = 0; i < y->cycles && !y->failed; i++) {
		usleep(30000);
		if (load() || (usleep(30000), unload())) {
			y->err = errno;
			y->failed = i + 1;
		}
	}
	__atomic_store_n(&y->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct handover_count {
	const struct fixture *fx;
	int found;	/* MMAP3 records of the file with its build-id */
	int other;	/* of the file, but another status or build-id */
};

static void count_handover(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r = (const void *)h;
	struct handover_count *c = ctx;

	if (h->type != PERF_RECORD_MMAP3 || strcmp(r->filename, c->fx->path))
		return;
	if (r->build_id_status == STATUS_FOUND && r->build_id_size == c->fx->build_id_size &&
	    !memcmp(r->build_id, c->fx->build_id, r->build_id_size))
		c->found++;
	else
		c->other++;
}

/*
 * This thread maps a file on the disk, cold each time, in a loop while
 * another one loads and unloads mmap3 10 times, with an mmap3 event open
 * throughout: the lookups and the reads on the way back to user space race
 * each registration and each unregistration (a PENDING record looked up by
 * one provider is read by the one registered then), and every mapping
 * gets exactly one MMAP3 record, FOUND with the file's build-id, whichever
 * provider answered, and each PENDING one exactly one answer (ring_drain()
 * checks that).
 */
TEST_F_TIMEOUT(lifecycle, handover_under_traffic, 300)
{
	struct cycler y = { .cycles = 10 };
	struct handover_count c = { 0 };
	struct fixture fx;
	struct ring ring;
	pthread_t thread;
	int fd, file, maps = 0, cold = 0;
	__u64 lost, pending, answered;

	if (!require_cold(_metadata))
		return;
	ASSERT_EQ(0, fresh_copy("bid20.elf", &fx));
	c.fx = &fx;
	ASSERT_EQ(0, unload()) TH_LOG("rmmod mmap3: %s", strerror(errno));
	fd = mmap3_open(0, 0);
	ASSERT_LE(0, fd) TH_LOG("attr.mmap3 without the module: %s", strerror(errno));
	ASSERT_EQ(0, ring_map(&ring, fd, 64)) TH_LOG("ring: %s", strerror(errno));
	file = open(fx.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, file) TH_LOG("%s: %s", fx.path, strerror(errno));
	ASSERT_EQ(0, pthread_create(&thread, NULL, load_cycles, &y));
	while (!__atomic_load_n(&y.done, __ATOMIC_ACQUIRE)) {
		void *p;

		/* Clean pages dropped: the provider defers and reads the file. */
		posix_fadvise(file, 0, 0, POSIX_FADV_DONTNEED);
		cold += page0_cached(file) == 0;
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
		ASSERT_NE(MAP_FAILED, p);
		maps++;
		munmap(p, 4096);
		ring_drain(&ring, count_handover, &c);
	}
	pthread_join(thread, NULL);
	close(file);
	ring_drain(&ring, count_handover, &c);
	lost = ring.lost;
	pending = ring.rd.pending;
	answered = ring.rd.answered;
	ring_unmap(&ring);
	TH_LOG("%d mappings (%d cold), %d loads and unloads: %d FOUND, %d others, %llu lost",
	       maps, cold, y.cycles, c.found, c.other, (unsigned long long)lost);
	TH_LOG("%llu PENDING records, %llu answered", (unsigned long long)pending,
	       (unsigned long long)answered);
	ASSERT_EQ(0, y.failed) TH_LOG("cycle %d: %s", y.failed - 1, strerror(y.err));
	ASSERT_EQ(0, lost);
	ASSERT_LT(0, cold) TH_LOG("no mapping was cold");
	ASSERT_LT(0, pending) TH_LOG("no record was PENDING: no read on the way back was tried");
	ASSERT_EQ(pending, answered);
	EXPECT_EQ(0, c.other);
	EXPECT_EQ(maps, c.found) TH_LOG("a mapping lost or doubled its record");
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

/*
 * Maps @fx's file executable under a new mmap3 event: exactly one MMAP3
 * record for it, copied to @out.
 */
static void map_one(struct __test_metadata *_metadata, const struct fixture *fx,
		    struct mmap3_record *out)
{
	struct records rs = { 0 };
	struct ring ring;
	int fd, file, i, n = 0;
	void *p;

	fd = mmap3_open(0, 0);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open with attr.mmap3: %s", strerror(errno));
	ASSERT_EQ(0, ring_map(&ring, fd, 8));
	file = open(fx->path, O_RDONLY);
	ASSERT_LE(0, file) TH_LOG("%s: %s", fx->path, strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
	close(file);
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, 4096);
	ring_read(&ring, &rs);
	ring_unmap(&ring);
	for (i = 0; i < rs.n; i++) {
		const struct mmap3_record *r = (const void *)rs.v[i];

		if (rs.v[i]->type == PERF_RECORD_MMAP3 && r->addr == (uintptr_t)p) {
			*out = *r;
			n++;
		}
	}
	records_free(&rs);
	ASSERT_EQ(1, n) TH_LOG("%s: %d MMAP3 records", fx->path, n);
}

static bool provider_loaded(void)
{
	return access("/sys/module/mmap3_test_provider", F_OK) == 0;
}

/*
 * perf_mmap3_register() takes one provider: a second one, loaded while
 * mmap3 is, fails with -EBUSY and mmap3 keeps writing the records. Once
 * mmap3 is unloaded the second one registers (so -EBUSY was mmap3's doing)
 * and writes the records itself (SKIPPED: it reads no file).
 */
TEST_F(lifecycle, second_provider_ebusy)
{
	struct mmap3_record r;
	struct fixture fx;
	int ret, err;

	if (access(provider_path(), R_OK))
		SKIP(return, "no second provider at %s (MMAP3_TEST_PROVIDER)", provider_path());
	ASSERT_EQ(0, fixture_get("bid20.elf", &fx));
	ASSERT_TRUE(mmap3_module_loaded());

	ret = load_module(provider_path(), "");
	err = errno;
	TH_LOG("insmod %s with mmap3 loaded: %s", provider_path(), ret ? strerror(err) : "loaded");
	ASSERT_EQ(-1, ret) TH_LOG("a second provider registered while mmap3 was registered");
	ASSERT_EQ(EBUSY, err);
	ASSERT_FALSE(provider_loaded());
	map_one(_metadata, &fx, &r);
	check_build_id(_metadata, &r, &fx);

	ASSERT_EQ(0, unload()) TH_LOG("rmmod mmap3: %s", strerror(errno));
	ASSERT_EQ(0, load_module(provider_path(), ""))
		TH_LOG("insmod %s without mmap3: %s", provider_path(), strerror(errno));
	ASSERT_TRUE(provider_loaded());
	map_one(_metadata, &fx, &r);
	ASSERT_EQ(STATUS_SKIPPED, r.build_id_status) TH_LOG("not the second provider's record");
	errno = 0;
	ASSERT_EQ(-1, load()) TH_LOG("mmap3 registered next to the second provider");
	ASSERT_EQ(EBUSY, errno);

	ASSERT_EQ(0, syscall(__NR_delete_module, "mmap3_test_provider", O_NONBLOCK));
	ASSERT_EQ(0, load()) TH_LOG("insmod %s: %s", module_path(), strerror(errno));
	map_one(_metadata, &fx, &r);
	check_build_id(_metadata, &r, &fx);
}

/*
 * cache_entries=4: one set of 4. Eight files read from the disk, each with
 * its own build-id, all cacheable (ext2, ctime in the past): every record
 * has the right build-id, at least 4 entries were evicted, the cache holds
 * 4 and says its capacity is 4; the first file, evicted since, is a miss
 * when mapped again, and gets its own build-id again.
 */
TEST_F(lifecycle, cache_eviction)
{
	static const char *const names[] = {
		"bid20.elf", "bid16.elf", "exec20.elf", "dynamic.elf",
		"rewrite.elf", "rewrite.new", "latenote.elf", "ld-linux-x86-64.so.2",
	};
	long long ev0, ev1, hits, misses;
	struct fixture fx[ARRAY_SIZE(names)];
	struct mmap3_record r;
	unsigned int i;

	if (no_cold_fixtures())
		SKIP(return, "%s", no_cold_fixtures());
	if (mmap3_stat("capacity") < 0)
		SKIP(return, "no /sys/kernel/debug/mmap3/stats");
	ASSERT_EQ(0, unload()) TH_LOG("rmmod mmap3: %s", strerror(errno));
	ASSERT_EQ(0, load_module(module_path(), "cache_entries=4"))
		TH_LOG("insmod %s cache_entries=4: %s", module_path(), strerror(errno));
	ASSERT_EQ(4, cache_entries_param());
	ASSERT_EQ(4, mmap3_stat("capacity"));
	ASSERT_EQ(0, mmap3_stat("entries"));

	for (i = 0; i < ARRAY_SIZE(names); i++)
		ASSERT_EQ(0, fresh_copy(names[i], &fx[i]))
			TH_LOG("a copy of fixture %u on %s", i, fixtures_cold());
	sleep(1);	/* ctime in the past: the answers are cached */
	ASSERT_EQ(0, drop_page_cache());
	ev0 = mmap3_stat("evictions");
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		map_one(_metadata, &fx[i], &r);
		check_build_id(_metadata, &r, &fx[i]);
	}
	ev1 = mmap3_stat("evictions");
	TH_LOG("%zu files read: evictions %lld -> %lld, entries %lld, capacity %lld",
	       ARRAY_SIZE(names), ev0, ev1, mmap3_stat("entries"), mmap3_stat("capacity"));
	ASSERT_LE(ARRAY_SIZE(names) - 4, ev1 - ev0);
	ASSERT_EQ(4, mmap3_stat("entries"));
	ASSERT_EQ(4, mmap3_stat("capacity"));

	/* The first: evicted, so read again, with its own build-id. */
	hits = mmap3_stat("hits");
	misses = mmap3_stat("misses");
	map_one(_metadata, &fx[0], &r);
	check_build_id(_metadata, &r, &fx[0]);
	TH_LOG("%s again: hits %lld -> %lld, misses %lld -> %lld, evictions %lld", fx[0].path,
	       hits, mmap3_stat("hits"), misses, mmap3_stat("misses"), mmap3_stat("evictions"));
	ASSERT_EQ(hits, mmap3_stat("hits")) TH_LOG("4 entries cannot hold 8 files");
	ASSERT_EQ(misses + 1, mmap3_stat("misses"));
	ASSERT_LT(ev1, mmap3_stat("evictions"));
	ASSERT_EQ(4, mmap3_stat("entries"));

	/* All again, in the same order: right, whatever is cached. */
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		map_one(_metadata, &fx[i], &r);
		check_build_id(_metadata, &r, &fx[i]);
	}
	unlink_copies();
}

/*
 * cache_entries=0: no cache. A cacheable file (ext2) whose pages are in the
 * page cache is parsed under mmap_lock like any other, with nothing
 * deferred: its superblock is not numbered for a cache that does not exist.
 */
TEST_F(lifecycle, cache_off_defers_nothing_in_memory)
{
	long long deferred, misses;
	struct mmap3_record r;
	struct fixture fx;
	size_t size;
	void *bytes;

	if (no_cold_fixtures())
		SKIP(return, "%s", no_cold_fixtures());
	if (mmap3_stat("capacity") < 0)
		SKIP(return, "no /sys/kernel/debug/mmap3/stats");
	ASSERT_EQ(0, unload()) TH_LOG("rmmod mmap3: %s", strerror(errno));
	/* Loaded again: it has numbered no superblock yet. */
	ASSERT_EQ(0, load_module(module_path(), "cache_entries=0"))
		TH_LOG("insmod %s cache_entries=0: %s", module_path(), strerror(errno));
	ASSERT_EQ(0, mmap3_stat("capacity"));
	ASSERT_EQ(0, fresh_copy("bid20.elf", &fx));
	bytes = read_all(fx.path, 1 << 20, &size);	/* in the page cache */
	ASSERT_NE(NULL, bytes);
	free(bytes);

	deferred = mmap3_stat("deferred");
	misses = mmap3_stat("misses");
	map_one(_metadata, &fx, &r);
	check_build_id(_metadata, &r, &fx);
	TH_LOG("deferred %lld -> %lld, misses %lld -> %lld", deferred, mmap3_stat("deferred"),
	       misses, mmap3_stat("misses"));
	ASSERT_FALSE(mmap3_was_pending(&r)) TH_LOG("PENDING, with the file in the page cache");
	ASSERT_EQ(deferred, mmap3_stat("deferred")) TH_LOG("a read deferred for no cache");
	ASSERT_EQ(misses + 1, mmap3_stat("misses"));
	ASSERT_EQ(0, mmap3_stat("entries"));
	unlink_copies();
}

TEST_HARNESS_MAIN
