// SPDX-License-Identifier: GPL-2.0
/*
 * MMAP3 and the module's build-id cache: a record's build-id is
 * always the one the mapped file holds at that moment, whatever the cache
 * kept from another file with the same metadata. So the key and
 * version of a cached build-id must tell apart two files with identical
 * metadata on two superblocks that follow each other on one device, survive
 * clock steps, subvolumes and snapshots; where no sound rule exists for a
 * file system, its files are parsed at every mapping.
 *
 * Every expected build-id is read from the mapped file's own bytes
 * (elf_build_id()) or from the fixtures' MANIFEST. Whether a mapping was
 * answered from the cache is logged (the hits and misses counters of
 * /sys/kernel/debug/mmap3/stats), never asserted: that is the module's
 * policy, not the ABI.
 *
 * 1. image_reuse: two images with the same metadata (inode number,
 *    generation, size, times, uuid) and different build-ids for x,
 *    mounted one after the other on one loop device, which is attached
 *    anew (LOOP_CLR_FD, LOOP_CONFIGURE) or whose backing file is rewritten
 *    while it is unmounted; ext2 (mounted by ext4), SquashFS and EROFS,
 *    from the images fixtures.py makes.
 * 2. clock_step: a file on the ext2 disk rewritten in place, same size,
 *    after the clock was set back to the second of its ctime.
 * 3. btrfs_snapshot: a file in a subvolume and in its snapshot (same inode
 *    number and generation on one superblock), both rewritten at one
 *    instant.
 * 4. bind_overlay: one file through a bind mount and through overlayfs,
 *    then copied up by a write through the overlay.
 *
 * Needs root, the mmap3 module, loop devices, the file systems above, and
 * the ext2 disk of the fixtures (MMAP3_COLD_FIXTURES, default /mnt) for 2
 * and 4. Tests 2 and 3 set CLOCK_REALTIME back for a moment; their
 * teardown puts it forward again by the CLOCK_MONOTONIC time that passed.
 */
#define _GNU_SOURCE
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/btrfs.h>
#include <linux/fs.h>

#include "mmap3_util.h"
#include "../kselftest_harness.h"
#include "mmap3_test.h"

#define IMAGE_MAX	(16 * 1024 * 1024)	/* the images of image_reuse */
#define FILE_MAX	(1024 * 1024)		/* the files the tests map */

/*
 * Cleanup is in FIXTURE_TEARDOWN_PARENT, as in mmap3_files.c: it runs once
 * in the parent, whatever became of the test process, and only unmounts,
 * unlinks, removes and sets the clock, by name.
 */

/* Root, the module, loop devices and the file system @fs. */
static bool require_fs(struct __test_metadata *_metadata, const char *fs, bool loop)
{
	if (need_root())
		SKIP(return false, "%s", need_root());
	if (!require_mmap3(_metadata))
		return false;
	if (loop && access("/dev/loop-control", F_OK))
		SKIP(return false, "no loop devices (/dev/loop-control)");
	if (!fs_supported(fs))
		SKIP(return false, "no %s in /proc/filesystems", fs);
	return true;
}

/* @path/@name in the fixtures' images/ (fixtures.py), or NULL (after SKIP). */
static const char *require_image(struct __test_metadata *_metadata, const char *name)
{
	const char *path = fixture_path(fixtures_warm(), name);

	if (access(path, R_OK))
		SKIP(return NULL, "no %s: fixtures.py makes it when its mkfs tool is installed",
		     path);
	return path;
}

