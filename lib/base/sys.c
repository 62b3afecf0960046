/*
 * sys.c - small facts about the machine the library runs on, and the rule
 * for finding what judges that were killed left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/internal.h"

int kj__online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

int kj__nvidia_driver_loaded(void)
{
	return access("/dev/nvidiactl", F_OK) == 0;
}

double kj__now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void kj__utc_now(char buf[32])
{
	time_t t = time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, 32, "1970-01-01T00:00:00Z");
}

int kj__dead_run_entry(const char *name, const char *prefix)
{
	size_t len = strlen(prefix);
	const char *digits = name + len;
	char *end;
	long owner;

	if (strncmp(name, prefix, len) != 0 || *digits < '0' || *digits > '9')
		return 0;
	errno = 0;
	owner = strtol(digits, &end, 10);
	if (errno || owner <= 1 || *end != '-')
		return 0;
	/* EPERM: it runs, as another user; only ESRCH means gone. */
	return kill((pid_t)owner, 0) < 0 && errno == ESRCH;
}

int kj__left_by_dead_run(const char *name)
{
	return kj__dead_run_entry(name, "kjudge-");
}

int kj__sweep_dead_runs(const char *dir, const char *prefix,
			void (*fn)(const char *path, void *arg), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char p[4096];

		if (!kj__dead_run_entry(e->d_name, prefix) ||
		    (size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= sizeof(p))
			continue;
		fn(p, arg);
		n++;
	}
	closedir(d);
	return n;
}
