/*
 * test_serve.c - the engine of kjudge serve (lib/serve/, lib/store/serve.c):
 * the request parser (each field checked, the bad one named), the fair
 * queue (round-robin over models, first come first served within one),
 * a request's settings, the store's requests (a repeated id or attempt is
 * the same evaluation; a killed server's running ones are queued again),
 * the batch runner fed by a next() that has nothing yet, and the seed
 * epochs (the secret bytes change every N requests, the same for one
 * request judged again).
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "kjudge/eval.h"
#include "kjudge/serve.h"
#include "kjudge/store.h"
#include "serve/serve_internal.h"
#include "unit.h"

static int parse(const char *body, struct kj_serve_req **r, size_t *n, struct kj_error *err)
{
	return kj_serve_parse(body, strlen(body), r, n, NULL, err);
}

/* The message a bad body gets, which must name what is wrong. */
static void refused(const char *body, const char *words)
{
	struct kj_serve_req *r = NULL;
	struct kj_error err;
	size_t n = 7;

	KJ_CHECK_INT(parse(body, &r, &n, &err), KJ_EINVAL);
	KJ_CHECK(r == NULL && n == 0);
	if (!strstr(err.msg, words))
		kj_test_fail(__FILE__, __LINE__, "'%s' lacks '%s'", err.msg, words);
}

KJ_TEST(serve_parse_one)
{
	struct kj_serve_req *r;
	struct kj_error err;
	size_t n;

	KJ_CHECK_INT(parse("{\"task\": {\"source\": \"T\", \"cases\": {\"b\": 1, \"a\": [2]}}, "
			   "\"candidate\": {\"source\": \"C\"}, \"mode\": \"verify\", \"model\": "
			   "\"m\", \"attempt\": 3, \"id\": \"x-1\", \"deadline_s\": 2.5, "
			   "\"options\": {\"repeats\": 7}}", &r, &n, &err), KJ_OK);
	KJ_CHECK_INT(n, 1);
	KJ_CHECK_STR(r->task_source, "T");
	KJ_CHECK_STR(r->task_cases, "{\"a\":[2],\"b\":1}");
	KJ_CHECK(r->task_name == NULL);
	KJ_CHECK_STR(r->source, "C");
	KJ_CHECK_STR(r->mode, "verify");
	KJ_CHECK_STR(r->model, "m");
	KJ_CHECK_STR(r->attempt, "3");
	KJ_CHECK_STR(r->id, "x-1");
	KJ_CHECK(r->deadline_s == 2.5);
	KJ_CHECK_STR(r->options, "{\"repeats\":7}");
	kj_serve_reqs_free(r, n);

	/* The defaults: full, model "default", no attempt, no id. */
	KJ_CHECK_INT(parse("{\"task\": {\"name\": \"19_ReLU\"}, \"candidate\": {\"source\": "
			   "\"C\"}}", &r, &n, &err), KJ_OK);
	KJ_CHECK_STR(r->task_name, "19_ReLU");
	KJ_CHECK_STR(r->mode, "full");
	KJ_CHECK_STR(r->model, "default");
	KJ_CHECK(!r->attempt && !r->id && !r->options && r->deadline_s == 0);
	kj_serve_reqs_free(r, n);
}

KJ_TEST(serve_parse_many)
{
	const char *body = "{\"evaluations\": [{\"task\": {\"name\": \"a\"}, \"candidate\": "
			   "{\"source\": \"1\"}}, {\"task\": {\"name\": \"b\"}, \"candidate\": "
			   "{\"source\": \"2\"}, \"model\": \"z\"}]}";
	struct kj_serve_req *r;
	struct kj_error err;
	size_t n;
	int many = 0;

	KJ_CHECK_INT(kj_serve_parse(body, strlen(body), &r, &n, &many, &err), KJ_OK);
	KJ_CHECK_INT(many, 1);
	KJ_CHECK_INT(n, 2);
	KJ_CHECK_STR(r[1].task_name, "b");
	KJ_CHECK_STR(r[1].model, "z");
	kj_serve_reqs_free(r, n);
}

