# SPDX-License-Identifier: GPL-2.0
# The guest script of `make bench` on the unpatched kernel: the same
# benchmark (guest-bench.sh), without the series: MMAP2 and, in its event item,
# the trace event the module serves there.
KERNEL=upstream
. ./guest-bench.sh
