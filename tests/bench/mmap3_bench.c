// SPDX-License-Identifier: GPL-2.0
/*
 * mmap3_bench: what listening for mappings costs, one measurement per run,
 * printed as one machine-readable line ("bench KEY=VALUE ...") that
 * scripts/bench_report.py reads from the guest's output.
 *
 *   mmap3_bench map   CFG FILE ITERS [cold]  mmap+munmap of FILE, per call
 *   mmap3_bench exec  CFG BIN ITERS BUILDID  fork+exec+wait of BIN, system-wide
 *   mmap3_bench ref   ITERS                  a user-space loop: the host's speed
 *   mmap3_bench cover CFG DIR warm|cold      share of right build-ids (MANIFEST)
 *   mmap3_bench resident FILE                page cache pages of FILE, before
 *                                            and after POSIX_FADV_DONTNEED
 *
 * CFG is what listens: none (no event), mmap2 (attr.mmap2), mmap2bid
 * (attr.mmap2 + attr.build_id, upstream's build-id), mmap3 (attr.mmap3).
 * `map` and `exec` open a dummy software event: on the task for `map`, on
 * each CPU (pid -1) for `exec`, with their rings mapped and drained.
 *
 * Times are CLOCK_MONOTONIC over a whole loop (the test kernel's clock
 * source is jiffies: 4 ms resolution, so single calls cannot be timed).
 * `map ... cold` drops FILE's pages (POSIX_FADV_DONTNEED) before each call,
 * and then times the same number of drops alone, so that the report can
 * subtract them.
 */
#include "../kselftest/mmap3_util.h"	/* first: it defines _GNU_SOURCE */

#include <sched.h>
#include <time.h>
#include <sys/wait.h>

#define RING_PAGES	64
#define DRAIN_EVERY	64
#define MAX_CPUS	16
#define STATS		"/sys/kernel/debug/mmap3/stats"

static void die(const char *what)
{
	fprintf(stderr, "mmap3_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* $BENCH_TAG (round, kernel, module state): the guest script's, copied into each line. */
static const char *tag(void)
{
	static char buf[256];
	const char *t = getenv("BENCH_TAG");

	if (t && !buf[0])
		snprintf(buf, sizeof(buf), "%s ", t);
	return buf;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Opens the listening event of @cfg on @pid/@cpu; -2 for "none". */
static int open_cfg(const char *cfg, pid_t pid, int cpu)
{
	struct perf_event_attr attr;

	side_band_attr(&attr);
	if (!strcmp(cfg, "none"))
		return -2;
	if (!strcmp(cfg, "mmap2") || !strcmp(cfg, "mmap2bid")) {
		attr.mmap = 1;		/* as perf does */
		attr.mmap2 = 1;
		attr.build_id = !strcmp(cfg, "mmap2bid");
	} else if (!strcmp(cfg, "mmap3")) {
		attr.mmap3 = 1;
	} else {
		errno = EINVAL;
		die(cfg);
	}
	return sys_perf_event_open(&attr, pid, cpu, -1, 0);
}

/* The module's counters (hits, misses, deferred, emitted), if loaded. */
struct stats {
	long long hits, misses, deferred, emitted;
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
		else if (!strcmp(name, "emitted"))
			s->emitted = v;
	}
	fclose(f);
}

static void stats_print(const struct stats *a, const struct stats *b)
{
	printf(" hits=%lld misses=%lld deferred=%lld emitted=%lld",
	       b->hits - a->hits, b->misses - a->misses,
	       b->deferred - a->deferred, b->emitted - a->emitted);
}

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
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

static int cmd_map(int argc, char **argv)
{
	const char *cfg = argv[2], *path = argv[3];
	long iters = atol(argv[4]), i;
	int cold = argc > 5 && !strcmp(argv[5], "cold");
	uint64_t t0, t1, t2;
	struct stats s0, s1;
	struct ring r;
	size_t len;
	int fd, ev, records = 0;

	pin_cpu0();
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	len = lseek(fd, 0, SEEK_END);
	ev = open_cfg(cfg, 0, -1);
	if (ev == -1)
		die("perf_event_open");
	if (ev >= 0 && ring_map(&r, ev, RING_PAGES))
		die("mmap ring");
	warm(fd);
	/* A few calls first: the cache entry of MMAP3, the caches of the CPU. */
	for (i = 0; i < 16; i++) {
		void *p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, len);
	}
	if (ev >= 0)
		ring_drain(&r, NULL, NULL);

	stats_read(&s0);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		void *p;

		if (cold)
			drop(fd);
		p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, len);
		if (ev >= 0 && i % DRAIN_EVERY == DRAIN_EVERY - 1)
			records += ring_drain(&r, NULL, NULL);
	}
	if (ev >= 0)
		records += ring_drain(&r, NULL, NULL);
	t1 = now_ns();
	stats_read(&s1);
	/* The drops alone, on the same file: pages are already out. */
	if (cold)
		for (i = 0; i < iters; i++)
			drop(fd);
	t2 = now_ns();

	printf("bench %stest=map cfg=%s mode=%s iters=%ld ns=%llu drop_ns=%llu records=%d lost=%llu", tag(),
	       cfg, cold ? "cold" : "warm", iters, (unsigned long long)(t1 - t0),
	       (unsigned long long)(cold ? t2 - t1 : 0), records,
	       (unsigned long long)(ev >= 0 ? r.lost : 0));
	stats_print(&s0, &s1);
	printf("\n");
	return 0;
}

