/*
 * test_spec.c - the spec layer's corners: paths resolved inside a tree
 * (.., absolute paths, links in and out), and every strategy read and
 * evaluated on made-up outcomes (tests/cli/t0760 and t0761 run the whole
 * command).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "kjudge/spec.h"
#include "unit.h"

/* A tree: T/a/f.txt, T/a/in -> f.txt, T/a/up -> ../b, T/b/g.txt,
 * T/a/out -> /etc, T/a/abs_in -> T/b/g.txt, T/a/loop -> loop. */
static const char *tree(void)
{
	static char t[PATH_MAX + 8];
	char p[PATH_MAX + 64], q[PATH_MAX + 64], base[PATH_MAX];
	FILE *f;

	if (!realpath(kj_test_tmpdir(), base))
		return NULL;
	snprintf(t, sizeof(t), "%s/t", base);
	mkdir(t, 0755);
	snprintf(p, sizeof(p), "%s/a", t);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/b", t);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/a/f.txt", t);
	if ((f = fopen(p, "w")))
		fclose(f);
	snprintf(p, sizeof(p), "%s/b/g.txt", t);
	if ((f = fopen(p, "w")))
		fclose(f);
	snprintf(p, sizeof(p), "%s/a/in", t);
	symlink("f.txt", p);
	snprintf(p, sizeof(p), "%s/a/up", t);
	symlink("../b", p);
	snprintf(p, sizeof(p), "%s/a/out", t);
	symlink("/etc", p);
	snprintf(p, sizeof(p), "%s/a/loop", t);
	symlink("loop", p);
	snprintf(p, sizeof(p), "%s/a/abs_in", t);
	snprintf(q, sizeof(q), "%s/b/g.txt", t);
	symlink(q, p);
	snprintf(p, sizeof(p), "%s/a/esc", t);
	symlink("../../..", p);
	return t;
}

KJ_TEST(spec_resolve_stays_inside)
{
	const char *t = tree();
	char out[PATH_MAX], want[PATH_MAX + 64], start[PATH_MAX + 16];
	struct kj_error e;

	KJ_CHECK(t != NULL);
	snprintf(start, sizeof(start), "%s/a", t);
	/* Plain, '.', '..' within, links inside. */
	KJ_CHECK_INT(kj_spec_resolve(t, start, "f.txt", 1, "f", out, &e), KJ_OK);
	snprintf(want, sizeof(want), "%s/a/f.txt", t);
	KJ_CHECK_STR(out, want);
	KJ_CHECK_INT(kj_spec_resolve(t, start, "./../a/./f.txt", 1, "f", out, &e), KJ_OK);
	KJ_CHECK_STR(out, want);
	KJ_CHECK_INT(kj_spec_resolve(t, start, "in", 1, "f", out, &e), KJ_OK);
	KJ_CHECK_STR(out, want);
	KJ_CHECK_INT(kj_spec_resolve(t, start, "up/g.txt", 1, "f", out, &e), KJ_OK);
	snprintf(want, sizeof(want), "%s/b/g.txt", t);
	KJ_CHECK_STR(out, want);
	KJ_CHECK_INT(kj_spec_resolve(t, start, "abs_in", 1, "f", out, &e), KJ_OK);
	KJ_CHECK_STR(out, want);
	/* An absolute path that names a place inside is walked too. */
	KJ_CHECK_INT(kj_spec_resolve(t, start, want, 1, "f", out, &e), KJ_OK);
	KJ_CHECK_STR(out, want);
	/* A new output: its parent must exist. */
	KJ_CHECK_INT(kj_spec_resolve(t, start, "new.txt", 0, "f", out, &e), KJ_OK);
	KJ_CHECK_INT(kj_spec_resolve(t, start, "nodir/new.txt", 0, "f", out, &e), KJ_ENOENT);
	KJ_CHECK_STR(e.msg, "f: 'nodir/new.txt' does not exist");
	KJ_CHECK_INT(kj_spec_resolve(t, start, "new.txt", 1, "f", out, &e), KJ_ENOENT);
}

