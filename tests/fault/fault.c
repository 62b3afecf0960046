/*
 * fault.c - allocation failures on purpose, for the fault-injection build
 * (make FAULT=1: build/fault/kjudge; `make check` builds it and
 * tests/cli/t0260 runs tests/fault/check_fault.py over it).
 *
 * Numbered, and failed on request: every allocation the judge's own code
 * makes (malloc, calloc, realloc, strdup, strndup, asprintf, vasprintf:
 * linked with -Wl,--wrap, so that the calls in kjudge's objects come here),
 * and every one jansson makes (its allocator is set to ours at start-up, so
 * every JSON construction, dump and parse counts).
 *
 *   KJ_FAULT_AT=N        the N-th allocation fails (ENOMEM)
 *   KJ_FAULT_MODE=from   ... and every one after it
 *   KJ_FAULT_REPORT=FILE "calls C injected I" is written to FILE at exit, so
 *                        a driver learns how many points a run has and
 *                        whether the one it chose was reached
 *   KJ_FAULT_TRACE=FILE  the stack of the first injected failure
 *                        (backtrace_symbols_fd: binary(+offset) lines that
 *                        addr2line turns into functions and lines)
 *   KJ_FAULT_SITES=FILE  a line "N OFFSET..." per allocation: the return
 *                        addresses of its stack that lie in the kjudge
 *                        binary, so that a driver can tell the places that
 *                        allocate apart and fail each of them
 *
 * Children the judge forks count on from the parent's number in their own
 * copy until they exec; they end with _exit, so the report is the judge's.
 *
 * What is not a fault point, and why:
 *  - tree-sitter (the parser of kjudge validate and of the candidate's view
 *    of the task): its runtime aborts on a failed allocation by design and
 *    its grammars' scanners do not check, so the Makefile points its
 *    objects at the real allocator (objcopy --redefine-sym malloc=
 *    __real_malloc ...), which --wrap does not redirect.
 *  - libc's own internal allocations (stdio buffers, opendir, realpath's,
 *    strerror's, backtrace's): they are made inside libc, where --wrap
 *    cannot reach, and libc reports their failure through its own return
 *    values.
 *  - libcrypto's (SHA-256, HMAC).  Failed through CRYPTO_set_mem_functions
 *    they were two thirds of a run's points (its providers' set-up), and
 *    libcrypto works around some itself (a failed fetch falls back to its
 *    built-in digest and gives the right sum), which a driver cannot tell
 *    from the judge hiding a failure.  What they showed is fixed: a digest
 *    or HMAC that fails is an error of base/hash.c's, never a sum of zeros.
 */
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_asprintf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int __wrap_vasprintf(char **out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static atomic_long calls, injected;
static long target;      /* 0: never fail */
static int from_on;      /* fail every call from target on */

/* Where the first injected failure happened, when KJ_FAULT_TRACE asks.
 * backtrace() allocates inside libc (where --wrap does not reach) on its
 * first call only. */
static void trace(void)
{
	const char *path = getenv("KJ_FAULT_TRACE");
	void *frames[64];
	int fd, n;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = backtrace(frames, 64);
	backtrace_symbols_fd(frames, n, fd);
	close(fd);
}

static int sites_fd = -1;
static uintptr_t self_lo, self_hi, self_base; /* the binary's segments */

/* Where the kjudge binary is mapped: the first object dl_iterate_phdr
 * reports is the program itself. */
static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	self_base = info->dlpi_addr;
	self_lo = UINTPTR_MAX;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < self_lo)
			self_lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > self_hi)
			self_hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

/* One line of KJ_FAULT_SITES for allocation n. */
static void log_site(long n)
{
	void *frames[64];
	char line[64 * 20 + 32];
	int k, len, got = backtrace(frames, 64);

	len = snprintf(line, sizeof(line), "%ld", n);
	for (k = 1; k < got; k++) {
		uintptr_t a = (uintptr_t)frames[k];

		if (a >= self_lo && a < self_hi)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %lx",
					(unsigned long)(a - self_base));
	}
	line[len++] = '\n';
	if (write(sites_fd, line, (size_t)len) < 0) {
		/* the driver sees a short file */
	}
}

/* Whether this allocation fails. */
static int fail_now(void)
{
	long n = atomic_fetch_add(&calls, 1) + 1;

	if (sites_fd >= 0)
		log_site(n);

	if (target > 0 && (n == target || (from_on && n > target))) {
		if (atomic_fetch_add(&injected, 1) == 0)
			trace();
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	if (fail_now()) {
		*out = NULL;
		return -1;
	}
	return __real_vasprintf(out, fmt, ap);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = __wrap_vasprintf(out, fmt, ap);
	va_end(ap);
	return n;
}

static void *json_alloc(size_t n)
{
	return __wrap_malloc(n);
}

static void report(void)
{
	const char *path = getenv("KJ_FAULT_REPORT");
	char line[96];
	int fd, len;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	len = snprintf(line, sizeof(line), "calls %ld injected %ld\n", atomic_load(&calls),
		       atomic_load(&injected));
	if (write(fd, line, (size_t)len) < 0) {
		/* nothing to do: the driver sees no report */
	}
	close(fd);
}

__attribute__((constructor)) static void fault_init(void)
{
	const char *at = getenv("KJ_FAULT_AT"), *mode = getenv("KJ_FAULT_MODE");

	json_set_alloc_funcs(json_alloc, free);
	target = at ? strtol(at, NULL, 10) : 0;
	if (target < 0)
		target = 0;
	from_on = mode && !strcmp(mode, "from");
	if (getenv("KJ_FAULT_SITES") && *getenv("KJ_FAULT_SITES")) {
		dl_iterate_phdr(find_self, NULL);
		sites_fd = open(getenv("KJ_FAULT_SITES"), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
				O_CLOEXEC, 0644);
	}
	atexit(report);
}
