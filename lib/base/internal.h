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

#include "kjudge/dtype.h"
#include "kjudge/tensor.h"

/* Number of online CPUs, at least 1. */
int kj__online_cpus(void);

/* Seconds on the monotonic clock (sys.c). */
double kj__now_s(void);

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

/*
 * Mount a private tmpfs (with transparent huge pages where the kernel has
 * them) over the existing, empty directory dir, in a new mount namespace
 * that this process and its later children share (scratch.c).  Call it
 * before starting any thread.  *how names what dir is now: "shared" (nothing
 * changed), "private-tmpfs" or "private-tmpfs-huge".  Returns 0, or -1 with
 * errno when dir stays as it was (the process may then be in a new namespace
 * that changes nothing).
 */
int kj__scratch_private(const char *dir, const char **how);

/*
 * The task source src (len bytes) with every top-level definition of the
 * class cls blanked out, newlines kept (task_view.c).  *out is a new
 * NUL-terminated string the caller frees; *removed counts the definitions.
 * Returns 0, or -1 when out of memory.
 */
int kj__task_view(const char *src, size_t len, const char *cls, char **out,
		  int *removed);

struct kj_sandbox;

/*
 * In the child, after clone() and the parent's go (sandbox.c): build the
 * sandbox and apply its limits.  Returns 0, or -1 with errno set and *step
 * naming what failed; the caller then reports it and exits.
 */
int kj__sandbox_child(const struct kj_sandbox *sb, const char **step);

/* Element `i` of `base` (dtype dt, byte-swapped if `swap`) as a double.
 * Exact for every dtype but 64-bit integers beyond 2^53. */
double kj__load_f64(const void *base, size_t i, enum kj_dtype dt, int swap);

/* Element `i` of `base` (an integer or bool dtype dt, byte-swapped if
 * `swap`) as the 64 bits of its two's complement: sign-extended for the
 * signed dtypes, zero-extended for the unsigned ones, 0 or 1 for bool.
 * Exact for every integer dtype; 0 for any other dtype. */
uint64_t kj__load_int_bits(const void *base, size_t i, enum kj_dtype dt,
			   int swap);

/* The int64_t whose two's complement is x (without the
 * implementation-defined conversion of an out-of-range value). */
static inline int64_t kj__int_from_bits(uint64_t x)
{
	int64_t v;

	memcpy(&v, &x, sizeof(v));
	return v;
}

/* Round a double to dtype `dt` and back, as a torch cast to `dt` would:
 * round to nearest even for the float types, nonzero -> 1 for bool.  Any
 * other dtype returns v: casts to the integer dtypes are exact only in
 * integer arithmetic, which the comparator's integer path does itself. */
double kj__round_to_dtype(double v, enum kj_dtype dt);

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

#endif /* KJ_INTERNAL_H */