KJ_TEST(spec_resolve_refuses_escapes)
{
	const char *t = tree();
	char out[PATH_MAX], start[PATH_MAX + 16];
	struct kj_error e;

	KJ_CHECK(t != NULL);
	snprintf(start, sizeof(start), "%s/a", t);
	KJ_CHECK_INT(kj_spec_resolve(t, start, "../../x", 0, "files.x[0]", out, &e), KJ_EINVAL);
	KJ_CHECK_STR(e.msg, "files.x[0]: '../../x' leaves the project tree");
	KJ_CHECK_INT(kj_spec_resolve(t, start, "/etc/passwd", 1, "f", out, &e), KJ_EINVAL);
	KJ_CHECK_STR(e.msg, "f: '/etc/passwd' is an absolute path outside the project tree");
	KJ_CHECK_INT(kj_spec_resolve(t, start, "out/passwd", 1, "f", out, &e), KJ_EINVAL);
	KJ_CHECK_STR(e.msg, "f: 'out/passwd' leaves the project tree through the symbolic link "
		     "'a/out'");
	KJ_CHECK_INT(kj_spec_resolve(t, start, "esc/etc", 1, "f", out, &e), KJ_EINVAL);
	KJ_CHECK_STR(e.msg, "f: 'esc/etc' leaves the project tree through the symbolic link "
		     "'a/esc'");
	KJ_CHECK_INT(kj_spec_resolve(t, start, "loop", 1, "f", out, &e), KJ_EINVAL);
	KJ_CHECK_INT(kj_spec_resolve(t, start, "", 1, "f", out, &e), KJ_EINVAL);
	/* A prefix of the tree's name is not the tree. */
	{
		char sib[PATH_MAX + 16];

		snprintf(sib, sizeof(sib), "%sx/y", t);
		KJ_CHECK_INT(kj_spec_resolve(t, start, sib, 0, "f", out, &e), KJ_EINVAL);
	}
}

