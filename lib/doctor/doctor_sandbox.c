/*
 * doctor_sandbox.c - can this machine sandbox a candidate?  The doctor's
 * probes of namespaces, seccomp, cgroups and the private scratch tmpfs.
 *
 * Each probe tries the real operation the sandbox will need, in a forked
 * child (kj__doctor_in_child), because the settings that decide it are
 * many and some cannot be read at all: sysctls, an AppArmor policy, a
 * container runtime's own seccomp filter, a read-only cgroup mount.  The
 * sysctls that can be read are reported too, as the likely fix.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox_internal.h"
#include "doctor/doctor_internal.h"

#define NS_ALL (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/* --- namespaces ------------------------------------------------------------------------- */

/* After unshare(CLONE_NEWPID) only children enter the new namespace: the
 * first one must be its pid 1, or the namespace is not what it claims. */
static int first_child_is_pid1(char *msg, size_t size)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		snprintf(msg, size, "fork in the new pid namespace: %s", strerror(errno));
		return 1;
	}
	if (pid == 0)
		_exit(getpid() == 1 ? 0 : 1);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(msg, size, "the first child in the new pid namespace is not pid 1");
		return 1;
	}
	return 0;
}

static int try_unshare(void *arg, char *msg, size_t size)
{
	int flags = *(const int *)arg;

	if (unshare(flags) < 0) {
		snprintf(msg, size, "unshare: %s", strerror(errno));
		return 1;
	}
	return first_child_is_pid1(msg, size);
}

/* The sysctls that restrict user namespaces, as "name=value" for the
 * files this kernel has; *fix gets the setting that lifts the first one
 * that forbids them to this user. */
static int userns_knobs(char *detail, size_t size, const char **fix)
{
	static const struct {
		const char *path, *name;
		const char *bad;      /* the value that forbids */
		int root_too;         /* does it bind root as well? */
		const char *fix;
	} knobs[] = {
		{ "/proc/sys/kernel/unprivileged_userns_clone",
		  "kernel.unprivileged_userns_clone", "0", 0,
		  "sysctl -w kernel.unprivileged_userns_clone=1" },
		{ "/proc/sys/user/max_user_namespaces", "user.max_user_namespaces",
		  "0", 1, "sysctl -w user.max_user_namespaces=15000" },
		{ "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
		  "kernel.apparmor_restrict_unprivileged_userns", "1", 0,
		  "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 "
		  "(or an AppArmor profile that grants kjudge 'userns')" },
	};
	int root = geteuid() == 0, n = 0;
	size_t i;

	detail[0] = '\0';
	*fix = NULL;
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		char v[64];

		if (kj__read_text(knobs[i].path, v, sizeof(v)) < 0)
			continue;
		kj__doctor_append(detail, size, "%s%s=%s", n++ ? ", " : "",
				  knobs[i].name, v);
		if (!*fix && !strcmp(v, knobs[i].bad) && (knobs[i].root_too || !root))
			*fix = knobs[i].fix;
	}
	return n;
}

