/*
 * scratch.c - the run's scratch directory as a private tmpfs.
 *
 * Workers hand every output to the judge as a .npy file in the scratch
 * directory.  For large outputs (KernelBench's 6.4 GB tensors) writing that
 * file was the slowest step of a run: a shared tmpfs such as /dev/shm uses
 * 4 KiB pages, and writing costs about 1.5 us per page on the GPU machine
 * (2.5 GB/s), while a tmpfs with transparent huge pages takes the same data
 * at 5.5 GB/s (bench/gpu/d2h_bench.py).  /dev/shm cannot be changed, but a
 * process can mount a tmpfs of its own in a mount namespace of its own: as
 * root directly, otherwise inside a user namespace that maps only its own
 * user and group.  The mount is seen by the judge and the workers it starts
 * (they inherit the namespace), by no one else, and it goes away with the
 * last of them, so a judge that dies leaves no data behind.
 *
 * Why the mount cannot outlive the run: a mount namespace, and every mount
 * in it, is freed when its last process leaves it.  The processes in the
 * judge's namespace are the judge and the workers and descendants it
 * starts outside the sandbox (a sandboxed worker gets a copy in a namespace
 * of its own, which holds its root as well); every worker dies with the
 * judge (the parent-death signal) and takes its descendants with it (PID 1
 * of its own PID namespace), so when the judge dies, by any signal, the
 * mount goes.  Two things could keep a namespace alive that are not the
 * run's: a process that opened /proc/PID/ns/mnt of one of ours (the same
 * user or root, with ptrace rights), and, on a machine without PID
 * namespaces, a daemon a worker started that escaped its process group; the
 * mount then lasts as long as that process.  What is left in the host's
 * view is the empty mount point, which the next run's sweep removes.
 *
 * unshare(CLONE_NEWUSER) works only in a single-threaded process: this runs
 * before the judge starts any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "sandbox/sandbox_internal.h"

/* Enter a new mount namespace: directly when allowed (root), else inside a
 * new user namespace where this process keeps its own uid and gid. */
static int own_mount_namespace(void)
{
	char map[64];
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();

	if (unshare(CLONE_NEWNS) == 0)
		return 0;
	if (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	if (kj__write_text("/proc/self/uid_map", map) < 0)
		return -1;
	/* A gid map needs setgroups() denied first (user_namespaces(7)). */
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	if (kj__write_text("/proc/self/setgroups", "deny") < 0 ||
	    kj__write_text("/proc/self/gid_map", map) < 0)
		return -1;
	return 0;
}

int kj__scratch_private(const char *dir, const char **how)
{
	*how = "shared";
	if (own_mount_namespace() < 0)
		return -1;
	/* Nothing mounted from here on may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	if (mount("kjudge", dir, "tmpfs", MS_NOSUID | MS_NODEV,
		  "mode=0700,huge=within_size") == 0) {
		*how = "private-tmpfs-huge";
		return 0;
	}
	/* A kernel without transparent huge pages refuses the option. */
	if (mount("kjudge", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0)
		return -1;
	*how = "private-tmpfs";
	return 0;
}
