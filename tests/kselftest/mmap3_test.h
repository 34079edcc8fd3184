/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the MMAP3 selftests that report through kselftest_harness.h:
 * include after it.
 */
#ifndef MMAP3_TEST_H
#define MMAP3_TEST_H

#include "mmap3_util.h"

/*
 * The status and build-id of the MMAP3 record @r are those the fixture's
 * MANIFEST gives for @fx (from readelf -n on the file).
 */
static inline void check_build_id(struct __test_metadata *_metadata,
				  const struct mmap3_record *r,
				  const struct fixture *fx)
{
	char got[2 * BUILD_ID_SIZE_MAX + 1], want[2 * BUILD_ID_SIZE_MAX + 1];

	build_id_hex(r->build_id, r->build_id_size <= BUILD_ID_SIZE_MAX ?
		     r->build_id_size : BUILD_ID_SIZE_MAX, got);
	build_id_hex(fx->build_id, fx->build_id_size, want);
	TH_LOG("%s: status %s, build-id '%s' (want %s, '%s')", fx->path,
	       status_name(r->build_id_status), got, fx->status, want);
	ASSERT_EQ(mmap3_status(fx->status), r->build_id_status);
	ASSERT_EQ(fx->build_id_size, r->build_id_size);
	ASSERT_EQ(0, memcmp(r->build_id, fx->build_id, fx->build_id_size));
}

/* The mapping has exactly one record, which says what @want says. */
static inline void check_record(struct __test_metadata *_metadata, const char *what,
				const struct mmap3_capture *c, const struct fixture *want)
{
	TH_LOG("%s: %d record(s)", what, c->n);
	ASSERT_EQ(1, c->n);
	check_build_id(_metadata, captured(c), want);
}

/*
 * How the MMAP3 record @r of a mapping got its build-id: PENDING at
 * mapping time, then a PERF_RECORD_MMAP3_BUILD_ID record (@pending), or at
 * once. The kernel's built-in lookup answers at once from the page cache
 * only, so a cold file is PENDING and a warm one is not. The module answers
 * from its cache too, and defers what its policy says (a warm file whose
 * answer it would cache on a file system it has not seen): with it loaded,
 * only a cold file no cache has seen (a fresh copy) is checked, with
 * @module_too.
 */
static inline void check_pending(struct __test_metadata *_metadata,
				 const struct mmap3_record *r, bool pending, bool module_too)
{
	bool module = mmap3_module_loaded();

	TH_LOG("%s: %s, %s", r->filename, mmap3_was_pending(r) ?
	       "PENDING, then its answer" : "answered at mapping time",
	       module ? "the module provides" : "the built-in lookup");
	if (module && !module_too)
		return;
	ASSERT_EQ(pending, mmap3_was_pending(r));
}

/* Maps one page of @fd PROT_EXEC; its record must say what @want says. */
#define MAP_AND_CHECK(fd, want, what) do {					\
	const char *what_ = (what);						\
	struct mmap3_capture c_;						\
										\
	ASSERT_EQ(0, mmap3_map_exec(fd, &c_))					\
		TH_LOG("%s: mmap: %s", what_, strerror(errno));			\
	check_record(_metadata, what_, &c_, want);				\
} while (0)

/*
 * The require_*() helpers skip the test and return false when what it needs
 * is missing; the caller then returns.
 */
static inline bool require_mmap3(struct __test_metadata *_metadata)
{
	int fd = mmap3_open(0, 0);

	if (fd < 0 && errno == EINVAL)
		SKIP(return false, "kernel without attr.mmap3");
	ASSERT_LE(0, fd);
	close(fd);
	return true;
}

/* A writable block-backed file system. */
static inline bool require_cold(struct __test_metadata *_metadata)
{
	if (access(fixtures_cold(), W_OK))
		SKIP(return false, "no writable block-backed directory %s (MMAP3_COLD_FIXTURES)",
		     fixtures_cold());
	return true;
}

/*
 * perf_event_open() of @attr on @pid and @cpu for the test: the fd; or -1
 * after SKIP when the kernel has no attr.mmap3, or when
 * perf_event_paranoid forbids the event (perf_open_skip()). Any other
 * error fails the test.
 */
static inline int open_event(struct __test_metadata *_metadata,
			     struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = sys_perf_event_open(attr, pid, cpu, -1, 0);
	int err = errno;
	const char *skip = fd < 0 ? perf_open_skip(err, attr->mmap3) : NULL;

	if (skip)
		SKIP(return -1, "%s", skip);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(err));
	return fd;
}

/*
 * open_event() of @attr on @child, a child the test holds (fork_held()):
 * when that fails, the child is killed and reaped, then the test skips or
 * fails as with open_event().
 */
static inline int open_child_event(struct __test_metadata *_metadata,
				   struct perf_event_attr *attr, pid_t child)
{
	int fd = sys_perf_event_open(attr, child, -1, -1, 0);
	int err = errno;
	const char *skip;

	if (fd >= 0)
		return fd;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	skip = perf_open_skip(err, attr->mmap3);
	if (skip)
		SKIP(return -1, "%s", skip);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(err));
	return -1;
}

/* open_event() of a side-band mmap3 event on this task (mmap3_open()). */
static inline int open_mmap3(struct __test_metadata *_metadata, int mmap_data,
			     int inherit)
{
	struct perf_event_attr attr;

	side_band_attr(&attr);
	attr.mmap3 = 1;
	attr.mmap_data = mmap_data;
	attr.inherit = inherit;
	return open_event(_metadata, &attr, 0, -1);
}

#endif /* MMAP3_TEST_H */
