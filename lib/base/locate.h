/*
 * locate.h - where kjudge finds the programs and files its runners use
 * (kj__ internals, lib/base/locate.c).
 *
 * The torch runner and kjudge doctor must agree on which interpreter and
 * which worker file a run uses, or the doctor would vouch for a Python the
 * runs never start.  These are those rules, in one place; which interpreter
 * (--python, $KJ_PYTHON, python3) is the configuration's (kjudge/config.h),
 * which the CLI builds once for both.
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


#endif /* KJ_LOCATE_H */
