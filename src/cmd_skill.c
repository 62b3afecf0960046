/*
 * cmd_skill.c - `kjudge skill DIR`: make a triton-op-verifier skill
 * directory run kjudge.
 *
 * The skill's prompts tell an agent to run `python3 <skill>/scripts/verify.py
 * --op_name ...`, `scripts/benchmark.py ...` and `scripts/
 * validate_triton_impl.py FILE --json`.  In their place this writes three
 * short Python scripts that exec kjudge (verify, benchmark, validate) with
 * the same arguments, so that the prompts work without a word changed and
 * the exit codes are kjudge's own (os.execv: the script's process becomes
 * kjudge).  Each script runs the kjudge that wrote it (its real path, from
 * /proc/self/exe), or the kjudge on PATH when that one is gone.  When
 * KJ_PYTHON is not set and the interpreter that runs the script has torch
 * and numpy (the seed's scripts ran under it), KJ_PYTHON is set to it;
 * otherwise kjudge's own choice stands (the interpreter `make install`
 * recorded, or the .venv of its checkout), so that an agent whose python3
 * has no torch still gets workers that run.
 *
 * An original script is kept once, as NAME.py.orig: a hard link made before
 * the new script replaces it (kj_write_file_atomic), so that at no moment is
 * there no NAME.py, and an .orig is never overwritten.  A script that is
 * already kjudge's (it carries SHIM_MARK) is rewritten in place.  A script
 * that is neither, beside an .orig that exists already, is refused unless
 * --force.  Every script is checked before any is written, so a refusal
 * leaves the directory as it was.
 *
 * It writes only inside DIR: DIR/scripts must be a real directory there (a
 * symbolic link to one elsewhere is refused), every file is reached through
 * that directory's descriptor, and a script that is a link, a FIFO or
 * anything but a regular file is refused (exit 2), never opened in a way
 * that could block or lead out.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "cli.h"
#include "base/fs.h"
#include "base/vec.h"
#include "base/banned.h"

enum {
	OPT_FORCE,
	OPT_NO_STRICT,
	OPT_COUNT_
};

const struct kj_cli_option kj_skill_options[] = {
	[OPT_FORCE] = { .name = "force", .type = KJ_CLI_FLAG,
			.help = "replace a script that is not kjudge's even when its "
				".orig exists already (the .orig is kept; the script "
				"is lost)" },
	[OPT_NO_STRICT] = { .name = "no-strict", .type = KJ_CLI_FLAG,
			    .help = "scripts that run verify and benchmark without --strict "
				    "(the seed's verdicts: a pass need not pass the anti-cheat "
				    "layers)" },
	[OPT_COUNT_] = { .name = NULL },
};

/* The start of a line every script this command writes carries, by which a
 * second run knows its own work from an original. */
#define SHIM_MARK "# kjudge-skill-script:"

/* verify and benchmark run with --strict unless --no-strict: the skill's
 * workflow rejects at its Step 0 (validate) what --strict fails, so an
 * agent is not told "pass" for a candidate the skill would refuse. */
static const struct {
	const char *file;
	const char *command;
	int strict;
} scripts[] = {
	{ "verify.py", "verify", 1 },
	{ "benchmark.py", "benchmark", 1 },
	{ "validate_triton_impl.py", "validate", 0 },
};

#define N_SCRIPTS (sizeof(scripts) / sizeof(scripts[0]))

/* What to do with one script's place. */
enum plan { PLAN_NEW, PLAN_REFRESH, PLAN_KEEP_ORIG, PLAN_FORCE };

/* A growing text buffer; on allocation failure `failed` is set and the
 * text stops growing. */
struct text {
	char *s;
	size_t len, cap;
	int failed;
};

