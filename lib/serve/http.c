/*
 * http.c - libmicrohttpd's glue (kjudge/serve.h): the routes of the API
 * (docs/serve.md), the bearer token, the body's bound, the errors as
 * {"error": {"code", "message"}}.
 *
 * libmicrohttpd runs a thread per connection (its internal listening
 * thread accepts), each with an inactivity timeout: a client that sends
 * one byte a second holds its own thread and nothing else, and a long
 * poll (GET ?wait=S) blocks only its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "serve/serve_internal.h"
#include "base/json.h"
#include "base/banned.h"

/* jansson's, through base/json.c's guards (a failed allocation is a NULL). */
static char *dumps(const json_t *v, size_t flags)
{
	int oom;

	return kj__json_dumps(v, flags, &oom);
}

/* Seconds of silence after which a connection is closed. */
#define IDLE_S 30
/* The longest long poll. */
#define WAIT_MAX_S 60.0
/* Connections at once, past which new ones are refused. */
#define CONNECTIONS_MAX 512

struct conn {
	char *body;
	size_t n;
	int too_big;
};

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type,
				 const char *text, const char *retry_after)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (retry_after)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
	rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

/* A JSON answer (steals v). */
static enum MHD_Result send_json(struct MHD_Connection *c, unsigned code, json_t *v,
				 const char *retry_after)
{
	char *text = v ? dumps(v, JSON_COMPACT) : NULL;
	enum MHD_Result rc;

	json_decref(v);
	if (!text)
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "application/json",
				 "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}",
				 NULL);
	rc = send_text(c, code, "application/json", text, retry_after);
	free(text);
	return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *name,
				  const char *message, const char *retry_after)
{
	return send_json(c, code, json_pack("{s:{s:s, s:s}}", "error", "code", name, "message",
					    message), retry_after);
}

/* Whether the request carries the server's token (always, when none is
 * asked): compared in time that does not depend on where they differ. */
static int authorized(const struct kj_serve *s, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	size_t n, i;
	unsigned char diff = 0;

	if (!s->o.token)
		return 1;
	if (!h || strncmp(h, "Bearer ", 7) != 0)
		return 0;
	h += 7;
	n = strlen(s->o.token);
	if (strlen(h) != n)
		return 0;
	for (i = 0; i < n; i++)
		diff |= (unsigned char)(h[i] ^ s->o.token[i]);
	return diff == 0;
}

static enum MHD_Result post_evaluations(struct kj_serve *s, struct MHD_Connection *c,
					const struct conn *k)
{
	struct kj_serve_req *reqs = NULL;
	struct kj_error err;
	size_t n = 0, i;
	json_t *ids;
	int batch = 0;

	err.code = 0;
	if (kj_serve_parse(k->body ? k->body : "", k->n, &reqs, &n, &batch, &err) != KJ_OK)
		return send_error(c, err.code == KJ_ENOMEM ? 500 : 400, err.code == KJ_ENOMEM
				  ? "internal" : "bad_request", err.msg, NULL);
	ids = json_array();
	for (i = 0; ids && i < n; i++) {
		char id[KJ_SERVE_NAME_MAX + 8];
		enum kj__serve_verdict v = kj__serve_submit(s, &reqs[i], id, sizeof(id), &err);
		json_t *e;
		char msg[KJ_ERROR_MSG_MAX + 64];

		if (v == KJ__SERVE_ACCEPTED) {
			json_array_append_new(ids, json_pack("{s:s, s:s}", "id", id, "status",
							     "queued"));
			continue;
		}
		if (batch)
			snprintf(msg, sizeof(msg), "evaluations[%zu]: %s", i,
				 v == KJ__SERVE_FULL ? "the queue is full"
				 : v == KJ__SERVE_DRAINING ? "the server is draining" : err.msg);
		else
			snprintf(msg, sizeof(msg), "%s", v == KJ__SERVE_FULL ? "the queue is full"
				 : v == KJ__SERVE_DRAINING ? "the server is draining" : err.msg);
		e = json_pack("{s:{s:s, s:s}, s:O}", "error", "code",
			      v == KJ__SERVE_NO_TASK ? "not_found" : v == KJ__SERVE_FULL
			      ? "queue_full" : v == KJ__SERVE_DRAINING ? "draining"
			      : v == KJ__SERVE_BAD ? "bad_request" : "internal", "message", msg,
			      "accepted", ids);
		json_decref(ids);
		kj_serve_reqs_free(reqs, n);
		return send_json(c, v == KJ__SERVE_NO_TASK ? 404 : v == KJ__SERVE_FULL ? 429
				 : v == KJ__SERVE_DRAINING ? 503 : v == KJ__SERVE_BAD ? 400 : 500, e,
				 v == KJ__SERVE_FULL ? "2" : v == KJ__SERVE_DRAINING ? "10" : NULL);
	}
	kj_serve_reqs_free(reqs, n);
	if (!ids)
		return send_error(c, 500, "internal", "out of memory", NULL);
	if (batch)
		return send_json(c, 202, json_pack("{s:o}", "evaluations", ids), NULL);
	{
		json_t *one = json_incref(json_array_get(ids, 0));

		json_decref(ids);
		return send_json(c, 202, one, NULL);
	}
}

