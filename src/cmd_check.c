/*
 * cmd_check.c - `kjudge check TASK.py KERNEL.py`: one pair judged as eval
 * judges an attempt, on one screen, for the habit KernelBench's
 * run_and_check.py gives its users: the static check, verify, the
 * benchmark against the eager reference and, with --baseline compile,
 * against torch.compile of it, and the kernels-disabled layer that a clean
 * pass needs.
 *
 * The two files are copied into a private directory of the run under the
 * names the verify layout needs ({op}_torch.py, {op}_triton_ascend_impl.py,
 * op the task file's stem when it is a name, else "task"), and the
 * library's verify and benchmark loops run there as `kjudge verify` and
 * `kjudge benchmark` run them (src/torch_run.c); nothing is written beside
 * the user's files.
 *
 * Exit: 0 a clean pass; 1 the kernel failed, or passed without being clean
 * (the layer that failed is printed); 2 bad input or nothing judged (a file
 * that is not there, a task that does not load, the judge's failure).
 * --json prints KernelBench's result fields (times in milliseconds, the
 * unit of KernelBench's timing functions) with kjudge's records.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/anticheat.h"
#include "kjudge/fileio.h"
#include "kjudge/pipeline.h"
#include "kjudge/torch.h"
#include "kjudge/validate.h"
#include "cli.h"
#include "interrupt.h"
#include "base/fs.h"
#include "base/banned.h"

enum {
	OPT_DEVICE,
	OPT_BASELINE,
	OPT_JSON,
	OPT_TIMEOUT,
	OPT_BUDGET,
	OPT_PYTHON,
	OPT_COUNT_
};

static const char *const baselines[] = { "eager", "compile", "both", NULL };

const struct kj_cli_option kj_check_options[] = {
	[OPT_DEVICE] = { .name = "device", .type = KJ_CLI_CHOICE, .metavar = "DEV",
			 .choices = kj_cli_devices, .def = "cuda when there is one, else cpu",
			 .help = "where both sides run" },
	[OPT_BASELINE] = { .name = "baseline", .type = KJ_CLI_CHOICE, .metavar = "B",
			   .choices = baselines, .def = "eager",
			   .help = "the reference the kernel is timed against: eager, "
				   "torch.compile(Model) (on the CPU it needs a C++ compiler), "
				   "or both" },
	[OPT_JSON] = { .name = "json", .type = KJ_CLI_FLAG,
		       .help = "print KernelBench's result fields and kjudge's records as JSON" },
	[OPT_TIMEOUT] = { .name = "timeout", .type = KJ_CLI_NUMBER, .metavar = "S",
			  .unit = "seconds", .min = 0.001, .max = KJ_CLI_TIMEOUT_MAX,
			  .def = "900", .help = "seconds each request to a worker may take" },
	[OPT_BUDGET] = { .name = "time_budget", .type = KJ_CLI_NUMBER, .metavar = "S",
			 .unit = "seconds", .min = 0.001, .max = 86400,
			 .def = "$KJ_TIME_BUDGET, else 10",
			 .help = "time spent timing one case before it stops with what it has" },
	[OPT_PYTHON] = { .name = "python", .type = KJ_CLI_STRING, .metavar = "PATH",
			 .def = "$KJ_PYTHON, then python3",
			 .help = "Python interpreter with torch" },
	[OPT_COUNT_] = { .name = NULL },
};

/* The candidate's name in the private directory: verify's default. */
#define IMPL "triton_ascend_impl"

/* What one benchmark measured. */
struct timed {
	int ran;                  /* the loop ran to its end */
	int n;                    /* cases */
	struct kj_latency *cand, *ref; /* per case; owned */
	double speedup;           /* geometric mean over the cases; NAN: none */
	json_t *rec;              /* the perf JSON */
	char error[600];          /* why it has no figures ("" when it has) */
};

