/*
 * kjudge/doctor.h - what this machine can do for kjudge, and how to fix
 * what it cannot.
 *
 * kjudge doctor runs a list of probes in three groups:
 *
 *   sandbox   user and other namespaces, seccomp filters, cgroups (which
 *             version, memory and pids controllers, creating a group), a
 *             private tmpfs with huge pages in a mount namespace;
 *   timing    CPU frequency governors, SMT, turbo/boost, NVIDIA GPU
 *             clocks, throttling and persistence mode;
 *   runtimes  the Python the workers run (torch, numpy, Triton, CUDA in
 *             torch), the worker file, compilers (nvcc, cc, clang),
 *             OpenCL, the tree-sitter grammars compiled in.
 *
 * Each probe fills one record: what was found, a status, and the command
 * or setting that fixes a problem.  A probe tries the real thing where it
 * can (unshare, a seccomp filter, mkdir in a cgroup, a tmpfs mount), always
 * in a forked child, so this process is never changed by what it tries.
 * Every child has a deadline and is killed (its whole process group) when
 * the deadline passes, so a wedged driver or interpreter cannot hang the
 * doctor.  The library prints nothing and never exits.
 *
 * Ownership: struct kj_doctor_report is caller-owned; kj_doctor_run() fills
 * it, kj_doctor_report_release() frees what it holds.  The records hold no
 * pointers.
 */
#ifndef KJUDGE_DOCTOR_H
#define KJUDGE_DOCTOR_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/config.h"
#include "kjudge/error.h"

enum kj_doctor_status {
	KJ_DOCTOR_OK,   /* nothing to do */
	KJ_DOCTOR_WARN, /* kjudge works, less well (slower, noisier, a runner missing) */
	KJ_DOCTOR_FAIL, /* something kjudge needs is missing or refused */
	KJ_DOCTOR_STATUS_COUNT_
};

/* Groups are bits, so that a selection is a mask. */
enum kj_doctor_group {
	KJ_DOCTOR_SANDBOX = 1,
	KJ_DOCTOR_TIMING = 2,
	KJ_DOCTOR_RUNTIMES = 4,
	KJ_DOCTOR_ALL = 7
};

#define KJ_DOCTOR_NAME_MAX 32
#define KJ_DOCTOR_DETAIL_MAX 1024
#define KJ_DOCTOR_FIX_MAX 512

/* One probe's finding.  `fix` is empty exactly when status is OK. */
struct kj_doctor_check {
	char name[KJ_DOCTOR_NAME_MAX];     /* e.g. "user-namespaces" */
	enum kj_doctor_group group;
	enum kj_doctor_status status;
	char detail[KJ_DOCTOR_DETAIL_MAX]; /* what was found, one line */
	char fix[KJ_DOCTOR_FIX_MAX];       /* what to run or set, one line */
};

struct kj_doctor_report {
	struct kj_doctor_check *checks; /* in group order, then probe order */
	size_t n, cap;
	size_t count[KJ_DOCTOR_STATUS_COUNT_]; /* records per status */
};

struct kj_doctor_options {
	unsigned groups;    /* a mask of enum kj_doctor_group; 0 means all */
	/* The context verify and benchmark would run in (the workers' Python
	 * and where it came from, the environment a worker inherits, the
	 * scratch directory): the doctor vouches for that one, not another.
	 * Required. */
	const struct kj_config *cfg;
	double timeout_s;   /* deadline of each child process; <= 0: 30 s */
};

void kj_doctor_report_init(struct kj_doctor_report *r);
void kj_doctor_report_release(struct kj_doctor_report *r);

/*
 * Run the probes of the selected groups, appending their records to r
 * (which must have been initialised).  Returns KJ_OK, or KJ_ENOMEM with err
 * filled when a record could not be stored (r keeps what it had).  A probe
 * that finds a problem is a record, never an error.
 */
int kj_doctor_run(const struct kj_doctor_options *o, struct kj_doctor_report *r,
		  struct kj_error *err);

/* "ok", "warn", "fail"; "sandbox", "timing", "runtimes" (static storage). */
const char *kj_doctor_status_name(enum kj_doctor_status s);
const char *kj_doctor_group_name(enum kj_doctor_group g);
/* The group named `name`, or 0 when there is none. */
enum kj_doctor_group kj_doctor_group_from_name(const char *name);

/*
 * The report as {"checks": [{name, group, status, detail, fix}...],
 * "summary": {"ok": n, "warn": n, "fail": n}}.  A new reference, NULL when
 * out of memory.
 */
json_t *kj_doctor_report_json(const struct kj_doctor_report *r);

#endif /* KJUDGE_DOCTOR_H */