static void probe_namespaces(struct kj__doctor *d)
{
	struct kj_doctor_check *c;
	char msg[KJ_DOCTOR_DETAIL_MAX], knobs[512];
	const char *knob_fix;
	int root = geteuid() == 0;
	int flags = CLONE_NEWUSER | NS_ALL, rc;

	c = kj__doctor_check(d, KJ_DOCTOR_SANDBOX, "user-namespaces");
	userns_knobs(knobs, sizeof(knobs), &knob_fix);
	rc = kj__doctor_in_child(try_unshare, &flags, d->timeout_s, msg, sizeof(msg));
	if (rc == 0)
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "a child can unshare user, mount, "
			       "pid, net, ipc and uts namespaces");
	else
		/* The sandbox starts every candidate in a user namespace
		 * (lib/sandbox.c), as root too: it is what lets the candidate
		 * be root of nothing. */
		kj__doctor_set(c, KJ_DOCTOR_FAIL,
			       knob_fix ? knob_fix
					: "allow unshare(CLONE_NEWUSER): outside a container, or "
					  "in one started with --security-opt seccomp=unconfined "
					  "(a user namespace is what lets kjudge sandbox without root)",
			       "a child cannot make a user namespace with the others: %s%s%s",
			       msg, knobs[0] ? "; " : "", knobs);

	c = kj__doctor_check(d, KJ_DOCTOR_SANDBOX, "userns-sysctl");
	if (!knobs[0])
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "this kernel has no user "
			       "namespace sysctls to check");
	else if (knob_fix)
		kj__doctor_set(c, KJ_DOCTOR_WARN, knob_fix, "%s: user namespaces are "
			       "restricted for this user", knobs);
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "%s", knobs);

	if (!root)
		return;
	c = kj__doctor_check(d, KJ_DOCTOR_SANDBOX, "namespaces");
	flags = NS_ALL;
	rc = kj__doctor_in_child(try_unshare, &flags, d->timeout_s, msg, sizeof(msg));
	if (rc == 0)
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "as root, a child can unshare "
			       "mount, pid, net, ipc and uts namespaces without a user "
			       "namespace");
	else
		/* Not needed while user namespaces work: a hint for the
		 * machines where only these do. */
		kj__doctor_set(c, KJ_DOCTOR_WARN,
			       "give the process CAP_SYS_ADMIN in its namespace (a "
			       "container: --privileged or --cap-add SYS_ADMIN with "
			       "--security-opt seccomp=unconfined)",
			       "as root, a child cannot unshare mount, pid, net, ipc and "
			       "uts namespaces: %s", msg);
}

/* --- seccomp ------------------------------------------------------------------------------ */

static int try_seccomp(void *arg, char *msg, size_t size)
{
	/* The smallest filter there is: allow everything.  Installing it
	 * needs the same kernel support and permission as a real one. */
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, allow };

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(msg, size, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return 1;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		snprintf(msg, size, "PR_SET_SECCOMP: %s", strerror(errno));
		return errno == EINVAL ? 2 : 1;
	}
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != SECCOMP_MODE_FILTER) {
		snprintf(msg, size, "the filter was accepted but PR_GET_SECCOMP does "
			 "not report it");
		return 1;
	}
	return 0;
}

static void probe_seccomp(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_SANDBOX, "seccomp");
	char msg[KJ_DOCTOR_DETAIL_MAX];
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	const char *now = mode == 2 ? "this process already runs under a filter "
				      "(a container's); filters stack"
			  : mode == 0 ? "this process runs unfiltered"
				      : "PR_GET_SECCOMP fails (a kernel without seccomp?)";
	int rc = kj__doctor_in_child(try_seccomp, NULL, d->timeout_s, msg, sizeof(msg));

	if (rc == 0)
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "a child can set no_new_privs and "
			       "install a seccomp filter; %s", now);
	else
		kj__doctor_set(c, KJ_DOCTOR_FAIL,
			       rc == 2 ? "a kernel built with CONFIG_SECCOMP_FILTER=y"
				       : "allow prctl(PR_SET_SECCOMP) (a container: "
					 "--security-opt seccomp=unconfined)",
			       "a child cannot install a seccomp filter: %s; %s", msg, now);
}

/* --- cgroups ------------------------------------------------------------------------------- */

struct cgroups {
	char *mounts;          /* /proc/mounts */
	char self[8192];       /* /proc/self/cgroup */
	char table[4096];      /* /proc/cgroups: which controllers the kernel enabled */
	char v2[512];          /* cgroup2 mount point, "" if none */
};

/* /proc/mounts can be long on a busy machine; read it whole. */
static char *read_mounts(void)
{
	size_t size = 64 << 10;

	while (size <= (16u << 20)) {
		char *buf = malloc(size);
		long n;

		if (!buf)
			return NULL;
		n = kj__read_text("/proc/mounts", buf, size);
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)n < size - 64)
			return buf;
		free(buf);
		size *= 4;
	}
	return NULL;
}

