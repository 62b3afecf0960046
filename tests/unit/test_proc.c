/*
 * test_proc.c - worker processes: spawn, request/reply, noise, caps,
 * timeouts, deaths and orphans.  The workers are small /bin/sh scripts that
 * speak the protocol: read a request line from fd 3, answer with its nonce.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "unit.h"

/* Reads one request and prints `before` (any text) then the reply. */
#define ECHO_NONCE                                                              \
	"read line <&3; "                                                       \
	"n=$(printf '%s' \"$line\" | sed 's/.*\"nonce\": *\\([0-9]*\\).*/\\1/'); "

/* Sets $hp to the shell's pid as the judge sees it: /proc is the judge's,
 * so /proc/self is, while $$ is the pid in the worker's own namespace. */
#define HOST_PID "read -r hp rest < /proc/self/stat; "

static void start_sh(struct kj_proc *p, const char *script)
{
	char sh[] = "/bin/sh", c[] = "-c";
	char *argv[] = { sh, c, (char *)(uintptr_t)script, NULL };
	char path[] = "PATH=/usr/bin:/bin";
	char *envp[] = { path, NULL };
	struct kj_error err;

	KJ_CHECK_OK(kj_proc_spawn(p, argv, envp, NULL, &err), &err);
}

/* A program of tests/helpers/, built beside this one. */
static const char *helper(const char *name)
{
	static char path[4200];
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	KJ_CHECK(n > 0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	KJ_CHECK(slash != NULL);
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", self, name);
	KJ_CHECK(access(path, X_OK) == 0);
	return path;
}

static json_t *req(void)
{
	return json_pack("{s:s}", "op", "ping");
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

KJ_TEST(proc_reply_and_noise)
{
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	/* Two forged lines before the real reply: garbage, and a reply with a
	 * wrong nonce.  Both are dropped. */
	start_sh(&p, ECHO_NONCE
		 "echo 'not json' >&3; "
		 "echo '{\"nonce\": 1, \"ok\": false}' >&3; "
		 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true, \\\"v\\\": 42}\" >&3; "
		 "echo hello; echo world >&2; sleep 5");
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	KJ_CHECK(json_is_true(json_object_get(rep, "ok")));
	KJ_CHECK_INT(json_integer_value(json_object_get(rep, "v")), 42);
	KJ_CHECK_INT(p.noise_lines, 2);
	json_decref(rep);
	kj_proc_release(&p, 0.1);
	KJ_CHECK_INT(p.pid, 0);
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

		snprintf(script, sizeof(script), "read line <&3; exec %s", helper("segv"));
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
	char pidfile[4200], buf[32];
	FILE *f;
	pid_t daemon_pid = 0;

	snprintf(pidfile, sizeof(pidfile), "%s/daemon.pid", kj_test_tmpdir());
	{
		char script[8192];

		/* A daemon in its own session, which kill(-pgid) cannot reach. */
		snprintf(script, sizeof(script), "%s"
			 "setsid sh -c '" HOST_PID "echo $hp > %s; exec sleep 100' & sleep 0.3; "
			 "echo \"{\\\"nonce\\\": $n, \\\"ok\\\": true}\" >&3; sleep 100",
			 ECHO_NONCE, pidfile);
		start_sh(&p, script);
	}
	KJ_CHECK_OK(kj_proc_request(&p, req(), 10, &rep, &err), &err);
	json_decref(rep);
	f = fopen(pidfile, "r");
	KJ_CHECK(f != NULL);
	KJ_CHECK(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	daemon_pid = (pid_t)strtol(buf, NULL, 10);
	KJ_CHECK(daemon_pid > 0 && kill(daemon_pid, 0) == 0);
	kj_proc_release(&p, 0.1);
	/* Killed and reaped: no such process any more. */
	KJ_CHECK(kill(daemon_pid, 0) < 0 && errno == ESRCH);
}
