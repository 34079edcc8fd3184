// SPDX-License-Identifier: GPL-2.0
/*
 * MMAP3 and the files behind the mappings: the build-id in a
 * record is the one the file holds when it is mapped, never one a cache
 * kept from an older version of the file, and the module's read of the
 * file is not visible to the system where the kernel's own build-id reader
 * is not (fsnotify, O_DIRECT, FUSE servers).
 *
 * Every expected build-id comes from the file's bytes: the fixtures'
 * MANIFEST (tests/kselftest/fixtures.py links them with known random
 * build-ids; elf_file_load() checks the bytes hold it), or the note parsed
 * here from bytes the test wrote. Needs the mmap3 module loaded, and for
 * the cold-cache cases a block-backed copy of the fixtures
 * (MMAP3_COLD_FIXTURES, default /mnt: the guest's ext2 disk).
 *
 * The cases: 1. a rewrite through a shared mapping; 2. a write(2) racing
 * the read; 3. size changes; 4. an inode number reused; 5. one inode number
 * on two devices; 6. shared memory without a file of its own (NO_FILE);
 * 7. memfd; 8. inotify; 9. fanotify; 10. O_DIRECT; 11. FUSE, and a signal
 * during the read; 12. files without ->read_iter.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/userfaultfd.h>

#include "mmap3_fuse.h"
#include "mmap3_util.h"
#include "../kselftest_harness.h"
#include "mmap3_test.h"

#ifndef SHM_EXEC
#define SHM_EXEC	0100000
#endif

enum { UNKNOWN, FOUND, NO_FILE };

/*
 * Cleanup is in FIXTURE_TEARDOWN_PARENT: with 6.12's harness a failed
 * ASSERT ends the test process without its FIXTURE_TEARDOWN (after the
 * longjmp it takes itself for the parent), while the parent's teardown runs
 * once in any case. It may run in another process than the test: it only
 * unlinks, unmounts and removes by name or id, and never closes, unmaps or
 * frees what the test process had.
 */

/*
 * 1. A file rewritten through a MAP_SHARED writable mapping, no write(2).
 * The kernel moves ctime at the first write fault of a page only (ext2:
 * filemap_page_mkwrite(); tmpfs, which has no ->page_mkwrite:
 * fault_dirty_shared_page()), so a page that stays writable, in a mapping
 * kept from before the first read, is rewritten with no trace in ctime.
 */
FIXTURE(shared_rewrite) {
	struct elf_file a, b;
	char path[PATH_MAX];
};

FIXTURE_VARIANT(shared_rewrite) {
	const char *dir;	/* NULL: fixtures_cold(), the ext2 disk */
	bool keep;		/* A and B both written through one mapping */
};

FIXTURE_VARIANT_ADD(shared_rewrite, tmpfs) { .dir = "/tmp" };
FIXTURE_VARIANT_ADD(shared_rewrite, tmpfs_mapping_kept) { .dir = "/tmp", .keep = true };
FIXTURE_VARIANT_ADD(shared_rewrite, ext2) { };
FIXTURE_VARIANT_ADD(shared_rewrite, ext2_mapping_kept) { .keep = true };

FIXTURE_SETUP(shared_rewrite)
{
	if (!require_mmap3(_metadata) || (!variant->dir && !require_cold(_metadata)))
		return;
	ASSERT_EQ(0, load_pair("rewrite.elf", "rewrite.new", &self->a, &self->b));
	snprintf(self->path, sizeof(self->path), "%s/mmap3-files-shared-%d.elf",
		 variant->dir ?: fixtures_cold(), getpid());
}

FIXTURE_TEARDOWN_PARENT(shared_rewrite)
{
	if (self->path[0])
		unlink(self->path);
}

TEST_F(shared_rewrite, next_mapping_has_new_build_id)
{
	size_t len = self->a.padded;
	uint8_t *w = MAP_FAILED;
	int fd;

	fd = open(self->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	if (variant->keep) {
		w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, w);
		memcpy(w, self->a.data, len);
	} else {
		ASSERT_EQ((ssize_t)len, pwrite(fd, self->a.data, len, 0));
	}
	ASSERT_EQ(0, wait_past_ctime(fd));
	MAP_AND_CHECK(fd, &self->a.fx, "A written");

	if (!variant->keep) {
		w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, w);
	}
	memcpy(w, self->b.data, len);
	if (!variant->keep)
		ASSERT_EQ(0, munmap(w, len));
	MAP_AND_CHECK(fd, &self->b.fx, variant->keep ?
		      "B written through the mapping A was written through" :
		      "B written through a shared mapping, unmapped");
	if (variant->keep)
		munmap(w, len);
	close(fd);
}

/*
 * 2. A write(2) of B over A whose source buffer is not there yet
 * (userfaultfd): the kernel stamps ctime, then waits for the buffer before
 * copying a byte. Meanwhile the clock moves past that ctime and another
 * thread maps the file (the module reads A). Then the write completes and
 * never touches ctime again: a cache that trusted the read made during the
 * write would serve A for ever.
 */
FIXTURE(write_race) {
	struct elf_file a, b;
	char path[PATH_MAX];
};

FIXTURE_VARIANT(write_race) {
	const char *dir;	/* NULL: fixtures_cold() */
};

FIXTURE_VARIANT_ADD(write_race, tmpfs) { .dir = "/tmp" };
FIXTURE_VARIANT_ADD(write_race, ext2) { };

FIXTURE_SETUP(write_race)
{
	if (!require_mmap3(_metadata) || (!variant->dir && !require_cold(_metadata)))
		return;
	ASSERT_EQ(0, load_pair("rewrite.elf", "rewrite.new", &self->a, &self->b));
	snprintf(self->path, sizeof(self->path), "%s/mmap3-files-race-%d.elf",
		 variant->dir ?: fixtures_cold(), getpid());
}

FIXTURE_TEARDOWN_PARENT(write_race)
{
	if (self->path[0])
		unlink(self->path);
}

struct race {
	int fd;
	const void *src;
	size_t len;
	ssize_t ret;
	int err;
	struct mmap3_capture c;
};

static void *race_write(void *arg)
{
	struct race *r = arg;

	r->ret = pwrite(r->fd, r->src, r->len, 0);
	r->err = errno;
	return NULL;
}

static void *race_map(void *arg)
{
	struct race *r = arg;

	r->ret = mmap3_map_exec(r->fd, &r->c);
	r->err = errno;
	return NULL;
}

