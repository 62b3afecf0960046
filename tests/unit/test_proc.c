/*
 * test_proc.c - worker processes: spawn, request/reply, noise, caps,
 * timeouts, deaths and orphans.  The workers are small /bin/sh scripts that
 * speak the protocol: read a request line from fd 3, answer with its nonce.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "unit.h"
#include "base/internal.h"

/* Reads one request and prints `before` (any text) then the reply. */
#define ECHO_NONCE                                                              \
	"read line <&3; "                                                       \
	"n=$(printf '%s' \"$line\" | sed 's/.*\"nonce\": *\\([0-9]*\\).*/\\1/'); "

/* A line in `file` that says one more process of a worker has started. */
#define STARTED(file) "echo started >> " file "; "

/* Wait up to 10 s for `want` lines in file; returns how many there are. */
static int wait_lines(const char *file, int want)
{
	int n = 0, tries;

	for (tries = 0; tries < 1000 && n < want; tries++) {
		FILE *f = fopen(file, "r");
		char line[64];

		n = 0;
		while (f && fgets(line, sizeof(line), f))
			n++;
		if (f)
			fclose(f);
		if (n < want)
			usleep(10000);
	}
	return n;
}

/*
 * The pids, as this process sees them, of root's descendants (at most max):
 * a worker's own pids are those of its namespace, so the test finds them
 * through the judge's /proc, by parent.
 */
static int descendants(pid_t root, pid_t *out, int max)
{
	static pid_t pid[8192], ppid[8192];
	int n = 0, k = 0, i, j;
	DIR *d = opendir("/proc");
	struct dirent *e;

	KJ_CHECK(d != NULL);
	while ((e = readdir(d)) != NULL && n < 8192) {
		char path[300], buf[512], *rp;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) != NULL &&
		    rp[2] != 'Z') {
			pid[n] = (pid_t)strtol(buf, NULL, 10);
			ppid[n++] = (pid_t)strtol(rp + 4, NULL, 10);
		}
		fclose(f);
	}
	closedir(d);
	/* Breadth first: out[] is the queue. */
	for (i = 0; i < n && k < max; i++)
		if (ppid[i] == root)
			out[k++] = pid[i];
	for (j = 0; j < k; j++)
		for (i = 0; i < n && k < max; i++)
			if (ppid[i] == out[j])
				out[k++] = pid[i];
	return k;
}

static void start_sh(struct kj_proc *p, const char *script)
{
	char sh[] = "/bin/sh", c[] = "-c";
	char *argv[] = { sh, c, (char *)(uintptr_t)script, NULL };
	char path[] = "PATH=/usr/bin:/bin";
	char *envp[] = { path, NULL };
	struct kj_error err;

	KJ_CHECK_OK(kj_proc_spawn(p, argv, envp, NULL, &err), &err);
}

static json_t *req(void)
{
	return json_pack("{s:s}", "op", "ping");
}

/* Gone: no such process, or a zombie (reaped when it is ours). */
static int gone(pid_t pid)
{
	char path[64], buf[256], *rp;
	FILE *f;
	int z = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) != NULL)
		z = rp[1] == ' ' && rp[2] == 'Z';
	fclose(f);
	if (z)
		waitpid(pid, NULL, WNOHANG);
	return z;
}

static int all_gone_within(const pid_t *pids, int n, double s)
{
	double end = kj__now_s() + s;
	int i, left;

	do {
		for (i = 0, left = 0; i < n; i++)
			left += !gone(pids[i]);
		if (!left)
			return 1;
		usleep(10000);
	} while (kj__now_s() < end);
	return 0;
}

KJ_TEST(proc_spawn_failure_is_reported)
{
	char bad[] = "/nonexistent/worker";
	char *argv[] = { bad, NULL };
	char *envp[] = { NULL };
	struct kj_proc p;
	struct kj_error err;

	KJ_CHECK_INT(kj_proc_spawn(&p, argv, envp, NULL, &err), KJ_ESPAWN);
	KJ_CHECK(strstr(err.msg, "/nonexistent/worker") != NULL);
	KJ_CHECK(strstr(err.msg, "No such file") != NULL);
}

KJ_TEST(proc_reply_and_output)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	/* What the worker prints on its streams is its own business; the
	 * channel carries the reply alone. */
	start_sh(&p, ECHO_NONCE
		 "echo hello; echo world >&2; "
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true, \\\"v\\\": 42}\" >&3; sleep 5");
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	KJ_CHECK(json_is_true(json_object_get(rep, "ok")));
	KJ_CHECK_INT(json_integer_value(json_object_get(rep, "v")), 42);
	KJ_CHECK_INT(p.noise_lines, 0);
	json_decref(rep);
	kj_proc_release(&p, 0.1);
	KJ_CHECK_INT(p.pid, 0);
}