/* Is `ctl` enabled in the kernel (the last column of /proc/cgroups)?  1 yes,
 * 0 no, -1 not listed. */
static int kernel_enabled(const char *table, const char *ctl)
{
	const char *cursor = table, *line;
	size_t n = strlen(ctl), len;

	/* subsys_name hierarchy num_cgroups enabled */
	while (kj__doctor_next_line(&cursor, &line, &len)) {
		if (len > n && !strncmp(line, ctl, n) &&
		    (line[n] == '\t' || line[n] == ' ')) {
			while (len > n && (line[len - 1] == ' ' || line[len - 1] == '\t'))
				len--;
			return line[len - 1] == '1';
		}
	}
	return -1;
}

/* Try to make and remove a group named kjudge-doctor-PID in dir.  Returns
 * 0, or an errno. */
static int try_group(const char *dir)
{
	char g[1024];

	if (snprintf(g, sizeof(g), "%s/kjudge-doctor-%ld", dir, (long)getpid()) >=
	    (int)sizeof(g))
		return ENAMETOOLONG;
	if (mkdir(g, 0755) < 0)
		return errno;
	return rmdir(g) < 0 ? errno : 0;
}

/* The fix for a group that cannot be made in dir (mnt: a v1 hierarchy's
 * root, NULL under v2), into buf. */
static const char *mkdir_fix(int e, const char *mnt, char *buf, size_t size)
{
	if (e == EROFS)
		snprintf(buf, size, "the cgroup file system is read-only here (a "
			 "container): give kjudge a writable one (docker run "
			 "--cgroupns=private, /sys/fs/cgroup mounted read-write)");
	else if (mnt)
		snprintf(buf, size, "run kjudge as root (it makes its groups at the "
			 "root of %.300s)", mnt);
	else
		snprintf(buf, size, "run kjudge as root, in a cgroup namespace of its "
			 "own (docker run --cgroupns=private)");
	return buf;
}

/*
 * cgroup v1: the controller's own hierarchy must be mounted and a group
 * creatable at its root, where the sandbox makes its groups
 * (lib/sandbox.c).
 */
static void v1_controller(struct kj_doctor_check *c, const char *mnt,
			  enum kj_doctor_status missing, const char *why)
{
	char fix[KJ_DOCTOR_FIX_MAX];
	int e = try_group(mnt);

	if (e == 0)
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "cgroup v1 hierarchy at %s; a "
			       "group can be made at its root", mnt);
	else
		kj__doctor_set(c, missing, mkdir_fix(e, mnt, fix, sizeof(fix)),
			       "cgroup v1 hierarchy at %s, but no group can be made at "
			       "its root: %s; %s", mnt, strerror(e), why);
}

/*
 * cgroup v2: the sandbox makes its groups below this process's own group
 * and enables the controller there (cgroup.subtree_control).  That works
 * where the controller reaches this group and the group may hand it on:
 * the root may, and so may a group that already does; any other group
 * holds this very process, and v2's "no internal processes" rule forbids
 * it.  The doctor does not enable it itself: it changes nothing on the
 * machine but a group made and removed.
 */
