/*
 * kjudge/sandbox.h - where untrusted code runs.
 *
 * Theory of operation.  A sandboxed process is started by kj_proc_spawn_in()
 * (proc.h) with clone() instead of fork(), in new user, mount, PID, network,
 * IPC and UTS namespaces:
 *
 *   judge (parent)                         child (PID 1 of its namespace)
 *   clone(CLONE_NEW*)  ------------------>  sets its parent-death signal,
 *                                           waits on the sync socket
 *   writes /proc/CHILD/{uid,gid}_map        .
 *   puts CHILD into a fresh cgroup, or      .
 *     gives up if a limit cannot be set     .
 *   writes one byte on the sync socket ---->  builds the new root: a tmpfs
 *                                           with read-only binds of
 *                                           sb->ro (and empty dirs
 *                                           over what it hides),
 *                                           writable binds of
 *                                           sb->rw, a minimal /dev (GPU
 *                                           nodes only when sb->gpu), a new
 *                                           /proc, a private /tmp, masks
 *                                           over what the host lets no other
 *                                           user read; then
 *                                           pivot_root, hostname, rlimits,
 *                                           drops every capability, sets
 *                                           no_new_privs and a seccomp filter
 *   reads the exec-error pipe  <---------   execve (or writes errno and the
 *                                           failed step, and exits 127)
 *
 * Inside, the process is root of its own user namespace, mapped to the
 * judge's own user, and holds no capability: it cannot mount, unmount,
 * trace, or see any process but its own descendants, and when it dies the
 * kernel kills everything left in its PID namespace.  It dies when the
 * judge does (the parent-death signal, which the seccomp filter does not
 * let it clear).  Nothing of the host file system is there but the paths
 * named in the configuration.  There is no network but a loopback device
 * that is down.  The mounts of its new root live in its own mount
 * namespace and go with its last process.
 *
 * What the host keeps private stays so.  The candidate is root of its
 * user namespace, which is the judge's own user outside: without any
 * capability, but still the owner of the judge's files (of every file of
 * the host's root, when the judge runs as root), and a member of the
 * judge's groups.  So the view must not show what the host protects by
 * its permission bits alone.  Every read-only bind is read-only all the
 * way down (the mounts under it too: a cgroup hierarchy under /sys, the
 * /etc/hosts of a container), /proc's own entries are read-only (no
 * sysctl, no sysrq, no switch of a driver; its processes' entries stay
 * writable, as CUDA needs), /dev holds no terminal, and wherever the binds
 * show them, these trees are masked: every entry that its owner or group
 * may read and the
 * host lets no other user read (a file without read permission for
 * "other", a directory without read and search permission for it) gets an
 * empty mode-0000 file or directory bound read-only over it:
 *
 *   /etc                          all the way down (shadow, gshadow,
 *                                 sudoers, ssh host keys, ssl/private,
 *                                 munge.key, ...)
 *   /proc                         its own entries (kcore, kmsg,
 *                                 timer_list, slabinfo, ...)
 *   /sys                          two levels (kernel/debug, kernel/tracing,
 *                                 fs/pstore, fs/bpf, ...)
 *   /sys/class                    two levels (zram-control/hot_add, whose
 *                                 reading makes a device)
 *   /sys/firmware                 all the way down (ACPI tables, EFI)
 *   /sys/devices/virtual/dmi/id   its entries (serial numbers)
 *   /sys/kernel/slab              the whole directory
 *
 * and the directories a caller names with kj_sandbox_mask, to the depth
 * it gives.  A mask that cannot be applied stops the start (KJ_ESANDBOX):
 * no process ever runs with such a file in view.  (What is bound is the
 * caller's choice: the runners never bind the host's home directories,
 * /var, /run, /srv, /mnt, /media or /boot whole; runner/torch.c.)
 *
 * Limits fail closed: a cgroup limit that cannot be written, or a path that
 * does not fit, stops the start (KJ_ESANDBOX); where the machine has no
 * usable cgroup the rlimits alone apply and struct kj_limits_in_force (in
 * the started struct kj_proc) says so.
 *
 * A sandbox that cannot be set up is the judge's failure (KJ_ESANDBOX), never
 * the candidate's.
 */
#ifndef KJUDGE_SANDBOX_H
#define KJUDGE_SANDBOX_H

#include <stddef.h>

#include "kjudge/error.h"

#define KJ_SANDBOX_MAX_PATHS 48