/*
 * Anything on the channel but the reply is the code under test writing to
 * the judge's channel: the request fails at once with KJ_EPROTOCOL, saying
 * what came, and the worker is killed; the wait never runs to its deadline
 * (each of these worker scripts would then hang for 30 s).
 */
KJ_TEST(proc_bytes_that_are_not_the_reply_fail_at_once)
{
	static const struct {
		const char *script, *want;
	} cases[] = {
		/* a forged reply with a guessed nonce, before the real one */
		{ ECHO_NONCE "echo '{\"nonce\": 1, \"ok\": true}' >&3; "
		  "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 30",
		  "not the reply to this request: '{\"nonce\": 1" },
		/* a line that is not JSON */
		{ ECHO_NONCE "echo 'not json' >&3; sleep 30", "'not json'" },
		/* a binary frame with a length prefix and no newline: nothing
		 * after it could be read as a reply */
		{ ECHO_NONCE "printf '\\360\\377\\377\\377xxxx' >&3; sleep 30",
		  "'\\xf0\\xff\\xff\\xffxxxx'" },
		/* a partial line the reply would be glued to */
		{ ECHO_NONCE "printf '{\"ok\": tr' >&3; "
		  "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 30",
		  "a line that is not JSON" },
		/* the reply, then more: the next request fails */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kj_proc p;
		struct kj_error err;
		json_t *rep = NULL;
		double t0 = kj__now_s();

		start_sh(&p, cases[i].script);
		KJ_CHECK_INT(kj_proc_request(&p, req(), 30, &rep, &err), KJ_EPROTOCOL);
		KJ_CHECK(rep == NULL);
		KJ_CHECK(kj__now_s() - t0 < 10);
		KJ_CHECK(strstr(err.msg, "the code under test wrote to it") != NULL);
		if (!strstr(err.msg, cases[i].want))
			kj_test_fail(__FILE__, __LINE__, "case %zu: '%s' does not hold '%s'", i,
				     err.msg, cases[i].want);
		KJ_CHECK(p.reaped);
		kj_proc_release(&p, 0.1);
	}
}

/* Bytes after the reply are found by the next request. */
KJ_TEST(proc_bytes_after_the_reply_fail_the_next_request)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	start_sh(&p, ECHO_NONCE "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; "
		 "echo '{\"forged\": true}' >&3; " ECHO_NONCE
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 30");
	KJ_CHECK_OK(kj_proc_request(&p, req(), 30, &rep, &err), &err);
	json_decref(rep);
	KJ_CHECK_INT(kj_proc_request(&p, req(), 30, &rep, &err), KJ_EPROTOCOL);
	KJ_CHECK(strstr(err.msg, "forged") != NULL);
	kj_proc_release(&p, 0.1);
}

/* A timeout longer than an int of milliseconds is a long wait, not an
 * overflow that times out at once: kjudge verify --timeout 2147483 starts its
 * workers with it, and other callers may pass more. */
KJ_TEST(proc_very_long_timeouts_wait_for_the_reply)
{
	static const double timeouts[] = { 2147483, 2147484, 1e7, 1e300 };
	size_t i;

	for (i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		struct kj_proc p;
		struct kj_error err;
		json_t *rep = NULL;

		start_sh(&p, ECHO_NONCE "sleep 0.2; "
			 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 5");
		KJ_CHECK_OK(kj_proc_request(&p, req(), timeouts[i], &rep, &err), &err);
		KJ_CHECK(json_is_true(json_object_get(rep, "ok")));
		json_decref(rep);
		kj_proc_release(&p, 0.1);
	}
}

KJ_TEST(proc_timeout_kills_the_group)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	pid_t pid;

	start_sh(&p, "sleep 100 & sleep 100");
	pid = p.pid;
	KJ_CHECK_INT(kj_proc_request(&p, req(), 0.3, &rep, &err), KJ_ETIMEDOUT);
	KJ_CHECK(rep == NULL);
	KJ_CHECK(strstr(err.msg, "no reply within") != NULL);
	/* The whole group is gone: no member can be signalled. */
	KJ_CHECK(kill(-pid, 0) < 0 && errno == ESRCH);
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_death_is_described)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	char how[96];

	start_sh(&p, "read line <&3; echo dying >&2; exit 3");
	KJ_CHECK_INT(kj_proc_request(&p, req(), 10, &rep, &err), KJ_EWORKER);
	KJ_CHECK(strstr(err.msg, "exited with status 3") != NULL);
	KJ_CHECK(strstr(p.cap_err.data, "dying") != NULL);
	kj_proc_release(&p, 0.1);

	/* A real crash: as PID 1 of its namespace the worker would ignore
	 * a signal it sent itself (kill -SEGV $$). */
	{
		char script[4400];

		snprintf(script, sizeof(script), "read line <&3; exec %s", kj_test_helper("segv"));
		start_sh(&p, script);
	}
	KJ_CHECK_INT(kj_proc_request(&p, req(), 10, &rep, &err), KJ_EWORKER);
	KJ_CHECK(strstr(kj_proc_describe_exit(&p, how, sizeof(how)),
			"killed by signal 11") != NULL);
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_output_is_capped)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	/* 4 MiB on stdout before the reply: kept up to the cap, the rest
	 * counted, and the reply still arrives. */
	start_sh(&p, ECHO_NONCE
		 "head -c 4194304 /dev/zero | tr '\\0' x; "
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 5");
	KJ_CHECK_OK(kj_proc_request(&p, req(), 20, &rep, &err), &err);
	KJ_CHECK_INT(p.cap_out.len, KJ_PROC_CAPTURE_MAX);
	KJ_CHECK(p.cap_out.dropped > 0);
	KJ_CHECK_INT(p.cap_out.len + p.cap_out.dropped <= 4194304, 1);
	json_decref(rep);
	kj_proc_release(&p, 0.1);
}

