/*
 * test_side_caps.c - the pipeline asks a side only for what its
 * kj_side_ops.caps declares (kjudge/runner.h), and a missing capability is
 * the feature absent, never an answer.  The sides are a scripted runner
 * written here (every run call answers one integer output, a device call
 * the device's limits, a timed round a failure), which logs each call the
 * pipeline sends; kj_benchmark drives them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/config.h"
#include "kjudge/pipeline.h"
#include "kjudge/runner.h"
#include "kjudge/value.h"
#include "unit.h"

/* The calls each side received, in order. */
struct sent {
	enum kj_call_op op;
	int export_outputs;
};
static struct sent sent[2][64];
static int n_sent[2];

static int fake_start(struct kj_side *s, struct kj_error *err)
{
	(void)err;
	s->started = 1;
	s->loaded = 1;
	return KJ_OK;
}

static int fake_send(struct kj_side *s, const struct kj_call *call, struct kj_error *err)
{
	int i = s->role == KJ_SIDE_CANDIDATE;

	if (n_sent[i] == 64)
		return kj_error_set(err, KJ_EINVAL, "too many calls");
	sent[i][n_sent[i]].op = call->op;
	sent[i][n_sent[i]].export_outputs = call->export_outputs;
	n_sent[i]++;
	return KJ_OK;
}