struct exec_count {
	const char *bin;
	uint8_t want[BUILD_ID_SIZE_MAX];
	int want_size;
	long mappings, right;
};

/* Counts the executable mappings of the benchmarked binary, and the right ones. */
static void exec_collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r3 = (const void *)h;
	const struct mmap2_record *r2 = (const void *)h;
	struct exec_count *c = ctx;

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

static int cmd_exec(int argc, char **argv)
{
	const char *cfg = argv[2];
	long iters = atol(argv[4]), i;
	struct exec_count c = { .bin = argv[3] };
	struct ring rings[MAX_CPUS];
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), nev = 0, cpu, records = 0;
	char *const args[] = { argv[3], NULL }, *const env[] = { NULL };
	unsigned long long lost = 0;
	struct stats s0, s1;
	uint64_t t0, t1;

	c.want_size = hex_to_bytes(argv[5], c.want, BUILD_ID_SIZE_MAX);
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (cpu = 0; cpu < ncpu; cpu++) {
		int ev = open_cfg(cfg, -1, cpu);

		if (ev == -2)
			break;
		if (ev < 0)
			die("perf_event_open");
		if (ring_map(&rings[nev++], ev, RING_PAGES))
			die("mmap ring");
	}

	stats_read(&s0);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
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
		for (cpu = 0; cpu < nev; cpu++)
			records += ring_drain(&rings[cpu], exec_collect, &c);
	}
	t1 = now_ns();
	stats_read(&s1);
	for (cpu = 0; cpu < nev; cpu++)
		lost += rings[cpu].lost;

	printf("bench %stest=exec cfg=%s iters=%ld ns=%llu records=%d lost=%llu mappings=%ld right=%ld", tag(),
	       cfg, iters, (unsigned long long)(t1 - t0), records, lost,
	       c.mappings, c.right);
	stats_print(&s0, &s1);
	printf("\n");
	return 0;
}

/* The host's speed: a user-space loop, to compare two boots. */
static int cmd_ref(int argc, char **argv)
{
	long iters = atol(argv[2]);
	volatile long i;
	uint64_t t0;

	pin_cpu0();
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		;
	printf("bench %stest=ref cfg=none iters=%ld ns=%llu\n", tag(), iters,
	       (unsigned long long)(now_ns() - t0));
	return 0;
}

struct cover {
	uint64_t addr;
	const struct fixture *fx;
	int right, seen;
};

static void cover_collect(const struct perf_event_header *h, void *ctx)
{
	const struct mmap3_record *r3 = (const void *)h;
	const struct mmap2_record *r2 = (const void *)h;
	struct cover *c = ctx;

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
 * executable, as a loader does, warm (read first) or cold (its pages
 * dropped first), and counts the records with the right build-id.
 */
static int cmd_cover(int argc, char **argv)
{
	const char *cfg = argv[2], *dir = argv[3];
	int cold = !strcmp(argv[4], "cold");
	char line[512], file[200], bid[64], status[32];
	int ev, files = 0, right = 0;
	struct ring r;
	FILE *mf;

	pin_cpu0();
	ev = open_cfg(cfg, 0, -1);
	if (ev < 0)
		die("perf_event_open");
	if (ring_map(&r, ev, RING_PAGES))
		die("mmap ring");
	mf = fopen(FIXTURES_WARM "/MANIFEST", "r");
	if (!mf)
		die("MANIFEST");
	while (fgets(line, sizeof(line), mf)) {
		struct fixture fx;
		struct cover c = { .fx = &fx };
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
	printf("bench %stest=cover cfg=%s mode=%s files=%d right=%d lost=%llu\n", tag(), cfg,
	       cold ? "cold" : "warm", files, right, (unsigned long long)r.lost);
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
	printf("bench %stest=resident file=%s pages=%zu warm=%d cold=%d\n", tag(), argv[2],
	       (len + 4095) / 4096, warm_pages, cold_pages);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "map"))
		return cmd_map(argc, argv);
	if (argc >= 6 && !strcmp(argv[1], "exec"))
		return cmd_exec(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "ref"))
		return cmd_ref(argc, argv);
	if (argc >= 5 && !strcmp(argv[1], "cover"))
		return cmd_cover(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "resident"))
		return cmd_resident(argc, argv);
	fprintf(stderr, "usage: see the comment at the top of mmap3_bench.c\n");
	return 2;
}
