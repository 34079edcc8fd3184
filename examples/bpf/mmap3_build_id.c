// SPDX-License-Identifier: GPL-2.0
/*
 * mmap3_build_id [-p PID] [-n COUNT] [-v]: print the executable mappings
 * of every process (or of PID), each with its build-id, as the trace event
 * mmap3:build_id reports them, one line each, until COUNT lines, SIGINT or
 * SIGTERM:
 *
 *   # pid tid start-end pgoff build_id status time file
 *   212 212 00400000-00401000 00001000 3f0c...e1 FOUND 5123409876 /usr/bin/foo
 *
 * what a profiler keeps of a mapping to resolve its samples later: start,
 * end and pgoff as in /proc/PID/maps (hex), the build-id in hex or "-",
 * its status's name, the mapping's time in ns on perf's default clock
 * (local_clock(), as a perf sample's time), the file's name (cut at
 * MMAP3_NAME_MAX - 1 bytes). The "#" line comes once the program is
 * attached: every mapping made from then on is reported.
 *
 * The BPF program (mmap3_build_id.bpf.c, embedded by bpftool's skeleton)
 * filters by PID and sends each event through a BPF ring buffer; a full
 * ring buffer drops events, counted and reported on stderr at the end. Exits 0
 * when stopped (after printing what the ring buffer still holds), 1 on an
 * error (no event: the module is not loaded; BPF not permitted; ...), 2 on
 * a usage error.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "mmap3_build_id.h"
#include "mmap3_build_id.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *prog = "mmap3_build_id";
static volatile sig_atomic_t stop;
static int verbose;

struct state {
	unsigned long long limit;	/* 0: no limit */
	unsigned long long printed;
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	if (level == LIBBPF_INFO && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const char *status_name(unsigned int status)
{
	static const char *const names[] = {
		[MMAP3_FOUND] = "FOUND",
		[MMAP3_NO_FILE] = "NO_FILE",
		[MMAP3_NOT_ELF] = "NOT_ELF",
		[MMAP3_NO_BUILD_ID] = "NO_BUILD_ID",
		[MMAP3_MALFORMED] = "MALFORMED",
		[MMAP3_IO_ERROR] = "IO_ERROR",
		[MMAP3_SKIPPED] = "SKIPPED",
	};

	if (status < ARRAY_SIZE(names) && names[status])
		return names[status];
	return "UNKNOWN";
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct mmap3_build_id_event *e = data;
	struct state *st = ctx;
	char hex[2 * MMAP3_BUILD_ID_MAX + 1] = "-";
	unsigned int i, n;

	if (size < sizeof(*e) || (st->limit && st->printed >= st->limit))
		return 0;
	n = e->build_id_size;
	if (n > MMAP3_BUILD_ID_MAX)
		n = MMAP3_BUILD_ID_MAX;
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", e->build_id[i]);
	printf("%u %u %08llx-%08llx %08llx %s %s %llu %.*s\n", e->pid, e->tid,
	       (unsigned long long)e->addr,
	       (unsigned long long)(e->addr + e->len),
	       (unsigned long long)e->pgoff, hex,
	       status_name(e->build_id_status),
	       (unsigned long long)e->time, MMAP3_NAME_MAX, e->filename);
	if (st->limit && ++st->printed >= st->limit)
		stop = 1;
	return 0;
}

#define FIELD(f) { #f, offsetof(struct mmap3_build_id_ctx, f), \
		   sizeof(((struct mmap3_build_id_ctx *)0)->f) }

static const struct {
	const char *name;
	size_t offset, size;
} fields[] = {
	FIELD(common_type), FIELD(common_flags), FIELD(common_preempt_count),
	FIELD(common_pid), FIELD(pid), FIELD(tid), FIELD(addr), FIELD(len),
	FIELD(pgoff), FIELD(maj), FIELD(min), FIELD(ino),
	FIELD(ino_generation), FIELD(prot), FIELD(flags),
	FIELD(build_id_size), FIELD(build_id_status), FIELD(build_id),
	FIELD(time), FIELD(filename),
};

#define NFIELDS ARRAY_SIZE(fields)

/*
 * Checks that the event exists and that its format file has the layout
 * the BPF program reads (struct mmap3_build_id_ctx): 0, or -1 after a
 * message.
 */