__attribute__((format(printf, 2, 3)))
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = t->cap - t->len;

		if (t->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if (t->s && (size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		if (KJ__GROW(t->s, t->cap, t->len + (size_t)n + 1) != KJ_OK) {
			t->failed = 1;
			return;
		}
	}
}

/* A Python bytes literal of s: anything but plain path characters as \xNN,
 * so that no path (quotes, backslashes, bytes that are not UTF-8) can break
 * out of it. */
static void add_bytes_literal(struct text *t, const char *s)
{
	add(t, "b\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("/._-+:@,=~", c))
			add(t, "%c", c);
		else
			add(t, "\\x%02x", c);
	}
	add(t, "\"");
}

/* The script that stands for `file`, running `kjudge COMMAND [--strict]
 * ARGS`. */
static void make_script(struct text *t, const char *file, const char *command, int strict,
			const char *kjudge)
{
	add(t, "#!/usr/bin/env python3\n"
	       "# Written by `kjudge skill` (kjudge %s): runs `kjudge %s` with this\n"
	       "# script's arguments, so that what calls scripts/%s gets kjudge.\n"
	       SHIM_MARK " an original script is kept as %s.orig beside it.\n"
	       "import os\n"
	       "import shutil\n"
	       "import sys\n"
	       "\n"
	       "WROTE_ME = os.fsdecode(",
	    KJ_VERSION, command, file, file);
	add_bytes_literal(t, kjudge);
	add(t, ")\n"
	       "kjudge = WROTE_ME\n"
	       "if not os.access(kjudge, os.X_OK):\n"
	       "    # That kjudge is gone (a tree rebuilt elsewhere): the one on PATH.\n"
	       "    kjudge = shutil.which(\"kjudge\")\n"
	       "    if kjudge is None:\n"
	       "        sys.stderr.write(\"%s: kjudge is neither at %%s nor on PATH\\n\" %% WROTE_ME)\n"
	       "        sys.exit(2)\n"
	       "# The interpreter running this script is the agent's: the workers run\n"
	       "# it too when it has torch and numpy, unless KJ_PYTHON says otherwise;\n"
	       "# without them, kjudge's own Python (`kjudge doctor` says which).\n"
	       "if not os.environ.get(\"KJ_PYTHON\") and sys.executable:\n"
	       "    import importlib.util\n"
	       "    try:\n"
	       "        mine = all(importlib.util.find_spec(m) for m in (\"torch\", \"numpy\"))\n"
	       "    except (ImportError, ValueError):\n"
	       "        mine = False\n"
	       "    if mine:\n"
	       "        os.environ[\"KJ_PYTHON\"] = sys.executable\n"
	       "try:\n"
	       "    os.execv(kjudge, [kjudge, \"%s\"%s] + sys.argv[1:])\n"
	       "except OSError as e:\n"
	       "    sys.stderr.write(\"%s: cannot run %%s: %%s\\n\" %% (kjudge, e.strerror))\n"
	       "    sys.exit(2)\n",
	    file, command, strict ? ", \"--strict\"" : "", file);
}

/*
 * What stands at scripts/NAME, read through sfd (the scripts directory,
 * checked to be DIR's own): absent (0, *st untouched), a regular file (1,
 * its head into head when head is not NULL: an open that cannot block), or
 * an error printed (-1): a link, a FIFO, anything but a regular file is
 * refused, since the command replaces only what it can read and write in
 * place.
 */
static int look(const struct kj_cli_command *cmd, int sfd, const char *name, const char *shown,
		char *head, size_t size)
{
	struct stat st;
	ssize_t n;
	int fd;

	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return 0;
		kj_cli_error(cmd, "'%s': %s", shown, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		kj_cli_error(cmd, "'%s' is %s, not a regular file: kjudge skill replaces only "
			     "regular files; move it away", shown,
			     S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode)
			     ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
		return -1;
	}
	if (!head)
		return 1;
	fd = openat(sfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		kj_cli_error(cmd, "'%s': %s", shown, fd < 0 ? strerror(errno)
			     : "not a regular file any more");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((n = read(fd, head, size - 1)) < 0 && errno == EINTR)
		;
	close(fd);
	head[n > 0 ? n : 0] = '\0';
	return 1;
}

/* Copy scripts/NAME to scripts/ORIG, which must not exist (O_EXCL): for file
 * systems that have no hard links.  Returns 0, or -1 with errno set. */
static int copy_excl(int sfd, const char *name, const char *orig)
{
	char buf[65536];
	int in = openat(sfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC), out = -1;
	int saved;
	struct stat st;
	ssize_t n;

	if (in < 0 || fstat(in, &st) != 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	out = openat(sfd, orig, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     st.st_mode & 07777);
	if (out < 0)
		goto fail;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		ssize_t w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail_unlink;
		while (w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				goto fail_unlink;
			w += k;
		}
	}
	if (fsync(out) != 0 || close(out) != 0) {
		out = -1;
		goto fail_unlink;
	}
	close(in);
	return 0;
fail_unlink:
	saved = errno;
	unlinkat(sfd, orig, 0);
	errno = saved;
fail:
	saved = errno;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	errno = saved;
	return -1;
}

/* Decide what to do with scripts/NAME (path and orig are what messages
 * call it and its .orig).  Returns 0, or KJ_EXIT_USAGE after printing why
 * not. */
static int plan_script(const struct kj_cli_command *cmd, int sfd, const char *name,
		       const char *path, const char *orig, int force, enum plan *plan)
{
	char head[4096], oname[NAME_MAX + 1];
	int here;

	here = sfd < 0 ? 0 : look(cmd, sfd, name, path, head, sizeof(head));
	if (here < 0)
		return KJ_EXIT_USAGE;
	if (here == 0) {
		*plan = PLAN_NEW;
		return 0;
	}
	if (strstr(head, "\n" SHIM_MARK " ")) {
		*plan = PLAN_REFRESH;
		return 0;
	}
	snprintf(oname, sizeof(oname), "%s.orig", name);
	here = look(cmd, sfd, oname, orig, NULL, 0);
	if (here < 0)
		return KJ_EXIT_USAGE;
	if (here == 0) {
		*plan = PLAN_KEEP_ORIG;
		return 0;
	}
	if (!force)
		return kj_cli_error(cmd, "'%s' is not kjudge's and '%s' exists already: "
				    "move one of them away, or --force replaces the "
				    "script", path, orig);
	*plan = PLAN_FORCE;
	return 0;
}

/*
 * DIR's scripts directory, opened (made when missing) so that every write
 * is relative to it: a real directory inside DIR, never a link that would
 * lead the scripts out of it.  Its descriptor; -1 when it does not exist
 * and make is 0; -2 after printing why not.
 */
static int scripts_dir(const struct kj_cli_command *cmd, int dfd, const char *sdir, int make)
{
	struct stat st;
	int fd;

	if (fstatat(dfd, "scripts", &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT) {
			kj_cli_error(cmd, "'%s': %s", sdir, strerror(errno));
			return -2;
		}
		if (!make)
			return -1;
		if (mkdirat(dfd, "scripts", 0777) != 0 && errno != EEXIST) {
			kj_cli_error(cmd, "cannot make '%s': %s", sdir, strerror(errno));
			return -2;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		kj_cli_error(cmd, "'%s' is %s, not a directory: kjudge skill writes only inside "
			     "the skill's directory", sdir, S_ISLNK(st.st_mode)
			     ? "a symbolic link" : "a file");
		return -2;
	}
	fd = openat(dfd, "scripts", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		kj_cli_error(cmd, "'%s': %s", sdir, errno == ELOOP || errno == ENOTDIR
			     ? "not a directory of the skill's own" : strerror(errno));
		return -2;
	}
	return fd;
}

int kj_cmd_skill(const struct kj_cli_command *cmd, int argc, char **argv)
{
	char self[PATH_MAX], sdir[PATH_MAX], path[N_SCRIPTS][PATH_MAX],
		orig[N_SCRIPTS][PATH_MAX], oname[NAME_MAX + 1];
	enum plan plan[N_SCRIPTS];
	struct kj_cli_args a;
	struct kj_error err;
	const char *dir;
	ssize_t n;
	size_t i;
	int rc, force, strict, dfd, sfd = -1;
	mode_t mask;

	kj_cli_args_init(&a);
	if ((rc = kj_cli_start(cmd, argc, argv, &a)) >= 0)
		return rc;
	dir = a.operands[0];
	force = a.opt[OPT_FORCE].count > 0;
	strict = a.opt[OPT_NO_STRICT].count == 0;
	kj_cli_args_release(&a);

	/* DIR is the user's (a link to it is theirs to make); everything
	 * under it is reached through its descriptor. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return kj_cli_error(cmd, "'%s': not a directory", dir);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || (size_t)n >= sizeof(self) - 1) {
		close(dfd);
		return kj_cli_error(cmd, "cannot tell where this kjudge is (/proc/self/exe)");
	}
	self[n] = '\0';
	rc = KJ_EXIT_USAGE;
	if (snprintf(sdir, sizeof(sdir), "%s/scripts", dir) >= (int)sizeof(sdir)) {
		kj_cli_error(cmd, "'%s': path too long", dir);
		goto out;
	}
	sfd = scripts_dir(cmd, dfd, sdir, 0);
	if (sfd == -2)
		goto out;
	for (i = 0; i < N_SCRIPTS; i++) {
		if (snprintf(path[i], sizeof(path[i]), "%s/%s", sdir,
			     scripts[i].file) >= (int)sizeof(path[i]) ||
		    snprintf(orig[i], sizeof(orig[i]), "%s.orig", path[i]) >=
			    (int)sizeof(orig[i])) {
			kj_cli_error(cmd, "'%s': path too long", dir);
			goto out;
		}
		if (plan_script(cmd, sfd, scripts[i].file, path[i], orig[i], force, &plan[i]))
			goto out;
	}
	if (sfd < 0 && (sfd = scripts_dir(cmd, dfd, sdir, 1)) < 0)
		goto out;
	mask = umask(022);
	umask(mask);
	for (i = 0; i < N_SCRIPTS; i++) {
		struct text t = { NULL, 0, 0, 0 };

		snprintf(oname, sizeof(oname), "%s.orig", scripts[i].file);
		if (plan[i] == PLAN_KEEP_ORIG &&
		    linkat(sfd, scripts[i].file, sfd, oname, 0) != 0 &&
		    copy_excl(sfd, scripts[i].file, oname) != 0) {
			kj_cli_error(cmd, "cannot keep '%s' as '%s': %s", path[i], orig[i],
				     strerror(errno));
			goto out;
		}
		make_script(&t, scripts[i].file, scripts[i].command, strict && scripts[i].strict,
			    self);
		if (t.failed) {
			free(t.s);
			kj_cli_error(cmd, "out of memory");
			rc = KJ_EXIT_FAIL;
			goto out;
		}
		/* Runnable directly too, as the originals usually are. */
		rc = kj__write_file_at(sfd, scripts[i].file, t.s, t.len, 0755 & ~mask, &err);
		free(t.s);
		if (rc != KJ_OK) {
			kj_cli_error(cmd, "%s: %s", sdir, err.msg);
			/* A full disk is the machine's failure (exit 1). */
			rc = kj_cli_exit_for(cmd, rc);
			goto out;
		}
		printf("%s: runs kjudge %s%s%s%s%s\n", path[i], scripts[i].command,
		       strict && scripts[i].strict ? " --strict" : "",
		       plan[i] == PLAN_KEEP_ORIG ? " (the original is kept as " : "",
		       plan[i] == PLAN_KEEP_ORIG ? orig[i] : "",
		       plan[i] == PLAN_KEEP_ORIG ? ")" : "");
	}
	rc = KJ_EXIT_OK;
	if (fflush(stdout) != 0)
		rc = kj_cli_error(cmd, "cannot write to standard output");
out:
	if (sfd >= 0)
		close(sfd);
	close(dfd);
	return rc;
}
