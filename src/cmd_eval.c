/*
 * cmd_eval.c - `kjudge eval SUITE CANDIDATES --db FILE`: every candidate of
 * a study judged on its task, every verdict in the results store.
 *
 * The command reads its options (eval_options.c), finds the tasks and
 * candidates, and hands the study to the library (lib/eval/study.c): the
 * store, the run's row, the attempts left, and the batch runner
 * (lib/eval/pool.c), which forks one judge per attempt (at most -j at
 * once); each child judges its attempt with the library (lib/eval/judge.c:
 * its workers started in parallel with the others' timed phases, which hold
 * the device's lock) and commits every row itself before it hands the
 * parent its verdict (a struct kj_eval_result, read whole).  What is said
 * of it is eval_progress.c's.  A child dies with the parent
 * (PR_SET_PDEATHSIG) and its workers with it, so a judge killed at any moment leaves attempts
 * either done or 'running'; the same command runs the running ones again
 * and skips the done ones.
 *
 * Exit: 0 every attempt has its verdict, 1 some attempt ended as a judge
 * error (see --retry-failed), 2 bad input (no suite, a store that is not
 * one, a locked store), 128 + N after signal N.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/audit.h"
#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/store.h"
#include "cli.h"
#include "cmd_eval.h"
#include "eval_options.h"
#include "eval_progress.h"
#include "base/fs.h"
#include "base/internal.h"
#include "base/banned.h"

/* --- signals ------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * The parent's signals: SIGINT, SIGTERM and SIGHUP stop the batch (no
 * SA_RESTART: a wait returns EINTR); the batch runner resets them in each
 * child and keeps SIGCHLD to itself.
 */
