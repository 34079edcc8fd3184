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

#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mmap3_util.h"

struct dm_disk {
	char name[32];
	char mnt[64];
	char img[64];
	char loop[32];
	char dev[32];
	uint64_t sectors;
};

static inline int dm_ioctl(unsigned long cmd, const char *name,
			   const char *target, uint64_t sectors,
			   const char *params, uint32_t flags, uint64_t *dev)
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

/* A copy of the ext2 image on loop1, under dm device @name, mounted ro. */
static inline int dm_disk_setup(struct dm_disk *d, const char *name)
{
	char cmd[256], params[64];
	uint64_t dev, bytes;
	int fd;

	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->img, sizeof(d->img), "/tmp/%s.img", name);
	snprintf(d->mnt, sizeof(d->mnt), "/tmp/%s", name);
	snprintf(d->loop, sizeof(d->loop), "/dev/loop1");
	snprintf(cmd, sizeof(cmd), "cp /disk.img %s && losetup %s %s",
		 d->img, d->loop, d->img);
	if (system(cmd))
		return -1;
	fd = open(d->loop, O_RDONLY);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes))
		return -1;
	close(fd);
	d->sectors = bytes / 512;
	snprintf(params, sizeof(params), "%s 0", d->loop);
	if (dm_ioctl(DM_DEV_CREATE, name, NULL, 0, NULL, 0, NULL) ||
	    dm_ioctl(DM_TABLE_LOAD, name, "linear", d->sectors, params, 0, NULL) ||
	    dm_ioctl(DM_DEV_SUSPEND, name, NULL, 0, NULL, 0, &dev))
		return -1;
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

static inline void dm_disk_teardown(struct dm_disk *d)
{
	char cmd[128];

	umount2(d->mnt, MNT_DETACH);
	dm_ioctl(DM_DEV_REMOVE, d->name, NULL, 0, NULL, 0, NULL);
	snprintf(cmd, sizeof(cmd), "losetup -d %s; rm -f %s", d->loop, d->img);
	if (system(cmd))
		return;
}

#endif /* MMAP3_DM_H */
