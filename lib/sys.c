/*
 * sys.c - small facts about the machine the library runs on.
 */
#include <unistd.h>

#include "internal.h"

int kj__online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}
