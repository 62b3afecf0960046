/*
 * test_pipeline.c - kj_verify and kj_benchmark driven through a scripted
 * side: a struct kj_side_ops whose replies a test writes (outputs, failures,
 * timed samples), as a pager is tested through a test VFS.  Everything
 * past the side is the real thing: the pipeline, the golden cache, the C
 * comparator, the timing checks, the records and the gate.  The outputs
 * are values the comparator reads from the reply (an int per input set,
 * made from its seed), or a real .npy golden; what the judge's clock sees
 * of a timed round is the script's too (kj__bench_clock), so every test
 * takes milliseconds.
 */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "kjudge/config.h"
#include "kjudge/fileio.h"
#include "kjudge/pipeline.h"
#include "kjudge/runner.h"
#include "kjudge/tensor.h"
#include "kjudge/value.h"
#include "kjudge/verdict.h"
#include "core/pipeline_internal.h"
#include "unit.h"

/* What one side does, as the test scripts it. */
struct script {
	int start_rc;        /* start's code (KJ_OK: started) */
	int no_load;         /* started, its module not loaded */
	int send_rc;         /* every request fails to go with this code */
	enum kj_etype fail;  /* a run's reply says it failed with this type */
	int wrong;           /* its outputs are off by one */
	int no_outputs;      /* a run's reply is ok, without outputs */
	int two_outputs;     /* one output more than the reference's */
	int changed_inputs;  /* it says it changed its inputs */
	int tensor_no_fd;    /* its output is a tensor whose descriptor it never sent */
	int npy;             /* the reference: a real .npy golden */
	double true_ms;      /* a timed call, as the judge's clock sees it */
	double claim_ms;     /* what its sample says (0: true_ms) */
	int claim_case;      /* claim_ms in this case only (1-based; 0: all) */
	double unseen_ms;    /* a call on inputs it never saw (0: true_ms) */
	int forge_unseen;    /* its sample of such a call says true_ms */
	int noisy;           /* every other call takes (and says) twice as long */
	int short_round;     /* a round reports one sample fewer than asked */
};

struct fake {
	struct script sc;
	struct kj_call call; /* the request in flight (its arrays are the caller's) */
	int runs, rounds;
	int queued, queued_probes; /* rounds asked queued; of them, with a probe */
	int empties;               /* timed rounds of empty calls */
};

/* The judge's clock of the benchmark, advanced by the scripted rounds. */
static double clock_s;
/* What making a set of new inputs costs (probe and decoy rounds alike). */
#define MAKE_MS 2.0
/* What the harness costs around each timed call, on the judge's clock. */
#define HARNESS_MS 0.1

static double fake_clock(void)
{
	return clock_s;
}

static int fake_start(struct kj_side *s, struct kj_error *err)
{
	struct fake *f = s->impl;

	kj_reply_release(&s->load_failure);
	if (f->sc.start_rc)
		return kj_error_set(err, f->sc.start_rc, "scripted: no worker");
	s->started = 1;
	s->loaded = !f->sc.no_load;
	if (!s->loaded) {
		s->load_failure.type = KJ_ET_LOAD;
		s->load_failure.message = strdup("scripted: the module did not load");
	}
	return KJ_OK;
}

static void fake_stop(struct kj_side *s)
{
	s->started = s->loaded = 0;
}

static int fake_send(struct kj_side *s, const struct kj_call *call, struct kj_error *err)
{
	struct fake *f = s->impl;

	if (f->sc.send_rc)
		return kj_error_set(err, f->sc.send_rc, "scripted: the worker is gone");
	f->call = *call;
	if (call->op == KJ_CALL_TIME && call->empty && call->n_calls > 0)
		f->empties++;
	if (call->op == KJ_CALL_TIME && call->queued) {
		f->queued++;
		f->queued_probes += call->probe_at >= 0;
	}
	return KJ_OK;
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
	kj_reply_release(&s->load_failure);
}

static void fake_kill(struct kj_side *s)
{
	(void)s;
}

/* The outputs of the inputs of `seed`: one int made from it. */
static struct kj_value *outputs_of(const struct fake *f, uint64_t seed, const char *dir,
				   const char *tag)
{
	char num[32], path[4200];
	struct kj_value *v = NULL;
	struct kj_error err;
	json_t *items = json_array(), *j;

	snprintf(num, sizeof(num), "%llu", (unsigned long long)(seed % 1000003 + !!f->sc.wrong));
	if (f->sc.tensor_no_fd) {
		json_array_append_new(items, json_pack("{s:s, s:i, s:s, s:[i]}", "kind", "tensor",
						       "fd", 0, "dtype", "float32", "shape", 2));
	} else if (f->sc.npy) {
		struct kj_tensor t;
		void *data;

		KJ_CHECK_OK(kj_tensor_alloc(&t, KJ_DTYPE_FLOAT32, 1, (const int64_t[]){ 2 }, &data,
					    &err), &err);
		((float *)data)[0] = 1.0f;
		((float *)data)[1] = (float)(seed % 1000);
		snprintf(path, sizeof(path), "%s/%s_out0.npy", dir, tag);
		KJ_CHECK_OK(kj_npy_save(path, &t, &err), &err);
		kj_tensor_release(&t);
		snprintf(path, sizeof(path), "%s_out0.npy", tag);
		json_array_append_new(items, json_pack("{s:s, s:s, s:s, s:[i]}", "kind", "tensor",
						       "file", path, "dtype", "float32", "shape", 2));
	} else {
		json_array_append_new(items, json_pack("{s:s, s:s}", "kind", "int", "value", num));
	}
	if (f->sc.two_outputs)
		json_array_append_new(items, json_pack("{s:s, s:s}", "kind", "int", "value", "0"));
	j = json_pack("{s:s, s:o}", "kind", "list", "items", items);
	KJ_CHECK(j != NULL);
	KJ_CHECK_OK(kj_value_parse(j, &v, &err), &err);
	json_decref(j);
	return v;
}

