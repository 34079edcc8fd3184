// SPDX-License-Identifier: GPL-2.0
/*
 * A second PERF_RECORD_MMAP3 provider, for the selftests. The core takes
 * one provider at a time: loading this one fails with -EBUSY while another
 * (the mmap3 module) is registered. Alone, it writes the record of each
 * mapping with PERF_MMAP3_BUILD_ID_SKIPPED: it reads no file.
 */
#include <linux/module.h>
#include <linux/perf_mmap3.h>

static int mmap3_test_provider_lookup(struct perf_mmap3_provider *provider,
				      struct vm_area_struct *vma,
				      struct perf_mmap3_build_id *id)
{
	id->status = PERF_MMAP3_BUILD_ID_SKIPPED;
	return 0;
}

/* Never called: the lookup always answers. */
static void mmap3_test_provider_read(struct perf_mmap3_provider *provider,
				     struct file *file, struct perf_mmap3_build_id *id)
{
	id->status = PERF_MMAP3_BUILD_ID_SKIPPED;
}

static struct perf_mmap3_provider mmap3_test_provider = {
	.lookup	= mmap3_test_provider_lookup,
	.read	= mmap3_test_provider_read,
};

static int __init mmap3_test_provider_init(void)
{
	return perf_mmap3_register(&mmap3_test_provider);
}

static void __exit mmap3_test_provider_exit(void)
{
	perf_mmap3_unregister(&mmap3_test_provider);
}

module_init(mmap3_test_provider_init);
module_exit(mmap3_test_provider_exit);
MODULE_DESCRIPTION("A second PERF_RECORD_MMAP3 provider for the perf_events selftests");
MODULE_LICENSE("GPL");
