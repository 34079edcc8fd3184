# SPDX-License-Identifier: GPL-2.0
# The guest script of `make bench` on the unpatched kernel: the same
# benchmark (bench.sh), without the module.
KERNEL=upstream
. ./bench.sh
