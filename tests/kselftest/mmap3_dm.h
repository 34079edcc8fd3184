/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A block device whose reads can be made to fail or to be slow: ext2 on a
 * device-mapper device over a loop device. The tests mount it, open a
 * file, drop the page cache, then swap the table to the "error" target
 * (the inode is in memory, every read of the file's data fails with EIO)
 * or to the "delay" target (every read waits).
 */
#ifndef MMAP3_DM_H
#define MMAP3_DM_H

#include <pthread.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mmap3_util.h"

struct dm_disk {
	char name[32];
	char mnt[PATH_MAX];
	char loop[32];
	char dev[32];
	__u64 sectors;
};

static inline int dm_ioctl(unsigned long cmd, const char *name,
			   const char *target, __u64 sectors,
			   const char *params, __u32 flags, __u64 *dev)
{
	char buf[16384] = { 0 };
	struct dm_ioctl *io = (void *)buf;
	struct dm_target_spec *spec = (void *)(io + 1);
	int fd, ret;

	io->version[0] = DM_VERSION_MAJOR;
	io->data_size = sizeof(buf);
	io->data_start = sizeof(*io);
	io->flags = flags;
	snprintf(io->name, sizeof(io->name), "%s", name);
	if (target) {
		io->target_count = 1;
		spec->length = sectors;
		snprintf(spec->target_type, sizeof(spec->target_type), "%s", target);
		snprintf((char *)(spec + 1), 1024, "%s", params);
	}
	fd = open("/dev/mapper/control", O_RDWR);
	if (fd < 0)
		return -1;
	ret = ioctl(fd, cmd, io);
	close(fd);
	if (dev)
		*dev = io->dev;
	return ret;
}

/*
 * The ext2 image with the fixtures that dm_disk_setup() copies:
 * $MMAP3_DISK_IMAGE, else the block device that holds fixtures_cold() (in
 * @buf); NULL when there is none.
 */
static inline const char *dm_disk_image(char *buf, size_t size)
{
	char path[PATH_MAX], line[256];
	struct stat st;
	FILE *fp;

	if (getenv("MMAP3_DISK_IMAGE"))
		return getenv("MMAP3_DISK_IMAGE");
	if (stat(fixtures_cold(), &st))
		return NULL;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent",
		 major(st.st_dev), minor(st.st_dev));
	fp = fopen(path, "r");
	if (!fp)
		return NULL;
	buf[0] = 0;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "DEVNAME=", 8))
			snprintf(buf, size, "/dev/%.*s", (int)strcspn(line + 8, "\n"), line + 8);
	fclose(fp);
	return buf[0] ? buf : NULL;
}

/* Whether dm_disk_setup() can work here: device mapper, and an image. */
static inline const char *dm_disk_missing(void)
{
	char buf[PATH_MAX];

	if (access("/dev/mapper/control", F_OK))
		return "no device mapper (/dev/mapper/control)";
	if (access("/dev/loop-control", F_OK))
		return "no loop devices (/dev/loop-control)";
	if (!dm_disk_image(buf, sizeof(buf)))
		return "no ext2 image of the fixtures: set $MMAP3_DISK_IMAGE";
	return NULL;
}

/* Copies @from to a new file @to; 0 or -1. */
static inline int dm_copy_image(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = -1;
	ssize_t n;

	sync();
	in = open(from, O_RDONLY);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (out >= 0) {
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, n) != n)
				break;
		ret = n ? -1 : 0;
		close(out);
	}
	close(in);
	return ret;
}

/*
 * A free loop device over @img, in @d->loop, detached by the kernel once
 * its last user (device mapper) lets it go. Returns its open fd, or -1.
 */
static inline int dm_loop_attach(struct dm_disk *d, const char *img)
{
	return loop_attach(img, O_RDWR, LO_FLAGS_AUTOCLEAR, d->loop, sizeof(d->loop));
}

/*
 * dm device @name over a loop device over a copy of the fixtures' ext2
 * image (dm_disk_image()), mounted read-only at $TMPDIR/@name (/tmp by
 * default). What an earlier run left under that name (a test that failed
 * half-way) is removed first.
 */
