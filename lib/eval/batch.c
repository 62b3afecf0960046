/*
 * batch.c - the batch's golden cache on a huge-page tmpfs, and its workers
 * at once (eval.h).
 *
 * Under eval the reference writes the golden outputs of every task, case
 * and input set once per batch; for KernelBench's 6.4 GB outputs that write
 * is most of an attempt's time on the device, and on /dev/shm (4 KiB pages)
 * it runs at about 2.5 GB/s where a tmpfs with transparent huge pages takes
 * 5.5 GB/s (docs/PERFORMANCE.md).  The eval process mounts such a tmpfs in a
 * mount namespace of its own (sandbox/scratch.c: as root directly, else in
 * a user namespace that maps only its own ids); the attempts it forks
 * inherit the namespace, so one attempt's goldens are the next one's, and
 * the mount goes with the last of them.  Only a cache that is itself in
 * memory is replaced: its entries would not outlive a reboot either, while
 * a cache on a disk is the user's to keep.
 *
 * It also counts the workers a batch runs at once, for the memory budget
 * (kj_eval_workers_at_once).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include "kjudge/eval.h"
#include "base/fs.h"
#include "sandbox/sandbox_internal.h"

int kj_eval_batch_cache(const char *shared_dir, const char *work_dir, char *dir, size_t size,
			const char **how)
{
	struct statfs fs;
	char from[PATH_MAX], to[PATH_MAX];
	const char *kind = "shared";

	*how = shared_dir ? "the shared cache"
			  : "each attempt's own scratch directory (the cache is off)";
	if (!shared_dir || !work_dir)
		return 0;
	/* The cache may not exist yet: its nearest existing folder says
	 * where it will be. */
	if (snprintf(from, sizeof(from), "%s", shared_dir) >= (int)sizeof(from))
		return 0;
	while (statfs(from, &fs) < 0) {
		char *slash = strrchr(from, '/');

		if (errno != ENOENT || !slash || slash == from)
			return 0;
		*slash = '\0';
	}
	if (fs.f_type != TMPFS_MAGIC) {
		*how = "the shared cache (not in memory: kept)";
		return 0;
	}
	if (snprintf(dir, size, "%s/golden", work_dir) >= (int)size ||
	    (mkdir(dir, 0700) < 0 && errno != EEXIST))
		return 0;
	if (kj__scratch_private(dir, &kind) < 0)
		return 0;
	if (strcmp(kind, "private-tmpfs-huge") != 0) {
		/* No huge pages: the shared cache is as fast, and it lasts. */
		if (strcmp(kind, "shared") != 0)
			umount2(dir, MNT_DETACH);
		*how = "the shared cache (no huge pages here)";
		return 0;
	}
	/* The workers' bytecode tree stays the shared one: without it every
	 * worker of the batch would compile torch's modules again. */
	if (kj__mkdirs(shared_dir, 0700) == 0 &&
	    snprintf(from, sizeof(from), "%s/pycache", shared_dir) < (int)sizeof(from) &&
	    snprintf(to, sizeof(to), "%s/pycache", dir) < (int)sizeof(to) &&
	    (mkdir(from, 0700) == 0 || errno == EEXIST) && mkdir(to, 0700) == 0)
		(void)mount(from, to, NULL, MS_BIND, NULL);
	*how = "a huge-page tmpfs of the batch's own";
	return 1;
}

void kj_eval_batch_cache_end(const char *dir)
{
	char sub[PATH_MAX];

	if (snprintf(sub, sizeof(sub), "%s/pycache", dir) < (int)sizeof(sub))
		(void)umount2(sub, MNT_DETACH);
	(void)umount2(dir, MNT_DETACH);
}

int kj_eval_workers_at_once(int jobs, int on_cpu, int spec_suite)
{
	if (jobs < 1)
		jobs = 1;
	if (spec_suite)
		return jobs;
	return on_cpu ? 2 : 2 * jobs;
}