static uint64_t seed_of_set(const struct kj_call *c, int set)
{
	return set == c->probe_set && !c->probe_decoy ? c->probe_seed : c->seeds[set];
}

/* A round of timed calls: samples, the judge's clock moved on by what the
 * calls took, each set's output once unless the judge knows it. */
static void time_reply(struct fake *f, struct kj_reply *r)
{
	const struct kj_call *c = &f->call;
	int n = c->n_calls, i, *sent = calloc((size_t)c->n_seeds + 16, sizeof(int));
	double base = f->sc.true_ms;

	KJ_CHECK(sent != NULL);
	f->rounds++;
	clock_s += c->warmup * (base + HARNESS_MS) / 1e3;
	r->ok = 1;
	r->n_samples = (size_t)(f->sc.short_round && n ? n - 1 : n);
	r->n_calls = (size_t)n;
	r->samples_ms = calloc((size_t)n + 1, sizeof(double));
	r->escaped_ms = calloc((size_t)n + 1, sizeof(double));
	r->call_set = calloc((size_t)n + 1, sizeof(int));
	r->call_distinct = calloc((size_t)n + 1, sizeof(int));
	r->distinct = calloc((size_t)n + 1, sizeof(*r->distinct));
	r->distinct_set = calloc((size_t)n + 1, sizeof(int));
	KJ_CHECK(r->samples_ms && r->escaped_ms && r->call_set && r->call_distinct &&
		 r->distinct && r->distinct_set);
	snprintf(r->timer, sizeof(r->timer), "perf_counter");
	for (i = 0; i < n; i++) {
		int set = c->schedule[i];
		double took = base * (f->sc.noisy && i % 2 ? 2 : 1), said;

		int probe = i == c->probe_at && !c->probe_decoy;

		if (i == c->probe_at)
			clock_s += MAKE_MS / 1e3; /* the new set, made and kept */
		if (probe && f->sc.unseen_ms > 0)
			took = f->sc.unseen_ms;
		said = f->sc.claim_ms > 0 && i != c->probe_at &&
				       (!f->sc.claim_case || f->sc.claim_case == c->case_idx + 1)
			       ? f->sc.claim_ms : took;
		if (probe && f->sc.forge_unseen)
			said = base;
		clock_s += (took + HARNESS_MS) / 1e3;
		r->samples_ms[i] = said;
		r->call_set[i] = set;
		r->call_distinct[i] = -1;
		/* A decoy's output goes as a new one, as a probe's does. */
		if (set >= c->n_seeds + 16 ||
		    (!(i == c->probe_at && c->probe_decoy) &&
		     ((set < c->n_known && c->known && c->known[set]) || sent[set])))
			continue;
		sent[set] = 1;
		r->distinct_set[r->n_distinct] = set;
		r->call_distinct[i] = (int)r->n_distinct;
		r->distinct[r->n_distinct++] = outputs_of(f, seed_of_set(c, set), NULL, NULL);
	}
	free(sent);
}

static int fake_recv(struct kj_side *s, struct kj_reply *r, struct kj_error *err)
{
	struct fake *f = s->impl;

	(void)err;
	kj_reply_init(r);
	switch (f->call.op) {
	case KJ_CALL_RUN:
		f->runs++;
		if (f->sc.fail) {
			r->type = f->sc.fail;
			r->message = strdup("scripted: forward failed");
			snprintf(r->phase, sizeof(r->phase), "forward");
			return KJ_OK;
		}
		r->ok = 1;
		r->input_desc = json_array();
		r->inputs_changed = f->sc.changed_inputs;
		if (!f->sc.no_outputs)
			r->outputs = outputs_of(f, f->call.seed, f->call.out_dir, f->call.tag);
		return KJ_OK;
	case KJ_CALL_TIME:
		time_reply(f, r);
		return KJ_OK;
	case KJ_CALL_DEVICE:
		r->ok = 1;
		r->copy_gbs = 100;
		r->launch_ms = 0.01;
		return KJ_OK;
	default:
		r->ok = 1;
		r->held = json_array();
		return KJ_OK;
	}
}

/* It measures the device's limits and freezes (no-ops the script answers);
 * on-device comparison it does not declare, so outputs go through host
 * memory, as the pipeline does for a runner without it. */
static const struct kj_side_ops fake_ops = {
	.name = "fake",
	.caps = KJ_SIDE_CAP_DEVICE | KJ_SIDE_CAP_FREEZE,
	.start = fake_start,
	.send = fake_send,
	.recv = fake_recv,
	.stop = fake_stop,
	.freeze = fake_freeze,
	.release = fake_release,
	.kill = fake_kill,
};

/* A task of n_cases over two scripted sides, and an attempt in the test's
 * directory (its own golden cache). */
struct rig {
	struct kj_config cfg;
	struct kj_attempt a;
	struct kj_task t;
	struct fake ref, cand;
	struct kj_judge_opts o;
	struct kj_bench_opts b;
	struct kj_result res;
	struct kj_error err;
};

static void side_init(struct kj_side *s, struct fake *f, const struct script *sc,
		      enum kj_side_role role, const char *name)
{
	/* A test may open several rigs: each its own directories. */
	static int opened;
	char dir[64];

