/*
 * test_wire.c - the worker protocol's client (lib/runner/wire.c) against
 * real workers: small /bin/sh scripts that read each request from fd 3 and
 * answer with its nonce, as test_proc.c's do.  Each test drives one side
 * through its operations as the pipeline does (start, send, recv) and
 * checks what the reply says: the handshake, a reply that is not the
 * protocol, a deadline that passes, a failure classified by its phase.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/config.h"
#include "kjudge/pipeline.h"
#include "kjudge/proc.h"
#include "kjudge/runner.h"
#include "unit.h"
#include "runner/wire.h"

/* Reads one request into $line and its nonce into $n. */
#define STEP                                                                    \
	"read line <&3; "                                                       \
	"n=$(printf '%s' \"$line\" | sed 's/.*\"nonce\": *\\([0-9]*\\).*/\\1/'); "
/* Answers the request just read with the JSON members given. */
#define ANSWER(members) "echo \"{\\\"nonce\\\": $n, " members "}\" >&3; "
/* Waits until the judge closes the channel, then ends. */
#define WAIT "read line <&3; exit 0"
/* The handshake answered: hello, the task (two cases), the module. */
#define HANDSHAKE                                                               \
	STEP ANSWER("\\\"ok\\\": true") STEP ANSWER("\\\"ok\\\": true, \\\"cases\\\": 2")  \
	STEP ANSWER("\\\"ok\\\": true")

static json_t *request(void *ctx, enum kj__wire_step step, struct kj__wire_side *w)
{
	static const char *const ops[] = { "hello", "load_task", "load" };

	(void)ctx;
	(void)w;
	return json_pack("{s:s}", "op", ops[step]);
}

static const struct kj__wire_hooks hooks = { .request = request };

static const struct kj_side_ops ops = {
	.name = "wire-test",
	.caps = KJ_SIDE_CAP_FREEZE,
	.start = kj__wire_op_start,
	.send = kj__wire_op_send,
	.recv = kj__wire_op_recv,
	.stop = kj__wire_op_stop,
	.freeze = kj__wire_op_freeze,
	.release = kj__wire_op_release,
	.kill = kj__wire_op_kill,
};

struct rig {
	struct kj_config cfg;
	struct kj_task t;
	struct kj__wire wire;
	char sh[8], c[4];
	char *argv[4];
	char path[32];
	char *envp[2];
};

/* A candidate side whose worker runs script, its calls bounded by
 * timeout_s. */
static void rig_open(struct rig *g, const char *script, double timeout_s)
{
	struct kj_side *s = &g->t.cand;
	struct kj_error err;
	char *env[] = { NULL };

	memset(g, 0, sizeof(*g));
	kj_config_init(&g->cfg, env);
	g->t.have_candidate = 1;
	snprintf(g->sh, sizeof(g->sh), "/bin/sh");
	snprintf(g->c, sizeof(g->c), "-c");
	snprintf(g->path, sizeof(g->path), "PATH=/usr/bin:/bin");
	g->argv[0] = g->sh;
	g->argv[1] = g->c;
	g->argv[2] = (char *)(uintptr_t)script;
	g->envp[0] = g->path;
	g->wire.argv = g->argv;
	g->wire.what = "'/bin/sh' (the test)";
	g->wire.timeout_s = timeout_s;
	g->wire.startup_s = 10;
	g->wire.cfg = &g->cfg;
	g->wire.t = &g->t;
	g->wire.hooks = &hooks;
	s->ops = &ops;
	s->role = KJ_SIDE_CANDIDATE;
	snprintf(s->out_dir, sizeof(s->out_dir), "%s", kj_test_tmpdir());
	kj_reply_init(&s->load_failure);
	KJ_CHECK_OK(kj__wire_side_new(&g->wire, s, g->envp, NULL, &err), &err);
}

/* Start the side, send it a run call of case 1, and receive the reply. */
static int rig_run(struct rig *g, struct kj_reply *r, struct kj_error *err)
{
	struct kj_side *s = &g->t.cand;
	struct kj_call call;
	int rc;

	kj_reply_init(r);
	rc = s->ops->start(s, err);
	if (rc != KJ_OK || !s->loaded)
		return rc;
	memset(&call, 0, sizeof(call));
	call.op = KJ_CALL_RUN;
	call.case_idx = 1;
	call.seed = 77;
	call.out_dir = s->out_dir;
	call.tag = "cand";
	rc = s->ops->send(s, &call, err);
	return rc == KJ_OK ? s->ops->recv(s, r, err) : rc;
}

static void rig_close(struct rig *g)
{
	g->t.cand.ops->release(&g->t.cand);
}

/* The handshake in order, then a run request that says what the call
 * asked (checked by the worker: a request without them is answered as a
 * failure), and its outputs decoded. */