static int fake_recv(struct kj_side *s, struct kj_reply *r, struct kj_error *err)
{
	int i = s->role == KJ_SIDE_CANDIDATE;
	json_t *out;
	int rc;

	kj_reply_init(r);
	switch (sent[i][n_sent[i] - 1].op) {
	case KJ_CALL_RUN:
		out = json_pack("{s:s, s:[{s:s, s:s}]}", "kind", "list", "items", "kind", "int",
				"value", "7");
		rc = out ? kj_value_parse(out, &r->outputs, err) : KJ_ENOMEM;
		json_decref(out);
		r->ok = rc == KJ_OK;
		return rc;
	case KJ_CALL_DEVICE:
		r->ok = 1;
		r->copy_gbs = 100;
		r->launch_ms = 0.01;
		return KJ_OK;
	default:
		/* Timed rounds and the rest: a failure of the side's, where the
		 * case ends (these tests look at what came before). */
		r->type = KJ_ET_FORWARD;
		r->message = strdup("stopped here");
		return r->message ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
}

static void fake_stop(struct kj_side *s)
{
	s->loaded = 0;
	s->started = 0;
}

static int fake_freeze(struct kj_side *s, int frozen, struct kj_error *err)
{
	(void)s;
	(void)frozen;
	(void)err;
	return KJ_OK;
}

static void fake_release(struct kj_side *s)
{
	fake_stop(s);
}

static void fake_kill(struct kj_side *s)
{
	(void)s;
}

#define FAKE_OPS(caps_)                                                                        \
	{ .name = "fake", .caps = (caps_), .start = fake_start, .send = fake_send,             \
	  .recv = fake_recv, .stop = fake_stop, .freeze = fake_freeze,                        \
	  .release = fake_release, .kill = fake_kill }

static const struct kj_side_ops all_ops =
	FAKE_OPS(KJ_SIDE_CAP_DEVICE | KJ_SIDE_CAP_DEVCMP | KJ_SIDE_CAP_FREEZE);
static const struct kj_side_ops no_device_ops = FAKE_OPS(KJ_SIDE_CAP_DEVCMP | KJ_SIDE_CAP_FREEZE);
static const struct kj_side_ops no_devcmp_ops = FAKE_OPS(KJ_SIDE_CAP_DEVICE | KJ_SIDE_CAP_FREEZE);
static const struct kj_side_ops no_freeze_ops = FAKE_OPS(KJ_SIDE_CAP_DEVICE | KJ_SIDE_CAP_DEVCMP);

/* One benchmark of one case with ref_ops and cand_ops: its case, in c. */
static void bench(const struct kj_side_ops *ref_ops, const struct kj_side_ops *cand_ops,
		  struct kj_case *c)
{
	struct kj_config cfg;
	struct kj_attempt a;
	struct kj_task t;
	struct kj_judge_opts o;
	struct kj_bench_opts b;
	struct kj_result res;
	struct kj_error err;
	int i;

	memset(sent, 0, sizeof(sent));
	n_sent[0] = n_sent[1] = 0;
	kj_config_init(&cfg, NULL);
	cfg.scratch_parent = kj_test_tmpdir();
	cfg.scratch_private = 0;
	KJ_CHECK_OK(kj_attempt_open(&a, &cfg, &err), &err);
	memset(&t, 0, sizeof(t));
	t.name = "caps";
	t.n_cases = 1;
	t.have_candidate = 1;
	snprintf(t.task_sha256, sizeof(t.task_sha256), "%064d", 0);
	snprintf(t.device, sizeof(t.device), "cpu");
	snprintf(t.device_key, sizeof(t.device_key), "cpu|test");
	for (i = 0; i < 2; i++) {
		struct kj_side *s = i ? &t.cand : &t.ref;

		s->ops = i ? cand_ops : ref_ops;
		s->role = i ? KJ_SIDE_CANDIDATE : KJ_SIDE_REFERENCE;
		kj_reply_init(&s->load_failure);
		snprintf(s->out_dir, sizeof(s->out_dir), "%s", a.scratch);
	}
	kj_judge_opts_init(&o);
	o.seed_fixed = 1;
	o.seed = 5;
	kj_bench_opts_init(&b);
	KJ_CHECK_OK(kj_benchmark(&t, &a, &o, &b, NULL, &res, &err), &err);
	KJ_CHECK_INT(res.n_cases, 1);
	*c = res.cases[0];
	c->message = c->message ? strdup(c->message) : NULL;
	kj_result_release(&res);
	kj_attempt_close(&a);
}

/* How many calls of op side i received, and with exported outputs. */
static int count(int i, enum kj_call_op op, int *exported)
{
	int j, n = 0;

	if (exported)
		*exported = 0;
	for (j = 0; j < n_sent[i]; j++)
		if (sent[i][j].op == op) {
			n++;
			if (exported && sent[i][j].export_outputs)
				(*exported)++;
		}
	return n;
}

/* With KJ_SIDE_CAP_DEVICE the reference is asked for the device's limits;
 * without it, never, and the case cannot check its timing floor: the
 * judge's error, never a pass. */
KJ_TEST(caps_no_device_limits_request_without_the_capability)
{
	struct kj_case c;

	bench(&all_ops, &all_ops, &c);
	KJ_CHECK_INT(count(0, KJ_CALL_DEVICE, NULL), 1);
	free(c.message);
	bench(&no_device_ops, &all_ops, &c);
	KJ_CHECK_INT(count(0, KJ_CALL_DEVICE, NULL), 0);
	KJ_CHECK_INT(count(0, KJ_CALL_TIME, NULL), 0);
	KJ_CHECK_STR(kj_etype_name(c.type), "JudgeError");
	KJ_CHECK(c.message && strstr(c.message, "cannot measure the device's limits"));
	free(c.message);
}

/* Outputs are left on the device only where both sides declare
 * KJ_SIDE_CAP_DEVCMP; else every run goes through host memory. */
KJ_TEST(caps_outputs_stay_on_the_host_without_device_comparison)
{
	struct kj_case c;
	int exported;

	bench(&all_ops, &all_ops, &c);
	KJ_CHECK(count(0, KJ_CALL_RUN, &exported) > 0);
	KJ_CHECK(exported > 0);
	free(c.message);
	bench(&all_ops, &no_devcmp_ops, &c);
	KJ_CHECK(count(0, KJ_CALL_RUN, &exported) > 0);
	KJ_CHECK_INT(exported, 0);
	free(c.message);
}

/* A side that cannot be frozen: the other is not timed beside it (no timed
 * round is sent), and the case is the judge's error. */
KJ_TEST(caps_no_timed_round_beside_a_side_that_cannot_freeze)
{
	struct kj_case c;

	bench(&all_ops, &all_ops, &c);
	KJ_CHECK(count(0, KJ_CALL_TIME, NULL) > 0);
	free(c.message);
	bench(&all_ops, &no_freeze_ops, &c);
	KJ_CHECK_INT(count(0, KJ_CALL_TIME, NULL), 0);
	KJ_CHECK_STR(kj_etype_name(c.type), "JudgeError");
	KJ_CHECK(c.message && strstr(c.message, "cannot freeze its worker"));
	free(c.message);
}