TEST_F(write_race, final_record_has_new_build_id)
{
	size_t len = self->a.padded, span = (len + 4095) / 4096 * 4096;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_copy copy = { 0 };
	struct race w = { 0 }, m = { 0 };
	pthread_t writer, mapper;
	struct timespec deadline;
	struct pollfd pfd;
	struct uffd_msg msg;
	int fd, uffd, joined;
	void *src;

	fd = create_file(self->path, self->a.data, len);
	ASSERT_LE(0, fd);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	src = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, src);
	reg.range.start = (uintptr_t)src;
	reg.range.len = span;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg)) TH_LOG("%s", strerror(errno));

	w.fd = fd;
	w.src = src;
	w.len = len;
	ASSERT_EQ(0, pthread_create(&writer, NULL, race_write, &w));
	pfd.fd = uffd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("the write never faulted on its buffer");
	ASSERT_EQ((ssize_t)sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	ASSERT_EQ((uintptr_t)src, msg.arg.pagefault.address & ~4095ULL)
		TH_LOG("the write faulted past its first page: it copied some of B");

	/* The write has stamped ctime and waits; the clock moves past it. */
	ASSERT_EQ(0, wait_past_ctime(fd));
	m.fd = fd;
	ASSERT_EQ(0, pthread_create(&mapper, NULL, race_map, &m));
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 15;
	joined = pthread_timedjoin_np(mapper, NULL, &deadline);

	/* Let the write finish in any case. */
	copy.dst = (uintptr_t)src;
	copy.src = (uintptr_t)self->b.data;
	copy.len = span;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy)) TH_LOG("UFFDIO_COPY: %s", strerror(errno));
	if (joined)
		pthread_join(mapper, NULL);
	ASSERT_EQ(0, pthread_join(writer, NULL));
	ASSERT_EQ(0, joined) TH_LOG("the mapping waited for the write to finish");
	ASSERT_EQ((ssize_t)len, w.ret) TH_LOG("write: %s", strerror(w.err));
	ASSERT_EQ(0, m.ret) TH_LOG("mmap during the write: %s", strerror(m.err));
	TH_LOG("mapped during the write: %d record(s), status %s", m.c.n,
	       status_name(captured(&m.c)->build_id_status));
	ASSERT_EQ(1, m.c.n);
	ASSERT_NE(UNKNOWN, captured(&m.c)->build_id_status);

	/* Written; the clock moves on; mapped again: B, whatever was read before. */
	ASSERT_EQ(0, wait_past_ctime(fd));
	MAP_AND_CHECK(fd, &self->b.fx, "after the write");
	munmap(src, span);
	close(uffd);
	close(fd);
}

/*
 * 3. The size changes: the record says what the file says now. Extended
 * with zeros, the note is the same; cut to 40 bytes, the file is
 * bad-truncated.elf; rewritten (through a mapping) and extended, it has
 * the other build-id.
 */
enum size_change { EXTEND, TRUNCATE, NEW_ID };

FIXTURE(size_change) {
	struct elf_file a, b, cut;
	char path[PATH_MAX];
};

FIXTURE_VARIANT(size_change) {
	const char *dir;	/* NULL: fixtures_cold() */
	enum size_change change;
};

FIXTURE_VARIANT_ADD(size_change, tmpfs_extended) { .dir = "/tmp", .change = EXTEND };
FIXTURE_VARIANT_ADD(size_change, tmpfs_truncated) { .dir = "/tmp", .change = TRUNCATE };
FIXTURE_VARIANT_ADD(size_change, tmpfs_new_id_new_size) { .dir = "/tmp", .change = NEW_ID };
FIXTURE_VARIANT_ADD(size_change, ext2_extended) { .change = EXTEND };
FIXTURE_VARIANT_ADD(size_change, ext2_truncated) { .change = TRUNCATE };
FIXTURE_VARIANT_ADD(size_change, ext2_new_id_new_size) { .change = NEW_ID };

FIXTURE_SETUP(size_change)
{
	if (!require_mmap3(_metadata) || (!variant->dir && !require_cold(_metadata)))
		return;
	/* bad-truncated.elf is the first 40 bytes of bid20.elf. */
	ASSERT_EQ(0, load_pair("bid20.elf", "exec20.elf", &self->a, &self->b));
	ASSERT_EQ(0, elf_file_load("bad-truncated.elf", 0, &self->cut));
	ASSERT_EQ(0, memcmp(self->a.data, self->cut.data, self->cut.size));
	snprintf(self->path, sizeof(self->path), "%s/mmap3-files-size-%d.elf",
		 variant->dir ?: fixtures_cold(), getpid());
}

FIXTURE_TEARDOWN_PARENT(size_change)
{
	if (self->path[0])
		unlink(self->path);
}

TEST_F(size_change, record_is_the_file_now)
{
	size_t len = self->a.padded;
	const struct fixture *want = &self->a.fx;
	uint8_t *w, *now;
	struct stat st;
	int fd;

	fd = create_file(self->path, self->a.data, len);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wait_past_ctime(fd));
	MAP_AND_CHECK(fd, &self->a.fx, "A");

	switch (variant->change) {
	case EXTEND:
		ASSERT_EQ(0, ftruncate(fd, len + 8192));
		want = &self->a.fx;
		break;
	case TRUNCATE:
		ASSERT_EQ(0, ftruncate(fd, self->cut.size));
		want = &self->cut.fx;
		break;
	case NEW_ID:
		w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, w);
		memcpy(w, self->b.data, len);
		ASSERT_EQ(0, munmap(w, len));
		ASSERT_EQ(0, ftruncate(fd, len + 4096));
		want = &self->b.fx;
		break;
	}
	/* What the file holds now (read back), against what is expected. */
	ASSERT_EQ(0, fstat(fd, &st));
	now = calloc(1, st.st_size);
	ASSERT_NE(NULL, now);
	ASSERT_EQ(st.st_size, pread(fd, now, st.st_size, 0));
	if (variant->change == TRUNCATE) {
		ASSERT_EQ(0, memcmp(now, self->cut.data, st.st_size));
	} else {
		uint8_t id[BUILD_ID_SIZE_MAX];

		ASSERT_EQ(want->build_id_size, elf_build_id(now, st.st_size, id));
		ASSERT_EQ(0, memcmp(id, want->build_id, want->build_id_size));
	}
	free(now);
	MAP_AND_CHECK(fd, want, variant->change == EXTEND ? "extended with zeros" :
		      variant->change == TRUNCATE ? "cut to 40 bytes" :
		      "B written through a mapping, then extended");
	close(fd);
}

