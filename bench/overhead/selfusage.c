/*
 * selfusage.c - an LD_PRELOAD shim for bench/overhead: when the process it
 * is loaded into exits, it writes that process's own resource usage to the
 * file named by $KJ_SELFUSAGE_FILE, so that the judge's own CPU time can be
 * read from any kjudge binary without changing or rebuilding it.
 *
 * What it measures: getrusage(RUSAGE_SELF), the user and system CPU time of
 * every thread of the process (the comparator's threads included, the
 * worker processes excluded: their time is charged to them, and reaches the
 * judge only as RUSAGE_CHILDREN, which this shim does not read), plus the
 * process's life from this shim's constructor to its destructor on the
 * monotonic clock.
 *
 * Why a destructor is enough: kjudge leaves main() by returning from it on
 * every path that ends a run (verify, benchmark, their usage and judge
 * errors), so exit() runs the ELF destructors. The ld.so finaliser runs the
 * destructors of preloaded objects after those of the program and of the
 * libraries it loaded, and after the atexit handlers, so everything the
 * judge does on its way out is counted. The paths that skip destructors are
 * _exit() in forked copies of the judge (before exec, or a doctor probe) and
 * in the signal guard on a second signal; the first are not the judge, and
 * a run ended by a signal is not a measurement. bench/overhead/overhead.py
 * fails a run whose file is missing, so a binary that exits some other way
 * is found rather than measured wrong.
 *
 * Two rules keep the shim out of what it measures:
 * - The constructor takes $KJ_SELFUSAGE_FILE and $LD_PRELOAD out of the
 *   environment, so that no process the judge starts (with its own
 *   environment or with a copy of the judge's) loads the shim or writes the
 *   file. kjudge reads neither variable.
 * - Only the process that loaded the shim writes: a forked copy that calls
 *   exit() has another process id and writes nothing.
 *
 * The file is one JSON object on one line, written with open, write and
 * close when the process ends; it is replaced if it exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "base/banned.h"

/* The file's path, copied at start: the environment's copy is removed. */
static char usage_path[4096];
static pid_t usage_pid;
static struct timespec usage_t0;

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double since_s(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

__attribute__((constructor)) static void selfusage_start(void)
{
	const char *p = getenv("KJ_SELFUSAGE_FILE");

	clock_gettime(CLOCK_MONOTONIC, &usage_t0);
	if (p && *p && strlen(p) < sizeof(usage_path)) {
		memcpy(usage_path, p, strlen(p) + 1);
		usage_pid = getpid();
	}
	unsetenv("KJ_SELFUSAGE_FILE");
	unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void selfusage_end(void)
{
	struct rusage ru;
	char buf[512];
	int fd, n, saved = errno;
	size_t off = 0;

	if (!usage_pid || getpid() != usage_pid || getrusage(RUSAGE_SELF, &ru) < 0)
		return;
	n = snprintf(buf, sizeof(buf),
		     "{\"pid\": %ld, \"utime_s\": %.6f, \"stime_s\": %.6f, \"life_s\": %.6f, "
		     "\"maxrss_kb\": %ld, \"minflt\": %ld, \"majflt\": %ld, "
		     "\"nvcsw\": %ld, \"nivcsw\": %ld}\n",
		     (long)getpid(), tv_s(ru.ru_utime), tv_s(ru.ru_stime), since_s(&usage_t0),
		     ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw);
	if (n <= 0 || (size_t)n >= sizeof(buf))
		return;
	fd = open(usage_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	while (off < (size_t)n) {
		ssize_t w = write(fd, buf + off, (size_t)n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
	errno = saved;
}
