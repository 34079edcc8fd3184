/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small FUSE server for the MMAP3 selftests, on /dev/fuse without libfuse:
 * one process, one thread, serving one regular file, FUSE_FILE_NAME, at the
 * root of its mount. The file's bytes and attributes live in memory shared
 * with the test, which changes them at will (a FUSE server controls the
 * inode number, generation, size and times the kernel sees). Entries and
 * attributes are never cached by the kernel (timeouts 0), and each open
 * drops the file's page cache (no FOPEN_KEEP_CACHE): every read the kernel
 * makes after an open is answered from the current bytes.
 *
 * The server also takes one command from the test, over a pipe: map a file
 * the test has open, PROT_EXEC, with an mmap3 event on itself, and send back
 * the MMAP3 record (the test kernel has no AF_UNIX: the server takes the
 * file with pidfd_getfd()). When that file is on its own mount, only
 * the server itself can answer the reads the record needs. (It never
 * closes such a file: close(2) sends FLUSH, which only it could answer.)
 *
 * fuse_server_stop() aborts the connection (fusectl) before it ends the
 * server, so that no task waits for an answer that will not come, a stuck
 * server included. fuse_server_cleanup() does what another process can do
 * (a harness's FIXTURE_TEARDOWN_PARENT): abort, unmount; the server then
 * ends on its own (its command pipe is closed, or its /dev/fuse is dead).
 */
#ifndef MMAP3_FUSE_H
#define MMAP3_FUSE_H

#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/fuse.h>

#include "mmap3_util.h"

#define FUSE_FILE_NAME	"prog.elf"
#define FUSE_FILE_NODE	2
#define FUSE_FILE_MAX	(64 << 10)
#define FUSE_MAX_WRITE	(64 << 10)
/* A request: its header, its arguments, and at most max_write bytes. */
#define FUSE_BUF_SIZE	(FUSE_MAX_WRITE + 4096)

/* The served file; in MAP_SHARED memory, written by the test. */
struct fuse_file {
	uint64_t ino;
	uint64_t generation;
	uint64_t mtime, ctime;		/* seconds */
	uint32_t mtimensec, ctimensec;
	uint32_t size;
	uint32_t open_flags;		/* FOPEN_* in OPEN replies */
	uint32_t reads;			/* READ requests answered */
	/*
	 * READ requests to interrupt: the server sends the reading task a
	 * SIGUSR1, holds the READ until the kernel's FUSE_INTERRUPT for it
	 * comes, and answers it -EINTR, as a server that honours interrupts
	 * does.
	 */
	uint32_t interrupt_reads;
	uint32_t interrupted;		/* READ requests so answered */
	uint64_t held;			/* the READ held, or 0 */
	uint8_t data[FUSE_FILE_MAX];
};

struct fuse_server {
	char mnt[64];
	dev_t dev;			/* of the mount: its fusectl directory */
	pid_t pid;
	int cmd;			/* to the server: struct fuse_cmd */
	int ctl;			/* from the server: ready, results */
	struct fuse_file *file;
};

/* A command: 'M' (map @fd, a file descriptor of the test, PROT_EXEC). */
struct fuse_cmd {
	char op;
	int fd;
};

/* What the server sends back for a command. */
struct fuse_self_map {
	int err;			/* errno of a failed mmap3_map(), else 0 */
	struct mmap3_capture c;
};

/* Why the server ended: its exit status, which fuse_server_gone() names. */
enum fuse_end {
	FUSE_END_DONE,		/* the test closed the command pipe */
	FUSE_END_ERROR,		/* a call failed: said on stderr */
	FUSE_END_CONN,		/* the connection is gone: aborted or unmounted */
};

static inline int fuse_reply(int dev, uint64_t unique, int error,
			     const void *arg, size_t size)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + (error ? 0 : size),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &out, .iov_len = sizeof(out) },
		{ .iov_base = (void *)arg, .iov_len = size },
	};

	/* ENOENT: the request was interrupted meanwhile; nothing to do. */
	return writev(dev, iov, error || !size ? 1 : 2) == out.len ? 0 : -1;
}

static inline void fuse_fill_attr(const struct fuse_file *f, uint64_t node,
				  struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->atime = f->mtime;
	a->mtime = f->mtime;
	a->ctime = f->ctime;
	a->atimensec = f->mtimensec;
	a->mtimensec = f->mtimensec;
	a->ctimensec = f->ctimensec;
	a->blksize = 4096;
	if (node == FUSE_ROOT_ID) {
		a->ino = FUSE_ROOT_ID;
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->ino = f->ino;
		a->mode = S_IFREG | 0755;
		a->nlink = 1;
		a->size = f->size;
		a->blocks = (f->size + 511) / 512;
	}
}

