/*
 * gate.c - the L1 verify gate of benchmark (see kjudge/pipeline.h).
 *
 * The seed's gate reads verify_result.json and checks passed == total > 0.
 * That lets a benchmark go ahead on a record of another candidate, of an
 * older version of the task, of another device, of a run with fixed seeds
 * or one the machine failed in, or on a file anyone could have written.
 * This gate belongs to the candidate: the record must be signed by this
 * judge, and name these very files by their SHA-256.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kjudge/pipeline.h"
#include "core/core.h"
#include "base/json.h"
#include "base/text.h"
#include "base/internal.h"

static int refuse(char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return 1;
}

/* A string member, or "" when there is none. */
static const char *member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* The last component of a path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Up to five failures of the record, one line each, after why's line. */
static void add_failures(const json_t *rec, char *why, size_t size)
{
	const json_t *f = json_object_get(rec, "failures");
	size_t i, len = strlen(why);

	for (i = 0; i < json_array_size(f) && i < 5 && len < size; i++) {
		const json_t *x = json_array_get(f, i);
		const char *msg = json_string_value(json_object_get(x, "error_msg"));
		const char *type = json_string_value(json_object_get(x, "error_type"));
		size_t n = msg ? kj__first_line(msg, 300) : 0;

		len += (size_t)snprintf(why + len, size - len, "\n  case %lld: %s: %.*s",
					json_integer_value(json_object_get(x, "case_idx")),
					type ? type : "?", (int)n, msg ? msg : "");
	}
}

int kj_gate_record_name(const char *impl, char *buf, size_t size)
{
	int n;

	if (!strcmp(impl, "triton_ascend_impl"))
		n = snprintf(buf, size, "verify_result.json");
	else if (!strncmp(impl, "triton_", 7))
		n = snprintf(buf, size, "verify_result_%s.json", impl + 7);
	else
		n = snprintf(buf, size, "verify_result_%s.json", impl);
	return n >= 0 && (size_t)n < size ? 0 : -1;
}