struct check {
	const struct kj_cli_command *cmd;
	const char *task_path, *kernel_path, *device, *python;
	double timeout_s, budget_s;
	int baseline;             /* index into baselines[] */
	char dir[PATH_MAX];       /* the private directory ("" before it exists) */
	char op[128];
	char device_used[32];
	/* the verdict */
	const char *status;       /* "pass", "fail", "error" */
	int clean, compiled;
	char error_type[64], category[16], message[KJ_CASE_MSG_MAX + 1];
	/* the layers */
	int static_ok;
	char static_msg[600];
	int disabled_ok;          /* -1: not run */
	char disabled_msg[600];
	int passed, n_cases;
	json_t *verify_rec;
	struct timed eager, compiled_ref;
};

static void timed_release(struct timed *t)
{
	free(t->cand);
	free(t->ref);
	json_decref(t->rec);
}

/* The task file's stem when it is a name the runner takes, else "task". */
static void op_of(const char *path, char *op, size_t size)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > 3 && !strcmp(base + len - 3, ".py"))
		len -= 3;
	snprintf(op, size, "%.*s", (int)(len < size ? len : size - 1), base);
	/* A stem ending in _torch would make {op}_torch.py ambiguous: never. */
	if (kj_torch_name_problem(op))
		snprintf(op, size, "task");
}

/* Copy the user's file at `from` (a regular file only, read without
 * blocking) to DIR/NAME.  0, or the exit code after printing why. */
static int put_file(struct check *k, const char *from, const char *suffix)
{
	struct kj_error err;
	char to[PATH_MAX + 300];
	size_t len = 0;
	char *text = kj__read_file(from, 64u << 20, &len, &err);

	if (!text) {
		kj_cli_error(k->cmd, "%s", err.msg);
		return kj_cli_exit_for(k->cmd, err.code);
	}
	snprintf(to, sizeof(to), "%s/%s_%s.py", k->dir, k->op, suffix);
	if (kj_write_file_atomic(to, text, len, &err) != KJ_OK) {
		free(text);
		kj_cli_error(k->cmd, "%s", err.msg);
		return kj_cli_exit_for(k->cmd, err.code);
	}
	free(text);
	return 0;
}

/* The static check of the kernel (kjudge validate), as eval's layer. */
static int static_layer(struct check *k)
{
	char path[PATH_MAX + 300];
	struct kj_static_layer s;
	struct kj_error err;

	snprintf(path, sizeof(path), "%s/%s_" IMPL ".py", k->dir, k->op);
	if (kj_static_layer(path, &s, &err) != KJ_OK) {
		kj_cli_error(k->cmd, "%s", err.msg);
		return kj_cli_judge_exit(k->cmd);
	}
	k->static_ok = s.layer.ok;
	snprintf(k->static_msg, sizeof(k->static_msg), "%s", s.layer.msg);
	kj_static_layer_release(&s);
	return 0;
}

/* Open the task in the private directory and start its workers, as verify
 * and benchmark do.  0, or the exit code after printing why (run closed). */
static int open_run(struct check *k, struct kj_cli_torch *run, int disabled, int compiled)
{
	memset(run, 0, sizeof(*run));
	kj_torch_spec_init(&run->spec);
	kj_judge_opts_init(&run->judge);
	kj_result_init(&run->result);
	if (kj_cli_config(k->cmd, &run->cfg, k->python))
		return KJ_EXIT_USAGE;
	run->spec.op_name = k->op;
	run->spec.verify_dir = k->dir;
	run->spec.device = k->device;
	run->spec.kernels_disabled = disabled;
	run->spec.ref_compiled = compiled;
	if (k->timeout_s > 0)
		run->spec.timeout_s = run->judge.timeout_s = k->timeout_s;
	/* One input set shows that the outputs depend on the kernels. */
	if (disabled)
		run->judge.input_sets = 1;
	return kj_cli_torch_open(k->cmd, run);
}

/*
 * text with every path that ends in the private copy's name `name` (a
 * worker's traceback names the copy in its sandbox,
 * /dev/shm/kjudge-.../cand-src/19_ReLU_triton_ascend_impl.py) replaced by
 * the file the user named, into out (cut to size).
 */
