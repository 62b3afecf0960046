/*
 * kjudge_template.c - the native half of a worker template (the worker's
 * --template mode, kjudge_worker.py; the judge's side is
 * lib/sandbox/template.c, the theory in lib/sandbox/spawn.h, "Templates").
 *
 * Loaded with ctypes by the template, a Python process that has imported
 * torch and forks one child a request:
 *
 *   template (Python, torch imported)
 *     fork -> C1: kj_tmpl_unshare(): new user, mount, PID, network, IPC
 *                 and UTS namespaces
 *           fork -> C2, PID 1 of the new PID namespace; C1 reports its
 *                 pid and exits, and C2 is re-parented to the judge (a
 *                 child subreaper): the judge waits for it, kills its group,
 *                 attaches its cgroup, maps its ids, as for a child it
 *                 cloned itself
 *   C2: kj_tmpl_child(): what a cloned child does before execve
 *       (lib/sandbox/child.c, the sandbox of lib/sandbox/view.c, built into
 *       this library from the same files), then returns into Python, which
 *       takes the worker's argv and environment and runs its main().
 *
 * Nothing here allocates in C2 before the sandbox is built.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/sandbox.h"
#include "sandbox/child.h"
#include "sandbox/sandbox_internal.h"

int kj_tmpl_unshare(void);
int kj_tmpl_child(const char *spec, size_t len, const char *cwd, int out, int err,
		  int proto, int errpipe, int sync);

/* C1: the namespaces of a sandboxed start (spawn.c's MODE_SANDBOX).  0, or
 * the errno of unshare. */
int kj_tmpl_unshare(void)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
		    CLONE_NEWUTS) < 0)
		return errno ? errno : EINVAL;
	return 0;
}

/* C2: the judge's go byte, the descriptors, the sandbox, then back into
 * Python (0).  A failure is reported on the error pipe as a cloned child's
 * is, and the process exits. */
int kj_tmpl_child(const char *spec, size_t len, const char *cwd, int out, int err,
		  int proto, int errpipe, int sync)
{
	static struct kj_sandbox sb;
	struct kj__child_args a;
	int ep, i;

	if (kj__sandbox_unpack(spec, len, &sb) < 0)
		kj__child_fail(errpipe, "read the sandbox's description", KJ__STEP_SANDBOX);
	memset(&a, 0, sizeof(a));
	a.cwd = cwd && *cwd ? cwd : NULL;
	a.sb = &sb;
	a.out = out;
	a.err = err;
	a.proto = proto;
	a.errpipe = errpipe;
	a.sync = sync;
	a.adopted = 1;
	for (i = 0; i < 5; i++)
		a.parent_ends[i] = -1;
	ep = kj__child_start(&a);
	/* End of file on the error pipe: the judge's "execve succeeded". */
	close(ep);
	return 0;
}