int kj_gate_check(const char *path, const struct kj_task *t, const uint64_t key[4],
		  const struct kj_gate_opts *o, char *why, size_t size,
		  char *record_device, size_t dsize, struct kj_error *err)
{
	json_error_t je;
	int oom;
	json_t *rec = kj__json_load_file(path, 0, &je, &oom), *kj, *cases, *strict;
	const char *sig, *dev, *status, *seeds;
	char want[65];
	long long total, passed;
	size_t i;
	int res = 0;

	why[0] = '\0';
	if (record_device && dsize)
		record_device[0] = '\0';
	if (oom)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (!rec) {
		if (json_error_code(&je) == json_error_cannot_open_file)
			return kj_error_set(err, errno == ENOENT ? KJ_ENOENT : KJ_EIO,
					    "'%s' %s: run kjudge verify first", path,
					    errno == ENOENT ? "does not exist" : "cannot be read");
		return kj_error_set(err, KJ_EPROTOCOL, "'%s' cannot be read: %s (line %d)", path,
				    je.text, je.line);
	}
	kj = json_object_get(rec, "kjudge");
	sig = json_string_value(json_object_get(kj, "signature"));
	dev = json_string_value(json_object_get(kj, "device"));
	status = json_string_value(json_object_get(kj, "status"));
	seeds = json_string_value(json_object_get(kj, "seeds"));
	total = json_integer_value(json_object_get(rec, "total_cases"));
	passed = json_integer_value(json_object_get(rec, "passed_cases"));
	if (record_device && dev)
		snprintf(record_device, dsize, "%s", dev);
	/* The seed's gate first, in its words: a record of a run that did not
	 * pass is refused for that, whoever wrote it. */
	if (total <= 0 || passed != total || json_array_size(json_object_get(rec, "failures"))) {
		const char *of = member(json_object_get(kj, "candidate"), "file");

		res = refuse(why, size, "%s\n  passed/total: %lld/%lld%s", path, passed, total,
			     total <= 0 ? "\n  verify did not run any case" : "");
		/* A record of another candidate file (written by an older
		 * kjudge's verify, or with --output) says whose failures these
		 * are: never taken for this candidate's. */
		if (*of && strcmp(base_name(of), base_name(t->cand_file)) != 0) {
			size_t n = strlen(why);

			snprintf(why + n, size - n, "\n  this record is of the candidate '%s', not "
				 "of '%s': verify this one", of, t->cand_file);
		}
		add_failures(rec, why, size);
		goto out;
	}
	if (!json_is_object(kj) || !sig) {
		res = refuse(why, size, "'%s' was not written by kjudge verify (no signature)", path);
		goto out;
	}
	if (kj__record_signature(rec, key, want) != KJ_OK) {
		json_decref(rec);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	if (strcmp(sig, want) != 0) {
		res = refuse(why, size, "'%s' does not carry this judge's signature: it was "
			     "edited, or written by another judge or machine", path);
		goto out;
	}
	if (strcmp(member(json_object_get(kj, "task"), "sha256"), t->task_sha256) != 0) {
		res = refuse(why, size, "'%s' verified another version of the task file '%s' "
			     "(its SHA-256 differs): verify again", path, t->task_file);
		goto out;
	}
	if (json_object_get(kj, "kernels_disabled")) {
		res = refuse(why, size, "'%s' comes from a run with the candidate's kernels "
			     "disabled (--disable-kernels), not a verification: verify again", path);
		goto out;
	}
	if (strcmp(member(json_object_get(kj, "task"), "cases_sha256"), t->cases_sha256) != 0) {
		res = refuse(why, size, "'%s' verified the task with another cases file than "
			     "'%s' (its SHA-256 differs, or one of the two runs had none): verify "
			     "again", path, t->cases_file[0] ? t->cases_file : "(none)");
		goto out;
	}
	if (!t->have_candidate ||
	    strcmp(member(json_object_get(kj, "candidate"), "sha256"), t->cand_sha256) != 0) {
		res = refuse(why, size, "'%s' verified another candidate than '%s' (the file "
			     "changed since, or is another one): verify again", path, t->cand_file);
		goto out;
	}
	if (!seeds || (strcmp(seeds, "secret") != 0 && !(o && o->allow_fixed_seeds))) {
		res = refuse(why, size, "'%s' comes from a run with fixed seeds (--seed), whose "
			     "inputs a candidate can know: verify without --seed", path);
		goto out;
	}
	if (json_integer_value(json_object_get(kj, "infrastructure_errors")) != 0 ||
	    !status || !strcmp(status, "judge_error")) {
		res = refuse(why, size, "'%s' comes from a run the judge or the machine failed "
			     "in: verify again", path);
		goto out;
	}
	if (!strcmp(status, "task_error")) {
		res = refuse(why, size, "'%s': the task failed in that run, not the candidate", path);
		goto out;
	}
	/* Every case passed, recomputed from the cases themselves, not only
	 * from the counts. */
	cases = json_object_get(kj, "cases");
	for (i = 0; i < json_array_size(cases); i++)
		if (strcmp(member(json_array_get(cases, i), "status"), "pass") != 0)
			break;
	if (json_array_size(cases) != (size_t)total || i != json_array_size(cases) ||
	    strcmp(status, "pass") != 0) {
		res = refuse(why, size, "'%s' does not show every case passed (its cases or "
			     "status disagree with its counts)", path);
		goto out;
	}
	/* A verify --strict that failed the candidate is a verify that did
	 * not pass; benchmark --strict wants the anti-cheat layers run and
	 * passed, and only verify --strict runs the kernels-disabled one. */
	strict = json_object_get(kj, "strict");
	if (strict && strcmp(member(strict, "status"), "pass") != 0) {
		res = refuse(why, size, "'%s': verify --strict failed the candidate: %s: %s", path,
			     member(strict, "error_type"), member(strict, "reason"));
		goto out;
	}
	if (o && o->strict && !strict) {
		res = refuse(why, size, "'%s' comes from a verify without --strict, which ran no "
			     "anti-cheat layer: run kjudge verify --strict first", path);
		goto out;
	}
	if (o && o->device && dev && strcmp(o->device, dev) != 0) {
		res = refuse(why, size, "'%s' verified the candidate on %s, not on %s: verify "
			     "on the device you benchmark on", path, dev, o->device);
		goto out;
	}
out:
	json_decref(rec);
	return res;
}