/*
 * 4. Deleted and created again with the same inode number on the same
 * device, with another build-id. ext2 hands a freed inode number out again
 * (new files are created until one gets it). tmpfs numbers a mount's inodes
 * in sequence and never reuses one, but a new tmpfs mount gets the freed
 * anonymous device number and numbers its files from the start again: the
 * same (device, inode) for a new file.
 */
#define REUSE_TRIES	64

FIXTURE(inode_reuse) {
	struct elf_file a, b;
	char dir[PATH_MAX];
	pid_t pid;
	int created;
	bool mounted;
};

FIXTURE_VARIANT(inode_reuse) {
	bool tmpfs_remount;
};

FIXTURE_VARIANT_ADD(inode_reuse, ext2) { };
FIXTURE_VARIANT_ADD(inode_reuse, tmpfs_remounted) { .tmpfs_remount = true };

FIXTURE_SETUP(inode_reuse)
{
	self->pid = getpid();
	if (!require_mmap3(_metadata))
		return;
	ASSERT_EQ(0, load_pair("rewrite.elf", "rewrite.new", &self->a, &self->b));
	if (variant->tmpfs_remount) {
		snprintf(self->dir, sizeof(self->dir), "/tmp/mmap3-files-reuse-%d", getpid());
		ASSERT_EQ(0, mkdir(self->dir, 0755));
		ASSERT_EQ(0, mount("tmpfs", self->dir, "tmpfs", 0, NULL));
		self->mounted = true;
	} else {
		if (!require_cold(_metadata))
			return;
		snprintf(self->dir, sizeof(self->dir), "%s", fixtures_cold());
	}
}

static const char *reuse_path(const char *dir, pid_t pid, int i)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/mmap3-files-reuse-%d-%d.elf", dir, pid, i);
	return path;
}

FIXTURE_TEARDOWN_PARENT(inode_reuse)
{
	int i;

	for (i = 0; self->dir[0] && i <= self->created; i++)
		unlink(reuse_path(self->dir, self->pid, i));
	if (self->mounted) {
		umount2(self->dir, MNT_DETACH);
		rmdir(self->dir);
	}
}

TEST_F(inode_reuse, new_file_has_its_build_id)
{
	size_t len = self->a.padded;
	struct mmap3_capture c;
	struct stat old, new;
	int fd, i;

	fd = create_file(reuse_path(self->dir, self->pid, 0), self->a.data, len);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstat(fd, &old));
	ASSERT_EQ(0, wait_past_ctime(fd));
	MAP_AND_CHECK(fd, &self->a.fx, "A");
	close(fd);
	ASSERT_EQ(0, unlink(reuse_path(self->dir, self->pid, 0)));
	if (variant->tmpfs_remount) {
		ASSERT_EQ(0, umount2(self->dir, 0)) TH_LOG("umount: %s", strerror(errno));
		self->mounted = false;
		ASSERT_EQ(0, mount("tmpfs", self->dir, "tmpfs", 0, NULL));
		self->mounted = true;
	}
	for (i = 0; i < REUSE_TRIES; i++) {
		self->created = i;
		fd = create_file(reuse_path(self->dir, self->pid, i), self->b.data, len);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fstat(fd, &new));
		if (new.st_ino == old.st_ino)
			break;
		close(fd);
	}
	ASSERT_EQ(old.st_ino, new.st_ino)
		TH_LOG("no new file got inode %lu back in %d tries", (unsigned long)old.st_ino, i);
	if (old.st_dev != new.st_dev)
		SKIP(return, "the new tmpfs mount got device %u:%u, not %u:%u",
		     major(new.st_dev), minor(new.st_dev), major(old.st_dev), minor(old.st_dev));
	TH_LOG("device %u:%u inode %lu again (ctime %ld.%09ld, then %ld.%09ld)",
	       major(new.st_dev), minor(new.st_dev), (unsigned long)new.st_ino,
	       (long)old.st_ctim.tv_sec, old.st_ctim.tv_nsec,
	       (long)new.st_ctim.tv_sec, new.st_ctim.tv_nsec);
	ASSERT_EQ(0, mmap3_map_exec(fd, &c));
	ASSERT_EQ(old.st_ino, captured(&c)->ino);
	check_record(_metadata, "B, created with the same inode number", &c, &self->b.fx);
	close(fd);
}

/*
 * 5. The same inode number on two devices, different build-ids: two tmpfs
 * mounts; and the ext2 disk with a copy of its image mounted beside it, in
 * which one build-id was changed: the same file with the same inode number,
 * generation, size and times on two devices, only the build-id differs.
 */
FIXTURE(two_devices) {
	struct elf_file a, b;
	char dir1[256], dir2[256];
	char img[256];
	bool mounted1, mounted2;
};

FIXTURE_VARIANT(two_devices) {
	bool image_copy;
};

FIXTURE_VARIANT_ADD(two_devices, tmpfs_pair) { };
FIXTURE_VARIANT_ADD(two_devices, ext2_image_copy) { .image_copy = true };

FIXTURE_SETUP(two_devices)
{
	if (!require_mmap3(_metadata))
		return;
	ASSERT_EQ(0, load_pair("bid20.elf", "exec20.elf", &self->a, &self->b));
	snprintf(self->dir2, sizeof(self->dir2), "/tmp/mmap3-files-dev2-%d", getpid());
	ASSERT_EQ(0, mkdir(self->dir2, 0755));
	if (variant->image_copy) {
		snprintf(self->dir1, sizeof(self->dir1), "%s", fixtures_cold());
		snprintf(self->img, sizeof(self->img), "/tmp/mmap3-files-%d.img", getpid());
		return;
	}
	snprintf(self->dir1, sizeof(self->dir1), "/tmp/mmap3-files-dev1-%d", getpid());
	ASSERT_EQ(0, mkdir(self->dir1, 0755));
	ASSERT_EQ(0, mount("tmpfs", self->dir1, "tmpfs", 0, NULL));
	self->mounted1 = true;
	ASSERT_EQ(0, mount("tmpfs", self->dir2, "tmpfs", 0, NULL));
	self->mounted2 = true;
}

