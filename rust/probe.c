// SPDX-License-Identifier: GPL-2.0
/*
 * The trace event mmap3:build_id and the probe that feeds it: the C glue
 * of what Rust cannot write (TRACE_EVENT, the probe's handler signature,
 * task_work and the per-CPU path buffer). The lookup and the read are the
 * module's own (rust/probe.rs calls them), as for the series' provider.
 *
 * The probe is attached to perf_event_mmap() only while the event is
 * enabled (the event's register and unregister callbacks), with fprobe
 * where the kernel has it, else a kprobe. At perf_event_mmap(vma)'s entry,
 * under mmap_lock and without sleeping, it looks the file up (the cache,
 * then the page cache): answered, the event is emitted at once. Otherwise
 * the file is pinned and the mapping queued on the task's FIFO, which a
 * task_work drains on the way back to user space, with no lock held: the
 * file is read, the events are emitted in mapping order. While a task has
 * a FIFO, its later mappings join it, answered or not, so that its events
 * keep the order of its mappings. A task's FIFO is found by a hash of the
 * task pointer (only the task itself adds to it or removes it): nothing is
 * added to task_struct, and no task_work list is walked.
 *
 * Nothing under mmap_lock waits for reclaim: the FIFO and its entries are
 * GFP_NOWAIT. Without memory the event is emitted at once, IO_ERROR where
 * the file was to be read; a task that will not return to user space
 * (exiting, or a kernel thread) gets SKIPPED there, at once or from its
 * FIFO at exit.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/hugetlb.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/version.h>
#include <linux/wait_bit.h>
#ifdef CONFIG_FPROBE
#include <linux/fprobe.h>
#endif
#ifdef MMAP3_SERIES
#include <linux/perf_event.h>
#endif

#define CREATE_TRACE_POINTS
#include "trace.h"

#ifdef MMAP3_SERIES
static_assert(MMAP3_STATUS_FOUND == PERF_MMAP3_BUILD_ID_FOUND);
static_assert(MMAP3_STATUS_IO_ERROR == PERF_MMAP3_BUILD_ID_IO_ERROR);
static_assert(MMAP3_STATUS_SKIPPED == PERF_MMAP3_BUILD_ID_SKIPPED);
static_assert(sizeof(struct mmap3_build_id) == sizeof(struct perf_mmap3_build_id));
#endif

#define MMAP3_PROBED "perf_event_mmap"

/* What rust/probe.rs passes back to the lookup and the read. */
static const void *mmap3_ctx;

/* A mapping waiting for its task's return to user space. */
struct mmap3_deferred {
	struct list_head node;		/* in mmap3_fifo.entries */
	struct file *file;		/* pinned, to read; NULL when answered */
	struct mmap3_mapping m;
	char name[];			/* m.name points here */
};

/* The deferred mappings of one task, in mapping order. */
struct mmap3_fifo {
	struct callback_head work;	/* on the task's task_works */
	struct hlist_node node;		/* in mmap3_fifos, by task */
	struct task_struct *task;
	struct list_head entries;
	struct rcu_head rcu;
};

static DEFINE_SPINLOCK(mmap3_fifos_lock);
static DEFINE_HASHTABLE(mmap3_fifos, 6);
/* FIFOs queued as task_work: module exit waits until none is left. */
static atomic_t mmap3_fifos_queued = ATOMIC_INIT(0);
/* Whether a FIFO was ever queued: module exit then waits for RCU Tasks. */
static bool mmap3_fifos_used;

/* For d_path() under the probe, which must not sleep: one per CPU. */
struct mmap3_path {
	char buf[PATH_MAX];
};

static struct mmap3_path __percpu *mmap3_paths;

/* Attached while the event is enabled; under mmap3_probe_mutex. */
static DEFINE_MUTEX(mmap3_probe_mutex);
static bool mmap3_attached;
static bool mmap3_dead;		/* module exit has begun: attach no more */

/* current's FIFO, if it has one: only current adds or removes it. */
static struct mmap3_fifo *mmap3_fifo_find(void)
{
	struct mmap3_fifo *f;

	hash_for_each_possible_rcu(mmap3_fifos, f, node, (unsigned long)current) {
		if (f->task == current)
			return f;
	}
	return NULL;
}

/*
 * Emits and frees @e, reading its file first unless @exiting. A task that
 * is exiting, or will (a fatal signal, which also cuts a read short), never
 * returns to user space: what it did not read is SKIPPED, not IO_ERROR.
 */
static void mmap3_deferred_emit(struct mmap3_deferred *e, bool exiting)
{
	if (e->file) {
		e->m.id = (struct mmap3_build_id){ .status = MMAP3_STATUS_SKIPPED };
		if (!exiting && !fatal_signal_pending(current)) {
			e->m.id = (struct mmap3_build_id){};
			mmap3_probe_read(mmap3_ctx, e->file, &e->m.id);
			if (e->m.id.status == MMAP3_STATUS_IO_ERROR &&
			    fatal_signal_pending(current))
				e->m.id.status = MMAP3_STATUS_SKIPPED;
		}
		fput(e->file);
	}
	trace_build_id(&e->m);
	kfree(e);
}

/*
 * current's FIFO, on its way back to user space (or at its exit, from
 * exit_task_work(), before perf_event_exit_task()): no lock held.
 */
