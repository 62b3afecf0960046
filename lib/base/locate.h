/*
 * locate.h - where kjudge finds the programs and files its runners use
 * (kj__ internals, lib/base/locate.c).
 *
 * The torch runner and kjudge doctor must agree on which interpreter and
 * which worker file a run uses, or the doctor would vouch for a Python the
 * runs never start.  These are those rules, in one place; which interpreter
 * (--python, $KJ_PYTHON, else kj__default_python's) is the configuration's
 * (kjudge/config.h), which the CLI builds once for both.
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_LOCATE_H
#define KJ_LOCATE_H

#include <stddef.h>

/*
 * Resolve a program name as execve() will need it: a name with a slash must
 * be executable (a relative one is prefixed with the working directory,
 * links left as they are), a bare name is looked up in `path`, a
 * colon-separated list ($PATH of the run's environment; NULL:
 * /usr/bin:/bin).  Writes the absolute path into out and returns 0, or
 * returns -1 when there is none that fits in size bytes.
 */
int kj__find_in_path(const char *name, const char *path, char *out, size_t size);

/*
 * The path of `file`, one of the files kjudge ships (kjudge_worker.py), from
 * the real path of the running executable (/proc/self/exe): beside it, where
 * `make` puts it in build/; else ../libexec/kjudge/FILE from the
 * executable's directory, where `make install` puts it; when neither exists,
 * the path beside it.  Returns 0, or -1 when the executable cannot be read
 * or the path does not fit.
 */
int kj__beside_self(const char *file, char *out, size_t size);

/* The file `make install` writes into PREFIX/libexec/kjudge/: one line, the
 * absolute path of the Python the installed kjudge's workers run. */
#define KJ_PYTHON_RECORD "kjudge_python.txt"

/*
 * The workers' Python when neither --python nor $KJ_PYTHON names one, and
 * why, for messages and kjudge doctor: the interpreter `make install`
 * recorded (KJ_PYTHON_RECORD, found as kj__beside_self finds the worker)
 * when it is executable now; else the .venv of the checkout this binary was
 * built in (kj__checkout_python); else "python3", looked up in PATH.  A
 * user who followed the README (scripts/install-deps, then make) gets the
 * Python that install-deps filled, whatever their own python3 lacks.  Both
 * strings are static storage, valid for the process; the choice depends
 * only on the binary and the files it finds, so calling again is harmless.
 */
void kj__default_python(const char **python, const char **why);

/*
 * The .venv/bin/python of the checkout this binary was built in, which the
 * Makefile compiles in (KJ_CHECKOUT_PYTHON), when it is executable now;
 * else NULL (a binary built elsewhere, a checkout removed, no
 * scripts/install-deps run).
 */
const char *kj__checkout_python(void);

/*
 * The fix for a workers' Python that lacks torch or numpy (chosen: the
 * interpreter that was run, a path), written into buf as one clause
 * without a leading "fix:": point KJ_PYTHON at the checkout's .venv
 * (kj__checkout_python, else a .venv in the working directory) where there
 * is one and it is not the interpreter that failed; else fill the .venv
 * with scripts/install-deps, or name a Python that has them.  Returns buf.
 */
const char *kj__python_fix(const char *chosen, char *buf, size_t size);


#endif /* KJ_LOCATE_H */