/* A worker that answers every request after printing `bytes` x's on
 * stdout (a loop of ECHO_NONCE). */
static void start_printer(struct kj_proc *p, long bytes)
{
	char script[1024];

	snprintf(script, sizeof(script),
		 "while %s do head -c %ld /dev/zero | tr '\\0' x; "
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; done", ECHO_NONCE, bytes);
	start_sh(p, script);
}

KJ_TEST(proc_output_is_counted_per_request)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	int i;

	/* 100 KiB per request, 256 KiB allowed per request: ten requests
	 * (1000 KiB in the worker's life) all pass, and what is kept is
	 * the last request's output alone. */
	start_printer(&p, 100 << 10);
	p.output_limit = 1;
	for (i = 0; i < 10; i++) {
		KJ_CHECK_OK(kj_proc_request(&p, req(), 20, &rep, &err), &err);
		json_decref(rep);
		KJ_CHECK_INT(p.cap_out.len, 100 << 10);
		KJ_CHECK_INT(p.cap_out.dropped, 0);
	}
	KJ_CHECK_INT(p.output_over, 0);
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_output_past_one_requests_budget_fails_it)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	/* 64 KiB per call: a request that prints 100 KiB before a reply
	 * that does come still fails, as the worker's limit says. */
	start_printer(&p, 100 << 10);
	p.output_limit = 1;
	p.output_bytes = 64 << 10;
	KJ_CHECK_INT(kj_proc_request(&p, req(), 20, &rep, &err), KJ_EWORKER);
	KJ_CHECK(rep == NULL);
	KJ_CHECK_INT(p.output_over, 1);
	KJ_CHECK(strstr(err.msg, "more than 65536 bytes on one stream in one request") != NULL);
	kj_proc_release(&p, 0.1);

	/* Without the limit the same output is only not kept in full. */
	start_printer(&p, 300 << 10);
	KJ_CHECK_OK(kj_proc_request(&p, req(), 20, &rep, &err), &err);
	json_decref(rep);
	KJ_CHECK_INT(p.cap_out.len, KJ_PROC_CAPTURE_MAX);
	KJ_CHECK_INT(p.cap_out.len + p.cap_out.dropped, 300 << 10);
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_a_request_of_n_calls_may_print_n_times_as_much)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	/* 100 KiB per request at 64 KiB per call: a request that says it
	 * makes two calls passes; the next, which says nothing, is one call
	 * again and fails. */
	start_printer(&p, 100 << 10);
	p.output_limit = 1;
	p.output_bytes = 64 << 10;
	p.output_calls = 2;
	KJ_CHECK_OK(kj_proc_request(&p, req(), 20, &rep, &err), &err);
	json_decref(rep);
	KJ_CHECK_INT(p.output_calls, 0);
	KJ_CHECK_INT(kj_proc_request(&p, req(), 20, &rep, &err), KJ_EWORKER);
	KJ_CHECK_INT(p.output_over, 1);
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_a_flood_is_stopped_at_once)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	double t0;

	/* Output without end on stderr and no reply: stopped as soon as the
	 * budget is passed, long before the timeout, with the end of what it
	 * printed kept. */
	start_sh(&p, "read line <&3; yes flood >&2");
	p.output_limit = 1;
	p.output_calls = 100;
	t0 = kj__now_s();
	KJ_CHECK_INT(kj_proc_request(&p, req(), 60, &rep, &err), KJ_EWORKER);
	KJ_CHECK(kj__now_s() - t0 < 30);
	KJ_CHECK_INT(p.output_over, 1);
	KJ_CHECK(p.cap_err.len + p.cap_err.dropped > 100 * (size_t)KJ_PROC_CAPTURE_MAX);
	KJ_CHECK(p.cap_err.len + p.cap_err.dropped < 100 * (size_t)KJ_PROC_CAPTURE_MAX + (1 << 20));
	KJ_CHECK(strncmp(p.cap_err.data + p.cap_err.len - 6, "flood\n", 6) == 0 ||
		 strstr(p.cap_err.data, "flood\nflood") != NULL);
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_capture_keeps_the_tail)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	/* 1 MiB, then the line that says what went wrong: that line is
	 * what is kept (a traceback comes last). */
	start_sh(&p, ECHO_NONCE "head -c 1048576 /dev/zero | tr '\\0' x >&2; echo the-end >&2; "
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 5");
	KJ_CHECK_OK(kj_proc_request(&p, req(), 20, &rep, &err), &err);
	json_decref(rep);
	KJ_CHECK_INT(p.cap_err.len, KJ_PROC_CAPTURE_MAX);
	KJ_CHECK_INT(p.cap_err.dropped, 1048576 + 8 - KJ_PROC_CAPTURE_MAX);
	KJ_CHECK_STR(p.cap_err.data + p.cap_err.len - 8, "the-end\n");
	KJ_CHECK(p.cap_err.data[0] == 'x');
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_only_the_protocol_descriptor_is_inherited)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	const char *fds;

	/* The worker lists its descriptors in the reply (ls inherits the
	 * shell's; /proc/self, because $$ is 1 in the worker's namespace). */
	start_sh(&p, ECHO_NONCE
		 "f=$(ls /proc/self/fd | sort -n | tr '\\n' ' '); "
		 "echo \"{\\\"nonce\\\": $n, \\\"fds\\\": \\\"$f\\\"}\" >&3");
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	fds = json_string_value(json_object_get(rep, "fds"));
	/* 0, 1, 2, 3, plus the one ls itself opens to read the directory. */
	KJ_CHECK(fds && strncmp(fds, "0 1 2 3 ", 8) == 0);
	KJ_CHECK(strlen(fds) <= 10);
	json_decref(rep);
	kj_proc_release(&p, 0.1);
}