static void v2_controller(struct kj_doctor_check *c, const struct cgroups *cg,
			  const char *ctl, enum kj_doctor_status missing,
			  const char *why)
{
	char path[1024], dir[1600], file[1700], list[1024], sub[1024];
	char fix[KJ_DOCTOR_FIX_MAX];
	int e, root;

	if (kj__doctor_cgroup_path(cg->self, NULL, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "/");
	root = !strcmp(path, "/");
	snprintf(dir, sizeof(dir), "%s%s", cg->v2, root ? "" : path);
	snprintf(file, sizeof(file), "%s/cgroup.controllers", dir);
	if (kj__read_text(file, list, sizeof(list)) < 0 ||
	    !kj__doctor_has_word(list, ctl)) {
		snprintf(fix, sizeof(fix), "enable it in the group above: echo +%s > "
			 "PARENT/cgroup.subtree_control, PARENT the parent of %.300s",
			 ctl, dir);
		kj__doctor_set(c, missing, fix, "cgroup v2 at %s, but %s does not "
			       "reach this process's group %s (it has: %s); %s",
			       cg->v2, ctl, dir, list[0] ? list : "none", why);
		return;
	}
	snprintf(file, sizeof(file), "%s/cgroup.subtree_control", dir);
	if (kj__read_text(file, sub, sizeof(sub)) < 0)
		sub[0] = '\0';
	if (!root && !kj__doctor_has_word(sub, ctl)) {
		kj__doctor_set(c, missing, "start kjudge in the root cgroup (echo $$ > "
			       "/sys/fs/cgroup/cgroup.procs, then run it) or in a "
			       "cgroup namespace of its own (docker run --cgroupns=private)",
			       "cgroup v2 at %s: this process's group %s holds "
			       "processes, so it cannot hand %s to the groups kjudge "
			       "makes in it; %s", cg->v2, dir, ctl, why);
		return;
	}
	e = try_group(dir);
	if (e) {
		kj__doctor_set(c, missing, mkdir_fix(e, NULL, fix, sizeof(fix)),
			       "cgroup v2 at %s, but no group can be made in %s: %s; %s",
			       cg->v2, dir, strerror(e), why);
		return;
	}
	kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "cgroup v2 at %s; groups with %s can "
		       "be made in %s", cg->v2, ctl, dir);
}

/* Can the sandbox limit with controller ctl? */
static void probe_controller(struct kj__doctor *d, const struct cgroups *cg,
			     const char *ctl, enum kj_doctor_status missing,
			     const char *why)
{
	char name[32], mnt[512], fix[KJ_DOCTOR_FIX_MAX];
	struct kj_doctor_check *c;

	snprintf(name, sizeof(name), "cgroup-%s", ctl);
	c = kj__doctor_check(d, KJ_DOCTOR_SANDBOX, name);
	if (kernel_enabled(cg->table, ctl) == 0) {
		snprintf(fix, sizeof(fix), "boot with cgroup_enable=%s on the kernel "
			 "command line", ctl);
		kj__doctor_set(c, missing, fix, "the kernel has the %s controller "
			       "disabled (/proc/cgroups); %s", ctl, why);
	} else if (cg->mounts &&
		   kj__doctor_cgroup_mount(cg->mounts, ctl, mnt, sizeof(mnt)) == 0) {
		v1_controller(c, mnt, missing, why);
	} else if (cg->v2[0]) {
		v2_controller(c, cg, ctl, missing, why);
	} else {
		snprintf(fix, sizeof(fix), "mount -t cgroup2 none /sys/fs/cgroup (or, "
			 "for cgroup v1, mount -t cgroup -o %s cgroup "
			 "/sys/fs/cgroup/%s)", ctl, ctl);
		kj__doctor_set(c, missing, fix, "no cgroup hierarchy has the %s "
			       "controller; %s", ctl, why);
	}
}

