// SPDX-License-Identifier: GPL-2.0
/*
 * The trace event mmap3:build_id and the probe that feeds it: the C glue
 * of what Rust cannot write or call (TRACE_EVENT, the probe's handler and
 * its registration, d_path() into a per-CPU buffer, the mapping's fields
 * from static inlines, task_work and the task's state). What is done with
 * a mapping, the lookup, the FIFO of deferred mappings and the read, is
 * rust/fifo.rs's, as for the series' provider.
 *
 * The probe is attached to perf_event_mmap() only while the event is
 * enabled (the event's register and unregister callbacks), with fprobe
 * where the kernel has it, else a kprobe.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hugetlb.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/task_work.h>
#include <linux/version.h>
#ifdef CONFIG_FPROBE
#include <linux/fprobe.h>
#endif
#ifdef MMAP3_PROVIDER
#include <linux/perf_mmap3.h>
#endif

#define CREATE_TRACE_POINTS
#include "trace.h"

#ifdef MMAP3_PROVIDER
static_assert(MMAP3_STATUS_FOUND == PERF_MMAP3_BUILD_ID_FOUND);
static_assert(MMAP3_STATUS_IO_ERROR == PERF_MMAP3_BUILD_ID_IO_ERROR);
static_assert(MMAP3_STATUS_SKIPPED == PERF_MMAP3_BUILD_ID_SKIPPED);
static_assert(sizeof(struct mmap3_build_id) == sizeof(struct perf_mmap3_build_id));
#endif

#define MMAP3_PROBED "perf_event_mmap"

/* struct mmap3_mapping's size, which rust/fifo.rs checks against its twin. */
const size_t mmap3_mapping_size = sizeof(struct mmap3_mapping);

/* What rust/probe.rs passes back to mmap3_probe_mapping(). */
static const void *mmap3_ctx;

/* For d_path() under the probe, which must not sleep: one per CPU. */
struct mmap3_path {
	char buf[PATH_MAX];
};

static struct mmap3_path __percpu *mmap3_paths;

/* Attached while the event is enabled; under mmap3_probe_mutex. */
static DEFINE_MUTEX(mmap3_probe_mutex);
static bool mmap3_attached;
static bool mmap3_dead;		/* module exit has begun: attach no more */

/* rust/fifo.rs: the event, at once or from the FIFO. */
void mmap3_trace(const struct mmap3_mapping *m)
{
	trace_build_id(m);
}

/*
 * rust/fifo.rs: queues @work to run @func in current on its way back to
 * user space, or at its exit. Return: 0, or -ESRCH when current has gone
 * past exit_task_work().
 */
int mmap3_task_work_add(struct callback_head *work, task_work_func_t func)
{
	init_task_work(work, func);
	return task_work_add(current, work, TWA_RESUME);
}

/*
 * rust/fifo.rs: whether current returns to user space (0), has a fatal
 * signal pending (1: it will exit, and its reads are cut short), or never
 * returns (2: exiting, or a kernel thread).
 */
int mmap3_current_state(void)
{
	if (current->flags & (PF_EXITING | PF_KTHREAD))
		return 2;
	return fatal_signal_pending(current) ? 1 : 0;
}

/* rust/fifo.rs: a deferred mapping's reference on its file. */
void mmap3_file_get(struct file *file)
{
	get_file(file);
}

void mmap3_file_put(struct file *file)
{
	fput(file);
}

/* MMAP2's name of a mapping without a file (perf_event_mmap_event()). */
static const char *mmap3_anon_name(struct vm_area_struct *vma)
{
	const char *name = NULL;

	if (vma->vm_ops && vma->vm_ops->name)
		name = vma->vm_ops->name(vma);
	/*
	 * arch_vma_name() is not exported; on x86 it names only the vsyscall
	 * page, which is not a VMA of any mm and is never mapped.
	 */
	if (!name) {
		if (vma_is_initial_heap(vma))
			name = "[heap]";
		else if (vma_is_initial_stack(vma))
			name = "[stack]";
		else
			name = "//anon";
	}
	return name;
}