KJ_TEST(proc_orphans_that_left_the_group_are_swept)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	char script[8192];
	pid_t pids[16];
	int n;

	/* A daemon in its own session, which kill(-pgid) cannot reach. */
	snprintf(script, sizeof(script), "%s"
		 "setsid sh -c '" STARTED("%s") "exec sleep 100' & "
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 100",
		 ECHO_NONCE, kj_test_path("started"));
	start_sh(&p, script);
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	json_decref(rep);
	KJ_CHECK_INT(wait_lines(kj_test_path("started"), 1), 1);
	n = descendants(p.pid, pids, 16);
	KJ_CHECK(n >= 2);
	kj_proc_release(&p, 0.1);
	/* Killed and reaped: no such process any more. */
	KJ_CHECK(all_gone_within(pids, n, 1.0));
}

/* --- nothing outlives the judge ----------------------------------------------------- */

/*
 * Make this (test) process's clone() refuse new PID namespaces, and with
 * arg0_mask 0 any other system call nr, with errno e: the kernel's own
 * answer on a machine that does not allow them, for the fallbacks.
 */
static void refuse(long nr, unsigned arg0_mask, int e)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, arg0_mask ? arg0_mask : ~0u, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)e & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };

	KJ_CHECK_INT(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	KJ_CHECK_INT(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), 0);
}

#define REFUSE_PID_NAMESPACES() refuse(SYS_clone, CLONE_NEWPID, EPERM)

/*
 * A worker that ignores SIGTERM, starts a child and a grandchild, and a
 * daemon in a session of its own.  After release none is left.
 */
#define FAMILY(file)                                                            \
	"trap '' TERM INT HUP; " STARTED(file)                                  \
	"( " STARTED(file) "( " STARTED(file) "exec sleep 100 ) & exec sleep 100 ) & " \
	"setsid sh -c '" STARTED(file) "exec sleep 100' & "

static void release_leaves_nothing(void)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	char script[8192];
	pid_t pids[16];
	int n;

	snprintf(script, sizeof(script), FAMILY("%s") "%s"
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 100",
		 kj_test_path("started"), kj_test_path("started"), kj_test_path("started"),
		 kj_test_path("started"), ECHO_NONCE);
	start_sh(&p, script);
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	json_decref(rep);
	KJ_CHECK_INT(wait_lines(kj_test_path("started"), 4), 4);
	n = descendants(p.pid, pids, 16);
	KJ_CHECK(n >= 3);
	pids[n++] = p.pid;
	kj_proc_release(&p, 0.2);
	KJ_CHECK(all_gone_within(pids, n, 1.0));
}

KJ_TEST(proc_release_leaves_no_process_of_the_worker)
{
	release_leaves_nothing();
}

KJ_TEST(proc_release_leaves_nothing_without_pid_namespaces)
{
	struct kj_proc p;

	/* The fallback: a plain process group, orphans swept as the
	 * judge's re-parented children. */
	REFUSE_PID_NAMESPACES();
	start_sh(&p, "sleep 100");
	KJ_CHECK_INT(p.isolation, KJ_ISOLATION_GROUP);
	kj_proc_release(&p, 0);
	release_leaves_nothing();
}

