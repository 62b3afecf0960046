/*
 * main.c - the unit-test runner (see unit.h).
 *
 * Each test runs in a forked child with its own scratch directory and a
 * 60-second alarm.  The parent reports "ok" or "FAIL" per test, and the
 * closing line "N passed, N failed".  Arguments, if any, are substrings: only
 * tests whose names contain one of them run.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

/* lib/tensor/tensor_internal.h (not included: its banned.h would ban this
 * file's getenv) */
void kj__compare_baseline_only(int on);

#define MAX_TESTS 1024
#define TEST_TIMEOUT_S 60

static struct {
	const char *name;
	kj_test_fn fn;
} tests[MAX_TESTS];
static int n_tests;
static char tmpdir[4096];
static char pathbuf[8192 + 256];

void kj_test_register(const char *name, kj_test_fn fn)
{
	if (n_tests == MAX_TESTS) {
		fprintf(stderr, "unit: more than %d tests\n", MAX_TESTS);
		exit(2);
	}
	tests[n_tests].name = name;
	tests[n_tests].fn = fn;
	n_tests++;
}

const char *kj_test_tmpdir(void)
{
	return tmpdir;
}

const char *kj_test_path(const char *name)
{
	snprintf(pathbuf, sizeof(pathbuf), "%s/%s", tmpdir, name);
	return pathbuf;
}

const char *kj_test_helper(const char *name)
{
	static char path[4200];
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		kj_test_fail(__FILE__, __LINE__, "cannot read /proc/self/exe");
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", self, name);
	if (access(path, X_OK) != 0)
		kj_test_fail(__FILE__, __LINE__, "no helper '%s' (make builds it)", path);
	return path;
}

void kj_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  %s:%d: check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void rm_rf(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rm_rf(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* Under AddressSanitizer and ThreadSanitizer: an allocation that cannot be
 * made returns NULL, as libc's does, instead of ending the process, so
 * that the library's handling of a failed allocation is what a test sees
 * (test_vec.c asks for PTRDIFF_MAX bytes on purpose).  The environment's
 * ASAN_OPTIONS and TSAN_OPTIONS still override it; nothing calls these in
 * other builds. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static int selected(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int i, passed = 0, failed = 0;
	const char *base = getenv("TMPDIR");

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* --baseline-kernels: the comparator's kernels for CPUs without AVX2
	 * (the build's others are compiled in; .ci/run also compiles
	 * compare.c without them, KJ_NO_AVX2). */
	if (argc > 1 && !strcmp(argv[1], "--baseline-kernels")) {
		kj__compare_baseline_only(1);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	for (i = 0; i < n_tests; i++) {
		pid_t pid;
		int status;

		if (!selected(tests[i].name, argc, argv))
			continue;
		snprintf(tmpdir, sizeof(tmpdir), "%s/kj-unit-XXXXXX",
			 base && *base ? base : "/tmp");
		if (!mkdtemp(tmpdir)) {
			fprintf(stderr, "unit: mkdtemp: %s\n", strerror(errno));
			return 2;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "unit: fork: %s\n", strerror(errno));
			return 2;
		}
		if (pid == 0) {
			alarm(TEST_TIMEOUT_S);
			tests[i].fn();
			fflush(NULL);
			_exit(0);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		rm_rf(tmpdir);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok   %s\n", tests[i].name);
			passed++;
		} else {
			if (WIFSIGNALED(status))
				printf("FAIL %s (signal %d%s)\n", tests[i].name,
				       WTERMSIG(status),
				       WTERMSIG(status) == SIGALRM ? ", timeout" : "");
			else
				printf("FAIL %s\n", tests[i].name);
			failed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