	memset(f, 0, sizeof(*f));
	if (sc)
		f->sc = *sc;
	if (!(f->sc.true_ms > 0))
		f->sc.true_ms = 1.0;
	s->ops = &fake_ops;
	s->impl = f;
	s->role = role;
	kj_reply_init(&s->load_failure);
	snprintf(dir, sizeof(dir), "%s%d", name, opened++);
	snprintf(s->out_dir, sizeof(s->out_dir), "%s", kj_test_path(dir));
	KJ_CHECK(mkdir(s->out_dir, 0700) == 0);
}

/* rig_open with the golden cache at cache_dir (NULL: the run's own). */
static void rig_open_cached(struct rig *g, const struct script *ref, const struct script *cand,
			    int n_cases, const char *cache_dir)
{
	memset(g, 0, sizeof(*g));
	kj_config_init(&g->cfg, NULL);
	g->cfg.scratch_parent = kj_test_tmpdir();
	g->cfg.scratch_private = 0;
	g->cfg.cache_dir = cache_dir;
	KJ_CHECK_OK(kj_attempt_open(&g->a, &g->cfg, &g->err), &g->err);
	g->a.have_key = 1;
	g->a.key[0] = 1;
	g->a.run_key[0] = 7;
	g->t.name = "scripted";
	g->t.n_cases = n_cases;
	g->t.have_candidate = 1;
	snprintf(g->t.task_file, sizeof(g->t.task_file), "%s", kj_test_path("task.py"));
	snprintf(g->t.cand_file, sizeof(g->t.cand_file), "%s", kj_test_path("cand.py"));
	memset(g->t.task_sha256, 'a', 64);
	memset(g->t.cand_sha256, 'b', 64);
	snprintf(g->t.device, sizeof(g->t.device), "cpu");
	side_init(&g->t.ref, &g->ref, ref, KJ_SIDE_REFERENCE, "ref");
	side_init(&g->t.cand, &g->cand, cand, KJ_SIDE_CANDIDATE, "cand");
	kj_judge_opts_init(&g->o);
	kj_bench_opts_init(&g->b);
	g->b.warmup = 1;
	g->b.repeats = 5;
	g->b.timed_sets = 2;
	clock_s = 1000;
	kj__bench_clock = fake_clock;
}

static void rig_open(struct rig *g, const struct script *ref, const struct script *cand,
		     int n_cases)
{
	rig_open_cached(g, ref, cand, n_cases, NULL);
}

static void rig_close(struct rig *g)
{
	kj__bench_clock = NULL;
	kj_result_release(&g->res);
	fake_release(&g->t.ref);
	fake_release(&g->t.cand);
	kj_attempt_close(&g->a);
}

static int verify(struct rig *g)
{
	return kj_verify(&g->t, &g->a, &g->o, NULL, &g->res, &g->err);
}

static int bench(struct rig *g)
{
	return kj_benchmark(&g->t, &g->a, &g->o, &g->b, NULL, &g->res, &g->err);
}

/* The verify record of g's run, in the test's directory as `name`. */
static const char *write_record(struct rig *g, const char *name)
{
	json_t *rec = kj_verify_json(&g->t, &g->a, &g->res, &g->err);
	char *text;
	int oom = 0;

	KJ_CHECK(rec != NULL);
	text = kj__json_dumps(rec, 0, &oom);
	KJ_CHECK(text != NULL);
	KJ_CHECK_OK(kj_write_file_atomic(kj_test_path(name), text, strlen(text), &g->err),
		    &g->err);
	free(text);
	json_decref(rec);
	return kj_test_path(name);
}

/* --- verify ---------------------------------------------------------------------- */

KJ_TEST(pipeline_verify_passes_only_what_compared_equal)
{
	struct rig g;
	char why[300];

	rig_open(&g, NULL, NULL, 2);
	KJ_CHECK_OK(verify(&g), &g.err);
	KJ_CHECK_INT(kj_verify_exit(&g.res, why, sizeof(why)), 0);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[1]), KJ_STATUS_PASS);
	KJ_CHECK_INT(g.res.cases[0].compared, 1);
	/* Two input sets per case, each with its own seed on both sides. */
	KJ_CHECK_INT(g.cand.runs, 4);
	KJ_CHECK_INT(g.ref.runs, 4);
	rig_close(&g);
}

/* The golden entries (g-*) in the cache at dir. */
static int cache_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	KJ_CHECK(d != NULL);
	while (d && (e = readdir(d)))
		n += strncmp(e->d_name, "g-", 2) == 0 && !strstr(e->d_name, ".tmp-");
	if (d)
		closedir(d);
	return n;
}

/* Goldens of fresh seeds serve their own run and leave the cache when it
 * closes; a batch's (a shared run key) and fixed seeds' stay for the
 * next; the ledger counts what stays. */
KJ_TEST(pipeline_cache_keeps_only_goldens_a_later_run_can_ask_for)
{
	struct rig g;
	char *dir = strdup(kj_test_path("gcache")), led[PATH_MAX];
	long long bytes = -1, walked = 0;
	FILE *f;

	KJ_CHECK(dir != NULL);
	rig_open_cached(&g, NULL, NULL, 2, dir);
	KJ_CHECK_OK(verify(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].compared, 1);
	KJ_CHECK_INT(cache_entries(dir), 4); /* two sets of two cases, in use */
	rig_close(&g);
	KJ_CHECK_INT(cache_entries(dir), 0);

	rig_open_cached(&g, NULL, NULL, 2, dir);
	g.a.run_key_shared = 1;
	KJ_CHECK_OK(verify(&g), &g.err);
	rig_close(&g);
	KJ_CHECK_INT(cache_entries(dir), 4);

	rig_open_cached(&g, NULL, NULL, 2, dir);
	g.o.seed_fixed = 1;
	g.o.seed = 3;
	KJ_CHECK_OK(verify(&g), &g.err);
	rig_close(&g);
	KJ_CHECK_INT(cache_entries(dir), 6);
	snprintf(led, sizeof(led), "%s/.ledger", dir);
	f = fopen(led, "r");
	KJ_CHECK(f != NULL);
	KJ_CHECK(f && fscanf(f, "%lld %lld", &bytes, &walked) == 2);
	KJ_CHECK(bytes > 0 && walked > 0);
	if (f)
		fclose(f);
	free(dir);
}

