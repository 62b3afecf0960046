/*
 * kjudge/serve.h - the judge as a service (`kjudge serve`, docs/serve.md):
 * HTTP/1.1 with JSON bodies, every accepted evaluation committed to the
 * results store before it is answered, each judged as eval judges an
 * attempt, in a child process of its own.
 *
 * Theory of operation.
 *
 *   request.c  a POST body parsed into requests (kj_serve_parse): every
 *              field checked, a bad one named
 *   queue.c    the queue of accepted evaluations, fair between models:
 *              round-robin over the models that have work, first come
 *              first served within one
 *   server.c   the store (one connection, under the server's lock), the
 *              accepted requests and their answers, the metrics
 *   dispatch.c the dispatcher (eval's batch runner, kj_eval_pool_run, fed
 *              from the queue) and the judging child (kj_eval_attempt)
 *   http.c     libmicrohttpd's glue: the routes, the token, the body's
 *              bound, long polls
 *
 * Failure handling.  A request is answered 202 only once its row is
 * committed; a server killed at any moment finds at its next start the
 * requests it had accepted, those it was judging queued again, and judges
 * each to exactly one result.  The server never judges in its own process:
 * a candidate that crashes its judging child ends as a judge error of that
 * evaluation, never of the server.
 */
#ifndef KJUDGE_SERVE_H
#define KJUDGE_SERVE_H

#include <signal.h>
#include <stddef.h>

#include "kjudge/config.h"
#include "kjudge/error.h"
#include "kjudge/eval.h"

/* One evaluation as a client asked for it.  Strings are owned (malloc'd),
 * freed by kj_serve_reqs_free. */
struct kj_serve_req {
	char *id;                /* the client's id, or NULL */
	char *task_name;         /* a task of the server's suite, or NULL ... */
	char *task_source;       /* ... else the task's source */
	size_t task_source_len;
	char *task_cases;        /* its cases object, compact JSON, or NULL */
	char *source;            /* the candidate's source */
	size_t source_len;
	char *model;             /* "default" when not given */
	char *attempt;           /* NULL when not given (the id then) */
	char mode[16];           /* "full", "verify", "benchmark" */
	double deadline_s;       /* 0: none */
	char *options;           /* the options object, compact with sorted
				  * keys, or NULL */
};

/* The most requests one body may hold ({"evaluations": [...]}). */
#define KJ_SERVE_BATCH_MAX 1024
/* The longest client id, model name or attempt label, in bytes. */
#define KJ_SERVE_NAME_MAX 200

/*
 * The body (len bytes, not NUL-terminated) as *n requests (*out, the
 * caller's, freed with kj_serve_reqs_free); *many (may be NULL) 1 when
 * the body was {"evaluations": [...]}.  Not JSON, not an object, a
 * missing or mistyped field, an unknown field or option, an id of other
 * characters than letters, digits and . _ : -: KJ_EINVAL with err naming
 * the field ("evaluations[2].candidate.source: missing").
 */
int kj_serve_parse(const char *body, size_t len, struct kj_serve_req **out, size_t *n,
		   int *many, struct kj_error *err);
void kj_serve_reqs_free(struct kj_serve_req *r, size_t n);

/* The settings a request is judged with: base, with its mode (verify: no
 * benchmark) and its options (timeout_s, warmup, repeats) applied. */
void kj_serve_settings(const struct kj_eval_settings *base, const char *mode,
		       const char *options, struct kj_eval_settings *out);

/* --- the queue (queue.c) ---------------------------------------------------------------- */

struct kj_serve_queue;

struct kj_serve_queue *kj_serve_queue_new(void);
void kj_serve_queue_free(struct kj_serve_queue *q);
/* Add seq at the end of model's lane: KJ_OK or KJ_ENOMEM. */
int kj_serve_queue_push(struct kj_serve_queue *q, long long seq, const char *model);
/* The next one, fairly (the lane after the last one served that has work):
 * 1 with *seq set, 0 when the queue is empty. */
int kj_serve_queue_pop(struct kj_serve_queue *q, long long *seq);
/* Take seq out wherever it is: 1, or 0 when it is not queued. */
int kj_serve_queue_remove(struct kj_serve_queue *q, long long seq);
size_t kj_serve_queue_depth(const struct kj_serve_queue *q);

/* --- the server (server.c, http.c) ---------------------------------------------------- */

struct kj_serve_opts {
	const char *host;        /* --listen's host, or NULL with socket_path */
	int port;                /* 0: a free one */
	const char *socket_path; /* --socket, or NULL */
	const char *token;       /* the bearer token, or NULL: none asked */
	const char *db_path;
	int argc;                /* the command line (the run's row) */
	char **argv;
	const char *suite_dir;   /* --suite, or NULL */
	struct kj_config *cfg;   /* the judge's configuration (the workers') */
	const struct kj_eval_settings *base;
	const struct kj_eval_set *suite; /* --suite's tasks (empty without) */
	int jobs;
	const char (*devices)[16];
	int n_devices;
	int queue_max;           /* queued at most, past which 429 */
	size_t max_body;         /* bytes of a body, past which 413 */
	long long seed_epoch;    /* accepted evaluations per seed epoch; 0: one epoch */
	/* In each judging child before the attempt (the command's signal
	 * guard): nonzero ends the child without a verdict.  May be NULL. */
	int (*child_setup)(void);
	/* Every free job keeps a judging child whose two workers are started
	 * (torch imported) before a request comes (kj_eval_warm_start); 0:
	 * each evaluation starts its own. */
	int warm;
};

struct kj_serve;

/* Open the store (its run begun, the requests a killed server left
 * queued again), bind the address and start answering.  KJ_OK with *out,
 * else a code with err filled (an address in use: KJ_EBUSY). */
int kj_serve_open(const struct kj_serve_opts *o, struct kj_serve **out, struct kj_error *err);
/* "http://HOST:PORT" or "unix:PATH", the port the one bound (borrowed). */
const char *kj_serve_address(const struct kj_serve *s);
/* Judge until *drain is set; then refuse new work (503), let the running
 * evaluations finish and return KJ_OK (the queued ones stay in the store
 * for the next start). */
int kj_serve_run(struct kj_serve *s, const volatile sig_atomic_t *drain, struct kj_error *err);
/* Stop answering, end the run in the store, free everything. */
void kj_serve_close(struct kj_serve *s);

#endif /* KJUDGE_SERVE_H */