/* What an entry of kj_sandbox.ro is. */
enum { KJ_SB_BIND, KJ_SB_HIDE, KJ_SB_MASK };

struct kj_sandbox {
	/* Paths (absolute; files or directories) seen at the same place inside,
	 * read-only or writable.  Missing ones are skipped.  The strings are
	 * the caller's and must outlive the spawn.
	 *
	 * The read-only list is applied in order, and may also hide
	 * directories (kj_sandbox_hide, ro_how[i] KJ_SB_HIDE): a hidden
	 * directory gets an empty read-only tmpfs over it, which covers what
	 * the binds before it showed there; read-only binds after it and
	 * every writable bind show through it (their mount points are made in
	 * it).  A hidden path that the binds before it do not show is skipped;
	 * one that is there but cannot be covered stops the start
	 * (KJ_ESANDBOX).  A masked directory (kj_sandbox_mask, KJ_SB_MASK,
	 * its depth in ro_depth[i]) is looked at once every bind is made. */
	const char *ro[KJ_SANDBOX_MAX_PATHS];
	unsigned char ro_how[KJ_SANDBOX_MAX_PATHS];
	unsigned char ro_depth[KJ_SANDBOX_MAX_PATHS];
	int n_ro;
	const char *rw[KJ_SANDBOX_MAX_PATHS];
	/* Where each writable path is seen inside (kj_sandbox_rw_at); NULL:
	 * at its own place. */
	const char *rw_at[KJ_SANDBOX_MAX_PATHS];
	int n_rw;
	/* Set when a path did not fit: such a sandbox is refused at spawn
	 * (KJ_ESANDBOX), so a dropped path can never go unnoticed. */
	int overflow;
	/* An empty directory the child mounts its new root on (the caller
	 * makes it, in a place only the judge can reach). */
	const char *root_dir;
	int gpu;                 /* bind /dev/nvidia* */
	/* A read-only path that is a top-level link of the host with a
	 * relative target (a merged /usr: /lib -> usr/lib) is made the same
	 * link inside instead of a bind of its target, so that a path worked
	 * out through it (/lib/x86_64-linux-gnu/../../share, PoCL's headers)
	 * leads where it does outside.  Its target must be in ro too. */
	int keep_links;
	/* Limits; 0 means none.  There is deliberately no address-space limit:
	 * it makes large CUDA allocations fail. */
	double cpu_s;            /* RLIMIT_CPU */
	long long fsize_bytes;   /* RLIMIT_FSIZE: the largest file written */
	long long mem_bytes;     /* cgroup memory limit, where cgroups work */
	long nproc;              /* RLIMIT_NPROC (per user namespace) and cgroup pids */
	long nofile;             /* RLIMIT_NOFILE */
	long long tmp_bytes;     /* size of the private /tmp and /dev/shm */
	/* Where the cgroup hierarchies are mounted; NULL: /sys/fs/cgroup.
	 * (Tests point it elsewhere.) */
	const char *cgroup_root;
	/* Non-NULL: the process may be forked from a template, a process the
	 * judge starts once with this command (NULL-terminated, argv[0] an
	 * absolute path) and the same environment but for the names in
	 * template_free_env (NULL-terminated; NULL: none), which the child
	 * gets from its own.  The template has done the expensive part of the
	 * program's start (a worker's import of torch); each child forked from
	 * it builds this sandbox as a cloned one does, then goes on where the
	 * template stopped instead of calling execve (spawn.h, "Templates").
	 * Where no template can be had, the process is started as usual.
	 * Both are the caller's and must outlive the spawn. */
	char *const *template_argv;
	const char *const *template_free_env;
};

/*
 * A cgroup made for one sandboxed process (v1 or v2, whichever the machine
 * has and lets us write); all-zero when none could be made.  The limits
 * are those written and read back without error: what is in force.
 */
struct kj_cgroup {
	int version;             /* 0 none, 1, 2 */
	char mem[512];           /* v2: the group; v1: its memory group ("" none) */
	char pids[512];          /* v1: its pids group ("" otherwise) */
	long long mem_bytes;     /* memory limit in force; 0 none */
	int swap_limited;        /* swap is limited too (memory.swap.max 0, or
				  * memsw equal to the memory limit) */
	long pids_max;           /* process limit in force; 0 none */
};

/*
 * What bounds one started process, as set up rather than as asked for:
 * a result records this, so that "sandbox: true" never stands for a limit
 * the machine did not apply.
 */
