/*
 * test_pool.c - the batch runner (lib/eval/pool.c) with real child
 * processes and a judge callback of the test's own: every attempt judged
 * once, at most `jobs` at once, spread over the devices; the result comes
 * back whole as the child wrote it (a newline in its message included); a
 * child killed before it answered is reported without a result; a batch
 * stopped by finished() or by the stop flag starts nothing more and ends
 * the children still running.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "base/internal.h"
#include "unit.h"

#define N 6

struct t {
	size_t next, n;
	int seen[N];              /* finished() calls per attempt */
	int whole[N];             /* with a result */
	char device[N][16];
	char message[N][1024];
	int status[N];
	int stop_after;           /* finished() stops the batch after this many; 0 never */
	int done;
	size_t killed;            /* the attempt whose child kills itself; N: none */
	size_t sleeper;           /* the attempt whose child sleeps; N: none */
	int start_failed;
	volatile sig_atomic_t *stop;
};

static int t_next(void *ctx, size_t *cand)
{
	struct t *t = ctx;

	if (t->next >= t->n)
		return 0;
	*cand = t->next++;
	return 1;
}

static void t_judge(void *ctx, size_t cand, const char *device, void *warm,
		    struct kj_eval_result *r)
{
	struct t *t = ctx;

	(void)warm;
	if (cand == t->killed)
		raise(SIGKILL);
	if (cand == t->sleeper) {
		struct timespec ts = { 100, 0 };

		nanosleep(&ts, NULL);
	}
	/* Long enough that several run at once. */
	usleep(50 * 1000);
	r->code = KJ_OK;
	snprintf(r->outcome.status, sizeof(r->outcome.status), "pass");
	r->outcome.clean = 1;
	r->outcome.speedup = 1.5 + (double)cand;
	snprintf(r->outcome.message, sizeof(r->outcome.message), "attempt %zu\non %s", cand,
		 device);
}

static void t_start_failed(void *ctx, size_t cand, const char *why)
{
	(void)cand;
	(void)why;
	((struct t *)ctx)->start_failed++;
}

static int t_finished(void *ctx, size_t cand, const struct kj_eval_result *r, int status)
{
	struct t *t = ctx;

	KJ_CHECK(cand < N);
	t->seen[cand]++;
	t->status[cand] = status;
	if (r) {
		t->whole[cand] = 1;
		KJ_CHECK_STR(r->outcome.status, "pass");
		KJ_CHECK(r->outcome.speedup == 1.5 + (double)cand);
		snprintf(t->message[cand], sizeof(t->message[cand]), "%s", r->outcome.message);
	}
	t->done++;
	if (t->stop && t->done == 1)
		*t->stop = 1;
	return t->stop_after && t->done >= t->stop_after;
}

static const struct kj_eval_pool_ops ops = { .next = t_next, .judge = t_judge,
					     .start_failed = t_start_failed,
					     .finished = t_finished };
static const char devices[2][16] = { "cuda:0", "cuda:1" };

static void t_init(struct t *t, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->killed = N;
	t->sleeper = N;
}

KJ_TEST(pool_judges_each_attempt_once_and_hands_the_result_back_whole)
{
	static volatile sig_atomic_t stop;
	struct kj_eval_pool p = { .jobs = 2, .devices = devices, .n_devices = 2, .stop = &stop };
	struct kj_error err;
	struct t t;
	size_t i;
	int on[2] = { 0, 0 };
	char want[64];

	t_init(&t, N);
	t.killed = 4;
	KJ_CHECK_OK(kj_eval_pool_run(&p, &ops, &t, &err), &err);
	KJ_CHECK_INT(t.start_failed, 0);
	for (i = 0; i < N; i++) {
		KJ_CHECK_INT(t.seen[i], 1);
		if (i == 4) {
			/* Killed before it answered: no result, its status says so. */
			KJ_CHECK_INT(t.whole[i], 0);
			KJ_CHECK(WIFSIGNALED(t.status[i]) && WTERMSIG(t.status[i]) == SIGKILL);
			continue;
		}
		KJ_CHECK_INT(t.whole[i], 1);
		KJ_CHECK(WIFEXITED(t.status[i]) && WEXITSTATUS(t.status[i]) == 0);
		/* The message as the child wrote it, its newline too. */
		KJ_CHECK(strstr(t.message[i], "\non cuda:") != NULL);
		snprintf(want, sizeof(want), "attempt %zu\n", i);
		KJ_CHECK(strncmp(t.message[i], want, strlen(want)) == 0);
		on[t.message[i][strlen(t.message[i]) - 1] - '0']++;
	}
	/* Two at once over two devices: each device took its share. */
	KJ_CHECK(on[0] >= 2 && on[1] >= 2);
}