FIXTURE_TEARDOWN_PARENT(two_devices)
{
	/* The loop device (LO_FLAGS_AUTOCLEAR) goes with its last user. */
	if (self->mounted2)
		umount2(self->dir2, MNT_DETACH);
	if (self->img[0])
		unlink(self->img);
	if (self->dir2[0])
		rmdir(self->dir2);
	if (self->mounted1) {
		umount2(self->dir1, MNT_DETACH);
		rmdir(self->dir1);
	}
}

/* The file behind the block device of @path's file system, if a loop device. */
static int loop_backing_file(const char *path, char *out, size_t size)
{
	char sys[128];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st))
		return -1;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(st.st_dev), minor(st.st_dev));
	fd = open(sys, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, out, size - 1);
	close(fd);
	if (n <= 1)
		return -1;
	out[n - 1] = 0;		/* the newline */
	return 0;
}

TEST_F(two_devices, each_has_its_build_id)
{
	struct fixture copy = { .status = "FOUND" };
	char path1[PATH_MAX + 64], path2[PATH_MAX + 64];
	const struct fixture *want2 = &self->b.fx;
	struct stat st1, st2;
	int fd1, fd2, i;

	if (variant->image_copy) {
		char disk[PATH_MAX], loop_dev[64];
		int img_fd, loop_fd, bsize, block;
		uint8_t *img, *at, *p;
		size_t size;

		if (!require_cold(_metadata))
			return;
		snprintf(path1, sizeof(path1), "%s/bid20.elf", self->dir1);
		if (access(path1, R_OK) || loop_backing_file(self->dir1, disk, sizeof(disk)))
			SKIP(return, "%s is not the fixtures on a loop device", self->dir1);
		/*
		 * The image as the disk has it now, with A's build-id changed
		 * where bid20.elf holds it (other fixtures are made from
		 * bid20.elf: FIBMAP says which block is the file's).
		 */
		fd1 = open(path1, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd1);
		p = memmem(self->a.data, self->a.size, self->a.fx.build_id,
			   self->a.fx.build_id_size);
		ASSERT_NE(NULL, p);
		ASSERT_EQ(0, ioctl(fd1, FIGETBSZ, &bsize));
		ASSERT_LT(0, bsize);
		block = (p - self->a.data) / bsize;
		ASSERT_EQ(0, ioctl(fd1, FIBMAP, &block)) TH_LOG("FIBMAP: %s", strerror(errno));
		ASSERT_LT(0, block);
		close(fd1);
		sync();
		img = read_all(disk, 256 << 20, &size);
		ASSERT_NE(NULL, img);
		at = img + (size_t)block * bsize + (p - self->a.data) % bsize;
		ASSERT_GE(img + size, at + self->a.fx.build_id_size);
		ASSERT_EQ(0, memcmp(at, self->a.fx.build_id, self->a.fx.build_id_size))
			TH_LOG("block %d of %s does not hold A's build-id", block, disk);
		ASSERT_EQ(0, getentropy(at, self->a.fx.build_id_size));
		img_fd = create_file(self->img, img, size);
		free(img);
		ASSERT_LE(0, img_fd);
		close(img_fd);
		loop_fd = loop_attach(self->img, O_RDONLY, LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR,
				      loop_dev, sizeof(loop_dev));
		ASSERT_LE(0, loop_fd)
			TH_LOG("a loop device over %s: %s", self->img, strerror(errno));
		ASSERT_EQ(0, mount(loop_dev, self->dir2, "ext2", MS_RDONLY, NULL))
			TH_LOG("mount %s: %s", loop_dev, strerror(errno));
		self->mounted2 = true;
		close(loop_fd);
		snprintf(path2, sizeof(path2), "%s/bid20.elf", self->dir2);

		/* What the copy says now, read from it. */
		img = read_all(path2, 1 << 20, &size);
		ASSERT_NE(NULL, img);
		copy.build_id_size = elf_build_id(img, size, copy.build_id);
		free(img);
		ASSERT_EQ(self->a.fx.build_id_size, copy.build_id_size);
		ASSERT_NE(0, memcmp(copy.build_id, self->a.fx.build_id, copy.build_id_size));
		want2 = &copy;
		fd1 = open(path1, O_RDONLY | O_CLOEXEC);
		fd2 = open(path2, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd1);
		ASSERT_LE(0, fd2);
	} else {
		snprintf(path1, sizeof(path1), "%s/f.elf", self->dir1);
		fd1 = create_file(path1, self->a.data, self->a.padded);
		ASSERT_LE(0, fd1);
		ASSERT_EQ(0, fstat(fd1, &st1));
		for (i = 0; i < 16; i++) {
			snprintf(path2, sizeof(path2), "%s/f%d.elf", self->dir2, i);
			fd2 = create_file(path2, self->b.data, self->b.padded);
			ASSERT_LE(0, fd2);
			ASSERT_EQ(0, fstat(fd2, &st2));
			if (st2.st_ino >= st1.st_ino)
				break;
			close(fd2);
		}
		ASSERT_EQ(0, wait_past_ctime(fd1));
		ASSERT_EQ(0, wait_past_ctime(fd2));
	}
	ASSERT_EQ(0, fstat(fd1, &st1));
	ASSERT_EQ(0, fstat(fd2, &st2));
	TH_LOG("%s: %u:%u inode %lu size %ld ctime %ld.%09ld", path1,
	       major(st1.st_dev), minor(st1.st_dev), (unsigned long)st1.st_ino,
	       (long)st1.st_size, (long)st1.st_ctim.tv_sec, st1.st_ctim.tv_nsec);
	TH_LOG("%s: %u:%u inode %lu size %ld ctime %ld.%09ld", path2,
	       major(st2.st_dev), minor(st2.st_dev), (unsigned long)st2.st_ino,
	       (long)st2.st_size, (long)st2.st_ctim.tv_sec, st2.st_ctim.tv_nsec);
	ASSERT_EQ(st1.st_ino, st2.st_ino);
	ASSERT_NE(st1.st_dev, st2.st_dev);

	MAP_AND_CHECK(fd1, &self->a.fx, "device 1");
	MAP_AND_CHECK(fd2, want2, "device 2, same inode number");
	MAP_AND_CHECK(fd1, &self->a.fx, "device 1 again");
	close(fd1);
	close(fd2);
}

/*
 * 6. Shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS, made executable by
 * mmap or mprotect), a shared mapping of /dev/zero and SysV shm have no
 * file of their own (the kernel backs them with an internal shmem file):
 * NO_FILE, without a read and without touching the cache.
 */