/* Answers one request; returns 1 for INIT (the mount is ready), else 0. */
static inline int fuse_serve(int dev, struct fuse_file *f, const uint8_t *buf)
{
	const struct fuse_in_header *in = (const void *)buf;
	const void *arg = in + 1;

	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *init = arg;
		struct fuse_init_out out = {
			.major = FUSE_KERNEL_VERSION,
			.minor = FUSE_KERNEL_MINOR_VERSION,
			.max_readahead = init->max_readahead,
			.max_background = 16,
			.congestion_threshold = 12,
			.max_write = FUSE_MAX_WRITE,
			.time_gran = 1,
		};

		if (init->major != FUSE_KERNEL_VERSION) {
			fuse_reply(dev, in->unique, -EPROTO, NULL, 0);
			return 0;
		}
		fuse_reply(dev, in->unique, 0, &out, sizeof(out));
		return 1;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out out = { 0 };

		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, FUSE_FILE_NAME)) {
			fuse_reply(dev, in->unique, -ENOENT, NULL, 0);
			break;
		}
		out.nodeid = FUSE_FILE_NODE;
		out.generation = f->generation;
		fuse_fill_attr(f, FUSE_FILE_NODE, &out.attr);
		fuse_reply(dev, in->unique, 0, &out, sizeof(out));
		break;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out out = { 0 };

		fuse_fill_attr(f, in->nodeid, &out.attr);
		fuse_reply(dev, in->unique, 0, &out, sizeof(out));
		break;
	}
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fuse_open_out out = {
			.fh = in->nodeid,
			.open_flags = in->opcode == FUSE_OPEN ? f->open_flags : 0,
		};

		fuse_reply(dev, in->unique, 0, &out, sizeof(out));
		break;
	}
	case FUSE_READ: {
		const struct fuse_read_in *rd = arg;
		uint64_t n = 0;

		if (f->interrupt_reads && in->pid > 0 && !f->held) {
			f->interrupt_reads--;
			f->held = in->unique;
			kill(in->pid, SIGUSR1);
			break;
		}
		if (rd->offset < f->size) {
			n = f->size - rd->offset;
			if (n > rd->size)
				n = rd->size;
		}
		f->reads++;
		fuse_reply(dev, in->unique, 0, n ? f->data + rd->offset : NULL, n);
		break;
	}
	case FUSE_STATFS: {
		struct fuse_statfs_out out = {
			.st = { .bsize = 4096, .frsize = 4096, .namelen = 255 },
		};

		fuse_reply(dev, in->unique, 0, &out, sizeof(out));
		break;
	}
	case FUSE_READDIR:	/* an empty directory: the file is found by name */
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
	case FUSE_ACCESS:
	case FUSE_DESTROY:
		fuse_reply(dev, in->unique, 0, NULL, 0);
		break;
	case FUSE_INTERRUPT: {
		const struct fuse_interrupt_in *intr = arg;

		/* Any other interrupted request gets its answer anyway. */
		if (f->held && intr->unique == f->held) {
			fuse_reply(dev, f->held, -EINTR, NULL, 0);
			f->held = 0;
			f->interrupted++;
		}
		break;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
		break;
	default:
		/* FUSE's "not implemented": the kernel stops asking for it. */
		fuse_reply(dev, in->unique, -ENOSYS, NULL, 0);
		break;
	}
	return 0;
}