static int check_format(void)
{
	static const char *const tracefs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[PATH_MAX], line[512], denied[PATH_MAX] = "";
	int found[NFIELDS] = { 0 };
	int mounted = 0;
	FILE *f = NULL;
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(tracefs) && !f; i++) {
		snprintf(path, sizeof(path), "%s/events", tracefs[i]);
		if (access(path, F_OK) == 0)
			mounted = 1;
		else if (errno == EACCES || errno == EPERM)
			snprintf(denied, sizeof(denied), "%s", path);
		snprintf(path, sizeof(path), "%s/events/mmap3/build_id/format",
			 tracefs[i]);
		f = fopen(path, "r");
		if (!f && (errno == EACCES || errno == EPERM))
			snprintf(denied, sizeof(denied), "%s", path);
	}
	if (!f && denied[0]) {
		fprintf(stderr, "%s: %s: not permitted: run as root (BPF tracing needs CAP_BPF and CAP_PERFMON, tracefs root's access)\n",
			prog, denied);
		return -1;
	}
	if (!f && !mounted) {
		fprintf(stderr, "%s: tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing\n",
			prog);
		return -1;
	}
	if (!f) {
		fprintf(stderr, "%s: no trace event mmap3:build_id: load the module first (insmod mmap3.ko)\n",
			prog);
		return -1;
	}
	/* "\tfield:u8 build_id[20];\toffset:74;\tsize:20;\tsigned:0;" */
	while (fgets(line, sizeof(line), f)) {
		char *decl = strstr(line, "field:"), *semi, *name, *p;
		unsigned int off, size;

		if (!decl)
			continue;
		decl += strlen("field:");
		semi = strchr(decl, ';');
		if (!semi || sscanf(semi + 1, " offset:%u; size:%u;", &off, &size) != 2)
			continue;
		*semi = '\0';
		p = strchr(decl, '[');
		if (p && strrchr(decl, ' ') < p)
			*p = '\0';	/* "u8 build_id[20]": the name before [ */
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl;
		for (k = 0; k < NFIELDS; k++) {
			if (strcmp(name, fields[k].name))
				continue;
			if (off != fields[k].offset || size != fields[k].size) {
				fprintf(stderr, "%s: %s: field %s at offset %u, size %u; this program reads it at %zu, size %zu: rebuild it for this version of the event\n",
					prog, path, name, off, size,
					fields[k].offset, fields[k].size);
				fclose(f);
				return -1;
			}
			found[k] = 1;
		}
	}
	fclose(f);
	for (k = 0; k < NFIELDS; k++) {
		if (!found[k]) {
			fprintf(stderr, "%s: %s: no field %s: not the event this program reads\n",
				prog, path, fields[k].name);
			return -1;
		}
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [-p PID] [-n COUNT] [-v]\n"
		"  -p PID    only the mappings of process PID (its thread group)\n"
		"  -n COUNT  exit after COUNT lines (else at SIGINT or SIGTERM)\n"
		"  -v        libbpf's debug messages\n", prog);
}

static int parse_num(const char *s, unsigned long long max,
		     unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || !*s || *end || *s == '-' || *v == 0 || *v > max ? -1 : 0;
}

/* The error of a libbpf call that failed, with a hint for the usual ones. */
static int fail(const char *what, int err)
{
	if (err < 0)
		err = -err;
	if (err == EPERM || err == EACCES)
		fprintf(stderr, "%s: %s: %s: not permitted: run as root (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)\n",
			prog, what, strerror(err));
	else if (err == ENOENT && !strcmp(what, "attaching to mmap3:build_id"))
		fprintf(stderr, "%s: %s: %s: the event is gone (was the module unloaded? insmod mmap3.ko)\n",
			prog, what, strerror(err));
	else
		fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct mmap3_build_id_state state = { 0 };
	struct mmap3_build_id_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct state st = { 0 };
	unsigned long long pid = 0;
	struct sigaction sa;
	int opt, err, rc = 1;
	__u32 key = 0;

	while ((opt = getopt(argc, argv, "p:n:vh")) != -1) {
		switch (opt) {
		case 'p':
			if (parse_num(optarg, INT_MAX, &pid)) {
				fprintf(stderr, "%s: bad pid '%s'\n", prog, optarg);
				return 2;
			}
			break;
		case 'n':
			if (parse_num(optarg, ULLONG_MAX, &st.limit)) {
				fprintf(stderr, "%s: bad count '%s'\n", prog, optarg);
				return 2;
			}
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	/* One line per event as it comes, also into a pipe or a file. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(print_libbpf);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: the poll returns */
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}

	if (check_format())
		return 1;

	skel = mmap3_build_id_bpf__open();
	if (!skel)
		return fail("opening the BPF object", errno);
	err = mmap3_build_id_bpf__load(skel);
	if (err) {
		rc = fail("loading the BPF program", err);
		goto out;
	}
	state.pid = pid;
	err = bpf_map__update_elem(skel->maps.state, &key, sizeof(key), &state,
				   sizeof(state), BPF_ANY);
	if (err) {
		rc = fail("setting the pid filter", err);
		goto out;
	}
	err = mmap3_build_id_bpf__attach(skel);
	if (err) {
		rc = fail("attaching to mmap3:build_id", err);
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handle_event,
			      &st, NULL);
	if (!rb) {
		rc = fail("creating the ring buffer", errno);
		goto out;
	}

	printf("# pid tid start-end pgoff build_id status time file\n");
	while (!stop) {
		err = ring_buffer__poll(rb, 100 /* ms */);
		if (err == -EINTR)
			continue;
		if (err < 0) {
			rc = fail("polling the ring buffer", err);
			goto out;
		}
	}
	/* Stopped: what the ring buffer holds was mapped before the signal. */
	err = ring_buffer__consume(rb);
	if (err < 0) {
		rc = fail("reading the ring buffer", err);
		goto out;
	}
	err = bpf_map__lookup_elem(skel->maps.state, &key, sizeof(key), &state,
				   sizeof(state), 0);
	if (err) {
		rc = fail("reading the count of lost events", err);
		goto out;
	}
	if (state.lost)
		fprintf(stderr, "%s: %llu events lost: the ring buffer was full\n",
			prog, (unsigned long long)state.lost);
	rc = 0;
out:
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: writing the output: %s\n", prog,
			strerror(errno));
		rc = 1;
	}
	ring_buffer__free(rb);
	mmap3_build_id_bpf__destroy(skel);
	return rc;
}