KJ_TEST(spec_open_nofollow_refuses_links)
{
	const char *t = tree();
	char p[PATH_MAX + 32];
	int fd;

	KJ_CHECK(t != NULL);
	snprintf(p, sizeof(p), "%s/a/f.txt", t);
	fd = kj_spec_open_nofollow(p, O_RDONLY);
	KJ_CHECK(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/a/in", t);
	KJ_CHECK(kj_spec_open_nofollow(p, O_RDONLY) < 0);
	snprintf(p, sizeof(p), "%s/a/up/g.txt", t);
	KJ_CHECK(kj_spec_open_nofollow(p, O_RDONLY) < 0);
}

/* Parse one strategy from JSON text; st->error or st's fields say how. */
static int parse(struct kj_spec_strategy *st, const char *text, const char *work)
{
	json_t *j = json_loads(text, 0, NULL);
	struct kj_error e;
	int rc;

	rc = kj_spec_strategy_parse(st, j, "verification.strategies[0]", work, work, &e);
	json_decref(j);
	return rc;
}

static const char *eval(const char *text, const char *out, int code, char *detail, size_t size)
{
	struct kj_spec_strategy st;
	struct kj_spec_outcome o = { 1, code, out, strlen(out), kj_test_tmpdir() };
	const char *status = "?";

	if (parse(&st, text, kj_test_tmpdir()) != KJ_OK)
		return "parse failed";
	if (kj_spec_strategy_eval(&st, &o, &status, detail, size) != KJ_OK)
		status = "eval failed";
	kj_spec_strategy_release(&st);
	return status;
}

KJ_TEST(spec_strategies_pass_and_fail)
{
	char d[1024];

	KJ_CHECK_STR(eval("{\"type\":\"exit_code\",\"expected\":0}", "", 0, d, sizeof(d)), "PASS");
	KJ_CHECK_STR(eval("{\"type\":\"exit_code\",\"expected\":0.0}", "", 0, d, sizeof(d)), "PASS");
	KJ_CHECK_STR(eval("{\"type\":\"exit_code\",\"expected\":1}", "", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(d, "exit code 0, expected 1");
	KJ_CHECK_STR(eval("{\"type\":\"stdout_pattern\",\"pattern\":\"^b$\"}", "a\nb\n", 0, d,
			  sizeof(d)), "FAIL");
	KJ_CHECK_STR(eval("{\"type\":\"stdout_pattern\",\"pattern\":\"^b$\",\"multiline\":true}",
			  "a\nb\n", 0, d, sizeof(d)), "PASS");
	/* Python's $ matches before a final newline. */
	KJ_CHECK_STR(eval("{\"type\":\"stdout_pattern\",\"pattern\":\"b$\"}", "a\nb\n", 0, d,
			  sizeof(d)), "PASS");
	/* \d is Unicode's, as Python's on str: an Arabic-Indic digit. */
	KJ_CHECK_STR(eval("{\"type\":\"stdout_pattern\",\"pattern\":\"^\\\\d$\"}", "\xd9\xa3", 0, d,
			  sizeof(d)), "PASS");
	/* stdout that is not UTF-8 is searched, not refused. */
	KJ_CHECK_STR(eval("{\"type\":\"stdout_pattern\",\"pattern\":\"PASS\"}", "\xff\xfePASS", 0, d,
			  sizeof(d)), "PASS");
	KJ_CHECK_STR(eval("{\"type\":\"stdout_exclude_pattern\",\"pattern\":\"(?i)fail\"}",
			  "PASS\nFAIL\n", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(d, "'(?i)fail' found in stdout: 'FAIL'");
	KJ_CHECK_STR(eval("{\"type\":\"stdout_exclude_pattern\",\"pattern\":\"(?i)fail\"}",
			  "PASS\n", 0, d, sizeof(d)), "PASS");
}

KJ_TEST(spec_numeric_tolerances)
{
	char d[1024];
	const char *abs = "{\"type\":\"numeric_comparison\",\"extract_regex\":\"v=(\\\\S+)\","
			  "\"expected\":1.5,\"tolerance\":0.01}";
	const char *rel = "{\"type\":\"numeric_comparison\",\"extract_regex\":\"v=(\\\\S+)\","
			  "\"expected\":200,\"tolerance\":0.01,\"tolerance_type\":\"relative\"}";

	KJ_CHECK_STR(eval(abs, "v=1.5099", 0, d, sizeof(d)), "PASS");
	KJ_CHECK_STR(eval(abs, "v=1.4901", 0, d, sizeof(d)), "PASS");
	KJ_CHECK_STR(eval(abs, "v=1.5101", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(eval(rel, "v=201.99", 0, d, sizeof(d)), "PASS");
	KJ_CHECK_STR(eval(rel, "v=202.01", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(d, "got 202.01, expected 200: |difference| 2.01 is more than 0.01 * "
		     "|expected| = 2 (relative)");
	/* The original would have passed this one: absolute 0.01 of 200. */
	KJ_CHECK_STR(eval(rel, "v=1e9", 0, d, sizeof(d)), "FAIL");
	/* The whole match without a group; Python float()'s forms. */
	KJ_CHECK_STR(eval("{\"type\":\"numeric_comparison\",\"extract_regex\":\"[0-9_.]+\","
			  "\"expected\":1000}", "x 1_000.0 y", 0, d, sizeof(d)), "PASS");
	KJ_CHECK_STR(eval(abs, "v=0x1p0", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(d, "'0x1p0' is not a number");
	KJ_CHECK_STR(eval(abs, "v=nan", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(eval(abs, "nothing", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(d, "'v=(\\S+)' not found in stdout");
}

KJ_TEST(spec_malformed_strategies_are_errors)
{
	static const struct {
		const char *json, *detail;
	} cases[] = {
		{ "[1]", "verification.strategies[0] is not an object" },
		{ "{}", "verification.strategies[0] has no type" },
		{ "{\"type\":\"custom_script\"}", "unknown strategy type 'custom_script'" },
		{ "{\"type\":\"exit_code\",\"expected\":true}",
		  "expected must be an integer, not a bool" },
		{ "{\"type\":\"exit_code\",\"expected\":1.5}", "expected must be an integer" },
		{ "{\"type\":\"stdout_pattern\",\"pattern\":\"\"}",
		  "pattern must be a non-empty string" },
		{ "{\"type\":\"stdout_pattern\",\"pattern\":\"(\"}",
		  "pattern is not a valid regex: missing closing parenthesis at offset 1" },
		{ "{\"type\":\"stdout_pattern\",\"pattern\":\"x\",\"multiline\":1}",
		  "multiline must be true or false" },
		{ "{\"type\":\"numeric_comparison\",\"extract_regex\":\"x\",\"expected\":false}",
		  "expected must be a number, not a bool or a string" },
		{ "{\"type\":\"numeric_comparison\",\"extract_regex\":\"x\",\"expected\":1,"
		  "\"tolerance\":-0.1}", "tolerance must be a finite number >= 0" },
		{ "{\"type\":\"numeric_comparison\",\"extract_regex\":\"x\",\"expected\":1,"
		  "\"tolerance\":true}", "tolerance must be a number, not a bool or a string" },
		{ "{\"type\":\"numeric_comparison\",\"extract_regex\":\"x\",\"expected\":1,"
		  "\"tolerance_type\":\"percent\"}", "tolerance_type must be 'absolute' or 'relative'" },
		{ "{\"type\":\"file_hash\",\"path\":\"o\",\"expected_sha256\":\"ab\"}",
		  "expected_sha256 must be 64 hex digits" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char wrapped[512], d[1024];
		const char *st;

		/* "[1]" stands for a strategy that is not an object. */
		snprintf(wrapped, sizeof(wrapped), "%s", cases[i].json[0] == '[' ? "1" : cases[i].json);
		if (cases[i].json[0] == '[') {
			struct kj_spec_strategy s;
			json_t *j = json_integer(1);
			struct kj_spec_outcome o = { 1, 0, "", 0, NULL };
			struct kj_error e;

			KJ_CHECK_INT(kj_spec_strategy_parse(&s, j, "verification.strategies[0]", "/", "/",
							    &e), KJ_OK);
			KJ_CHECK_INT(kj_spec_strategy_eval(&s, &o, &st, d, sizeof(d)), KJ_OK);
			kj_spec_strategy_release(&s);
			json_decref(j);
		} else {
			st = eval(wrapped, "", 0, d, sizeof(d));
		}
		KJ_CHECK_STR(st, "ERROR");
		KJ_CHECK_STR(d, cases[i].detail);
	}
}

KJ_TEST(spec_file_strategies_read_only_inside)
{
	char d[1024], p[4200];
	FILE *f;
	const char *hash = "{\"type\":\"file_hash\",\"path\":\"o.txt\",\"expected_sha256\":"
			   "\"5891B5B522D5DF086D0FF0B110FBD9D21BB4FC7163AF34D08286A2E846F6BE03\"}";

	KJ_CHECK_STR(eval(hash, "", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(d, "'o.txt' was not written");
	snprintf(p, sizeof(p), "%s/o.txt", kj_test_tmpdir());
	f = fopen(p, "w");
	KJ_CHECK(f != NULL);
	fputs("hello\n", f);
	fclose(f);
	KJ_CHECK_STR(eval(hash, "", 0, d, sizeof(d)), "PASS");
	unlink(p);
	KJ_CHECK(symlink("/etc/hostname", p) == 0);
	KJ_CHECK_STR(eval(hash, "", 0, d, sizeof(d)), "FAIL");
	KJ_CHECK_STR(d, "'o.txt' leads out of the working directory through a symbolic link: "
		     "not read");
}

KJ_TEST(spec_record_why_names_the_deciding_strategy_and_last_lines)
{
	char out[512], small[40];
	json_t *rec = json_loads(
		"{\"status\": \"VERIFY_FAIL\", \"build\": {\"status\": \"PASS\"},"
		" \"run\": {\"status\": \"RUN_FAIL\", \"reason\": \"exited with status 1\","
		"  \"stdout_tail\": \"one\\ntwo\\nthree\\tx\\nFAIL four\\n\\n\", \"stderr_tail\": \"\"},"
		" \"strategies\": [{\"type\": \"stdout_pattern\", \"status\": \"PASS\", \"detail\": \"ok\"},"
		"  {\"type\": \"exit_code\", \"status\": \"FAIL\", \"detail\": \"exit code 1, expected 0\"},"
		"  {\"type\": \"stdout_exclude_pattern\", \"status\": \"FAIL\", \"detail\": \"'FAIL' found\"}]}",
		0, NULL);

	KJ_CHECK(rec != NULL);
	kj_spec_record_why(rec, out, sizeof(out));
	/* The strategy gave the status, not the run; the last three lines,
	 * a tab shown as '?'; then the other strategy that failed. */
	KJ_CHECK_STR(out, "exit_code FAIL: exit code 1, expected 0; the program's last lines: "
			  "\"two\" \"three?x\" \"FAIL four\"; stdout_exclude_pattern FAIL: 'FAIL' found");
	/* A small buffer is cut, never overrun. */
	kj_spec_record_why(rec, small, sizeof(small));
	KJ_CHECK_INT((long long)strlen(small), (long long)sizeof(small) - 1);
	/* The run gave it: its reason first. */
	json_object_set_new(rec, "status", json_string("RUN_FAIL"));
	kj_spec_record_why(rec, out, sizeof(out));
	KJ_CHECK(strncmp(out, "run: exited with status 1; the program's last lines: ", 53) == 0);
	json_decref(rec);
}
