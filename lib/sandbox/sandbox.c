/*
 * sandbox.c - the child's side of a sandboxed start, and its cgroup.
 *
 * See kjudge/sandbox.h for the theory of operation.  Everything in
 * kj__sandbox_child runs in the child between clone() and execve(): it only
 * makes system calls and formats paths on the stack, never allocates, and
 * reports a failure as errno plus the name of the step.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kjudge/sandbox.h"
#include "base/internal.h"

void kj_sandbox_init(struct kj_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
}

static int add_path(const char **v, int *n, const char *path)
{
	if (!path || *n >= KJ_SANDBOX_MAX_PATHS)
		return -1;
	v[(*n)++] = path;
	return 0;
}

int kj_sandbox_ro(struct kj_sandbox *sb, const char *path)
{
	return add_path(sb->ro, &sb->n_ro, path);
}

int kj_sandbox_rw(struct kj_sandbox *sb, const char *path)
{
	return add_path(sb->rw, &sb->n_rw, path);
}

/* --- the child -------------------------------------------------------------------- */

/* mkdir -p of root + path (path absolute); a file when is_file. */
static int make_target(const char *root, const char *path, int is_file)
{
	char buf[4096];
	size_t i, len;

	if ((size_t)snprintf(buf, sizeof(buf), "%s%s", root, path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	len = strlen(buf);
	for (i = strlen(root) + 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (i == len && is_file) {
			int fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

			if (fd < 0 && errno != EEXIST)
				return -1;
			if (fd >= 0)
				close(fd);
		} else if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
			return -1;
		}
		if (i < len)
			buf[i] = '/';
	}
	return 0;
}

/* Bind path at root + path, read-only unless writable. */
static int bind_path(const char *root, const char *path, int writable)
{
	char dst[4096];
	struct stat st;
	unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;

	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -1;
	if (make_target(root, path, !S_ISDIR(st.st_mode)) < 0)
		return -1;
	snprintf(dst, sizeof(dst), "%s%s", root, path);
	if (mount(path, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -1;
	if (writable)
		return 0;
	/* A remount may not drop flags a locked mount has (nodev, noexec on
	 * the original); try with them when the plain one is refused. */
	if (mount(NULL, dst, NULL, ro, NULL) < 0 &&
	    mount(NULL, dst, NULL, ro | MS_NODEV, NULL) < 0 &&
	    mount(NULL, dst, NULL, ro | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -1;
	return 0;
}

/* /dev: a tmpfs with the usual character devices and, for GPU attempts,
 * the NVIDIA nodes, all bound from the host (mknod is not allowed here). */
static int make_dev(const char *root, int gpu, long long shm_bytes)
{
	static const char *const nodes[] = { "/dev/null", "/dev/zero", "/dev/full",
		"/dev/random", "/dev/urandom", "/dev/tty" };
	char p[4096], opt[64];
	size_t i;

	snprintf(p, sizeof(p), "%s/dev", root);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return -1;
	if (mount("kjudge-dev", p, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
		return -1;
	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (bind_path(root, nodes[i], 1) < 0 && errno != ENXIO)
			return -1;
	if (gpu) {
		DIR *d = opendir("/dev");
		struct dirent *e;

		while (d && (e = readdir(d)) != NULL) {
			char node[300];

			if (strncmp(e->d_name, "nvidia", 6) != 0)
				continue;
			snprintf(node, sizeof(node), "/dev/%s", e->d_name);
			if (bind_path(root, node, 1) < 0) {
				closedir(d);
				return -1;
			}
		}
		if (d)
			closedir(d);
	}
	snprintf(p, sizeof(p), "%s/dev/shm", root);
	snprintf(opt, sizeof(opt), "mode=1777,size=%lld", shm_bytes);
	if (mkdir(p, 0755) < 0 ||
	    mount("kjudge-shm", p, "tmpfs", MS_NOSUID | MS_NODEV, opt) < 0)
		return -1;
	return 0;
}

/*
 * A seccomp filter that refuses (EPERM) what the code under test never
 * needs and could use against the machine: tracing and reading other
 * processes, namespaces and mounts, kernel modules and keys, BPF.  The rest
 * of the kernel interface is allowed: Python, torch and CUDA use most of it.
 */
static int seccomp_filter(void)
{
#if defined(__x86_64__)
#define KJ_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KJ_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#ifdef KJ_AUDIT_ARCH
	static const int denied[] = {
		SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev,
		SYS_mount, SYS_umount2, SYS_pivot_root, SYS_unshare, SYS_setns,
		SYS_init_module, SYS_finit_module, SYS_delete_module,
		SYS_kexec_load, SYS_reboot, SYS_swapon, SYS_swapoff,
		SYS_bpf, SYS_keyctl, SYS_add_key, SYS_request_key,
		SYS_open_by_handle_at, SYS_userfaultfd, SYS_perf_event_open,
	};
	enum { N = sizeof(denied) / sizeof(denied[0]) };
	struct sock_filter f[4 + 2 * N + 1];
	struct sock_fprog prog;
	int i, k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KJ_AUDIT_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (i = 0; i < N; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)denied[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)k;
	prog.filter = f;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#else
	return 0; /* no filter on other architectures yet */
#endif
}

static int limit(int res, rlim_t v)
{
	struct rlimit rl = { v, v };

	/* CPU time: SIGXCPU at the soft limit says what happened; SIGKILL at
	 * the hard one, a little later, ends a process that ignores it. */
	if (res == RLIMIT_CPU)
		rl.rlim_max = v + 1;
	return setrlimit(res, &rl);
}

static int drop_capabilities(void)
{
	struct { unsigned version; int pid; } hdr = { 0x20080522, 0 }; /* v3 */
	struct { unsigned eff, perm, inh; } data[2];
	int cap;

	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

#define STEP(name, call)            \
	do {                        \
		*step = (name);     \
		if ((call) < 0)     \
			return -1;  \
	} while (0)

int kj__sandbox_child(const struct kj_sandbox *sb, const char **step)
{
	const char *root = sb->root_dir;
	char p[4096], opt[64];
	int i;

	STEP("make mounts private", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	STEP("mount the new root", mount("kjudge-root", root, "tmpfs", MS_NOSUID | MS_NODEV,
					 "mode=0755,size=1m"));
	/* /dev, /proc and /tmp first: paths bound below may lie under them
	 * (the scratch directory is often in /dev/shm). */
	STEP("make /dev", make_dev(root, sb->gpu, sb->tmp_bytes ? sb->tmp_bytes : 64LL << 20));
	snprintf(p, sizeof(p), "%s/proc", root);
	STEP("make /proc", mkdir(p, 0555));
	STEP("mount /proc", mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL));
	snprintf(p, sizeof(p), "%s/tmp", root);
	snprintf(opt, sizeof(opt), "mode=1777,size=%lld",
		 sb->tmp_bytes ? sb->tmp_bytes : 256LL << 20);
	if (mkdir(p, 01777) < 0 && errno != EEXIST)
		return *step = "make /tmp", -1;
	STEP("mount /tmp", mount("kjudge-tmp", p, "tmpfs", MS_NOSUID | MS_NODEV, opt));
	for (i = 0; i < sb->n_ro; i++)
		STEP("bind a read-only path", bind_path(root, sb->ro[i], 0));
	for (i = 0; i < sb->n_rw; i++)
		STEP("bind a writable path", bind_path(root, sb->rw[i], 1));
	snprintf(p, sizeof(p), "%s/.old", root);
	STEP("make the old root's mount point", mkdir(p, 0700));
	STEP("pivot_root", (int)syscall(SYS_pivot_root, root, p));
	STEP("chdir /", chdir("/"));
	STEP("detach the old root", umount2("/.old", MNT_DETACH));
	rmdir("/.old");
	/* The new root itself becomes read-only: nothing can be added to it. */
	STEP("make the root read-only",
	     mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL));
	STEP("set the host name", sethostname("kjudge", 6));
	if (sb->cpu_s > 0)
		STEP("limit CPU time", limit(RLIMIT_CPU, (rlim_t)sb->cpu_s));
	if (sb->fsize_bytes > 0)
		STEP("limit file size", limit(RLIMIT_FSIZE, (rlim_t)sb->fsize_bytes));
	if (sb->nproc > 0)
		STEP("limit processes", limit(RLIMIT_NPROC, (rlim_t)sb->nproc));
	if (sb->nofile > 0)
		STEP("limit open files", limit(RLIMIT_NOFILE, (rlim_t)sb->nofile));
	STEP("no core files", limit(RLIMIT_CORE, 0));
	STEP("drop capabilities", drop_capabilities());
	STEP("install the seccomp filter", seccomp_filter());
	*step = NULL;
	return 0;
}

/* --- cgroups -------------------------------------------------------------------- */

static long long read_ll(const char *path, const char *key)
{
	char buf[4096], *at;

	if (kj__read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!key)
		return strtoll(buf, NULL, 10);
	for (at = buf; (at = strstr(at, key)) != NULL; at++)
		if ((at == buf || at[-1] == '\n') && at[strlen(key)] == ' ')
			return strtoll(at + strlen(key) + 1, NULL, 10);
	return -1;
}

/* The judge's own v2 group, as a directory under /sys/fs/cgroup. */
static int v2_self(char *buf, size_t size)
{
	char line[300];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, size, "/sys/fs/cgroup%s", strcmp(line + 3, "/") ? line + 3 : "");
			found = 1;
		}
	fclose(f);
	return found ? 0 : -1;
}

/* Remove the empty groups that judges killed before they could clean up
 * left in dir: kjudge-PID-N, where PID no longer runs. */
static void sweep_stale(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char p[600];

		if (kj__left_by_dead_run(e->d_name)) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			(void)rmdir(p);
		}
	}
	if (d)
		closedir(d);
}

void kj_cgroup_attach(struct kj_cgroup *cg, const struct kj_sandbox *sb, int pid)
{
	static unsigned seq;
	char base[400], p[600], v[32];

	memset(cg, 0, sizeof(*cg));
	if (seq == 0) {
		sweep_stale("/sys/fs/cgroup/memory");
		sweep_stale("/sys/fs/cgroup/pids");
		if (v2_self(base, sizeof(base)) == 0)
			sweep_stale(base);
	}
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		if (v2_self(base, sizeof(base)) < 0)
			return;
		/* Controllers for the children of our group: refused where our
		 * group holds processes and is not the root, and then there is
		 * no cgroup limit, only the rlimits. */
		snprintf(p, sizeof(p), "%s/cgroup.subtree_control", base);
		(void)kj__write_text(p, "+memory +pids");
		snprintf(cg->mem, sizeof(cg->mem), "%s/kjudge-%d-%u", base, (int)getpid(), seq++);
		if (mkdir(cg->mem, 0700) < 0)
			return;
		cg->version = 2;
		snprintf(p, sizeof(p), "%s/memory.max", cg->mem);
		snprintf(v, sizeof(v), "%lld", sb->mem_bytes);
		if (sb->mem_bytes > 0)
			(void)kj__write_text(p, v);
		snprintf(p, sizeof(p), "%s/memory.swap.max", cg->mem);
		(void)kj__write_text(p, "0");
		snprintf(p, sizeof(p), "%s/pids.max", cg->mem);
		snprintf(v, sizeof(v), "%ld", sb->nproc);
		if (sb->nproc > 0)
			(void)kj__write_text(p, v);
		snprintf(p, sizeof(p), "%s/cgroup.procs", cg->mem);
		snprintf(v, sizeof(v), "%d", pid);
		if (kj__write_text(p, v) < 0)
			kj_cgroup_release(cg);
		return;
	}
	if (access("/sys/fs/cgroup/memory/tasks", F_OK) != 0)
		return;
	snprintf(cg->mem, sizeof(cg->mem), "/sys/fs/cgroup/memory/kjudge-%d-%u",
		 (int)getpid(), seq);
	snprintf(cg->pids, sizeof(cg->pids), "/sys/fs/cgroup/pids/kjudge-%d-%u",
		 (int)getpid(), seq++);
	if (mkdir(cg->mem, 0700) < 0) {
		cg->mem[0] = cg->pids[0] = '\0';
		return;
	}
	cg->version = 1;
	snprintf(v, sizeof(v), "%lld", sb->mem_bytes);
	snprintf(p, sizeof(p), "%s/memory.limit_in_bytes", cg->mem);
	if (sb->mem_bytes > 0)
		(void)kj__write_text(p, v);
	snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", cg->mem);
	if (sb->mem_bytes > 0)
		(void)kj__write_text(p, v);
	snprintf(v, sizeof(v), "%d", pid);
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg->mem);
	(void)kj__write_text(p, v);
	if (mkdir(cg->pids, 0700) == 0) {
		snprintf(p, sizeof(p), "%s/pids.max", cg->pids);
		if (sb->nproc > 0) {
			char n[32];

			snprintf(n, sizeof(n), "%ld", sb->nproc);
			(void)kj__write_text(p, n);
		}
		snprintf(p, sizeof(p), "%s/cgroup.procs", cg->pids);
		(void)kj__write_text(p, v);
	} else {
		cg->pids[0] = '\0';
	}
}

int kj_cgroup_oom_killed(const struct kj_cgroup *cg)
{
	char p[600];

	if (cg->version == 2) {
		snprintf(p, sizeof(p), "%s/memory.events", cg->mem);
		return read_ll(p, "oom_kill") > 0;
	}
	if (cg->version == 1) {
		long long n;

		snprintf(p, sizeof(p), "%s/memory.oom_control", cg->mem);
		n = read_ll(p, "oom_kill");
		if (n >= 0)
			return n > 0;
		snprintf(p, sizeof(p), "%s/memory.failcnt", cg->mem);
		return read_ll(p, NULL) > 0;
	}
	return 0;
}

/* Kill every process listed in a group's cgroup.procs. */
static void kill_procs(const char *group)
{
	char p[600], buf[8192], *s, *end;

	snprintf(p, sizeof(p), "%s/cgroup.procs", group);
	if (kj__read_text(p, buf, sizeof(buf)) <= 0)
		return;
	for (s = buf; *s; s = end) {
		long pid = strtol(s, &end, 10);

		if (end == s)
			break;
		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
		while (*end == '\n')
			end++;
	}
}

static void remove_group(const char *group)
{
	int tries;

	if (!group[0])
		return;
	for (tries = 0; tries < 200; tries++) {
		char p[600];

		snprintf(p, sizeof(p), "%s/cgroup.kill", group);
		if (kj__write_text(p, "1") < 0)
			kill_procs(group);
		if (rmdir(group) == 0 || errno == ENOENT)
			return;
		usleep(10000);
	}
}

void kj_cgroup_release(struct kj_cgroup *cg)
{
	if (cg->version) {
		remove_group(cg->mem);
		remove_group(cg->pids);
	}
	memset(cg, 0, sizeof(*cg));
}
