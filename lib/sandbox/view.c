/*
 * view.c - the child's side of a sandboxed start: its view of the files,
 * its limits, its seccomp filter.
 *
 * See kjudge/sandbox.h for the theory of operation.  Everything in
 * kj__sandbox_child runs in the child before the program does (between
 * clone() and execve(), or in a worker forked from a template): it only
 * makes system calls and formats paths on the stack, never allocates, and
 * reports a failure as errno plus the name of the step.  It calls nothing
 * else of the library, so that the template's own library
 * (worker/kjudge_template.c) is built from this file too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "sandbox/sandbox_internal.h"
#include "sandbox/sysnr.h"

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

/* The bind mount at dst made read-only (and nosuid).  A remount may not
 * drop flags a locked mount has (nodev, noexec on the original); try with
 * them when the plain one is refused. */
static int remount_ro(const char *dst)
{
	const unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;

	if (mount(NULL, dst, NULL, ro, NULL) < 0 &&
	    mount(NULL, dst, NULL, ro | MS_NODEV, NULL) < 0 &&
	    mount(NULL, dst, NULL, ro | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -1;
	return 0;
}

int kj__sandbox_no_mount_setattr;

/* struct mount_attr and its flags (linux/mount.h, Linux 5.12), which an
 * older C library's headers lack. */
struct kj_mount_attr {
	unsigned long long attr_set, attr_clr, propagation, userns_fd;
};
#define KJ_MOUNT_ATTR_RDONLY 0x1ULL
#define KJ_MOUNT_ATTR_NOSUID 0x2ULL
#define KJ_AT_RECURSIVE 0x8000

/*
 * The mount point (its octal escapes undone) of the first line of
 * mountinfo text (NUL-terminated) that lies strictly under dst (dl bytes)
 * and is not read-only, into out: 1; else 0.
 */
static int rw_mount_below(char *line, const char *dst, size_t dl, char *out, size_t size)
{
	char *f = line, *opts;
	size_t k = 0;
	int i;

	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ..." */
	for (i = 0; i < 4 && f; i++)
		if ((f = strchr(f, ' ')) != NULL)
			f++;
	if (!f || !(opts = strchr(f, ' ')))
		return 0;
	*opts++ = '\0';
	for (; *f && k + 1 < size; k++) {
		if (f[0] == '\\' && f[1] >= '0' && f[1] <= '3' && f[2] >= '0' && f[2] <= '7' &&
		    f[3] >= '0' && f[3] <= '7') {
			out[k] = (char)((f[1] - '0') * 64 + (f[2] - '0') * 8 + (f[3] - '0'));
			f += 4;
		} else {
			out[k] = *f++;
		}
	}
	out[k] = '\0';
	if (strncmp(out, dst, dl) != 0 || out[dl] != '/')
		return 0;
	return !(opts[0] == 'r' && opts[1] == 'o' && (opts[2] == ',' || opts[2] == ' ' ||
						      opts[2] == '\0'));
}

/* The first mount under dst of /proc/self/mountinfo that is still
 * writable, into out: 1; 0 when there is none; -1 on error. */
static int next_rw_below(const char *dst, char *out, size_t size)
{
	char buf[8192];
	size_t have = 0, dl = strlen(dst);
	ssize_t n;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), found = 0;

	if (fd < 0)
		return -1;
	while (!found && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *line = buf, *nl;

		have += (size_t)n;
		buf[have] = '\0';
		while (!found && (nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			found = rw_mount_below(line, dst, dl, out, size);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (!found && have == sizeof(buf) - 1) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
	}
	close(fd);
	return found ? 1 : n < 0 ? -1 : 0;
}

/*
 * Every mount under the bind at dst read-only too: a bind of a tree
 * takes the mounts under it along (MS_REC), and a remount changes only
 * the top one, which would leave, say, the cgroup hierarchies under /sys
 * writable.  mount_setattr does the whole tree at once (Linux 5.12);
 * where it is refused, each mount under dst still writable is remounted
 * in turn, as mountinfo lists them.
 */
static int ro_below(const char *dst)
{
	struct kj_mount_attr a = { KJ_MOUNT_ATTR_RDONLY | KJ_MOUNT_ATTR_NOSUID, 0, 0, 0 };
	char mp[4096];
	int tries, r;

	if (!kj__sandbox_no_mount_setattr &&
	    syscall(SYS_mount_setattr, AT_FDCWD, dst, KJ_AT_RECURSIVE, &a, sizeof(a)) == 0)
		return 0;
	for (tries = 0; tries < 4096; tries++) {
		if ((r = next_rw_below(dst, mp, sizeof(mp))) <= 0)
			return r;
		if (remount_ro(mp) < 0)
			return -1;
	}
	errno = ELOOP;  /* a mount that stays writable however remounted */
	return -1;
}

/* Bind path at root + at (at NULL: path), read-only (all the way down)
 * unless writable. */
static int bind_path(const char *root, const char *path, const char *at, int writable)
{
	char dst[4096];
	struct stat st;
	char link[256];
	ssize_t n;

	/* A top-level link of the host to a relative target (/lib -> usr/lib
	 * where /usr is merged) stays a link: bound as a directory of its own,
	 * "/lib/x86_64-linux-gnu/../../share" would climb to the sandbox's
	 * root instead of /usr (PoCL finds its headers that way).  What it
	 * leads to is bound in its own right, or the link leads nowhere. */
	if (!writable && path[0] == '/' && !strchr(path + 1, '/') &&
	    (n = readlink(path, link, sizeof(link) - 1)) > 0 && link[0] != '/') {
		link[n] = '\0';
		snprintf(dst, sizeof(dst), "%s%s", root, path);
		return symlink(link, dst) < 0 && errno != EEXIST ? -1 : 0;
	}
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -1;
	if (!at)
		at = path;
	if (make_target(root, at, !S_ISDIR(st.st_mode)) < 0)
		return -1;
	snprintf(dst, sizeof(dst), "%s%s", root, at);
	if (mount(path, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -1;
	if (writable)
		return 0;
	return remount_ro(dst) < 0 || ro_below(dst) < 0 ? -1 : 0;
}

/*
 * Whether path is a top-level symbolic link of the host with a relative
 * target and no "..": 1 with the target in buf (the first half of it),
 * else 0.  (sb->keep_links: such a link is made again inside, not bound.)
 */
static int top_link(const char *path, char *buf, size_t size)
{
	ssize_t n;

	if (path[0] != '/' || strchr(path + 1, '/'))
		return 0;
	n = readlink(path, buf, size / 2 - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return buf[0] != '/' && !strstr(buf, "..");
}

/* root + path into out (size bytes). */
static char *root_path(const char *root, const char *path, char *out, size_t size)
{
	snprintf(out, size, "%s%s", root, path);
	return out;
}

/* Flags of a hidden directory's tmpfs: nothing in it runs or is a device. */
#define HIDE_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

/*
 * An empty tmpfs over root + dir, where the binds so far show a directory:
 * writable for now, so that later binds can make their mount points in it
 * (seal_hidden makes it read-only once they are all made).  Returns 1 when
 * it is mounted, 0 when nothing is there (nothing to hide), -1 on error.
 */
static int hide_dir(const char *root, const char *dir)
{
	char dst[4096];
	struct stat st;

	if ((size_t)snprintf(dst, sizeof(dst), "%s%s", root, dir) >= sizeof(dst)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (lstat(dst, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	if (mount("kjudge-hidden", dst, "tmpfs", HIDE_FLAGS, "mode=0755,size=64k") < 0)
		return -1;
	return 1;
}

/* The directories hidden (mounted[i]) made read-only, once every bind is
 * in place. */
static int seal_hidden(const struct kj_sandbox *sb, const char *root,
		       const unsigned char *mounted)
{
	char dst[4096];
	int i;

	for (i = 0; i < sb->n_ro; i++) {
		if (!mounted[i])
			continue;
		snprintf(dst, sizeof(dst), "%s%s", root, sb->ro[i]);
		if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | HIDE_FLAGS, NULL) < 0)
			return -1;
	}
	return 0;
}

/* --- what the host keeps private ----------------------------------------------- */

/* How far a tree is looked at: MASK_ALL all the way down (a directory
 * deeper than MASK_MAX_LEVEL is then masked whole: what cannot be looked
 * at is not shown), MASK_WHOLE the directory itself, else that many
 * levels (kj_sandbox_mask). */
#define MASK_ALL KJ_SANDBOX_MASK_ALL
#define MASK_WHOLE (-1)
#define MASK_MAX_LEVEL KJ_SANDBOX_MASK_DEPTH

/* The trees every sandbox masks, wherever its binds show them (see
 * kjudge/sandbox.h for why each). */
static const struct {
	const char *dir;
	int levels;
} private_trees[] = {
	{ "/etc", MASK_ALL },
	{ "/proc", 1 },
	{ "/sys", 2 },
	{ "/sys/class", 2 },
	{ "/sys/firmware", MASK_ALL },
	{ "/sys/devices/virtual/dmi/id", 1 },
	{ "/sys/kernel/slab", MASK_WHOLE },
};

struct masker {
	char file[4160], dir[4160];  /* the masks, in the new root */
	char path[4160];             /* root + the entry looked at */
	size_t root_len;
	int procfs;                  /* /proc (see seal_here) */
	char failed[60];             /* the step that failed, for the judge */
};

/* The raw record of getdents64 (glibc's wrapper is 2.30 on). */
struct kj_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Mount flags of a mask: read-only, and nothing in it runs or is a device. */
#define MASK_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/*
 * Whether the entry is private: its owner or its group may read it (list
 * and enter it, for a directory), a user that is neither may not.  (A
 * file no one may read, such as a write-only attribute of /sys, is left:
 * every masked tree is read-only, and nothing can be got from it.)
 */
static int private_entry(const struct stat *st)
{
	mode_t m = st->st_mode;

	if (S_ISDIR(m))
		return (m & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) &&
		       (m & (S_IRWXU | S_IRWXG)) != 0;
	return !(m & S_IROTH) && (m & (S_IRUSR | S_IRGRP)) != 0;
}

/* The empty mode-0000 file or directory bound read-only over m->path:
 * opening it is refused (the worker holds no capability), and it cannot
 * be changed. */
static int mask_here(const struct masker *m, int is_dir)
{
	if (mount(is_dir ? m->dir : m->file, m->path, NULL, MS_BIND, NULL) < 0)
		return -1;
	return mount(NULL, m->path, NULL, MS_REMOUNT | MS_BIND | MASK_FLAGS, NULL);
}

/*
 * One of /proc's own entries (not a process's directory, not a link: self,
 * thread-self, mounts and net lead into the worker's own processes) bound
 * read-only over itself, when it is a directory or anyone may write it:
 * /proc/sys (a sysctl checks no capability, only that its writer is root,
 * as a root judge's worker is), /proc/sysrq-trigger, /proc/irq, /proc/bus,
 * /proc/driver (the NVIDIA driver's suspend), ...  /proc itself stays
 * writable for the worker's own processes: CUDA's driver writes there, and
 * fails with error 304 on a read-only /proc.
 */
static int seal_here(const struct masker *m, const struct stat *st)
{
	if (!S_ISDIR(st->st_mode) && !(st->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)))
		return 0;
	if (mount(m->path, m->path, NULL, MS_BIND, NULL) < 0)
		return -1;
	return mount(NULL, m->path, NULL, MS_REMOUNT | MS_BIND | MASK_FLAGS, NULL);
}

static int all_digits(const char *s)
{
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* Mask whatever the host keeps private among the entries of the directory
 * m->path (len bytes), which are on `level`, looking down to `levels`. */
static int mask_entries(struct masker *m, size_t len, int levels, int level)
{
	char buf[4096];
	long n;
	int fd = open(m->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), e;

	if (fd < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			const struct kj_dirent64 *d = (const void *)(buf + off);
			const char *name = d->d_name;
			size_t nl = strlen(name);
			struct stat st;
			int r = 0;

			off += d->d_reclen;
			/* A link leads where the view leads: nothing to mask. */
			if (d->d_type == DT_LNK || !strcmp(name, ".") || !strcmp(name, "..") ||
			    (m->procfs && all_digits(name)))
				continue;
			if (len + 1 + nl >= sizeof(m->path)) {
				errno = ENAMETOOLONG;
				goto fail;
			}
			m->path[len] = '/';
			memcpy(m->path + len + 1, name, nl + 1);
			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno == ENOENT)
					continue;  /* gone since it was listed */
				goto fail;
			}
			if (S_ISLNK(st.st_mode))
				continue;
			if (private_entry(&st))
				r = mask_here(m, S_ISDIR(st.st_mode));
			else if (m->procfs)
				r = seal_here(m, &st);
			else if (S_ISDIR(st.st_mode) && levels == MASK_ALL && level >= MASK_MAX_LEVEL)
				r = mask_here(m, 1);
			else if (S_ISDIR(st.st_mode) && (levels == MASK_ALL || level < levels))
				r = mask_entries(m, len + 1 + nl, levels, level + 1);
			if (r < 0)
				goto fail;
		}
	}
	if (n < 0)
		goto fail;
	m->path[len] = '\0';
	close(fd);
	return 0;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* Mask what the host keeps private in root + dir, when the binds show
 * it. */
static int mask_tree(struct masker *m, const char *root, const char *dir, int levels)
{
	struct stat st;

	if ((size_t)snprintf(m->path, sizeof(m->path), "%s%s", root, dir) >= sizeof(m->path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (lstat(m->path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISLNK(st.st_mode))
		return 0;
	if (levels == MASK_WHOLE && S_ISDIR(st.st_mode))
		return mask_here(m, 1);
	if (private_entry(&st))
		return mask_here(m, S_ISDIR(st.st_mode));
	if (!S_ISDIR(st.st_mode))
		return 0;
	m->procfs = !strcmp(dir, "/proc");
	return mask_entries(m, strlen(m->path), levels, 1);
}

/*
 * The masks over what the host lets no other user read, in every tree of
 * private_trees and every directory sb masks.  The two masks are made in
 * the new root and removed from it once bound (the binds keep them).
 * Returns 0, or -1 with errno and m->failed naming the step and the path.
 */
static int mask_private(const struct kj_sandbox *sb, const char *root, struct masker *m)
{
	size_t i, n = sizeof(private_trees) / sizeof(private_trees[0]);
	int fd, rc = 0, e;

	memset(m->failed, 0, sizeof(m->failed));
	snprintf(m->failed, sizeof(m->failed), "make the masks");
	snprintf(m->file, sizeof(m->file), "%s/.kjudge-mask-file", root);
	snprintf(m->dir, sizeof(m->dir), "%s/.kjudge-mask-dir", root);
	fd = open(m->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	close(fd);
	if (mkdir(m->dir, 0) < 0)
		return -1;
	m->root_len = strlen(root);
	for (i = 0; rc == 0 && i < n + (size_t)sb->n_ro; i++) {
		if (i < n)
			rc = mask_tree(m, root, private_trees[i].dir, private_trees[i].levels);
		else if (sb->ro_how[i - n] == KJ_SB_MASK)
			rc = mask_tree(m, root, sb->ro[i - n], sb->ro_depth[i - n]);
	}
	e = errno;
	if (rc < 0)
		snprintf(m->failed, sizeof(m->failed), "mask %s", m->path + m->root_len);
	if (unlink(m->file) < 0 || rmdir(m->dir) < 0) {
		if (rc == 0) {
			e = errno;
			snprintf(m->failed, sizeof(m->failed), "remove the masks");
		}
		rc = -1;
	}
	errno = e;
	return rc;
}

/* /dev: a tmpfs with the usual character devices and, for GPU attempts,
 * the NVIDIA nodes, all bound from the host (mknod is not allowed here).
 * No /dev/tty: the worker shares the judge's session, and through its
 * terminal a candidate could write to the user's screen, read the keys,
 * or push input into the shell (TIOCSTI). */
static int make_dev(const char *root, int gpu, long long shm_bytes)
{
	static const char *const nodes[] = { "/dev/null", "/dev/zero", "/dev/full",
		"/dev/random", "/dev/urandom" };
	char p[4096], opt[64];
	size_t i;

	snprintf(p, sizeof(p), "%s/dev", root);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return -1;
	if (mount("kjudge-dev", p, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
		return -1;
	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (bind_path(root, nodes[i], NULL, 1) < 0 && errno != ENXIO)
			return -1;
	if (gpu) {
		DIR *d = opendir("/dev");
		struct dirent *e;

		while (d && (e = readdir(d)) != NULL) {
			char node[300];

			if (strncmp(e->d_name, "nvidia", 6) != 0)
				continue;
			snprintf(node, sizeof(node), "/dev/%s", e->d_name);
			if (bind_path(root, node, NULL, 1) < 0) {
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

/* Every namespace flag clone(2) takes.  (CLONE_NEWTIME shares its bit
 * with the exit signal there: only unshare and clone3 take it, and both
 * are refused whole.) */
#define CLONE_NEW_ANY (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
		       CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* System call numbers from here up are no call of this ABI: on x86-64 the
 * x32 ABI's calls carry this bit (__X32_SYSCALL_BIT) under the same audit
 * architecture. */
#define NR_OTHER_ABI 0x40000000u

#define RET(v) ((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (v)))
#define DENY(e) RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/*
 * A seccomp filter that refuses (EPERM) what the code under test never
 * needs and could use against the machine: tracing and reading other
 * processes (ptrace, process_vm_*, pidfd_getfd), namespaces (unshare,
 * setns, clone with any CLONE_NEW* flag), mounts old and new (mount,
 * umount2, pivot_root, and fsopen, fsconfig, fsmount, fspick, move_mount,
 * open_tree, mount_setattr), io_uring (whose requests run system calls
 * this filter never sees), kernel modules and keys, BPF, perf events,
 * userfaultfd.  The rest of the kernel interface is allowed: Python,
 * torch and CUDA use most of it.  A call of another ABI (i386 through int
 * $0x80, another audit architecture; x32, numbers with the x32 bit) kills
 * the process: the filter's numbers mean nothing there.
 *
 * clone3 passes its flags in a struct in memory, which a filter cannot
 * read, so it is refused whole, with ENOSYS: that is what C libraries (glibc
 * 2.34 on, for threads, posix_spawn and fork) take as "an older kernel" and
 * fall back to clone, whose flags are the first argument, inspected here.
 *
 * prctl itself is allowed (Python and CUDA call it), but not its
 * PR_SET_PDEATHSIG: the death signal the spawn core set is what ends this
 * process, PID 1 of its namespace and so everything in it, when the judge
 * dies.
 *
 * The kernel reads clone's flags and prctl's option from the low 32 bits
 * of the first argument (clone's namespace flags all live there), which is
 * what the filter compares.
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
		SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_pidfd_getfd,
		SYS_mount, SYS_umount2, SYS_pivot_root, SYS_unshare, SYS_setns,
		SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount,
		SYS_fspick, SYS_mount_setattr,
		SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
		SYS_init_module, SYS_finit_module, SYS_delete_module,
		SYS_kexec_load, SYS_reboot, SYS_swapon, SYS_swapoff,
		SYS_bpf, SYS_keyctl, SYS_add_key, SYS_request_key,
		SYS_open_by_handle_at, SYS_userfaultfd, SYS_perf_event_open,
	};
	enum { N = sizeof(denied) / sizeof(denied[0]) };
	/* The low word of args[0]: its first half on a little-endian machine. */
	const unsigned arg0_low = (unsigned)offsetof(struct seccomp_data, args[0]) +
				  (kj__host_little_endian() ? 0u : 4u);
	struct sock_filter f[6 + 5 + 5 + 2 + 2 * N + 1];
	struct sock_fprog prog;
	int i, k = 0;

	/* Another ABI: killed. */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KJ_AUDIT_ARCH, 1, 0);
	f[k++] = RET(SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, NR_OTHER_ABI, 0, 1);
	f[k++] = RET(SECCOMP_RET_KILL_PROCESS);
	/* prctl: refuse PR_SET_PDEATHSIG, allow the rest. */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 4);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0_low);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_PDEATHSIG, 0, 1);
	f[k++] = DENY(EPERM);
	f[k++] = RET(SECCOMP_RET_ALLOW);
	/* clone: refuse a namespace flag, allow the rest. */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0_low);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEW_ANY, 0, 1);
	f[k++] = DENY(EPERM);
	f[k++] = RET(SECCOMP_RET_ALLOW);
	/* clone3: "not on this kernel", so that callers use clone. */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
	f[k++] = DENY(ENOSYS);
	for (i = 0; i < N; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)denied[i], 0, 1);
		f[k++] = DENY(EPERM);
	}
	f[k++] = RET(SECCOMP_RET_ALLOW);
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
	unsigned char mounted[KJ_SANDBOX_MAX_PATHS];
	struct masker m;
	int i;

	STEP("make mounts private", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	STEP("mount the new root", mount("kjudge-root", root, "tmpfs", MS_NOSUID | MS_NODEV,
					 "mode=0755,size=1m"));
	/* /dev, /proc and /tmp first: paths bound below may lie under them
	 * (the scratch directory is often in /dev/shm). */
	STEP("make /dev", make_dev(root, sb->gpu, sb->tmp_bytes ? sb->tmp_bytes : 64LL << 20));
	snprintf(p, sizeof(p), "%s/proc", root);
	STEP("make /proc", mkdir(p, 0555));
	/* Its own entries are made read-only with the masks (seal_here). */
	STEP("mount /proc", mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL));
	snprintf(p, sizeof(p), "%s/tmp", root);
	snprintf(opt, sizeof(opt), "mode=1777,size=%lld",
		 sb->tmp_bytes ? sb->tmp_bytes : 256LL << 20);
	if (mkdir(p, 01777) < 0 && errno != EEXIST)
		return *step = "make /tmp", -1;
	STEP("mount /tmp", mount("kjudge-tmp", p, "tmpfs", MS_NOSUID | MS_NODEV, opt));
	for (i = 0; i < sb->n_ro; i++) {
		mounted[i] = 0;
		if (sb->ro_how[i] == KJ_SB_MASK) {
			continue;  /* once every bind is made */
		} else if (sb->ro_how[i] == KJ_SB_HIDE) {
			int h = hide_dir(root, sb->ro[i]);

			STEP("hide a directory", h);
			mounted[i] = h > 0;
		} else if (sb->keep_links && top_link(sb->ro[i], p, sizeof(p)) > 0) {
			STEP("make a link", symlink(p, root_path(root, sb->ro[i], p + sizeof(p) / 2,
								 sizeof(p) / 2)));
		} else {
			STEP("bind a read-only path", bind_path(root, sb->ro[i], NULL, 0));
		}
	}
	for (i = 0; i < sb->n_rw; i++)
		STEP("bind a writable path", bind_path(root, sb->rw[i], sb->rw_at[i], 1));
	if (mask_private(sb, root, &m) < 0)
		return *step = m.failed, -1;
	STEP("make the hidden directories read-only", seal_hidden(sb, root, mounted));
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

/* --- a description from the judge (a template's child) ---------------------------- */

/* The next NUL-terminated string of [*at, end), NULL when none is left. */
static const char *next_str(const char **at, const char *end)
{
	const char *s = *at, *z;

	if (s >= end || !(z = memchr(s, '\0', (size_t)(end - s))))
		return NULL;
	*at = z + 1;
	return s;
}

/* A decimal number, whole: 0, or -1 when s is not one. */
static int parse_ll(const char *s, long long *v)
{
	long long x = 0;
	int neg = 0;

	if (!s || !*s)
		return -1;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (LLONG_MAX - 9) / 10)
			return -1;
		x = x * 10 + (*s - '0');
	}
	*v = neg ? -x : x;
	return 0;
}

int kj__sandbox_unpack(const char *buf, size_t len, struct kj_sandbox *sb)
{
	const char *at = buf, *end = buf + len, *key;
	long long v, d;

	memset(sb, 0, sizeof(*sb));
	while ((key = next_str(&at, end)) != NULL) {
		const char *a = NULL, *b = NULL, *c = NULL;

		if (!strcmp(key, "end"))
			return at == end && sb->root_dir ? 0 : (errno = EINVAL, -1);
		if (!strcmp(key, "root")) {
			if (!(a = next_str(&at, end)) || !*a)
				break;
			sb->root_dir = a;
		} else if (!strcmp(key, "ro")) {
			if (sb->n_ro >= KJ_SANDBOX_MAX_PATHS || !(a = next_str(&at, end)) ||
			    !(b = next_str(&at, end)) || !(c = next_str(&at, end)) ||
			    parse_ll(a, &v) < 0 || parse_ll(b, &d) < 0 || v < KJ_SB_BIND ||
			    v > KJ_SB_MASK || d < 0 || d > 255 || c[0] != '/')
				break;
			sb->ro_how[sb->n_ro] = (unsigned char)v;
			sb->ro_depth[sb->n_ro] = (unsigned char)d;
			sb->ro[sb->n_ro++] = c;
		} else if (!strcmp(key, "rw") || !strcmp(key, "rwat")) {
			if (sb->n_rw >= KJ_SANDBOX_MAX_PATHS || !(a = next_str(&at, end)) ||
			    a[0] != '/' || (key[2] && (!(b = next_str(&at, end)) || b[0] != '/')))
				break;
			sb->rw_at[sb->n_rw] = b;
			sb->rw[sb->n_rw++] = a;
		} else {
			if (!(a = next_str(&at, end)) || parse_ll(a, &v) < 0 || v < 0)
				break;
			if (!strcmp(key, "gpu"))
				sb->gpu = v != 0;
			else if (!strcmp(key, "links"))
				sb->keep_links = v != 0;
			else if (!strcmp(key, "cpu"))
				sb->cpu_s = (double)v;
			else if (!strcmp(key, "fsize"))
				sb->fsize_bytes = v;
			else if (!strcmp(key, "nproc"))
				sb->nproc = (long)v;
			else if (!strcmp(key, "nofile"))
				sb->nofile = (long)v;
			else if (!strcmp(key, "tmp"))
				sb->tmp_bytes = v;
			else
				break;
		}
	}
	errno = EINVAL;
	return -1;
}