static void mmap3_fifo_run(struct callback_head *work)
{
	struct mmap3_fifo *f = container_of(work, struct mmap3_fifo, work);
	bool exiting = current->flags & PF_EXITING;
	struct mmap3_deferred *e, *next;

	/* Nothing is added meanwhile: only current adds, from its mappings. */
	list_for_each_entry_safe(e, next, &f->entries, node) {
		list_del(&e->node);
		mmap3_deferred_emit(e, exiting);
	}
	spin_lock(&mmap3_fifos_lock);
	hash_del_rcu(&f->node);
	spin_unlock(&mmap3_fifos_lock);
	kfree_rcu(f, rcu);
	/* The last access to the module's data; module exit waits for it. */
	if (atomic_dec_and_test(&mmap3_fifos_queued))
		wake_up_var(&mmap3_fifos_queued);
}

/*
 * Queues @e on current's FIFO, making the FIFO if need be. Return: false
 * when it cannot be queued (no memory, or current will not return to user
 * space): the caller emits it at once.
 */
static bool mmap3_defer(struct mmap3_fifo *f, struct mmap3_deferred *e)
{
	if (!f) {
		if (current->flags & (PF_EXITING | PF_KTHREAD))
			return false;
		f = kmalloc(sizeof(*f), GFP_NOWAIT | __GFP_NOWARN);
		if (!f)
			return false;
		f->task = current;
		INIT_LIST_HEAD(&f->entries);
		init_task_work(&f->work, mmap3_fifo_run);
		atomic_inc(&mmap3_fifos_queued);
		if (task_work_add(current, &f->work, TWA_RESUME)) {
			/* Exiting: exit_task_work() has run. */
			atomic_dec(&mmap3_fifos_queued);
			kfree(f);
			return false;
		}
		WRITE_ONCE(mmap3_fifos_used, true);
		spin_lock(&mmap3_fifos_lock);
		hash_add_rcu(mmap3_fifos, &f->node, (unsigned long)current);
		spin_unlock(&mmap3_fifos_lock);
	}
	list_add_tail(&e->node, &f->entries);
	return true;
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
	struct mmap3_deferred *e;
	struct mmap3_fifo *f;
	const char *name;
	size_t len;
	int ret;

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

	preempt_disable_notrace();
	if (file) {
		const struct inode *inode = file_user_inode(file);

		name = d_path(file_user_path(file), this_cpu_ptr(mmap3_paths)->buf, PATH_MAX);
		if (IS_ERR(name))
			name = "//toolong";
		m.maj = MAJOR(inode->i_sb->s_dev);
		m.min = MINOR(inode->i_sb->s_dev);
		m.ino = inode->i_ino;
		m.ino_generation = inode->i_generation;
	} else {
		name = mmap3_anon_name(vma);
	}
	m.name = name;

	ret = mmap3_probe_lookup(mmap3_ctx, vma, &m.id);
	f = mmap3_fifo_find();
	if (!ret && !f) {
		trace_build_id(&m);
		goto out;
	}
	len = strlen(name) + 1;
	e = kmalloc(struct_size(e, name, len), GFP_NOWAIT | __GFP_NOWARN);
	if (!e) {
		if (ret)
			m.id = (struct mmap3_build_id){ .status = MMAP3_STATUS_IO_ERROR };
		trace_build_id(&m);
		goto out;
	}
	memcpy(e->name, name, len);
	e->m = m;
	e->m.name = e->name;
	e->file = NULL;
	if (mmap3_defer(f, e)) {
		/* Pinned for the read; the mapping's reference may go first. */
		if (ret)
			e->file = get_file(file);
		goto out;
	}
	if (ret)
		e->m.id = (struct mmap3_build_id){
			.status = current->flags & (PF_EXITING | PF_KTHREAD) ?
				  MMAP3_STATUS_SKIPPED : MMAP3_STATUS_IO_ERROR,
		};
	trace_build_id(&e->m);
	kfree(e);
out:
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
#ifdef MMAP3_SERIES
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
 * At unload, before what @ctx points to goes: detach the probe (the
 * tracing core unregisters a module's events only after its exit), then
 * wait until every queued FIFO was drained (each task's return to user
 * space, or its exit).
 */
void mmap3_event_exit(void)
{
	mutex_lock(&mmap3_probe_mutex);
	mmap3_dead = true;
	if (mmap3_attached)
		mmap3_detach();
	mmap3_attached = false;
	mutex_unlock(&mmap3_probe_mutex);
	wait_var_event(&mmap3_fifos_queued, !atomic_read(&mmap3_fifos_queued));
	/*
	 * The FIFOs' kfree_rcu(), and the last mmap3_fifo_run()s: the count is
	 * zero before they return, so a task can still be in their last
	 * instructions, in this module's text, or preempted there. RCU Tasks
	 * waits until every task has switched context voluntarily (or is in
	 * user space or idle), so until none is. A FIFO is queued only by a
	 * probe, and kprobes and ftrace select TASKS_RCU on a preemptible
	 * kernel; elsewhere synchronize_rcu_tasks() is synchronize_rcu(),
	 * which is enough where a task in the kernel cannot be preempted.
	 */
	BUILD_BUG_ON(IS_ENABLED(CONFIG_PREEMPTION) && !IS_ENABLED(CONFIG_TASKS_RCU) &&
		     (IS_ENABLED(CONFIG_KPROBES) || IS_ENABLED(CONFIG_FPROBE)));
	if (READ_ONCE(mmap3_fifos_used))
		synchronize_rcu_tasks();
	else
		synchronize_rcu();
	free_percpu(mmap3_paths);
	mmap3_paths = NULL;
}