/* The file @fd of process @pid, as a file descriptor of the caller. */
static inline int fuse_get_fd(pid_t pid, int fd)
{
	int pidfd = syscall(__NR_pidfd_open, pid, 0), ret;

	if (pidfd < 0)
		return -1;
	ret = syscall(__NR_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return ret;
}

/*
 * Sends @cmd to the server. Returns 0, or -1 with errno (EPIPE: the server
 * has ended; fuse_server_gone() says how).
 */
static inline int fuse_server_cmd(struct fuse_server *s, char op, int fd)
{
	struct fuse_cmd cmd = { .op = op, .fd = fd };

	return write(s->cmd, &cmd, sizeof(cmd)) == sizeof(cmd) ? 0 : -1;
}

/* How the server ended, in @buf, or "it is still running". */
static inline const char *fuse_server_gone(struct fuse_server *s, char *buf, size_t len)
{
	static const char *const why[] = {
		[FUSE_END_DONE] = "the test closed its command pipe",
		[FUSE_END_ERROR] = "a call failed (said above)",
		[FUSE_END_CONN] = "its connection is gone (aborted or unmounted)",
	};
	int status, tries = 100;
	pid_t got = 0;

	/* Its files are closed a little before it can be waited for. */
	while (s->pid > 0 && !(got = waitpid(s->pid, &status, WNOHANG)) && tries--)
		usleep(10000);
	if (s->pid <= 0 || got < 0)
		snprintf(buf, len, "it cannot be waited for: %s",
			 strerror(s->pid > 0 ? errno : ESRCH));
	else if (got != s->pid)
		snprintf(buf, len, "it is still running");
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "it was killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status) < ARRAY_SIZE(why))
		snprintf(buf, len, "it ended: %s", why[WEXITSTATUS(status)]);
	else
		snprintf(buf, len, "it exited with status %d", WEXITSTATUS(status));
	if (got > 0)
		s->pid = 0;		/* reaped */
	return buf;
}

/*
 * Reads the server's answer to a command into @res, waiting at most
 * @timeout_ms for it. Returns 0, or -1 (errno ETIMEDOUT: no answer).
 */
static inline int fuse_server_result(struct fuse_server *s, struct fuse_self_map *res,
				     int timeout_ms)
{
	struct pollfd pfd = { .fd = s->ctl, .events = POLLIN };
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(*res)) {
		if (poll(&pfd, 1, timeout_ms) != 1) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = read(s->ctl, (char *)res + got, sizeof(*res) - got);
		if (n <= 0) {
			errno = n ? errno : EPIPE;
			return -1;
		}
		got += n;
	}
	return 0;
}

/* The server's failed @what, on stderr as a TAP comment. */
static inline int fuse_server_error(const char *what)
{
	fprintf(stderr, "# the FUSE server ends: %s: %s\n", what, strerror(errno));
	return FUSE_END_ERROR;
}

/*
 * The server process: mounts, says 'R' on @ctl once the kernel's INIT is
 * answered (or 'E' and the errno if the mount fails), then serves, and
 * takes commands from @cmd, until the mount goes away or the test closes
 * @cmd. Returns an enum fuse_end.
 */
static inline int fuse_server_main(const char *mnt, struct fuse_file *f,
				   int cmd, int ctl)
{
	uint8_t *buf = malloc(FUSE_BUF_SIZE);
	char opts[128], reply[1 + sizeof(int)];
	int dev, err;

	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", dev);
	if (!buf || dev < 0 ||
	    mount("mmap3-fuse", mnt, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		err = errno;
		reply[0] = 'E';
		memcpy(reply + 1, &err, sizeof(err));
		return write(ctl, reply, sizeof(reply)) < 0 ? FUSE_END_ERROR : FUSE_END_DONE;
	}
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = dev, .events = POLLIN },
			{ .fd = cmd, .events = POLLIN },
		};
		ssize_t n;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return fuse_server_error("poll");
		}
		if (pfd[0].revents & (POLLERR | POLLHUP))
			return FUSE_END_CONN;
		if (pfd[0].revents & POLLIN) {
			n = read(dev, buf, FUSE_BUF_SIZE);
			if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
				continue;
			if (n < 0 && errno == ENODEV)
				return FUSE_END_CONN;
			if (n < 0)
				return fuse_server_error("read /dev/fuse");
			if (n < (ssize_t)sizeof(struct fuse_in_header)) {
				errno = EPROTO;
				return fuse_server_error("short request");
			}
			if (fuse_serve(dev, f, buf) && write(ctl, "R", 1) != 1)
				return fuse_server_error("write to the test");
		}
		if (pfd[1].revents & (POLLIN | POLLHUP)) {
			struct fuse_self_map res = { 0 };
			struct fuse_cmd c;
			int fd;

			n = read(cmd, &c, sizeof(c));
			if (n <= 0)
				return FUSE_END_DONE;
			if (n != sizeof(c) || c.op != 'M') {
				errno = EPROTO;
				return fuse_server_error("command");
			}
			fd = fuse_get_fd(getppid(), c.fd);
			if (fd < 0)
				return fuse_server_error("pidfd_getfd");
			/* This process, which alone answers this mount. */
			if (mmap3_map_exec(fd, &res.c))
				res.err = errno;
			/* fd stays open: closing it would wait for our own FLUSH. */
			if (write(ctl, &res, sizeof(res)) != sizeof(res))
				return fuse_server_error("write to the test");
		}
	}
}

#define FUSECTL	"/sys/fs/fuse/connections"

