/*
 * sandbox_internal.h - what the sandbox layer's files share and the layers
 * above call (kj__ internals of lib/sandbox/): the run's private tmpfs and
 * the child's side of a sandboxed start.
 *
 * Include it after the system headers, as base/internal.h (which it
 * includes last).
 */
#ifndef KJ_SANDBOX_INTERNAL_H
#define KJ_SANDBOX_INTERNAL_H

#include <stddef.h>

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

struct kj_sandbox;

/*
 * In the child, after clone() and the parent's go (view.c): build the
 * sandbox and apply its limits.  Returns 0, or -1 with errno set and *step
 * naming what failed; the caller then reports it and exits.
 */
int kj__sandbox_child(const struct kj_sandbox *sb, const char **step);

/*
 * A sandbox's description as bytes, for a template's child to build
 * (sandbox.c packs, view.c unpacks): the fields kj__sandbox_child reads,
 * each a key and its values, every one NUL-terminated.  Pack returns a
 * malloc'd buffer (the caller frees it) with its length in *len, NULL when
 * out of memory.  Unpack fills *sb with pointers into buf (which it
 * changes not, and which must outlive sb); 0, or -1 with errno EINVAL when
 * buf is not a description.  Unpack allocates nothing.
 */
char *kj__sandbox_pack(const struct kj_sandbox *sb, size_t *len);
int kj__sandbox_unpack(const char *buf, size_t len, struct kj_sandbox *sb);

/* Set (by the unit tests), the child makes the mounts under a read-only
 * bind read-only as on a kernel without mount_setattr (before 5.12): one
 * remount each, as /proc/self/mountinfo lists them. */
extern int kj__sandbox_no_mount_setattr;

#include "base/internal.h"

#endif /* KJ_SANDBOX_INTERNAL_H */
