/*
 * test_sandbox.c - what a sandboxed process can see and do.  Each test
 * starts /bin/sh in the sandbox (kj_proc_spawn_in) with one script that
 * probes one thing and answers on the protocol descriptor, so the answer
 * comes from inside.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "unit.h"

/* Answer the first request with {"nonce": N, "ok": true, "v": "..."}: what
 * expr prints, lines ended by ";". */
#define ANSWER(expr)                                                              \
	"read line <&3; "                                                         \
	"n=$(printf '%s' \"$line\" | sed 's/.*\"nonce\": *\\([0-9]*\\).*/\\1/'); " \
	"v=$( (" expr ") | tr '\\n' ';'); "                                                         \
	"printf '{\"nonce\": %s, \"ok\": true, \"v\": \"%s\"}\\n' \"$n\" \"$v\" >&3; "

struct box {
	char dir[64], root[96], rw[96], secret[96];
	struct kj_sandbox sb;
};

static void box_init(struct box *b)
{
	FILE *f;

	snprintf(b->dir, sizeof(b->dir), "/tmp/kj-sbtest-XXXXXX");
	KJ_CHECK(mkdtemp(b->dir) != NULL);
	snprintf(b->root, sizeof(b->root), "%s/root", b->dir);
	snprintf(b->rw, sizeof(b->rw), "%s/rw", b->dir);
	snprintf(b->secret, sizeof(b->secret), "%s/secret.txt", b->dir);
	mkdir(b->root, 0700);
	mkdir(b->rw, 0700);
	f = fopen(b->secret, "w");
	KJ_CHECK(f != NULL);
	fputs("secret\n", f);
	fclose(f);
	kj_sandbox_init(&b->sb);
	b->sb.root_dir = b->root;
	kj_sandbox_ro(&b->sb, "/usr");
	kj_sandbox_ro(&b->sb, "/bin");
	kj_sandbox_ro(&b->sb, "/lib");
	kj_sandbox_ro(&b->sb, "/lib64");
	kj_sandbox_ro(&b->sb, "/etc");
	kj_sandbox_rw(&b->sb, b->rw);
}

static void box_release(struct box *b)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", b->dir);
}

/* Run `script` in the box and return what it answered (static buffer). */
static const char *ask_box(struct box *b, const char *script)
{
	static char out[256];
	char sh[] = "/bin/sh", c[] = "-c", path[] = "PATH=/usr/bin:/bin", rw[128];
	char *argv[] = { sh, c, (char *)(uintptr_t)script, NULL };
	char *envp[] = { path, rw, NULL };
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	snprintf(rw, sizeof(rw), "RW=%s", b->rw);
	KJ_CHECK_OK(kj_proc_spawn_in(&p, argv, envp, b->rw, &b->sb, &err), &err);
	KJ_CHECK_OK(kj_proc_request(&p, json_pack("{s:s}", "op", "probe"), 20, &rep, &err), &err);
	snprintf(out, sizeof(out), "%s", json_string_value(json_object_get(rep, "v")));
	json_decref(rep);
	kj_proc_release(&p, 1.0);
	return out;
}

KJ_TEST(sandbox_sees_only_what_it_is_given)
{
	struct box b;

	box_init(&b);
	/* The test's directory is there only through the writable bind. */
	KJ_CHECK_STR(ask_box(&b, ANSWER("cat " "/tmp/kj-sbtest-*/secret.txt 2>/dev/null || echo hidden")),
		     "hidden;");
	KJ_CHECK_STR(ask_box(&b, ANSWER("ls /root /home /work 2>/dev/null | wc -l")), "0;");
	box_release(&b);
}

KJ_TEST(sandbox_writes_only_where_allowed)
{
	struct box b;
	char path[160];

	box_init(&b);
	KJ_CHECK_STR(ask_box(&b, ANSWER("(echo x > $RW/ok && echo yes || echo no); "
					"(echo x > /usr/kj-no 2>/dev/null && echo yes || echo no); "
					"(echo x > /kj-no 2>/dev/null && echo yes || echo no)")),
		     "yes;no;no;");
	snprintf(path, sizeof(path), "%s/ok", b.rw);
	KJ_CHECK(access(path, F_OK) == 0);
	box_release(&b);
}

KJ_TEST(sandbox_is_its_own_pid_net_and_host)
{
	struct box b;

	box_init(&b);
	/* PID 1 of its namespace, alone; host name kjudge; no interface up. */
	KJ_CHECK_STR(ask_box(&b, ANSWER("echo $$; cat /proc/1/comm")), "1;sh;");
	KJ_CHECK_STR(ask_box(&b, ANSWER("cat /proc/sys/kernel/hostname")), "kjudge;");
	/* Interfaces with traffic or up: none (lo exists, down). */
	KJ_CHECK_STR(ask_box(&b, ANSWER("awk 'NR>2 && $2 != 0' /proc/net/dev | wc -l")), "0;");
	box_release(&b);
}

KJ_TEST(sandbox_has_no_capabilities_and_no_new_privileges)
{
	struct box b;

	box_init(&b);
	KJ_CHECK_STR(ask_box(&b, ANSWER("grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status"
					" | tr -s '\\t ' ' ' | tr '\\n' ';'")),
		     "CapEff: 0000000000000000;CapBnd: 0000000000000000;NoNewPrivs: 1;Seccomp: 2;");
	box_release(&b);
}

KJ_TEST(sandbox_setup_failure_is_the_judges)
{
	struct box b;
	char sh[] = "/bin/sh";
	char *argv[] = { sh, NULL };
	char *envp[] = { NULL };
	struct kj_proc p;
	struct kj_error err;

	box_init(&b);
	b.sb.root_dir = "/nonexistent/kjudge-root";
	KJ_CHECK_INT(kj_proc_spawn_in(&p, argv, envp, NULL, &b.sb, &err), KJ_ESANDBOX);
	KJ_CHECK(strstr(err.msg, "mount the new root") != NULL);
	box_release(&b);
}
