// SPDX-License-Identifier: GPL-2.0
/*
 * mmap3_bench: what listening for mappings costs. Prints one
 * machine-readable line per measurement ("bench KEY=VALUE ...", read by
 * scripts/bench_report.py from the guest's output).
 *
 *   mmap3_bench map FILE warm|cold ITERS CYCLES CFG...
 *	mmap+munmap of FILE (all of it, PROT_READ|PROT_EXEC, MAP_PRIVATE),
 *	ITERS calls per configuration and block; "cold" drops FILE's pages
 *	(POSIX_FADV_DONTNEED) before each call
 *   mmap3_bench exec BIN BUILDID ITERS CYCLES CFG...
 *	fork+exec+wait of BIN, with a system-wide event (one per CPU, pid -1);
 *	counts the records of BIN with BUILDID
 *   mmap3_bench threads FILE ITERS CYCLES TASKS CFG...
 *	TASKS processes, one per CPU (CPUs 0 to TASKS-1), each ITERS
 *	mmap+munmap of FILE at once, under a system-wide event; each drains
 *	the ring of its CPU. Times from the first start to the last end.
 *   mmap3_bench cold exec BIN BUILDID SAMPLES CFG...
 *   mmap3_bench cold map-bare|map-hdr FILE BUILDID SAMPLES CFG...
 *	each sample: drop the page cache, dentries and inodes (drop_caches),
 *	then time the first fork+exec+wait of BIN (a system-wide event), or
 *	the first mmap() of FILE (an event on the task), after reading its
 *	first 832 bytes as ld.so does (map-hdr) or not (map-bare); counts the
 *	sectors read from FILE's disk (/sys/dev/block/M:N/stat)
 *   mmap3_bench fork FILE BUILDID DELAY_US SAMPLES CFG...
 *	each sample: drop the page cache, then a thread, with its own event,
 *	maps FILE (map-bare: nothing read first, so that the series says
 *	PENDING and reads the note on the thread's way back to user space);
 *	DELAY_US after it went into mmap(), the main thread forks a child
 *	that exits at once: the fork() call is timed, beside the thread's
 *	mmap() (the read included)
 *   mmap3_bench events ITERS CYCLES CFG...
 *	ITERS times, perf_event_open() of the configuration's event on the
 *	task, then close(): what creating and freeing a listener costs
 *   mmap3_bench disk up IMG MNT | disk delay MS | disk down MNT
 *	IMG on /dev/loop1 behind the device-mapper device "mmap3bench",
 *	ext2, mounted read-only at MNT; "delay" swaps its table to dm-delay
 *	with MS per I/O (0: linear)
 *   mmap3_bench cover DIR warm|cold CFG...
 *	maps every file of MANIFEST with a build-id from DIR, warm (read
 *	first) or cold (dropped first), and counts the right build-ids
 *   mmap3_bench resident FILE
 *	FILE's pages in the page cache after a read, and after a drop
 *   mmap3_bench run CMD ARG...
 *	runs CMD, prints its wall time and the user and system time of it
 *	and its descendants
 *   mmap3_bench hog LEAVE_MB
 *	locks anonymous memory (MAP_POPULATE|MAP_LOCKED), 4 MiB at a time,
 *	until MemAvailable is at most LEAVE_MB, prints what it took, then
 *	sleeps until killed: the rest of the guest runs in LEAVE_MB
 *   mmap3_bench stream DIR
 *	reads every file of DIR in turn, again and again, until killed:
 *	another working set competing for the page cache
 *
 * A configuration (CFG) is what listens: none (no event), mmap2
 * (attr.mmap2), mmap2bid (attr.mmap2 + attr.build_id: upstream's
 * build-id), mmap3 (attr.mmap3, the module loaded with its cache), mmap3-nc
 * (attr.mmap3, the module loaded with cache_entries=0), event (the
 * module loaded with its cache, the trace event mmap3:build_id opened as
 * `perf record -e mmap3:build_id` opens it: a tracepoint sampled every
 * time with its raw data, MMAP2 records on the same event; on a kernel
 * without the series, what `perf record --mmap3` falls back to), idle (the
 * module loaded, no event), bare (the module not loaded, no event),
 * builtin (attr.mmap3, the module not loaded: the kernel's built-in
 * provider of the series); and,
 * for `map` only, ref: a user-space loop of REF_SCALE * ITERS iterations (about as
 * long as the loop of none) that says how fast the host runs the guest at
 * that moment, to compare two boots. `map` and `cover` open a dummy
 * software event on the task, `exec` one per CPU; the rings are mapped and
 * drained. Timed loops drain with memcpy() and parse the records after the
 * loop.
 *
 * Configurations are interleaved: each block runs every configuration
 * once, in an order rotated from block to block, so that a slow moment of
 * the (shared) host hits all of them alike; a cycle is as many blocks as
 * there are configurations, so that each runs once in each place (kernel
 * state left by the one before can change a loop's instruction count by a
 * few percent; the report averages each configuration over a cycle). All
 * configurations see the same mappings in the process: without an event,
 * an anonymous stand-in takes the ring's place, and the file is mapped at
 * MAP_AT. The event is opened, its ring mapped and the module (re)loaded
 * outside the timed loop.
 *
 * Times are CLOCK_MONOTONIC over a whole loop: make bench runs QEMU with
 * -icount, where the guest's clock counts instructions (tsc, 1 ns each);
 * without it the test kernel's clock source is jiffies (4 ms steps), and
 * only long loops can be timed. A cold loop is followed by as many drops
 * alone, timed too, for the report to subtract.
 *
 * The module is (re)loaded from $MMAP3_MODULE (default /tests/mmap3.ko)
 * when a configuration needs it in the other state; $BENCH_TAG is copied
 * into each line.
 */
#include "../kselftest/mmap3_util.h"	/* first: it defines _GNU_SOURCE */
#include "../kselftest/mmap3_dm.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define RING_PAGES	64
#define DRAIN_EVERY	64
#define MAX_CPUS	16
#define MAX_CFGS	8
#define REF_SCALE	1000
#define SETTLE_MS	200
/*
 * Where the benchmarked file is mapped: far from every other mapping, at
 * the same place in every configuration. Left to the kernel, the address
 * depends on what else is mapped (the ring or not, ASLR), and so does the
 * cost of inserting and removing the mapping in the maple tree of the
 * process, by more than what listening costs (a node split and a
 * rebalance per call, seen with perf in the guest).
 */