static void user_paths(const char *text, const char *name, const char *user, char *out,
		       size_t size)
{
	size_t o = 0, nlen = strlen(name);
	const char *p = text;

	while (*p && o + 1 < size) {
		const char *hit = strstr(p, name), *start;
		size_t keep;

		if (!hit)
			hit = p + strlen(p);
		/* The path's first byte: after a space, a quote or a bracket. */
		for (start = hit; start > p && !strchr(" '\"([\n\t", start[-1]); start--)
			;
		if (!*hit || start[0] != '/')
			start = hit;
		keep = (size_t)(start - p);
		if (keep > size - 1 - o)
			keep = size - 1 - o;
		memcpy(out + o, p, keep);
		o += keep;
		if (!*hit)
			break;
		o += (size_t)snprintf(out + o, size - o, "%s", user);
		if (o >= size)
			o = size - 1;
		p = hit + nlen;
	}
	out[o] = '\0';
}

/* The verdict from the case that charges (NULL: none). */
static void verdict_of(struct check *k, const struct kj_case *c, enum kj_status worst)
{
	enum kj_category cat;

	if (!c)
		return;
	cat = kj_etype_category(c->type);
	k->status = worst == KJ_STATUS_FAIL ? "fail" : "error";
	k->compiled = !(worst == KJ_STATUS_FAIL && cat == KJ_CAT_BUILD) &&
		      worst == KJ_STATUS_FAIL;
	snprintf(k->error_type, sizeof(k->error_type), "%s", kj_etype_name(c->type));
	snprintf(k->category, sizeof(k->category), "%s", kj_category_name(cat));
	{
		char name[200], mid[KJ_CASE_MSG_MAX + 1];

		/* What the worker names is the private copy: the user's files. */
		snprintf(name, sizeof(name), "%s_" IMPL ".py", k->op);
		user_paths(c->message ? c->message : kj_etype_text(c->type), name,
			   k->kernel_path, mid, sizeof(mid));
		snprintf(name, sizeof(name), "%s_torch.py", k->op);
		user_paths(mid, name, k->task_path, k->message, sizeof(k->message));
	}
}

/* A benchmark on the open run: its figures into t, its verdict into k
 * (a case that did not pass is the candidate's failure, or for the
 * compiled baseline the baseline's when the task is charged).  0, or the
 * exit code. */
static int bench(struct check *k, struct kj_cli_torch *run, struct timed *t, int baseline_only)
{
	struct kj_bench_opts b;
	const struct kj_case *first;
	enum kj_status worst;
	double log_sum = 0;
	int rc, i, n_sp = 0;

	kj_bench_opts_init(&b);
	b.budget_s = k->budget_s > 0 ? k->budget_s
		     : run->cfg.time_budget_s > 0 ? run->cfg.time_budget_s : b.budget_s;
	b.rounds = run->cfg.timed_rounds;
	kj_result_release(&run->result);
	kj_result_init(&run->result);
	rc = kj_benchmark(&run->task, &run->attempt, &run->judge, &b, NULL, &run->result,
			  &run->err);
	if (rc == KJ_EINTR)
		return kj_cli_interrupted(k->cmd);
	if (rc != KJ_OK) {
		snprintf(t->error, sizeof(t->error), "%s", run->err.msg);
		if (baseline_only)
			return 0;
		kj_cli_error(k->cmd, "%s", run->err.msg);
		return kj_cli_exit_for(k->cmd, rc);
	}
	t->rec = kj_perf_json(&run->task, &run->attempt, &run->result, &run->err);
	t->n = run->result.n_cases;
	t->cand = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(*t->cand));
	t->ref = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(*t->ref));
	if (!t->rec || !t->cand || !t->ref) {
		kj_cli_error(k->cmd, "out of memory");
		return kj_cli_judge_exit(k->cmd);
	}
	t->ran = 1;
	for (i = 0; i < t->n; i++) {
		const struct kj_case *c = &run->result.cases[i];

		if (c->timed) {
			t->cand[i] = c->cand;
			t->ref[i] = c->ref;
		}
		if (kj_case_status(c) == KJ_STATUS_PASS && c->timed && c->speedup > 0 &&
		    isfinite(c->speedup)) {
			log_sum += log(c->speedup);
			n_sp++;
		}
	}
	t->speedup = n_sp == t->n && n_sp > 0 ? exp(log_sum / n_sp) : (double)NAN;
	first = kj_result_first(&run->result, &worst);
	if (first && baseline_only && worst != KJ_STATUS_FAIL) {
		/* The compiled reference failed (no C++ compiler, a model
		 * torch.compile cannot trace): the baseline has no figure;
		 * the kernel's verdict stands. */
		snprintf(t->error, sizeof(t->error), "%s: %.500s", kj_etype_name(first->type),
			 first->message ? first->message : kj_etype_text(first->type));
		t->speedup = (double)NAN;
		return 0;
	}
	verdict_of(k, first, worst);
	return 0;
}