KJ_TEST(serve_parse_refuses_and_names)
{
	refused("{\"task\": ", "body: not JSON");
	refused("[1]", "body: not a JSON object");
	refused("{\"candidate\": {\"source\": \"C\"}}", "task: missing");
	refused("{\"task\": {\"source\": \"T\"}}", "candidate: missing");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {}}", "candidate.source: missing");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": 1}}",
		"candidate.source: not a string");
	refused("{\"task\": {\"source\": \"\"}, \"candidate\": {\"source\": \"C\"}}",
		"task.source: empty");
	refused("{\"task\": {\"name\": \"a\", \"source\": \"T\"}, \"candidate\": {\"source\": "
		"\"C\"}}", "task.name: given with a source");
	refused("{\"task\": {\"source\": \"T\", \"cases\": [1]}, \"candidate\": {\"source\": "
		"\"C\"}}", "task.cases: not an object");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, \"mode\": "
		"\"quick\"}", "mode: not one of full, verify, benchmark");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, \"seed\": 1}",
		"seed: unknown field");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, \"model\": "
		"\"a b\"}", "model: not printable ASCII");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, "
		"\"deadline_s\": -1}", "deadline_s: not a number");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, "
		"\"attempt\": 1.5}", "attempt: not a string or a whole number");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, "
		"\"options\": {\"repeats\": 0}}", "options.repeats: not a whole number");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, "
		"\"options\": {\"seed\": 0}}", "options.seed: unknown field");
	refused("{\"evaluations\": []}", "evaluations: not a non-empty array");
	refused("{\"evaluations\": [{\"task\": {\"name\": \"a\"}, \"candidate\": {\"source\": "
		"\"1\"}}, {\"task\": {\"name\": \"b\"}}]}", "evaluations[1].candidate: missing");
	refused("{\"evaluations\": [1], \"model\": \"m\"}", "evaluations given with other fields");
	refused("{\"task\": {\"source\": \"T\"}, \"candidate\": {\"source\": \"C\"}, \"id\": "
		"\"a/b\"}", "id: not letters, digits and . _ : - only");
}

KJ_TEST(serve_seed_epochs)
{
	unsigned char batch[16], a[16], b[16], c[16], d[16];
	int i;

	for (i = 0; i < 16; i++)
		batch[i] = (unsigned char)(17 * i + 3);
	/* The first epoch (requests 1..3 of 3 a epoch) keeps the batch's bytes. */
	KJ_CHECK_INT(kj__serve_epoch_batch(batch, 3, 1, a), 0);
	KJ_CHECK(memcmp(a, batch, 16) == 0);
	KJ_CHECK_INT(kj__serve_epoch_batch(batch, 3, 3, a), 0);
	KJ_CHECK(memcmp(a, batch, 16) == 0);
	/* The second (4..6) has others, one set for all its requests. */
	KJ_CHECK_INT(kj__serve_epoch_batch(batch, 3, 4, b), 0);
	KJ_CHECK(memcmp(b, batch, 16) != 0);
	KJ_CHECK_INT(kj__serve_epoch_batch(batch, 3, 6, c), 0);
	KJ_CHECK(memcmp(b, c, 16) == 0);
	/* The third differs from both. */
	KJ_CHECK_INT(kj__serve_epoch_batch(batch, 3, 7, d), 0);
	KJ_CHECK(memcmp(d, b, 16) != 0 && memcmp(d, batch, 16) != 0);
	/* 0 a epoch: never rotated. */
	KJ_CHECK_INT(kj__serve_epoch_batch(batch, 0, 1000000, a), 0);
	KJ_CHECK(memcmp(a, batch, 16) == 0);
	/* Another store's batch, another epoch's bytes. */
	batch[0] ^= 1;
	KJ_CHECK_INT(kj__serve_epoch_batch(batch, 3, 4, c), 0);
	KJ_CHECK(memcmp(b, c, 16) != 0);
}

