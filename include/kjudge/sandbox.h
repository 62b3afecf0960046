/*
 * kjudge/sandbox.h - where untrusted code runs.
 *
 * Theory of operation.  A sandboxed process is started by kj_proc_spawn_in()
 * (proc.h) with clone() instead of fork(), in new user, mount, PID, network,
 * IPC and UTS namespaces:
 *
 *   judge (parent)                         child (PID 1 of its namespace)
 *   clone(CLONE_NEW*)  ------------------>  waits on the sync pipe
 *   writes /proc/CHILD/{uid,gid}_map        .
 *   puts CHILD into a fresh cgroup          .
 *   writes one byte on the sync pipe  ---->  builds the new root: a tmpfs
 *                                           with read-only binds of
 *                                           sb->ro, writable binds of
 *                                           sb->rw, a minimal /dev (GPU
 *                                           nodes only when sb->gpu), a new
 *                                           /proc, a private /tmp; then
 *                                           pivot_root, hostname, rlimits,
 *                                           drops every capability, sets
 *                                           no_new_privs and a seccomp filter
 *   reads the exec-error pipe  <---------   execve (or writes errno and the
 *                                           failed step, and exits 127)
 *
 * Inside, the process is root of its own user namespace, mapped to the
 * judge's own user, and holds no capability: it cannot mount, unmount,
 * trace, or see any process but its own descendants, and when it dies the
 * kernel kills everything left in its PID namespace.  Nothing of the host
 * file system is there but the paths named in the configuration.  There is
 * no network but a loopback device that is down.
 *
 * A sandbox that cannot be set up is the judge's failure (KJ_ESANDBOX), never
 * the candidate's.
 */
#ifndef KJUDGE_SANDBOX_H
#define KJUDGE_SANDBOX_H

#include <stddef.h>

#include "kjudge/error.h"

#define KJ_SANDBOX_MAX_PATHS 32

struct kj_sandbox {
	/* Paths (absolute; files or directories) seen at the same place inside,
	 * read-only or writable.  Missing ones are skipped.  The strings are
	 * the caller's and must outlive the spawn. */
	const char *ro[KJ_SANDBOX_MAX_PATHS];
	int n_ro;
	const char *rw[KJ_SANDBOX_MAX_PATHS];
	int n_rw;
	/* An empty directory the child mounts its new root on (the caller
	 * makes it, in a place only the judge can reach). */
	const char *root_dir;
	int gpu;                 /* bind /dev/nvidia* */
	/* Limits; 0 means none.  There is deliberately no address-space limit:
	 * it makes large CUDA allocations fail. */
	double cpu_s;            /* RLIMIT_CPU */
	long long fsize_bytes;   /* RLIMIT_FSIZE: the largest file written */
	long long mem_bytes;     /* cgroup memory limit, where cgroups work */
	long nproc;              /* RLIMIT_NPROC (per user namespace) and cgroup pids */
	long nofile;             /* RLIMIT_NOFILE */
	long long tmp_bytes;     /* size of the private /tmp and /dev/shm */
};

/* A cgroup made for one sandboxed process (v1 or v2, whichever the machine
 * has and lets us write); all-zero when none could be made. */
struct kj_cgroup {
	int version;             /* 0 none, 1, 2 */
	char mem[512];           /* v2: the group; v1: its memory group */
	char pids[512];          /* v1: its pids group ("" otherwise) */
};

void kj_sandbox_init(struct kj_sandbox *sb);

/* Add a path to sb->ro or sb->rw; ignored past KJ_SANDBOX_MAX_PATHS (returns
 * -1 then). */
int kj_sandbox_ro(struct kj_sandbox *sb, const char *path);
int kj_sandbox_rw(struct kj_sandbox *sb, const char *path);

/*
 * Make a cgroup for one process with the memory and process limits of sb,
 * and move pid into it.  Best effort: where neither cgroup version can be
 * written, cg->version stays 0 and the rlimits are the only limits.
 */
void kj_cgroup_attach(struct kj_cgroup *cg, const struct kj_sandbox *sb, int pid);

/* Whether the kernel killed something in the group for memory. */
int kj_cgroup_oom_killed(const struct kj_cgroup *cg);

/* Kill whatever is left in the group and remove it. */
void kj_cgroup_release(struct kj_cgroup *cg);

#endif
