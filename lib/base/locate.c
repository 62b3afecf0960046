/*
 * locate.c - finding programs in $PATH and the files kjudge ships, beside
 * the kjudge binary or where it is installed (see locate.h for why these
 * rules live in one place).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/locate.h"
#include "base/internal.h"

int kj__find_in_path(const char *name, const char *path, char *out, size_t size)
{
	const char *p;

	if (!name || !*name)
		return -1;
	if (strchr(name, '/')) {
		char cwd[PATH_MAX];

		if (access(name, X_OK) != 0)
			return -1;
		if (name[0] == '/')
			return snprintf(out, size, "%s", name) < (int)size ? 0 : -1;
		/* Prefixed, not realpath()'d: a virtual environment's
		 * bin/python is a link to the base interpreter, and Python
		 * finds its environment from the path it was started by. */
		if (!getcwd(cwd, sizeof(cwd)))
			return -1;
		return snprintf(out, size, "%s/%s", cwd, name) < (int)size ? 0 : -1;
	}
	for (p = path ? path : "/usr/bin:/bin"; p && *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		/* An empty entry would mean the current directory; like a
		 * careful shell, kjudge does not run programs from there. */
		if (len && snprintf(out, size, "%.*s/%s", (int)len, p, name) < (int)size &&
		    access(out, X_OK) == 0)
			return 0;
		p = end ? end + 1 : NULL;
	}
	return -1;
}

int kj__beside_self(const char *file, char *out, size_t size)
{
	char self[PATH_MAX];
	/* /proc/self/exe is the real path: a kjudge reached through a link
	 * in ~/bin still finds the files of the tree it was installed in. */
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	/* A build directory has it beside the binary; an installed kjudge
	 * (PREFIX/bin/kjudge) in PREFIX/libexec/kjudge/, by the rule of
	 * `make install`.  When neither has it, the place beside the binary
	 * is the one named, for the message that says it is missing. */
	if (snprintf(out, size, "%s/%s", self, file) >= (int)size)
		return -1;
	if (access(out, F_OK) == 0)
		return 0;
	/* The parent of bin/, written out rather than as "bin/..": the path
	 * is bound into the sandbox and shown by the doctor. */
	slash = strrchr(self, '/');
	if (slash && snprintf(out, size, "%.*s/libexec/kjudge/%s", (int)(slash - self),
			      self, file) < (int)size && access(out, F_OK) == 0)
		return 0;
	return snprintf(out, size, "%s/%s", self, file) < (int)size ? 0 : -1;
}
