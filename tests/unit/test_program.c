/*
 * test_program.c - the program runner (lib/sandbox/program.c) as a plain
 * process: a program past its deadline is killed with its group and
 * reported, one that prints past a limited stream is stopped and its
 * output cut, one that cannot be executed is told from one that ran, and
 * the one-line outcome says which.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/program.h"
#include "base/internal.h"
#include "unit.h"

/* Run /bin/sh -c script with the given deadline and captures. */
static int run_sh(const char *script, double timeout_s, size_t out_cap, enum kj__sink_mode mode,
		  struct kj__run_res *r)
{
	char sh[] = "/bin/sh", dash_c[] = "-c", *text = strdup(script);
	char *argv[] = { sh, dash_c, text, NULL };
	struct kj__run_req q;
	struct kj_error err;
	int rc;

	memset(&q, 0, sizeof(q));
	q.argv = argv;
	q.timeout_s = timeout_s;
	kj__program_init(r, out_cap, mode, 4096, KJ__SINK_TAIL);
	rc = kj__program_run(&q, r, &err);
	free(text);
	return rc;
}

KJ_TEST(program_past_its_deadline_is_killed_and_reported)
{
	/* The shell's child holds the pipes too: the whole group goes. */
	struct kj__run_res r;
	char line[256];
	double t0 = kj__now_s();

	KJ_CHECK_INT(run_sh("sleep 1000 & sleep 1000; echo never", 0.3, 4096, KJ__SINK_HEAD, &r),
		     KJ_OK);
	KJ_CHECK(kj__now_s() - t0 < 5);
	KJ_CHECK(r.started && r.timed_out);
	KJ_CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
	KJ_CHECK_STR(r.out.buf, "");
	KJ_CHECK_INT(kj__program_outcome("sleeper", 0.3, &r, line, sizeof(line)), -1);
	KJ_CHECK_STR(line, "sleeper did not end within 0.3 s (killed)");
	kj__program_release(&r);
}

KJ_TEST(program_printing_past_a_limit_is_stopped_and_cut)
{
	/* It would print for ever: the limit, not the deadline, stops it. */
	struct kj__run_res r;
	char line[256];
	double t0 = kj__now_s();

	KJ_CHECK_INT(run_sh("while :; do echo xxxxxxxxxxxxxxx; done", 20, 1000, KJ__SINK_LIMIT, &r),
		     KJ_OK);
	KJ_CHECK(kj__now_s() - t0 < 10);
	KJ_CHECK(r.started && !r.timed_out && r.out.over);
	KJ_CHECK_INT((long long)r.out.len, 1000);
	KJ_CHECK_INT((long long)strlen(r.out.buf), 1000);
	KJ_CHECK(r.out.total >= 1000);
	KJ_CHECK_INT(kj__program_outcome("flood", 20, &r, line, sizeof(line)), -1);
	KJ_CHECK_STR(line, "flood printed more than 1000 bytes (stopped)");
	kj__program_release(&r);
}

KJ_TEST(program_output_past_a_kept_head_or_tail_is_cut_not_stopped)
{
	struct kj__run_res r;

	KJ_CHECK_INT(run_sh("printf 0123456789", 20, 4, KJ__SINK_HEAD, &r), KJ_OK);
	KJ_CHECK(!r.out.over && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	KJ_CHECK_STR(r.out.buf, "0123");
	KJ_CHECK_INT(r.out.total, 10);
	kj__program_release(&r);
	KJ_CHECK_INT(run_sh("printf 0123456789", 20, 4, KJ__SINK_TAIL, &r), KJ_OK);
	KJ_CHECK_STR(r.out.buf, "6789");
	kj__program_release(&r);
}

KJ_TEST(program_that_cannot_be_executed_is_an_exec_error)
{
	char prog[] = "/nonexistent/kjudge-test";
	char *argv[] = { prog, NULL };
	struct kj__run_req q;
	struct kj__run_res r;
	struct kj_error err;
	char line[256];

	memset(&q, 0, sizeof(q));
	q.argv = argv;
	q.timeout_s = 10;
	kj__program_init(&r, 64, KJ__SINK_HEAD, 64, KJ__SINK_HEAD);
	KJ_CHECK_INT(kj__program_run(&q, &r, &err), KJ_OK);
	KJ_CHECK(!r.started);
	KJ_CHECK_INT(r.exec_errno, ENOENT);
	KJ_CHECK_INT(kj__program_outcome("kjudge-test", 10, &r, line, sizeof(line)), -1);
	KJ_CHECK_STR(line, "cannot run kjudge-test: No such file or directory");
	kj__program_release(&r);
}

KJ_TEST(program_exit_status_is_its_outcome)
{
	struct kj__run_res r;
	char line[256];

	KJ_CHECK_INT(run_sh("echo out; echo err >&2; exit 3", 10, 64, KJ__SINK_HEAD, &r), KJ_OK);
	KJ_CHECK_STR(r.out.buf, "out\n");
	KJ_CHECK_STR(r.err.buf, "err\n");
	KJ_CHECK_INT(kj__program_outcome("sh", 10, &r, line, sizeof(line)), -1);
	KJ_CHECK_STR(line, "sh exited with status 3");
	kj__program_release(&r);
	KJ_CHECK_INT(run_sh("exit 0", 10, 64, KJ__SINK_HEAD, &r), KJ_OK);
	KJ_CHECK_INT(kj__program_outcome("sh", 10, &r, line, sizeof(line)), 0);
	kj__program_release(&r);
}

KJ_TEST(program_environment_has_nvlink_multicast_off_whatever_it_was_given)
{
	/* The caller's environment turns it on; the spawn core's fixed
	 * settings win, and the caller's other variables stay. */
	char sh[] = "/bin/sh", dash_c[] = "-c";
	char script[] = "echo \"$NCCL_NVLS_ENABLE $TORCH_SYMM_MEM_DISABLE_MULTICAST "
			"$NVSHMEM_DISABLE_NVLS $KEPT\"; env | grep -c '^NCCL_NVLS_ENABLE='";
	char e1[] = "NCCL_NVLS_ENABLE=1", e2[] = "KEPT=yes", e3[] = "NVSHMEM_DISABLE_NVLS=0";
	char *argv[] = { sh, dash_c, script, NULL };
	char *envp[] = { e1, e2, e3, NULL };
	struct kj__run_req q;
	struct kj__run_res r;
	struct kj_error err;

	memset(&q, 0, sizeof(q));
	q.argv = argv;
	q.envp = envp;
	q.timeout_s = 10;
	kj__program_init(&r, 4096, KJ__SINK_HEAD, 4096, KJ__SINK_TAIL);
	KJ_CHECK_OK(kj__program_run(&q, &r, &err), &err);
	KJ_CHECK(r.started && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	KJ_CHECK_STR(r.out.buf, "0 1 1 yes\n1\n");
	kj__program_release(&r);
	/* The caller's array is as it was. */
	KJ_CHECK_STR(envp[0], "NCCL_NVLS_ENABLE=1");
}
