/*
 * plan.c - the plan file a cluster run's shards are started from
 * (kjudge/eval.h): which attempts each shard holds, by their content keys,
 * as shard.c assigns them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/internal.h"

/* --- the plan file ---------------------------------------------------------------------- */

void kj_eval_plan_init(struct kj_eval_plan *p)
{
	memset(p, 0, sizeof(*p));
}

void kj_eval_plan_release(struct kj_eval_plan *p)
{
	if (!p)
		return;
	free(p->keys);
	free(p->shard);
	free(p->settings);
	free(p->device);
	free(p->suite);
	free(p->candidates);
	kj_eval_plan_init(p);
}

static char *dup_or_null(const char *s, int *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = 1;
	return d;
}

/* The plan's id: the first 16 hex digits of the SHA-256 of what it is. */
static int plan_id(struct kj_eval_plan *p, struct kj_error *err)
{
	size_t cap = 256 + strlen(p->settings) + strlen(p->device) + p->n * 72, len = 0, i;
	char *buf = malloc(cap), hex[KJ_SHA256_HEX];
	int n;

	if (!buf)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	n = snprintf(buf, cap, "kjudge-plan 2\n%s\n%s\n%s\n%d\n", p->settings, p->device,
		     p->batch, p->shards);
	len = n > 0 ? (size_t)n : 0;
	for (i = 0; i < p->n && len < cap; i++) {
		n = snprintf(buf + len, cap - len, "%s %d\n", p->keys[i], p->shard[i]);
		len += n > 0 ? (size_t)n : 0;
	}
	if (len >= cap || kj__sha256_hex(buf, len, hex) < 0) {
		free(buf);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	free(buf);
	memcpy(p->id, hex, 16);
	p->id[16] = '\0';
	return KJ_OK;
}

int kj_eval_plan_make(const struct kj_eval_set *set, const size_t *todo, size_t n,
		      const char (*keys)[65], int shards, const char *settings_text,
		      const char *device, const char batch_hex[33], const char *suite,
		      const char *candidates, struct kj_eval_plan *p, struct kj_error *err)
{
	int oom = 0, rc;
	size_t i;

	kj_eval_plan_init(p);
	if (shards < 1 || (n > 0 && (size_t)shards > n))
		shards = n > 0 ? (int)(n < (size_t)shards ? n : (size_t)shards) : 1;
	p->shards = shards;
	p->n = n;
	p->keys = calloc(n ? n : 1, sizeof(*p->keys));
	p->shard = calloc(n ? n : 1, sizeof(*p->shard));
	p->settings = dup_or_null(settings_text, &oom);
	p->device = dup_or_null(device, &oom);
	p->suite = dup_or_null(suite, &oom);
	p->candidates = dup_or_null(candidates, &oom);
	snprintf(p->batch, sizeof(p->batch), "%s", batch_hex);
	if (!p->keys || !p->shard || oom || !p->settings || !p->device) {
		kj_eval_plan_release(p);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		memcpy(p->keys[i], keys[todo[i]], 65);
	rc = kj_eval_shard_assign(set, todo, n, shards, p->shard, err);
	if (rc == KJ_OK)
		rc = plan_id(p, err);
	if (rc != KJ_OK)
		kj_eval_plan_release(p);
	return rc;
}

json_t *kj_eval_plan_json(const struct kj_eval_plan *p)
{
	json_t *o = json_object(), *list = json_array();
	size_t i;
	int bad = !o || !list;

	for (i = 0; !bad && i < p->n; i++)
		bad = json_array_append_new(list, json_pack("[s,i]", p->keys[i], p->shard[i])) != 0;
	if (!bad)
		bad = json_object_set_new(o, "kjudge_plan", json_integer(2)) ||
		      json_object_set_new(o, "id", json_string(p->id)) ||
		      json_object_set_new(o, "shards", json_integer(p->shards)) ||
		      json_object_set_new(o, "device", json_string(p->device)) ||
		      json_object_set_new(o, "batch", json_string(p->batch)) ||
		      json_object_set_new(o, "settings", json_string(p->settings)) ||
		      json_object_set_new(o, "suite", p->suite ? json_string(p->suite) : json_null()) ||
		      json_object_set_new(o, "candidates", p->candidates ? json_string(p->candidates)
									  : json_null()) ||
		      json_object_set(o, "attempts", list);
	json_decref(list);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int hex_ok(const char *s, size_t len)
{
	size_t i;

	if (!s || strlen(s) != len)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int kj_eval_plan_load(const char *path, struct kj_eval_plan *p, struct kj_error *err)
{
	json_error_t je;
	json_t *o, *list;
	const char *id, *device, *batch, *settings;
	char want[17];
	size_t i;
	int oom = 0, rc = KJ_OK;
	json_int_t shards;

	kj_eval_plan_init(p);
	o = kj__json_load_file(path, JSON_REJECT_DUPLICATES, &je, &oom);
	if (!o)
		return oom ? kj_error_set(err, KJ_ENOMEM, "out of memory")
			   : kj_error_set(err, KJ_EINVAL, "'%s': %s", path, je.text);
	list = json_object_get(o, "attempts");
	id = json_string_value(json_object_get(o, "id"));
	device = json_string_value(json_object_get(o, "device"));
	batch = json_string_value(json_object_get(o, "batch"));
	settings = json_string_value(json_object_get(o, "settings"));
	shards = json_integer_value(json_object_get(o, "shards"));
	if (json_integer_value(json_object_get(o, "kjudge_plan")) == 1) {
		/* Its attempts' keys name tasks by content alone: no shard of
		 * this judge finds them. */
		json_decref(o);
		return kj_error_set(err, KJ_EINVAL, "'%s': a plan of version 1, made by an older "
				    "judge whose keys are not this one's: submit the study again "
				    "(its store keeps every verdict)", path);
	}
	if (json_integer_value(json_object_get(o, "kjudge_plan")) != 2 || !json_is_array(list) ||
	    !hex_ok(id, 16) || !device || !hex_ok(batch, 32) || !settings || shards < 1 ||
	    shards > 100000) {
		json_decref(o);
		return kj_error_set(err, KJ_EINVAL, "'%s': not a kjudge plan (version 2)", path);
	}
	p->n = json_array_size(list);
	p->shards = (int)shards;
	p->keys = calloc(p->n ? p->n : 1, sizeof(*p->keys));
	p->shard = calloc(p->n ? p->n : 1, sizeof(*p->shard));
	p->settings = dup_or_null(settings, &oom);
	p->device = dup_or_null(device, &oom);
	p->suite = dup_or_null(json_string_value(json_object_get(o, "suite")), &oom);
	p->candidates = dup_or_null(json_string_value(json_object_get(o, "candidates")), &oom);
	snprintf(p->batch, sizeof(p->batch), "%s", batch);
	if (!p->keys || !p->shard || oom) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < p->n; i++) {
		json_t *e = json_array_get(list, i);
		const char *k = json_string_value(json_array_get(e, 0));
		json_t *s = json_array_get(e, 1);

		if (json_array_size(e) != 2 || !hex_ok(k, 64) || !json_is_integer(s) ||
		    json_integer_value(s) < 0 || json_integer_value(s) >= shards) {
			rc = kj_error_set(err, KJ_EINVAL, "'%s': attempts[%zu]: not [KEY, SHARD] "
					  "with SHARD below %d", path, i, (int)shards);
			goto out;
		}
		memcpy(p->keys[i], k, 65);
		p->shard[i] = (int)json_integer_value(s);
	}
	/* The id says what the plan is: a plan edited by hand is refused. */
	rc = plan_id(p, err);
	memcpy(want, p->id, sizeof(want));
	if (rc == KJ_OK && strcmp(want, id) != 0)
		rc = kj_error_set(err, KJ_EINVAL, "'%s': its id %s does not match its contents "
				  "(%s): changed since it was written", path, id, want);
out:
	json_decref(o);
	if (rc != KJ_OK)
		kj_eval_plan_release(p);
	return rc;
}