KJ_TEST(proc_workers_have_a_pid_namespace_and_say_so)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL, *lim;

	start_sh(&p, ECHO_NONCE "c=$(cat /proc/1/comm); "
		 "echo \"{\\\"nonce\\\": $n, \\\"pid\\\": $$, \\\"one\\\": \\\"$c\\\"}\" >&3; sleep 100");
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	/* Where the machine allows one (here, as root or with user
	 * namespaces), the worker is PID 1 of its own, and its /proc agrees
	 * (CUDA's driver needs that): /proc/1 is the worker itself. */
	KJ_CHECK_INT(json_integer_value(json_object_get(rep, "pid")),
		     p.isolation == KJ_ISOLATION_PIDNS ? 1 : p.pid);
	if (p.isolation == KJ_ISOLATION_PIDNS)
		KJ_CHECK_STR(json_string_value(json_object_get(rep, "one")), "sh");
	lim = kj_proc_limits_json(&p);
	KJ_CHECK_STR(json_string_value(json_object_get(lim, "isolation")),
		     kj_isolation_name(p.isolation));
	KJ_CHECK(json_is_null(json_object_get(lim, "cgroup")));
	json_decref(lim);
	json_decref(rep);
	kj_proc_release(&p, 0.1);
}

/*
 * The judge killed by SIGKILL: a process standing for it starts a worker
 * (with a child of its own), says so, and is killed.  The worker goes by
 * its parent-death signal; with a PID namespace its child goes with it.
 */
static void judge_killed(int with_namespaces)
{
	int ready[2];
	pid_t judge, worker, pids[16];
	int n, i;

	/* Orphans come to this process, which reaps them (as the kill
	 * tests' harness does). */
	KJ_CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	KJ_CHECK_INT(pipe(ready), 0);
	judge = fork();
	KJ_CHECK(judge >= 0);
	if (judge == 0) {
		struct kj_proc p;
		char script[4200];

		if (!with_namespaces)
			REFUSE_PID_NAMESPACES();
		snprintf(script, sizeof(script), "( " STARTED("%s") "exec sleep 100 ) & "
			 "exec sleep 100", kj_test_path("started"));
		start_sh(&p, script);
		if (p.isolation != (with_namespaces ? KJ_ISOLATION_PIDNS : KJ_ISOLATION_GROUP))
			_exit(3);
		if (write(ready[1], &p.pid, sizeof(p.pid)) != sizeof(p.pid))
			_exit(4);
		for (;;)
			pause();
	}
	close(ready[1]);
	KJ_CHECK_INT(read(ready[0], &worker, sizeof(worker)), sizeof(worker));
	KJ_CHECK_INT(wait_lines(kj_test_path("started"), 1), 1);
	n = descendants(worker, pids, 16);
	KJ_CHECK(n >= 1);
	KJ_CHECK_INT(kill(judge, SIGKILL), 0);
	KJ_CHECK_INT(waitpid(judge, NULL, 0), judge);
	KJ_CHECK(all_gone_within(&worker, 1, 1.0));
	/* With a namespace the worker's child goes with it; without one it
	 * outlives it (it was in the worker's group, which only a living
	 * judge kills): the test's own cleaning then. */
	if (with_namespaces)
		KJ_CHECK(all_gone_within(pids, n, 1.0));
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
}

KJ_TEST(proc_worker_dies_with_a_judge_killed_by_sigkill)
{
	judge_killed(1);
}

KJ_TEST(proc_worker_dies_with_its_judge_without_pid_namespaces)
{
	judge_killed(0);
}

KJ_TEST(proc_worker_has_the_death_signal)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	char script[4400];

	/* The worker's program itself reads it (PR_GET_PDEATHSIG) after
	 * execve, and prints it; outside the sandbox it may clear it. */
	snprintf(script, sizeof(script), "read line <&3; exec %s", kj_test_helper("pdeathsig"));
	start_sh(&p, script);
	KJ_CHECK_INT(kj_proc_request(&p, req(), 10, &rep, &err), KJ_EWORKER);
	KJ_CHECK_STR(p.cap_out.data, "9 cleared\n");
	kj_proc_release(&p, 0.1);
}

/* Descriptors 1500 and 70000 open (not close-on-exec) in the judge; the
 * worker must see neither.  Where RLIMIT_NOFILE's hard limit is lower and
 * cannot be raised (no CAP_SYS_RESOURCE), the highest it allows instead. */