struct kj_limits_in_force {
	int cgroup;              /* 0 none, 1 v1, 2 v2 */
	long long mem_bytes;     /* the cgroup's memory limit; 0 none */
	int swap_limited;        /* see struct kj_cgroup */
	long pids_max;           /* the cgroup's process limit; 0 none */
	double cpu_s;            /* RLIMIT_CPU set in the child; 0 none */
	long long fsize_bytes;   /* RLIMIT_FSIZE; 0 none */
	long nproc;              /* RLIMIT_NPROC; 0 none */
	long nofile;             /* RLIMIT_NOFILE; 0 the judge's */
	int oom_score_adj;       /* the process's, read back after it was set
				  * (the kernel's OOM killer takes the highest
				  * first); 0 when it could not be set */
	int from_template;       /* forked from a worker template (spawn.h,
				  * "Templates"), not started by execve */
};

void kj_sandbox_init(struct kj_sandbox *sb);

/* Add a path to sb->ro or sb->rw.  Returns KJ_OK, or KJ_ELIMIT past
 * KJ_SANDBOX_MAX_PATHS: then sb->overflow is set and a spawn in sb fails,
 * whether or not the caller looked at the code. */
int kj_sandbox_ro(struct kj_sandbox *sb, const char *path);
int kj_sandbox_rw(struct kj_sandbox *sb, const char *path);
/* Add the directory `path` to sb->rw, seen inside at `inside` (an absolute
 * path that need not exist outside): a place that is the same in every
 * sandbox, whatever directory of the host is behind it (the torch
 * runner's extension builds, whose build files name their directory).
 * The same codes. */
int kj_sandbox_rw_at(struct kj_sandbox *sb, const char *path, const char *inside);
/* Add a directory to hide to sb->ro, after what is there (see above); the
 * same codes. */
int kj_sandbox_hide(struct kj_sandbox *sb, const char *dir);
/* Mask, in what the binds show of dir, every private entry (see the
 * theory of operation), looking depth levels down (1: dir's own entries;
 * a directory on the last level is left as it is), or all the way down
 * (KJ_SANDBOX_MASK_ALL: a directory below KJ_SANDBOX_MASK_DEPTH levels is
 * masked whole, as what is not looked at is not shown).  The same codes,
 * and KJ_EINVAL for a depth past KJ_SANDBOX_MASK_DEPTH. */
#define KJ_SANDBOX_MASK_ALL 0
#define KJ_SANDBOX_MASK_DEPTH 32
int kj_sandbox_mask(struct kj_sandbox *sb, const char *dir, int depth);

/*
 * Make a cgroup for one process with the memory and process limits of sb,
 * and move pid into it.  Where no cgroup can be made (no hierarchy, none
 * writable, no memory or pids controller for our children) this is not an
 * error: cg->version stays 0 and the rlimits are the only limits, which
 * cg (all zero) says.  Once a group is made, every write that puts a limit
 * or the process in it must succeed: a failed one removes the group and
 * returns KJ_ESANDBOX, with the file and the reason in err, so that no
 * process runs without a limit it was meant to have.  (Only a missing swap
 * control file, which a kernel without swap accounting lacks, is not a
 * failure: cg->swap_limited says so.)  The groups of judges that were
 * killed are swept by the spawn core's first start (kj_cgroup_sweep).
 */
int kj_cgroup_attach(struct kj_cgroup *cg, const struct kj_sandbox *sb, int pid,
		     struct kj_error *err);

/* Whether the kernel killed something in the group for memory. */
int kj_cgroup_oom_killed(const struct kj_cgroup *cg);

/* Kill whatever is left in the group and remove it. */
void kj_cgroup_release(struct kj_cgroup *cg);

/*
 * The smallest memory limit of the judge's own cgroup and those above it,
 * in bytes, under root (NULL: /sys/fs/cgroup): v2's memory.max where root
 * is a unified hierarchy, else v1's memory.limit_in_bytes in root/memory;
 * `self` is the text of /proc/self/cgroup.  0 when none is set ("max", or
 * v1's near-2^63 "unlimited") or none can be read.
 */
long long kj_cgroup_mem_limit(const char *root, const char *self);

/*
 * The groups a killed judge left (kjudge-PID-N where PID no longer runs),
 * under root (NULL: /sys/fs/cgroup) in every place kj_cgroup_attach makes
 * them: whatever still runs in them is killed, then they are removed.
 * Returns the number of groups removed.
 */
int kj_cgroup_sweep(const char *root);

#endif