#define MAP_AT		((void *)0x200000000000ul)
#define STATS		"/sys/kernel/debug/mmap3/stats"
#define TP_DIR		"/sys/kernel/tracing/events/mmap3/build_id"
/* What perf record asks of a tracepoint; the raw data follows them. */
#define TP_SAMPLE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)
#define TP_RAW_AT	(sizeof(struct perf_event_header) + 5 * sizeof(uint64_t))

static void die(const char *what)
{
	fprintf(stderr, "mmap3_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static const char *tag(void)
{
	static char buf[256];
	const char *t = getenv("BENCH_TAG");

	if (t && !buf[0])
		snprintf(buf, sizeof(buf), "%s ", t);
	return buf;
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void pin_cpu0(void)
{
	pin_cpu(0);
}

/*
 * The trace event mmap3:build_id of the loaded module: its id and where
 * the fields a consumer keeps are in a sample's raw data, from its format
 * file (offsets -1 until read). A module loaded again registers the event
 * again, under another id.
 */
static struct {
	long long id;
	int addr, size, build_id;
} tp = { -1, -1, -1, -1 };

static void tp_load(void)
{
	char line[256];
	FILE *f;

	if (tp.id >= 0)
		return;
	f = fopen(TP_DIR "/id", "r");
	if (!f || fscanf(f, "%lld", &tp.id) != 1)
		die(TP_DIR "/id");
	fclose(f);
	f = fopen(TP_DIR "/format", "r");
	if (!f)
		die(TP_DIR "/format");
	/* "\tfield:u8 build_id[20];\toffset:40;\tsize:20;\tsigned:0;" */
	while (fgets(line, sizeof(line), f)) {
		char *end = strchr(line, ';'), *name, *at = strstr(line, "offset:");
		int off;

		if (!strstr(line, "field:") || !end || !at || sscanf(at, "offset:%d", &off) != 1)
			continue;
		*end = '\0';
		name = strrchr(line, ' ') + 1;
		name[strcspn(name, "[")] = '\0';
		if (!strcmp(name, "addr"))
			tp.addr = off;
		else if (!strcmp(name, "build_id_size"))
			tp.size = off;
		else if (!strcmp(name, "build_id"))
			tp.build_id = off;
	}
	fclose(f);
	if (tp.addr < 0 || tp.size < 0 || tp.build_id < 0) {
		errno = EPROTO;
		die(TP_DIR "/format");
	}
}

/*
 * The raw data of a sample of the trace event (opened with TP_SAMPLE), or
 * NULL for another record.
 */
static const unsigned char *tp_raw(const struct perf_event_header *h)
{
	const unsigned char *at = (const unsigned char *)h + TP_RAW_AT;
	uint32_t size;

	if (h->type != PERF_RECORD_SAMPLE || h->size < TP_RAW_AT + sizeof(size))
		return NULL;
	memcpy(&size, at, sizeof(size));
	if (size < tp.build_id + BUILD_ID_SIZE_MAX || h->size < TP_RAW_AT + sizeof(size) + size)
		return NULL;
	return at + sizeof(size);
}

/* The module: -1 not loaded (or unknown), 0 cache off, 1 cache on. */
static int module_state = -1;

/*
 * After a module is loaded or unloaded, the kernel has work left (freeing
 * the init sections, RCU callbacks, the vmalloc area's lazy purge), on
 * this CPU or another. Under -icount every CPU's instructions move the
 * one clock, so a loop timed at once pays for them: measured, the first
 * warm loop after an insmod took 280 ns more per call than the same loop
 * with the module loaded long before. Let the guest idle meanwhile (with
 * sleep=off, an idle guest's clock jumps ahead at no cost).
 */
static void module_settle(void)
{
	usleep(SETTLE_MS * 1000);
}

static void module_unload(void)
{
	/* Whatever is loaded goes: there is no mmap3 event open here. */
	if (syscall(__NR_delete_module, "mmap3", O_NONBLOCK)) {
		if (errno != ENOENT)
			die("delete_module mmap3");
	} else {
		module_settle();
	}
	module_state = -1;
	tp.id = -1;
}

static void module_load(int cache)
{
	const char *path = getenv("MMAP3_MODULE") ?: "/tests/mmap3.ko";
	int fd;

	if (module_state == cache)
		return;
	module_unload();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (syscall(__NR_finit_module, fd, cache ? "" : "cache_entries=0", 0))
		die("finit_module mmap3");
	close(fd);
	module_settle();
	module_state = cache;
}

/* Puts the module in the state @cfg needs; the others leave it as it is. */
static void cfg_prepare(const char *cfg)
{
	if (!strcmp(cfg, "mmap3") || !strcmp(cfg, "idle") || !strcmp(cfg, "event"))
		module_load(1);
	else if (!strcmp(cfg, "mmap3-nc"))
		module_load(0);
	else if (!strcmp(cfg, "bare") || !strcmp(cfg, "builtin"))
		module_unload();
}

/*
 * The listening event of @cfg, in @attr (the module in the state @cfg
 * needs: cfg_prepare() first); false for those with none.
 */
static bool cfg_attr(const char *cfg, struct perf_event_attr *attr)
{
	side_band_attr(attr);
	if (!strcmp(cfg, "none") || !strcmp(cfg, "ref") || !strcmp(cfg, "bare") ||
	    !strcmp(cfg, "idle"))
		return false;
	if (!strcmp(cfg, "mmap2") || !strcmp(cfg, "mmap2bid")) {
		attr->mmap = 1;		/* as perf does */
		attr->mmap2 = 1;
		attr->build_id = !strcmp(cfg, "mmap2bid");
	} else if (!strcmp(cfg, "event")) {
		tp_load();
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = tp.id;
		attr->sample_period = 1;
		attr->sample_type = TP_SAMPLE;
		attr->exclude_kernel = 0;	/* a tracepoint's regs are the kernel's */
		attr->mmap = 1;
		attr->mmap2 = 1;
	} else if (!strcmp(cfg, "mmap3") || !strcmp(cfg, "mmap3-nc") || !strcmp(cfg, "builtin")) {
		attr->mmap3 = 1;
	} else {
		errno = EINVAL;
		die(cfg);
	}
	return true;
}

/* Opens the listening event of @cfg on @pid/@cpu; -2 for those with none. */
static int cfg_open(const char *cfg, pid_t pid, int cpu)
{
	struct perf_event_attr attr;

	cfg_prepare(cfg);
	if (!cfg_attr(cfg, &attr))
		return -2;
	return sys_perf_event_open(&attr, pid, cpu, -1, 0);
}

/* The module's counters, if loaded. */
struct stats {
	long long hits, misses, deferred;
};

static void stats_read(struct stats *s)
{
	char name[32];
	long long v;
	FILE *f = fopen(STATS, "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	while (fscanf(f, "%31s %lld", name, &v) == 2) {
		if (!strcmp(name, "hits"))
			s->hits = v;
		else if (!strcmp(name, "misses"))
			s->misses = v;
		else if (!strcmp(name, "deferred"))
			s->deferred = v;
	}
	fclose(f);
}

static void stats_print(const struct stats *a, const struct stats *b)
{
	printf(" hits=%lld misses=%lld deferred=%lld",
	       b->hits - a->hits, b->misses - a->misses, b->deferred - a->deferred);
}

/*
 * What the timed loops drain the rings into: the bytes are copied out with
 * memcpy() and the ring's tail moved on, as a profiler that writes its rings
 * to a file does; the records are looked at after the loop only, so that
 * parsing them in user space is not timed (ring_drain() of mmap3_util.h
 * copies byte by byte, in time proportional to the size of the records).
 */
struct sink {
	unsigned char *buf;
	size_t len, cap;
};

static void sink_drain(struct ring *r, struct sink *s)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	size_t n = head - tail, off = tail % r->data_size, first;

	if (s->len + n > s->cap) {
		errno = ENOSPC;
		die("sink");
	}
	first = n < r->data_size - off ? n : r->data_size - off;
	memcpy(s->buf + s->len, r->data + off, first);
	memcpy(s->buf + s->len + first, r->data, n - first);
	s->len += n;
	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
}

/*
 * Calls @fn on each record in @s, counts PERF_RECORD_LOST into @lost;
 * empties @s. The records go through mmap3_util.h's reader, as those of
 * ring_drain() do: a PENDING MMAP3 record comes resolved by its answer
 * (PERF_RECORD_MMAP3_BUILD_ID), so that @fn counts the build-ids the
 * answers give. The sink may hold the rings of several CPUs one after the
 * other (cpu_events_drain()), where an answer may miss its record: the
 * reader is lenient there, as for CPU-wide events.
 */
static int sink_parse(struct sink *s, void (*fn)(const struct perf_event_header *h, void *ctx),
		      void *ctx, unsigned long long *lost)
{
	struct mmap3_reader rd = { .cpu_wide = true };
	size_t off = 0;
	int n = 0;

	while (off + sizeof(struct perf_event_header) <= s->len) {
		struct perf_event_header *h = (void *)(s->buf + off);

		if (!h->size)
			break;
		if (h->type == PERF_RECORD_LOST)
			*lost += ((uint64_t *)(h + 1))[1];
		mmap3_reader_feed(&rd, h, fn, ctx);
		off += h->size;
		n++;
	}
	mmap3_reader_end(&rd, fn, ctx);
	s->len = 0;
	return n;
}

static struct sink *sink_get(void)
{
	static struct sink s;

	if (!s.buf) {
		s.cap = 16 << 20;
		s.buf = malloc(s.cap);
		if (!s.buf)
			die("malloc");
	}
	s.len = 0;
	return &s;
}

static void drop(int fd)
{
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("posix_fadvise");
}

/* Reads all of @fd, so that its pages are in the page cache. */
static void warm(int fd)
{
	char buf[65536];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0)
		off += n;
}

/* Runs @args[0] with @args and @env in a child; any failure ends the run. */
static void exec_child(char *const *args, char *const *env)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork");
	if (!pid) {
		execve(args[0], args, env);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || status)
		die("child");
}