/* What identifies @fd's file to a cache, in the log. */
static void log_file(struct __test_metadata *_metadata, const char *what, int fd)
{
	struct stat st;
	long gen = 0;
	char g[32] = "none";

	ASSERT_EQ(0, fstat(fd, &st));
	if (!ioctl(fd, FS_IOC_GETVERSION, &gen))
		snprintf(g, sizeof(g), "%u", (unsigned int)gen);
	TH_LOG("%s: dev %u:%u ino %lu generation %s size %ld ctime %ld.%09ld mtime %ld.%09ld",
	       what, major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, g,
	       (long)st.st_size, (long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec,
	       (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/*
 * What @path holds now, read back from it: FOUND with its build-id, as
 * elf_build_id() finds it (the test fails otherwise).
 */
static void file_fixture(struct __test_metadata *_metadata, const char *path,
			 struct fixture *fx)
{
	uint8_t *data;
	size_t size;

	memset(fx, 0, sizeof(*fx));
	snprintf(fx->path, sizeof(fx->path), "%s", path);
	snprintf(fx->status, sizeof(fx->status), "FOUND");
	data = read_all(path, FILE_MAX, &size);
	ASSERT_NE(NULL, data) TH_LOG("%s: %s", path, strerror(errno));
	fx->build_id_size = elf_build_id(data, size, fx->build_id);
	free(data);
	ASSERT_LT(0, fx->build_id_size) TH_LOG("%s holds no build-id", path);
}

/* The cache counters before a step, and what the step changed, logged. */
struct counters {
	long long hits, misses;
};

static void counters_get(struct counters *c)
{
	c->hits = mmap3_stat("hits");
	c->misses = mmap3_stat("misses");
}

static void counters_log(struct __test_metadata *_metadata, const char *what,
			 const struct counters *before)
{
	struct counters now;

	counters_get(&now);
	TH_LOG("%s: cache hits %+lld, misses %+lld", what, now.hits - before->hits,
	       now.misses - before->misses);
}

/* Opens @path read-only (no writer: a cache may keep what it reads). */
static int open_ro(struct __test_metadata *_metadata, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
	return fd;
}

/*
 * Maps @path (opened read-only) @times times: each record must carry
 * @fx's build-id. Logs the file and the cache counters.
 */
static void map_times(struct __test_metadata *_metadata, const char *path,
		      const struct fixture *fx, int times, const char *what)
{
	struct fixture want = *fx;	/* logged under the mapped file's name */
	struct counters before;
	char step[256];
	int fd, i;

	snprintf(want.path, sizeof(want.path), "%s", path);
	fd = open_ro(_metadata, path);
	log_file(_metadata, what, fd);
	counters_get(&before);
	for (i = 0; i < times; i++) {
		snprintf(step, sizeof(step), "%s, mapping %d of %d", what, i + 1, times);
		MAP_AND_CHECK(fd, &want, step);
	}
	counters_log(_metadata, what, &before);
	close(fd);
}

/* Writes @len bytes of @data over @path in place, then syncs and closes it. */
static void rewrite_in_place(struct __test_metadata *_metadata, const char *path,
			     const void *data, size_t len, bool through_mapping)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	void *w;

	ASSERT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
	if (through_mapping) {
		w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, w);
		memcpy(w, data, len);
		ASSERT_EQ(0, munmap(w, len));
	} else {
		ASSERT_EQ((ssize_t)len, pwrite(fd, data, len, 0));
	}
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
}

/*
 * Creates @path with @len bytes of @data, synced and closed; with @settle,
 * after waiting past its ctime (wait_past_ctime()).
 */
static void create_synced(struct __test_metadata *_metadata, const char *path,
			  const void *data, size_t len, bool settle)
{
	int fd = create_file(path, data, len);

	ASSERT_LE(0, fd) TH_LOG("create %s: %s", path, strerror(errno));
	ASSERT_EQ(0, fsync(fd));
	if (settle)
		ASSERT_EQ(0, wait_past_ctime(fd));
	ASSERT_EQ(0, close(fd));
}

/*
 * CLOCK_REALTIME set back by a test, and put forward again: to what it was
 * plus the CLOCK_MONOTONIC time since. In the fixture (shared with the
 * parent), so that the teardown restores it whatever became of the test.
 */
struct clock_save {
	bool set;
	struct timespec real, mono;
};

static int clock_set_to(struct clock_save *cs, const struct timespec *t)
{
	if (!cs->set) {
		clock_gettime(CLOCK_MONOTONIC, &cs->mono);
		clock_gettime(CLOCK_REALTIME, &cs->real);
		cs->set = true;
	}
	return clock_settime(CLOCK_REALTIME, t);
}

static void clock_restore(struct clock_save *cs)
{
	struct timespec mono, t;

	if (!cs->set)
		return;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	t.tv_sec = cs->real.tv_sec + (mono.tv_sec - cs->mono.tv_sec);
	t.tv_nsec = cs->real.tv_nsec + (mono.tv_nsec - cs->mono.tv_nsec);
	if (t.tv_nsec < 0) {
		t.tv_nsec += 1000000000;
		t.tv_sec--;
	} else if (t.tv_nsec >= 1000000000) {
		t.tv_nsec -= 1000000000;
		t.tv_sec++;
	}
	if (!clock_settime(CLOCK_REALTIME, &t))
		cs->set = false;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/*
 * Sets the clock to @t, then rewrites @path in place (rewrite_in_place())
 * with @len bytes of @data. The coarse clock that stamps ctime reads @t
 * itself until its next tick, so the new ctime is @t unless a tick came
 * between. Returns the ctime the file has then, in @ctime.
 */
static void rewrite_at(struct __test_metadata *_metadata, struct clock_save *cs,
		       const struct timespec *t, const char *path, const void *data,
		       size_t len, bool through_mapping, struct timespec *ctime)
{
	struct stat st;

	ASSERT_EQ(0, clock_set_to(cs, t)) TH_LOG("clock_settime: %s", strerror(errno));
	rewrite_in_place(_metadata, path, data, len, through_mapping);
	ASSERT_EQ(0, stat(path, &st));
	*ctime = st.st_ctim;
}

#define CLOCK_TRIES	20

/*
 * 1. One loop device, two images in turn: A, whose x is a copy of
 * bid20.elf, and B, A's bytes with x's build-id (found exactly once in
 * the image) replaced by random bytes. Every piece of metadata of the two
 * is the same; the device (and so st_dev) is too. A is mounted and its x
 * mapped twice (the second mapping is a hit where the module caches that
 * file system), then unmounted; B takes its place, by a new LOOP_CONFIGURE
 * after LOOP_CLR_FD, or by B's bytes written over the backing file of the
 * loop device, left attached while nothing was mounted, with its buffers
 * flushed (BLKFLSBUF); B's x must give B's build-id; then A again, A's.
 * The fixture: a loop device, where it is mounted, and the two images.
 */
struct image_mount {
	char dir[64], img_a[64], img_b[64], loop[32];
	bool mounted;
};

FIXTURE(image_reuse) {
	struct image_mount m;
};

FIXTURE_VARIANT(image_reuse) {
	const char *fs;		/* the file system type */
	const char *image;	/* in the fixtures (fixtures.py) */
	bool rewrite;		/* the backing file rewritten, not a new attach */
};

FIXTURE_VARIANT_ADD(image_reuse, ext2_reattached) {
	.fs = "ext2", .image = "images/ext2.img",
};

FIXTURE_VARIANT_ADD(image_reuse, ext2_rewritten_unmounted) {
	.fs = "ext2", .image = "images/ext2.img", .rewrite = true,
};

FIXTURE_VARIANT_ADD(image_reuse, squashfs_reattached) {
	.fs = "squashfs", .image = "images/squashfs.img",
};

FIXTURE_VARIANT_ADD(image_reuse, squashfs_rewritten_unmounted) {
	.fs = "squashfs", .image = "images/squashfs.img", .rewrite = true,
};

FIXTURE_VARIANT_ADD(image_reuse, erofs_reattached) {
	.fs = "erofs", .image = "images/erofs.img",
};

FIXTURE_VARIANT_ADD(image_reuse, erofs_rewritten_unmounted) {
	.fs = "erofs", .image = "images/erofs.img", .rewrite = true,
};

FIXTURE_SETUP(image_reuse)
{
	if (!require_fs(_metadata, variant->fs, true) ||
	    !require_image(_metadata, variant->image))
		return;
	snprintf(self->m.dir, sizeof(self->m.dir), "/tmp/mmap3-cache-%d", getpid());
	snprintf(self->m.img_a, sizeof(self->m.img_a), "/tmp/mmap3-cache-%d-a.img", getpid());
	snprintf(self->m.img_b, sizeof(self->m.img_b), "/tmp/mmap3-cache-%d-b.img", getpid());
}

FIXTURE_TEARDOWN_PARENT(image_reuse)
{
	int fd;

	/* The loop device (LO_FLAGS_AUTOCLEAR) goes with its last user. */
	if (self->m.mounted)
		umount2(self->m.dir, MNT_DETACH);
	rmdir(self->m.dir);
	fd = self->m.loop[0] ? open(self->m.loop, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		ioctl(fd, LOOP_CLR_FD, 0);
		close(fd);
	}
	unlink(self->m.img_a);
	unlink(self->m.img_b);
}

/* Mounts the loop device read-only at m->dir. */
static void mount_image(struct __test_metadata *_metadata,
			struct image_mount *m, const char *fs)
{
	ASSERT_EQ(0, mount(m->loop, m->dir, fs, MS_RDONLY, NULL))
		TH_LOG("mount -t %s %s %s: %s", fs, m->loop, m->dir, strerror(errno));
	m->mounted = true;
}

static void umount_image(struct __test_metadata *_metadata,
			 struct image_mount *m)
{
	ASSERT_EQ(0, umount2(m->dir, 0)) TH_LOG("umount %s: %s", m->dir, strerror(errno));
	m->mounted = false;
}

/*
 * Puts @img on the loop device in place of what it holds (nothing is
 * mounted): LOOP_CLR_FD, the last close detaches it, and LOOP_CONFIGURE
 * on the same device; or, with @rewrite, @data written over the backing
 * file (m->img_a) of the loop device, which stays attached, and its
 * buffers dropped. Returns the loop device's fd, open again.
 */
static int swap_image(struct __test_metadata *_metadata, struct image_mount *m,
		      int loop_fd, const char *img, const uint8_t *data, size_t size,
		      bool rewrite)
{
	int fd;

	if (rewrite) {
		fd = open(m->img_a, O_WRONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EQ((ssize_t)size, pwrite(fd, data, size, 0));
		ASSERT_EQ(0, fsync(fd));
		close(fd);
		ASSERT_EQ(0, ioctl(loop_fd, BLKFLSBUF, 0))
			TH_LOG("BLKFLSBUF %s: %s", m->loop, strerror(errno));
		TH_LOG("%s rewritten under %s, still attached; BLKFLSBUF", m->img_a,
		       m->loop);
		return loop_fd;
	}
	ASSERT_EQ(0, loop_reattach(m->loop, &loop_fd, img, O_RDONLY,
				   LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR))
		TH_LOG("LOOP_CLR_FD, LOOP_CONFIGURE %s: %s", m->loop, strerror(errno));
	TH_LOG("%s: LOOP_CLR_FD, then LOOP_CONFIGURE with %s", m->loop, img);
	return loop_fd;
}

TEST_F_TIMEOUT(image_reuse, each_image_its_build_id, 120)
{
	const char *image = fixture_path(fixtures_warm(), variant->image);
	struct fixture bid20, want_a, want_b;
	char x[PATH_MAX];
	const char *why;
	uint8_t *a, *b;
	struct stat st_a, st_b;
	long at;
	size_t size;
	int loop_fd;

	/* A and B, which differ in x's build-id only. */
	ASSERT_EQ(0, fixture_get("bid20.elf", &bid20));
	at = image_pair(image, IMAGE_MAX, &bid20, &a, &b, &size, &why);
	ASSERT_LE(0, at) TH_LOG("%s and bid20.elf's build-id: %s", image, why);
	TH_LOG("%s: %zu bytes, x's build-id at offset %ld", image, size, at);
	create_synced(_metadata, self->m.img_a, a, size, false);
	if (!variant->rewrite)
		create_synced(_metadata, self->m.img_b, b, size, false);
	ASSERT_EQ(0, mkdir(self->m.dir, 0755));
	snprintf(x, sizeof(x), "%s/x", self->m.dir);

	/* A, mapped twice. */
	loop_fd = loop_attach(self->m.img_a, variant->rewrite ? O_RDWR : O_RDONLY,
			      LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR,
			      self->m.loop, sizeof(self->m.loop));
	ASSERT_LE(0, loop_fd) TH_LOG("a loop device over %s: %s", self->m.img_a, strerror(errno));
	mount_image(_metadata, &self->m, variant->fs);
	ASSERT_EQ(0, stat(x, &st_a));
	file_fixture(_metadata, x, &want_a);
	ASSERT_EQ(0, memcmp(want_a.build_id, bid20.build_id, bid20.build_id_size));
	map_times(_metadata, x, &want_a, 2, "image A");
	umount_image(_metadata, &self->m);

	/* B on the same loop device: B's build-id. */
	loop_fd = swap_image(_metadata, &self->m, loop_fd, self->m.img_b, b, size,
			     variant->rewrite);
	mount_image(_metadata, &self->m, variant->fs);
	ASSERT_EQ(0, stat(x, &st_b));
	file_fixture(_metadata, x, &want_b);
	ASSERT_NE(0, memcmp(want_a.build_id, want_b.build_id, want_a.build_id_size))
		TH_LOG("B's x has A's build-id: the image was not swapped");
	/* Everything a cache could key on is the same, but the build-id. */
	ASSERT_EQ(st_a.st_dev, st_b.st_dev);
	ASSERT_EQ(st_a.st_ino, st_b.st_ino);
	ASSERT_EQ(st_a.st_size, st_b.st_size);
	ASSERT_EQ(st_a.st_ctim.tv_sec, st_b.st_ctim.tv_sec);
	ASSERT_EQ(st_a.st_ctim.tv_nsec, st_b.st_ctim.tv_nsec);
	map_times(_metadata, x, &want_b, 2, "image B, same loop device");
	umount_image(_metadata, &self->m);

	/* A again: A's build-id. */
	loop_fd = swap_image(_metadata, &self->m, loop_fd, self->m.img_a, a, size,
			     variant->rewrite);
	mount_image(_metadata, &self->m, variant->fs);
	map_times(_metadata, x, &want_a, 1, "image A again");
	umount_image(_metadata, &self->m);
	close(loop_fd);
	free(a);
	free(b);
}

/*
 * 2. A file on the ext2 disk (mounted by ext4), cached, then rewritten in
 * place with another build-id and the same size after the clock was set
 * back to its ctime: the start of the ctime's second where the file
 * system keeps seconds only (ext2's 128-byte inodes, or the ext2 driver),
 * the ctime itself where it keeps nanoseconds (ext4, and ext2's 256-byte
 * inodes under ext4). The new ctime then comes out the same as the old one
 * (tried again, up to CLOCK_TRIES times, when a clock tick came between).
 * The next mapping must give the new build-id. The rewrite is a pwrite(),
 * or a write through a shared mapping, unmapped; the file is closed.
 */
FIXTURE(clock_step) {
	struct elf_file a, b;
	char path[PATH_MAX];
	struct clock_save clock;
};

FIXTURE_VARIANT(clock_step) {
	bool through_mapping;
};

FIXTURE_VARIANT_ADD(clock_step, pwrite) { };
FIXTURE_VARIANT_ADD(clock_step, shared_mapping) { .through_mapping = true };

FIXTURE_SETUP(clock_step)
{
	if (need_root())
		SKIP(return, "%s", need_root());
	if (!require_mmap3(_metadata) || !require_cold(_metadata))
		return;
	ASSERT_EQ(0, load_pair("rewrite.elf", "rewrite.new", &self->a, &self->b));
	snprintf(self->path, sizeof(self->path), "%s/mmap3-cache-clock-%d.elf",
		 fixtures_cold(), getpid());
}

FIXTURE_TEARDOWN_PARENT(clock_step)
{
	clock_restore(&self->clock);
	if (self->path[0])
		unlink(self->path);
}

TEST_F(clock_step, rewrite_at_the_same_ctime)
{
	struct stat before;
	struct timespec ctime;
	int tries;

	create_synced(_metadata, self->path, self->a.data, self->a.padded, true);
	map_times(_metadata, self->path, &self->a.fx, 2, "A");
	ASSERT_EQ(0, stat(self->path, &before));

	for (tries = 1; tries <= CLOCK_TRIES; tries++) {
		rewrite_at(_metadata, &self->clock, &before.st_ctim, self->path,
			   self->b.data, self->b.padded, variant->through_mapping, &ctime);
		if (same_time(&ctime, &before.st_ctim))
			break;
	}
	clock_restore(&self->clock);
	TH_LOG("B written %s with the clock set back to %ld.%09ld: ctime %ld.%09ld, %s (%d tries)",
	       variant->through_mapping ? "through a shared mapping" : "with pwrite",
	       (long)before.st_ctim.tv_sec, before.st_ctim.tv_nsec, (long)ctime.tv_sec,
	       ctime.tv_nsec, same_time(&ctime, &before.st_ctim) ?
	       "the same ctime as A's" : "another ctime than A's", tries);
	map_times(_metadata, self->path, &self->b.fx, 2, "B, written after the clock step");
}

/*
 * 3. btrfs, on a loop device over the empty file system fixtures.py made:
 * subvolume a holds x (fixture A), mapped twice, then snapshotted to b, so
 * that a/x and b/x have the same inode number and generation on one
 * superblock. With the clock set back to one instant T before each write,
 * b/x is rewritten with B and a/x with C (same size): both can get the
 * same ctime. a/x, b/x, a/x: each must give its own build-id.
 */
FIXTURE(btrfs_snapshot) {
	struct elf_file e[3];
	char dir[64], img[64];
	bool mounted;
	struct clock_save clock;
};

FIXTURE_SETUP(btrfs_snapshot)
{
	const char *const names[] = { "rewrite.elf", "rewrite.new", "exec20.elf" };

	if (!require_fs(_metadata, "btrfs", true) ||
	    !require_image(_metadata, "images/btrfs.blocks"))
		return;
	ASSERT_EQ(0, load_same_size(names, 3, self->e));
	snprintf(self->dir, sizeof(self->dir), "/tmp/mmap3-cache-btrfs-%d", getpid());
	snprintf(self->img, sizeof(self->img), "/tmp/mmap3-cache-btrfs-%d.img", getpid());
}

FIXTURE_TEARDOWN_PARENT(btrfs_snapshot)
{
	clock_restore(&self->clock);
	if (self->mounted)
		umount2(self->dir, MNT_DETACH);
	if (self->dir[0])
		rmdir(self->dir);
	if (self->img[0])
		unlink(self->img);
}

/*
 * Writes the image that fixtures.py stored as @blocks (write_blocks():
 * a header line "mmap3-blocks <size> <block size>", then each block that
 * is not all zeros after its little-endian 64-bit block number) to a new
 * sparse file @img.
 */
static void unpack_blocks(struct __test_metadata *_metadata, const char *blocks,
			  const char *img)
{
	unsigned long long size, bs, n;
	uint8_t *buf;
	FILE *in;
	int out;

	in = fopen(blocks, "re");
	ASSERT_NE(NULL, in) TH_LOG("%s: %s", blocks, strerror(errno));
	ASSERT_EQ(2, fscanf(in, "mmap3-blocks %llu %llu", &size, &bs));
	ASSERT_EQ('\n', fgetc(in));
	ASSERT_TRUE(bs >= 512 && bs <= 65536 && size % bs == 0);
	buf = malloc(bs);
	ASSERT_NE(NULL, buf);
	out = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ASSERT_LE(0, out) TH_LOG("%s: %s", img, strerror(errno));
	ASSERT_EQ(0, ftruncate(out, size));
	while (fread(&n, sizeof(n), 1, in) == 1) {
		ASSERT_EQ(1, fread(buf, bs, 1, in)) TH_LOG("%s: truncated", blocks);
		ASSERT_GT(size / bs, n);
		ASSERT_EQ((ssize_t)bs, pwrite(out, buf, bs, n * bs));
	}
	ASSERT_TRUE(feof(in));
	ASSERT_EQ(0, fsync(out));
	close(out);
	fclose(in);
	free(buf);
}

/* BTRFS_IOC_SUBVOL_CREATE of @name in @dir. */
static void subvol_create(struct __test_metadata *_metadata, const char *dir,
			  const char *name)
{
	struct btrfs_ioctl_vol_args args = { 0 };
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	snprintf(args.name, sizeof(args.name), "%s", name);
	ASSERT_EQ(0, ioctl(fd, BTRFS_IOC_SUBVOL_CREATE, &args))
		TH_LOG("BTRFS_IOC_SUBVOL_CREATE %s/%s: %s", dir, name, strerror(errno));
	close(fd);
}

/* BTRFS_IOC_SNAP_CREATE_V2: subvolume @dir/@from snapshotted to @dir/@to. */
static void snap_create(struct __test_metadata *_metadata, const char *dir,
			const char *from, const char *to)
{
	struct btrfs_ioctl_vol_args_v2 args = { 0 };
	char src[PATH_MAX];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	snprintf(src, sizeof(src), "%s/%s", dir, from);
	args.fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, args.fd);
	snprintf(args.name, sizeof(args.name), "%s", to);
	ASSERT_EQ(0, ioctl(fd, BTRFS_IOC_SNAP_CREATE_V2, &args))
		TH_LOG("BTRFS_IOC_SNAP_CREATE_V2 %s -> %s/%s: %s", src, dir, to, strerror(errno));
	close(args.fd);
	close(fd);
}

TEST_F_TIMEOUT(btrfs_snapshot, snapshot_and_subvolume_own_build_ids, 120)
{
	struct elf_file *a = &self->e[0], *b = &self->e[1], *c = &self->e[2];
	char ax[PATH_MAX], bx[PATH_MAX], loop[32];
	struct timespec t, ca, cb;
	int loop_fd, fd, tries;

	unpack_blocks(_metadata, fixture_path(fixtures_warm(), "images/btrfs.blocks"),
		      self->img);
	loop_fd = loop_attach(self->img, O_RDWR, LO_FLAGS_AUTOCLEAR, loop, sizeof(loop));
	ASSERT_LE(0, loop_fd) TH_LOG("a loop device over %s: %s", self->img, strerror(errno));
	ASSERT_EQ(0, mkdir(self->dir, 0755));
	ASSERT_EQ(0, mount(loop, self->dir, "btrfs", 0, NULL))
		TH_LOG("mount -t btrfs %s %s: %s", loop, self->dir, strerror(errno));
	self->mounted = true;
	close(loop_fd);		/* the mount holds it */

	subvol_create(_metadata, self->dir, "a");
	snprintf(ax, sizeof(ax), "%s/a/x", self->dir);
	snprintf(bx, sizeof(bx), "%s/b/x", self->dir);
	create_synced(_metadata, ax, a->data, a->padded, true);
	map_times(_metadata, ax, &a->fx, 2, "a/x, A");
	snap_create(_metadata, self->dir, "a", "b");
	fd = open_ro(_metadata, bx);
	log_file(_metadata, "b/x, the snapshot's", fd);
	close(fd);
	map_times(_metadata, bx, &a->fx, 1, "b/x, A in the snapshot");

	/* One instant T for both writes. */
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec = 0;
	for (tries = 1; tries <= CLOCK_TRIES; tries++) {
		rewrite_at(_metadata, &self->clock, &t, bx, b->data, b->padded, false, &cb);
		rewrite_at(_metadata, &self->clock, &t, ax, c->data, c->padded, false, &ca);
		if (same_time(&ca, &cb))
			break;
	}
	clock_restore(&self->clock);
	TH_LOG("b/x rewritten with B, a/x with C, the clock set back to %ld.%09ld each time",
	       (long)t.tv_sec, t.tv_nsec);
	TH_LOG("ctime of b/x %ld.%09ld, of a/x %ld.%09ld: %s (%d tries)", (long)cb.tv_sec,
	       cb.tv_nsec, (long)ca.tv_sec, ca.tv_nsec,
	       same_time(&ca, &cb) ? "the same" : "not the same", tries);

	map_times(_metadata, ax, &c->fx, 1, "a/x, C");
	map_times(_metadata, bx, &b->fx, 1, "b/x, B");
	map_times(_metadata, ax, &c->fx, 1, "a/x, C again");
	map_times(_metadata, bx, &b->fx, 1, "b/x, B again");
}

/*
 * 4. One file of the ext2 disk, A, reached through its own path, a bind
 * mount of its directory, and overlayfs with that directory as the lower
 * layer (upper and work on tmpfs): A each time. Then B written through the
 * overlay (a copy-up to the upper layer): B through the overlay, A through
 * the lower path and the bind mount, and again.
 */
FIXTURE(bind_overlay) {
	struct elf_file a, b;
	char lower[PATH_MAX], bind[64], rw[64], merged[64];
	bool bound, rw_mounted, overlaid;
};

FIXTURE_SETUP(bind_overlay)
{
	if (!require_fs(_metadata, "overlay", false) || !require_cold(_metadata))
		return;
	ASSERT_EQ(0, load_pair("bid20.elf", "exec20.elf", &self->a, &self->b));
	snprintf(self->lower, sizeof(self->lower), "%s/mmap3-cache-lower-%d", fixtures_cold(),
		 getpid());
	snprintf(self->bind, sizeof(self->bind), "/tmp/mmap3-cache-bind-%d", getpid());
	snprintf(self->rw, sizeof(self->rw), "/tmp/mmap3-cache-rw-%d", getpid());
	snprintf(self->merged, sizeof(self->merged), "/tmp/mmap3-cache-merged-%d", getpid());
}

FIXTURE_TEARDOWN_PARENT(bind_overlay)
{
	if (self->overlaid)
		umount2(self->merged, MNT_DETACH);
	if (self->bound)
		umount2(self->bind, MNT_DETACH);
	if (self->rw_mounted)
		umount2(self->rw, MNT_DETACH);
	if (!self->lower[0])
		return;
	rmdir(self->merged);
	rmdir(self->bind);
	rmdir(self->rw);
	unlink(fixture_path(self->lower, "x"));
	rmdir(self->lower);
}

TEST_F(bind_overlay, each_path_its_file)
{
	char lx[PATH_MAX + 8], bx[128], ox[128], opts[PATH_MAX + 256];

	ASSERT_EQ(0, mkdir(self->lower, 0755));
	snprintf(lx, sizeof(lx), "%s/x", self->lower);
	snprintf(bx, sizeof(bx), "%s/x", self->bind);
	snprintf(ox, sizeof(ox), "%s/x", self->merged);
	create_synced(_metadata, lx, self->a.data, self->a.padded, true);

	ASSERT_EQ(0, mkdir(self->bind, 0755));
	ASSERT_EQ(0, mount(self->lower, self->bind, NULL, MS_BIND, NULL))
		TH_LOG("bind mount: %s", strerror(errno));
	self->bound = true;
	ASSERT_EQ(0, mkdir(self->rw, 0755));
	ASSERT_EQ(0, mount("tmpfs", self->rw, "tmpfs", 0, NULL));
	self->rw_mounted = true;
	ASSERT_EQ(0, mkdir(fixture_path(self->rw, "upper"), 0755));
	ASSERT_EQ(0, mkdir(fixture_path(self->rw, "work"), 0755));
	ASSERT_EQ(0, mkdir(self->merged, 0755));
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s/upper,workdir=%s/work",
		 self->lower, self->rw, self->rw);
	ASSERT_EQ(0, mount("overlay", self->merged, "overlay", 0, opts))
		TH_LOG("mount -t overlay -o %s: %s", opts, strerror(errno));
	self->overlaid = true;

	map_times(_metadata, lx, &self->a.fx, 2, "A, the lower path");
	map_times(_metadata, bx, &self->a.fx, 2, "A, through the bind mount");
	map_times(_metadata, ox, &self->a.fx, 2, "A, through the overlay");

	rewrite_in_place(_metadata, ox, self->b.data, self->b.padded, false);
	map_times(_metadata, ox, &self->b.fx, 2, "B, copied up, through the overlay");
	map_times(_metadata, lx, &self->a.fx, 2, "A, the lower path, after the copy-up");
	map_times(_metadata, bx, &self->a.fx, 1, "A, the bind mount, after the copy-up");
	map_times(_metadata, ox, &self->b.fx, 1, "B, through the overlay again");
	map_times(_metadata, lx, &self->a.fx, 1, "A, the lower path again");
}

TEST_HARNESS_MAIN