/* Aborts the connection of @dev: every request, pending or to come, fails. */
static inline int fuse_abort(dev_t dev)
{
	char path[128];
	bool mounted = false;
	int fd, ret;

	snprintf(path, sizeof(path), FUSECTL "/%u/abort", minor(dev));
	if (access(path, F_OK)) {
		if (mount("fusectl", FUSECTL, "fusectl", 0, NULL))
			return -1;
		mounted = true;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ret = fd >= 0 && write(fd, "1", 1) == 1 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	if (mounted)
		umount2(FUSECTL, MNT_DETACH);
	return ret;
}

/* From any process: aborts the connection, unmounts. */
static inline void fuse_server_cleanup(const struct fuse_server *s)
{
	if (s->dev)
		fuse_abort(s->dev);
	if (s->mnt[0]) {
		umount2(s->mnt, MNT_DETACH);
		rmdir(s->mnt);
	}
}

/*
 * From the process that started the server: aborts the connection,
 * unmounts, ends the server (even one stuck in the kernel), cleans up.
 */
static inline void fuse_server_stop(struct fuse_server *s)
{
	if (s->dev)
		fuse_abort(s->dev);
	s->dev = 0;
	if (s->mnt[0])
		umount2(s->mnt, MNT_DETACH);
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
	if (s->cmd >= 0)
		close(s->cmd);
	s->cmd = -1;
	if (s->ctl >= 0)
		close(s->ctl);
	s->ctl = -1;
	if (s->mnt[0])
		rmdir(s->mnt);
	s->mnt[0] = 0;
	if (s->file)
		munmap(s->file, sizeof(*s->file));
	s->file = NULL;
}

/*
 * Starts a server on @mnt (created) for @content (@size bytes) with an
 * inode number, generation and times picked at random, so that no two
 * servers' files look alike to a cache keyed by device, inode number and
 * generation (a new mount may get the device number of an old one). Returns
 * 0 once the mount answers, or -1 with a message in @err and nothing left
 * behind.
 */
static inline int fuse_server_start(struct fuse_server *s, const char *mnt,
				    const void *content, size_t size,
				    char *err, size_t errlen)
{
	char reply[1 + sizeof(int)];
	struct pollfd pfd;
	struct stat st;
	uint64_t rnd[2];
	int to[2], from[2], e;
	pid_t pid;

	memset(s, 0, sizeof(*s));
	s->cmd = -1;
	s->ctl = -1;
	if (size > FUSE_FILE_MAX) {
		snprintf(err, errlen, "content of %zu bytes, more than %d", size, FUSE_FILE_MAX);
		return -1;
	}
	s->file = mmap(NULL, sizeof(*s->file), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->file == MAP_FAILED) {
		s->file = NULL;
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		return -1;
	}
	if (getentropy(rnd, sizeof(rnd))) {
		snprintf(err, errlen, "getentropy: %s", strerror(errno));
		goto fail;
	}
	s->file->ino = (rnd[0] & 0xffffff) + 100;
	s->file->generation = (uint32_t)rnd[1];
	s->file->mtime = 1600000000 + (rnd[1] >> 40);
	s->file->ctime = s->file->mtime;
	s->file->size = size;
	memcpy(s->file->data, content, size);
	if (mkdir(mnt, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", mnt, strerror(errno));
		goto fail;
	}
	snprintf(s->mnt, sizeof(s->mnt), "%s", mnt);
	if (pipe2(to, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	s->cmd = to[1];
	if (pipe2(from, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(to[0]);
		goto fail;
	}
	s->ctl = from[0];
	/*
	 * A write to a server that has ended fails with EPIPE, which the test
	 * reports with how it ended (fuse_server_gone()), rather than ending
	 * the test unexplained; the server writes to the test likewise.
	 */
	signal(SIGPIPE, SIG_IGN);
	/* *s may be shared with the server (a harness's MAP_SHARED fixture). */
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(to[0]);
		close(from[1]);
		goto fail;
	}
	if (!pid) {
		close(to[1]);
		close(from[0]);
		_exit(fuse_server_main(s->mnt, s->file, to[0], from[1]));
	}
	s->pid = pid;
	close(to[0]);
	close(from[1]);
	pfd.fd = s->ctl;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1 || read(s->ctl, reply, sizeof(reply)) < 1) {
		snprintf(err, errlen, "the server did not answer the kernel's INIT in 10 s");
		goto fail;
	}
	if (reply[0] != 'R') {
		memcpy(&e, reply + 1, sizeof(e));
		snprintf(err, errlen, "mounting FUSE on %s: %s", mnt, strerror(e));
		goto fail;
	}
	if (stat(mnt, &st)) {
		snprintf(err, errlen, "stat %s: %s", mnt, strerror(errno));
		goto fail;
	}
	s->dev = st.st_dev;
	return 0;
fail:
	fuse_server_stop(s);
	return -1;
}

#endif /* MMAP3_FUSE_H */