/* Maps @fd as a loader maps a text segment, at MAP_AT. */
static void *map_file(int fd, size_t len)
{
	return mmap(MAP_AT, len, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
}

/*
 * @fd in the page cache, then a few mappings of it: the module's cache
 * entry and the CPU's caches are warm before anything is timed.
 */
static void warm_up(int fd, size_t len)
{
	int i;

	warm(fd);
	for (i = 0; i < 16; i++) {
		void *p = map_file(fd, len);

		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, len);
	}
}

/* An anonymous stand-in for a ring, where the ring would be, touched as a ring is. */
static int ring_stand_in(struct ring *r)
{
	size_t size = (RING_PAGES + 1) * sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	/* A ring is not inherited (VM_DONTCOPY) */
	if (madvise(p, size, MADV_DONTFORK))
		return -1;
	memset(p, 0, size);
	r->meta = p;
	r->data_size = size;
	r->copy = malloc(65536);	/* as ring_map() does */
	return r->copy ? 0 : -1;
}

static void ring_stand_in_unmap(struct ring *r)
{
	munmap(r->meta, r->data_size);
	free(r->copy);
}

/* The configuration block @block runs @i-th: the list rotated by @block. */
static const char *rotated(char **cfgs, int n, int block, int i)
{
	return cfgs[(block + i) % n];
}

