// SPDX-License-Identifier: GPL-2.0
/*
 * perfdata: which build-id a perf.data file gives each user-space sample,
 * against the build-ids the files really have.
 *
 *   perfdata FILE MANIFEST
 *
 * MANIFEST has one line "<path> <build-id hex>" per file whose build-id is
 * known (make bench writes it from readelf -n on the host), and may have
 * lines "pid <pid> <group> <path> <build-id hex>": the file that process
 * really mapped at <path> (a path that named another file before or after,
 * as a library replaced by rename while old processes run it), and the
 * group its samples are also counted in. A mapping record whose name ends
 * in " (deleted)" (perf synthesizes them so from /proc/PID/maps for files
 * deleted or replaced since they were mapped) is of a known file only
 * through such a line: the path now names another file, or none.
 *
 * The records are put in time order (perf record writes them per CPU, in
 * rounds), then replayed as perf does: a process's mappings come from its
 * MMAP, MMAP2 and MMAP3 records, a new process (FORK) starts with its
 * parent's, an exec (COMM with PERF_RECORD_MISC_COMM_EXEC) drops them. A
 * user-space sample is attributed to the newest mapping of its process
 * that holds its ip, and gets the build-id perf would give it:
 *   - the mapping record's own (MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID,
 *     MMAP3 with a build-id);
 *   - else the one of the file's build-id table (HEADER_BUILD_ID, which perf
 *     record writes at the end of the session for the files with samples:
 *     read from the files then, or, with --mmap3, taken from the records);
 *   - else none.
 * Prints one "bench ..." line ($BENCH_TAG first): the samples, the user
 * ones, those in files of MANIFEST ("known") with the right build-id, a
 * wrong one, or none; lost records and samples; the mapping records. Then
 * one "bench ... test=perfdata-group" line per group of the pid lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/perf_event.h>

#define BID_MAX		20
#define MAX_PROCS	(1 << 17)	/* a hash table of processes, by pid */
#define MAX_FILES	4096
#define HEADER_BUILD_ID	2	/* the feature bit (tools/perf/util/header.h) */
#define PERF_RECORD_FINISHED_ROUND	68
#define MISC_BUILD_ID_SIZE		(1 << 15)

