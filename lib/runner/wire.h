/*
 * wire.h - the generic client of the worker protocol (wire.c; the protocol
 * is docs/protocol.md): a side whose worker is a process that answers one
 * JSON request at a time on its channel (kjudge/proc.h frames the lines,
 * passes the descriptors and keeps the deadlines).  The client spawns the
 * worker, runs the handshake (hello, the task, the module), encodes the
 * pipeline's calls as requests, and decodes and classifies the replies
 * into struct kj_reply.  A runner (torch.c) configures it: the worker's
 * argv, each side's environment and sandbox view, the handshake's
 * requests and the checks of its hello, and the hooks for what only it
 * knows (extension builds its worker asks for, the candidate's file quota).
 *
 * Ownership: struct kj__wire is the runner's, and so is everything it
 * points to (argv, what, cfg, t, hooks, ctx); it must outlive every side
 * made with it.  A struct kj__wire_side is made by kj__wire_side_new and
 * freed by kj__wire_release (the side's release operation); its envp and
 * view are borrowed from the runner, its proc and hello are its own.
 *
 * Include it after the system headers, as runner_internal.h.
 */
#ifndef KJ_RUNNER_WIRE_H
#define KJ_RUNNER_WIRE_H

#include <limits.h>
#include <stdint.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/pipeline.h"
#include "kjudge/proc.h"
#include "kjudge/runner.h"
#include "kjudge/sandbox.h"

/* The handshake's steps, each a request to every side started together. */
enum kj__wire_step {
	KJ__WIRE_HELLO,  /* the worker's environment; a failure is the start's */
	KJ__WIRE_TASK,   /* the task (a failure: KJ_ET_TASK); its "cases" kept */
	KJ__WIRE_MODULE, /* the module under test (a failure: KJ_ET_LOAD) */
};

struct kj__wire_side;

/* What the runner decides (ctx: struct kj__wire.ctx).  Each may be NULL
 * where it says so. */
struct kj__wire_hooks {
	/* Before each spawn of a sandboxed side's worker: make w->view ready
	 * (NULL: nothing to make).  KJ_OK, or the code of the start. */
	int (*prepare)(void *ctx, struct kj__wire_side *w, struct kj_error *err);
	/* After the spawn: add what the runner knows of the side's bounds
	 * to w->s->limits (NULL: nothing).  KJ_OK or KJ_ENOMEM. */
	int (*limits)(void *ctx, struct kj__wire_side *w, struct kj_error *err);
	/* The handshake's request of step for w: a new reference, NULL when
	 * out of memory.  Required. */
	json_t *(*request)(void *ctx, enum kj__wire_step step, struct kj__wire_side *w);
	/* After every side's hello said ok (each in sv[i]->hello): the
	 * runner's checks of them (NULL: none).  KJ_OK, or the start's code. */
	int (*hello)(void *ctx, struct kj__wire_side **sv, int n, struct kj_error *err);
	/* A request of the worker's own while the judge waits for a reply (a
	 * line with the request's nonce, a "build" and no "ok"): the answer,
	 * a new reference; NULL with err filled for the judge's own failures
	 * (KJ_ENOMEM, KJ_EINTR).  may: whether the request being served may
	 * ask (the module's loading, a run call).  NULL: such a line is taken
	 * as the reply (it says no "ok": a failure). */
	json_t *(*serve)(void *ctx, struct kj__wire_side *w, const json_t *msg, int may,
			 struct kj_error *err);
	/* The reference's outputs of a run call, as decoded (NULL: none). */
	void (*outputs)(void *ctx, struct kj__wire_side *w, const struct kj_value *outputs);
	/* Whether a candidate whose write failed on a full file system
	 * filled it itself (NULL: never); then the failure is its
	 * OutputLimitExceeded, not the machine's. */
	int (*own_full)(void *ctx, struct kj__wire_side *w);
	/* The fix for a worker that did not start, given its error's text:
	 * into buf with its "; fix: ", or "" (NULL: none). */
	const char *(*start_fix)(void *ctx, const char *msg, char *buf, size_t size);
};

/* One task's configuration of the client, shared by its sides. */
struct kj__wire {
	char *const *argv;           /* the worker's command, NULL-terminated */
	const char *what;            /* how it is started, for a start's error
				      * ("'python' (where it came from)") */
	double timeout_s;            /* every wait the candidate controls */
	double startup_s;            /* the hello and the task's loading */
	const struct kj_config *cfg; /* the limits (cpu_s, output_bytes,
				      * file_bytes) */
	struct kj_task *t;           /* case_params, have_candidate */
	const struct kj__wire_hooks *hooks;
	void *ctx;
	int prestarting;             /* kj__wire_prestart's hellos: the
				      * workers may make ready what the task
				      * will need before it is known */
	/* The last kj__wire_start's steps, seconds: the workers' start and
	 * hello (0 when started ahead), the task's loading, the module's. */
	double spawn_s, task_s, module_s;
};

/* One side's client. */
struct kj__wire_side {
	struct kj__wire *wire;
	struct kj_side *s;
	char *const *envp;              /* its worker's environment */
	const struct kj_sandbox *view;  /* its sandbox, NULL: a plain process */
	struct kj_proc proc;
	uint64_t nonce;
	int pending;                    /* a call was sent and not received
					 * (2: its send failed) */
	enum kj_call_op pending_op;
	char pending_dir[PATH_MAX];     /* where that call writes */
	/* that call's known outputs per set (struct kj_call's), for reading
	 * the reply's call list */
	int pending_known[128];
	int n_pending_known;
	json_t *hello;                  /* the hello reply of the last start */
	int cases;                      /* what the task step said */
	int warm;                       /* started by kj__wire_prestart, not
					 * yet given the task */
};

/*
 * A client for side s (its role set) with wire: s->impl becomes it; s->ops
 * is the runner's table of the kj__wire_op_* functions below.  KJ_OK or
 * KJ_ENOMEM.
 */
int kj__wire_side_new(struct kj__wire *wire, struct kj_side *s, char *const *envp,
		      const struct kj_sandbox *view, struct kj_error *err);

/*
 * Start the workers of n sides together (at most 2) and run the
 * handshake: all are spawned, then each step is sent to all before any
 * reply is waited for, so that the workers start up side by side.  KJ_OK
 * when every side's state is known (loaded, or load_failure filled); a
 * code when a worker could not be started at all (the machine's failure
 * or the judge's).
 */
int kj__wire_start(struct kj__wire_side **sv, int n, struct kj_error *err);

/*
 * The part of kj__wire_start that knows nothing of the task: the workers
 * of n sides spawned and their hello answered (and checked by the hello
 * hook), before the task's files exist (a server's warm workers).  The
 * next kj__wire_start of the same sides goes on from there when all of
 * them are still alive, and starts them again when one is not.  KJ_OK,
 * or the code of a start that failed (the sides are then not warm).
 */
int kj__wire_prestart(struct kj__wire_side **sv, int n, struct kj_error *err);

/* The side operations (struct kj_side_ops) of a client's side. */
int kj__wire_op_start(struct kj_side *s, struct kj_error *err);
int kj__wire_op_send(struct kj_side *s, const struct kj_call *call, struct kj_error *err);
int kj__wire_op_recv(struct kj_side *s, struct kj_reply *r, struct kj_error *err);
void kj__wire_op_stop(struct kj_side *s);
int kj__wire_op_freeze(struct kj_side *s, int frozen, struct kj_error *err);
void kj__wire_op_release(struct kj_side *s);
void kj__wire_op_kill(struct kj_side *s);

#include "base/internal.h"

#endif /* KJ_RUNNER_WIRE_H */