static void map_block(const char *cfg, int block, const char *path, bool cold,
		      long iters)
{
	uint64_t t0, t1, t2, t3;
	struct stats s0, s1;
	int fd, ev, records = 0;
	struct ring r = { .fd = -1 };
	unsigned long long lost = 0;
	struct sink *sink;
	size_t len;
	long i;

	if (!strcmp(cfg, "ref")) {
		volatile long j;

		t0 = now_ns();
		for (j = 0; j < REF_SCALE * iters; j++)
			;
		printf("bench %stest=map mode=%s cfg=ref block=%d iters=%ld ns=%llu drop_ns=0\n",
		       tag(), cold ? "cold" : "warm", block, iters,
		       (unsigned long long)(now_ns() - t0));
		return;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	len = lseek(fd, 0, SEEK_END);
	ev = cfg_open(cfg, 0, -1);
	if (ev == -1)
		die("perf_event_open");
	if (ev >= 0 && ring_map(&r, ev, RING_PAGES))
		die("mmap ring");
	/* Without an event, the same layout: an area the size of a ring, used. */
	if (ev < 0 && ring_stand_in(&r))
		die("mmap");
	warm_up(fd, len);
	if (ev >= 0)
		ring_drain(&r, NULL, NULL);

	sink = sink_get();
	stats_read(&s0);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		void *p;

		if (cold)
			drop(fd);
		p = map_file(fd, len);
		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, len);
		if (ev >= 0 && i % DRAIN_EVERY == DRAIN_EVERY - 1)
			sink_drain(&r, sink);
	}
	if (ev >= 0)
		sink_drain(&r, sink);
	t1 = now_ns();
	stats_read(&s1);
	records = sink_parse(sink, NULL, NULL, &lost);
	/* The drops alone, on the same file: its pages are out already. */
	t2 = now_ns();
	if (cold)
		for (i = 0; i < iters; i++)
			drop(fd);
	t3 = now_ns();

	printf("bench %stest=map mode=%s cfg=%s block=%d iters=%ld ns=%llu drop_ns=%llu records=%d lost=%llu",
	       tag(), cold ? "cold" : "warm", cfg, block, iters,
	       (unsigned long long)(t1 - t0), (unsigned long long)(cold ? t3 - t2 : 0),
	       records, lost);
	stats_print(&s0, &s1);
	printf("\n");
	if (ev >= 0)
		ring_unmap(&r);
	else
		ring_stand_in_unmap(&r);
	close(fd);
}

static int cmd_map(int argc, char **argv)
{
	const char *path = argv[2];
	bool cold = !strcmp(argv[3], "cold");
	long iters = atol(argv[4]);
	int n = argc - 6, blocks = atoi(argv[5]) * n, b, i;

	pin_cpu0();
	for (b = 0; b < blocks; b++)
		for (i = 0; i < n; i++)
			map_block(rotated(argv + 6, n, b, i), b, path, cold, iters);
	return 0;
}

struct exec_count {
	const char *bin;
	uint8_t want[BUILD_ID_SIZE_MAX];
	int want_size;
	long mmaps, mappings, right;
};

/* Counts the executable mappings of the benchmarked binary, and the right ones. */
static void exec_collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r3 = (const void *)h;
	const struct mmap2_record *r2 = (const void *)h;
	struct exec_count *c = ctx;

	c->mmaps += h->type == PERF_RECORD_MMAP3 || h->type == PERF_RECORD_MMAP2;
	if (h->type == PERF_RECORD_MMAP3 && (r3->prot & PROT_EXEC) &&
	    !strcmp(r3->filename, c->bin)) {
		c->mappings++;
		c->right += r3->build_id_size == c->want_size &&
			    !memcmp(r3->build_id, c->want, c->want_size);
	}
	if (h->type == PERF_RECORD_MMAP2 && (r2->prot & PROT_EXEC) &&
	    !strcmp(r2->filename, c->bin)) {
		c->mappings++;
		c->right += (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
			    r2->build_id_size == c->want_size &&
			    !memcmp(r2->build_id, c->want, c->want_size);
	}
}

/* One event per CPU (pid -1: every task), or a stand-in ring where there is none. */
struct cpu_events {
	int ncpu, nev;
	int fds[MAX_CPUS];
	struct ring rings[MAX_CPUS];
};

static int online_cpus(void)
{
	int n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > MAX_CPUS ? MAX_CPUS : n;
}

/* Opens @cfg's event on each CPU; maps the rings unless @map is false. */
static void cpu_events_open(struct cpu_events *e, const char *cfg, bool map)
{
	int cpu;

	e->ncpu = online_cpus();
	e->nev = 0;
	for (cpu = 0; cpu < e->ncpu; cpu++) {
		int ev = cfg_open(cfg, -1, cpu);

		if (ev == -2 && map && ring_stand_in(&e->rings[cpu]))
			die("mmap");
		if (ev == -2)
			continue;
		if (ev < 0)
			die("perf_event_open");
		e->fds[e->nev] = ev;
		if (map && ring_map(&e->rings[e->nev], ev, RING_PAGES))
			die("mmap ring");
		e->nev++;
	}
}

static void cpu_events_drain(struct cpu_events *e, struct sink *sink)
{
	int cpu;

	for (cpu = 0; cpu < e->nev; cpu++)
		sink_drain(&e->rings[cpu], sink);
}

static void cpu_events_close(struct cpu_events *e, bool mapped)
{
	int cpu;

	for (cpu = 0; cpu < e->ncpu; cpu++)
		if (cpu < e->nev && mapped)
			ring_unmap(&e->rings[cpu]);
		else if (cpu < e->nev)
			close(e->fds[cpu]);
		else if (mapped)
			ring_stand_in_unmap(&e->rings[cpu]);
}

static void exec_block(const char *cfg, int block, const char *bin,
		       const char *build_id, long iters)
{
	struct exec_count c = { .bin = bin };
	char *const args[] = { (char *)bin, NULL }, *const env[] = { NULL };
	unsigned long long lost = 0;
	struct cpu_events e;
	struct stats s0, s1;
	struct sink *sink;
	uint64_t t0, t1;
	int records;
	long i;

	c.want_size = hex_to_bytes(build_id, c.want, BUILD_ID_SIZE_MAX);
	cpu_events_open(&e, cfg, true);

	sink = sink_get();
	stats_read(&s0);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		exec_child(args, env);
		cpu_events_drain(&e, sink);
	}
	t1 = now_ns();
	stats_read(&s1);
	records = sink_parse(sink, exec_collect, &c, &lost);
	cpu_events_close(&e, true);

	printf("bench %stest=exec cfg=%s block=%d iters=%ld ns=%llu records=%d lost=%llu mmaps=%ld mappings=%ld right=%ld",
	       tag(), cfg, block, iters, (unsigned long long)(t1 - t0), records,
	       lost, c.mmaps, c.mappings, c.right);
	stats_print(&s0, &s1);
	printf("\n");
}