/*
 * perf_event_mmap(vma), at its entry: under mmap_lock, not to sleep. One
 * event per executable mapping, as MMAP2 without attr.mmap_data.
 */
static void __maybe_unused mmap3_probe_mmap(struct vm_area_struct *vma)
{
	struct file *file = vma->vm_file;
	struct mmap3_mapping m = {};

	if (!(vma->vm_flags & VM_EXEC))
		return;
	m.time = local_clock();
	m.pid = task_tgid_nr(current);
	m.tid = task_pid_nr(current);
	m.addr = vma->vm_start;
	m.len = vma->vm_end - vma->vm_start;
	m.pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
	if (vma->vm_flags & VM_READ)
		m.prot |= PROT_READ;
	if (vma->vm_flags & VM_WRITE)
		m.prot |= PROT_WRITE;
	m.prot |= PROT_EXEC;
	m.flags = vma->vm_flags & VM_MAYSHARE ? MAP_SHARED : MAP_PRIVATE;
	if (vma->vm_flags & VM_LOCKED)
		m.flags |= MAP_LOCKED;
	if (is_vm_hugetlb_page(vma))
		m.flags |= MAP_HUGETLB;

	/* The path buffer is this CPU's until preemption is enabled again. */
	preempt_disable_notrace();
	if (file) {
		const struct inode *inode = file_user_inode(file);

		m.name = d_path(file_user_path(file), this_cpu_ptr(mmap3_paths)->buf, PATH_MAX);
		if (IS_ERR(m.name))
			m.name = "//toolong";
		m.maj = MAJOR(inode->i_sb->s_dev);
		m.min = MINOR(inode->i_sb->s_dev);
		m.ino = inode->i_ino;
		m.ino_generation = inode->i_generation;
	} else {
		m.name = mmap3_anon_name(vma);
	}
	mmap3_probe_mapping(mmap3_ctx, vma, &m);
	preempt_enable_notrace();
}

#ifdef CONFIG_FPROBE
static struct fprobe mmap3_fprobe;

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
static int mmap3_fprobe_entry(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	mmap3_probe_mmap((struct vm_area_struct *)ftrace_regs_get_argument(fregs, 0));
	return 0;
}
#else
static int mmap3_fprobe_entry(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
			      struct pt_regs *regs, void *data)
{
	mmap3_probe_mmap((struct vm_area_struct *)regs_get_kernel_argument(regs, 0));
	return 0;
}
#endif

static int mmap3_attach(void)
{
	memset(&mmap3_fprobe, 0, sizeof(mmap3_fprobe));
	mmap3_fprobe.entry_handler = mmap3_fprobe_entry;
	return register_fprobe(&mmap3_fprobe, MMAP3_PROBED, NULL);
}

static void mmap3_detach(void)
{
	unregister_fprobe(&mmap3_fprobe);
}

#define MMAP3_PROBE_KIND "fprobe"
#elif defined(CONFIG_KPROBES)
static struct kprobe mmap3_kprobe;

static int mmap3_kprobe_pre(struct kprobe *p, struct pt_regs *regs)
{
	mmap3_probe_mmap((struct vm_area_struct *)regs_get_kernel_argument(regs, 0));
	return 0;
}

static int mmap3_attach(void)
{
	memset(&mmap3_kprobe, 0, sizeof(mmap3_kprobe));
	mmap3_kprobe.symbol_name = MMAP3_PROBED;
	mmap3_kprobe.pre_handler = mmap3_kprobe_pre;
	return register_kprobe(&mmap3_kprobe);
}

static void mmap3_detach(void)
{
	unregister_kprobe(&mmap3_kprobe);
}

#define MMAP3_PROBE_KIND "kprobe"
#else
static int mmap3_attach(void)
{
	return -EOPNOTSUPP;
}

static void mmap3_detach(void)
{
}

#define MMAP3_PROBE_KIND "probe (no CONFIG_FPROBE, no CONFIG_KPROBES)"
#endif