static void probe_cgroups(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_SANDBOX, "cgroups");
	struct cgroups *cg = calloc(1, sizeof(*cg));
	static const char *const v1[] = { "memory", "pids", "cpu", "cpuacct",
					  "cpuset", "freezer", "devices", "blkio" };
	char found[256] = "";
	size_t i;

	if (!cg) {
		d->oom = 1;
		return;
	}
	cg->mounts = read_mounts();
	kj__read_text("/proc/self/cgroup", cg->self, sizeof(cg->self));
	kj__read_text("/proc/cgroups", cg->table, sizeof(cg->table));
	if (!cg->mounts || kj__doctor_cgroup_mount(cg->mounts, NULL, cg->v2,
						   sizeof(cg->v2)) < 0)
		cg->v2[0] = '\0';
	for (i = 0; cg->mounts && i < sizeof(v1) / sizeof(v1[0]); i++) {
		char mnt[512];

		if (kj__doctor_cgroup_mount(cg->mounts, v1[i], mnt, sizeof(mnt)) == 0)
			kj__doctor_append(found, sizeof(found), "%s%s", found[0] ? ", " : "",
					  v1[i]);
	}
	if (!cg->mounts)
		kj__doctor_set(c, KJ_DOCTOR_FAIL, "mount proc on /proc", "cannot read "
			       "/proc/mounts");
	else if (found[0] && cg->v2[0])
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "cgroup v1 (hybrid): %s "
			       "hierarchies, and cgroup v2 at %s", found, cg->v2);
	else if (found[0])
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "cgroup v1: %s hierarchies", found);
	else if (cg->v2[0])
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "cgroup v2 (unified) at %s", cg->v2);
	else
		kj__doctor_set(c, KJ_DOCTOR_FAIL, "mount -t cgroup2 none /sys/fs/cgroup",
			       "no cgroup file system is mounted");
	probe_controller(d, cg, "memory", KJ_DOCTOR_FAIL,
			 "the sandbox needs it to limit memory");
	/* RLIMIT_NPROC stops a fork bomb too, only per user rather than per
	 * attempt: a missing pids controller is a weakness, not a stop. */
	probe_controller(d, cg, "pids", KJ_DOCTOR_WARN,
			 "without it the sandbox limits processes per user (RLIMIT_NPROC)");
	free(cg->mounts);
	free(cg);
}

/* --- private scratch ------------------------------------------------------------------------ */

static int try_tmpfs(void *arg, char *msg, size_t size)
{
	const char *dir = arg, *how = "shared";
	struct statfs st;

	/* The torch runner's own code: what works here works there. */
	if (kj__scratch_private(dir, &how) < 0) {
		snprintf(msg, size, "%s", strerror(errno));
		return 1;
	}
	if (statfs(dir, &st) < 0 || st.f_type != TMPFS_MAGIC) {
		snprintf(msg, size, "the mount call succeeded, but %s is not a tmpfs", dir);
		return 1;
	}
	snprintf(msg, size, "%s", how);
	return 0;
}

static void probe_tmpfs(struct kj__doctor *d)
{
	struct kj_doctor_check *c = kj__doctor_check(d, KJ_DOCTOR_SANDBOX, "private-tmpfs");
	/* Where verify and benchmark make their scratch directory. */
	const char *tmp = d->o->cfg->scratch_parent;
	char dir[1024], msg[KJ_DOCTOR_DETAIL_MAX];
	int rc;

	snprintf(dir, sizeof(dir), "%.1000s/kjudge-doctor-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		kj__doctor_set(c, KJ_DOCTOR_FAIL, "set TMPDIR to a writable directory",
			       "cannot make a directory to mount on: %s", strerror(errno));
		return;
	}
	rc = kj__doctor_in_child(try_tmpfs, dir, d->timeout_s, msg, sizeof(msg));
	/* The mount lived in the child's namespace and died with it. */
	rmdir(dir);
	if (rc != 0)
		kj__doctor_set(c, KJ_DOCTOR_FAIL,
			       "allow mount namespaces: run as root, or allow user "
			       "namespaces (see user-namespaces)",
			       "a child cannot mount a private tmpfs in a new mount "
			       "namespace: %s", msg);
	else if (strcmp(msg, "private-tmpfs-huge"))
		kj__doctor_set(c, KJ_DOCTOR_WARN,
			       "a kernel with CONFIG_TRANSPARENT_HUGEPAGE (tmpfs huge= "
			       "pages); without it large outputs are written at about "
			       "half the speed",
			       "a private tmpfs mounts in a new mount namespace, but "
			       "without huge=within_size (%s)", msg);
	else
		kj__doctor_set(c, KJ_DOCTOR_OK, NULL, "a private tmpfs with "
			       "huge=within_size mounts in a new mount namespace");
}

void kj__doctor_sandbox(struct kj__doctor *d)
{
	probe_namespaces(d);
	probe_seccomp(d);
	probe_cgroups(d);
	probe_tmpfs(d);
}
