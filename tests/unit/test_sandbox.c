/*
 * test_sandbox.c - what a sandboxed process can see and do.  Each test
 * starts /bin/sh in the sandbox (kj_proc_spawn_in) with one script that
 * probes one thing and answers on the protocol descriptor, so the answer
 * comes from inside.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "unit.h"
#include "sandbox/sandbox_internal.h"

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

/* The helper $H names inside the box (when bound). */
static char helper_path[4200] = "/nonexistent";

/* Run `script` in the box and return what it answered (static buffer). */
static const char *ask_box(struct box *b, const char *script)
{
	static char out[256];
	char sh[] = "/bin/sh", c[] = "-c", path[] = "PATH=/usr/bin:/bin", rw[128];
	char h[4300];
	char *argv[] = { sh, c, (char *)(uintptr_t)script, NULL };
	char *envp[] = { path, rw, h, NULL };
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;

	snprintf(rw, sizeof(rw), "RW=%s", b->rw);
	/* $H: the helper that reads the death signal (bind_helpers). */
	snprintf(h, sizeof(h), "H=%s", helper_path);
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

/* kj_sandbox_rw_at: a directory of the host seen at another place
 * inside, writable there and only there; the place beside it is not. */
KJ_TEST(sandbox_writable_directory_seen_elsewhere)
{
	struct box b;
	char at[128], path[200];

	box_init(&b);
	snprintf(at, sizeof(at), "%s/at", b.dir);
	KJ_CHECK(mkdir(at, 0700) == 0);
	KJ_CHECK_INT(kj_sandbox_rw_at(&b.sb, at, "/kjudge/ext/one"), KJ_OK);
	KJ_CHECK_STR(ask_box(&b, ANSWER("(echo x > /kjudge/ext/one/f && echo yes || echo no); "
					"(echo x > /kjudge/ext/two 2>/dev/null && echo yes || echo no); "
					"(ls $RW/../at 2>/dev/null | wc -l)")),
		     "yes;no;0;");
	snprintf(path, sizeof(path), "%s/f", at);
	KJ_CHECK(access(path, F_OK) == 0);
	/* A place inside that is not absolute is refused at spawn. */
	KJ_CHECK_INT(kj_sandbox_rw_at(&b.sb, at, "relative"), KJ_EINVAL);
	KJ_CHECK(b.sb.overflow);
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

/* --- the death signal, limits that fail closed, what killed judges left ------------- */

/* Start `script` in the box; the caller releases p. */
static void start_box(struct box *b, struct kj_proc *p, const char *script)
{
	char sh[] = "/bin/sh", c[] = "-c", path[] = "PATH=/usr/bin:/bin";
	char *argv[] = { sh, c, (char *)(uintptr_t)script, NULL };
	char *envp[] = { path, NULL };
	struct kj_error err;

	KJ_CHECK_OK(kj_proc_spawn_in(p, argv, envp, b->rw, &b->sb, &err), &err);
}

/* Try to start a sleeping shell in the box: kj_proc_spawn_in's code. */
static int try_box(struct box *b, struct kj_proc *p, struct kj_error *err)
{
	char sh[] = "/bin/sh", c[] = "-c", cmd[] = "sleep 100";
	char *argv[] = { sh, c, cmd, NULL };
	char *envp[] = { NULL };

	return kj_proc_spawn_in(p, argv, envp, NULL, &b->sb, err);
}

static void bind_helpers(struct box *b)
{
	static char dir[4200];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", kj_test_helper("pdeathsig"));
	slash = strrchr(dir, '/');
	*slash = '\0';
	KJ_CHECK_INT(kj_sandbox_ro(&b->sb, dir), KJ_OK);
}

KJ_TEST(sandbox_worker_cannot_clear_its_death_signal)
{
	struct box b;
	struct kj_proc p;
	struct kj_error err;
	json_t *rep = NULL;
	char script[4400];

	box_init(&b);
	bind_helpers(&b);
	/* The worker itself (PID 1 of its namespace) has SIGKILL as its
	 * parent-death signal, and the seccomp filter refuses to clear it. */
	snprintf(script, sizeof(script), "read line <&3; exec %s", kj_test_helper("pdeathsig"));
	start_box(&b, &p, script);
	KJ_CHECK_INT(p.isolation, KJ_ISOLATION_SANDBOX);
	KJ_CHECK_INT(kj_proc_request(&p, json_pack("{s:s}", "op", "x"), 20, &rep, &err), KJ_EWORKER);
	KJ_CHECK_STR(p.cap_out.data, "9 refused\n");
	kj_proc_release(&p, 0.1);
	/* Nor can a child set one of its own (there is nothing to protect
	 * there, but the filter holds for every process inside). */
	snprintf(helper_path, sizeof(helper_path), "%s", kj_test_helper("pdeathsig"));
	KJ_CHECK_STR(ask_box(&b, ANSWER("$H")), "0 refused;");
	box_release(&b);
}

/* ask_box with every '@' of tmpl (an ANSWER, whose own text holds no '@')
 * replaced by text. */
static const char *ask_box_with(struct box *b, const char *tmpl, const char *text)
{
	char script[2400];
	size_t k = 0;
	const char *t;

	for (t = tmpl; *t && k + strlen(text) + 2 < sizeof(script); t++) {
		if (*t == '@') {
			memcpy(script + k, text, strlen(text));
			k += strlen(text);
		} else {
			script[k++] = *t;
		}
	}
	KJ_CHECK(*t == '\0');
	script[k] = '\0';
	return ask_box(b, script);
}

/* What the syscalls helper says about `names` inside the box: its lines,
 * then its exit status (159 = 128 + SIGSYS when the filter killed it). */
static const char *box_syscalls(struct box *b, const char *names)
{
	snprintf(helper_path, sizeof(helper_path), "%s", kj_test_helper("syscalls"));
	return ask_box_with(b, ANSWER("$H @; echo $?"), names);
}

/* A small file with text in it (the test fails when it cannot be made). */
static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	KJ_CHECK(f != NULL);
	fputs(text, f);
	KJ_CHECK_INT(fclose(f), 0);
}

KJ_TEST(sandbox_hides_what_a_bind_would_show)
{
	struct box b;
	char view[128], cache[160], mine[200], p[300];

	/* view/ is bound read-only; view/cache/ in it is hidden, but its
	 * part view/cache/mine/ is bound writable after the hide. */
	box_init(&b);
	snprintf(view, sizeof(view), "%s/view", b.dir);
	snprintf(cache, sizeof(cache), "%s/cache", view);
	snprintf(mine, sizeof(mine), "%s/mine", cache);
	KJ_CHECK_INT(mkdir(view, 0755), 0);
	KJ_CHECK_INT(mkdir(cache, 0755), 0);
	KJ_CHECK_INT(mkdir(mine, 0755), 0);
	snprintf(p, sizeof(p), "%s/visible.txt", view);
	put_file(p, "visible\n");
	snprintf(p, sizeof(p), "%s/golden.npy", cache);
	put_file(p, "golden\n");
	KJ_CHECK_INT(kj_sandbox_ro(&b.sb, view), KJ_OK);
	KJ_CHECK_INT(kj_sandbox_hide(&b.sb, cache), KJ_OK);
	/* A hidden path that nothing shows is no error. */
	KJ_CHECK_INT(kj_sandbox_hide(&b.sb, "/nonexistent/kjudge-hidden"), KJ_OK);
	KJ_CHECK_INT(kj_sandbox_rw(&b.sb, mine), KJ_OK);
	KJ_CHECK_STR(ask_box_with(&b, ANSWER("cat @/visible.txt; ls -A @/cache; "
					     "cat @/cache/golden.npy 2>/dev/null || echo gone; "
					     "(touch @/cache/new 2>/dev/null && echo wrote) || echo read-only; "
					     "(echo m > @/cache/mine/m && echo mine-ok)"), view),
		     "visible;mine;gone;read-only;mine-ok;");
	snprintf(p, sizeof(p), "%s/m", mine);
	KJ_CHECK(access(p, F_OK) == 0);
	/* The host's directory is as it was. */
	snprintf(p, sizeof(p), "%s/golden.npy", cache);
	KJ_CHECK(access(p, F_OK) == 0);
	box_release(&b);
}

KJ_TEST(sandbox_a_hidden_path_that_is_not_a_directory_stops_the_start)
{
	struct box b;
	struct kj_proc p;
	struct kj_error err;
	char view[128], file[160];

	box_init(&b);
	snprintf(view, sizeof(view), "%s/view", b.dir);
	snprintf(file, sizeof(file), "%s/key", view);
	KJ_CHECK_INT(mkdir(view, 0755), 0);
	put_file(file, "key\n");
	kj_sandbox_ro(&b.sb, view);
	kj_sandbox_hide(&b.sb, file);
	KJ_CHECK_INT(try_box(&b, &p, &err), KJ_ESANDBOX);
	KJ_CHECK(strstr(err.msg, "hide a directory") != NULL);
	box_release(&b);
}

/* mkdir -p for one level, the test failing if it cannot. */
static void make_dir(const char *path, mode_t mode)
{
	KJ_CHECK_INT(mkdir(path, mode), 0);
	KJ_CHECK_INT(chmod(path, mode), 0);  /* whatever the umask */
}

KJ_TEST(sandbox_masks_what_no_other_user_may_read)
{
	struct box b;
	char view[128], p[4400];
	const char *got;
	size_t n;
	int i;

	/* A masked tree of the test's own files: the process in the box is
	 * their owner, so only the masks keep the private ones out. */
	box_init(&b);
	snprintf(view, sizeof(view), "%s/view", b.dir);
	make_dir(view, 0755);
	snprintf(p, sizeof(p), "%s/public", view);
	put_file(p, "public\n");
	snprintf(p, sizeof(p), "%s/secret", view);
	put_file(p, "secret\n");
	KJ_CHECK_INT(chmod(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/group-only", view);
	put_file(p, "group\n");
	KJ_CHECK_INT(chmod(p, 0640), 0);
	snprintf(p, sizeof(p), "%s/keys", view);
	make_dir(p, 0700);
	snprintf(p, sizeof(p), "%s/keys/id", view);
	put_file(p, "key\n");
	KJ_CHECK_INT(chmod(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/sub", view);
	make_dir(p, 0755);
	snprintf(p, sizeof(p), "%s/sub/deep-secret", view);
	put_file(p, "deep\n");
	KJ_CHECK_INT(chmod(p, 0400), 0);
	/* A directory deeper than the walk goes when it goes all the way
	 * down (32 levels) is masked whole: what is not looked at is not
	 * shown. */
	n = (size_t)snprintf(p, sizeof(p), "%s/deep", view);
	for (i = 0; i < 33; i++) {
		make_dir(p, 0755);
		n += (size_t)snprintf(p + n, sizeof(p) - n, "/d");
	}
	KJ_CHECK_INT(kj_sandbox_ro(&b.sb, view), KJ_OK);
	KJ_CHECK_INT(kj_sandbox_mask(&b.sb, view, KJ_SANDBOX_MASK_ALL), KJ_OK);
	got = ask_box_with(&b, ANSWER("cd @; cat public; "
				      "for f in secret group-only keys/id sub/deep-secret; do "
				      "cat $f 2>/dev/null || echo no-$f; done; "
				      "ls keys 2>/dev/null || echo no-list; "
				      "stat -c %a secret keys; "
				      "(chmod 644 secret 2>/dev/null && echo chmod) || echo no-chmod; "
				      "ls deep/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d "
				      "2>/dev/null | wc -l; "
				      "ls deep/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d "
				      "2>/dev/null || echo no-deep"),
			   view);
	KJ_CHECK_STR(got, "public;no-secret;no-group-only;no-keys/id;no-sub/deep-secret;no-list;"
			  "0;0;no-chmod;1;no-deep;");
	/* The host's files are as they were. */
	snprintf(p, sizeof(p), "%s/secret", view);
	KJ_CHECK(access(p, R_OK) == 0);
	/* Looking one level down only: the private entries of view are
	 * masked, those of its directories are not. */
	box_release(&b);
	box_init(&b);
	snprintf(view, sizeof(view), "%s/view", b.dir);
	make_dir(view, 0755);
	snprintf(p, sizeof(p), "%s/secret", view);
	put_file(p, "secret\n");
	KJ_CHECK_INT(chmod(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/sub", view);
	make_dir(p, 0755);
	snprintf(p, sizeof(p), "%s/sub/secret", view);
	put_file(p, "deeper\n");
	KJ_CHECK_INT(chmod(p, 0600), 0);
	KJ_CHECK_INT(kj_sandbox_ro(&b.sb, view), KJ_OK);
	KJ_CHECK_INT(kj_sandbox_mask(&b.sb, view, 1), KJ_OK);
	KJ_CHECK_STR(ask_box_with(&b, ANSWER("cat @/secret 2>/dev/null || echo masked; "
					     "cat @/sub/secret"), view),
		     "masked;deeper;");
	KJ_CHECK_INT(kj_sandbox_mask(&b.sb, view, -1), KJ_EINVAL);
	KJ_CHECK_INT(kj_sandbox_mask(&b.sb, view, KJ_SANDBOX_MASK_DEPTH + 1), KJ_EINVAL);
	box_release(&b);
}

KJ_TEST(sandbox_a_mask_that_cannot_be_applied_stops_the_start)
{
	struct box b;
	struct kj_proc p;
	struct kj_error err;
	char view[128], name[201];
	int i, fd;

	/* An entry whose path is longer than the walk can hold (25 levels of
	 * 200 bytes, made one below the other): it cannot be looked at, so
	 * the start fails rather than show it unlooked at. */
	box_init(&b);
	snprintf(view, sizeof(view), "%s/view", b.dir);
	make_dir(view, 0755);
	memset(name, 'n', 200);
	name[200] = '\0';
	fd = open(view, O_RDONLY | O_DIRECTORY);
	KJ_CHECK(fd >= 0);
	for (i = 0; i < 25 && fd >= 0; i++) {
		int sub;

		KJ_CHECK_INT(mkdirat(fd, name, 0755), 0);
		sub = openat(fd, name, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = sub;
	}
	KJ_CHECK(fd >= 0);
	close(fd);
	KJ_CHECK_INT(kj_sandbox_ro(&b.sb, view), KJ_OK);
	KJ_CHECK_INT(kj_sandbox_mask(&b.sb, view, KJ_SANDBOX_MASK_ALL), KJ_OK);
	KJ_CHECK_INT(try_box(&b, &p, &err), KJ_ESANDBOX);
	if (!strstr(err.msg, "ame too long"))
		fprintf(stderr, "  the start's message: %s\n", err.msg);
	KJ_CHECK(strstr(err.msg, "ame too long") != NULL);
#ifndef __SANITIZE_ADDRESS__
	/* Under AddressSanitizer its interceptors meet the long name first,
	 * in the child, before the mask's own step names itself: the start
	 * still fails, with the same cause. */
	KJ_CHECK(strstr(err.msg, "mask ") != NULL);
#endif
	box_release(&b);
}

KJ_TEST(sandbox_proc_and_dev_give_nothing_of_the_host)
{
	struct box b;
	struct stat st;
	char want[64] = "";

	box_init(&b);
	/* /proc's own entries are read-only: a sysctl cannot even be opened
	 * for writing (">>" opens it and writes nothing, so a regression
	 * changes no setting of the machine); the process's own entries can
	 * (CUDA writes there). */
	KJ_CHECK_STR(ask_box(&b, ANSWER("(: >> /proc/sys/kernel/core_pattern) 2>/dev/null && "
					"echo opened || echo refused; "
					"(: >> /proc/sys/vm/drop_caches) 2>/dev/null && "
					"echo opened || echo refused; "
					"(: >> /proc/self/oom_score_adj) 2>/dev/null && "
					"echo own || echo not-own")),
		     "refused;refused;own;");
	/* /proc's entries only root may read are masked (mode 0 inside). */
	KJ_CHECK_STR(ask_box(&b, ANSWER("for f in /proc/timer_list /proc/slabinfo /proc/kcore "
					"/proc/vmallocinfo; do [ -e $f ] && stat -c %a $f; done "
					"| sort -u")),
		     "0;");
	/* /etc's too, where the host has them (the shadow files). */
	if (stat("/etc/shadow", &st) == 0 && !(st.st_mode & S_IROTH) &&
	    (st.st_mode & (S_IRUSR | S_IRGRP)))
		snprintf(want, sizeof(want), "0;");
	KJ_CHECK_STR(ask_box(&b, ANSWER("[ -e /etc/shadow ] && stat -c %a /etc/shadow")), want);
	/* No terminal, whatever the judge's session has. */
	KJ_CHECK_STR(ask_box(&b, ANSWER("ls /dev")), "full;null;random;shm;urandom;zero;");
	box_release(&b);
}

/*
 * Run `script` in a box whose view holds a directory with a tmpfs mounted
 * under it, from a child process in a mount namespace of its own (where
 * that tmpfs is made); the answer, or "skip" when the machine makes no
 * namespace for it.
 */
static const char *ask_box_with_submount(const char *script, int no_setattr)
{
	static char out[256];
	int fds[2];
	pid_t pid;
	ssize_t n;

	KJ_CHECK_INT(pipe(fds), 0);
	pid = fork();
	KJ_CHECK(pid >= 0);
	if (pid == 0) {
		struct box b;
		char view[128], sub[160];
		const char *got = "skip";
		uid_t uid = getuid();
		gid_t gid = getgid();

		close(fds[0]);
		if (unshare(CLONE_NEWNS) < 0) {
			char map[64];

			if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
				goto answer;
			kj__write_text("/proc/self/setgroups", "deny");
			snprintf(map, sizeof(map), "0 %d 1", (int)uid);
			kj__write_text("/proc/self/uid_map", map);
			snprintf(map, sizeof(map), "0 %d 1", (int)gid);
			kj__write_text("/proc/self/gid_map", map);
		}
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			goto answer;
		box_init(&b);
		snprintf(view, sizeof(view), "%s/view", b.dir);
		snprintf(sub, sizeof(sub), "%s/sub", view);
		if (mkdir(view, 0755) < 0 || mkdir(sub, 0755) < 0 ||
		    mount("kj-test-sub", sub, "tmpfs", 0, "size=64k") < 0)
			goto answer;
		kj_sandbox_ro(&b.sb, view);
		kj__sandbox_no_mount_setattr = no_setattr;
		got = ask_box_with(&b, script, view);
		umount2(sub, MNT_DETACH);
		box_release(&b);
answer:
		if (write(fds[1], got, strlen(got)) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	KJ_CHECK_INT(waitpid(pid, NULL, 0), pid);
	return out;
}

KJ_TEST(sandbox_read_only_binds_are_read_only_all_the_way_down)
{
	const char *script = ANSWER("(echo x > @/sub/new) 2>/dev/null && echo wrote || echo read-only; "
				    "ls @/sub | wc -l");
	int no_setattr;

	/* With mount_setattr (Linux 5.12), and the way of older kernels:
	 * each mount under the bind remounted as mountinfo lists it. */
	for (no_setattr = 0; no_setattr < 2; no_setattr++) {
		const char *got = ask_box_with_submount(script, no_setattr);

		if (!strcmp(got, "skip")) {
			fprintf(stderr, "  note: no mount namespace for the test here\n");
			return;
		}
		KJ_CHECK_STR(got, "read-only;0;");
	}
}

KJ_TEST(sandbox_refuses_namespaces_mounts_io_uring_and_tracing)
{
	struct box b;

	box_init(&b);
	bind_helpers(&b);
	/* Threads and processes still start: plain clone, and pthreads,
	 * whose clone3 is refused with ENOSYS so that glibc falls back. */
	KJ_CHECK_STR(box_syscalls(&b, "clone_plain thread clone3"),
		     "clone_plain ok;thread ok;clone3 ENOSYS;0;");
	KJ_CHECK_STR(box_syscalls(&b, "clone_newuser clone_newns clone_newpid clone_newnet "
				      "clone_newipc clone_newuts clone_newcgroup unshare setns"),
		     "clone_newuser EPERM;clone_newns EPERM;clone_newpid EPERM;"
		     "clone_newnet EPERM;clone_newipc EPERM;clone_newuts EPERM;"
		     "clone_newcgroup EPERM;unshare EPERM;setns EPERM;0;");
	KJ_CHECK_STR(box_syscalls(&b, "open_tree move_mount fsopen fsconfig fsmount fspick "
				      "mount_setattr"),
		     "open_tree EPERM;move_mount EPERM;fsopen EPERM;fsconfig EPERM;"
		     "fsmount EPERM;fspick EPERM;mount_setattr EPERM;0;");
	KJ_CHECK_STR(box_syscalls(&b, "io_uring_setup io_uring_enter io_uring_register ptrace "
				      "process_vm_readv process_vm_writev pidfd_getfd"),
		     "io_uring_setup EPERM;io_uring_enter EPERM;io_uring_register EPERM;"
		     "ptrace EPERM;process_vm_readv EPERM;process_vm_writev EPERM;"
		     "pidfd_getfd EPERM;0;");
	box_release(&b);
}

KJ_TEST(sandbox_kills_a_call_of_another_abi)
{
	struct box b;
	char out[256];
	FILE *f;

	box_init(&b);
	bind_helpers(&b);
	/* x32's numbers (the x32 bit set) and i386's int $0x80 (another
	 * audit architecture): the process is killed with SIGSYS before it
	 * can say what the call returned. */
	KJ_CHECK_STR(box_syscalls(&b, "x32"), "159;");
#if defined(__x86_64__)
	/* Where the kernel runs i386 code at all (outside the box getpid
	 * answers), the filter is what kills it; where it does not, the
	 * call fails however it is made. */
	snprintf(out, sizeof(out), "%s i386", kj_test_helper("syscalls"));
	f = popen(out, "r");
	KJ_CHECK(f != NULL);
	if (!fgets(out, sizeof(out), f))
		out[0] = '\0';
	pclose(f);
	if (!strcmp(out, "i386 ok\n"))
		KJ_CHECK_STR(box_syscalls(&b, "i386"), "159;");
	else
		fprintf(stderr, "  note: this kernel runs no i386 code (%s)\n", out);
#else
	(void)out;
	(void)f;
#endif
	box_release(&b);
}

/* A directory laid out like a v1 hierarchy whose groups take no limit:
 * mkdir works, the limit files are not there. */
static const char *fake_v1_root(void)
{
	static char root[4200];
	char p[4300];
	FILE *f;

	snprintf(root, sizeof(root), "%s/cgroup", kj_test_tmpdir());
	snprintf(p, sizeof(p), "%s/memory", root);
	KJ_CHECK_INT(mkdir(root, 0700), 0);
	KJ_CHECK_INT(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/memory/tasks", root);
	f = fopen(p, "w");
	KJ_CHECK(f != NULL);
	fclose(f);
	return root;
}

KJ_TEST(sandbox_cgroup_limit_that_cannot_be_written_is_the_judges_error)
{
	struct box b;
	struct kj_proc p;
	struct kj_error err;
	char group[4300];

	box_init(&b);
	b.sb.mem_bytes = 256LL << 20;
	b.sb.cgroup_root = fake_v1_root();
	KJ_CHECK_INT(try_box(&b, &p, &err), KJ_ESANDBOX);
	KJ_CHECK(strstr(err.msg, "memory.limit_in_bytes") != NULL);
	KJ_CHECK(strstr(err.msg, "No such file") != NULL);
	/* The group made for it is gone again, and so is the process. */
	snprintf(group, sizeof(group), "%s/memory/kjudge-%d-0", b.sb.cgroup_root, (int)getpid());
	KJ_CHECK(access(group, F_OK) < 0 && errno == ENOENT);
	box_release(&b);
}

KJ_TEST(sandbox_cgroup_limit_the_kernel_refuses_is_the_judges_error)
{
	struct box b;
	struct kj_proc p;
	struct kj_error err;

	box_init(&b);
	b.sb.nproc = 64;
	start_box(&b, &p, "sleep 100");
	if (p.limits.pids_max == 0) {
		/* No pids cgroup to write here: nothing the kernel can refuse. */
		fprintf(stderr, "  note: no writable pids cgroup on this machine\n");
		kj_proc_release(&p, 0);
		box_release(&b);
		return;
	}
	KJ_CHECK_INT(p.limits.pids_max, 64);
	kj_proc_release(&p, 0);
	/* pids.max takes at most the kernel's PID_MAX_LIMIT (4194304). */
	b.sb.nproc = 5000000;
	KJ_CHECK_INT(try_box(&b, &p, &err), KJ_ESANDBOX);
	KJ_CHECK(strstr(err.msg, "pids.max") != NULL);
	KJ_CHECK(strstr(err.msg, "Invalid argument") != NULL);
	box_release(&b);
}

KJ_TEST(sandbox_without_cgroups_records_rlimits_only)
{
	struct box b;
	struct kj_proc p;
	json_t *lim;

	box_init(&b);
	b.sb.mem_bytes = 256LL << 20;
	b.sb.nproc = 64;
	b.sb.cpu_s = 100;
	b.sb.cgroup_root = kj_test_tmpdir(); /* no hierarchy there */
	start_box(&b, &p, "sleep 100");
	KJ_CHECK_INT(p.limits.cgroup, 0);
	KJ_CHECK_INT(p.limits.mem_bytes, 0);
	KJ_CHECK_INT(p.limits.pids_max, 0);
	KJ_CHECK_INT(p.limits.nproc, 64);
	lim = kj_proc_limits_json(&p);
	KJ_CHECK(json_is_null(json_object_get(lim, "cgroup")));
	KJ_CHECK_INT(json_integer_value(json_object_get(lim, "memory_bytes")), 0);
	KJ_CHECK(json_real_value(json_object_get(lim, "cpu_s")) == 100.0);
	KJ_CHECK_STR(json_string_value(json_object_get(lim, "isolation")), "sandbox");
	json_decref(lim);
	kj_proc_release(&p, 0);
	box_release(&b);
}

/* The first number in a small file. */
static long long file_ll(const char *dir, const char *name)
{
	char p[700], buf[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strtoll(buf, NULL, 10);
}

KJ_TEST(sandbox_limits_in_force_are_what_the_cgroup_holds)
{
	struct box b;
	struct kj_proc p;
	const char *group;

	box_init(&b);
	b.sb.mem_bytes = 256LL << 20;
	b.sb.nproc = 64;
	start_box(&b, &p, "sleep 100");
	if (!p.limits.cgroup) {
		fprintf(stderr, "  note: no writable cgroup on this machine\n");
	} else if (p.limits.cgroup == 1) {
		KJ_CHECK_INT(p.limits.mem_bytes, b.sb.mem_bytes);
		KJ_CHECK_INT(file_ll(p.cg.mem, "memory.limit_in_bytes"), b.sb.mem_bytes);
		KJ_CHECK_INT(file_ll(p.cg.mem, "cgroup.procs"), p.pid);
		if (p.cg.pids[0]) {
			KJ_CHECK_INT(file_ll(p.cg.pids, "pids.max"), 64);
			KJ_CHECK_INT(file_ll(p.cg.pids, "cgroup.procs"), p.pid);
		}
	} else {
		group = p.cg.mem;
		if (p.limits.mem_bytes)
			KJ_CHECK_INT(file_ll(group, "memory.max"), b.sb.mem_bytes);
		if (p.limits.pids_max)
			KJ_CHECK_INT(file_ll(group, "pids.max"), 64);
		KJ_CHECK_INT(file_ll(group, "cgroup.procs"), p.pid);
	}
	kj_proc_release(&p, 0);
	box_release(&b);
}

KJ_TEST(sandbox_too_many_paths_is_refused)
{
	struct box b;
	struct kj_proc p;
	struct kj_error err;
	char sh[] = "/bin/sh";
	char *argv[] = { sh, NULL };
	char *envp[] = { NULL };
	char want[32];
	int i, rc = KJ_OK;

	box_init(&b);
	for (i = 0; i < KJ_SANDBOX_MAX_PATHS && rc == KJ_OK; i++)
		rc = kj_sandbox_ro(&b.sb, "/usr");
	KJ_CHECK_INT(rc, KJ_ELIMIT);
	KJ_CHECK_INT(kj_proc_spawn_in(&p, argv, envp, NULL, &b.sb, &err), KJ_ESANDBOX);
	snprintf(want, sizeof(want), "more than %d", KJ_SANDBOX_MAX_PATHS);
	KJ_CHECK(strstr(err.msg, want) != NULL);
	box_release(&b);
}

/* A pid that no longer runs: a child's, reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	KJ_CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	KJ_CHECK_INT(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void count_path(const char *path, void *arg)
{
	(void)path;
	++*(int *)arg;
}

KJ_TEST(sweep_finds_only_what_dead_runs_left)
{
	char p[4300];
	int n = 0;
	pid_t dead = dead_pid();

	/* A dead judge's entries (two), a live one's, and names that are
	 * not of the form: only the dead one's are passed on. */
	snprintf(p, sizeof(p), "%s/stage-%d-abc", kj_test_tmpdir(), (int)dead);
	KJ_CHECK_INT(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/stage-%d-", kj_test_tmpdir(), (int)dead);
	KJ_CHECK_INT(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/other-%d-abc", kj_test_tmpdir(), (int)dead);
	KJ_CHECK_INT(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/stage-x%d-", kj_test_tmpdir(), (int)dead);
	KJ_CHECK_INT(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/stage-%d-live", kj_test_tmpdir(), (int)getpid());
	KJ_CHECK_INT(mkdir(p, 0700), 0);
	KJ_CHECK_INT(kj__sweep_dead_runs(kj_test_tmpdir(), "stage-", count_path, &n), 2);
	KJ_CHECK_INT(n, 2);
}

KJ_TEST(sweep_kills_and_removes_a_killed_judges_cgroups)
{
	struct box b;
	struct kj_proc p;
	char group[600], procs[700], v[32];
	pid_t dead = dead_pid(), sleeper;
	int status;

	/* Where cgroups can be written, a group named for a dead judge with
	 * a process left in it, as a judge killed outside a PID namespace
	 * leaves it. */
	box_init(&b);
	start_box(&b, &p, "sleep 100");
	if (!p.limits.cgroup || !p.cg.mem[0]) {
		fprintf(stderr, "  note: no writable cgroup on this machine\n");
		kj_proc_release(&p, 0);
		KJ_CHECK_INT(kj_cgroup_sweep(NULL), 0);
		box_release(&b);
		return;
	}
	snprintf(group, sizeof(group), "%.*s/kjudge-%d-0",
		 (int)(strrchr(p.cg.mem, '/') - p.cg.mem), p.cg.mem, (int)dead);
	kj_proc_release(&p, 0);
	KJ_CHECK_INT(mkdir(group, 0700), 0);
	sleeper = fork();
	KJ_CHECK(sleeper >= 0);
	if (sleeper == 0) {
		execl("/bin/sleep", "sleep", "100", (char *)NULL);
		_exit(127);
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", group);
	snprintf(v, sizeof(v), "%d", (int)sleeper);
	{
		FILE *f = fopen(procs, "w");

		KJ_CHECK(f != NULL);
		fputs(v, f);
		KJ_CHECK_INT(fclose(f), 0);
	}
	/* Another judge's first start may sweep it first: what counts is
	 * that the process is killed and the group gone. */
	(void)kj_cgroup_sweep(NULL);
	KJ_CHECK_INT(waitpid(sleeper, &status, 0), sleeper);
	KJ_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	KJ_CHECK(access(group, F_OK) < 0 && errno == ENOENT);
	box_release(&b);
}

/* A template's child builds the sandbox the judge packed (spawn.h,
 * "Templates"): every field kj__sandbox_child reads comes back. */
KJ_TEST(sandbox_description_round_trip)
{
	struct kj_sandbox sb, got;
	size_t len = 0;
	char *buf;
	int i;

	kj_sandbox_init(&sb);
	sb.root_dir = "/tmp/root dir";
	kj_sandbox_ro(&sb, "/usr");
	kj_sandbox_hide(&sb, "/home");
	kj_sandbox_mask(&sb, "/etc", 2);
	kj_sandbox_rw(&sb, "/tmp/a\tb\nc");
	kj_sandbox_rw_at(&sb, "/tmp/x", "/kjudge/ext");
	sb.gpu = 1;
	sb.keep_links = 1;
	sb.cpu_s = 3600.7;
	sb.fsize_bytes = 1LL << 40;
	sb.nproc = 512;
	sb.nofile = 1024;
	sb.tmp_bytes = 64LL << 20;
	sb.mem_bytes = 123; /* the judge's (cgroup), not the child's */
	buf = kj__sandbox_pack(&sb, &len);
	KJ_CHECK(buf != NULL);
	KJ_CHECK_INT(kj__sandbox_unpack(buf, len, &got), 0);
	KJ_CHECK_STR(got.root_dir, "/tmp/root dir");
	KJ_CHECK_INT(got.n_ro, 3);
	for (i = 0; i < 3; i++) {
		KJ_CHECK_STR(got.ro[i], sb.ro[i]);
		KJ_CHECK_INT(got.ro_how[i], sb.ro_how[i]);
		KJ_CHECK_INT(got.ro_depth[i], sb.ro_depth[i]);
	}
	KJ_CHECK_INT(got.n_rw, 2);
	KJ_CHECK_STR(got.rw[0], "/tmp/a\tb\nc");
	KJ_CHECK(got.rw_at[0] == NULL);
	KJ_CHECK_STR(got.rw[1], "/tmp/x");
	KJ_CHECK_STR(got.rw_at[1], "/kjudge/ext");
	KJ_CHECK_INT(got.gpu, 1);
	KJ_CHECK_INT(got.keep_links, 1);
	KJ_CHECK(got.cpu_s == 3600.0);  /* whole seconds, as RLIMIT_CPU */
	KJ_CHECK(got.fsize_bytes == 1LL << 40);
	KJ_CHECK_INT(got.nproc, 512);
	KJ_CHECK_INT(got.nofile, 1024);
	KJ_CHECK(got.tmp_bytes == 64LL << 20);
	KJ_CHECK(got.mem_bytes == 0);
	free(buf);
}

/* What is not a description is refused, never half applied. */
/* A literal's bytes, without the NUL the compiler adds. */
#define D(s) { s, sizeof(s) - 1 }

KJ_TEST(sandbox_description_refuses_what_is_not_one)
{
	static const struct {
		const char *bytes;
		size_t len;
	} bad[] = {
		D(""),
		D("root\0/r\0"),                          /* no end */
		D("end\0"),                               /* no root */
		D("root\0/r\0end\0x"),                   /* after the end */
		D("root\0/r\0ro\0" "0\0" "0\0usr\0end\0"), /* relative */
		D("root\0/r\0ro\0" "7\0" "0\0/usr\0end\0"), /* unknown how */
		D("root\0/r\0ro\0" "0\0" "300\0/usr\0end\0"),
		D("root\0/r\0rwat\0/a\0b\0end\0"),         /* relative inside */
		D("root\0/r\0cpu\0" "1x\0end\0"),
		D("root\0/r\0cpu\0" "-1\0end\0"),
		D("root\0/r\0nproc\0" "99999999999999999999\0end\0"),
		D("root\0/r\0what\0" "1\0end\0"),
		D("root\0/r\0gpu"),                       /* no NUL */
	};
	struct kj_sandbox got;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		if (kj__sandbox_unpack(bad[i].bytes, bad[i].len, &got) != -1 || errno != EINVAL) {
			fprintf(stderr, "    description %zu was taken\n", i);
			KJ_CHECK(0);
		}
	}
}

/* More paths than a sandbox holds are refused too. */
KJ_TEST(sandbox_description_refuses_too_many_paths)
{
	char buf[8192];
	struct kj_sandbox got;
	size_t n = 0;
	int i;

	memcpy(buf, "root\0/r\0", 8);
	n = 8;
	for (i = 0; i <= KJ_SANDBOX_MAX_PATHS; i++) {
		memcpy(buf + n, "rw\0/p\0", 6);
		n += 6;
	}
	memcpy(buf + n, "end\0", 4);
	n += 4;
	KJ_CHECK_INT(kj__sandbox_unpack(buf, n, &got), -1);
}
