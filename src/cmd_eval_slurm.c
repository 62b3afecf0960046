/*
 * cmd_eval_slurm.c - `kjudge eval --slurm`: an evaluation as one Slurm job
 * array, its shards merged back into the store (docs/slurm.md).
 *
 * The plan (lib/eval/plan.c) cuts the attempts the store does not hold into
 * K shards; it, the batch script and the shards' output live in the shared
 * directory (--slurm-dir, FILE.slurm by default) under plan-ID/:
 *
 *   plan.json        the plan: every attempt's key and shard, the settings,
 *                    the device kind, the batch
 *   job.sh           the batch script (sbatch --array=0-(K-1) job.sh)
 *   jobs             one line per submission: "JOBID INDICES"
 *   shards/          shard-I.db (published by the shard, atomically), and
 *                    shard-I.json (its ending, written last)
 *   logs/            the array tasks' output, shard-I.out
 *
 * With --wait the judge follows the array: every poll it asks squeue which
 * of the plan's tasks are still queued or running, merges every shard store
 * that was published since the last poll, and takes a shard that is no
 * longer queued and left no status for one the machine lost (a node that
 * failed, a preemption, the time limit, a kill): it is submitted again
 * (sbatch --array=I), at most --max-resubmits times, and goes on from what
 * it published last.  A shard cancelled by a person (sacct says CANCELLED,
 * where accounting is on) is not.  The store ends with what a local run
 * would hold.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/audit.h"
#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/store.h"
#include "cli.h"
#include "cmd_eval.h"
#include "base/fs.h"
#include "base/locate.h"
#include "sandbox/program.h"
#include "base/json.h"
#include "base/banned.h"

#define MAX_JOBS 512

static volatile sig_atomic_t follow_stop;

static void on_stop(int sig)
{
	follow_stop = sig;
}

/* The text with its trailing white space cut. */
static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* --- the plan's directory ------------------------------------------------------------------ */

struct follow {
	const struct kj_cmd_eval_ctx *x;
	struct kj_eval_plan plan;
	char dir[PATH_MAX];           /* SLURM_DIR/plan-ID */
	char job_sh[PATH_MAX + 16];
	long long jobs[MAX_JOBS];     /* every submission's job id */
	int n_jobs;
	/* Per shard. */
	long long *job;               /* the job its latest submission is in */
	int *final;                   /* 1: its status says it ended by itself */
	int *exit;                    /* that status's exit */
	int *resubmits, *gone, *gave_up;
	struct stat *merged;          /* the published file last merged */
	int hung;                     /* a Slurm command passed its deadline */
};

static void follow_release(struct follow *f)
{
	kj_eval_plan_release(&f->plan);
	free(f->job);
	free(f->final);
	free(f->exit);
	free(f->resubmits);
	free(f->gone);
	free(f->gave_up);
	free(f->merged);
}

/* --- running Slurm's commands ------------------------------------------------------------ */

/*
 * Run argv (its name looked for on the judge's PATH) with the judge's
 * environment and stdin from /dev/null, through the library's program
 * runner: at most x->slurm_cmd_s seconds, then its process group is
 * killed.  Its stdout goes into out (at most size - 1 bytes kept,
 * NUL-terminated), its stderr into err_out likewise (NULL: onto ours).
 * Returns its exit status (128 + N for signal N), 127 when it is not on
 * PATH or could not be started, -1 on our failure; a command that did not
 * end in time returns -1 with f->hung set after saying so, and following
 * stops: a hung squeue must not hang the judge.
 */