static int cmd_exec(int argc, char **argv)
{
	long iters = atol(argv[4]);
	int n = argc - 6, blocks = atoi(argv[5]) * n, b, i;

	/* The children too: no wake-ups of other CPUs in the timed loop. */
	pin_cpu0();
	for (b = 0; b < blocks; b++)
		for (i = 0; i < n; i++)
			exec_block(rotated(argv + 6, n, b, i), b, argv[2], argv[3], iters);
	return 0;
}

/* What each task of `threads` reports, in memory shared with the parent. */
struct task_result {
	uint64_t t0, t1;
	long records;
	unsigned long long lost;
};

/* Task @i of a `threads` block: waits on @gate, then maps and unmaps. */
static void threads_task(int i, const char *path, long iters, struct cpu_events *e,
			 int gate, struct task_result *res)
{
	struct ring *r = NULL;
	unsigned long long lost = 0;
	struct sink *sink = sink_get();
	size_t len;
	char c;
	long n;
	int fd;

	pin_cpu(i);
	/* The rings are not inherited (VM_DONTCOPY): map this CPU's here. */
	if (i < e->nev) {
		r = &e->rings[i];
		if (ring_map(r, e->fds[i], RING_PAGES))
			die("mmap ring");
	}
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	len = lseek(fd, 0, SEEK_END);
	warm_up(fd, len);
	if (r)
		sink_drain(r, sink);
	sink->len = 0;
	if (read(gate, &c, 1) < 0)	/* returns at EOF: the parent closed it */
		die("read");
	res->t0 = now_ns();
	for (n = 0; n < iters; n++) {
		void *p = map_file(fd, len);

		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, len);
		if (r && n % DRAIN_EVERY == DRAIN_EVERY - 1)
			sink_drain(r, sink);
	}
	if (r)
		sink_drain(r, sink);
	res->t1 = now_ns();
	res->records = sink_parse(sink, NULL, NULL, &lost);
	res->lost = lost;
	_exit(0);
}

static void threads_block(const char *cfg, int block, const char *path, long iters,
			  int tasks)
{
	struct task_result *res;
	struct cpu_events e;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	unsigned long long lost = 0;
	long records = 0;
	int gate[2], i;

	/* The events are opened here, the rings mapped by the tasks. */
	cpu_events_open(&e, cfg, false);
	if (tasks > e.ncpu) {
		errno = EINVAL;
		die("threads: more tasks than CPUs");
	}
	res = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED || pipe(gate))
		die("threads");
	for (i = 0; i < tasks; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			close(gate[1]);
			threads_task(i, path, iters, &e, gate[0], &res[i]);
		}
	}
	close(gate[0]);
	close(gate[1]);
	for (i = 0; i < tasks; i++) {
		int status;

		if (wait(&status) < 0 || status)
			die("task");
	}
	for (i = 0; i < tasks; i++) {
		t0 = res[i].t0 < t0 ? res[i].t0 : t0;
		t1 = res[i].t1 > t1 ? res[i].t1 : t1;
		records += res[i].records;
		lost += res[i].lost;
	}
	cpu_events_close(&e, false);
	munmap(res, 4096);
	printf("bench %stest=threads tasks=%d cfg=%s block=%d iters=%ld ns=%llu records=%ld lost=%llu\n",
	       tag(), tasks, cfg, block, iters, (unsigned long long)(t1 - t0), records, lost);
}

static int cmd_threads(int argc, char **argv)
{
	long iters = atol(argv[3]);
	int tasks = atoi(argv[5]), n = argc - 6, blocks = atoi(argv[4]) * n, b, i;

	for (b = 0; b < blocks; b++)
		for (i = 0; i < n; i++)
			threads_block(rotated(argv + 6, n, b, i), b, argv[2], iters, tasks);
	return 0;
}

/* The disk that holds @path. */
static dev_t disk_of(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		die(path);
	return st.st_dev;
}

/* Sectors read so far from @disk (/sys/dev/block/M:N/stat). */
static unsigned long long disk_sectors(dev_t disk)
{
	unsigned long long v[3];
	char sys[64];
	FILE *f;

	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/stat", major(disk), minor(disk));
	f = fopen(sys, "r");
	if (!f || fscanf(f, "%llu %llu %llu", &v[0], &v[1], &v[2]) != 3)
		die(sys);
	fclose(f);
	return v[2];
}

/* Whether the record of the mapping at MAP_AT has the build-id wanted. */
struct at_count {
	uint8_t want[BUILD_ID_SIZE_MAX];
	int want_size;
	long seen, right;
};

static void at_collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r3 = (const void *)h;
	const struct mmap2_record *r2 = (const void *)h;
	struct at_count *c = ctx;

	if ((h->type != PERF_RECORD_MMAP3 && h->type != PERF_RECORD_MMAP2) ||
	    r3->addr != (uintptr_t)MAP_AT)	/* the same offset in both */
		return;
	c->seen++;
	if (h->type == PERF_RECORD_MMAP3)
		c->right += r3->build_id_size == c->want_size &&
			    !memcmp(r3->build_id, c->want, c->want_size);
	else
		c->right += (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
			    r2->build_id_size == c->want_size &&
			    !memcmp(r2->build_id, c->want, c->want_size);
}

/*
 * One cold sample of @op with @cfg listening: everything clean dropped
 * (page cache, dentries, inodes), then the first exec of @path or the
 * first mmap() of it, timed; the sectors read from its disk counted
 * around the timed part ("sectors") and from the open() on ("all").
 */
