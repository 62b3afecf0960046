/*
 * strict.c - the anti-cheat of `kjudge verify` and `kjudge benchmark`
 * (docs/cli.md, Anti-cheat).
 *
 * A candidate that passes every case may still compute its answer with
 * PyTorch beside a kernel that runs for show.  The static check (what
 * `kjudge validate` does, a few milliseconds) runs on every verify and
 * benchmark: its finding is in the record ("kjudge": {"static"}) and a
 * failure is a warning, on stderr and in the record's warnings, so that a
 * loop rewarded on the exit code alone is told.  With --strict, eval's
 * layers decide the verdict: a failed static check, a candidate that still
 * passes with its kernels disabled, or (on CUDA) one whose forward ran
 * none of its own kernels fails (exit 1), with the layer's error type and
 * why.  The kernels-disabled run costs a second start of the workers, so
 * it runs only with --strict, and only after every case passed.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "base/banned.h"

void kj_cli_strict_init(struct kj_cli_strict *s, int on)
{
	memset(s, 0, sizeof(*s));
	s->on = on;
	s->disabled.ok = s->profile.ok = -1;
}

void kj_cli_strict_release(struct kj_cli_strict *s)
{
	if (s->have_static)
		kj_static_layer_release(&s->st);
	json_decref(s->extra);
	kj_cli_strict_init(s, 0);
}

int kj_cli_strict_static(const struct kj_cli_command *cmd, const struct kj_cli_torch *run,
			 struct kj_cli_strict *s)
{
	struct kj_error err;

	/* A missing candidate file is every case's failure already
	 * (CandidateNotFound), or benchmark's bad input. */
	if (!run->task.have_candidate)
		return 0;
	if (kj_static_layer(run->task.cand_file, &s->st, &err) != KJ_OK) {
		kj_cli_error(cmd, "the static check: %s", err.msg);
		/* Memory the judge could not get is the machine's failure (the
		 * command's judge exit: 1 for benchmark, 2 for verify, whose 1
		 * says the candidate failed); anything else the input's (2). */
		return kj_cli_exit_for(cmd, err.code);
	}
	s->have_static = 1;
	if (s->st.layer.ok != 1) {
		s->error_type = kj_etype_name(KJ_ET_STATIC_CHECK);
		s->reason = s->st.layer.msg;
	}
	return 0;
}

int kj_cli_strict_layers(const struct kj_cli_command *cmd, struct kj_cli_torch *run,
			 struct kj_cli_strict *s)
{
	int rc;

	if (!s->on)
		return 0;
	/* After a failed static check the verdict is decided: the run could
	 * only cost time. */
	if (s->error_type) {
		snprintf(s->disabled.msg, sizeof(s->disabled.msg), "not run: the static check "
			 "failed");
		snprintf(s->profile.msg, sizeof(s->profile.msg), "%s", s->disabled.msg);
		return 0;
	}
	rc = kj_cli_torch_disabled(cmd, run, &s->disabled);
	if (rc)
		return rc;
	if (s->disabled.ok != 1) {
		s->error_type = kj_etype_name(KJ_ET_KERNELS_NOT_USED);
		s->reason = s->disabled.msg;
		return 0;
	}
	/* The profiler sees GPU kernels only: on the CPU the layer does not
	 * apply. */
	if (strncmp(run->task.device, "cuda", 4) != 0) {
		snprintf(s->profile.msg, sizeof(s->profile.msg), "not applicable on %s",
			 run->task.device);
		return 0;
	}
	kj_profile_layer(run->task.cand.kernel_names, s->st.kernels, s->st.n_kernels,
			 &s->profile);
	if (s->profile.ok != 1) {
		s->error_type = kj_etype_name(KJ_ET_NO_OWN_KERNEL);
		s->reason = s->profile.msg;
	}
	return 0;
}

/* The record's "strict" member: the verdict of the layers and each one. */
static json_t *strict_json(const struct kj_cli_strict *s, int cases_passed)
{
	const char *status = s->error_type ? "fail" : cases_passed ? "pass" : "not_judged";
	json_t *o = json_pack("{s:s, s:s?, s:s?}", "status", status, "error_type",
			      s->error_type, "reason", s->error_type ? s->reason : NULL);

	/* benchmark's layers are those of the verify record it names. */
	if (o && !s->extra &&
	    (json_object_set_new(o, "kernels_disabled", kj_layer_json(&s->disabled)) != 0 ||
	     json_object_set_new(o, "profile", kj_layer_json(&s->profile)) != 0)) {
		json_decref(o);
		return NULL;
	}
	if (o && s->extra && json_object_update(o, s->extra) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int kj_cli_strict_finish(const struct kj_cli_command *cmd, struct kj_cli_torch *run,
			 struct kj_cli_strict *s)
{
	struct kj_result *r = &run->result;
	json_t *members = json_object();
	int passed, oom = !members;

	kj_result_counts(r, &passed, NULL, NULL, NULL);
	if (!oom && s->have_static)
		oom = json_object_set(members, "static", s->st.record) != 0;
	if (!oom && s->on)
		oom = json_object_set_new(members, "strict",
					  strict_json(s, r->n_cases > 0 && passed == r->n_cases)) != 0;
	if (!oom && s->have_static && s->st.layer.ok != 1) {
		if (!r->warnings)
			r->warnings = json_array();
		oom = !r->warnings ||
		      json_array_append_new(r->warnings, json_pack("{s:s, s:s}", "layer", "static",
			      "warning", s->st.layer.msg)) != 0;
	}
	if (oom) {
		json_decref(members);
		return kj_cli_error(cmd, "out of memory");
	}
	json_decref(r->anticheat);
	r->anticheat = members;
	/* A case that failed is the verdict already: no layer is said. */
	if (!s->on || (r->n_cases > 0 && passed == r->n_cases))
		kj_cli_strict_say(cmd, s);
	return 0;
}

void kj_cli_strict_say(const struct kj_cli_command *cmd, const struct kj_cli_strict *s)
{
	/* The validator's words quote the candidate's source: shown. */
	if (s->on && s->error_type)
		fprintf(stderr, "kjudge %s: --strict: fail: %s: %s\n", cmd->name, s->error_type,
			kj_cli_shown(s->reason));
	else if (!s->on && s->have_static && s->st.layer.ok != 1)
		fprintf(stderr, "kjudge %s: warning: the static check failed (%s; no clean pass, "
			"--strict fails it; kjudge validate FILE says more): %s\n", cmd->name,
			kj_etype_name(KJ_ET_STATIC_CHECK), kj_cli_shown(s->st.layer.msg));
}

int kj_cli_strict_failed(const struct kj_cli_strict *s)
{
	return s->on && s->error_type != NULL;
}