/* verify, then the benchmark against the eager reference. */
static int main_phase(struct check *k)
{
	struct kj_cli_torch run;
	const struct kj_case *first;
	enum kj_status worst;
	int rc = open_run(k, &run, 0, 0);

	if (rc)
		return rc;
	snprintf(k->device_used, sizeof(k->device_used), "%s", run.task.device);
	rc = kj_verify(&run.task, &run.attempt, &run.judge, NULL, &run.result, &run.err);
	if (rc == KJ_EINTR)
		return kj_cli_torch_close(&run, kj_cli_interrupted(k->cmd));
	if (rc != KJ_OK) {
		kj_cli_error(k->cmd, "%s", run.err.msg);
		return kj_cli_torch_close(&run, kj_cli_exit_for(k->cmd, rc));
	}
	k->verify_rec = kj_verify_json(&run.task, &run.attempt, &run.result, &run.err);
	if (!k->verify_rec) {
		kj_cli_error(k->cmd, "%s", run.err.msg);
		return kj_cli_torch_close(&run, kj_cli_judge_exit(k->cmd));
	}
	k->n_cases = run.result.n_cases;
	kj_result_counts(&run.result, &k->passed, NULL, NULL, NULL);
	first = kj_result_first(&run.result, &worst);
	verdict_of(k, first, worst);
	if (!first && k->n_cases > 0 && k->baseline != 1)
		rc = bench(k, &run, &k->eager, 0);
	return kj_cli_torch_close(&run, rc);
}

/* The kernel layer: with its Triton launches made no-ops, it must fail. */
static int disabled_layer(struct check *k)
{
	struct kj_cli_torch run;
	const struct kj_case *first;
	enum kj_status worst;
	int rc = open_run(k, &run, 1, 0);

	k->disabled_ok = 0;
	if (rc) {
		snprintf(k->disabled_msg, sizeof(k->disabled_msg), "the layer could not run "
			 "(above)");
		return rc == KJ_EXIT_USAGE ? 0 : rc;
	}
	rc = kj_verify(&run.task, &run.attempt, &run.judge, NULL, &run.result, &run.err);
	if (rc == KJ_EINTR)
		return kj_cli_torch_close(&run, kj_cli_interrupted(k->cmd));
	first = rc == KJ_OK ? kj_result_first(&run.result, &worst) : NULL;
	if (rc != KJ_OK)
		snprintf(k->disabled_msg, sizeof(k->disabled_msg), "the layer could not run: "
			 "%.500s", run.err.msg);
	else if (!first)
		snprintf(k->disabled_msg, sizeof(k->disabled_msg), "with its kernels disabled it "
			 "still passed all %d cases: its kernels do not do the work",
			 run.result.n_cases);
	else if (worst != KJ_STATUS_FAIL)
		snprintf(k->disabled_msg, sizeof(k->disabled_msg), "the layer could not decide: "
			 "with its kernels disabled a case ended as %s", kj_status_name(worst));
	else {
		k->disabled_ok = 1;
		snprintf(k->disabled_msg, sizeof(k->disabled_msg), "with its kernels disabled it "
			 "failed (%s), as it must", kj_etype_name(first->type));
	}
	return kj_cli_torch_close(&run, 0);
}