static int run_cmd(struct follow *f, const char *const argv[], char *out, size_t size,
		   char *err_out, size_t err_size)
{
	const struct kj_cmd_eval_ctx *x = f->x;
	const char *v[64 + 256 + 1];
	char prog[PATH_MAX], why[PATH_MAX + 128];
	/* execve's prototype predates const; it changes neither array. */
	union {
		const char *const *c;
		char *const *m;
	} a = { v };
	struct kj__run_req q;
	struct kj__run_res r;
	struct kj_error err;
	int i, rc;

	*out = '\0';
	if (err_out)
		*err_out = '\0';
	if (kj__find_in_path(argv[0], x->path_env, prog, sizeof(prog)) < 0)
		return 127;
	v[0] = prog;
	for (i = 1; argv[i] && i < 64 + 256; i++)
		v[i] = argv[i];
	v[i] = NULL;
	memset(&q, 0, sizeof(q));
	q.argv = a.m;
	q.envp = x->environ;
	q.timeout_s = x->slurm_cmd_s;
	kj__program_init(&r, size - 1, KJ__SINK_HEAD, err_out ? err_size - 1 : 8192,
			 KJ__SINK_HEAD);
	if (kj__program_run(&q, &r, &err) != KJ_OK) {
		kj__program_release(&r);
		kj_cli_error(x->cmd, "%s: %s", argv[0], err.msg);
		return -1;
	}
	memcpy(out, r.out.buf, r.out.len + 1);
	if (err_out)
		memcpy(err_out, r.err.buf, r.err.len + 1);
	else if (r.err.len)
		fputs(r.err.buf, stderr);
	if (r.timed_out) {
		kj__program_outcome(argv[0], q.timeout_s, &r, why, sizeof(why));
		kj_cli_error(x->cmd, "%s; $KJ_SLURM_CMD_S sets the deadline", why);
		f->hung = 1;
		rc = -1;
	} else if (!r.started) {
		rc = 127;
	} else {
		rc = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 128 + WTERMSIG(r.status);
	}
	kj__program_release(&r);
	return rc;
}

static int follow_alloc(struct follow *f)
{
	size_t k = (size_t)f->plan.shards;

	f->job = calloc(k, sizeof(*f->job));
	f->final = calloc(k, sizeof(*f->final));
	f->exit = calloc(k, sizeof(*f->exit));
	f->resubmits = calloc(k, sizeof(*f->resubmits));
	f->gone = calloc(k, sizeof(*f->gone));
	f->gave_up = calloc(k, sizeof(*f->gave_up));
	f->merged = calloc(k, sizeof(*f->merged));
	return f->job && f->final && f->exit && f->resubmits && f->gone && f->gave_up &&
	       f->merged ? 0 : -1;
}

/* The "jobs" file: "JOBID INDICES" per submission (indices "0-3" or "2"). */
static int read_jobs(struct follow *f)
{
	char path[PATH_MAX + 8], line[256];
	FILE *in;

	snprintf(path, sizeof(path), "%s/jobs", f->dir);
	in = fopen(path, "re");
	f->n_jobs = 0;
	if (!in)
		return errno == ENOENT ? 0 : -1;
	while (fgets(line, sizeof(line), in) && f->n_jobs < MAX_JOBS) {
		long long id;
		int a, b, i;

		if (sscanf(line, "%lld %d-%d", &id, &a, &b) == 3) {
			/* the whole array */
		} else if (sscanf(line, "%lld %d", &id, &a) == 2) {
			b = a;
		} else {
			continue;
		}
		f->jobs[f->n_jobs++] = id;
		for (i = a; f->job && i <= b && i < f->plan.shards; i++)
			if (i >= 0)
				f->job[i] = id;
	}
	fclose(in);
	return 0;
}

