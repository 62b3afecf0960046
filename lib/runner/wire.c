/*
 * wire.c - the generic client of the worker protocol (wire.h; the
 * protocol is docs/protocol.md).
 *
 * Theory of operation.  A side's worker is a process with a channel
 * (kjudge/proc.h: one JSON line per request and reply, descriptors passed
 * beside them, every wait with a deadline).  Starting it runs the
 * handshake (hello, the task, the module) on every side started together,
 * each step sent to all before any reply is waited for.  A call is
 * encoded as one request; its reply is decoded into struct kj_reply and
 * classified by the judge from what the protocol says (the phase, the
 * request it answers, the error's class), the worker's texts cleaned and
 * kept only as claims.  A worker that times out, dies, breaks the protocol
 * or says its state is lost is killed, and the next call starts it again.
 * What only the runner knows (the requests of the handshake, the checks of
 * its hello, the builds a worker asks for, the file quota) comes through
 * struct kj__wire_hooks.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include "kjudge/proc.h"
#include "kjudge/runner.h"
#include "kjudge/sandbox.h"
#include "kjudge/value.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/text.h"
#include "runner/wire.h"

/* Bytes of a worker's stderr (or stdout) shown with a failure. */
#define TAIL_BYTES 1500

/* --- replies --------------------------------------------------------------------------- */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The tail of a worker's stderr (else stdout), cleaned. */
static char *output_tail(const struct kj_proc *p)
{
	const struct kj_capture *c = p->cap_err.len ? &p->cap_err : &p->cap_out;
	size_t len = c->len, off = len > TAIL_BYTES ? len - TAIL_BYTES : 0;

	/* Start after a character boundary: cleaning turns a cut character
	 * into one replacement, which is fine. */
	return kj__text_clean(c->data ? c->data + off : "", len - off, TAIL_BYTES + 16);
}

/* reply->message = "prefix: text" (+ "\n" + the worker's output tail). */
static int set_message(struct kj_reply *r, const char *prefix, const char *text,
		       const struct kj_proc *p)
{
	struct kj__buf b;
	char *tail = p ? output_tail(p) : NULL;
	int bad = p && !tail;

	kj__buf_init(&b, KJ_CASE_MSG_MAX);
	if (prefix)
		bad |= kj__buf_addf(&b, "%s: ", prefix);
	bad |= kj__buf_addf(&b, "%s", text ? text : "");
	if (tail && *tail)
		bad |= kj__buf_addf(&b, "\n%s", tail);
	free(tail);
	free(r->message);
	r->message = NULL;
	if (bad) {
		kj__buf_release(&b);
		return KJ_ENOMEM;
	}
	r->message = kj__text_cleans(b.data ? b.data : "", KJ_CASE_MSG_MAX);
	kj__buf_release(&b);
	return r->message ? KJ_OK : KJ_ENOMEM;
}

/* Whether the file system of dir is full (the judge looks for itself). */
static int fs_full(const char *dir)
{
	struct statvfs fs;

	return statvfs(dir, &fs) == 0 &&
	       ((unsigned long long)fs.f_bavail * fs.f_frsize < (1ull << 20) ||
		(fs.f_files && fs.f_favail == 0));
}

/*
 * A request that failed at the process level (kj_proc_send/wait): the
 * worker timed out, died, broke the protocol, or the judge was interrupted.
 * Fills r (the worker is gone); returns a code only for the judge's own.
 */
static int proc_failed(struct kj__wire_side *ts, int rc, const struct kj_error *e,
		       struct kj_reply *r, struct kj_error *err)
{
	struct kj_proc *p = &ts->proc;
	const char *role = kj_side_name(ts->s->role);
	char msg[700];

	if (rc == KJ_EINTR || rc == KJ_ENOMEM)
		return kj_error_set(err, rc, "%s", e->msg);
	/* A worker that failed once the judge was interrupted failed of the
	 * interrupt (the judge's own end kills its workers): nobody's verdict. */
	if (kj_proc_interrupted())
		return kj_error_set(err, KJ_EINTR, "interrupted (the %s's worker: %s)", role, e->msg);
	r->ok = 0;
	r->lost = 1;
	ts->s->loaded = 0;
	ts->pending = 0;
	if (rc == KJ_ETIMEDOUT) {
		r->type = KJ_ET_TIMEOUT;
		snprintf(msg, sizeof(msg), "验证超时（%g秒）: the %s did not finish the case",
			 ts->wire->timeout_s, role);
	} else {
		r->type = rc == KJ_EPROTOCOL ? KJ_ET_PROTOCOL : KJ_ET_CRASH;
		/* The sandbox's limits, each a verdict of its own. */
		if (p->output_over)
			r->type = KJ_ET_OUTPUT_LIMIT;
		else if (p->oom_killed)
			r->type = KJ_ET_MEMORY_LIMIT;
		else if (p->isolation == KJ_ISOLATION_SANDBOX && p->reaped && WIFSIGNALED(p->status) &&
			 (WTERMSIG(p->status) == SIGXCPU || WTERMSIG(p->status) == SIGKILL) &&
			 ts->wire->cfg->limits.cpu_s > 0 && p->cpu_s >= ts->wire->cfg->limits.cpu_s - 0.5)
			/* As PID 1 of its namespace the worker ignores SIGXCPU;
			 * the hard limit's SIGKILL and its CPU time tell. */
			r->type = KJ_ET_CPU_LIMIT;
		snprintf(msg, sizeof(msg), "the %s's worker: %s", role, e->msg);
	}
	if (set_message(r, NULL, msg, p) != KJ_OK)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* A worker's {"ok": false} reply: classified by the judge from the phase
 * and the request it answers, the texts kept as claims. */
static int reply_failed(struct kj__wire_side *ts, const json_t *rep, struct kj_reply *r,
			struct kj_error *err)
{
	const char *phase = jstr(rep, "phase"), *exc = jstr(rep, "exception");
	const char *cls = jstr(rep, "error_type");
	const char *dir = ts->pending_dir[0] ? ts->pending_dir : ts->s->out_dir;
	int sticky = json_is_true(json_object_get(rep, "sticky"));
	char where[PATH_MAX + 640];