enum shm_kind { SHARED_ANON, SHARED_ANON_MPROTECT, DEV_ZERO, SYSV_SHM };

FIXTURE(no_file) {
	int shmid;
};

FIXTURE_VARIANT(no_file) {
	enum shm_kind kind;
};

FIXTURE_VARIANT_ADD(no_file, shared_anonymous) { .kind = SHARED_ANON };
FIXTURE_VARIANT_ADD(no_file, shared_anonymous_mprotect) { .kind = SHARED_ANON_MPROTECT };
FIXTURE_VARIANT_ADD(no_file, dev_zero_shared) { .kind = DEV_ZERO };
FIXTURE_VARIANT_ADD(no_file, sysv_shm) { .kind = SYSV_SHM };

FIXTURE_SETUP(no_file)
{
	self->shmid = -1;
	if (!require_mmap3(_metadata))
		return;
}

FIXTURE_TEARDOWN_PARENT(no_file)
{
	if (self->shmid >= 0)
		shmctl(self->shmid, IPC_RMID, NULL);
}

TEST_F(no_file, no_file_no_cache)
{
	long long hits, misses, entries;
	struct mmap3_capture c = { 0 };
	const struct mmap3_record *r;
	void *p = MAP_FAILED;
	size_t len = 8192;
	struct ring ring;
	int ev, fd;

	ev = mmap3_open(0, 0);
	ASSERT_LE(0, ev);
	ASSERT_EQ(0, ring_map(&ring, ev, 16));
	hits = mmap3_stat("hits");
	misses = mmap3_stat("misses");
	entries = mmap3_stat("entries");
	/* The built-in provider has no cache: only the record is checked. */
	if (mmap3_module_loaded())
		ASSERT_LE(0, misses) TH_LOG("no /sys/kernel/debug/mmap3/stats");

	switch (variant->kind) {
	case SHARED_ANON:
		p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, p);
		break;
	case SHARED_ANON_MPROTECT:
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, mprotect(p, len, PROT_READ | PROT_EXEC));
		break;
	case DEV_ZERO:
		fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, p);
		break;
	case SYSV_SHM:
		self->shmid = shmget(IPC_PRIVATE, len, IPC_CREAT | 0700);
		if (no_such_syscall(self->shmid))
			SKIP(return, "no SysV IPC");
		ASSERT_LE(0, self->shmid);
		p = shmat(self->shmid, NULL, SHM_EXEC);
		ASSERT_NE((void *)-1, p) TH_LOG("shmat: %s", strerror(errno));
		break;
	}
	c.addr = (uintptr_t)p;
	ring_drain(&ring, mmap3_capture_one, &c);
	r = captured(&c);
	TH_LOG("%d record(s), status %s; cache hits %+lld, misses %+lld, entries %+lld",
	       c.n, status_name(r->build_id_status), mmap3_stat("hits") - hits,
	       mmap3_stat("misses") - misses, mmap3_stat("entries") - entries);
	ASSERT_EQ(1, c.n);
	ASSERT_EQ(NO_FILE, r->build_id_status);
	ASSERT_EQ(0, r->build_id_size);
	if (mmap3_module_loaded()) {
		ASSERT_EQ(hits, mmap3_stat("hits"));
		ASSERT_EQ(misses, mmap3_stat("misses"));
		ASSERT_EQ(entries, mmap3_stat("entries"));
	}
	if (variant->kind == SYSV_SHM)
		shmdt(p);
	else
		munmap(p, len);
	ring_unmap(&ring);
}

/*
 * 7. A memfd is a real file, read like any other: FOUND with the build-id
 * written into it, and the new one once it is rewritten through a shared
 * mapping.
 */
FIXTURE(memfd) {
	struct elf_file a, b;
};

FIXTURE_VARIANT(memfd) {
	bool rewrite;
};

FIXTURE_VARIANT_ADD(memfd, written) { };
FIXTURE_VARIANT_ADD(memfd, rewritten_through_mapping) { .rewrite = true };

FIXTURE_SETUP(memfd)
{
	if (!require_mmap3(_metadata))
		return;
	ASSERT_EQ(0, load_pair("bid20.elf", "exec20.elf", &self->a, &self->b));
}

FIXTURE_TEARDOWN(memfd)
{
}

TEST_F(memfd, found)
{
	size_t len = self->a.padded;
	uint8_t *w;
	int fd;

	fd = memfd_create("mmap3-files", MFD_CLOEXEC);
	if (no_such_syscall(fd))
		SKIP(return, "no memfd_create");
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, pwrite(fd, self->a.data, len, 0));
	if (variant->rewrite)
		ASSERT_EQ(0, wait_past_ctime(fd));
	MAP_AND_CHECK(fd, &self->a.fx, "memfd holding A");
	if (variant->rewrite) {
		w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, w);
		memcpy(w, self->b.data, len);
		ASSERT_EQ(0, munmap(w, len));
		MAP_AND_CHECK(fd, &self->b.fx, "memfd rewritten with B through a mapping");
	}
	close(fd);
}

/*
 * 8-10. A file on the ext2 disk, new (no cache can know it) and out of the
 * page cache: its record says PENDING, the build-id is read from the disk
 * on the way back to user space, and the module's read must not be seen by
 * fsnotify, nor fail because the file was opened with O_DIRECT.
 */
FIXTURE(cold_file) {
	struct elf_file a;
	char path[PATH_MAX];
};

FIXTURE_SETUP(cold_file)
{
	int fd;

	if (!require_mmap3(_metadata) || !require_cold(_metadata))
		return;
	ASSERT_EQ(0, elf_file_load("bid20.elf", 0, &self->a));
	snprintf(self->path, sizeof(self->path), "%s/mmap3-files-cold-%d.elf",
		 fixtures_cold(), getpid());
	fd = create_file(self->path, self->a.data, self->a.padded);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, drop_page_cache());
}

FIXTURE_TEARDOWN_PARENT(cold_file)
{
	if (self->path[0])
		unlink(self->path);
}

/*
 * 8. inotify: no IN_ACCESS from the module's read (the test reads nothing).
 * The built-in provider reads with build_id_parse_file(), __kernel_read(),
 * as BPF's sleepable build-id and PROCMAP_QUERY do: inotify sees that read,
 * and is checked to.
 */