static void parent_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* A step of the study failed: say why; the exit status (1 for a full
 * disk or no memory, the judge's; else 2). */
static int study_fail(const struct kj_cli_command *cmd, const struct kj_error *err)
{
	kj_cli_error(cmd, "%s", err->msg);
	return kj_cli_exit_for(cmd, err->code);
}

/* --- the command ------------------------------------------------------------------------ */

/* The batch's own directory (staged tasks, the devices' locks) and its
 * golden cache, and each worker's memory for every worker that runs at once
 * (before any child: they inherit the judge's lowered OOM score).  0, or
 * the exit status after saying why. */
static int batch_setup(const struct kj_cli_command *cmd, struct kj_config *cfg,
		       const struct kj_eval_settings *s, const struct kj_eval_set *set, int jobs,
		       int quiet, char work[PATH_MAX], char cache[PATH_MAX], int *have_cache)
{
	int on_cpu = strcmp(s->device, "cpu") == 0;
	int programs = (set->kind->flags & KJ_EVAL_KIND_PROGRAMS) != 0;
	const char *how = "";
	struct kj_error err;
	char why[96];

	snprintf(work, PATH_MAX, "%s/kjudge-eval-XXXXXX", cfg->tmp_dir);
	if (!mkdtemp(work)) {
		/* A full disk is named as everywhere ("no space left on"). */
		kj_error_write(&err, errno, work, "cannot make the batch's directory");
		kj_cli_error(cmd, "%s", err.msg);
		*work = 0;
		return KJ_EXIT_FAIL;
	}
	/* The batch's goldens on huge pages where the shared cache is in
	 * memory anyway (before any thread or child). */
	*have_cache = kj_eval_batch_cache(cfg->cache_dir, work, cache, PATH_MAX, &how);
	/* The speed of light and the device's rates outlive the batch. */
	cfg->sol_cache_dir = cfg->cache_dir;
	if (*have_cache)
		cfg->cache_dir = cache;
	if (!quiet)
		fprintf(stderr, "kjudge eval: golden outputs in %s\n", kj_cli_shown(how));
	snprintf(why, sizeof(why), "-j %d%s", jobs,
		 programs ? ", a program an attempt"
		 : on_cpu ? " on the CPU, one attempt's two at a time" : ", two an attempt");
	kj_cli_mem_budget(cmd, cfg, kj_eval_workers_at_once(jobs, on_cpu, programs), why);
	if (!quiet)
		fprintf(stderr, "kjudge eval: memory: %lld MiB a worker%s, %d at once, %lld MiB kept "
			"for the judge, of %lld MiB available (%s)\n", cfg->mem.limit >> 20,
			cfg->mem.user_limit ? " (KJ_LIMIT_MEM_MB)" : "", cfg->mem.workers,
			cfg->mem.headroom >> 20, cfg->mem.available >> 20, cfg->mem.source);
	return 0;
}

/* --- the tasks' audit ------------------------------------------------------------------ */

/* One task's audit as stderr says it (a quiet run: only a weak task, and
 * one not proven). */
static void audit_said(void *ctx, const struct kj_eval_audit_said *s)
{
	const int *quiet = ctx;
	int strong = !strcmp(s->verdict, "strong");
	const char *first = json_string_value(json_array_get(s->reasons, 0));

	if (*quiet && strong)
		return;
	if (!first)
		first = s->why;
	fprintf(stderr, "kjudge eval: audit: %s: %s%s%s%s\n", kj_cli_shown(s->task),
		strong ? "strong" : !strcmp(s->verdict, "weak") ? "weak" : "not proven",
		s->stored ? " (in the store)" : s->cached ? " (cached)" : "",
		first ? ": " : "", first ? kj_cli_shown(first) : "");
}

/* The audit of the tasks the batch judges (docs/AUDIT.md), before their
 * candidates: with the device and -j of the batch, every canary judged as
 * a verify of two workers.  0, or the exit status (interrupted, or the
 * store could not record it).  An audit not established is said and
 * recorded; it never stops the batch. */
static int audit_tasks(const struct kj_cli_command *cmd, struct kj_config *cfg,
		       const struct kj_eval_settings *s, const struct kj_eval_set *set,
		       struct kj_eval_study *st, const struct eval_opts *o, int quiet)
{
	static const struct kj_eval_audit_hooks hooks = { audit_said };
	struct kj_eval_audit_counts n;
	struct kj_audit_opts ao;
	struct kj_error err;
	int q = quiet;

	memset(&ao, 0, sizeof(ao));
	ao.device = s->device;
	ao.timeout_s = s->judge.timeout_s;
	ao.jobs = o->jobs;
	ao.only = o->audit_only;
	kj_cli_mem_budget(cmd, cfg, 2 * o->jobs, "the audit: two workers for each canary "
			  "judged at once");
	if (kj_eval_study_audit(st, cfg, set, &ao, &hooks, &q, &n, &err) != KJ_OK) {
		kj_cli_error(cmd, "the tasks' audit: %s", err.msg);
		return kj_cli_exit_for(cmd, err.code);
	}
	if (n.tasks)
		fprintf(stderr, "kjudge eval: audit: %zu tasks, %zu weak, %zu not proven; %zu in "
			"the store, %zu canaries judged\n", n.tasks, n.weak, n.not_proven, n.stored,
			n.canaries);
	return 0;
}

/* A shard started again goes on from what it published last (another
 * node's run of it, its local store lost with that node).  0, or the exit
 * status. */
static int shard_resume(const struct kj_cli_command *cmd, struct kj_store *store,
			const char *dir, int i, int quiet)
{
	char pub[PATH_MAX], label[PATH_MAX + 32];
	struct kj_error err;

	kj_eval_shard_clean(dir, i);
	snprintf(pub, sizeof(pub), "%s/shard-%d.db", dir, i);
	snprintf(label, sizeof(label), "resumed from %s", pub);
	if (access(pub, F_OK) != 0 ||
	    kj__cmd_merge_one(cmd, store, pub, label, quiet ? NULL : stderr, &err) >= 0)
		return 0;
	return err.code == KJ_EIO ? KJ_EXIT_FAIL : kj_cli_exit_for(cmd, err.code);
}

/* The shard's status file, or why it could not be written. */
static void shard_status(const struct kj_cli_command *cmd, const struct kj_config *cfg,
			 const struct eval_opts *o, const struct kj_eval_plan *plan,
			 int exit_code, const struct progress *prog)
{
	struct kj_error err;

	if (kj_eval_shard_status(cfg, o->publish_dir, o->shard_i, o->shard_k, plan ? plan->id
				 : NULL, exit_code, prog->total, prog->done, &err) != KJ_OK)
		kj_cli_error(cmd, "%s", err.msg);
}

/* The study judged here: the batch run and its end.  Returns the exit
 * status. */
static int judge_here(const struct kj_cli_command *cmd, struct kj_config *cfg,
		      const struct kj_eval_settings *s, const struct kj_eval_set *set,
		      struct kj_eval_study *st, const struct eval_opts *o,
		      const struct kj_eval_plan *plan, struct progress *prog, const char *settings,
		      int *no_device)
{
	struct kj__eval_batch b = { cmd, set, prog, 0, &stop_signal };
	struct kj_eval_run run;
	char work[PATH_MAX] = "", cache[PATH_MAX];
	struct kj_error err;
	int have_cache = 0, rc;

	if (!prog->quiet)
		fprintf(stderr, "kjudge eval: %s%s%s%zu tasks, %zu attempts (%zu already in %s), "
			"%d at once on %d device%s\n", o->shard_k ? "shard " : "",
			o->shard_k ? o->shard_text : "", o->shard_k ? ": " : "", set->n_tasks,
			prog->total, prog->skipped, kj_cli_shown(o->db_path), o->jobs, o->n_devs,
			o->n_devs == 1 ? "" : "s");
	/* Before batch_setup: the audit's cache is the machine's, not the
	 * batch's own. */
	if (!o->no_audit && cfg->eval_audit && st->n_todo &&
	    (rc = audit_tasks(cmd, cfg, s, set, st, o, prog->quiet)))
		return rc;
	if ((rc = batch_setup(cmd, cfg, s, set, o->jobs, prog->quiet, work, cache, &have_cache)))
		return rc;
	memset(&run, 0, sizeof(run));
	run.cfg = cfg;
	run.s = s;
	run.set = set;
	run.slot.store_path = o->db_path;
	run.slot.work_dir = work;
	run.slot.settings_text = settings;
	run.jobs = o->jobs;
	run.devices = (const char (*)[16])o->devs;
	run.n_devices = o->n_devs;
	run.stop = &stop_signal;
	run.publish_dir = o->publish_dir;
	run.shard_i = o->shard_i;
	prog->tty = isatty(2);
	prog->t0 = kj__now_s();
	parent_signals();
	rc = kj_eval_study_run(st, &run, &kj__eval_hooks, &b, &err);
	rc = kj__eval_batch_end(&b, st, &run, rc, &err);
	*no_device = *run.no_device != 0;
	/* What the shard holds, for the merge; its status only when it ended
	 * by itself and everything is published (else --wait submits it
	 * again, and it goes on from its store: a node without the device
	 * is the machine's loss, like a node that failed). */
	if (o->publish_dir) {
		if (kj_eval_shard_publish(st->store, o->publish_dir, o->shard_i, &err) != KJ_OK) {
			kj_cli_error(cmd, "%s", err.msg);
			rc = stop_signal ? rc : KJ_EXIT_FAIL;
		} else if (!stop_signal && !*run.no_device) {
			shard_status(cmd, cfg, o, plan, rc, prog);
		}
	}
	if (have_cache)
		kj_eval_batch_cache_end(cache);
	kj__rm_rf(work);
	return rc;
}

int kj_cmd_eval(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args args;
	struct kj_config cfg;
	struct kj_eval_settings s;
	struct kj_eval_set set;
	struct kj_eval_study st;
	struct kj_eval_study_opts so;
	struct kj_eval_plan plan;
	struct kj_error err;
	struct progress prog;
	struct eval_opts o;
	const struct kj_cli_value *v;
	char *settings_text = NULL;
	json_t *settings = NULL;
	int rc, exit_code = KJ_EXIT_OK, have_plan = 0, no_device = 0;
	size_t i;

	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0)
		return rc;
	v = args.opt;
	kj_judge_opts_init(&s.judge);
	kj_bench_opts_init(&s.bench);
	s.device = NULL;
	s.python = NULL;
	s.no_benchmark = 0;
	memset(&prog, 0, sizeof(prog));
	kj_eval_plan_init(&plan);
	kj_eval_set_init(&set);
	kj_eval_study_init(&st);
	if ((rc = kj__eval_read_options(cmd, v, &s, &o)) != 0 || (rc = kj_cli_config(cmd, &cfg, o.python))) {
		kj_cli_args_release(&args);
		return rc;
	}
	prog.quiet = o.quiet;
	s.python = cfg.python;
	s.sol_off = cfg.sol_off;
	s.bench.rounds = cfg.timed_rounds;
	if (!v[OPT_BUDGET].count && cfg.time_budget_s > 0)
		s.bench.budget_s = cfg.time_budget_s;
	if (s.bench.max_repeats < s.bench.repeats)
		s.bench.max_repeats = s.bench.repeats;
	if (v[OPT_GPUS].count && s.device && strcmp(s.device, "cpu") == 0) {
		kj_cli_args_release(&args);
		return kj_cli_error(cmd, "--gpus with --device cpu");
	}
	if (!*o.devs[0])
		snprintf(o.devs[0], 16, "%s", kj_eval_default_device());
	if (!s.device)
		s.device = strncmp(o.devs[0], "cuda", 4) == 0 ? "cuda" : "cpu";

	/* The suite and the candidates. */
	rc = kj_eval_discover_suite(args.operands[0], &set, &err);
	if (rc == KJ_OK)
		rc = kj_eval_discover_candidates(args.operands[1], &set, &err);
	if (rc != KJ_OK) {
		exit_code = study_fail(cmd, &err);
		goto out;
	}
	if (!(set.kind->flags & KJ_EVAL_KIND_APIS) && v[OPT_API].count) {
		kj_cli_error(cmd, "--api is for a suite of specs (its translation directions)");
		exit_code = KJ_EXIT_USAGE;
		goto out;
	}
	if ((set.kind->flags & KJ_EVAL_KIND_APIS) &&
	    kj__eval_scope_specs(cmd, &set, v[OPT_API].text, !s.no_benchmark,
			/* A plan for a cluster: its nodes say what they run. */
			o.slurm ? NULL : &cfg, prog.quiet, &exit_code) != 0)
		goto out;
	/* The kind's own benchmark defaults (a spec suite's whole programs: a
	 * few runs each, not a kernel's fifty calls). */
	if (set.kind->bench_warmup && !v[OPT_WARMUP].count)
		s.bench.warmup = set.kind->bench_warmup;
	if (set.kind->bench_repeats && !v[OPT_REPEATS].count)
		s.bench.repeats = set.kind->bench_repeats;
	for (i = 0; i < json_array_size(set.problems); i++) {
		json_t *p = json_array_get(set.problems, i);

		if (!json_is_true(json_object_get(p, "not_run"))) /* said by scope_specs */
			fprintf(stderr, "kjudge eval: skipped %s: %s\n",
				kj_cli_shown(json_string_value(json_object_get(p, "where"))),
				kj_cli_shown(json_string_value(json_object_get(p, "why"))));
	}
	if (set.n_cands == 0) {
		exit_code = kj__eval_no_candidates(cmd, args.operands[0], args.operands[1], &set);
		goto out;
	}
	settings = kj_eval_settings_json(&s);
	if (!settings || !(settings_text = kj_json_text(settings, JSON_COMPACT | JSON_SORT_KEYS,
							 &err))) {
		kj_cli_error(cmd, "out of memory");
		exit_code = KJ_EXIT_FAIL;
		goto out;
	}

	/* A shard of a plan: the plan's settings, device and batch, or
	 * nothing at all. */
	if (v[OPT_PLAN].count) {
		if ((rc = kj_eval_plan_load(v[OPT_PLAN].text, &plan, &err)) != KJ_OK) {
			exit_code = study_fail(cmd, &err);
			goto out;
		}
		have_plan = 1;
		if (plan.shards != o.shard_k || strcmp(plan.settings, settings_text) != 0 ||
		    strcmp(plan.device, s.device) != 0) {
			kj_cli_error(cmd, "'%s': a plan of %d shards on %s with settings %s; this "
				     "command: %d shards on %s with %s", v[OPT_PLAN].text,
				     plan.shards, plan.device, plan.settings, o.shard_k, s.device,
				     settings_text);
			exit_code = KJ_EXIT_USAGE;
			goto out;
		}
	}

	/* The store, the run's row, and what is left to judge. */
	memset(&so, 0, sizeof(so));
	so.argc = argc;
	so.argv = argv;
	so.suite = args.operands[0];
	so.cands = args.operands[1];
	so.settings_text = settings_text;
	so.device = s.device;
	so.gpus = v[OPT_GPUS].count ? v[OPT_GPUS].text : NULL;
	so.shard = o.shard_k ? o.shard_text : NULL;
	so.shard_i = o.shard_i;
	so.shard_k = o.shard_k;
	so.plan = have_plan ? &plan : NULL;
	so.retry = o.retry;
	if ((rc = kj_eval_study_open(&st, o.db_path, o.shard_k ? 60 : 0, &err)) != KJ_OK) {
		exit_code = st.store ? KJ_EXIT_USAGE : study_fail(cmd, &err);
		if (st.store)
			kj_cli_error(cmd, "%s", err.msg);
		goto out;
	}
	if ((o.publish_dir &&
	     (exit_code = shard_resume(cmd, st.store, o.publish_dir, o.shard_i, prog.quiet))) ||
	    (kj_eval_study_begin(&st, &cfg, &set, &so, &err) != KJ_OK &&
	     (exit_code = study_fail(cmd, &err))))
		goto out;
	prog.total = st.counts.total;
	prog.done = st.counts.done;
	prog.passed = st.counts.passed;
	prog.clean = st.counts.clean;
	prog.failed = st.counts.failed;
	prog.errors = st.counts.errors;
	prog.skipped = st.counts.skipped;
	if (o.slurm) {
		exit_code = kj__eval_slurm(cmd, &s, &set, &st, &o, v, &cfg, argc, argv, &so);
		if (exit_code == KJ_EXIT_OK && kj_eval_study_end(&st, &err) != KJ_OK)
			exit_code = KJ_EXIT_FAIL;
		goto out;
	}
	exit_code = judge_here(cmd, &cfg, &s, &set, &st, &o, have_plan ? &plan : NULL, &prog,
			       settings_text, &no_device);
out:
	if (o.publish_dir && exit_code == KJ_EXIT_USAGE && !no_device)
		/* Bad input: final, nothing to submit again. */
		shard_status(cmd, &cfg, &o, have_plan ? &plan : NULL, exit_code, &prog);
	kj_eval_study_close(&st);
	kj_eval_set_release(&set);
	json_decref(settings);
	free(settings_text);
	kj_eval_plan_release(&plan);
	kj_cli_args_release(&args);
	return exit_code;
}