KJ_TEST(serve_settings_of_a_request)
{
	struct kj_eval_settings base, s;

	memset(&base, 0, sizeof(base));
	kj_judge_opts_init(&base.judge);
	kj_bench_opts_init(&base.bench);
	base.bench.max_repeats = 10;
	kj_serve_settings(&base, "verify", "{\"repeats\":70,\"timeout_s\":2}", &s);
	KJ_CHECK_INT(s.no_benchmark, 1);
	KJ_CHECK_INT(s.bench.repeats, 70);
	KJ_CHECK_INT(s.bench.max_repeats, 70);
	KJ_CHECK(s.judge.timeout_s == 2);
	kj_serve_settings(&base, "benchmark", NULL, &s);
	KJ_CHECK_INT(s.no_benchmark, 0);
	KJ_CHECK_INT(s.bench.repeats, base.bench.repeats);
}

KJ_TEST(serve_queue_is_fair_between_models)
{
	struct kj_serve_queue *q = kj_serve_queue_new();
	long long seq, order[8];
	int i;

	KJ_CHECK(q != NULL);
	/* A floods the queue first; B and C come after. */
	for (i = 1; i <= 4; i++)
		KJ_CHECK_INT(kj_serve_queue_push(q, i, "A"), KJ_OK);
	KJ_CHECK_INT(kj_serve_queue_push(q, 5, "B"), KJ_OK);
	KJ_CHECK_INT(kj_serve_queue_push(q, 6, "C"), KJ_OK);
	KJ_CHECK_INT(kj_serve_queue_push(q, 7, "B"), KJ_OK);
	KJ_CHECK_INT(kj_serve_queue_depth(q), 7);
	KJ_CHECK_INT(kj_serve_queue_remove(q, 3), 1);
	KJ_CHECK_INT(kj_serve_queue_remove(q, 3), 0);
	for (i = 0; i < 6; i++)
		KJ_CHECK_INT(kj_serve_queue_pop(q, &order[i]), 1);
	KJ_CHECK_INT(kj_serve_queue_pop(q, &seq), 0);
	KJ_CHECK_INT(kj_serve_queue_depth(q), 0);
	/* A, B, C, A, B, A: no model waits behind another's backlog. */
	KJ_CHECK_INT(order[0], 1);
	KJ_CHECK_INT(order[1], 5);
	KJ_CHECK_INT(order[2], 6);
	KJ_CHECK_INT(order[3], 2);
	KJ_CHECK_INT(order[4], 7);
	KJ_CHECK_INT(order[5], 4);
	kj_serve_queue_free(q);
}

