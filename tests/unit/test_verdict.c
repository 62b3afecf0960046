/*
 * test_verdict.c - verdict.h's one table of error types: the attempt-level
 * rows that eval and --strict write (their stored names, who is charged,
 * their categories), and who is charged when a task's start fails, decided
 * from what the runner recorded rather than from its message.
 */
#include <string.h>

#include "kjudge/error.h"
#include "kjudge/pipeline.h"
#include "kjudge/verdict.h"
#include "unit.h"

/* Each attempt-level row as a store of before holds it: the names are
 * stored, so they may never change. */
KJ_TEST(verdict_attempt_level_rows)
{
	static const struct {
		enum kj_etype t;
		const char *name, *status, *category, *charged;
	} rows[] = {
		{ KJ_ET_STATIC_CHECK, "StaticCheck", "fail", "static", "candidate" },
		{ KJ_ET_KERNELS_NOT_USED, "KernelsNotUsed", "fail", "anticheat", "candidate" },
		{ KJ_ET_NO_OWN_KERNEL, "NoOwnKernel", "fail", "anticheat", "candidate" },
		{ KJ_ET_BASELINE_FAILED, "BaselineFailed", "task_error", "task", "task" },
		{ KJ_ET_NO_TARGET, "NO_TARGET", "fail", "build", "candidate" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		KJ_CHECK_STR(kj_etype_name(rows[i].t), rows[i].name);
		KJ_CHECK_STR(kj_status_name(kj_etype_status(rows[i].t)), rows[i].status);
		KJ_CHECK_STR(kj_category_name(kj_etype_category(rows[i].t)), rows[i].category);
		KJ_CHECK_STR(kj_charge_name(kj_etype_charge(rows[i].t)), rows[i].charged);
		KJ_CHECK_INT(kj_etype_from_name(rows[i].name), (int)rows[i].t);
		KJ_CHECK(strlen(kj_etype_text(rows[i].t)) > 0);
	}
	KJ_CHECK_INT(kj_etype_from_name("Baselinefailed"), -1);
}

/* The table is append only (its numbers are stored): the attempt-level
 * rows come after every type of a case, the new category after "judge". */
KJ_TEST(verdict_table_appended_only)
{
	KJ_CHECK_INT(KJ_ET_L2_PERSIST, 30);
	KJ_CHECK_INT(KJ_ET_STATIC_CHECK, KJ_ET_L2_PERSIST + 1);
	KJ_CHECK_INT(KJ_ET_NO_TARGET + 1, KJ_ET_COUNT_);
	KJ_CHECK_STR(kj_etype_name(KJ_ET_ACCURACY), "AccuracyError");
	KJ_CHECK_STR(kj_etype_name(KJ_ET_L2_PERSIST), "L2PersistenceSet");
	KJ_CHECK_INT(KJ_CAT_ANTICHEAT, KJ_CAT_JUDGE + 1);
	KJ_CHECK_STR(kj_category_name(KJ_CAT_JUDGE), "judge");
	KJ_CHECK_STR(kj_category_name(KJ_CAT_ANTICHEAT), "anticheat");
	/* Out of range is the judge's, never a verdict on anyone else. */
	KJ_CHECK_STR(kj_category_name((enum kj_category)(KJ_CAT_ANTICHEAT + 1)), "judge");
}

/* A runner's start, scripted: its code, whether it charges the task, and
 * a message that says the opposite of what it recorded. */
static int start_rc;
static int start_charges_task;

static int scripted_start(struct kj_task *t, struct kj_error *err)
{
	if (start_charges_task)
		t->start_charge = KJ_CHARGE_TASK;
	if (start_rc == KJ_OK)
		return KJ_OK;
	return kj_error_set(err, start_rc, start_charges_task
				   ? "a python that cannot start"
				   : "'t.py': the task cannot be loaded: the task has no cases");
}

static enum kj_charge start_charged(int rc, int charges_task, enum kj_charge stale)
{
	struct kj_task t;
	struct kj_attempt a;
	struct kj_judge_opts o;
	struct kj_error err;
	int got;

	memset(&t, 0, sizeof(t));
	memset(&a, 0, sizeof(a));
	memset(&o, 0, sizeof(o));
	memset(&err, 0, sizeof(err));
	o.seed_fixed = 1;
	t.start = scripted_start;
	t.start_charge = stale;
	start_rc = rc;
	start_charges_task = charges_task;
	got = kj_task_start(&t, &a, &o, &err);
	KJ_CHECK_INT(got, rc);
	return kj_task_start_charged(&t, got);
}

KJ_TEST(verdict_task_start_charge_is_data)
{
	/* The runner said the task failed: the task is charged, whatever
	 * the message says. */
	KJ_CHECK_INT(start_charged(KJ_EINVAL, 1, KJ_CHARGE_NONE), KJ_CHARGE_TASK);
	/* A message naming the task's failure, with nothing recorded, is
	 * the machine's. */
	KJ_CHECK_INT(start_charged(KJ_EINVAL, 0, KJ_CHARGE_NONE), KJ_CHARGE_JUDGE);
	/* A charge left from an earlier start never carries over. */
	KJ_CHECK_INT(start_charged(KJ_EINVAL, 0, KJ_CHARGE_TASK), KJ_CHARGE_JUDGE);
	/* Only a refusal of the task (KJ_EINVAL) charges it: a device that is
	 * not there stays the machine's. */
	KJ_CHECK_INT(start_charged(KJ_ENODEVICE, 1, KJ_CHARGE_NONE), KJ_CHARGE_JUDGE);
	KJ_CHECK_INT(start_charged(KJ_OK, 0, KJ_CHARGE_TASK), KJ_CHARGE_NONE);
}

/* A task with no runner at all is refused, and not charged to the task. */
KJ_TEST(verdict_task_start_without_runner)
{
	struct kj_task t;
	struct kj_attempt a;
	struct kj_judge_opts o;
	struct kj_error err;

	memset(&t, 0, sizeof(t));
	memset(&a, 0, sizeof(a));
	memset(&o, 0, sizeof(o));
	memset(&err, 0, sizeof(err));
	o.seed_fixed = 1;
	KJ_CHECK_INT(kj_task_start(&t, &a, &o, &err), KJ_EINVAL);
	KJ_CHECK_INT(kj_task_start_charged(&t, KJ_EINVAL), KJ_CHARGE_JUDGE);
}