static void high_descriptors_closed(void)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	struct rlimit rl;
	char script[4096];
	int fd = open("/dev/null", O_RDONLY), top = 70000;

	KJ_CHECK(fd >= 0);
	KJ_CHECK_INT(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max <= (rlim_t)top) {
		struct rlimit want = { (rlim_t)top + 1000, (rlim_t)top + 1000 };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
		else
			top = (int)rl.rlim_max - 1;
	}
	KJ_CHECK(top > 1500);
	rl.rlim_cur = rl.rlim_max;
	KJ_CHECK_INT(setrlimit(RLIMIT_NOFILE, &rl), 0);
	KJ_CHECK_INT(dup2(fd, 1500), 1500);
	KJ_CHECK_INT(dup2(fd, top), top);
	snprintf(script, sizeof(script), "%s"
		 "v=; for f in 1500 %d; do test -e /proc/self/fd/$f && v=\"$v $f\"; done; "
		 "echo \"{\\\"nonce\\\": $n, \\\"open\\\": \\\"$v\\\"}\" >&3",
		 ECHO_NONCE, top);
	start_sh(&p, script);
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	KJ_CHECK_STR(json_string_value(json_object_get(rep, "open")), "");
	json_decref(rep);
	kj_proc_release(&p, 0.1);
	close(1500);
	close(top);
	close(fd);
}

KJ_TEST(proc_descriptors_above_1024_are_closed)
{
	high_descriptors_closed();
}

#ifdef SYS_close_range
KJ_TEST(proc_descriptors_above_1024_are_closed_without_close_range)
{
	/* A kernel before 5.9: every descriptor up to the hard limit. */
	refuse(SYS_close_range, 0, ENOSYS);
	high_descriptors_closed();
}
#endif

/* A signal the guard catches, from another thread after a while. */
static void *signal_later(void *arg)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	kill(getpid(), *(int *)arg);
	return NULL;
}

/* Written by the watchdog's thread, read by the test's. */
static atomic_int stuck_calls;

static void on_stuck(double waited_s)
{
	(void)waited_s;
	atomic_fetch_add(&stuck_calls, 1);
}

/* Sleep s seconds whatever signals come (the watchdog's lands on this
 * thread). */
static void sleep_through(double s)
{
	double end = kj__now_s() + s;

	while (kj__now_s() < end)
		usleep(20000);
}

/*
 * The judge stuck between a request and its wait (as a blocking call it
 * never expected would leave it): the watchdog kills the worker once the
 * request's timeout and the grace period pass, the wait then fails at once
 * as a timeout the watchdog caused, and a judge still stuck a grace period
 * later is reported through `stuck`.  A judge that makes progress (a reply
 * within the timeout, then requests) is never touched.
 */
KJ_TEST(proc_watchdog_stops_the_workers_of_a_stuck_judge)
{
	struct kj_proc a, b;
	struct kj_error err;
	json_t *rep = NULL;
	uint64_t nonce;
	double t0;
	int i;

	KJ_CHECK_OK(kj_proc_guard_signals(&err), &err);
	KJ_CHECK_OK(kj_proc_watchdog_start(0.4, on_stuck, &err), &err);
	/* Progress: three requests, each answered in time, with pauses
	 * shorter than the timeout and grace between them. */
	start_sh(&b, ECHO_NONCE "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; "
		 ECHO_NONCE "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; "
		 ECHO_NONCE "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 30");
	for (i = 0; i < 3; i++) {
		KJ_CHECK_OK(kj_proc_request(&b, req(), 0.6, &rep, &err), &err);
		json_decref(rep);
		sleep_through(0.5);
	}
	KJ_CHECK(!gone(b.pid));
	kj_proc_release(&b, 0.1);
	/* Stuck: the request is sent, and the judge does not come back to
	 * wait for 3 s, past 0.5 s of timeout and 0.4 s of grace, twice. */
	start_sh(&a, ECHO_NONCE "sleep 30");
	KJ_CHECK_OK(kj_proc_send(&a, req(), 0.5, &nonce, &err), &err);
	sleep_through(3);
	{
		/* Killed, not yet reaped (the judge reaps it): a zombie. */
		char path[64], buf[256], *rp;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)a.pid);
		KJ_CHECK((f = fopen(path, "r")) != NULL);
		KJ_CHECK(fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) && rp[2] == 'Z');
		fclose(f);
	}
	KJ_CHECK_INT(atomic_load(&stuck_calls), 1);
	t0 = kj__now_s();
	KJ_CHECK_INT(kj_proc_wait(&a, nonce, 30, &rep, &err), KJ_ETIMEDOUT);
	KJ_CHECK(kj__now_s() - t0 < 5);
	KJ_CHECK(strstr(err.msg, "watchdog") != NULL);
	KJ_CHECK_INT(kj_proc_interrupted(), 0);
	kj_proc_release(&a, 0.1);
}

