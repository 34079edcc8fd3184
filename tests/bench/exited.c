// SPDX-License-Identifier: GPL-2.0
/*
 * The test programs of the "exited" item of `make bench`
 * (tests/bench/exited.sh): what a build runs and deletes before the session
 * ends (configure's conftest, a test suite's programs). Built VARIANTS
 * times with -DVARIANT=0..., so that each has its own build-id.
 *
 *   ex-N ROUNDS     works ROUNDS rounds in its own code, then exits
 */
#include <stdlib.h>

#ifndef VARIANT
#define VARIANT 0
#endif

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 1, h = VARIANT, r, i;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < 1 << 16; i++)
			h = (h + i) * 31 + (h >> 7) + VARIANT;
	sink = h;
	return 0;
}