/* One wrong set of two fails the case, whatever the other said. */
KJ_TEST(pipeline_verify_wrong_output_fails)
{
	struct script c = { .wrong = 1 };
	struct rig g;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(verify(&g), &g.err);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_FAIL);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_ACCURACY);
	KJ_CHECK_INT(kj_verify_exit(&g.res, NULL, 0), 1);
	rig_close(&g);
}

/* Malformed replies of the candidate: each a failure of its own type. */
KJ_TEST(pipeline_verify_malformed_replies_fail_closed)
{
	static const struct {
		struct script sc;
		enum kj_etype type;
	} rows[] = {
		{ { .no_outputs = 1 }, KJ_ET_PROTOCOL },
		{ { .two_outputs = 1 }, KJ_ET_OUTPUT_COUNT },
		{ { .changed_inputs = 1 }, KJ_ET_INPUT_MODIFIED },
		/* A failure the candidate's worker types as the judge's is
		 * still the candidate's, never a pass nor a judge error. */
		{ { .fail = KJ_ET_JUDGE }, KJ_ET_PROTOCOL },
		{ { .fail = KJ_ET_FORWARD }, KJ_ET_FORWARD },
		{ { .no_load = 1 }, KJ_ET_LOAD },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct rig g;

		rig_open(&g, NULL, &rows[i].sc, 1);
		KJ_CHECK_OK(verify(&g), &g.err);
		if (g.res.cases[0].type != rows[i].type)
			kj_test_fail(__FILE__, __LINE__, "row %zu: %s, not %s", i,
				     kj_etype_name(g.res.cases[0].type), kj_etype_name(rows[i].type));
		KJ_CHECK_INT(kj_verify_exit(&g.res, NULL, 0), 1);
		rig_close(&g);
		}
}

/* A tensor output whose memory file never came: a failure, never a pass
 * (the golden is a real .npy file). */
KJ_TEST(pipeline_verify_missing_output_file_fails)
{
	struct script r = { .npy = 1 }, c = { .tensor_no_fd = 1 };
	struct rig g;

	rig_open(&g, &r, &c, 1);
	KJ_CHECK_OK(verify(&g), &g.err);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_FAIL);
	KJ_CHECK_INT(g.res.cases[0].compared, 0);
	rig_close(&g);
}

/* The machine's, the task's and the judge's failures: exit 2, nothing
 * passed, and the candidate is charged with none of them. */
