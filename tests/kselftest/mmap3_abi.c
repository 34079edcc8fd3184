// SPDX-License-Identifier: GPL-2.0
/*
 * The PERF_RECORD_MMAP3 ABI, with or without a provider module: the uapi
 * header has DESIGN.md's numbers; attr.mmap3 opens (the kernel's built-in
 * lookup answers without a module, never EOPNOTSUPP; only a kernel without
 * MMAP3 refuses it, with EINVAL), invalid combinations are refused with
 * EINVAL, and MMAP2 records, with and without build_id, still arrive as
 * before.
 */
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "mmap3_util.h"
#include "../kselftest_harness.h"

/* 0 when an mmap3 event opens, else the errno of perf_event_open(). */
static int mmap3_probe(void)
{
	struct perf_event_attr attr;
	int fd;

	side_band_attr(&attr);
	attr.mmap3 = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * The numbers of the uapi (include/uapi/linux/perf_event.h, as installed by
 * the kernel build), against DESIGN.md's ABI: the record types, the
 * statuses, and attr.mmap3 at bit 40 of the flags word after read_format.
 */
TEST(uapi_numbers)
{
	size_t off = offsetof(struct perf_event_attr, read_format) + sizeof(__u64);
	struct perf_event_attr attr = { .mmap3 = 1 };
	__u64 flags;

	ASSERT_EQ(23, PERF_RECORD_MMAP3);
	ASSERT_EQ(24, PERF_RECORD_MMAP3_BUILD_ID);
	ASSERT_EQ(0, PERF_MMAP3_BUILD_ID_UNKNOWN);
	ASSERT_EQ(1, PERF_MMAP3_BUILD_ID_FOUND);
	ASSERT_EQ(2, PERF_MMAP3_BUILD_ID_NO_FILE);
	ASSERT_EQ(3, PERF_MMAP3_BUILD_ID_NOT_ELF);
	ASSERT_EQ(4, PERF_MMAP3_BUILD_ID_NO_BUILD_ID);
	ASSERT_EQ(5, PERF_MMAP3_BUILD_ID_MALFORMED);
	ASSERT_EQ(6, PERF_MMAP3_BUILD_ID_IO_ERROR);
	ASSERT_EQ(7, PERF_MMAP3_BUILD_ID_SKIPPED);
	ASSERT_EQ(8, PERF_MMAP3_BUILD_ID_PENDING);
	memcpy(&flags, (char *)&attr + off, sizeof(flags));
	ASSERT_EQ(1ULL << 40, flags);
}

/* The kernel provides MMAP3 by itself: no module needed, none refused. */
TEST(mmap3_opens)
{
	int err = mmap3_probe();

	if (err == EINVAL)
		SKIP(return, "kernel without attr.mmap3 (EINVAL)");
	ASSERT_EQ(0, err) TH_LOG("perf_event_open with attr.mmap3: %s", strerror(err));
}

FIXTURE(combination) {
};

FIXTURE_VARIANT(combination) {
	int mmap, mmap2, build_id, reserved;
};

FIXTURE_VARIANT_ADD(combination, with_mmap) { .mmap = 1 };
FIXTURE_VARIANT_ADD(combination, with_mmap2) { .mmap2 = 1 };
FIXTURE_VARIANT_ADD(combination, with_mmap2_build_id) { .mmap2 = 1, .build_id = 1 };
FIXTURE_VARIANT_ADD(combination, with_build_id) { .build_id = 1 };
FIXTURE_VARIANT_ADD(combination, with_reserved_bits) { .reserved = 1 };

FIXTURE_SETUP(combination)
{
	if (mmap3_probe() == EINVAL)
		SKIP(return, "kernel without attr.mmap3 (EINVAL)");
}

FIXTURE_TEARDOWN(combination)
{
}

TEST_F(combination, einval)
{
	struct perf_event_attr attr;

	side_band_attr(&attr);
	attr.mmap3 = 1;
	attr.mmap = variant->mmap;
	attr.mmap2 = variant->mmap2;
	attr.build_id = variant->build_id;
	/*
	 * Bits 41 and 42 of the flags word (after read_format), reserved next
	 * to mmap3 (bit 40). Set by position: their field's name is the
	 * uapi's to change.
	 */
	if (variant->reserved) {
		size_t off = offsetof(struct perf_event_attr, read_format) + sizeof(__u64);
		__u64 flags;

		memcpy(&flags, (char *)&attr + off, sizeof(flags));
		flags |= 3ULL << 41;
		memcpy((char *)&attr + off, &flags, sizeof(flags));
	}
	errno = 0;
	ASSERT_EQ(-1, sys_perf_event_open(&attr, 0, -1, -1, 0));
	ASSERT_EQ(EINVAL, errno);
}

struct mmap2_seen {
	__u64 addr;
	const struct fixture *fx;
	int found;
	int build_id_ok;
	int misc;
	union {
		struct mmap2_record rec;
		char buf[4096 + sizeof(struct mmap2_record)];
	};
};

static void find_mmap2(const struct perf_event_header *h, void *ctx)
{
	struct mmap2_seen *seen = ctx;
	const struct mmap2_record *r = (const void *)h;

	if (h->type != PERF_RECORD_MMAP2 || r->addr != seen->addr)
		return;
	seen->found++;
	seen->misc = h->misc;
	memcpy(seen->buf, r, h->size < sizeof(seen->buf) ? h->size : sizeof(seen->buf));
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		seen->build_id_ok = r->build_id_size == seen->fx->build_id_size &&
			!memcmp(r->build_id, seen->fx->build_id, r->build_id_size);
}

FIXTURE(mmap2) {
	struct ring ring;
	struct fixture fx;
};

FIXTURE_VARIANT(mmap2) {
	int build_id;
};

FIXTURE_VARIANT_ADD(mmap2, plain) { .build_id = 0 };
FIXTURE_VARIANT_ADD(mmap2, build_id) { .build_id = 1 };

FIXTURE_SETUP(mmap2)
{
	struct perf_event_attr attr;
	int fd;

	ASSERT_EQ(0, fixture_get("bid20.elf", &self->fx));
	side_band_attr(&attr);
	/* As perf sets them: the kernel counts mmap events by attr.mmap. */
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.build_id = variant->build_id;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ring_map(&self->ring, fd, 16));
}

FIXTURE_TEARDOWN(mmap2)
{
	ring_unmap(&self->ring);
}

/* A warm, executable mapping: MMAP2 as upstream writes it. */
TEST_F(mmap2, still_arrives)
{
	struct mmap2_seen seen = { .fx = &self->fx };
	struct stat st;
	char buf[4096];
	void *p;
	int fd;

	fd = open(self->fx.path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, buf, sizeof(buf)));	/* warm the page cache */
	ASSERT_EQ(0, fstat(fd, &st));
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	seen.addr = (uintptr_t)p;
	ring_drain(&self->ring, find_mmap2, &seen);
	munmap(p, 4096);
	close(fd);

	ASSERT_EQ(1, seen.found);
	ASSERT_EQ(0, strcmp(seen.rec.filename, self->fx.path));
	ASSERT_EQ(PROT_READ | PROT_EXEC, seen.rec.prot);
	if (variant->build_id) {
		ASSERT_TRUE(seen.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
		ASSERT_TRUE(seen.build_id_ok);
	} else {
		ASSERT_FALSE(seen.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
		ASSERT_EQ(st.st_ino, seen.rec.ino);
	}
}

TEST_HARNESS_MAIN
