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
#include "base/fs.h"
#include "base/internal.h"

/* The Makefile's: the .venv interpreter of the checkout the binary was
 * built in (an absolute path, which may not exist). */
#ifndef KJ_CHECKOUT_PYTHON
#define KJ_CHECKOUT_PYTHON ""
#endif

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

const char *kj__checkout_python(void)
{
	static const char venv[] = KJ_CHECKOUT_PYTHON;

	return venv[0] == '/' && access(venv, X_OK) == 0 ? venv : NULL;
}

/* The interpreter recorded at path, when the record is there: 1 with it in
 * out (executable or not), 0 when there is no record or it says nothing
 * usable. */
static int read_record(const char *path, char *out, size_t size)
{
	struct kj_error err;
	char *text = kj__read_file(path, 4096, NULL, &err);
	size_t n;

	if (!text)
		return 0;
	n = strcspn(text, "\r\n");
	if (text[0] != '/' || n >= size) {
		free(text);
		return 0;
	}
	memcpy(out, text, n);
	out[n] = '\0';
	free(text);
	return 1;
}

void kj__default_python(const char **python, const char **why)
{
	static char rec_file[PATH_MAX], recorded[PATH_MAX], reason[3 * PATH_MAX];
	const char *venv = kj__checkout_python();
	int have_record;
	size_t n = 0;

	rec_file[0] = recorded[0] = reason[0] = '\0';
	have_record = kj__beside_self(KJ_PYTHON_RECORD, rec_file, sizeof(rec_file)) == 0 &&
		      read_record(rec_file, recorded, sizeof(recorded));
	if (have_record && access(recorded, X_OK) == 0) {
		snprintf(reason, sizeof(reason), "recorded by make install in %s", rec_file);
		*python = recorded;
		*why = reason;
		return;
	}
	/* A record whose interpreter is gone is said, not silently passed. */
	if (have_record)
		n = (size_t)snprintf(reason, sizeof(reason), "%s, recorded by make install in "
				     "%s, is gone; ", recorded, rec_file);
	if (venv) {
		snprintf(reason + n, sizeof(reason) - n, "%sthe .venv of the checkout kjudge was "
			 "built in", n ? "so " : "");
		*python = venv;
	} else {
		snprintf(reason + n, sizeof(reason) - n, "the default: no $KJ_PYTHON%s%s%s",
			 KJ_CHECKOUT_PYTHON[0] ? ", and no " : "", KJ_CHECKOUT_PYTHON,
			 KJ_CHECKOUT_PYTHON[0] ? " (the checkout kjudge was built in has no "
						 ".venv: scripts/install-deps makes it)" : "");
		*python = "python3";
	}
	*why = reason;
}

const char *kj__python_fix(const char *chosen, char *buf, size_t size)
{
	const char *venv = kj__checkout_python();
	char cwd[PATH_MAX], here[PATH_MAX + 32];

	/* A checkout's own .venv in the working directory, for a kjudge
	 * built elsewhere that runs in one. */
	if (!venv && getcwd(cwd, sizeof(cwd)) &&
	    snprintf(here, sizeof(here), "%s/.venv/bin/python", cwd) < (int)sizeof(here) &&
	    access(here, X_OK) == 0)
		venv = here;
	if (venv && (!chosen || strcmp(chosen, venv) != 0))
		snprintf(buf, size, "export KJ_PYTHON=%s (the checkout's .venv, which "
			 "scripts/install-deps fills with torch, Triton and numpy), or install "
			 "them into that Python", venv);
	else if (venv)
		snprintf(buf, size, "run scripts/install-deps (it fills the checkout's .venv, %s, "
			 "with torch, Triton and numpy), or export KJ_PYTHON=/path/to/python "
			 "of an interpreter that has them", venv);
	else
		snprintf(buf, size, "run scripts/install-deps in kjudge's checkout (it makes "
			 ".venv/ with torch, Triton and numpy) and export "
			 "KJ_PYTHON=CHECKOUT/.venv/bin/python, or point KJ_PYTHON (or --python) "
			 "at an interpreter that has them");
	return buf;
}
