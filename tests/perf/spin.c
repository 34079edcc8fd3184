// SPDX-License-Identifier: GPL-2.0
/*
 * A program that spends its time in one function, SPIN_FN (a name given at
 * build time), for SPIN_SECONDS (default 1) or the seconds in argv[1]:
 *
 *   gcc -O1 -static -DSPIN_FN=alpha -o alpha tests/perf/spin.c
 *   gcc -O1 -static -DSPIN_FN=beta -o beta tests/perf/spin.c
 *
 * Built twice with two names of the same length, the programs have the same
 * layout (SPIN_FN at the same address) and differ in their symbol names and
 * so in their build-ids: a profiler that takes one for the other names the
 * wrong function.
 */
#include <stdlib.h>
#include <time.h>

#ifndef SPIN_FN
#error "build with -DSPIN_FN=<function name>"
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* noinline, noclone: the samples must land in a function of this name. */
__attribute__((noinline, noclone)) unsigned long SPIN_FN(double seconds)
{
	double end = now() + seconds;
	volatile unsigned long n = 0;
	unsigned long i;

	do {
		for (i = 0; i < (1UL << 16); i++)
			n += i;
	} while (now() < end);
	return n;
}

int main(int argc, char **argv)
{
	return SPIN_FN(argc > 1 ? atof(argv[1]) : 1.0) == 1;
}