KJ_TEST(pipeline_verify_failures_not_the_candidates)
{
	struct script spawn = { .start_rc = KJ_ESPAWN }, gone = { .send_rc = KJ_EWORKER };
	struct script empty = { .no_outputs = 1 };
	struct rig g;
	int rc;

	rig_open(&g, NULL, &spawn, 1);
	KJ_CHECK_OK(verify(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_SPAWN);
	KJ_CHECK(g.res.infra_errors > 0);
	KJ_CHECK_INT(kj_verify_exit(&g.res, NULL, 0), 2);
	rig_close(&g);

	rig_open(&g, NULL, &gone, 2);
	rc = verify(&g);
	KJ_CHECK_INT(rc, KJ_EWORKER);
	KJ_CHECK_INT(kj_verify_exit(&g.res, NULL, 0), 2);
	KJ_CHECK(kj_case_status(&g.res.cases[0]) != KJ_STATUS_PASS);
	KJ_CHECK(kj_case_status(&g.res.cases[1]) != KJ_STATUS_PASS);
	rig_close(&g);

	rig_open(&g, &empty, NULL, 1);
	KJ_CHECK_OK(verify(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_TASK);
	KJ_CHECK_INT(kj_verify_exit(&g.res, NULL, 0), 2);
	rig_close(&g);
}

/* The gate reads the signed record of a run: a pass lets the candidate be
 * benchmarked, a run with a failed case does not. */
KJ_TEST(pipeline_gate_reads_the_verify_record)
{
	struct script wrong = { .wrong = 1 };
	struct kj_gate_opts go = { 0 };
	struct rig g;
	char why[2000], dev[32];
	const char *path;

	rig_open(&g, NULL, NULL, 2);
	KJ_CHECK_OK(verify(&g), &g.err);
	path = write_record(&g, "pass.json");
	KJ_CHECK_INT(kj_gate_check(path, &g.t, g.a.key, &go, why, sizeof(why), dev, sizeof(dev),
				   &g.err), 0);
	rig_close(&g);

	rig_open(&g, NULL, &wrong, 2);
	KJ_CHECK_OK(verify(&g), &g.err);
	path = write_record(&g, "fail.json");
	KJ_CHECK_INT(kj_gate_check(path, &g.t, g.a.key, &go, why, sizeof(why), dev, sizeof(dev),
				   &g.err), 1);
	rig_close(&g);
}

/* --- benchmark ---------------------------------------------------------------------- */

/* An honest candidate twice as fast: a pass, a speedup of about 2 that the
 * judge's clock agrees with, after the least rounds the stopping rule
 * allows (every sample the same: the interval is met at once); the unseen
 * sets were timed. */
KJ_TEST(pipeline_bench_honest_speedup_and_stopping_rule)
{
	struct script c = { .true_ms = 0.5 };
	struct rig g;
	const struct kj_case *k;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	k = &g.res.cases[0];
	if (kj_case_status(k) != KJ_STATUS_PASS)
		kj_test_fail(__FILE__, __LINE__, "%s: %s", kj_etype_name(k->type), k->message);
	KJ_CHECK(k->timed);
	KJ_CHECK(k->speedup > 1.95 && k->speedup < 2.05);
	KJ_CHECK(k->judge_speedup > 1.95 && k->judge_speedup < 2.05);
	KJ_CHECK(!k->speedup_bounded);
	KJ_CHECK(!k->timing_rechecked);
	KJ_CHECK_INT(k->cand.rounds, 5); /* MIN_ROUNDS */
	KJ_CHECK(k->unseen_ms > 0);
	rig_close(&g);
}

/* Queued rounds where asked (--timed_rounds queued), on both sides, never
 * for a probe or a decoy; by default (auto) only on a GPU's timer, which
 * the scripted sides do not have; and the record says which. */
KJ_TEST(pipeline_bench_queued_rounds_where_asked)
{
	struct script c = { .true_ms = 0.5 };
	int mode;

	for (mode = KJ_ROUNDS_AUTO; mode <= KJ_ROUNDS_SYNCED; mode++) {
		struct rig g;
		const struct kj_case *k;

		rig_open(&g, NULL, &c, 1);
		g.b.rounds = mode;
		KJ_CHECK_OK(bench(&g), &g.err);
		k = &g.res.cases[0];
		KJ_CHECK_INT(kj_case_status(k), KJ_STATUS_PASS);
		KJ_CHECK(k->speedup > 1.95 && k->speedup < 2.05);
		KJ_CHECK_INT(k->rounds_queued, mode == KJ_ROUNDS_QUEUED);
		if (mode == KJ_ROUNDS_QUEUED) {
			KJ_CHECK(g.cand.queued >= k->cand.rounds);
			KJ_CHECK(g.ref.queued >= k->cand.rounds);
		} else {
			KJ_CHECK_INT(g.cand.queued, 0);
			KJ_CHECK_INT(g.ref.queued, 0);
		}
		KJ_CHECK_INT(g.cand.queued_probes + g.ref.queued_probes, 0);
		KJ_CHECK(k->unseen_ms > 0); /* the probes ran, synced */
		rig_close(&g);
	}
	KJ_CHECK_INT(kj_rounds_from_name("queued"), KJ_ROUNDS_QUEUED);
	KJ_CHECK_INT(kj_rounds_from_name("synced"), KJ_ROUNDS_SYNCED);
	KJ_CHECK_INT(kj_rounds_from_name("auto"), KJ_ROUNDS_AUTO);
	KJ_CHECK_INT(kj_rounds_from_name("fast"), -1);
	KJ_CHECK(!strcmp(kj_rounds_name(KJ_ROUNDS_QUEUED), "queued"));
}

/* A shared baseline (eval's) whose harness cost was measured in rounds of
 * the same way is taken as it is; one measured the other way is measured
 * again, with empty calls on the reference's worker, in this case's way. */
KJ_TEST(pipeline_bench_shared_baseline_of_the_other_way)
{
	struct script c = { .true_ms = 0.5 };
	double ref_ms[1] = { 1.0 }, over[1] = { HARNESS_MS }, med[1] = { 1.0 }, q[1];
	int same;

	for (same = 0; same < 2; same++) {
		struct rig g;
		const struct kj_case *k;

		rig_open(&g, NULL, &c, 1);
		g.b.rounds = KJ_ROUNDS_QUEUED;
		q[0] = same ? 1.0 : 0.0;
		g.b.ref_ms = ref_ms;
		g.b.ref_over_ms = over;
		g.b.ref_median_ms = med;
		g.b.ref_queued = q;
		g.b.n_ref_ms = 1;
		KJ_CHECK_OK(bench(&g), &g.err);
		k = &g.res.cases[0];
		if (kj_case_status(k) != KJ_STATUS_PASS)
			kj_test_fail(__FILE__, __LINE__, "%s: %s", kj_etype_name(k->type),
				     k->message);
		KJ_CHECK(k->ref_cached);
		KJ_CHECK(k->speedup > 1.9 && k->speedup < 2.1);
		if (same)
			KJ_CHECK_INT(g.ref.empties, 0);
		else
			KJ_CHECK(g.ref.empties >= k->cand.rounds);
		rig_close(&g);
	}
}

/* Samples that never settle: the rounds go on past the least, until the
 * budget on the judge's clock ends them; --max_repeats ends them first. */
KJ_TEST(pipeline_bench_stopping_rule_budget_and_max_repeats)
{
	struct script noisy = { .noisy = 1 };
	struct rig g;
	double t0;

	rig_open(&g, &noisy, &noisy, 1);
	g.b.budget_s = 1;
	t0 = clock_s;
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_PASS);
	KJ_CHECK(g.res.cases[0].cand.rounds > 5);
	KJ_CHECK(clock_s - t0 >= 1.0 && clock_s - t0 < 1.5);
	rig_close(&g);

	rig_open(&g, &noisy, &noisy, 1);
	g.b.budget_s = 1000;
	g.b.max_repeats = 50; /* 10 calls a round over MIN_ROUNDS */
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].cand.rounds, 5);
	KJ_CHECK_INT(g.res.cases[0].cand.n, 50);
	rig_close(&g);
}

/* Samples that claim half of what the judge's clock saw: TimingMismatch,
 * once the case was timed again and they did it twice. */