KJ_TEST(pool_stopped_by_finished_starts_nothing_more_and_ends_the_rest)
{
	static volatile sig_atomic_t stop;
	struct kj_eval_pool p = { .jobs = 2, .devices = devices, .n_devices = 1, .stop = &stop };
	struct kj_error err;
	struct t t;
	double t0 = kj__now_s();
	size_t i;
	int seen = 0;

	t_init(&t, N);
	t.sleeper = 1;
	t.stop_after = 1;
	KJ_CHECK_INT(kj_eval_pool_run(&p, &ops, &t, &err), KJ_EINTR);
	/* The sleeping child got SIGTERM, not 100 s. */
	KJ_CHECK(kj__now_s() - t0 < 20);
	for (i = 0; i < N; i++)
		seen += t.seen[i];
	KJ_CHECK_INT(seen, 1);
	KJ_CHECK_INT(t.seen[1], 0);
	KJ_CHECK(t.next <= 3);
	/* Nothing of the batch is left to reap. */
	KJ_CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

KJ_TEST(pool_stop_flag_stops_the_batch)
{
	static volatile sig_atomic_t stop;
	struct kj_eval_pool p = { .jobs = 1, .devices = devices, .n_devices = 1, .stop = &stop };
	struct kj_error err;
	struct t t;

	stop = 0;
	t_init(&t, N);
	t.stop = &stop;
	KJ_CHECK_INT(kj_eval_pool_run(&p, &ops, &t, &err), KJ_EINTR);
	KJ_CHECK_INT(t.done, 1);
	KJ_CHECK_INT((int)t.next, 1);
	/* SIGCHLD is as it was: not blocked. */
	{
		sigset_t now;

		sigprocmask(SIG_BLOCK, NULL, &now);
		KJ_CHECK(!sigismember(&now, SIGCHLD));
	}
}

KJ_TEST(pool_of_nothing_ends_at_once)
{
	static volatile sig_atomic_t stop;
	struct kj_eval_pool p = { .jobs = 4, .devices = devices, .n_devices = 2, .stop = &stop };
	struct kj_error err;
	struct t t;

	t_init(&t, 0);
	KJ_CHECK_OK(kj_eval_pool_run(&p, &ops, &t, &err), &err);
	KJ_CHECK_INT(t.done, 0);
}

/* --- warm children ------------------------------------------------------------------------ */

/* A server's way: no work for a while (the warm children start), then
 * the attempts one at a time with pauses, then no more.  The children
 * note what they did in a file of the test's. */
struct w {
	double t0;
	size_t next, n;
	char log[64];
	int seen[N], warm[N];
	int die_first;            /* the first warm child kills itself unasked */
	double first_s;           /* when the first attempt comes (0: 0.5 s) */
};

static void w_note(const struct w *w, const char *what)
{
	int fd = open(w->log, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd >= 0) {
		dprintf(fd, "%s %d\n", what, (int)getpid());
		close(fd);
	}
}

static int w_next(void *ctx, size_t *cand)
{
	struct w *w = ctx;

	if (w->next >= w->n)
		return 0;
	/* One every 0.4 s after the first 0.5 s: warm children wait. */
	if (kj__now_s() - w->t0 < (w->first_s > 0 ? w->first_s : 0.5) + 0.4 * (double)w->next)
		return -1;
	*cand = w->next++;
	return 1;
}

static void *w_prestart(void *ctx, const char *device)
{
	struct w *w = ctx;
	static char made[48];

	if (w->die_first) {
		char mark[80];
		int fd;

		/* The first child to make the mark dies. */
		snprintf(mark, sizeof(mark), "%s.died", w->log);
		fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			w_note(w, "died");
			raise(SIGKILL);
		}
	}
	w_note(w, "prestart");
	snprintf(made, sizeof(made), "warm on %s", device);
	return made;
}

static void w_more(void *ctx, void *warm, const char *device)
{
	char *made = warm;

	(void)device;
	w_note(ctx, "more");
	snprintf(made + strlen(made), 48 - strlen(made), " +more");
}