static inline int dm_disk_setup(struct dm_disk *d, const char *name)
{
	char img[PATH_MAX], src[PATH_MAX], params[64];
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	__u64 dev, bytes;
	int fd, ret;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->mnt, sizeof(d->mnt), "%s/%s", tmp, name);
	snprintf(img, sizeof(img), "%s/%s.img", tmp, name);
	umount2(d->mnt, MNT_DETACH);
	dm_ioctl(DM_DEV_REMOVE, name, NULL, 0, NULL, 0, NULL);
	if (!dm_disk_image(src, sizeof(src)) || dm_copy_image(src, img))
		return -1;
	fd = dm_loop_attach(d, img);
	unlink(img);	/* the loop device holds it */
	if (fd < 0)
		return -1;
	ret = ioctl(fd, BLKGETSIZE64, &bytes);
	d->sectors = bytes / 512;
	snprintf(params, sizeof(params), "%s 0", d->loop);
	if (!ret)
		ret = dm_ioctl(DM_DEV_CREATE, name, NULL, 0, NULL, 0, NULL) ||
		      dm_ioctl(DM_TABLE_LOAD, name, "linear", d->sectors, params, 0, NULL) ||
		      dm_ioctl(DM_DEV_SUSPEND, name, NULL, 0, NULL, 0, &dev);
	close(fd);	/* device mapper holds the loop device now, if at all */
	if (ret) {
		dm_ioctl(DM_DEV_REMOVE, name, NULL, 0, NULL, 0, NULL);
		return -1;
	}
	snprintf(d->dev, sizeof(d->dev), "/dev/dm-%u", minor(dev));
	mkdir(d->mnt, 0755);
	return mount(d->dev, d->mnt, "ext2", MS_RDONLY, NULL);
}

/* From now on every read of the device fails. */
static inline int dm_disk_fail(struct dm_disk *d)
{
	if (dm_ioctl(DM_TABLE_LOAD, d->name, "error", d->sectors, "", 0, NULL))
		return -1;
	return dm_ioctl(DM_DEV_SUSPEND, d->name, NULL, 0, NULL, 0, NULL);
}

/*
 * From now on every read of the device waits @ms milliseconds (the delay
 * target); 0: reads go straight to the loop device again (linear). Either
 * way the swap waits for the reads in flight.
 */
static inline int dm_disk_delay(struct dm_disk *d, unsigned int ms)
{
	char params[64];

	if (ms)
		snprintf(params, sizeof(params), "%s 0 %u", d->loop, ms);
	else
		snprintf(params, sizeof(params), "%s 0", d->loop);
	if (dm_ioctl(DM_TABLE_LOAD, d->name, ms ? "delay" : "linear", d->sectors,
		     params, 0, NULL))
		return -1;
	return dm_ioctl(DM_DEV_SUSPEND, d->name, NULL, 0, NULL, 0, NULL);
}

/* Unmounts and removes the device; the loop device goes with it. */
static inline void dm_disk_teardown(struct dm_disk *d)
{
	umount2(d->mnt, MNT_DETACH);
	dm_ioctl(DM_DEV_REMOVE, d->name, NULL, 0, NULL, 0, NULL);
	rmdir(d->mnt);
}

/*
 * Waits until thread @tid (once set) sleeps uninterruptibly: 'D', in the
 * read of the slow disk. 0, or -1 if it never does within 2 s.
 */
static inline int dm_wait_read(const int *tid)
{
	int i;

	for (i = 0; i < 20000; i++) {
		pid_t t = load_acquire(tid);

		if (t && task_state(t) == 'D')
			return 0;
		usleep(100);
	}
	return -1;
}

/* A thread that maps @fd over @at (MAP_FIXED, PROT_READ | PROT_EXEC). */
struct dm_mapper {
	void *at;
	size_t len;
	int fd;
	pid_t tid;
	int mapped;	/* 1: mmap() returned, -1: failed */
	__u64 returned;	/* when mmap() returned (now_ns()) */
};

static inline void *dm_mapper_run(void *arg)
{
	struct dm_mapper *a = arg;
	void *p;

	store_release(&a->tid, gettid());
	p = mmap(a->at, a->len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, a->fd, 0);
	a->returned = now_ns();
	store_release(&a->mapped, p == MAP_FAILED ? -1 : 1);
	return NULL;
}

/*
 * Starts @a's thread, and waits until it sleeps in the read of its
 * mapping (the slow disk), the build-id read on its way back to user
 * space: 0, or -1 if it never does.
 */
static inline int dm_mapper_start(pthread_t *t, struct dm_mapper *a)
{
	if (pthread_create(t, NULL, dm_mapper_run, a))
		return -1;
	return dm_wait_read(&a->tid);
}

#endif /* MMAP3_DM_H */