KJ_TEST(serve_store_requests)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	struct kj_store_run run = { .judge_version = "t", .command = "[]", .suite = "",
				    .candidates = "serve", .settings = "{}" };
	struct kj_store_task task = { .key = "tk", .name = "task_1", .path = "task_1_torch.py",
				      .level = -1, .problem = -1, .sha256 = "s", .source = "T",
				      .source_len = 1 };
	struct kj_store_serve_req r = { .id = "one", .model = "m", .attempt = "0", .mode = "full",
					.task_key = "tk", .task_name = "task_1", .source = "C",
					.source_len = 1, .attempt_key = "ak1" };
	char id[64];
	long long run_id;
	json_t *q, *row;
	int changed;

	KJ_CHECK_INT(kj_store_open(kj_test_path("s.db"), KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(kj_store_run_begin(s, &run, NULL, 0, &run_id, &err), KJ_OK);
	KJ_CHECK_INT(kj_store_serve_open(s, run_id, &err), KJ_OK);
	KJ_CHECK_INT(kj_store_serve_submit(s, run_id, &task, &r, id, sizeof(id), &err), KJ_OK);
	KJ_CHECK_STR(id, "");
	/* The same id, then the same attempt under another id: the first. */
	KJ_CHECK_INT(kj_store_serve_submit(s, run_id, &task, &r, id, sizeof(id), &err), KJ_OK);
	KJ_CHECK_STR(id, "one");
	r.id = "two";
	KJ_CHECK_INT(kj_store_serve_submit(s, run_id, NULL, &r, id, sizeof(id), &err), KJ_OK);
	KJ_CHECK_STR(id, "one");
	r.attempt_key = "ak2";
	r.model = "n";
	KJ_CHECK_INT(kj_store_serve_submit(s, run_id, NULL, &r, id, sizeof(id), &err), KJ_OK);
	KJ_CHECK_STR(id, "");
	KJ_CHECK_INT(kj_store_serve_queued(s, &q, &err), KJ_OK);
	KJ_CHECK_INT(json_array_size(q), 2);
	json_decref(q);
	KJ_CHECK_INT(kj_store_serve_get(s, "one", 0, &row, &err), KJ_OK);
	KJ_CHECK_STR(json_string_value(json_object_get(row, "task_source")), "T");
	KJ_CHECK_STR(json_string_value(json_object_get(row, "state")), "queued");
	KJ_CHECK_INT(kj_store_serve_set_state(s, json_integer_value(json_object_get(row, "seq")),
					      "queued", "running", NULL, &changed, &err), KJ_OK);
	KJ_CHECK_INT(changed, 1);
	/* Only from the state named. */
	KJ_CHECK_INT(kj_store_serve_set_state(s, json_integer_value(json_object_get(row, "seq")),
					      "queued", "cancelled", NULL, &changed, &err), KJ_OK);
	KJ_CHECK_INT(changed, 0);
	json_decref(row);
	KJ_CHECK_INT(kj_store_serve_get(s, "nope", 0, &row, &err), KJ_OK);
	KJ_CHECK(row == NULL);
	kj_store_close(s);

	/* A killed server's running request is queued again at the next
	 * start, and its task is in the new run's suite. */
	KJ_CHECK_INT(kj_store_open(kj_test_path("s.db"), 0, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(kj_store_run_begin(s, &run, NULL, 0, &run_id, &err), KJ_OK);
	KJ_CHECK_INT(kj_store_serve_open(s, run_id, &err), KJ_OK);
	KJ_CHECK_INT(kj_store_serve_queued(s, &q, &err), KJ_OK);
	KJ_CHECK_INT(json_array_size(q), 2);
	KJ_CHECK_STR(json_string_value(json_array_get(json_array_get(q, 0), 1)), "m");
	json_decref(q);
	kj_store_close(s);
}

/* The batch runner with a next() that has nothing at first: it waits and
 * asks again, and ends only when next() says none is left. */
struct later {
	int asked, given, judged;
};

static int later_next(void *ctx, size_t *cand)
{
	struct later *l = ctx;

	if (++l->asked < 4)
		return -1;
	if (l->given == 2)
		return 0;
	*cand = (size_t)l->given++;
	return 1;
}

static void later_judge(void *ctx, size_t cand, const char *device, void *warm,
			struct kj_eval_result *r)
{
	(void)warm;
	(void)ctx;
	(void)device;
	r->code = KJ_OK;
	snprintf(r->outcome.status, sizeof(r->outcome.status), "pass");
	r->outcome.speedup = (double)cand;
}

static void later_failed(void *ctx, size_t cand, const char *why)
{
	(void)ctx;
	(void)cand;
	(void)why;
}

static int later_finished(void *ctx, size_t cand, const struct kj_eval_result *r, int status)
{
	struct later *l = ctx;

	(void)cand;
	if (r && r->code == KJ_OK && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		l->judged++;
	return 0;
}

KJ_TEST(serve_pool_waits_for_work)
{
	static const struct kj_eval_pool_ops ops = { .next = later_next, .judge = later_judge,
						     .start_failed = later_failed,
						     .finished = later_finished };
	static const char devs[1][16] = { "cpu" };
	static volatile sig_atomic_t stop;
	struct kj_eval_pool p = { .jobs = 2, .devices = devs, .n_devices = 1, .stop = &stop };
	struct later l = { 0, 0, 0 };
	struct kj_error err;

	KJ_CHECK_INT(kj_eval_pool_run(&p, &ops, &l, &err), KJ_OK);
	KJ_CHECK_INT(l.judged, 2);
	KJ_CHECK(l.asked >= 4);
}
