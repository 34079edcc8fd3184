/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the MMAP3 selftests that report through kselftest_harness.h:
 * include after it.
 */
#ifndef MMAP3_TEST_H
#define MMAP3_TEST_H

#include "mmap3_util.h"

/*
 * perf_event_open() of @attr on @pid and @cpu for the test: the fd; or -1
 * after SKIP when there is no provider, no attr.mmap3, or when
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