static void cold_sample(const char *op, const char *cfg, int sample, const char *path,
			const char *build_id)
{
	char *const args[] = { (char *)path, NULL }, *const env[] = { NULL };
	unsigned long long s0, s1, s2, lost = 0;
	struct exec_count c = { .bin = path };
	struct at_count a = { 0 };
	struct ring r = { .fd = -1 };
	struct cpu_events e;
	struct sink *sink = sink_get();
	bool exec = !strcmp(op, "exec");
	dev_t disk = disk_of(path);	/* before the drop: no lookup counted */
	long right, seen;
	uint64_t t0, t1;
	int ev = -2, fd = -1;

	c.want_size = hex_to_bytes(build_id, c.want, BUILD_ID_SIZE_MAX);
	a.want_size = hex_to_bytes(build_id, a.want, BUILD_ID_SIZE_MAX);
	if (exec) {
		cpu_events_open(&e, cfg, true);
	} else {
		ev = cfg_open(cfg, 0, -1);
		if (ev == -1)
			die("perf_event_open");
		if (ev >= 0 && ring_map(&r, ev, RING_PAGES))
			die("mmap ring");
	}
	if (drop_page_cache())
		die("drop_caches");
	s0 = disk_sectors(disk);
	if (!exec) {
		char hdr[832];

		fd = open(path, O_RDONLY);
		if (fd < 0)
			die(path);
		if (!strcmp(op, "map-hdr") && pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr))
			die("pread");
	}
	s1 = disk_sectors(disk);
	t0 = now_ns();
	if (exec) {
		exec_child(args, env);
	} else {
		void *p = map_file(fd, lseek(fd, 0, SEEK_END));

		if (p == MAP_FAILED)
			die("mmap");
		t1 = now_ns();
		munmap(p, lseek(fd, 0, SEEK_END));
	}
	if (exec)
		t1 = now_ns();
	s2 = disk_sectors(disk);
	if (exec) {
		cpu_events_drain(&e, sink);
		sink_parse(sink, exec_collect, &c, &lost);
		cpu_events_close(&e, true);
		seen = c.mappings;
		right = c.right;
	} else {
		if (ev >= 0) {
			ring_drain(&r, at_collect, &a);
			lost = r.lost;
			ring_unmap(&r);
		}
		close(fd);
		seen = a.seen;
		right = a.right;
	}
	printf("bench %stest=cold op=%s cfg=%s sample=%d ns=%llu sectors=%llu all=%llu seen=%ld right=%ld lost=%llu\n",
	       tag(), op, cfg, sample, (unsigned long long)(t1 - t0), s2 - s1, s2 - s0,
	       seen, right, lost);
}

static int cmd_cold(int argc, char **argv)
{
	int samples = atoi(argv[5]), n = argc - 6, s, i;

	pin_cpu0();
	for (s = 0; s < samples; s++)
		for (i = 0; i < n; i++)
			cold_sample(argv[2], rotated(argv + 6, n, s, i), s, argv[3], argv[4]);
	return 0;
}

/* The thread of a `fork` sample that maps the file, with its own event. */
struct fork_mapper {
	const char *cfg, *path;
	struct at_count a;
	int ready, go;		/* load_acquire()/store_release() */
	uint64_t t0, t1;
	unsigned long long lost;
};

static void *fork_mapper(void *arg)
{
	struct fork_mapper *m = arg;
	struct ring r = { .fd = -1 };
	int ev, fd;
	size_t len;
	void *p;

	/* On this thread alone: the answer, if any, is its own. */
	ev = cfg_open(m->cfg, 0, -1);
	if (ev == -1)
		die("perf_event_open");
	if (ev >= 0 && ring_map(&r, ev, RING_PAGES))
		die("mmap ring");
	fd = open(m->path, O_RDONLY);
	if (fd < 0)
		die(m->path);
	len = lseek(fd, 0, SEEK_END);
	store_release(&m->ready, 1);
	while (!load_acquire(&m->go))
		;
	m->t0 = now_ns();
	p = map_file(fd, len);
	m->t1 = now_ns();
	if (p == MAP_FAILED)
		die("mmap");
	munmap(p, len);
	if (ev >= 0) {
		ring_drain(&r, at_collect, &m->a);
		m->lost = r.lost;
		ring_unmap(&r);
	}
	close(fd);
	return NULL;
}

/*
 * One sample of `fork`: the page cache dropped, a thread maps @path
 * (nothing of it read first), and @delay_us after it went into mmap() the
 * main thread forks a child that exits at once. Under the series the
 * thread reads the build-id on its way back to user space then (PENDING):
 * a sibling's fork() must not wait for that read. Upstream's
 * MMAP2+build_id reads nothing that is not cached, and waits for nothing.
 */
static void fork_sample(const char *cfg, int sample, const char *path, const char *build_id,
			long delay_us)
{
	struct fork_mapper m = { .cfg = cfg, .path = path };
	uint64_t t0, t1;
	pthread_t th;
	int status;
	pid_t pid;

	m.a.want_size = hex_to_bytes(build_id, m.a.want, BUILD_ID_SIZE_MAX);
	cfg_prepare(cfg);
	if (drop_page_cache())
		die("drop_caches");
	errno = pthread_create(&th, NULL, fork_mapper, &m);
	if (errno)
		die("pthread_create");
	while (!load_acquire(&m.ready))
		;
	store_release(&m.go, 1);
	usleep(delay_us);
	t0 = now_ns();
	pid = fork();
	if (!pid)
		_exit(0);
	t1 = now_ns();
	if (pid < 0)
		die("fork");
	if (waitpid(pid, &status, 0) != pid || status)
		die("child");
	errno = pthread_join(th, NULL);
	if (errno)
		die("pthread_join");
	printf("bench %stest=fork cfg=%s sample=%d delay_us=%ld fork_ns=%llu map_ns=%llu fork_after_ns=%lld seen=%ld right=%ld lost=%llu\n",
	       tag(), cfg, sample, delay_us, (unsigned long long)(t1 - t0),
	       (unsigned long long)(m.t1 - m.t0), (long long)(t0 - m.t0), m.a.seen, m.a.right,
	       m.lost);
}