KJ_TEST(pipeline_bench_timing_mismatch)
{
	struct script c = { .claim_ms = 0.5 };
	struct rig g;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_TIMING_MISMATCH);
	KJ_CHECK(g.res.cases[0].timing_rechecked);
	KJ_CHECK(g.res.cases[0].check_ratio_cand < g.res.cases[0].check_ratio_min);
	rig_close(&g);
}

/* Samples forged in the second case only: the first case, whose samples
 * agreed with the judge's clock, does not stand either (a forger's cases
 * that pass the cross-check are those where noise made the clock agree). */
KJ_TEST(pipeline_bench_forged_samples_void_every_case)
{
	struct script c = { .claim_ms = 0.5, .claim_case = 2 };
	struct rig g;

	rig_open(&g, NULL, &c, 2);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[1].type, KJ_ET_TIMING_MISMATCH);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_TIMING_MISMATCH);
	KJ_CHECK(!g.res.cases[0].timed);
	KJ_CHECK(g.res.cases[0].message &&
		 strstr(g.res.cases[0].message, "in case 2: they are not taken in any case"));
	rig_close(&g);
	/* Honest samples in both: both pass. */
	c.claim_case = 3;
	rig_open(&g, NULL, &c, 2);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_PASS);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[1]), KJ_STATUS_PASS);
	rig_close(&g);
}

/* Samples 10 % low, inside the cross-check's slack: a pass, but the
 * speedup is never more than the judge's clock allows. */
KJ_TEST(pipeline_bench_judges_clock_bounds_the_speedup)
{
	struct script c = { .claim_ms = 0.9 };
	struct rig g;
	const struct kj_case *k;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	k = &g.res.cases[0];
	KJ_CHECK_INT(kj_case_status(k), KJ_STATUS_PASS);
	KJ_CHECK(k->speedup_bounded);
	/* The interval's upper end, or the judge's median and 5 %. */
	KJ_CHECK(k->speedup <= k->judge_speedup_hi);
	KJ_CHECK(k->speedup <= k->judge_speedup * 1.05 + 1e-12);
	KJ_CHECK(k->speedup == k->judge_speedup_hi || k->speedup == k->judge_speedup * 1.05);
	KJ_CHECK(k->speedup < 1.0 / 0.9 - 0.05);
	rig_close(&g);
}

/* Calls faster than a kernel launch (the device said 0.01 ms), as both the
 * samples and the judge's clock say: TimingImpossible. */
KJ_TEST(pipeline_bench_timing_impossible)
{
	struct script c = { .true_ms = 0.001 };
	struct rig g;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_TIMING_IMPOSSIBLE);
	rig_close(&g);
}

/* Fast only on inputs it has seen: ten times slower on new ones, in both
 * batches of unseen sets: Replay. */
KJ_TEST(pipeline_bench_replay)
{
	struct script c = { .unseen_ms = 10 };
	struct rig g;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_REPLAY);
	KJ_CHECK(g.res.cases[0].unseen_ms == 10);
	rig_close(&g);
}

/* The same replay with its samples of the calls on new inputs forged to
 * say what a call on seen inputs takes: the samples' test sees nothing,
 * the judge's clock (probe rounds against decoy rounds) does. */
KJ_TEST(pipeline_bench_replay_forged_samples)
{
	struct script c = { .unseen_ms = 10, .forge_unseen = 1 };
	struct rig g;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_REPLAY);
	KJ_CHECK(g.res.cases[0].unseen_ms == 1.0); /* the forged samples */
	KJ_CHECK(g.res.cases[0].unseen_excess_ms > 8.9 && g.res.cases[0].unseen_excess_ms < 9.1);
	KJ_CHECK(fabs(g.res.cases[0].unseen_excess_ref_ms) < 1e-6);
	KJ_CHECK(g.res.cases[0].message && strstr(g.res.cases[0].message, "judge's clock"));
	rig_close(&g);
}

/* Honest code slower on new inputs than the bound allows the judge's
 * clock nothing: twice as slow on each (under REPLAY_RATIO) passes, as do
 * decoy rounds that make the same sets. */
KJ_TEST(pipeline_bench_unseen_within_bound_passes)
{
	struct script c = { .unseen_ms = 2 };
	struct rig g;

	rig_open(&g, NULL, &c, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_PASS);
	KJ_CHECK(g.res.cases[0].unseen_excess_ms > 0.9 && g.res.cases[0].unseen_excess_ms < 1.1);
	rig_close(&g);
}

/* The judge's test over recorded figures alone: a call on new inputs as
 * the judge sees it (per call + excess less the reference's where
 * positive) against REPLAY_RATIO times the reference's ratio, beyond a
 * slack of two launches, CHECK_ABS and REPLAY_SLACK of the round's work. */
