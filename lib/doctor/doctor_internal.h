/*
 * doctor_internal.h - what the doctor's files share (kj__ internals):
 * storing records, running a command or a probe in a child with a
 * deadline, reading small files, and the parsers of what the probes read
 * (tested on their own in tests/unit/test_doctor.c).
 *
 * lib/doctor.c holds these; lib/doctor_sandbox.c, doctor_timing.c and
 * doctor_runtimes.c hold one group of probes each.
 *
 * Include it after the system headers (it ends by including internal.h,
 * which includes banned.h).
 */
#ifndef KJ_DOCTOR_INTERNAL_H
#define KJ_DOCTOR_INTERNAL_H

#include <stddef.h>

#include "kjudge/doctor.h"

/* One run of the probes. */
struct kj__doctor {
	const struct kj_doctor_options *o;
	struct kj_doctor_report *r;
	double timeout_s;             /* of each child, resolved */
	int oom;                      /* a record could not be stored */
	struct kj_doctor_check spill; /* where records go when out of memory */
};

/* A new record of group g named `name`, status OK, to be filled with
 * kj__doctor_set().  Never NULL: when out of memory it is d->spill and
 * d->oom is set, so a probe need not check. */
struct kj_doctor_check *kj__doctor_check(struct kj__doctor *d,
					 enum kj_doctor_group g, const char *name);

/* Set c's status, fix (NULL or "" exactly when s is OK) and detail
 * (printf-style, truncated to fit). */
void kj__doctor_set(struct kj_doctor_check *c, enum kj_doctor_status s,
		    const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Append to the NUL-terminated string in buf; a string that does not fit
 * is cut and ends in "...". */
void kj__doctor_append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));


/* What a command printed and how it ended (kj__doctor_run_cmd). */
struct kj__cmd {
	char out[16384];   /* stdout, NUL-terminated; the rest is dropped */
	size_t out_len;
	char err[2048];    /* stderr, likewise */
	size_t err_len;
	int status;        /* wait status, valid when started && !timed_out */
	int started;       /* execve succeeded */
	int exec_errno;    /* why it did not start */
	int timed_out;     /* the deadline passed: the process group was killed */
};

/*
 * Run argv[0] (an absolute path) with argv and envp (NULL: this process's
 * environment) in a new process group, stdin from /dev/null, capturing
 * stdout and stderr.  If it is not done timeout_s seconds later the whole
 * group is killed.  Returns 0 when c describes what happened (which may be
 * a failure to start or a timeout), -1 with errno when no child could be
 * made (pipes, fork).
 */
int kj__doctor_run_cmd(const char *const argv[], const char *const envp[],
		       double timeout_s,
		       struct kj__cmd *c);

/* Run a command and keep the first non-empty line of its stdout (or, when
 * there is none, of its stderr) in line.  Returns 0 when it started and
 * exited with status 0; -1 otherwise, with why in line. */
int kj__doctor_cmd_line(const char *const argv[], double timeout_s, char *line,
			size_t size);

/*
 * Call fn(arg, msg, size) in a forked child (its own process group) and
 * bring back its return value (0 to 255) and the message it wrote into
 * msg.  A child that is not done after timeout_s is killed with its group.
 * Returns fn's value, or -1 when the child could not be made, died or
 * timed out (msg then says which).  fn runs in a copy of this process:
 * whatever it changes (namespaces, filters, mounts) dies with the child.
 */
int kj__doctor_in_child(int (*fn)(void *arg, char *msg, size_t size), void *arg,
			double timeout_s, char *msg, size_t size);

/* --- parsers ------------------------------------------------------------------------ */

/* Walk text a line at a time: while there is one, point *line at it (not
 * NUL-terminated), set *len (without the newline), advance *cursor and
 * return 1; then return 0. */
int kj__doctor_next_line(const char **cursor, const char **line, size_t *len);

/*
 * In the text of /proc/mounts, the mount point of the cgroup v1 hierarchy
 * that holds `controller` (a comma-separated element of its options), or
 * with controller NULL the first cgroup2 mount.  Octal escapes (\040) are
 * decoded.  Returns 0, or -1 when there is none or it does not fit.
 */
int kj__doctor_cgroup_mount(const char *mounts, const char *controller,
			    char *out, size_t size);

/*
 * In the text of /proc/self/cgroup ("ID:CONTROLLERS:PATH" lines), the path
 * of this process in the hierarchy that holds `controller`, or with
 * controller NULL in the cgroup v2 hierarchy ("0::PATH").  Returns 0, or -1
 * when there is none or it does not fit.
 */
int kj__doctor_cgroup_path(const char *self_cgroup, const char *controller,
			   char *out, size_t size);

/* 1 when the white-space or comma separated list holds `word`. */
int kj__doctor_has_word(const char *list, const char *word);

/*
 * The CPU frequency governors, gov[i] that of CPU i (NULL: no cpufreq for
 * it), as one line into detail ("performance on CPUs 0-3, powersave on 4
 * and 6").  Returns OK when every CPU that has one runs 'performance', WARN
 * otherwise.  n > 0.
 */
enum kj_doctor_status kj__doctor_governors(const char *const *gov, int n,
					   char *detail, size_t size);

/* One GPU, from a line of nvidia-smi --query-gpu=name,driver_version,
 * clocks.sm,clocks.max.sm,clocks_throttle_reasons.active,persistence_mode
 * --format=csv,noheader.  Numbers nvidia-smi does not know ("[N/A]") are
 * -1. */
struct kj__gpu {
	char name[96];
	char driver[32];
	int sm_mhz, max_sm_mhz;
	long long reasons;  /* bit mask; -1 unknown */
	int persistence;    /* 1 enabled, 0 disabled, -1 unknown */
};

/* Returns 0, or -1 when the line does not have the six fields. */
int kj__doctor_parse_gpu(const char *line, struct kj__gpu *g);

/* The names of the clock event (throttle) reasons in mask that slow a
 * timed kernel down (power and thermal limits, not "idle" or an
 * applications clock setting), comma-separated, into buf; "" when none.
 * Returns the number of such reasons. */
int kj__doctor_slowdowns(long long mask, char *buf, size_t size);

/* --- the groups ----------------------------------------------------------------------- */

void kj__doctor_sandbox(struct kj__doctor *d);
void kj__doctor_timing(struct kj__doctor *d);
void kj__doctor_runtimes(struct kj__doctor *d);

#include "base/internal.h"

#endif /* KJ_DOCTOR_INTERNAL_H */