static int add_job(const struct kj_cli_command *cmd, struct follow *f, long long id,
		   const char *indices)
{
	char path[PATH_MAX + 8];
	struct kj_error err;
	FILE *out;

	snprintf(path, sizeof(path), "%s/jobs", f->dir);
	/* Appended to, not replaced: what is there is checked first (a store
	 * is never written into, a FIFO never opened). */
	if (kj_output_check(path, NULL, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		return -1;
	}
	out = fopen(path, "ae");
	if (!out || fprintf(out, "%lld %s\n", id, indices) < 0 || fflush(out) != 0 ||
	    fsync(fileno(out)) != 0) {
		kj_cli_error(cmd, "'%s': %s", path, strerror(errno));
		if (out)
			fclose(out);
		return -1;
	}
	fclose(out);
	if (f->n_jobs < MAX_JOBS)
		f->jobs[f->n_jobs++] = id;
	return 0;
}

/* sbatch [options] --array=INDICES job.sh: the job's id, or -1 after
 * printing why. */
static long long submit(struct follow *f, const char *indices)
{
	const struct kj_cmd_eval_ctx *x = f->x;
	const char *argv[64 + 256];
	char out[512], array[64], part[256], tlim[128], gres[64];
	int n = 0, i, rc;
	long long id;
	char *end;

	argv[n++] = "sbatch";
	argv[n++] = "--parsable";
	snprintf(array, sizeof(array), "--array=%s", indices);
	argv[n++] = array;
	if (x->partition) {
		snprintf(part, sizeof(part), "--partition=%s", x->partition);
		argv[n++] = part;
	}
	if (x->time_limit) {
		snprintf(tlim, sizeof(tlim), "--time=%s", x->time_limit);
		argv[n++] = tlim;
	}
	{
		int g = x->gpus_per_task >= 0 ? x->gpus_per_task
					      : strcmp(x->s->device, "cpu") == 0 ? 0 : 1;

		if (g > 0) {
			snprintf(gres, sizeof(gres), "--gres=gpu:%d", g);
			argv[n++] = gres;
		}
	}
	for (i = 0; i < x->n_sbatch_args && n < 64 + 250; i++)
		argv[n++] = x->sbatch_args[i];
	argv[n++] = f->job_sh;
	argv[n] = NULL;
	rc = run_cmd(f, argv, out, sizeof(out), NULL, 0);
	chomp(out);
	if (rc != 0 && f->hung)
		return -1;
	if (rc != 0) {
		kj_cli_error(x->cmd, "sbatch %s: %s", indices,
			     rc == 127 ? "not found (is Slurm installed here, and on PATH?)"
				       : "refused the job (its message is above)");
		return -1;
	}
	/* --parsable: "JOBID" or "JOBID;CLUSTER"; a wrapper that prints
	 * sbatch's usual "Submitted batch job JOBID" is read too. */
	errno = 0;
	id = strtoll(out, &end, 10);
	if ((end == out || *end) && strncmp(out, "Submitted batch job ", 20) == 0) {
		errno = 0;
		id = strtoll(out + 20, &end, 10);
	}
	if (end == out || errno || id <= 0 || (*end && *end != ';')) {
		kj_cli_error(x->cmd, "sbatch said '%s', not a job id", out);
		return -1;
	}
	return id;
}

/* The plan's tasks Slurm still holds (queued, running, completing), from
 * squeue: 0 with *tasks filled, or -1 (squeue failed: nothing is decided
 * this poll). */
static int queued(struct follow *f, struct kj_eval_slurm_task **tasks, size_t *n)
{
	char ids[MAX_JOBS * 24], out[1 << 16], errbuf[1024];
	const char *argv[] = { "squeue", "-h", "-r", "-j", ids, "-o", "%i %T", NULL };
	size_t len = 0;
	struct kj_error err;
	int i, rc;

	*tasks = NULL;
	*n = 0;
	if (f->n_jobs == 0)
		return 0;
	for (i = 0; i < f->n_jobs; i++)
		len += (size_t)snprintf(ids + len, sizeof(ids) - len, "%s%lld", i ? "," : "",
					f->jobs[i]);
	rc = run_cmd(f, argv, out, sizeof(out), errbuf, sizeof(errbuf));
	/* squeue -j of jobs it has forgotten (MinJobAge) says "Invalid job
	 * id" and fails: none of them is queued. */
	if (rc != 0 && strstr(errbuf, "Invalid job id"))
		return 0;
	if (rc != 0)
		return -1;
	if (kj_eval_slurm_parse_queue(out, tasks, n, &err) != KJ_OK)
		return -1;
	return 0;
}

static int in_queue(const struct kj_eval_slurm_task *t, size_t n, long long job, int shard)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].job == job && (t[i].task == shard || t[i].task < 0))
			return 1;
	return 0;
}

/* What sacct says of an array task's end ("CANCELLED by 0", "NODE_FAIL"),
 * into buf; "" where accounting is off. */
