// SPDX-License-Identifier: GPL-2.0
/*
 * The shared library of the "renamed" item (tests/bench/renamed.c), built
 * twice, as two versions of a package (-DREN_VERSION=1 and 2), each linked
 * with a build-id of its own given on the command line (scripts/bench.sh).
 * Where the program's samples land.
 */
#ifndef REN_VERSION
#define REN_VERSION 1
#endif

unsigned long ren_work(unsigned long h)
{
	unsigned long i;

	for (i = 0; i < 1 << 16; i++)
		h = (h ^ i) * 0x100000001b3ul + REN_VERSION;
	return h | 2;
}