KJ_TEST(pipeline_replay_judged_over_recorded_figures)
{
	double u, r;

	/* 1 ms calls, 9 ms more on new inputs, 2 ms rounds: trips. */
	KJ_CHECK_INT(kj__replay_judged(9, 0, 1, 1, 2, 0, 0.01, 0, &u), 1);
	KJ_CHECK(fabs(u - 10) < 1e-9);
	/* The reference's own excess comes off; a negative one does not. */
	KJ_CHECK_INT(kj__replay_judged(9, 8, 1, 1, 2, 0, 0.01, 0, &u), 0);
	KJ_CHECK(fabs(u - 2) < 1e-9);
	KJ_CHECK_INT(kj__replay_judged(1.5, -3, 1, 1, 2, 0, 0.01, 0, &u), 0);
	KJ_CHECK(fabs(u - 2.5) < 1e-9);
	/* The slack: 3.0 over a 1 ms call is the bound; the round's 40 ms of
	 * work put 6 ms of slack on it, rounds 7 ms apart 7 ms more. */
	KJ_CHECK_INT(kj__replay_judged(4, 0, 1, 1, 40, 0, 0.01, 0, &u), 0);
	KJ_CHECK_INT(kj__replay_judged(9, 0, 1, 1, 40, 0, 0.01, 0, &u), 1);
	KJ_CHECK_INT(kj__replay_judged(9, 0, 1, 1, 2, 7, 0.01, 0, &u), 0);
	/* The reference's ratio raises the bound. */
	KJ_CHECK_INT(kj__replay_judged(3, 0, 1, 1, 0, 0, 0.01, 0, &u), 1);
	KJ_CHECK_INT(kj__replay_judged(3, 0, 1, 1.5, 0, 0, 0.01, 0, &u), 0);
	/* Nothing to go by: no trip. */
	KJ_CHECK_INT(kj__replay_judged(9, 0, 0, 1, 0, 0, 0.01, 0, &u), 0);
	KJ_CHECK_INT(kj__replay_judged(NAN, 0, 1, 1, 0, 0, 0.01, 0, &u), 0);
	/* The samples' test: an honest 4.5 us call the loaded CPU delayed to
	 * 24 us on every new set is not a replay there (REPLAY_ABS_CPU), but
	 * would be on a GPU; a lookup saving 0.35 ms a call is one on both. */
	KJ_CHECK_INT(kj__replay_tripped(0.024, 0.01, 0.0045, 0.01, 1, 0.001, 0, &r), 0);
	KJ_CHECK_INT(kj__replay_tripped(0.024, 0.01, 0.0045, 0.01, 1, 0.001, 1, &r), 1);
	KJ_CHECK_INT(kj__replay_tripped(0.4, 0.4, 0.02, 0.38, 1, 0.001, 0, &r), 1);
	KJ_CHECK(r > 1.05 && r < 1.06);
}

/* Malformed or wrong timed rounds fail the case, never pass it. */
KJ_TEST(pipeline_bench_bad_rounds_fail_closed)
{
	struct script wrong = { .wrong = 1 }, shortr = { .short_round = 1 };
	struct rig g;

	rig_open(&g, NULL, &wrong, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_TIMED_MISMATCH);
	rig_close(&g);

	rig_open(&g, NULL, &shortr, 1);
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_PROTOCOL);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_FAIL);
	rig_close(&g);
}

/* The floor as a function of recorded figures alone: half the smallest of
 * the probe's launch, the reference's fastest positive sample and a given
 * baseline; or writing the outputs once at half the copy bandwidth, if
 * that takes longer. */
KJ_TEST(pipeline_timing_floor_over_recorded_figures)
{
	const double ref[] = { 0.5, 0.004, 0, 0.2 };

	KJ_CHECK(kj__timing_floor(0.01, NULL, 0, 0, 0, 100) == 0.005);
	KJ_CHECK(kj__timing_floor(0.01, ref, 4, 0, 0, 100) == 0.002);
	KJ_CHECK(kj__timing_floor(0.01, NULL, 0, 0.006, 0, 100) == 0.003);
	/* 1 GB of outputs at 100 GB/s: 0.5 * 10 ms. */
	KJ_CHECK(kj__timing_floor(0.01, ref, 4, 0, 1e9, 100) == 5.0);
}

/* The cross-check over two sides' figures alone: the least ratio allowed
 * is the reference's (at most 1) less the slack (10 % on the CPU, and the
 * larger of three spreads and the resolution, plus 0.02 ms, over the
 * candidate's figure); below it the samples are not the calls' time. */
KJ_TEST(pipeline_cross_check_over_recorded_figures)
{
	struct kj_latency cand, ref;
	double rr, rc, least;

	memset(&cand, 0, sizeof(cand));
	memset(&ref, 0, sizeof(ref));
	ref.judge_ms = 1.0;
	ref.round_sample_ms = 1.2; /* counted as 1 */
	cand.judge_ms = 1.0;
	cand.round_sample_ms = 0.86;
	/* slack = 0.10 + (max(3 * 0.01, 0.005) + 0.02) / 1 = 0.15 */
	KJ_CHECK_INT(kj__cross_check(&cand, &ref, 1, 0.01, 0.005, 0, &rr, &rc, &least), 0);
	KJ_CHECK(rr == 1.0 && rc == 0.86 && least > 0.849 && least < 0.851);
	cand.round_sample_ms = 0.84;
	KJ_CHECK_INT(kj__cross_check(&cand, &ref, 1, 0.01, 0.005, 0, &rr, &rc, &least), 1);
	/* A reference whose samples say less than its rounds lowers the bar. */
	ref.round_sample_ms = 0.9;
	KJ_CHECK_INT(kj__cross_check(&cand, &ref, 1, 0.01, 0.005, 0, &rr, &rc, &least), 0);
	/* No figure of the candidate's: nothing to check. */
	cand.judge_ms = 0;
	KJ_CHECK_INT(kj__cross_check(&cand, &ref, 1, 0.01, 0.005, 0, &rr, &rc, &least), 0);
	/* An honest A/A of level 1's 12_Matmul_with_diagonal_matrices_ on
	 * the H100, synced: samples 0.06161 ms, its rounds 0.6857 ms a call
	 * less the reference worker's harness cost of 0.5549.  The synced
	 * resolution (half that cost) lets it pass; the queued one (a tenth)
	 * would fail it, as the judge did before the two were told apart. */
	ref.judge_ms = 1.0;
	ref.round_sample_ms = 1.0;
	cand.judge_ms = 0.6857 - 0.5549;
	cand.round_sample_ms = 0.06161;
	KJ_CHECK(fabs(kj__judge_resolution(0.5549, 1, 0) - 0.27745) < 1e-9);
	KJ_CHECK(fabs(kj__judge_resolution(0.5549, 1, 1) - 0.05549) < 1e-9);
	KJ_CHECK(fabs(kj__judge_resolution(0.5549, 0, 0) - 0.027745) < 1e-9);
	KJ_CHECK_INT(kj__cross_check(&cand, &ref, 1, 0.001, kj__judge_resolution(0.5549, 1, 0), 1,
				     &rr, &rc, &least), 0);
	KJ_CHECK_INT(kj__cross_check(&cand, &ref, 1, 0.001, kj__judge_resolution(0.5549, 1, 1), 1,
				     &rr, &rc, &least), 1);
}