/* The benchmark against torch.compile of the reference. */
static int compile_phase(struct check *k)
{
	struct kj_cli_torch run;
	int rc = open_run(k, &run, 0, 1);

	if (rc) {
		snprintf(k->compiled_ref.error, sizeof(k->compiled_ref.error), "the run could not "
			 "start (above)");
		return rc == KJ_EXIT_USAGE ? 0 : rc;
	}
	rc = bench(k, &run, &k->compiled_ref, 1);
	return kj_cli_torch_close(&run, rc);
}

/* A figure with three significant digits, or "-". */
static const char *fig(double v, char *buf, size_t size)
{
	if (!isfinite(v) || v <= 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3g", v);
	return buf;
}

/* The KernelBench-named figures of one side of a benchmark into o. */
static int put_stats(json_t *o, const char *key, const char *stats_key,
		     const struct kj_latency *l, int n)
{
	double runtime = -1.0;
	json_t *st = kj_kb_runtime_stats(l, l ? (size_t)n : 0, &runtime);

	return !st || json_object_set_new(o, stats_key, st) ||
	       json_object_set_new(o, key, json_real(runtime));
}

static json_t *num_or_null(double v)
{
	return isfinite(v) && v > 0 ? json_real(v) : json_null();
}

/* KernelBench's result fields, kjudge's verdict and records. */
static json_t *result_json(const struct check *k)
{
	const struct timed *cand = k->eager.ran ? &k->eager : &k->compiled_ref;
	const struct timed *ref = k->eager.ran ? &k->eager : &k->compiled_ref;
	json_t *o, *md, *kj;
	int bad;

	md = json_pack("{s:s, s:s}", "device", k->device_used, "hardware", k->device_used);
	if (md && !strcmp(k->status, "fail")) {
		const char *nk = !strcmp(k->category, "build") ? "compilation_error_name"
				 : !strcmp(k->category, "accuracy") ? "correctness_issue_name"
				 : "runtime_error_name";
		const char *mk = !strcmp(k->category, "build") ? "compilation_error"
				 : !strcmp(k->category, "accuracy") ? "correctness_issue"
				 : "runtime_error";

		if (json_object_set_new(md, nk, json_string(k->error_type)) ||
		    json_object_set_new(md, mk, json_string(k->message))) {
			json_decref(md);
			md = NULL;
		}
	}
	kj = json_pack("{s:s, s:s?, s:s?, s:s?, s:s, s:{s:b, s:s}, s:{s:o, s:s}, s:O?, s:O?, s:O?, "
		       "s:s?}",
		       "status", k->status, "error_type", k->error_type[0] ? k->error_type : NULL,
		       "category", k->category[0] ? k->category : NULL,
		       "message", k->message[0] ? k->message : NULL, "baseline",
		       baselines[k->baseline], "static", "ok", k->static_ok, "message",
		       k->static_msg, "disabled", "ok",
		       k->disabled_ok < 0 ? json_null() : json_boolean(k->disabled_ok), "message",
		       k->disabled_msg, "verify", k->verify_rec, "benchmark", k->eager.rec,
		       "benchmark_compile", k->compiled_ref.rec, "compile_error",
		       k->compiled_ref.error[0] ? k->compiled_ref.error : NULL);
	o = json_pack("{s:b, s:b, s:o, s:b, s:o, s:o}", "compiled", k->compiled, "correctness",
		      k->clean, "metadata", md, "clean", k->clean, "speedup",
		      num_or_null(k->eager.speedup), "speedup_compile",
		      num_or_null(k->compiled_ref.speedup));
	if (!o || !kj) {
		json_decref(o);
		json_decref(kj);
		return NULL;
	}
	bad = json_object_set_new(o, "kjudge", kj) ||
	      put_stats(o, "runtime", "runtime_stats", cand->ran ? cand->cand : NULL, cand->n) ||
	      put_stats(o, "ref_runtime", "ref_runtime_stats", ref->ran ? ref->ref : NULL,
			ref->n) ||
	      (k->compiled_ref.ran &&
	       put_stats(o, "ref_compile_runtime", "ref_compile_runtime_stats",
			 k->compiled_ref.ref, k->compiled_ref.n));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The geometric mean of the medians of one side, for the screen. */
static double median_of(const struct kj_latency *l, int n)
{
	double runtime = -1.0;
	json_t *st = l ? kj_kb_runtime_stats(l, (size_t)n, &runtime) : NULL;

	json_decref(st);
	return runtime;
}

static void print_screen(const struct check *k)
{
	char a[32], b[32], c[32];
	const char *name = kj_cli_shown(k->task_path);

	if (!strcmp(k->status, "pass"))
		printf("%s: pass, %s (device %s)\n", name, k->clean ? "clean" : "not clean",
		       kj_cli_shown(k->device_used));
	else
		printf("%s: %s, %s (device %s)\n", name, k->status, kj_cli_shown(k->error_type),
		       kj_cli_shown(k->device_used));
	if (strcmp(k->status, "pass") != 0 || !k->clean) {
		const char *why = strcmp(k->status, "pass") != 0 ? k->message
				  : !k->static_ok ? k->static_msg : k->disabled_msg;
		char line[400];
		int len = 0;

		while (why[len] && why[len] != '\n' && len < 390)
			len++;
		snprintf(line, sizeof(line), "%.*s", len, why);
		printf("  why: %s\n", kj_cli_shown(line));
	}
	printf("  %-19s%s\n", "static check:", kj_cli_shown(k->static_msg));
	printf("  %-19s%d/%d cases passed\n", "verify:", k->passed, k->n_cases);
	if (k->eager.ran)
		printf("  %-19s%sx (kernel %s ms, reference %s ms, medians)\n", "vs eager:",
		       fig(k->eager.speedup, a, sizeof(a)),
		       fig(median_of(k->eager.cand, k->eager.n), b, sizeof(b)),
		       fig(median_of(k->eager.ref, k->eager.n), c, sizeof(c)));
	if (k->compiled_ref.ran && !k->compiled_ref.error[0])
		printf("  %-19s%sx (kernel %s ms, compiled reference %s ms)\n", "vs torch.compile:",
		       fig(k->compiled_ref.speedup, a, sizeof(a)),
		       fig(median_of(k->compiled_ref.cand, k->compiled_ref.n), b, sizeof(b)),
		       fig(median_of(k->compiled_ref.ref, k->compiled_ref.n), c, sizeof(c)));
	else if (k->compiled_ref.error[0])
		printf("  %-19s- (the compiled reference has no figure: %s)\n", "vs torch.compile:",
		       kj_cli_shown(k->compiled_ref.error));
	if (k->disabled_ok >= 0)
		printf("  %-19s%s\n", "kernels off:", kj_cli_shown(k->disabled_msg));
}

static int judge_pair(struct check *k)
{
	int rc;

	if ((rc = put_file(k, k->task_path, "torch")) || (rc = put_file(k, k->kernel_path, IMPL)))
		return rc;
	if ((rc = static_layer(k)) || (rc = main_phase(k)))
		return rc;
	if (strcmp(k->status, "pass") != 0)
		return 0;
	if (k->baseline != 0 && (rc = compile_phase(k)))
		return rc;
	/* With the compiled baseline alone, a compiled reference that failed
	 * leaves no benchmark at all: nothing was judged of the timing. */
	if (k->baseline == 1 && k->compiled_ref.error[0] && !strcmp(k->status, "pass")) {
		k->status = "error";
		k->compiled = 0;
		snprintf(k->error_type, sizeof(k->error_type), "%s", kj_etype_name(KJ_ET_TASK));
		snprintf(k->category, sizeof(k->category), "task");
		snprintf(k->message, sizeof(k->message), "the compiled reference has no figure: "
			 "%s", k->compiled_ref.error);
	}
	if (strcmp(k->status, "pass") != 0)
		return 0;
	/* After a failed static check the pass cannot be clean: the layer
	 * could only cost time. */
	if (!k->static_ok)
		snprintf(k->disabled_msg, sizeof(k->disabled_msg), "not run: the static check "
			 "failed");
	else if ((rc = disabled_layer(k)))
		return rc;
	k->clean = k->static_ok && k->disabled_ok == 1;
	if (!k->clean) {
		snprintf(k->error_type, sizeof(k->error_type), "%s",
			 kj_etype_name(!k->static_ok ? KJ_ET_STATIC_CHECK : KJ_ET_KERNELS_NOT_USED));
		snprintf(k->category, sizeof(k->category), "%s",
			 kj_category_name(!k->static_ok ? KJ_CAT_STATIC : KJ_CAT_ANTICHEAT));
	}
	return 0;
}

int kj_cmd_check(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args args;
	struct check k;
	struct kj_config cfg;
	const char *tmp;
	int rc, json_out, exit_code;

	memset(&k, 0, sizeof(k));
	k.cmd = cmd;
	k.status = "pass";
	k.compiled = 1;
	k.disabled_ok = -1;
	k.eager.speedup = k.compiled_ref.speedup = (double)NAN;
	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0)
		return rc;
	/* The values point into argv, not into args. */
	k.task_path = args.operands[0];
	k.kernel_path = args.operands[1];
	k.device = args.opt[OPT_DEVICE].count ? args.opt[OPT_DEVICE].text : NULL;
	k.baseline = args.opt[OPT_BASELINE].count ? args.opt[OPT_BASELINE].choice : 0;
	json_out = args.opt[OPT_JSON].count > 0;
	k.timeout_s = args.opt[OPT_TIMEOUT].count ? args.opt[OPT_TIMEOUT].number : 0;
	k.budget_s = args.opt[OPT_BUDGET].count ? args.opt[OPT_BUDGET].number : 0;
	k.python = args.opt[OPT_PYTHON].count ? args.opt[OPT_PYTHON].text : NULL;
	kj_cli_args_release(&args);
	if (!kj__is_file(k.task_path))
		return kj_cli_error(cmd, "'%s': no such task file", k.task_path);
	if (!kj__is_file(k.kernel_path))
		return kj_cli_error(cmd, "'%s': no such kernel file", k.kernel_path);
	op_of(k.task_path, k.op, sizeof(k.op));
	if (kj_cli_config(cmd, &cfg, k.python))
		return KJ_EXIT_USAGE;
	tmp = kj_config_env(&cfg, "TMPDIR");
	snprintf(k.dir, sizeof(k.dir), "%s/kjudge-check-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(k.dir)) {
		kj_cli_error(cmd, "cannot make a directory in '%s': %s", tmp && *tmp ? tmp : "/tmp",
			     strerror(errno));
		return KJ_EXIT_USAGE;
	}
	rc = judge_pair(&k);
	kj__rm_rf(k.dir);
	exit_code = rc;
	if (!rc) {
		if (json_out) {
			json_t *o = result_json(&k);
			struct kj_error err;

			if (!o || kj_json_print(stdout, o, JSON_INDENT(2) |
						JSON_REAL_PRECISION(12), &err) != KJ_OK ||
			    putchar('\n') == EOF) {
				kj_cli_error(cmd, "the result cannot be printed");
				exit_code = kj_cli_judge_exit(cmd);
			}
			json_decref(o);
		} else {
			print_screen(&k);
		}
		if (!exit_code)
			exit_code = !strcmp(k.status, "error") ? KJ_EXIT_USAGE
				    : !strcmp(k.status, "pass") && k.clean ? KJ_EXIT_OK
				    : KJ_EXIT_FAIL;
	}
	json_decref(k.verify_rec);
	timed_release(&k.eager);
	timed_release(&k.compiled_ref);
	if (fflush(stdout) != 0) {
		kj_cli_error(cmd, "cannot write to standard output");
		exit_code = KJ_EXIT_USAGE;
	}
	return exit_code;
}