static int cmd_fork(int argc, char **argv)
{
	long delay_us = atol(argv[4]);
	int samples = atoi(argv[5]), n = argc - 6, s, i;

	/* One CPU: the child and the thread run where the main thread does. */
	pin_cpu0();
	for (s = 0; s < samples; s++)
		for (i = 0; i < n; i++)
			fork_sample(rotated(argv + 6, n, s, i), s, argv[2], argv[3], delay_us);
	return 0;
}

/*
 * ITERS events of @cfg opened on the task and closed again, timed: what a
 * tool pays to create and free a listener (no ring: the same for all).
 */
static void events_block(const char *cfg, int block, long iters)
{
	struct perf_event_attr attr;
	uint64_t t0, t1;
	long i;

	cfg_prepare(cfg);
	if (!cfg_attr(cfg, &attr)) {
		errno = EINVAL;
		die(cfg);
	}
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		int ev = sys_perf_event_open(&attr, 0, -1, -1, 0);

		if (ev < 0)
			die("perf_event_open");
		close(ev);
	}
	t1 = now_ns();
	printf("bench %stest=events cfg=%s block=%d iters=%ld ns=%llu\n", tag(), cfg, block,
	       iters, (unsigned long long)(t1 - t0));
}

static int cmd_events(int argc, char **argv)
{
	long iters = atol(argv[2]);
	int n = argc - 4, blocks = atoi(argv[3]) * n, b, i;

	pin_cpu0();
	for (b = 0; b < blocks; b++)
		for (i = 0; i < n; i++)
			events_block(rotated(argv + 4, n, b, i), b, iters);
	return 0;
}

/* The slow disk: IMG on loop1, behind device-mapper device DM_NAME. */
#define DM_NAME		"mmap3bench"
#define DM_LOOP		"/dev/loop1"

static int cmd_disk(int argc, char **argv)
{
	char cmd[256], params[64];
	__u64 dev;
	uint64_t bytes;
	int fd;

	if (argc == 5 && !strcmp(argv[2], "up")) {
		snprintf(cmd, sizeof(cmd), "losetup %s %s", DM_LOOP, argv[3]);
		if (system(cmd))
			die("losetup");
		fd = open(DM_LOOP, O_RDONLY);
		if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes))
			die(DM_LOOP);
		close(fd);
		snprintf(params, sizeof(params), "%s 0", DM_LOOP);
		if (dm_ioctl(DM_DEV_CREATE, DM_NAME, NULL, 0, NULL, 0, NULL) ||
		    dm_ioctl(DM_TABLE_LOAD, DM_NAME, "linear", bytes / 512, params, 0, NULL) ||
		    dm_ioctl(DM_DEV_SUSPEND, DM_NAME, NULL, 0, NULL, 0, &dev))
			die("device-mapper");
		snprintf(cmd, sizeof(cmd), "/dev/dm-%u", minor(dev));
		mkdir(argv[4], 0755);
		if (mount(cmd, argv[4], "ext2", MS_RDONLY, NULL))
			die("mount");
		printf("# disk: %s on %s, %s behind %s, %llu sectors\n", argv[3], DM_LOOP,
		       cmd, argv[4], (unsigned long long)bytes / 512);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[2], "delay")) {
		unsigned int ms = atoi(argv[3]);

		fd = open(DM_LOOP, O_RDONLY);
		if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes))
			die(DM_LOOP);
		close(fd);
		if (ms)
			snprintf(params, sizeof(params), "%s 0 %u", DM_LOOP, ms);
		else
			snprintf(params, sizeof(params), "%s 0", DM_LOOP);
		if (dm_ioctl(DM_TABLE_LOAD, DM_NAME, ms ? "delay" : "linear", bytes / 512,
			     params, 0, NULL) ||
		    dm_ioctl(DM_DEV_SUSPEND, DM_NAME, NULL, 0, NULL, 0, NULL))
			die("device-mapper delay");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[2], "down")) {
		if (umount(argv[3]) || dm_ioctl(DM_DEV_REMOVE, DM_NAME, NULL, 0, NULL, 0, NULL))
			die("umount");
		snprintf(cmd, sizeof(cmd), "losetup -d %s", DM_LOOP);
		return system(cmd) ? 1 : 0;
	}
	fprintf(stderr, "usage: mmap3_bench disk up IMG MNT | delay MS | down MNT\n");
	return 2;
}