static void die(const char *what)
{
	fprintf(stderr, "perfdata: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
	exit(1);
}

struct section {
	uint64_t offset, size;
};

struct file_header {
	char magic[8];
	uint64_t size, attr_size;
	struct section attrs, data, event_types;
	uint64_t features[4];
};

/* A file name, its build-id from MANIFEST (size 0: not in it) and from the table. */
struct file {
	char *path;
	uint8_t truth[BID_MAX], table[BID_MAX];
	int truth_size, table_size;
};

static struct file files[MAX_FILES];
static int nfiles;

#define MAX_PID_TRUTHS	1024
#define MAX_GROUPS	16
#define DELETED		" (deleted)"

/* A pid line of MANIFEST: what that process mapped at path. */
struct pid_truth {
	uint32_t pid;
	int group;
	char *path;
	uint8_t truth[BID_MAX];
	int truth_size;
};

static struct pid_truth pid_truths[MAX_PID_TRUTHS];
static int npid_truths;

static struct group {
	char *name;
	unsigned long long known, right, wrong, none;
} groups[MAX_GROUPS];
static int ngroups;

static int group_get(const char *name)
{
	int i;

	for (i = 0; i < ngroups; i++)
		if (!strcmp(groups[i].name, name))
			return i;
	if (ngroups == MAX_GROUPS) {
		errno = 0;
		die("too many groups");
	}
	groups[ngroups].name = strdup(name);
	return ngroups++;
}

static struct file *file_get(const char *path)
{
	int i;

	for (i = 0; i < nfiles; i++)
		if (!strcmp(files[i].path, path))
			return &files[i];
	if (nfiles == MAX_FILES) {
		errno = 0;
		die("too many files");
	}
	files[nfiles].path = strdup(path);
	return &files[nfiles++];
}

struct map {
	uint64_t start, end;
	struct file *file;
	uint8_t bid[BID_MAX];
	int bid_size;
	bool pending;	/* an MMAP3 that said PENDING, not answered yet */
};

struct proc {
	uint32_t pid;
	bool used;
	int nmaps, cap;
	struct map *maps;
};

static struct proc procs[MAX_PROCS];
static int nprocs;

static struct proc *proc_get(uint32_t pid)
{
	uint32_t i = (pid * 2654435761u) % MAX_PROCS;

	while (procs[i].used && procs[i].pid != pid)
		i = (i + 1) % MAX_PROCS;
	if (!procs[i].used) {
		if (++nprocs > MAX_PROCS / 2) {
			errno = 0;
			die("too many processes");
		}
		procs[i].used = true;
		procs[i].pid = pid;
	}
	return &procs[i];
}

static void map_add(uint32_t pid, struct map *m)
{
	struct proc *p = proc_get(pid);

	if (p->nmaps == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->maps = realloc(p->maps, p->cap * sizeof(*p->maps));
		if (!p->maps)
			die("realloc");
	}
	p->maps[p->nmaps++] = *m;
}

/* A record to replay, and its time. */
struct event {
	uint64_t time, seq;
	const struct perf_event_header *h;
};

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int hex(const char *s, uint8_t *out)
{
	int n = 0;

	while (s[0] && s[1] && n < BID_MAX) {
		unsigned int v;

		if (sscanf(s, "%2x", &v) != 1)
			return -1;
		out[n++] = v;
		s += 2;
	}
	return n;
}

/*
 * The build-id of the file that @pid mapped as @f, and the process's group
 * (-1: none); NULL when the file is not known.
 */
static const uint8_t *truth_of(uint32_t pid, const struct file *f, int *size, int *group)
{
	size_t len = strlen(f->path), dl = strlen(DELETED);
	bool deleted = len > dl && !strcmp(f->path + len - dl, DELETED);
	const uint8_t *id = NULL;
	int i;

	if (deleted)
		len -= dl;	/* the path it had when it was mapped */
	*group = -1;
	for (i = 0; i < npid_truths; i++) {
		const struct pid_truth *t = &pid_truths[i];

		if (t->pid != pid)
			continue;
		*group = t->group;
		if (strlen(t->path) == len && !strncmp(t->path, f->path, len)) {
			*size = t->truth_size;
			id = t->truth;
		}
	}
	/* A deleted file is not the one now at its path. */
	if (!id && !deleted && f->truth_size) {
		*size = f->truth_size;
		id = f->truth;
	}
	return id;
}

/* Bytes of the sample_id trailer (attr.sample_id_all) for @type. */
static int trailer_size(uint64_t type)
{
	return 8 * !!(type & PERF_SAMPLE_TID) + 8 * !!(type & PERF_SAMPLE_TIME) +
	       8 * !!(type & PERF_SAMPLE_ID) + 8 * !!(type & PERF_SAMPLE_STREAM_ID) +
	       8 * !!(type & PERF_SAMPLE_CPU) + 8 * !!(type & PERF_SAMPLE_IDENTIFIER);
}

int main(int argc, char **argv)
{
	unsigned long long samples = 0, user = 0, known = 0, right = 0, wrong = 0, none = 0,
			   unmapped = 0, lost = 0, lost_samples = 0, nmmap = 0, nmmap2 = 0,
			   nmmap2bid = 0, nmmap3 = 0, nmmap3found = 0, records = 0;
	uint64_t sample_type = 0, side_type = 0, off, end, nevents = 0;
	const char *tag = getenv("BENCH_TAG");
	struct file_header fh;
	struct event *events;
	char line[1024], path[900], bid[64], group[64];
	unsigned int tpid;
	unsigned char *buf;
	struct stat st;
	FILE *mf;
	int fd, i;
	uint64_t k;

	if (argc != 3) {
		fprintf(stderr, "usage: perfdata FILE MANIFEST\n");
		return 2;
	}
	mf = fopen(argv[2], "r");
	if (!mf)
		die(argv[2]);
	while (fgets(line, sizeof(line), mf)) {
		struct file *f;

		if (sscanf(line, "pid %u %63s %899s %63s", &tpid, group, path, bid) == 4) {
			struct pid_truth *t = &pid_truths[npid_truths];

			if (npid_truths == MAX_PID_TRUTHS) {
				errno = 0;
				die("too many pid lines");
			}
			t->pid = tpid;
			t->group = group_get(group);
			t->path = strdup(path);
			t->truth_size = hex(bid, t->truth);
			npid_truths++;
			continue;
		}
		if (sscanf(line, "%899s %63s", path, bid) != 2)
			continue;
		f = file_get(path);
		f->truth_size = hex(bid, f->truth);
	}
	fclose(mf);

	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		die(argv[1]);
	buf = malloc(st.st_size);
	if (!buf || read(fd, buf, st.st_size) != st.st_size)
		die("read");
	close(fd);
	errno = 0;
	if ((size_t)st.st_size < sizeof(fh))
		die("not a perf.data file");
	memcpy(&fh, buf, sizeof(fh));
	if (memcmp(fh.magic, "PERFILE2", 8) || fh.data.offset + fh.data.size > (uint64_t)st.st_size)
		die("not a perf.data file (or not of this endianness, or a pipe)");

	/* The sampling event's sample_type, and the side-band event's. */
	for (off = fh.attrs.offset; off + fh.attr_size <= fh.attrs.offset + fh.attrs.size;
	     off += fh.attr_size) {
		struct perf_event_attr attr = { 0 };
		const struct perf_event_attr *a = (const void *)(buf + off);
		size_t n = a->size < sizeof(attr) ? a->size : sizeof(attr);

		memcpy(&attr, a, n);
		if (attr.mmap || attr.mmap2 || attr.mmap3)
			side_type = attr.sample_type;
		if (!(attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_DUMMY))
			sample_type = attr.sample_type;
	}
	if (!(sample_type & PERF_SAMPLE_IP) || !(sample_type & PERF_SAMPLE_TID) ||
	    !(sample_type & PERF_SAMPLE_TIME) || !(side_type & PERF_SAMPLE_TIME))
		die("the samples need ip, tid and time, the side-band records time");

	/* The build-id table. */
	if (fh.features[0] & (1ull << HEADER_BUILD_ID)) {
		const struct section *sec = (const void *)(buf + fh.data.offset + fh.data.size);
		uint64_t p;

		sec += __builtin_popcountll(fh.features[0] & ((1ull << HEADER_BUILD_ID) - 1));
		for (p = sec->offset; p + sizeof(struct perf_event_header) <= sec->offset + sec->size;) {
			const struct perf_event_header *h = (const void *)(buf + p);
			const uint8_t *id = buf + p + sizeof(*h) + 4;
			struct file *f;

			if (h->size < sizeof(*h) + 4 + 24)
				break;
			f = file_get((const char *)id + 24);
			f->table_size = h->misc & MISC_BUILD_ID_SIZE ? id[20] : BID_MAX;
			if (f->table_size > BID_MAX)
				f->table_size = BID_MAX;
			memcpy(f->table, id, f->table_size);
			p += h->size;
		}
	}

	/* The records to replay, in time order. */
	events = malloc(sizeof(*events) * (fh.data.size / sizeof(struct perf_event_header) + 1));
	if (!events)
		die("malloc");
	end = fh.data.offset + fh.data.size;
	for (off = fh.data.offset; off + sizeof(struct perf_event_header) <= end;) {
		const struct perf_event_header *h = (const void *)(buf + off);
		const uint64_t *u = (const void *)(h + 1);
		uint64_t time;

		if (h->size < sizeof(*h) || off + h->size > end)
			die("a record runs past the data section");
		records++;
		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			samples++;
			u += !!(sample_type & PERF_SAMPLE_IDENTIFIER) + 1 /* ip */ + 1 /* tid */;
			time = *u;
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_MMAP3:
		case PERF_RECORD_MMAP3_BUILD_ID:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK: {
			const uint8_t *t = (const uint8_t *)h + h->size - trailer_size(side_type);

			t += 8 * !!(side_type & PERF_SAMPLE_TID);
			memcpy(&time, t, 8);
			break;
		}
		case PERF_RECORD_LOST:
			lost += u[1];
			off += h->size;
			continue;
		case PERF_RECORD_LOST_SAMPLES:
			lost_samples += u[0];
			off += h->size;
			continue;
		default:
			off += h->size;
			continue;
		}
		events[nevents].time = time;
		events[nevents].seq = nevents;
		events[nevents].h = h;
		nevents++;
		off += h->size;
	}
	qsort(events, nevents, sizeof(*events), event_cmp);

	for (k = 0; k < nevents; k++) {
		const struct perf_event_header *h = events[k].h;
		const uint32_t *w = (const void *)(h + 1);
		const uint64_t *u = (const void *)(h + 1);
		struct map m = { 0 };

		switch (h->type) {
		case PERF_RECORD_MMAP: {	/* pid tid addr len pgoff filename */
			nmmap++;
			m.start = u[1];
			m.end = u[1] + u[2];
			m.file = file_get((const char *)(u + 4));
			map_add(w[0], &m);
			break;
		}
		case PERF_RECORD_MMAP2: {
			const struct {
				struct perf_event_header h;
				uint32_t pid, tid;
				uint64_t addr, len, pgoff;
				uint8_t bid_size, r1;
				uint16_t r2;
				uint8_t bid[20];
				uint32_t prot, flags;
				char filename[];
			} *r = (const void *)h;

			nmmap2++;
			m.start = r->addr;
			m.end = r->addr + r->len;
			m.file = file_get(r->filename);
			if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				nmmap2bid++;
				m.bid_size = r->bid_size > BID_MAX ? BID_MAX : r->bid_size;
				memcpy(m.bid, r->bid, m.bid_size);
			}
			map_add(r->pid, &m);
			break;
		}
		case PERF_RECORD_MMAP3: {	/* DESIGN.md */
			const struct {
				struct perf_event_header h;
				uint32_t pid, tid;
				uint64_t addr, len, pgoff;
				uint32_t maj, min;
				uint64_t ino, ino_generation;
				uint32_t prot, flags;
				uint8_t bid_size, status;
				uint16_t reserved;
				uint8_t bid[20];
				char filename[];
			} *r = (const void *)h;

			nmmap3++;
			nmmap3found += r->bid_size > 0;
			m.start = r->addr;
			m.end = r->addr + r->len;
			m.file = file_get(r->filename);
			m.bid_size = r->bid_size > BID_MAX ? BID_MAX : r->bid_size;
			memcpy(m.bid, r->bid, m.bid_size);
			m.pending = r->status == PERF_MMAP3_BUILD_ID_PENDING;
			map_add(r->pid, &m);
			break;
		}
		case PERF_RECORD_MMAP3_BUILD_ID: {	/* DESIGN.md: a PENDING one's answer */
			const struct {
				struct perf_event_header h;
				uint32_t pid, tid;
				uint64_t addr, len, pgoff;
				uint32_t maj, min;
				uint64_t ino, ino_generation;
				uint8_t bid_size, status;
				uint16_t reserved;
				uint8_t bid[20];
			} *a = (const void *)h;
			struct proc *p = proc_get(a->pid);

			/* The task's last pending map of that range: its MMAP3. */
			for (i = p->nmaps - 1; i >= 0; i--) {
				struct map *pm = &p->maps[i];

				if (!pm->pending || pm->start != a->addr || pm->end != a->addr + a->len)
					continue;
				pm->pending = false;
				pm->bid_size = a->bid_size > BID_MAX ? BID_MAX : a->bid_size;
				memcpy(pm->bid, a->bid, pm->bid_size);
				nmmap3found += a->bid_size > 0;
				break;
			}
			break;
		}
		case PERF_RECORD_COMM:		/* pid tid comm */
			if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
				proc_get(w[0])->nmaps = 0;
			break;
		case PERF_RECORD_FORK: {	/* pid ppid tid ptid time */
			struct proc *child = proc_get(w[0]), *parent = proc_get(w[1]);

			if (w[0] == w[1])
				break;	/* a thread */
			child->nmaps = 0;
			for (i = 0; i < parent->nmaps; i++)
				map_add(w[0], &parent->maps[i]);
			break;
		}
		case PERF_RECORD_SAMPLE: {
			const uint64_t *s = u + !!(sample_type & PERF_SAMPLE_IDENTIFIER);
			uint64_t ip = s[0];
			uint32_t pid = ((const uint32_t *)(s + 1))[0];
			struct proc *p = proc_get(pid);
			const struct map *hit = NULL;
			const uint8_t *id = NULL, *truth;
			int size = 0, truth_size = 0, g;
			bool ok;

			if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER)
				break;
			user++;
			for (i = p->nmaps - 1; i >= 0 && !hit; i--)
				if (p->maps[i].start <= ip && ip < p->maps[i].end)
					hit = &p->maps[i];
			if (!hit) {
				unmapped++;
				break;
			}
			truth = truth_of(pid, hit->file, &truth_size, &g);
			if (!truth)
				break;	/* not a file of MANIFEST */
			known++;
			if (hit->bid_size) {
				id = hit->bid;
				size = hit->bid_size;
			} else if (hit->file->table_size) {
				id = hit->file->table;
				size = hit->file->table_size;
			}
			ok = id && size == truth_size && !memcmp(id, truth, size);
			if (!id)
				none++;
			else if (ok)
				right++;
			else
				wrong++;
			if (g >= 0) {
				groups[g].known++;
				groups[g].none += !id;
				groups[g].right += ok;
				groups[g].wrong += id && !ok;
			}
			break;
		}
		}
	}
	printf("bench %s%stest=perfdata bytes=%lld records=%llu samples=%llu user=%llu known=%llu right=%llu wrong=%llu none=%llu unmapped=%llu lost=%llu lost_samples=%llu mmap=%llu mmap2=%llu mmap2bid=%llu mmap3=%llu mmap3found=%llu\n",
	       tag ?: "", tag ? " " : "", (long long)st.st_size, records, samples, user, known,
	       right, wrong, none, unmapped, lost, lost_samples, nmmap, nmmap2, nmmap2bid,
	       nmmap3, nmmap3found);
	for (i = 0; i < ngroups; i++)
		printf("bench %s%stest=perfdata-group group=%s known=%llu right=%llu wrong=%llu none=%llu\n",
		       tag ?: "", tag ? " " : "", groups[i].name, groups[i].known, groups[i].right,
		       groups[i].wrong, groups[i].none);
	return 0;
}
