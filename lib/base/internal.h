/*
 * internal.h - declarations shared between library files (kj__ prefix).
 *
 * Include it after every system header: it ends by including banned.h.
 */
#ifndef KJ_INTERNAL_H
#define KJ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>


/* Number of online CPUs, at least 1. */
int kj__online_cpus(void);

/* Whether NVIDIA's driver is loaded here (/dev/nvidiactl exists): the one
 * test of the library, near enough to what torch.cuda.is_available()
 * says, used where a device must be chosen or mounted before any worker
 * can be asked (sys.c). */
int kj__nvidia_driver_loaded(void);

/* Seconds on the monotonic clock (sys.c): the one clock durations are
 * measured with. */
double kj__now_s(void);

/* The time now, UTC, to the second, as ISO 8601 ("2026-12-06T12:00:00Z"),
 * into buf (sys.c): the one format times are recorded in. */
void kj__utc_now(char buf[32]);

/*
 * What a judge killed before it could clean up left behind (sys.c).  An
 * entry is named "<prefix><PID>-...", PID the judge's; it is a dead run's
 * when no process PID exists (kill(PID, 0) fails with ESRCH).  A PID reused
 * since keeps the entry until that process ends too: the rule errs on the
 * side of leaving things.  It assumes the judges that share the directory
 * share a PID namespace (a judge in another one could look dead).
 *
 * kj__dead_run_entry: whether name is such an entry of a dead run.
 * kj__left_by_dead_run: the same with the prefix "kjudge-" (scratch
 * directories, cgroups).
 * kj__sweep_dead_runs: call fn(path, arg) for every such entry of dir
 * (path is dir/name, valid during the call; fn may remove it).  Returns
 * the number of entries passed to fn; a directory that cannot be read has
 * none.
 */
int kj__dead_run_entry(const char *name, const char *prefix);
int kj__left_by_dead_run(const char *name);
int kj__sweep_dead_runs(const char *dir, const char *prefix,
			void (*fn)(const char *path, void *arg), void *arg);

/* splitmix64's finaliser: a well-mixed 64-bit hash of x. */
static inline uint64_t kj__mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9u;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/*
 * Files replaced atomically (fileio.c).  kj__tmp_create makes
 * "<path>.tmp.XXXXXX" (mode 0666 less the umask) and returns its descriptor,
 * or -1 with errno.  kj__write_full writes all n bytes (0, or -1 with errno).
 * kj__tmp_commit fsyncs and closes fd, renames tmp over path and fsyncs the
 * directory; on failure (-1) fd is closed, tmp removed, errno kept and
 * *stage names the step that failed, e.g. "cannot sync".
 */
int kj__tmp_create(char *tmp, size_t size, const char *path);
int kj__write_full(int fd, const void *buf, size_t n);
int kj__tmp_commit(int fd, const char *tmp, const char *path, const char **stage);

/*
 * "no space left on MOUNT (SOURCE, TYPE)" for errno e (ENOSPC; "disk quota
 * exceeded on ..." for EDQUOT), MOUNT the mount point of the file system
 * that holds path (or its nearest existing parent), into buf (cut to
 * size).  Returns buf.  fileio.c; the store's SQLite errors use it too.
 */
char *kj__nospace_text(int e, const char *path, char *buf, size_t size);

/* Write text into the existing file path (a /proc or cgroup control file):
 * 0, or -1 with errno. */
int kj__write_text(const char *path, const char *text);

/* Read at most size - 1 bytes of a (small, /proc, /sys or cgroup) file into
 * buf, NUL-terminated, trailing white space removed.  Returns the length,
 * or -1 with errno. */
long kj__read_text(const char *path, char *buf, size_t size);

/* 1 when this machine stores multi-byte values little-endian. */
static inline int kj__host_little_endian(void)
{
	const uint16_t one = 1;
	return *(const unsigned char *)&one == 1;
}

#include "base/banned.h"

/* The library reads no configuration of its own: the CLI builds a struct
 * kj_config (kjudge/config.h) from flags and the environment and passes it
 * down; what a worker inherits of the environment comes from its environ. */
#undef getenv
#define getenv(x) KJ__BANNED(getenv)
#undef secure_getenv
#define secure_getenv(x) KJ__BANNED(secure_getenv)

#endif /* KJ_INTERNAL_H */