static enum MHD_Result evaluation(struct kj_serve *s, struct MHD_Connection *c,
				  const char *method, const char *id)
{
	struct kj_error err;
	int found = 0;

	err.code = 0;
	if (!*id || strlen(id) > KJ_SERVE_NAME_MAX || strchr(id, '/'))
		return send_error(c, 404, "not_found", "no such evaluation", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) == 0) {
		const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
		double wait_s = 0;
		char *end = NULL;
		json_t *a;

		if (w) {
			wait_s = strtod(w, &end);
			if (end == w || *end || !(wait_s >= 0 && wait_s <= WAIT_MAX_S))
				return send_error(c, 400, "bad_request", "wait: not a number of "
						  "seconds from 0 to 60", NULL);
		}
		a = kj__serve_answer(s, id, wait_s, &found, &err);
		if (!a && !found)
			return err.code ? send_error(c, 500, "internal", err.msg, NULL)
					: send_error(c, 404, "not_found", "no such evaluation", NULL);
		if (!a)
			return send_error(c, 500, "internal", err.msg, NULL);
		return send_json(c, 200, a, NULL);
	}
	if (strcmp(method, MHD_HTTP_METHOD_DELETE) == 0) {
		char state[16] = "";
		int rc = kj__serve_cancel(s, id, state, sizeof(state), &err);

		if (rc == -1)
			return send_error(c, 404, "not_found", "no such evaluation", NULL);
		if (rc == -2)
			return send_error(c, 500, "internal", err.msg, NULL);
		if (rc == 2)
			return send_json(c, 202, json_pack("{s:s, s:s}", "id", id, "status",
							   "cancelling"), NULL);
		return send_json(c, 200, json_pack("{s:s, s:s}", "id", id, "status",
						   strcmp(state, "queued") == 0 ? "cancelled" : state),
				 NULL);
	}
	return send_error(c, 405, "method_not_allowed", "GET or DELETE", NULL);
}

static enum MHD_Result route(struct kj_serve *s, struct MHD_Connection *c, const char *url,
			     const char *method, const struct conn *k)
{
	int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;

	if (strcmp(url, "/v1/health") == 0 && get) {
		size_t depth;
		long long running;

		pthread_mutex_lock(&s->mu);
		depth = kj_serve_queue_depth(s->q);
		running = s->running;
		pthread_mutex_unlock(&s->mu);
		return send_json(c, 200, json_pack("{s:s, s:s, s:I, s:I}", "status",
						   kj__serve_draining(s) ? "draining" : "ok",
						   "version", KJ_VERSION, "queued",
						   (json_int_t)depth, "running",
						   (json_int_t)running), NULL);
	}
	if (!authorized(s, c))
		return send_error(c, 401, "unauthorized", "the bearer token is missing or wrong",
				  NULL);
	if (k->too_big) {
		char msg[96];

		snprintf(msg, sizeof(msg), "the body is over %zu bytes (--max-body-mb)",
			 s->o.max_body);
		return send_error(c, 413, "too_large", msg, NULL);
	}
	if (strcmp(url, "/metrics") == 0 && get) {
		char *t = kj__serve_metrics(s);
		enum MHD_Result rc;

		if (!t)
			return send_error(c, 500, "internal", "out of memory", NULL);
		rc = send_text(c, 200, "text/plain; version=0.0.4", t, NULL);
		free(t);
		return rc;
	}
	if (strcmp(url, "/v1/evaluations") == 0) {
		if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
			return send_error(c, 405, "method_not_allowed", "POST", NULL);
		if (kj__serve_draining(s))
			return send_error(c, 503, "draining", "the server is draining", "10");
		return post_evaluations(s, c, k);
	}
	if (strncmp(url, "/v1/evaluations/", 16) == 0)
		return evaluation(s, c, method, url + 16);
	return send_error(c, 404, "not_found", "no such route", NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct kj_serve *s = cls;
	struct conn *k = *con_cls;

	(void)version;
	if (!k) {
		const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							      MHD_HTTP_HEADER_CONTENT_LENGTH);

		k = calloc(1, sizeof(*k));
		if (!k)
			return MHD_NO;
		if (len && strtoull(len, NULL, 10) > s->o.max_body)
			k->too_big = 1;
		*con_cls = k;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t add = *upload_data_size;

		*upload_data_size = 0;
		if (k->too_big || k->n + add > s->o.max_body) {
			/* Read and dropped: the answer says why. */
			k->too_big = 1;
			return MHD_YES;
		}
		{
			char *b = realloc(k->body, k->n + add + 1);

			if (!b)
				return MHD_NO;
			k->body = b;
			memcpy(k->body + k->n, upload_data, add);
			k->n += add;
			k->body[k->n] = '\0';
		}
		return MHD_YES;
	}
	return route(s, c, url, method, k);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode code)
{
	struct conn *k = *con_cls;

	(void)cls;
	(void)c;
	(void)code;
	if (k) {
		free(k->body);
		free(k);
		*con_cls = NULL;
	}
}

int kj__serve_http_start(struct kj_serve *s, struct kj_error *err)
{
	s->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
				     MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, s,
				     MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX,
				     MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
				     MHD_OPTION_END);
	if (!s->daemon)
		return kj_error_set(err, KJ_EIO, "cannot start the HTTP server (libmicrohttpd)");
	return KJ_OK;
}

void kj__serve_http_stop(struct kj_serve *s)
{
	if (s->daemon) {
		/* libmicrohttpd closes the listening socket it was given. */
		MHD_stop_daemon(s->daemon);
		s->daemon = NULL;
		s->listen_fd = -1;
	}
}
