/*
 * verdict.c - the error-type table and case records (see kjudge/verdict.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/verdict.h"
#include "base/text.h"
#include "base/internal.h"

struct vt_row {
	const char *name;
	enum kj_charge charge;
	enum kj_category cat;
	const char *text;
};

static const struct vt_row vt_rows[] = {
#define KJ__ET_ROW(e, name, charge, cat, text) { name, KJ_CHARGE_##charge, KJ_CAT_##cat, text },
	KJ_VERDICT_MAP(KJ__ET_ROW)
#undef KJ__ET_ROW
};

static const char *const cat_names[] = {
#define KJ__CAT_NAME(e, name) name,
	KJ_CATEGORY_MAP(KJ__CAT_NAME)
#undef KJ__CAT_NAME
};

/* An out-of-range type is treated as the judge's own error, never a pass. */
static const struct vt_row *row(enum kj_etype t)
{
	if ((unsigned)t >= KJ_ET_COUNT_)
		return &vt_rows[KJ_ET_JUDGE];
	return &vt_rows[t];
}

const char *kj_etype_name(enum kj_etype t)
{
	return row(t)->name;
}

const char *kj_etype_text(enum kj_etype t)
{
	return row(t)->text;
}

enum kj_charge kj_etype_charge(enum kj_etype t)
{
	return row(t)->charge;
}

enum kj_category kj_etype_category(enum kj_etype t)
{
	return row(t)->cat;
}

enum kj_status kj_etype_status(enum kj_etype t)
{
	switch (kj_etype_charge(t)) {
	case KJ_CHARGE_NONE:
		return (unsigned)t < KJ_ET_COUNT_ && t == KJ_ET_NONE ? KJ_STATUS_PASS
								      : KJ_STATUS_JUDGE_ERROR;
	case KJ_CHARGE_CANDIDATE:
		return KJ_STATUS_FAIL;
	case KJ_CHARGE_TASK:
		return KJ_STATUS_TASK_ERROR;
	default:
		return KJ_STATUS_JUDGE_ERROR;
	}
}

int kj_etype_from_name(const char *name)
{
	int i;

	for (i = 1; name && i < KJ_ET_COUNT_; i++)
		if (!strcmp(vt_rows[i].name, name))
			return i;
	return -1;
}

const char *kj_status_name(enum kj_status s)
{
	switch (s) {
	case KJ_STATUS_PASS:
		return "pass";
	case KJ_STATUS_FAIL:
		return "fail";
	case KJ_STATUS_TASK_ERROR:
		return "task_error";
	default:
		return "judge_error";
	}
}

const char *kj_charge_name(enum kj_charge c)
{
	switch (c) {
	case KJ_CHARGE_NONE:
		return "none";
	case KJ_CHARGE_CANDIDATE:
		return "candidate";
	case KJ_CHARGE_TASK:
		return "task";
	default:
		return "judge";
	}
}

const char *kj_category_name(enum kj_category c)
{
	if ((unsigned)c >= sizeof(cat_names) / sizeof(cat_names[0]))
		return "judge";
	return cat_names[c];
}

/* --- case records -------------------------------------------------------------- */

void kj_case_init(struct kj_case *c, int index)
{
	memset(c, 0, sizeof(*c));
	c->index = index;
	c->type = KJ_ET_NOT_JUDGED;
	c->speedup = NAN;
}

void kj_case_release(struct kj_case *c)
{
	free(c->message);
	free(c->exception);
	json_decref(c->input_desc);
	json_decref(c->metrics);
	json_decref(c->aliases);
	json_decref(c->sol);
	kj_case_init(c, c->index);
}

enum kj_status kj_case_status(const struct kj_case *c)
{
	return kj_etype_status(c->type);
}

static int set_message(struct kj_case *c, enum kj_etype t, char *clean)
{
	/* A type that means "passed" cannot be set as a failure. */
	c->type = t == KJ_ET_NONE ? KJ_ET_JUDGE : t;
	free(c->message);
	c->message = clean;
	return clean ? KJ_OK : KJ_ENOMEM;
}

int kj_case_fail_text(struct kj_case *c, enum kj_etype t, const char *text, size_t len)
{
	return set_message(c, t, kj__text_clean(text, len, KJ_CASE_MSG_MAX));
}

int kj_case_fail(struct kj_case *c, enum kj_etype t, const char *fmt, ...)
{
	char *raw = NULL;
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vasprintf(&raw, fmt, ap);
	va_end(ap);
	if (n < 0)
		return set_message(c, t, NULL);
	rc = kj_case_fail_text(c, t, raw, (size_t)n);
	free(raw);
	return rc;
}

int kj_case_set_exception(struct kj_case *c, const char *name)
{
	free(c->exception);
	c->exception = name ? kj__text_cleans(name, 200) : NULL;
	return name && !c->exception ? KJ_ENOMEM : KJ_OK;
}

int kj_case_pass(struct kj_case *c, int compared, int expected)
{
	if (expected <= 0 || compared != expected) {
		kj_case_fail(c, KJ_ET_JUDGE, "internal: the case was about to pass with %d of %d "
			     "outputs compared", compared, expected);
		return KJ_EINVAL;
	}
	c->type = KJ_ET_NONE;
	free(c->message);
	c->message = NULL;
	c->compared = compared;
	c->expected = expected;
	c->output = 0;
	return KJ_OK;
}