KJ_TEST(proc_guard_kills_workers_and_interrupts_the_wait)
{
	struct kj_proc a, b;
	struct kj_error err;
	json_t *rep = NULL;
	uint64_t nonce;
	pthread_t t;
	int sig = SIGTERM, status;
	double t0;
	pid_t pa, pb;

	KJ_CHECK_OK(kj_proc_guard_signals(&err), &err);
	KJ_CHECK_INT(kj_proc_interrupted(), 0);
	start_sh(&a, "trap '' TERM; read line <&3; sleep 100");
	start_sh(&b, "trap '' TERM; sleep 100");
	pa = a.pid;
	pb = b.pid;
	KJ_CHECK_OK(kj_proc_send(&a, req(), 30, &nonce, &err), &err);
	t0 = kj__now_s();
	KJ_CHECK_INT(pthread_create(&t, NULL, signal_later, &sig), 0);
	/* The signal is process-wide; whichever thread takes it, the wait
	 * ends at once, as an interruption, not a crash. */
	KJ_CHECK_INT(kj_proc_wait(&a, nonce, 30, &rep, &err), KJ_EINTR);
	KJ_CHECK(kj__now_s() - t0 < 5);
	KJ_CHECK(strstr(err.msg, "interrupted by signal 15") != NULL);
	pthread_join(t, NULL);
	KJ_CHECK_INT(kj_proc_interrupted(), SIGTERM);
	/* Both groups were killed by the handler, the one not waited for
	 * too; a later send or spawn does nothing. */
	KJ_CHECK(kill(-pa, 0) < 0 && errno == ESRCH);
	KJ_CHECK_INT(waitpid(pb, &status, 0), pb);
	KJ_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	b.reaped = 1;
	KJ_CHECK_INT(kj_proc_send(&b, req(), 30, &nonce, &err), KJ_EINTR);
	kj_proc_release(&a, 1);
	kj_proc_release(&b, 1);
	{
		char sh[] = "/bin/sh", c[] = "-c", cmd[] = "exit 0";
		char *argv[] = { sh, c, cmd, NULL };
		char *envp[] = { NULL };

		KJ_CHECK_INT(kj_proc_spawn(&a, argv, envp, NULL, &err), KJ_EINTR);
	}
}

KJ_TEST(proc_guard_second_signal_ends_the_judge)
{
	struct kj_error err;
	int status;
	pid_t judge = fork();

	KJ_CHECK(judge >= 0);
	if (judge == 0) {
		/* A judge started in the background of a script inherits
		 * SIGINT ignored, and the guard rightly leaves it so: give
		 * this one the terminal's defaults. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (kj_proc_guard_signals(&err) != KJ_OK)
			_exit(3);
		kill(getpid(), SIGTERM);
		if (kj_proc_interrupted() != SIGTERM)
			_exit(4);
		/* The user insists: out at once, with the first signal's
		 * status. */
		kill(getpid(), SIGINT);
		_exit(5);
	}
	KJ_CHECK_INT(waitpid(judge, &status, 0), judge);
	KJ_CHECK(WIFEXITED(status));
	KJ_CHECK_INT(WEXITSTATUS(status), 128 + SIGTERM);
}

KJ_TEST(proc_guard_leaves_ignored_signals_ignored)
{
	struct kj_error err;
	struct sigaction sa;

	/* nohup: a hangup the shell meant to be ignored stays ignored. */
	signal(SIGHUP, SIG_IGN);
	KJ_CHECK_OK(kj_proc_guard_signals(&err), &err);
	KJ_CHECK_INT(sigaction(SIGHUP, NULL, &sa), 0);
	KJ_CHECK(sa.sa_handler == SIG_IGN);
	KJ_CHECK_INT(sigaction(SIGTERM, NULL, &sa), 0);
	KJ_CHECK(sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL);
}

/* Descriptors a worker sends with its reply (its sealed outputs) come with
 * that reply, each once, in order. */
static void fds_come_with_their_reply(int n)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	char script[4400];
	int *fds = NULL, i, before = 0, after = 0;
	size_t got = 0;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) != NULL) {
		while (readdir(d))
			before++;
		closedir(d);
	}
	snprintf(script, sizeof(script), "exec %s %d", kj_test_helper("fdsender"), n);
	start_sh(&p, script);
	KJ_CHECK_OK(kj_proc_request(&p, req(), 20, &rep, &err), &err);
	kj_proc_take_fds(&p, &fds, &got);
	KJ_CHECK_INT((int)got, n);
	KJ_CHECK_INT(p.fds_over, 0);
	for (i = 0; i < (int)got; i++) {
		char text[32] = "";
		int seals = fcntl(fds[i], F_GET_SEALS);

		KJ_CHECK(seals > 0 && (seals & F_SEAL_WRITE));
		KJ_CHECK(pread(fds[i], text, sizeof(text) - 1, 0) > 0);
		KJ_CHECK_INT((int)strtol(text, NULL, 10), i);
	}
	for (i = 0; i < (int)got; i++)
		close(fds[i]);
	free(fds);
	json_decref(rep);
	kj_proc_release(&p, 0.1);
	if ((d = opendir("/proc/self/fd")) != NULL) {
		while (readdir(d))
			after++;
		closedir(d);
	}
	/* Nothing kept open: not a duplicate. */
	KJ_CHECK_INT(after, before);
}

/* A line that is not the reply, with a descriptor: the request fails, and
 * neither its descriptor nor the reply's stay open in the judge. */
