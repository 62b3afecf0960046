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

static void t_judge(void *ctx, size_t cand, const char *device, struct kj_eval_result *r)
{
	struct t *t = ctx;

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

static const struct kj_eval_pool_ops ops = { t_next, t_judge, t_start_failed, t_finished, NULL, NULL };
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
	struct kj_eval_pool p = { 2, devices, 2, &stop };
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
	struct kj_eval_pool p = { 2, devices, 1, &stop };
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
	struct kj_eval_pool p = { 1, devices, 1, &stop };
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
	struct kj_eval_pool p = { 4, devices, 2, &stop };
	struct kj_error err;
	struct t t;

	t_init(&t, 0);
	KJ_CHECK_OK(kj_eval_pool_run(&p, &ops, &t, &err), &err);
	KJ_CHECK_INT(t.done, 0);
}