/* The event's first user (tracefs, perf, BPF): attach the probe. */
int mmap3_event_reg(void)
{
	int ret = 0;

	mutex_lock(&mmap3_probe_mutex);
	if (mmap3_dead)
		ret = -ENODEV;
	else if (!mmap3_attached)
		ret = mmap3_attach();
	if (!ret)
		mmap3_attached = true;
	else
		pr_err("mmap3: the event mmap3:build_id cannot be enabled: no %s on %s() (%d)\n",
		       MMAP3_PROBE_KIND, MMAP3_PROBED, ret);
	mutex_unlock(&mmap3_probe_mutex);
	return ret;
}

/* Its last user is gone (or the module is going): detach the probe. */
void mmap3_event_unreg(void)
{
	mutex_lock(&mmap3_probe_mutex);
	if (mmap3_attached)
		mmap3_detach();
	mmap3_attached = false;
	mutex_unlock(&mmap3_probe_mutex);
}

/*
 * Whether perf_event_mmap() can be probed at all: a kprobe registered
 * disabled (no text is patched) finds the symbol and checks the blacklist.
 */
static int mmap3_probe_check(void)
{
#ifdef CONFIG_KPROBES
	struct kprobe kp = {
		.symbol_name = MMAP3_PROBED,
		.flags = KPROBE_FLAG_DISABLED,
	};
	int ret = register_kprobe(&kp);

	if (ret)
		return ret;
	unregister_kprobe(&kp);
	return 0;
#elif defined(CONFIG_FPROBE)
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

/*
 * At load, before the event can be enabled: @ctx is what the lookup and
 * the read get. Return: 0, or an error (logged) when perf_event_mmap()
 * cannot be probed.
 */
int mmap3_event_init(const void *ctx)
{
	int ret = mmap3_probe_check();

	if (ret) {
#ifdef MMAP3_PROVIDER
		/* The MMAP3 provider still serves: load, without the event. */
		pr_warn("mmap3: cannot probe %s() (%d): the trace event mmap3:build_id cannot be enabled (it needs CONFIG_KPROBES or CONFIG_FPROBE)\n",
			MMAP3_PROBED, ret);
		mmap3_dead = true;
		return 0;
#else
		pr_err("mmap3: cannot probe %s() (%d): the trace event mmap3:build_id needs CONFIG_KPROBES or CONFIG_FPROBE and a probeable %s()\n",
		       MMAP3_PROBED, ret, MMAP3_PROBED);
		return ret;
#endif
	}
	mmap3_paths = alloc_percpu(struct mmap3_path);
	if (!mmap3_paths)
		return -ENOMEM;
	mmap3_ctx = ctx;
	return 0;
}

/*
 * At unload: detach the probe (the tracing core unregisters a module's
 * events only after its exit). No mapping is deferred after this.
 */
void mmap3_event_stop(void)
{
	mutex_lock(&mmap3_probe_mutex);
	mmap3_dead = true;
	if (mmap3_attached)
		mmap3_detach();
	mmap3_attached = false;
	mutex_unlock(&mmap3_probe_mutex);
}

/*
 * At unload, after mmap3_event_stop() and once rust/fifo.rs has seen every
 * FIFO drained (@deferred: whether any was ever queued), before what @ctx
 * points to goes.
 */
void mmap3_event_exit(bool deferred)
{
	/*
	 * The last task_works: their count is zero before they return, so a
	 * task can still be in their last instructions, in this module's
	 * text, or preempted there. RCU Tasks waits until every task has
	 * switched context voluntarily (or is in user space or idle), so until
	 * none is. A FIFO is queued only by a probe, and kprobes and ftrace
	 * select TASKS_RCU on a preemptible kernel; elsewhere
	 * synchronize_rcu_tasks() is synchronize_rcu(), which is enough where
	 * a task in the kernel cannot be preempted.
	 */
	BUILD_BUG_ON(IS_ENABLED(CONFIG_PREEMPTION) && !IS_ENABLED(CONFIG_TASKS_RCU) &&
		     (IS_ENABLED(CONFIG_KPROBES) || IS_ENABLED(CONFIG_FPROBE)));
	if (deferred)
		synchronize_rcu_tasks();
	else
		synchronize_rcu();
	free_percpu(mmap3_paths);
	mmap3_paths = NULL;
}