static void sacct_state(struct follow *f, long long job, int shard, char *buf, size_t size)
{
	char id[64], errbuf[512];
	const char *argv[] = { "sacct", "-n", "-P", "-X", "-j", id, "-o", "State", NULL };

	snprintf(id, sizeof(id), "%lld_%d", job, shard);
	if (run_cmd(f, argv, buf, size, errbuf, sizeof(errbuf)) != 0) {
		*buf = '\0';
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	chomp(buf);
}

/* shard-I.json: 1 with *exit set when the shard ended by itself (of this
 * plan), else 0. */
static int read_status(const struct follow *f, int i, int *exit_code)
{
	char path[PATH_MAX + 32];
	json_error_t je;
	json_t *o;
	const char *plan;
	int ok, oom = 0;

	snprintf(path, sizeof(path), "%s/shards/shard-%d.json", f->dir, i);
	o = kj__json_load_file(path, JSON_REJECT_DUPLICATES, &je, &oom);
	if (!o)
		return 0;
	plan = json_string_value(json_object_get(o, "plan"));
	ok = plan && strcmp(plan, f->plan.id) == 0 &&
	     json_integer_value(json_object_get(o, "shard")) == i &&
	     json_is_integer(json_object_get(o, "exit"));
	if (ok)
		*exit_code = (int)json_integer_value(json_object_get(o, "exit"));
	json_decref(o);
	return ok;
}

/* Merge shard i's published store when it changed since the last merge:
 * 0, or -1 after printing why (the next poll tries again). */
static int merge_shard(struct follow *f, int i)
{
	char path[PATH_MAX + 32], label[64];
	struct kj_error err;
	struct stat st, *m = &f->merged[i];

	snprintf(path, sizeof(path), "%s/shards/shard-%d.db", f->dir, i);
	if (stat(path, &st) != 0)
		return 0;
	if (st.st_ino == m->st_ino && st.st_dev == m->st_dev && st.st_size == m->st_size &&
	    st.st_mtim.tv_sec == m->st_mtim.tv_sec && st.st_mtim.tv_nsec == m->st_mtim.tv_nsec)
		return 0;
	snprintf(label, sizeof(label), "shard %d/%d merged", i, f->plan.shards);
	if (kj__cmd_merge_one(f->x->cmd, f->x->store, path, label,
			      f->x->quiet ? NULL : stdout, &err) < 0)
		return -1;
	*m = st;
	return 0;
}

/* How the store stands on the plan's attempts. */
struct tally {
	size_t done, passed, clean, failed, errors, judge_errors;
};

static void tally(const struct follow *f, struct tally *t)
{
	struct kj_store_state st;
	struct kj_error err;
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < f->plan.n; i++) {
		/* A key that cannot be read counts as not done yet: the next
		 * poll reads it again. */
		if (kj_store_attempt_state(f->x->store, f->plan.keys[i], &st, &err) != KJ_OK)
			continue;
		if (st.found && strcmp(st.state, "done") == 0) {
			const char *s = st.status;

			t->done++;
			if (strcmp(s, "pass") == 0) {
				t->passed++;
				t->clean += st.clean;
			} else if (strcmp(s, "fail") == 0) {
				t->failed++;
			} else {
				t->errors++;
				t->judge_errors += strcmp(s, "judge_error") == 0;
			}
		}
	}
}