static void w_release(void *ctx, void *warm)
{
	KJ_CHECK(warm != NULL);
	w_note(ctx, "release");
}

static void w_judge(void *ctx, size_t cand, const char *device, void *warm,
		    struct kj_eval_result *r)
{
	char want[32];

	snprintf(want, sizeof(want), "warm on %s", device);
	w_note(ctx, warm ? "judged-warm" : "judged-cold");
	if (warm && strstr(warm, " +more")) {
		w_note(ctx, "judged-more");
		*strstr(warm, " +more") = '\0';
	}
	r->code = KJ_OK;
	snprintf(r->outcome.status, sizeof(r->outcome.status), "pass");
	r->outcome.clean = warm && strcmp(warm, want) == 0;
	r->outcome.speedup = (double)cand;
}

static void w_failed(void *ctx, size_t cand, const char *why)
{
	(void)ctx;
	(void)cand;
	(void)why;
	KJ_CHECK(0);
}

static int w_finished(void *ctx, size_t cand, const struct kj_eval_result *r, int status)
{
	struct w *w = ctx;

	(void)status;
	KJ_CHECK(cand < N && r != NULL);
	if (cand < N && r) {
		KJ_CHECK(r->outcome.speedup == (double)cand);
		w->seen[cand]++;
		w->warm[cand] = r->outcome.clean;
	}
	return 0;
}

static int w_count(const char *log, const char *what)
{
	FILE *f = fopen(log, "r");
	char word[32];
	int pid, n = 0;

	while (f && fscanf(f, "%31s %d", word, &pid) == 2)
		n += strcmp(word, what) == 0;
	if (f)
		fclose(f);
	return n;
}

static void w_run(int die_first)
{
	static const struct kj_eval_pool_ops wops = { .next = w_next, .judge = w_judge,
						      .start_failed = w_failed,
						      .finished = w_finished,
						      .prestart = w_prestart,
						      .release_warm = w_release,
						      .prestart_more = w_more };
	static volatile sig_atomic_t stop;
	struct kj_eval_pool p = { .jobs = 2, .devices = devices, .n_devices = 2, .stop = &stop };
	struct kj_error err;
	struct w w;
	size_t i;
	int fd, warm = 0;

	memset(&w, 0, sizeof(w));
	w.t0 = kj__now_s();
	w.n = 4;
	w.die_first = die_first;
	/* The first attempt after 1.6 s: its child waited a second unasked
	 * and made more ahead first (not the later ones, 0.4 s apart). */
	w.first_s = die_first ? 0.5 : 1.6;
	snprintf(w.log, sizeof(w.log), "/tmp/kj-pool-warm-XXXXXX");
	fd = mkstemp(w.log);
	KJ_CHECK(fd >= 0);
	close(fd);
	KJ_CHECK_OK(kj_eval_pool_run(&p, &wops, &w, &err), &err);
	for (i = 0; i < 4; i++) {
		KJ_CHECK_INT(w.seen[i], 1);
		warm += w.warm[i];
	}
	/* Each attempt came after the children had started: every one was
	 * judged with what its child made ahead, on its child's device.
	 * After a warm child died unasked, none is forked for a while: the
	 * other one takes the first attempt, fresh children the rest. */
	KJ_CHECK_INT(warm, die_first ? 1 : 4);
	KJ_CHECK_INT(w_count(w.log, "judged-warm"), die_first ? 1 : 4);
	KJ_CHECK_INT(w_count(w.log, "judged-cold"), die_first ? 3 : 0);
	/* Every child made ahead and not asked was retired, and released
	 * what it made: none is left. */
	KJ_CHECK_INT(w_count(w.log, "prestart"), warm + w_count(w.log, "release"));
	KJ_CHECK(w_count(w.log, "release") >= (die_first ? 0 : 1));
	KJ_CHECK_INT(w_count(w.log, "died"), die_first);
	if (!die_first)
		KJ_CHECK(w_count(w.log, "judged-more") >= 1);
	KJ_CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	unlink(w.log);
	if (die_first) {
		char mark[80];

		snprintf(mark, sizeof(mark), "%s.died", w.log);
		KJ_CHECK(unlink(mark) == 0);
	}
}

KJ_TEST(pool_warm_children_take_the_attempts_and_are_retired_when_no_more_come)
{
	w_run(0);
}

KJ_TEST(pool_warm_child_that_dies_unasked_is_not_reported_and_the_attempts_still_come)
{
	w_run(1);
}