KJ_TEST(proc_descriptors_of_a_breach_are_closed)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	char script[4400];
	int before = 0, after = 0;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) != NULL) {
		while (readdir(d))
			before++;
		closedir(d);
	}
	snprintf(script, sizeof(script), "exec %s 3 noise", kj_test_helper("fdsender"));
	start_sh(&p, script);
	KJ_CHECK_INT(kj_proc_request(&p, req(), 20, &rep, &err), KJ_EPROTOCOL);
	KJ_CHECK(strstr(err.msg, "noise") != NULL);
	kj_proc_release(&p, 0.1);
	if ((d = opendir("/proc/self/fd")) != NULL) {
		while (readdir(d))
			after++;
		closedir(d);
	}
	KJ_CHECK_INT(after, before);
}

KJ_TEST(proc_descriptors_come_with_their_reply)
{
	fds_come_with_their_reply(1);
	fds_come_with_their_reply(3);
	fds_come_with_their_reply(600);
}

/* Descriptors for the worker go with the request's first bytes, 253 to a
 * message (SCM_MAX_FD): a worker reading the line gets them all, in order,
 * and the judge keeps its own. */
KJ_TEST(proc_request_passes_descriptors)
{
	static const char code[] =
		"import json, os, socket\n"
		"s = socket.socket(fileno=3)\n"
		"buf, fds = b'', []\n"
		"while b'\\n' not in buf:\n"
		"    m, f, _, _ = socket.recv_fds(s, 65536, 253)\n"
		"    fds += f\n"
		"    buf += m\n"
		"    if not m: break\n"
		"req = json.loads(buf.split(b'\\n')[0])\n"
		"vals = [int(os.pread(fd, 32, 0)) for fd in fds]\n"
		"ordered = vals == sorted(vals)\n"
		"os.write(3, (json.dumps({'nonce': req['nonce'], 'ok': True, 'n': len(fds),\n"
		"                         'sum': sum(vals), 'ordered': ordered}) + '\\n').encode())\n"
		"s.recv(1)\n";
	char py[] = "/usr/bin/python3", c[] = "-c";
	char *argv[] = { py, c, (char *)(uintptr_t)code, NULL };
	char path[] = "PATH=/usr/bin:/bin";
	char *envp[] = { path, NULL };
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	int fds[300], i;
	long long sum = 0;

	if (access(py, X_OK) != 0)
		return; /* no Python to be the worker */
	for (i = 0; i < 300; i++) {
		char text[16];

		fds[i] = memfd_create("t", MFD_CLOEXEC);
		KJ_CHECK(fds[i] >= 0);
		snprintf(text, sizeof(text), "%d", i);
		KJ_CHECK(write(fds[i], text, strlen(text)) == (ssize_t)strlen(text));
		sum += i;
	}
	KJ_CHECK_OK(kj_proc_spawn(&p, argv, envp, NULL, &err), &err);
	p.send_fds = fds;
	p.n_send_fds = 300;
	KJ_CHECK_OK(kj_proc_request(&p, req(), 20, &rep, &err), &err);
	KJ_CHECK(p.send_fds == NULL && p.n_send_fds == 0);
	KJ_CHECK_INT(json_integer_value(json_object_get(rep, "n")), 300);
	KJ_CHECK_INT(json_integer_value(json_object_get(rep, "sum")), sum);
	KJ_CHECK(json_is_true(json_object_get(rep, "ordered")));
	json_decref(rep);
	/* Still the judge's: open and readable. */
	for (i = 0; i < 300; i++) {
		char b[4];

		KJ_CHECK(pread(fds[i], b, 1, 0) == 1);
		close(fds[i]);
	}
	kj_proc_release(&p, 0.1);
}

/* A worker is the kernel's OOM killer's first choice from before it runs
 * anything: its score is 1000 (what the judge may lower its own to, it
 * does not inherit), read back and recorded in its limits. */
KJ_TEST(proc_workers_are_the_oom_killers_first_choice)
{
	struct kj_proc p;
	char path[64], buf[32];
	json_t *l;

	start_sh(&p, "sleep 30");
	KJ_CHECK_INT(p.limits.oom_score_adj, KJ_PROC_WORKER_OOM_ADJ);
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)p.pid);
	KJ_CHECK(kj__read_text(path, buf, sizeof(buf)) > 0);
	KJ_CHECK_INT(strtol(buf, NULL, 10), KJ_PROC_WORKER_OOM_ADJ);
	l = kj_proc_limits_json(&p);
	KJ_CHECK_INT(json_integer_value(json_object_get(l, "oom_score_adj")), 1000);
	json_decref(l);
	kj_proc_release(&p, 0.1);
	/* The judge's own: lowered where it may be (CAP_SYS_RESOURCE), else
	 * as it was; never raised. */
	KJ_CHECK(kj_proc_protect_judge() <= 0);
}
