// SPDX-License-Identifier: GPL-2.0
/*
 * The shared library of the workload programs (tests/bench/bw.c): the
 * "compiler's" work, so that samples land in a library mapped by ld.so.
 */
#include <stddef.h>

unsigned long bw_hash(const unsigned char *p, size_t n, unsigned long h)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ul;
	return h;
}