/* Runs argv[2...], prints its wall time and its (and its descendants') CPU times. */
static int cmd_run(int argc, char **argv)
{
	struct rusage ru;
	uint64_t t0, t1;
	int status;
	pid_t pid;

	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		die("wait4");
	t1 = now_ns();
	/* wait4() gives the child's own times; the grandchildren's are its RUSAGE_CHILDREN. */
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("bench %stest=run ns=%llu user_us=%llu sys_us=%llu status=%d\n", tag(),
	       (unsigned long long)(t1 - t0),
	       (unsigned long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
	       (unsigned long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* A field of /proc/meminfo, in KiB (-1: none). */
static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}

/* Memory pressure: all but LEAVE_MB of the guest's available memory taken. */
static int cmd_hog(int argc, char **argv)
{
	const size_t chunk = 4 << 20;
	long leave = atol(argv[2]) * 1024, before = meminfo_kb("MemAvailable"), avail;
	size_t taken = 0;

	if (before < 0)
		die("MemAvailable");
	for (avail = before; avail > leave; avail = meminfo_kb("MemAvailable")) {
		size_t len = (size_t)(avail - leave) * 1024 < chunk ? (size_t)(avail - leave) * 1024 : chunk;

		len &= ~4095ul;
		if (!len)
			break;
		if (mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0) == MAP_FAILED)
			die("mmap");
		taken += len;
	}
	printf("bench %stest=hog leave_kb=%ld taken_kb=%zu avail_before_kb=%ld avail_kb=%ld free_kb=%ld cached_kb=%ld\n",
	       tag(), leave, taken >> 10, before, avail, meminfo_kb("MemFree"), meminfo_kb("Cached"));
	for (;;)
		pause();
	return 0;
}

/* Reads the files of argv[2] over and over, until killed. */
static int cmd_stream(int argc, char **argv)
{
	static char buf[1 << 16];
	char path[512];
	struct dirent *e;
	DIR *d;

	for (;;) {
		d = opendir(argv[2]);
		if (!d)
			die(argv[2]);
		while ((e = readdir(d))) {
			int fd;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[2], e->d_name);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				die(path);
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
		closedir(d);
	}
	return 0;
}

struct cover {
	uint64_t addr;
	const struct fixture *fx;
	bool event;		/* the build-id is the trace event's */
	int right, seen;
};

static void cover_collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r3 = (const void *)h;
	const struct mmap2_record *r2 = (const void *)h;
	const unsigned char *raw;
	struct cover *c = ctx;
	uint64_t addr;

	if (c->event) {
		raw = tp_raw(h);
		if (!raw)
			return;
		memcpy(&addr, raw + tp.addr, sizeof(addr));
		if (addr != c->addr)
			return;
		c->seen++;
		c->right = raw[tp.size] == c->fx->build_id_size &&
			   !memcmp(raw + tp.build_id, c->fx->build_id, c->fx->build_id_size);
		return;
	}
	if (r3->addr != c->addr)	/* the same offset in both */
		return;
	if (h->type == PERF_RECORD_MMAP3) {
		c->seen++;
		c->right = r3->build_id_size == c->fx->build_id_size &&
			   !memcmp(r3->build_id, c->fx->build_id, c->fx->build_id_size);
	} else if (h->type == PERF_RECORD_MMAP2) {
		c->seen++;
		c->right = (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
			   r2->build_id_size == c->fx->build_id_size &&
			   !memcmp(r2->build_id, c->fx->build_id, c->fx->build_id_size);
	}
}

/*
 * Maps each file of MANIFEST that has a build-id (status FOUND) from @dir,
 * executable, as a loader does, warm or cold, and counts the records with
 * the right build-id.
 */
static void cover(const char *cfg, const char *dir, bool cold)
{
	char line[512], file[200], bid[64], status[32];
	int ev, files = 0, right = 0;
	struct ring r = { .fd = -1 };
	FILE *mf;

	ev = cfg_open(cfg, 0, -1);
	if (ev < 0)
		die("perf_event_open");
	if (ring_map(&r, ev, RING_PAGES))
		die("mmap ring");
	mf = fopen(fixture_path(fixtures_warm(), "MANIFEST"), "r");
	if (!mf)
		die("MANIFEST");
	while (fgets(line, sizeof(line), mf)) {
		struct fixture fx;
		struct cover c = { .fx = &fx, .event = !strcmp(cfg, "event") };
		void *p;
		int fd;

		if (sscanf(line, "%199s %63s %31s", file, bid, status) != 3 ||
		    strcmp(status, "FOUND") || !strncmp(file, "rewrite", 7) ||
		    fixture_get_in(dir, file, &fx))
			continue;
		fd = open(fx.path, O_RDONLY);
		if (fd < 0)
			die(fx.path);
		if (cold)
			drop(fd);
		else
			warm(fd);
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			die("mmap");
		c.addr = (uintptr_t)p;
		ring_drain(&r, cover_collect, &c);
		munmap(p, 4096);
		close(fd);
		files++;
		right += c.seen == 1 && c.right;
		printf("# cover %s %s %s: %s\n", cfg, cold ? "cold" : "warm", fx.path,
		       c.seen != 1 ? "no record" : c.right ? "right" : "wrong or none");
	}
	fclose(mf);
	ring_unmap(&r);
	printf("bench %stest=cover mode=%s cfg=%s files=%d right=%d lost=%llu\n",
	       tag(), cold ? "cold" : "warm", cfg, files, right,
	       (unsigned long long)r.lost);
}

static int cmd_cover(int argc, char **argv)
{
	int i;

	pin_cpu0();
	for (i = 4; i < argc; i++)
		cover(argv[i], argv[2], !strcmp(argv[3], "cold"));
	return 0;
}

/* Pages of @fd in the page cache, by mincore() on a mapping of it. */
static int resident(int fd, size_t len)
{
	size_t pages = (len + 4095) / 4096, i;
	unsigned char vec[256];
	void *p;
	int n = 0;

	if (pages > sizeof(vec))
		pages = sizeof(vec);
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED || mincore(p, pages * 4096, vec))
		die("mincore");
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(p, len);
	return n;
}

static int cmd_resident(int argc, char **argv)
{
	int fd = open(argv[2], O_RDONLY), warm_pages, cold_pages;
	size_t len;

	if (fd < 0)
		die(argv[2]);
	len = lseek(fd, 0, SEEK_END);
	warm(fd);
	warm_pages = resident(fd, len);
	drop(fd);
	cold_pages = resident(fd, len);
	printf("bench %stest=resident file=%s pages=%zu warm=%d cold=%d\n", tag(),
	       argv[2], (len + 4095) / 4096, warm_pages, cold_pages);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Now, and partly used: the same mappings and pages in every block. */
	memset(sink_get()->buf, 0, 65536);
	if (argc >= 7 && argc <= 6 + MAX_CFGS && !strcmp(argv[1], "map"))
		return cmd_map(argc, argv);
	if (argc >= 7 && argc <= 6 + MAX_CFGS && !strcmp(argv[1], "exec"))
		return cmd_exec(argc, argv);
	if (argc >= 5 && !strcmp(argv[1], "cover"))
		return cmd_cover(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "resident"))
		return cmd_resident(argc, argv);
	if (argc >= 7 && argc <= 6 + MAX_CFGS && !strcmp(argv[1], "threads"))
		return cmd_threads(argc, argv);
	if (argc >= 7 && argc <= 6 + MAX_CFGS && !strcmp(argv[1], "cold"))
		return cmd_cold(argc, argv);
	if (argc >= 7 && argc <= 6 + MAX_CFGS && !strcmp(argv[1], "fork"))
		return cmd_fork(argc, argv);
	if (argc >= 5 && argc <= 4 + MAX_CFGS && !strcmp(argv[1], "events"))
		return cmd_events(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "disk"))
		return cmd_disk(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "hog"))
		return cmd_hog(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "stream"))
		return cmd_stream(argc, argv);
	fprintf(stderr, "usage: see the comment at the top of mmap3_bench.c\n");
	return 2;
}