KJ_TEST(wire_handshake_then_a_run_call)
{
	struct rig g;
	struct kj_reply r;
	struct kj_error err;

	rig_open(&g, HANDSHAKE STEP
		 "case \"$line\" in *'\"op\":'*'\"run\"'*'\"case\":'*1*'\"seed\":'*77*) "
		 ANSWER("\\\"ok\\\": true, \\\"outputs\\\": {\\\"kind\\\": \\\"list\\\", "
			"\\\"items\\\": [{\\\"kind\\\": \\\"int\\\", \\\"value\\\": \\\"7\\\"}]}") ";; "
		 "*) " ANSWER("\\\"ok\\\": false, \\\"error_msg\\\": \\\"bad request\\\"") ";; esac; "
		 WAIT, 10);
	KJ_CHECK_OK(rig_run(&g, &r, &err), &err);
	KJ_CHECK(g.t.cand.loaded);
	KJ_CHECK_INT(((struct kj__wire_side *)g.t.cand.impl)->cases, 2);
	KJ_CHECK_INT(r.ok, 1);
	KJ_CHECK(r.outputs && r.outputs->kind == KJ_VAL_LIST && r.outputs->n == 1);
	kj_reply_release(&r);
	rig_close(&g);
}

/* A line that is not the protocol fails the call at once (not at its
 * deadline) as the candidate's ProtocolError, and the worker is gone. */
KJ_TEST(wire_a_reply_that_is_not_the_protocol_is_a_protocol_error)
{
	static const char *const replies[] = {
		/* not JSON */
		"echo 'not json' >&3; sleep 30",
		/* a length prefix where a line should be */
		"printf '\\360\\377\\377\\377xxxx' >&3; sleep 30",
		/* the outputs that are not a list */
		ANSWER("\\\"ok\\\": true, \\\"outputs\\\": {\\\"kind\\\": \\\"int\\\", "
		       "\\\"value\\\": \\\"7\\\"}") WAIT,
	};
	size_t i;

	for (i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		char script[1024];
		struct rig g;
		struct kj_reply r;
		struct kj_error err;
		double t0 = kj__now_s();

		snprintf(script, sizeof(script), "%s%s%s", HANDSHAKE, STEP, replies[i]);
		rig_open(&g, script, 20);
		KJ_CHECK_OK(rig_run(&g, &r, &err), &err);
		KJ_CHECK_INT(r.ok, 0);
		KJ_CHECK_STR(kj_etype_name(r.type), "ProtocolError");
		KJ_CHECK_INT(r.lost, 1);
		KJ_CHECK(!g.t.cand.loaded);
		KJ_CHECK(kj__now_s() - t0 < 10);
		kj_reply_release(&r);
		rig_close(&g);
	}
}

/* A worker that never answers: the call ends at its deadline as the
 * candidate's Timeout, and the worker is gone. */
KJ_TEST(wire_a_call_past_its_deadline_is_a_timeout)
{
	struct rig g;
	struct kj_reply r;
	struct kj_error err;
	double t0 = kj__now_s();

	rig_open(&g, HANDSHAKE STEP "sleep 30", 0.5);
	KJ_CHECK_OK(rig_run(&g, &r, &err), &err);
	KJ_CHECK_INT(r.ok, 0);
	KJ_CHECK_STR(kj_etype_name(r.type), "Timeout");
	KJ_CHECK_INT(r.lost, 1);
	KJ_CHECK(kj__now_s() - t0 < 10);
	KJ_CHECK(strstr(r.message, "did not finish the case") != NULL);
	kj_reply_release(&r);
	rig_close(&g);
}

/* A hello that is refused: the worker did not start (the machine's, not
 * the candidate's), and the error says with what and why. */
KJ_TEST(wire_a_refused_hello_is_a_start_failure)
{
	struct rig g;
	struct kj_reply r;
	struct kj_error err;

	rig_open(&g, STEP ANSWER("\\\"ok\\\": false, \\\"error_msg\\\": \\\"no torch here\\\"") WAIT, 10);
	KJ_CHECK_INT(rig_run(&g, &r, &err), KJ_ESPAWN);
	KJ_CHECK(strstr(err.msg, "did not start with '/bin/sh' (the test): no torch here") != NULL);
	rig_close(&g);
}

/* The task's step failing is the task's, the module's step failing the
 * candidate's LoadError; neither side is loaded. */
KJ_TEST(wire_handshake_failures_are_charged_by_their_step)
{
	static const struct {
		const char *script, *type;
	} cases[] = {
		{ STEP ANSWER("\\\"ok\\\": true") STEP
		  ANSWER("\\\"ok\\\": false, \\\"error_msg\\\": \\\"no task\\\"") WAIT,
		  "TaskError" },
		{ STEP ANSWER("\\\"ok\\\": true") STEP ANSWER("\\\"ok\\\": true") STEP
		  ANSWER("\\\"ok\\\": false, \\\"phase\\\": \\\"import\\\", "
			 "\\\"error_msg\\\": \\\"no module\\\"") WAIT,
		  "LoadError" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rig g;
		struct kj_reply r;
		struct kj_error err;

		rig_open(&g, cases[i].script, 10);
		KJ_CHECK_OK(rig_run(&g, &r, &err), &err);
		KJ_CHECK(!g.t.cand.loaded);
		KJ_CHECK_STR(kj_etype_name(g.t.cand.load_failure.type), cases[i].type);
		rig_close(&g);
	}
}