TEST_F(cold_file, inotify_sees_no_access)
{
	struct mmap3_capture c;
	struct inotify_event *ev;
	char __aligned(8) buf[4096];
	ssize_t n;
	int in, fd;
	char ch;

	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, in) TH_LOG("inotify_init1: %s", strerror(errno));
	ASSERT_LE(0, inotify_add_watch(in, self->path, IN_ACCESS));
	fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mmap3_map_exec(fd, &c));
	check_record(_metadata, "cold, watched for IN_ACCESS", &c, &self->a.fx);
	check_pending(_metadata, captured(&c), true, true);
	n = read(in, buf, sizeof(buf));
	for (ev = (void *)buf; n > 0 && (char *)ev < buf + n;
	     ev = (void *)((char *)ev + sizeof(*ev) + ev->len))
		TH_LOG("inotify event 0x%x during the mapping", ev->mask);
	if (!mmap3_module_loaded()) {
		ASSERT_LT(0, n) TH_LOG("the built-in provider's read was not seen by inotify");
		ASSERT_TRUE(((struct inotify_event *)buf)->mask & IN_ACCESS);
		close(fd);
		close(in);
		return;
	}
	ASSERT_EQ(-1, n) TH_LOG("the module's read was seen by inotify");
	ASSERT_EQ(EAGAIN, errno);

	/* The watch does see a read. */
	ASSERT_EQ(1, pread(fd, &ch, 1, 0));
	n = read(in, buf, sizeof(buf));
	ASSERT_LT(0, n) TH_LOG("inotify did not see the test's own read");
	ASSERT_TRUE(((struct inotify_event *)buf)->mask & IN_ACCESS);
	close(fd);
	close(in);
}

/* 9. fanotify: a listener of FAN_ACCESS_PERM on the mount answers and counts. */
struct listener {
	int fan;
	int stop;		/* __atomic */
	int events;		/* __atomic */
};

static void *listen_and_allow(void *arg)
{
	char __aligned(8) buf[4096];
	struct listener *l = arg;

	while (!__atomic_load_n(&l->stop, __ATOMIC_SEQ_CST)) {
		struct pollfd pfd = { .fd = l->fan, .events = POLLIN };
		struct fanotify_event_metadata *m;
		ssize_t n;

		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = read(l->fan, buf, sizeof(buf));
		for (m = (void *)buf; n > 0 && FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->mask & FAN_ACCESS_PERM) {
				struct fanotify_response r = {
					.fd = m->fd,
					.response = FAN_ALLOW,
				};

				__atomic_add_fetch(&l->events, 1, __ATOMIC_SEQ_CST);
				if (write(l->fan, &r, sizeof(r)) != sizeof(r))
					__atomic_store_n(&l->stop, 1, __ATOMIC_SEQ_CST);
			}
			if (m->fd >= 0)
				close(m->fd);
		}
	}
	return NULL;
}

static int fanotify_watch_mount(const char *mnt)
{
	int fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK,
				O_RDONLY | O_LARGEFILE);

	if (fan < 0)
		return -1;
	if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_ACCESS_PERM,
			  AT_FDCWD, mnt)) {
		int err = errno;

		close(fan);
		errno = err;
		return -1;
	}
	return fan;
}

TEST_F_TIMEOUT(cold_file, fanotify_no_permission_event, 60)
{
	struct listener l = { 0 };
	struct mmap3_capture c;
	int fd, during, own;
	pthread_t t;
	char ch;

	l.fan = fanotify_watch_mount(fixtures_cold());
	if (l.fan < 0)
		SKIP(return, "fanotify FAN_ACCESS_PERM on %s: %s", fixtures_cold(),
		     strerror(errno));
	ASSERT_EQ(0, pthread_create(&t, NULL, listen_and_allow, &l));
	fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mmap3_map_exec(fd, &c));
	during = __atomic_load_n(&l.events, __ATOMIC_SEQ_CST);
	/* The listener does see a read (answered before pread returns). */
	ASSERT_EQ(1, pread(fd, &ch, 1, 0));
	own = __atomic_load_n(&l.events, __ATOMIC_SEQ_CST) - during;
	__atomic_store_n(&l.stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	close(l.fan);
	close(fd);
	TH_LOG("%d permission event(s) during the mapping, %d for the test's read",
	       during, own);
	check_record(_metadata, "cold, on a mount with a FAN_ACCESS_PERM listener",
		     &c, &self->a.fx);
	check_pending(_metadata, captured(&c), true, true);
	ASSERT_EQ(1, own);
	ASSERT_EQ(0, during) TH_LOG("the module's read asked the listener for permission");
}

/*
 * 9b. The listener itself maps a file of the mount it watches: a
 * permission event from the module's read would wait for an answer only
 * the waiting task can give. A child does it, under a watchdog.
 */
struct self_map_result {
	int err;
	struct mmap3_capture c;
};

TEST_F_TIMEOUT(cold_file, fanotify_listener_maps_from_its_mount, 60)
{
	struct self_map_result res = { 0 };
	struct pollfd pfd;
	int pipefd[2], fan, status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	fan = fanotify_watch_mount(fixtures_cold());
	if (fan < 0)
		SKIP(return, "fanotify FAN_ACCESS_PERM on %s: %s", fixtures_cold(),
		     strerror(errno));
	close(fan);
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd;

		fan = fanotify_watch_mount(fixtures_cold());
		fd = open(self->path, O_RDONLY | O_CLOEXEC);
		if (fan < 0 || fd < 0 || mmap3_map_exec(fd, &res.c))
			res.err = errno;
		_exit(write(pipefd[1], &res, sizeof(res)) != sizeof(res));
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 15000) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ASSERT_TRUE(false)
			TH_LOG("the listener is still mapping a file of its own mount after 15 s");
	}
	while (got < sizeof(res) &&
	       (n = read(pipefd[0], (char *)&res + got, sizeof(res) - got)) > 0)
		got += n;
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(sizeof(res), got);
	ASSERT_EQ(0, res.err) TH_LOG("%s", strerror(res.err));
	check_record(_metadata, "mapped by the listener from its own mount", &res.c, &self->a.fx);
	check_pending(_metadata, captured(&res.c), true, true);
}

/*
 * 10. O_DIRECT: the mapped file was opened with O_DIRECT; still FOUND with
 * the module, which reads through the page cache. The built-in provider's
 * __kernel_read() reads as the file was opened, unaligned: IO_ERROR.
 */