	r->ok = 0;
	r->device_memory = json_is_true(json_object_get(rep, "device_memory"));
	snprintf(r->phase, sizeof(r->phase), "%s", phase && strlen(phase) < 16 ? phase : "");
	if (!strcmp(r->phase, "inputs"))
		r->type = KJ_ET_TASK_INPUTS;
	else if (!strcmp(r->phase, "import") || !strcmp(r->phase, "init"))
		r->type = KJ_ET_LOAD;
	else if (cls && !strcmp(cls, "HarnessTampered"))
		r->type = KJ_ET_TAMPERED;
	else if (cls && !strcmp(cls, "LazyOutput"))
		r->type = KJ_ET_LAZY_OUTPUT;
	else if (cls && !strcmp(cls, "L2PersistenceSet"))
		r->type = KJ_ET_L2_PERSIST;
	else if (sticky)
		r->type = KJ_ET_CUDA;
	else if (cls && strstr(cls, "CompilationError"))
		r->type = KJ_ET_COMPILE;
	else
		r->type = KJ_ET_FORWARD;
	if (sticky || json_is_true(json_object_get(rep, "exits"))) {
		/* A CUDA error is sticky: the worker exits (as after SystemExit);
		 * never reuse it. */
		r->lost = 1;
		ts->s->loaded = 0;
	}
	if (exc || cls) {
		r->exception = kj__text_cleans(exc ? exc : cls, 200);
		if (!r->exception)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	/* A write that failed for want of space is the machine's, when the
	 * judge sees the file system full itself. */
	if (ts->s->role == KJ_SIDE_REFERENCE || !strcmp(r->phase, "outputs"))
		r->disk_full = fs_full(dir);
	/* A candidate that filled the file system itself is not the machine's
	 * failure: what it wrote is its own. */
	if (r->disk_full && ts->s->role == KJ_SIDE_CANDIDATE && ts->wire->hooks->own_full &&
	    ts->wire->hooks->own_full(ts->wire->ctx, ts)) {
		r->disk_full = 0;
		r->type = KJ_ET_OUTPUT_LIMIT;
	}
	/* The machine's failure names the file system, as every full disk
	 * the judge reports does. */
	if (set_message(r, r->disk_full ? kj__nospace_text(ENOSPC, dir, where, sizeof(where))
					: NULL, jstr(rep, "error_msg"), NULL) != KJ_OK)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* A reply that is not what the protocol says: the candidate's doing, or
 * (for the reference) the task's. */
static int reply_malformed(struct kj__wire_side *ts, struct kj_reply *r, const char *what,
			   struct kj_error *err)
{
	r->ok = 0;
	r->type = KJ_ET_PROTOCOL;
	r->lost = 1;
	ts->s->loaded = 0;
	ts->s->ops->stop(ts->s);
	if (set_message(r, "malformed reply", what, NULL) != KJ_OK)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

static int parse_outputs(const json_t *j, struct kj_value **out, struct kj_error *e)
{
	int rc = kj_value_parse(j, out, e);

	if (rc == KJ_OK && (*out)->kind != KJ_VAL_LIST) {
		kj_value_free(*out);
		*out = NULL;
		return kj_error_set(e, KJ_EPROTOCOL, "outputs are not a list");
	}
	return rc;
}

static int parse_samples(const json_t *a, double **out, size_t *n)
{
	size_t i, len = json_array_size(a);

	*out = NULL;
	*n = 0;
	if (!json_is_array(a))
		return KJ_EPROTOCOL;
	if (!len)
		return KJ_OK;
	*out = malloc(len * sizeof(double));
	if (!*out)
		return KJ_ENOMEM;
	for (i = 0; i < len; i++) {
		const json_t *v = json_array_get(a, i);

		if (!json_is_number(v)) {
			free(*out);
			*out = NULL;
			return KJ_EPROTOCOL;
		}
		(*out)[i] = json_number_value(v);
	}
	*n = len;
	return KJ_OK;
}

/* Kernel names kept at most, and bytes of each. */
#define KERNEL_NAMES_MAX 200
#define KERNEL_NAME_BYTES 200

/*
 * What a candidate's reply claims of the anti-cheat layers, when the side
 * has them on (informational: never a verdict): the Triton launches its
 * worker suppressed, and the GPU kernels of its profiled forward, added to
 * the side's union (cleaned, bounded, deduplicated).
 */
static int layer_claims(struct kj__wire_side *ts, const json_t *rep, struct kj_reply *r,
			struct kj_error *err)
{
	struct kj_side *s = ts->s;
	const json_t *names = json_object_get(rep, "kernel_names");
	size_t i, j;

	if (s->kernels_disabled) {
		json_int_t n = json_integer_value(json_object_get(rep, "launches_suppressed"));

		r->launches_suppressed = n > 0 ? (long long)n : 0;
		if (s->launches_suppressed < (1LL << 62))
			s->launches_suppressed += r->launches_suppressed;
	}
	if (!s->profile_kernels || !json_is_array(names))
		return KJ_OK;
	r->kernel_names = json_array();
	if (!r->kernel_names)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < json_array_size(names) && json_array_size(r->kernel_names) < KERNEL_NAMES_MAX;
	     i++) {
		const char *n = json_string_value(json_array_get(names, i));
		char *clean;
		int dup = 0;

		if (!n || !*n)
			continue;
		clean = kj__text_cleans(n, KERNEL_NAME_BYTES);
		if (!clean)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		for (j = 0; !dup && j < json_array_size(r->kernel_names); j++)
			dup = !strcmp(json_string_value(json_array_get(r->kernel_names, j)), clean);
		if (!dup && json_array_append_new(r->kernel_names, json_string(clean))) {
			free(clean);
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		free(clean);
	}
	if (!s->kernel_names && !(s->kernel_names = json_array()))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < json_array_size(r->kernel_names); i++) {
		json_t *n = json_array_get(r->kernel_names, i);
		int dup = 0;

		for (j = 0; !dup && j < json_array_size(s->kernel_names); j++)
			dup = json_equal(json_array_get(s->kernel_names, j), n);
		if (!dup && json_array_size(s->kernel_names) < KERNEL_NAMES_MAX &&
		    json_array_append(s->kernel_names, n))
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	return KJ_OK;
}

/* An {"ok": true} reply to a run or time call. */
static int reply_ok(struct kj__wire_side *ts, enum kj_call_op op, json_t *rep, struct kj_reply *r,
		    struct kj_error *err)
{
	struct kj_error e;
	const json_t *d;
	size_t i, n;
	int rc;

	r->ok = 1;
	r->phases = json_incref(json_object_get(rep, "phases"));
	r->inputs_changed = json_is_true(json_object_get(rep, "inputs_changed"));
	if ((d = json_object_get(rep, "input_desc")) && json_is_array(d))
		r->input_desc = kj__jref(d);
	if ((d = json_object_get(rep, "aliases")) && json_array_size(d))
		r->aliases = kj__jref(d);
	if (ts->s->role == KJ_SIDE_CANDIDATE && (rc = layer_claims(ts, rep, r, err)) != KJ_OK)
		return rc;
	if (op == KJ_CALL_RUN) {
		rc = parse_outputs(json_object_get(rep, "outputs"), &r->outputs, &e);
		if (rc == KJ_ENOMEM)
			return kj_error_set(err, rc, "out of memory");
		if (rc != KJ_OK)
			return reply_malformed(ts, r, e.msg, err);
		if (ts->s->role == KJ_SIDE_REFERENCE && ts->wire->hooks->outputs)
			ts->wire->hooks->outputs(ts->wire->ctx, ts, r->outputs);
		return KJ_OK;
	}
	if (op == KJ_CALL_TAKE || op == KJ_CALL_FIGURES || op == KJ_CALL_DROP) {
		d = json_object_get(rep, op == KJ_CALL_TAKE ? "taken" : "figures");
		if (op != KJ_CALL_DROP && !json_is_array(d))
			return reply_malformed(ts, r, "device comparison", err);
		r->held = d ? kj__jref(d) : NULL;
		return KJ_OK;
	}
	if (op == KJ_CALL_DEVICE) {
		r->copy_gbs = json_number_value(json_object_get(rep, "copy_gbs"));
		r->launch_ms = json_number_value(json_object_get(rep, "launch_ms"));
		if (!(r->copy_gbs > 0) || !(r->launch_ms >= 0))
			return reply_malformed(ts, r, "device limits", err);
		return KJ_OK;
	}
	rc = parse_samples(json_object_get(rep, "samples_ms"), &r->samples_ms, &r->n_samples);
	if (rc == KJ_OK)
		rc = parse_samples(json_object_get(rep, "escaped_ms"), &r->escaped_ms, &n);
	if (rc == KJ_ENOMEM)
		return kj_error_set(err, rc, "out of memory");
	if (rc != KJ_OK || n != r->n_samples)
		return reply_malformed(ts, r, "timing samples", err);
	for (i = 0; i < r->n_samples; i++)
		if (!(r->samples_ms[i] >= 0) || !(r->escaped_ms[i] >= 0) || !isfinite(r->samples_ms[i]))
			return reply_malformed(ts, r, "a timing sample that is not a finite, "
					       "non-negative number", err);
	r->peak_memory_mb = json_number_value(json_object_get(rep, "peak_memory_mb"));
	r->idle_sync_ms = json_number_value(json_object_get(rep, "idle_sync_ms"));
	snprintf(r->timer, sizeof(r->timer), "%s", jstr(rep, "timer") && strlen(jstr(rep, "timer")) < 24
		 ? jstr(rep, "timer") : "?");
	/* Distinct outputs by input set: [[outputs, ...] per set]; calls:
	 * [[set, distinct], ...] per timed call. */
	d = json_object_get(rep, "distinct_outputs");
	if (d) {
		size_t k, total = 0;

		if (!json_is_array(d))
			return reply_malformed(ts, r, "distinct outputs", err);
		for (k = 0; k < json_array_size(d); k++)
			total += json_array_size(json_array_get(d, k));
		if (total > 100000)
			return reply_malformed(ts, r, "too many distinct outputs", err);
		if (total) {
			r->distinct = calloc(total, sizeof(*r->distinct));
			r->distinct_set = calloc(total, sizeof(int));
			if (!r->distinct || !r->distinct_set)
				return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		for (k = 0; k < json_array_size(d); k++) {
			const json_t *per = json_array_get(d, k);

			if (!json_is_array(per))
				return reply_malformed(ts, r, "distinct outputs", err);
			for (i = 0; i < json_array_size(per); i++) {
				rc = parse_outputs(json_array_get(per, i), &r->distinct[r->n_distinct], &e);
				if (rc == KJ_ENOMEM)
					return kj_error_set(err, rc, "out of memory");
				if (rc != KJ_OK)
					return reply_malformed(ts, r, e.msg, err);
				r->distinct_set[r->n_distinct++] = (int)k;
			}
		}
	}
	d = json_object_get(rep, "calls");
	n = json_array_size(d);
	if (d && (!json_is_array(d) || n != r->n_samples))
		return reply_malformed(ts, r, "a call list that does not match the samples", err);
	if (n) {
		r->call_set = calloc(n, sizeof(int));
		r->call_distinct = calloc(n, sizeof(int));
		if (!r->call_set || !r->call_distinct)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const json_t *c = json_array_get(d, i);
		json_int_t set = json_integer_value(json_array_get(c, 0));
		json_int_t u = json_integer_value(json_array_get(c, 1));
		json_int_t known = 0;
		size_t j, base = 0;

		if (set >= 0 && set < ts->n_pending_known)
			known = ts->pending_known[set];
		/* Below known: an output the judge checked in an earlier round
		 * of the case.  Else the new distinct output u - known of set
		 * `set`, as an index of the flat list. */
		if (json_is_array(c) && set >= 0 && u >= 0 && u < known) {
			r->call_set[i] = (int)set;
			r->call_distinct[i] = -1;
			continue;
		}
		u -= known;
		for (j = 0; j < r->n_distinct && r->distinct_set[j] != (int)set; j++)
			;
		base = j;
		if (!json_is_array(c) || set < 0 || u < 0 || base + (size_t)u >= r->n_distinct ||
		    r->distinct_set[base + (size_t)u] != (int)set)
			return reply_malformed(ts, r, "a call naming an output that is not there", err);
		r->call_set[i] = (int)set;
		r->call_distinct[i] = (int)(base + (size_t)u);
	}
	r->n_calls = n;
	return KJ_OK;
}

/* --- starting workers ---------------------------------------------------------------- */

static int request_all(struct kj__wire_side **sv, int n, json_t *const *reqs, json_t **reps,
		       double timeout_s, int *rcs, struct kj_error *errs)
{
	uint64_t nonce[2];
	int i;

	for (i = 0; i < n; i++) {
		reps[i] = NULL;
		rcs[i] = reqs[i] ? kj_proc_send(&sv[i]->proc, reqs[i], timeout_s, &nonce[i], &errs[i])
				 : KJ_ENOMEM;
		if (!reqs[i])
			kj_error_set(&errs[i], KJ_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		if (rcs[i] == KJ_OK)
			rcs[i] = kj_proc_wait(&sv[i]->proc, nonce[i], timeout_s, &reps[i], &errs[i]);
	return KJ_OK;
}

/*
 * Wait for the reply to the request `nonce` of ts, serving the build
 * requests its worker sends meanwhile (a line with the request's nonce, a
 * "build" and no "ok"; the runner's serve hook).  The time a build takes is the
 * judge's, not the request's: the request's timeout counts the worker's
 * time alone.  The codes of kj_proc_wait.
 */
static int wait_reply(struct kj__wire_side *ts, uint64_t nonce, double timeout_s, int builds,
		      json_t **rep, struct kj_error *e)
{
	double spent = 0;

	for (;;) {
		double t0 = kj__now_s();
		json_t *ans;
		int rc = kj_proc_wait(&ts->proc, nonce, timeout_s - spent, rep, e);

		if (rc != KJ_OK)
			return rc;
		spent += kj__now_s() - t0;
		if (json_object_get(*rep, "ok") || !json_object_get(*rep, "build"))
			return KJ_OK;
		if (!ts->wire->hooks->serve)
			return KJ_OK;
		e->code = KJ_OK;
		ans = ts->wire->hooks->serve(ts->wire->ctx, ts, *rep, builds, e);
		json_decref(*rep);
		*rep = NULL;
		if (!ans)
			return e->code == KJ_EINTR ? KJ_EINTR : kj_error_set(e, KJ_ENOMEM, "out of "
									      "memory");
		rc = kj_proc_answer(&ts->proc, nonce, ans, timeout_s - spent > 1 ? timeout_s - spent
										: 1, e);
		if (rc != KJ_OK)
			return rc;
	}
}

static void side_kill(struct kj__wire_side *ts)
{
	if (ts->proc.pid)
		kj_proc_release(&ts->proc, 2.0);
	kj_proc_init(&ts->proc);
	ts->pending = 0;
	ts->s->loaded = 0;
}

/* What the hello of a failed start said, for the error. */
static int start_error(struct kj__wire_side *ts, int rc, const struct kj_error *e,
		       const json_t *rep, struct kj_error *err)
{
	const char *msg = rc != KJ_OK ? e->msg : jstr(rep, "error_msg");
	char *tail = output_tail(&ts->proc);
	/* The exception's line: the worker puts it first. */
	char *clean = kj__text_clean(msg ? msg : "", msg ? kj__first_line(msg, 600) : 0, 600);
	char fix[1200];
	int code = rc == KJ_EINTR || rc == KJ_ENOMEM ? rc
		   : kj_proc_interrupted() ? KJ_EINTR /* as proc_failed's */
		   : ts->s->sandboxed ? KJ_ESANDBOX : KJ_ESPAWN;

	fix[0] = '\0';
	kj_error_set(err, code, "the %s's worker did not start with %s: %s%s%s%.300s",
		     kj_side_name(ts->s->role), ts->wire->what, clean ? clean : "",
		     ts->wire->hooks->start_fix
			     ? ts->wire->hooks->start_fix(ts->wire->ctx, msg, fix, sizeof(fix)) : "",
		     tail && *tail ? "\n" : "",
		     tail ? tail : "");
	free(tail);
	free(clean);
	return code;
}

/* Spawn the workers of n sides and have them say hello (the hello hook's
 * checks included): the part of a start that knows nothing of the task. */
static int spawn_hello(struct kj__wire_side **sv, int n, struct kj_error *err)
{
	struct kj__wire *wire = sv[0]->wire;
	const struct kj__wire_hooks *h = wire->hooks;
	json_t *reqs[2] = { NULL, NULL }, *reps[2] = { NULL, NULL };
	int i, rc, rcs[2];
	struct kj_error es[2];

	for (i = 0; i < n; i++) {
		struct kj__wire_side *ts = sv[i];
		struct kj_side *s = ts->s;

		side_kill(ts);
		kj_reply_release(&s->load_failure);
		json_decref(ts->hello);
		ts->hello = NULL;
		s->started = 1;
		if (ts->view) {
			if (h->prepare && (rc = h->prepare(wire->ctx, ts, err)) != KJ_OK)
				return rc;
			rc = kj_proc_spawn_in(&ts->proc, wire->argv, ts->envp, s->out_dir, ts->view,
					      err);
		} else {
			rc = kj_proc_spawn(&ts->proc, wire->argv, ts->envp, s->out_dir, err);
		}
		if (rc != KJ_OK)
			return rc;
		/* The candidate's output is limited per request, the reference's
		 * only kept as a tail. */
		ts->proc.output_limit = s->sandboxed;
		ts->proc.output_bytes = wire->cfg->limits.output_bytes;
		json_decref(s->limits);
		s->limits = kj_proc_limits_json(&ts->proc);
		s->isolation = kj_isolation_name(ts->proc.isolation);
		if (!s->limits)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		if (h->limits && (rc = h->limits(wire->ctx, ts, err)) != KJ_OK)
			return rc;
	}
	for (i = 0; i < n; i++)
		reqs[i] = h->request(wire->ctx, KJ__WIRE_HELLO, sv[i]);
	request_all(sv, n, reqs, reps, wire->startup_s, rcs, es);
	rc = KJ_OK;
	for (i = 0; i < n; i++) {
		if (rc == KJ_OK && (rcs[i] != KJ_OK || !json_is_true(json_object_get(reps[i], "ok"))))
			rc = start_error(sv[i], rcs[i], &es[i], reps[i], err);
		if (rc == KJ_OK)
			sv[i]->hello = reps[i];
		else
			json_decref(reps[i]);
	}
	if (rc != KJ_OK)
		return rc;
	return h->hello ? h->hello(wire->ctx, sv, n, err) : KJ_OK;
}

int kj__wire_prestart(struct kj__wire_side **sv, int n, struct kj_error *err)
{
	int i, rc;

	if (n < 1 || n > 2)
		return kj_error_set(err, KJ_EINVAL, "internal: %d sides started together", n);
	sv[0]->wire->prestarting = 1;
	rc = spawn_hello(sv, n, err);
	sv[0]->wire->prestarting = 0;
	for (i = 0; i < n; i++)
		sv[i]->warm = rc == KJ_OK;
	return rc;
}

int kj__wire_start(struct kj__wire_side **sv, int n, struct kj_error *err)
{
	struct kj__wire *wire = sv[0]->wire;
	const struct kj__wire_hooks *h = wire->hooks;
	json_t *reqs[2] = { NULL, NULL }, *reps[2] = { NULL, NULL };
	int i, rc = KJ_OK, rcs[2], skip[2], warm = 1;
	struct kj_error es[2];
	double startup_s = wire->startup_s, t0 = kj__now_s(), t1;

	if (n < 1 || n > 2)
		return kj_error_set(err, KJ_EINVAL, "internal: %d sides started together", n);
	wire->spawn_s = wire->task_s = wire->module_s = 0;
	/* Workers started before the task was known go on from their hello,
	 * when every one is still there; else all start again (a worker that
	 * died while it waited is nobody's failure). */
	for (i = 0; i < n; i++)
		warm &= sv[i]->warm && kj_proc_alive(&sv[i]->proc);
	for (i = 0; i < n; i++)
		sv[i]->warm = 0;
	if (!warm)
		rc = spawn_hello(sv, n, err);
	t1 = kj__now_s();
	wire->spawn_s = t1 - t0;
	if (rc != KJ_OK)
		return rc;
	/* The task: nothing of the candidate has run yet, whatever fails here
	 * is the task's. */
	for (i = 0; i < n; i++)
		reqs[i] = h->request(wire->ctx, KJ__WIRE_TASK, sv[i]);
	request_all(sv, n, reqs, reps, startup_s, rcs, es);
	for (i = 0; i < n; i++) {
		struct kj__wire_side *ts = sv[i];
		struct kj_reply *f = &ts->s->load_failure;

		if (rcs[i] == KJ_EINTR || rcs[i] == KJ_ENOMEM) {
			rc = kj_error_set(err, rcs[i], "%s", es[i].msg);
		} else if (rcs[i] != KJ_OK) {
			if (proc_failed(ts, rcs[i], &es[i], f, err) != KJ_OK)
				rc = err->code;
			f->type = KJ_ET_TASK;
		} else if (!json_is_true(json_object_get(reps[i], "ok"))) {
			if (reply_failed(ts, reps[i], f, err) != KJ_OK)
				rc = err->code;
			f->type = KJ_ET_TASK;
			snprintf(f->phase, sizeof(f->phase), "task");
		} else {
			ts->cases = (int)json_integer_value(json_object_get(reps[i], "cases"));
		}
		json_decref(reps[i]);
	}
	t0 = kj__now_s();
	wire->task_s = t0 - t1;
	if (rc != KJ_OK)
		return rc;
	/* The module under test (not where the task failed). */
	for (i = 0; i < n; i++) {
		struct kj_side *s = sv[i]->s;
		int cand = s->role == KJ_SIDE_CANDIDATE;
		uint64_t nonce = 0;
		json_t *req;

		skip[i] = s->load_failure.type != KJ_ET_NOT_JUDGED;
		if (skip[i])
			continue;
		req = h->request(wire->ctx, KJ__WIRE_MODULE, sv[i]);
		if (!req)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		rcs[i] = kj_proc_send(&sv[i]->proc, req, cand ? wire->timeout_s : startup_s, &nonce,
				      &es[i]);
		sv[i]->nonce = nonce;
	}
	/* The candidate's reply first (the last side): a build it asks for
	 * while its module loads is served at once, beside the reference's
	 * import, as its own build would have run; the reference's reply
	 * waits on its channel meanwhile. */
	for (i = n - 1; i >= 0; i--) {
		struct kj__wire_side *ts = sv[i];
		struct kj_reply *f = &ts->s->load_failure;
		json_t *rep = NULL;

		if (skip[i])
			continue; /* the task failed */
		if (rcs[i] == KJ_OK)
			rcs[i] = wait_reply(ts, ts->nonce,
					    ts->s->role == KJ_SIDE_CANDIDATE ? wire->timeout_s
									     : startup_s,
					    1, &rep, &es[i]);
		if (rcs[i] == KJ_EINTR || rcs[i] == KJ_ENOMEM) {
			rc = kj_error_set(err, rcs[i], "%s", es[i].msg);
		} else if (rcs[i] != KJ_OK) {
			if (proc_failed(ts, rcs[i], &es[i], f, err) != KJ_OK)
				rc = err->code;
			if (f->type == KJ_ET_CRASH)
				f->type = KJ_ET_LOAD;
		} else if (!json_is_true(json_object_get(rep, "ok"))) {
			if (reply_failed(ts, rep, f, err) != KJ_OK)
				rc = err->code;
			f->type = KJ_ET_LOAD;
		} else {
			ts->s->loaded = 1;
		}
		json_decref(rep);
	}
	wire->module_s = kj__now_s() - t0;
	return rc;
}

/* --- the side operations ---------------------------------------------------------------- */

int kj__wire_op_start(struct kj_side *s, struct kj_error *err)
{
	struct kj__wire_side *ts = s->impl;

	/* No candidate file: nothing to start; load_failure says so. */
	if (s->role == KJ_SIDE_CANDIDATE && !ts->wire->t->have_candidate)
		return KJ_OK;
	return kj__wire_start(&ts, 1, err);
}

int kj__wire_op_send(struct kj_side *s, const struct kj_call *call, struct kj_error *err)
{
	struct kj__wire_side *ts = s->impl;
	struct kj__wire *wire = ts->wire;
	struct kj_error e;
	json_t *req;
	int rc;

	if (call->op == KJ_CALL_RUN) {
		req = json_pack("{s:s, s:i, s:I, s:s, s:s}", "op", "run", "case", call->case_idx,
				"seed", (json_int_t)call->seed, "out_dir", call->out_dir, "tag", call->tag);
	} else if (call->op == KJ_CALL_DEVICE) {
		req = json_pack("{s:s}", "op", "device");
	} else if (call->op == KJ_CALL_TAKE || call->op == KJ_CALL_FIGURES ||
		   call->op == KJ_CALL_DROP) {
		if (s->role != KJ_SIDE_REFERENCE)
			return kj_error_set(err, KJ_EINVAL, "internal: device comparisons run on "
					    "the reference's side only");
		req = json_pack("{s:s}", "op", call->op == KJ_CALL_TAKE ? "take"
					 : call->op == KJ_CALL_FIGURES ? "figures" : "drop");
		if (req && call->items && json_object_set_new(req, "items", kj__jref(call->items))) {
			json_decref(req);
			req = NULL;
		}
	} else {
		json_t *seeds = json_array(), *schedule = json_array();
		int i, bad = !seeds || !schedule;

		for (i = 0; !bad && i < call->n_seeds; i++)
			bad |= json_array_append_new(seeds, json_integer((json_int_t)call->seeds[i]));
		for (i = 0; !bad && i < call->n_calls; i++)
			bad |= json_array_append_new(schedule, json_integer(call->schedule[i]));
		if (bad) {
			json_decref(seeds);
			json_decref(schedule);
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		req = json_pack("{s:s, s:i, s:o, s:o, s:i, s:I, s:s, s:s, s:b}", "op", "time_round",
				"case", call->case_idx, "seeds", seeds, "schedule", schedule,
				"warmup", call->warmup, "flush_bytes", (json_int_t)call->flush_bytes,
				"out_dir", call->out_dir, "tag", call->tag, "check", call->check);
		if (req && call->empty && (s->role != KJ_SIDE_REFERENCE ||
					   json_object_set_new(req, "empty", json_true()))) {
			json_decref(req);
			return kj_error_set(err, s->role != KJ_SIDE_REFERENCE ? KJ_EINVAL
										 : KJ_ENOMEM,
					    s->role != KJ_SIDE_REFERENCE
						    ? "empty calls are the reference's worker's"
						    : "out of memory");
		}
		if (req && call->check && call->known && call->n_known > 0) {
			json_t *known = json_array();

			for (i = 0; known && i < call->n_known; i++)
				if (json_array_append_new(known, json_integer(call->known[i])) != 0) {
					json_decref(known);
					known = NULL;
				}
			if (!known || json_object_set_new(req, "known", known) != 0) {
				json_decref(req);
				req = NULL;
			}
		}
		if (req && call->queued && call->probe_at < 0 &&
		    json_object_set_new(req, "queued", json_true()) != 0) {
			json_decref(req);
			req = NULL;
		}
		if (req && call->probe_at >= 0 && call->probe_at < call->n_calls &&
		    json_object_set_new(req, "probe", json_pack("{s:I, s:i, s:i, s:b}", "seed",
							       (json_int_t)call->probe_seed, "at",
							       call->probe_at, "set",
							       call->probe_set, "decoy",
							       call->probe_decoy != 0)) != 0) {
			json_decref(req);
			req = NULL;
		}
	}
	/* The candidate's outputs come back as sealed memory files, never as
	 * files it could still change or name (value.h); in timed rounds the
	 * reference's too, so that both sides do the same work around their
	 * calls (the judge's clock compares the two). */
	if (req && ((s->role == KJ_SIDE_CANDIDATE && call->op == KJ_CALL_RUN) ||
		    call->op == KJ_CALL_TIME) &&
	    json_object_set_new(req, "sealed", json_true()) != 0) {
		json_decref(req);
		req = NULL;
	}
	if (req && (call->op == KJ_CALL_RUN || call->op == KJ_CALL_TIME) && call->export_outputs &&
	    json_object_set_new(req, "export", json_integer(call->export_outputs)) != 0) {
		json_decref(req);
		req = NULL;
	}
	if (req && call->op == KJ_CALL_RUN && call->keep && s->role == KJ_SIDE_REFERENCE &&
	    json_object_set_new(req, "keep", json_integer(call->keep)) != 0) {
		json_decref(req);
		req = NULL;
	}
	/* The case's parameters (a task with a cases file), on both sides. */
	if (req && (call->op == KJ_CALL_RUN || call->op == KJ_CALL_TIME) && wire->t->case_params) {
		json_t *p = json_array_get(wire->t->case_params, (size_t)call->case_idx);

		if (!p) {
			json_decref(req);
			return kj_error_set(err, KJ_EINVAL, "internal: case %d of %zu", call->case_idx + 1,
					    json_array_size(wire->t->case_params));
		}
		if (json_object_set(req, "params", p)) {
			json_decref(req);
			req = NULL;
		}
	}
	if (!req)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	ts->pending_op = call->op;
	ts->n_pending_known = 0;
	if (call->op == KJ_CALL_TIME && call->known) {
		int i, n = call->n_known;

		if (n < 0 || n > (int)(sizeof(ts->pending_known) / sizeof(ts->pending_known[0]))) {
			json_decref(req);
			return kj_error_set(err, KJ_EINVAL, "internal: a timed round of %d input sets", n);
		}
		for (i = 0; i < n; i++)
			ts->pending_known[i] = call->known[i];
		ts->n_pending_known = n;
	}
	snprintf(ts->pending_dir, sizeof(ts->pending_dir), "%s", call->out_dir ? call->out_dir : "");
	/* A timed round calls forward warmup + n_calls times: it may print as
	 * much as that many calls. */
	ts->proc.output_calls = call->op == KJ_CALL_TIME && call->warmup + call->n_calls > 1
				? (unsigned)call->warmup + (unsigned)call->n_calls : 1;
	if (call->op == KJ_CALL_TAKE) {
		ts->proc.send_fds = call->pass_fds;
		ts->proc.n_send_fds = call->n_pass_fds;
	}
	rc = kj_proc_send(&ts->proc, req, wire->timeout_s, &ts->nonce, &e);
	ts->pending = 1;
	if (rc != KJ_OK) {
		/* Kept for recv, which reports it as the call's outcome. */
		ts->pending = 2;
		ts->s->loaded = 0;
		if (rc == KJ_EINTR || rc == KJ_ENOMEM)
			return kj_error_set(err, rc, "%s", e.msg);
	}
	return KJ_OK;
}

int kj__wire_op_recv(struct kj_side *s, struct kj_reply *r, struct kj_error *err)
{
	struct kj__wire_side *ts = s->impl;
	struct kj_error e;
	json_t *rep = NULL;
	int rc;

	kj_reply_init(r);
	if (!ts->pending)
		return kj_error_set(err, KJ_EINVAL, "internal: no call to receive");
	if (ts->pending == 2) {
		kj_error_set(&e, KJ_EWORKER, "the worker was gone before the call");
		return proc_failed(ts, KJ_EWORKER, &e, r, err);
	}
	ts->pending = 0;
	rc = wait_reply(ts, ts->nonce, ts->wire->timeout_s, ts->pending_op == KJ_CALL_RUN, &rep, &e);
	if (rc != KJ_OK)
		return proc_failed(ts, rc, &e, r, err);
	kj_proc_take_fds(&ts->proc, &r->fds, &r->n_fds);
	if (ts->proc.fds_nomem) {
		/* The judge dropped descriptors it could not keep: its own
		 * failure, no one's verdict; the worker goes with them. */
		json_decref(rep);
		side_kill(ts);
		return kj_error_set(err, KJ_ENOMEM, "out of memory (keeping a worker's descriptors)");
	}
	if (ts->proc.fds_over) {
		/* Descriptors were dropped: what came may not be what was sent.
		 * The worker is killed, as after any broken protocol. */
		json_decref(rep);
		kj_proc_kill(&ts->proc);
		kj_error_set(&e, KJ_EPROTOCOL, "worker sent more than %d descriptors at once, or "
			     "more than the judge could take", KJ_PROC_FDS_MAX);
		return proc_failed(ts, KJ_EPROTOCOL, &e, r, err);
	}
	if (!json_is_true(json_object_get(rep, "ok")))
		rc = reply_failed(ts, rep, r, err);
	else
		rc = reply_ok(ts, ts->pending_op, rep, r, err);
	json_decref(rep);
	if (rc == KJ_OK && r->lost)
		side_kill(ts);
	return rc;
}

void kj__wire_op_stop(struct kj_side *s)
{
	struct kj__wire_side *ts = s->impl;

	side_kill(ts);
	s->started = 0;
}

int kj__wire_op_freeze(struct kj_side *s, int frozen, struct kj_error *err)
{
	struct kj__wire_side *ts = s->impl;

	return kj_proc_freeze(&ts->proc, frozen, err);
}

void kj__wire_op_release(struct kj_side *s)
{
	struct kj__wire_side *ts = s->impl;

	if (!ts)
		return;
	side_kill(ts);
	json_decref(ts->hello);
	kj_reply_release(&s->load_failure);
	json_decref(s->limits);
	s->limits = NULL;
	json_decref(s->kernel_names);
	s->kernel_names = NULL;
	free(ts);
	s->impl = NULL;
}

void kj__wire_op_kill(struct kj_side *s)
{
	struct kj__wire_side *ts = s->impl;

	if (ts)
		kj_proc_signal_kill(&ts->proc);
}

int kj__wire_side_new(struct kj__wire *wire, struct kj_side *s, char *const *envp,
		      const struct kj_sandbox *view, struct kj_error *err)
{
	struct kj__wire_side *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	ts->wire = wire;
	ts->s = s;
	ts->envp = envp;
	ts->view = view;
	kj_proc_init(&ts->proc);
	s->impl = ts;
	return KJ_OK;
}