/* A speedup the judge's clock cut to less than 0.8 of the samples' ratio
 * is timed again; one cut less, or not cut, stands. */
KJ_TEST(pipeline_recheck_of_a_deep_cut_over_figures)
{
	struct kj_case c;

	memset(&c, 0, sizeof(c));
	c.ref.median_ms = 0.0175;
	c.cand.median_ms = 0.0179; /* the samples: 0.978 */
	c.speedup = 0.1351;        /* an A/A the H100 cut */
	c.speedup_bounded = 1;
	KJ_CHECK_INT(kj__recheck_cut(&c), 1);
	c.speedup = 0.619;
	KJ_CHECK_INT(kj__recheck_cut(&c), 1);
	c.speedup = 0.80 * 0.0175 / 0.0179 + 1e-9;
	KJ_CHECK_INT(kj__recheck_cut(&c), 0);
	c.speedup = 0.1351;
	c.speedup_bounded = 0;     /* the samples' own ratio: nothing cut */
	KJ_CHECK_INT(kj__recheck_cut(&c), 0);
	c.speedup_bounded = 1;
	c.cand.median_ms = 0;      /* no samples: nothing to compare */
	KJ_CHECK_INT(kj__recheck_cut(&c), 0);
}

/* The speed of light's decision over figures alone: a median call under
 * half of it is impossible; at half or above, or with no figure (0), not. */
KJ_TEST(pipeline_sol_decision_over_figures)
{
	KJ_CHECK_INT(kj__sol_impossible(0.49, 1.0), 1);
	KJ_CHECK_INT(kj__sol_impossible(0.0, 1.0), 1);
	KJ_CHECK_INT(kj__sol_impossible(0.5, 1.0), 0);
	KJ_CHECK_INT(kj__sol_impossible(0.9, 1.0), 0);
	KJ_CHECK_INT(kj__sol_impossible(3.0, 1.0), 0);
	KJ_CHECK_INT(kj__sol_impossible(0.001, 0), 0);
	KJ_CHECK_INT(kj__sol_impossible(0.001, (double)INFINITY), 0);
}

/* The benchmark given a speed of light: a candidate of 1 ms against one of
 * 4 ms is TimingImpossible with both numbers in its message; against 1.5
 * ms it passes and keeps the figure; a reference (10 ms) faster than the
 * bound of 25 ms leaves the case without a figure, and says why. */
KJ_TEST(pipeline_bench_sol)
{
	struct script ref = { .true_ms = 10 }, cand = { .true_ms = 1 };
	struct rig g;
	json_t *sol;

	sol = json_pack("{s:[{s:f, s:I, s:I, s:f, s:f, s:s}]}", "cases", "sol_ms", 4.0, "flops",
			(json_int_t)4000000, "bytes", (json_int_t)1000, "peak_flops_per_s", 1e9,
			"copy_bytes_per_s", 1e9, "device_name", "cpu");
	KJ_CHECK(sol != NULL);
	rig_open(&g, &ref, &cand, 1);
	g.b.sol = sol;
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(g.res.cases[0].type, KJ_ET_TIMING_IMPOSSIBLE);
	KJ_CHECK(strstr(g.res.cases[0].message, "speed of light of 4 ms") != NULL);
	KJ_CHECK(strstr(g.res.cases[0].message, "took 1 ms") != NULL);
	rig_close(&g);

	json_real_set(json_object_get(json_array_get(json_object_get(sol, "cases"), 0), "sol_ms"),
		      1.5);
	rig_open(&g, &ref, &cand, 1);
	g.b.sol = sol;
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_PASS);
	KJ_CHECK(g.res.cases[0].sol_ms == 1.5);
	rig_close(&g);

	json_real_set(json_object_get(json_array_get(json_object_get(sol, "cases"), 0), "sol_ms"),
		      25.0);
	rig_open(&g, &ref, &cand, 1);
	g.b.sol = sol;
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK_INT(kj_case_status(&g.res.cases[0]), KJ_STATUS_PASS);
	KJ_CHECK(g.res.cases[0].sol_ms == 0);
	KJ_CHECK(json_is_null(json_object_get(g.res.cases[0].sol, "sol_ms")));
	KJ_CHECK(strstr(json_string_value(json_object_get(g.res.cases[0].sol, "why")),
			"reference's median call took 10 ms") != NULL);
	rig_close(&g);

	/* None given: the record says why. */
	rig_open(&g, &ref, &cand, 1);
	g.b.sol_why = "not measured (--no-sol)";
	KJ_CHECK_OK(bench(&g), &g.err);
	KJ_CHECK(g.res.cases[0].sol_ms == 0);
	KJ_CHECK(!strcmp(json_string_value(json_object_get(g.res.cases[0].sol, "why")),
			 "not measured (--no-sol)"));
	rig_close(&g);
	json_decref(sol);
}