TEST_F(cold_file, o_direct)
{
	int fd = open(self->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	struct mmap3_capture c;

	ASSERT_LE(0, fd) TH_LOG("open O_DIRECT: %s", strerror(errno));
	ASSERT_EQ(0, mmap3_map_exec(fd, &c)) TH_LOG("mmap: %s", strerror(errno));
	if (mmap3_module_loaded()) {
		check_record(_metadata, "cold, opened with O_DIRECT", &c, &self->a.fx);
	} else {
		TH_LOG("built-in provider, O_DIRECT: %d record(s), status %s", c.n,
		       status_name(captured(&c)->build_id_status));
		ASSERT_EQ(1, c.n);
		ASSERT_EQ(mmap3_status("IO_ERROR"), captured(&c)->build_id_status);
	}
	check_pending(_metadata, captured(&c), true, true);
	close(fd);
}

/*
 * 11. FUSE (mmap3_fuse.h): a single-threaded server serving one ELF file.
 * The server mapping its own file must not hang, and gets a record; other
 * processes get FOUND; after the server changes the file, with or without
 * new times, never the old build-id.
 */
struct fuse_case {
	struct elf_file a, b;
	struct fuse_server srv;
	char path[PATH_MAX];
};

static bool require_fuse(struct __test_metadata *_metadata)
{
	if (access("/dev/fuse", R_OK | W_OK))
		SKIP(return false, "no /dev/fuse: %s", strerror(errno));
	return true;
}

/*
 * The setup of every FUSE fixture: skips without the module or /dev/fuse,
 * else starts the server; its teardown is fuse_server_cleanup(), which
 * does nothing for a server that never started.
 */
static void fuse_case_setup(struct __test_metadata *_metadata, struct fuse_case *t)
{
	char mnt[64], err[256];

	t->srv.cmd = -1;
	t->srv.ctl = -1;
	if (!require_mmap3(_metadata) || !require_fuse(_metadata))
		return;
	ASSERT_EQ(0, load_pair("rewrite.elf", "rewrite.new", &t->a, &t->b));
	snprintf(mnt, sizeof(mnt), "/tmp/mmap3-files-fuse-%d", getpid());
	ASSERT_EQ(0, fuse_server_start(&t->srv, mnt, t->a.data, t->a.padded,
				       err, sizeof(err))) TH_LOG("%s", err);
	snprintf(t->path, sizeof(t->path), "%s/%s", mnt, FUSE_FILE_NAME);
}

FIXTURE(fuse) {
	struct fuse_case t;
};

FIXTURE_SETUP(fuse)
{
	fuse_case_setup(_metadata, &self->t);
}

FIXTURE_TEARDOWN_PARENT(fuse)
{
	fuse_server_cleanup(&self->t.srv);
}

TEST_F_TIMEOUT(fuse, server_maps_its_own_file, 60)
{
	struct fuse_self_map res;
	const struct mmap3_record *r;
	char why[96];
	int fd;

	/* Opened here (the server answers), mapped there. */
	fd = open(self->t.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", self->t.path, strerror(errno));
	ASSERT_EQ(0, fuse_server_cmd(&self->t.srv, 'M', fd))
		TH_LOG("the FUSE server takes no command (%s): %s", strerror(errno),
		       fuse_server_gone(&self->t.srv, why, sizeof(why)));
	if (fuse_server_result(&self->t.srv, &res, 15000)) {
		if (errno == EPIPE)
			TH_LOG("the FUSE server answers nothing: %s",
			       fuse_server_gone(&self->t.srv, why, sizeof(why)));
		else
			TH_LOG("the FUSE server has not mapped its own file in 15 s");
		/* Abort its connection, or this process could not exit either. */
		fuse_server_stop(&self->t.srv);
		ASSERT_TRUE(false);
	}
	ASSERT_EQ(0, res.err) TH_LOG("the server's mmap: %s", strerror(res.err));
	r = captured(&res.c);
	TH_LOG("the server mapping its own file: %d record(s), status %s",
	       res.c.n, status_name(r->build_id_status));
	ASSERT_EQ(1, res.c.n);
	ASSERT_NE(UNKNOWN, r->build_id_status);
	ASSERT_GT(8, r->build_id_status);
	if (r->build_id_status == FOUND)
		check_record(_metadata, "the server's own mapping", &res.c, &self->t.a.fx);
	/* For everyone else the file is read as usual. */
	MAP_AND_CHECK(fd, &self->t.a.fx, "then mapped by another process");
	close(fd);
}

TEST_F_TIMEOUT(fuse, other_process_found, 60)
{
	struct fuse_file *f = self->t.srv.file;
	uint32_t reads = f->reads;
	int fd;

	fd = open(self->t.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", self->t.path, strerror(errno));
	MAP_AND_CHECK(fd, &self->t.a.fx, "served by the FUSE server");
	TH_LOG("%u read(s) answered by the server", f->reads - reads);
	close(fd);
}

FIXTURE(fuse_rewrite) {
	struct fuse_case t;
};

FIXTURE_VARIANT(fuse_rewrite) {
	bool new_times;		/* the server gives the new bytes new mtime and ctime */
};

FIXTURE_VARIANT_ADD(fuse_rewrite, times_bumped) { .new_times = true };
FIXTURE_VARIANT_ADD(fuse_rewrite, attributes_unchanged) { };

FIXTURE_SETUP(fuse_rewrite)
{
	fuse_case_setup(_metadata, &self->t);
}

FIXTURE_TEARDOWN_PARENT(fuse_rewrite)
{
	fuse_server_cleanup(&self->t.srv);
}

TEST_F_TIMEOUT(fuse_rewrite, never_stale, 60)
{
	struct fuse_file *f = self->t.srv.file;
	int fd;

	fd = open(self->t.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", self->t.path, strerror(errno));
	MAP_AND_CHECK(fd, &self->t.a.fx, "served by the FUSE server");
	close(fd);

	/* Same size, inode number and generation; new bytes. */
	memcpy(f->data, self->t.b.data, self->t.b.padded);
	if (variant->new_times) {
		f->mtime++;
		f->ctime++;
	}
	fd = open(self->t.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	MAP_AND_CHECK(fd, &self->t.b.fx, variant->new_times ?
		      "rewritten by the server, new times" :
		      "rewritten by the server, same attributes");
	close(fd);
}

/*
 * 11, continued: a signal during the read. The build-id of a cold file is
 * read on the mapping task's way back to user space, often from signal
 * delivery, so with a signal pending. A FUSE server that honours
 * interrupts (interrupt_reads in mmap3_fuse.h) answers a READ interrupted
 * by a signal -EINTR: the read is retried, so one interrupted READ still
 * gives FOUND; a server that interrupts every READ gives IO_ERROR, every
 * time. The task gets its signal once, after the record.
 */
FIXTURE(fuse_signal) {
	struct fuse_case t;
};

FIXTURE_VARIANT(fuse_signal) {
	uint32_t interrupt_reads;
	const char *status;	/* the record's, as the MANIFEST spells it */
};

FIXTURE_VARIANT_ADD(fuse_signal, interrupted_once) {
	.interrupt_reads = 1, .status = "FOUND",
};

FIXTURE_VARIANT_ADD(fuse_signal, always_interrupted) {
	.interrupt_reads = 100, .status = "IO_ERROR",
};

FIXTURE_SETUP(fuse_signal)
{
	fuse_case_setup(_metadata, &self->t);
}

FIXTURE_TEARDOWN_PARENT(fuse_signal)
{
	fuse_server_cleanup(&self->t.srv);
}

static int sigusr1_count;

static void count_sigusr1(int sig)
{
	__atomic_fetch_add(&sigusr1_count, 1, __ATOMIC_RELAXED);
}

TEST_F_TIMEOUT(fuse_signal, deferred_read, 60)
{
	struct sigaction sa = { .sa_handler = count_sigusr1 };
	struct fuse_file *f = self->t.srv.file;
	const struct mmap3_record *r;
	struct mmap3_capture c;
	int fd;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	fd = open(self->t.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", self->t.path, strerror(errno));
	f->interrupt_reads = variant->interrupt_reads;
	ASSERT_EQ(0, mmap3_map_exec(fd, &c)) TH_LOG("mmap: %s", strerror(errno));
	f->interrupt_reads = 0;
	close(fd);
	r = captured(&c);
	TH_LOG("READs interrupted by SIGUSR1 and answered -EINTR: %u, answered: %u",
	       f->interrupted, f->reads);
	TH_LOG("SIGUSR1 handled %d time(s); %d record(s), status %s",
	       __atomic_load_n(&sigusr1_count, __ATOMIC_RELAXED), c.n,
	       status_name(r->build_id_status));
	ASSERT_LT(0, f->interrupted) TH_LOG("no READ was interrupted: nothing was tested");
	ASSERT_EQ(1, __atomic_load_n(&sigusr1_count, __ATOMIC_RELAXED));
	if (!strcmp(variant->status, "FOUND")) {
		check_record(_metadata, "read with a signal pending", &c, &self->t.a.fx);
	} else {
		ASSERT_EQ(1, c.n);
		ASSERT_EQ(mmap3_status(variant->status), r->build_id_status);
	}
}

/*
 * 12. Mapped files without ->read_iter, which kernel_read() refuses (with
 * "kernel read not supported" when there is a ->read): a perf event's ring
 * buffer (an anonymous inode whose file_operations have .read only), and
 * SysV shm (a shmem inode, S_IFREG, behind shm_file_operations, which have
 * neither). The regular files of this kernel with .read but no ->read_iter
 * are on procfs, sysfs and debugfs, none of which can be mmapped here. One
 * record with a status per mapping, and nothing in the kernel log.
 */
FIXTURE(no_read_iter) {
	int fd, shmid;
};

FIXTURE_VARIANT(no_read_iter) {
	bool sysv_shm;
};

FIXTURE_VARIANT_ADD(no_read_iter, perf_ring_buffer) { };
FIXTURE_VARIANT_ADD(no_read_iter, sysv_shm) { .sysv_shm = true };

FIXTURE_SETUP(no_read_iter)
{
	struct perf_event_attr attr;

	self->fd = -1;
	self->shmid = -1;
	if (!require_mmap3(_metadata))
		return;
	if (variant->sysv_shm) {
		self->shmid = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0700);
		if (no_such_syscall(self->shmid))
			SKIP(return, "no SysV IPC");
		ASSERT_LE(0, self->shmid);
	} else {
		side_band_attr(&attr);
		self->fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
		ASSERT_LE(0, self->fd);
	}
}

FIXTURE_TEARDOWN_PARENT(no_read_iter)
{
	if (self->shmid >= 0)
		shmctl(self->shmid, IPC_RMID, NULL);
}

TEST_F(no_read_iter, status_and_quiet_log)
{
	struct mmap3_capture c;
	char line[1024];
	int kmsg, i, ev;
	struct ring ring;
	ssize_t n;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, kmsg) TH_LOG("/dev/kmsg: %s", strerror(errno));
	lseek(kmsg, 0, SEEK_END);
	for (i = 0; i < 3; i++) {
		const struct mmap3_record *r;

		if (variant->sysv_shm) {
			void *p;

			ev = mmap3_open(0, 0);
			ASSERT_LE(0, ev);
			ASSERT_EQ(0, ring_map(&ring, ev, 16));
			p = shmat(self->shmid, NULL, SHM_EXEC);
			ASSERT_NE((void *)-1, p) TH_LOG("shmat: %s", strerror(errno));
			memset(&c, 0, sizeof(c));
			c.addr = (uintptr_t)p;
			ring_drain(&ring, mmap3_capture_one, &c);
			shmdt(p);
			ring_unmap(&ring);
		} else {
			ASSERT_EQ(0, mmap3_map(self->fd, 2 * 4096, PROT_READ | PROT_WRITE,
					       MAP_SHARED, &c))
				TH_LOG("mmap of a perf ring buffer: %s", strerror(errno));
		}
		r = captured(&c);
		TH_LOG("%s: %d record(s), status %s",
		       variant->sysv_shm ? "SysV shm" : "a perf ring buffer",
		       c.n, status_name(r->build_id_status));
		ASSERT_EQ(1, c.n);
		ASSERT_NE(UNKNOWN, r->build_id_status);
		ASSERT_NE(FOUND, r->build_id_status);
		ASSERT_GT(8, r->build_id_status);
	}
	while ((n = read(kmsg, line, sizeof(line) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		line[n] = 0;
		TH_LOG("kernel: %s", strchr(line, ';') ? strchr(line, ';') + 1 : line);
		ASSERT_EQ(NULL, strstr(line, "not supported"));
		ASSERT_EQ(NULL, strstr(line, "WARNING"));
	}
	close(kmsg);
}

TEST_HARNESS_MAIN