/* Follow the plan's jobs to their end.  Returns the exit status. */
static int follow(struct follow *f)
{
	const struct kj_cmd_eval_ctx *x = f->x;
	struct sigaction sa, old_int, old_term;
	double poll = x->poll_s;
	int k = f->plan.shards, i, left, exit_code = KJ_EXIT_OK, squeue_fail = 0, bad_input = 0;
	struct tally t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (;;) {
		struct kj_eval_slurm_task *q = NULL;
		size_t nq = 0;
		int have_queue = queued(f, &q, &nq) == 0;

		if (f->hung)
			break;

		if (!have_queue && ++squeue_fail == 3)
			fprintf(stderr, "kjudge eval: squeue fails; still waiting (the shards' "
				"stores are merged as they are published)\n");
		if (have_queue)
			squeue_fail = 0;
		left = 0;
		for (i = 0; i < k; i++) {
			int code;

			merge_shard(f, i);
			if (f->final[i] || f->gave_up[i])
				continue;
			if (read_status(f, i, &code)) {
				f->final[i] = 1;
				f->exit[i] = code;
				merge_shard(f, i);
				if (code == KJ_EXIT_USAGE) {
					bad_input = 1;
					fprintf(stderr, "kjudge eval: shard %d/%d refused its input "
						"(exit 2): see %s/logs/shard-%d.out\n", i, k,
						kj_cli_shown(f->dir), i);
				} else if (!x->quiet) {
					printf("kjudge eval: shard %d/%d done (exit %d)\n", i, k, code);
				}
				continue;
			}
			if (!have_queue || in_queue(q, nq, f->job[i], i)) {
				f->gone[i] = 0;
				left++;
				continue;
			}
			/* Not queued, no status: seen twice (a status written as it
			 * ended may reach a network file system late), it was lost. */
			if (++f->gone[i] < 2) {
				left++;
				continue;
			}
			{
				char why[256] = "", ids[16];
				long long id;

				sacct_state(f, f->job[i], i, why, sizeof(why));
				if (f->hung)
					break;
				if (strncmp(why, "CANCELLED", 9) == 0) {
					f->gave_up[i] = 1;
					fprintf(stderr, "kjudge eval: shard %d/%d was cancelled (%s): "
						"not submitted again\n", i, k, kj_cli_shown(why));
					continue;
				}
				if (f->resubmits[i] >= x->max_resubmits) {
					f->gave_up[i] = 1;
					fprintf(stderr, "kjudge eval: shard %d/%d ended without finishing "
						"%d times%s%s%s: given up (see %s/logs/shard-%d.out)\n",
						i, k, f->resubmits[i] + 1, *why ? " (" : "",
						kj_cli_shown(why), *why ? ")" : "", kj_cli_shown(f->dir),
						i);
					continue;
				}
				snprintf(ids, sizeof(ids), "%d", i);
				id = submit(f, ids);
				if (f->hung)
					break;
				if (id < 0 || add_job(x->cmd, f, id, ids) < 0) {
					f->gave_up[i] = 1;
					continue;
				}
				f->resubmits[i]++;
				f->job[i] = id;
				f->gone[i] = 0;
				left++;
				fprintf(stderr, "kjudge eval: shard %d/%d ended without finishing%s%s%s; "
					"submitted again as job %lld (%d of at most %d)\n", i, k,
					*why ? " (" : "", kj_cli_shown(why), *why ? ")" : "", id,
					f->resubmits[i],
					x->max_resubmits);
			}
		}
		free(q);
		if (left == 0 || follow_stop || f->hung)
			break;
		{
			struct timespec ts;

			ts.tv_sec = (time_t)poll;
			ts.tv_nsec = (long)((poll - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	for (i = 0; i < k; i++)
		merge_shard(f, i);
	tally(f, &t);
	if (follow_stop) {
		fprintf(stderr, "kjudge eval: stopped following (signal %d); the jobs go on: the "
			"same command with --wait follows them again\n", (int)follow_stop);
		return 128 + (int)follow_stop;
	}
	if (f->hung) {
		fprintf(stderr, "kjudge eval: stopped following; the jobs go on: the same command "
			"with --wait follows them again\n");
		return KJ_EXIT_FAIL;
	}
	printf("kjudge eval: %zu attempts of plan %s: %zu passed (%zu clean), %zu failed, %zu "
	       "judge or task errors, %zu not judged; results in %s (kjudge report %s)\n",
	       f->plan.n, kj_cli_shown(f->plan.id), t.passed, t.clean, t.failed, t.errors,
	       f->plan.n - t.done, kj_cli_shown(x->db_path), kj_cli_shown(x->db_path));
	if (bad_input)
		exit_code = KJ_EXIT_USAGE;
	else if (t.done < f->plan.n || t.judge_errors || x->judge_errors_before)
		exit_code = KJ_EXIT_FAIL;
	return exit_code;
}

/* --- the command ----------------------------------------------------------------------------- */

static int abs_path(const struct kj_cli_command *cmd, const char *p, char out[PATH_MAX])
{
	if (!realpath(p, out)) {
		kj_cli_error(cmd, "'%s': %s", p, strerror(errno));
		return -1;
	}
	return 0;
}

/* A plan under slurm_dir whose jobs Slurm still holds: its directory into
 * dir (1), or none (0). */
static int active_plan(struct follow *probe, const char *slurm_dir, char dir[PATH_MAX])
{
	DIR *d = opendir(slurm_dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && !probe->hung && (e = readdir(d)) != NULL) {
		struct kj_eval_slurm_task *q = NULL;
		size_t nq = 0;

		if (strncmp(e->d_name, "plan-", 5) != 0)
			continue;
		snprintf(probe->dir, sizeof(probe->dir), "%.3800s/%.255s", slurm_dir, e->d_name);
		if (read_jobs(probe) < 0 || probe->n_jobs == 0)
			continue;
		if (queued(probe, &q, &nq) == 0 && nq > 0) {
			snprintf(dir, PATH_MAX, "%s", probe->dir);
			found = 1;
		}
		free(q);
	}
	closedir(d);
	return found;
}

/* The shards' eval flags: the settings as this command has them, so every
 * shard makes the keys the plan holds. */
static int eval_words(const struct kj_cmd_eval_ctx *x, char words[][PATH_MAX], int max)
{
	const struct kj_eval_settings *s = x->s;
	int n = 0, g = x->gpus_per_task;

#define W(...) do { if (n < max) snprintf(words[n++], PATH_MAX, __VA_ARGS__); } while (0)
	W("--device");
	W("%s", s->device);
	W("--timeout");
	W("%.17g", s->judge.timeout_s);
	W("--input_sets");
	W("%d", s->judge.input_sets);
	W("--warmup");
	W("%d", s->bench.warmup);
	W("--repeats");
	W("%d", s->bench.repeats);
	W("--max_repeats");
	W("%d", s->bench.max_repeats);
	W("--time_budget");
	W("%.17g", s->bench.budget_s);
	W("-j");
	W("%d", x->jobs);
	if (s->no_benchmark)
		W("--verify-only");
	if (s->ref_compiled) {
		W("--baseline");
		W("compile");
	}
	if (x->python) {
		W("--python");
		W("%s", x->python);
	}
	if (x->retry)
		W("--retry-failed");
	if (x->no_audit)
		W("--no-audit");
	if (x->audit_only) {
		char list[256] = "";
		size_t len = 0;
		int c;

		for (c = 0; c < KJ_AUDIT_N_; c++)
			if (x->audit_only & (1u << c))
				len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
							len ? "," : "", kj_audit_canary_name(
							(enum kj_audit_canary)c));
		W("--audit-canaries");
		W("%s", list);
	}
	/* The shards' study is this command's: the same directions. */
	if (x->apis) {
		W("--api");
		W("%s", x->apis);
	}
	if (g > 1) {
		char list[256];
		size_t len = 0;
		int i;

		for (i = 0; i < g && len < sizeof(list) - 8; i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? "," : "",
						i);
		W("--gpus");
		W("%s", list);
	}
#undef W
	return n;
}

/* path holding text, with mode: 0, or the exit status after printing why
 * (1 for a full disk, the machine's failure). */
static int write_text(const struct kj_cli_command *cmd, const char *path, const char *text,
		      mode_t mode)
{
	struct kj_error err;

	if (kj_write_file_atomic(path, text, strlen(text), &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		return kj_cli_exit_for(cmd, err.code);
	}
	if (chmod(path, mode) != 0) {
		kj_cli_error(cmd, "'%s': %s", path, strerror(errno));
		return KJ_EXIT_USAGE;
	}
	return 0;
}

int kj__cmd_eval_slurm(const struct kj_cmd_eval_ctx *x)
{
	const struct kj_cli_command *cmd = x->cmd;
	char suite[PATH_MAX], cands[PATH_MAX], db[PATH_MAX], self[PATH_MAX];
	char slurm_dir[PATH_MAX], active[PATH_MAX], path[PATH_MAX + 64], logs[PATH_MAX + 16];
	char shards_dir[PATH_MAX + 16], plan_path[PATH_MAX + 16], indices[32];
	char words[32][PATH_MAX];
	const char *wp[32];
	struct follow f;
	struct kj_error err;
	struct kj_eval_slurm_job job;
	char *script = NULL, *plan_text = NULL;
	json_t *pj = NULL;
	size_t i, n_tasks = 0;
	unsigned char *task_seen = NULL;
	int rc = KJ_EXIT_USAGE, k, n_words;
	long long id;

	memset(&f, 0, sizeof(f));
	f.x = x;
	kj_eval_plan_init(&f.plan);
	if (abs_path(cmd, x->suite, suite) || abs_path(cmd, x->cands, cands) ||
	    abs_path(cmd, x->db_path, db))
		goto out;
	if (!realpath("/proc/self/exe", self)) {
		kj_cli_error(cmd, "/proc/self/exe: %s", strerror(errno));
		goto out;
	}
	/* The shards' logs are named in an #SBATCH line: a path sbatch or
	 * Slurm would read otherwise is refused before anything is made or
	 * submitted (exit 2), the one given and the one it resolves to. */
	if (x->slurm_dir) {
		if (kj_eval_slurm_path_ok(x->slurm_dir, &err) != KJ_OK) {
			kj_cli_error(cmd, "--slurm-dir %s", err.msg);
			goto out;
		}
		if (kj__mkdirs(x->slurm_dir, 0755) < 0 || abs_path(cmd, x->slurm_dir, slurm_dir))
			goto out;
	} else {
		snprintf(slurm_dir, sizeof(slurm_dir), "%.4080s.slurm", db);
	}
	if (kj_eval_slurm_path_ok(slurm_dir, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s%s", x->slurm_dir ? "--slurm-dir " : "--db ", err.msg);
		goto out;
	}
	if (!x->slurm_dir && kj__mkdirs(slurm_dir, 0755) < 0) {
		kj_cli_error(cmd, "'%s': %s", slurm_dir, strerror(errno));
		goto out;
	}

	/* A plan of this store still in the queue: follow it (the same
	 * command run again), never a second one beside it. */
	if (active_plan(&f, slurm_dir, active) || f.hung) {
		/* Whether a plan is queued cannot be told: none is submitted
		 * beside one that may be. */
		if (f.hung) {
			rc = KJ_EXIT_FAIL;
			goto out;
		}
		snprintf(plan_path, sizeof(plan_path), "%s/plan.json", active);
		if (kj_eval_plan_load(plan_path, &f.plan, &err) != KJ_OK) {
			kj_cli_error(cmd, "%s", err.msg);
			goto out;
		}
		if (strcmp(f.plan.settings, x->settings_text) != 0 ||
		    strcmp(f.plan.device, x->s->device) != 0) {
			kj_cli_error(cmd, "plan %s of this store (%s) is still in Slurm's queue "
				     "with other settings; wait for it or scancel its jobs",
				     f.plan.id, active);
			goto out;
		}
		snprintf(f.dir, sizeof(f.dir), "%s", active);
		snprintf(f.job_sh, sizeof(f.job_sh), "%s/job.sh", f.dir);
		if (follow_alloc(&f) < 0 || read_jobs(&f) < 0) {
			kj_cli_error(cmd, "out of memory");
			rc = KJ_EXIT_FAIL;
			goto out;
		}
		if (!x->quiet)
			printf("kjudge eval: plan %s (%zu attempts in %d shards) is in Slurm's queue "
			       "as job %lld: %s\n", kj_cli_shown(f.plan.id), f.plan.n, f.plan.shards,
			       f.jobs[0],
			       x->wait ? "following it" : "follow it with --wait");
		rc = x->wait ? follow(&f) : KJ_EXIT_OK;
		goto out;
	}
	if (x->n_todo == 0) {
		if (!x->quiet)
			printf("kjudge eval: nothing to judge: every attempt is in %s (kjudge report "
			       "%s)\n", kj_cli_shown(x->db_path), kj_cli_shown(x->db_path));
		rc = x->judge_errors_before ? KJ_EXIT_FAIL : KJ_EXIT_OK;
		goto out;
	}

	/* The plan. */
	task_seen = calloc(x->set->n_tasks + 1, 1);
	if (!task_seen) {
		kj_cli_error(cmd, "out of memory");
		rc = KJ_EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < x->n_todo; i++) {
		size_t t = (size_t)x->set->cands[x->todo[i]].task;

		n_tasks += !task_seen[t];
		task_seen[t] = 1;
	}
	k = x->shards > 0 ? x->shards : (int)(n_tasks < 16 ? n_tasks : 16);
	if (kj_eval_plan_make(x->set, x->todo, x->n_todo, x->keys, k, x->settings_text,
			      x->s->device, x->batch_hex, suite, cands, &f.plan, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		rc = KJ_EXIT_FAIL;
		goto out;
	}
	snprintf(f.dir, sizeof(f.dir), "%.4000s/plan-%s", slurm_dir, f.plan.id);
	snprintf(shards_dir, sizeof(shards_dir), "%s/shards", f.dir);
	snprintf(logs, sizeof(logs), "%s/logs", f.dir);
	snprintf(plan_path, sizeof(plan_path), "%s/plan.json", f.dir);
	snprintf(f.job_sh, sizeof(f.job_sh), "%s/job.sh", f.dir);
	if (kj__mkdirs(shards_dir, 0755) < 0 || kj__mkdirs(logs, 0755) < 0) {
		kj_cli_error(cmd, "'%s': %s", f.dir, strerror(errno));
		goto out;
	}
	pj = kj_eval_plan_json(&f.plan);
	plan_text = pj ? kj_json_text(pj, JSON_INDENT(1) | JSON_SORT_KEYS, &err) : NULL;
	n_words = eval_words(x, words, 32);
	for (k = 0; k < n_words; k++)
		wp[k] = words[k];
	job.kjudge = self;
	job.suite = suite;
	job.cands = cands;
	job.plan_path = plan_path;
	job.shards_dir = shards_dir;
	job.logs_dir = logs;
	job.plan_id = f.plan.id;
	job.shards = f.plan.shards;
	job.eval_args = wp;
	job.n_eval_args = n_words;
	script = plan_text ? kj_eval_slurm_script(&job, &err) : NULL;
	if (!plan_text || !script) {
		kj_cli_error(cmd, "%s", plan_text ? err.msg : "out of memory");
		rc = plan_text && err.code != KJ_ENOMEM ? KJ_EXIT_USAGE : KJ_EXIT_FAIL;
		goto out;
	}
	if ((rc = write_text(cmd, plan_path, plan_text, 0644)) ||
	    (rc = write_text(cmd, f.job_sh, script, 0755)))
		goto out;
	rc = KJ_EXIT_USAGE;
	if (follow_alloc(&f) < 0 || read_jobs(&f) < 0) {
		kj_cli_error(cmd, "out of memory");
		rc = KJ_EXIT_FAIL;
		goto out;
	}

	/* One array job, a task per shard. */
	snprintf(indices, sizeof(indices), "0-%d", f.plan.shards - 1);
	id = submit(&f, indices);
	if (id < 0 || add_job(cmd, &f, id, indices) < 0) {
		rc = KJ_EXIT_FAIL;
		goto out;
	}
	for (k = 0; k < f.plan.shards; k++)
		f.job[k] = id;
	if (!x->quiet) {
		printf("kjudge eval: plan %s: %zu attempts of %zu tasks in %d shards (%s)\n",
		       kj_cli_shown(f.plan.id), f.plan.n, n_tasks, f.plan.shards,
		       kj_cli_shown(plan_path));
		printf("kjudge eval: submitted job %lld (array %s)%s\n", id, indices,
		       x->wait ? "; following it" : "");
		if (!x->wait) {
			snprintf(path, sizeof(path), "%s/shard-*.db", shards_dir);
			printf("kjudge eval: follow it with 'squeue -j %lld', or run this command "
			       "again with --wait (it follows the job, submits lost shards again and "
			       "merges them); by hand: kjudge merge %s --db %s\n", id,
			       kj_cli_shown(path), kj_cli_shown(x->db_path));
		}
	}
	fflush(stdout);
	rc = x->wait ? follow(&f) : KJ_EXIT_OK;
out:
	follow_release(&f);
	json_decref(pj);
	free(plan_text);
	free(script);
	free(task_seen);
	return rc;
}
