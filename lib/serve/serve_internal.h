/*
 * serve_internal.h - what server.c (the store, the dispatcher, the judging
 * child) and http.c (libmicrohttpd's glue) share.
 */
#ifndef KJ_SERVE_INTERNAL_H
#define KJ_SERVE_INTERNAL_H

#include <limits.h>
#include <pthread.h>

#include <jansson.h>

#include "kjudge/serve.h"
#include "kjudge/store.h"

/* The latency histogram's upper bounds, seconds (and +Inf past them). */
#define KJ__SERVE_BUCKETS 10
extern const double kj__serve_buckets[KJ__SERVE_BUCKETS];

struct MHD_Daemon;

struct kj_serve {
	struct kj_serve_opts o;
	struct kj_eval_study study;      /* the store, its lock, the run */
	struct kj_store *store;          /* study's, under mu */
	pthread_mutex_t mu;
	pthread_cond_t changed;          /* a request ended (broadcast, under mu) */
	struct kj_serve_queue *q;        /* under mu */
	struct kj_serve_queue *alone;    /* ran out of device memory beside
					  * others: judged again with the
					  * devices to itself (under mu) */
	long long alone_seq;             /* the one judged so now, or 0 */
	long long run_id;
	unsigned char batch[16];
	char work[PATH_MAX];             /* staged tasks, device locks */
	char address[PATH_MAX + 16];
	int listen_fd;
	struct MHD_Daemon *daemon;
	volatile sig_atomic_t draining;  /* set once the dispatcher saw drain_flag */
	const volatile sig_atomic_t *drain_flag; /* kj_serve_run's caller's */
	int closing;                     /* judging is over: long polls end
					  * (under mu) */
	/* What /metrics says (under mu). */
	long long finished[5];           /* pass, fail, task_error, judge_error, cancelled */
	json_t *busy;                    /* {device: seconds judged} */
	json_t *since;                   /* {seq: when it was accepted, kj__now_s} */
	json_t *pids;                    /* {seq: its judging child's pid} (under mu) */
	json_t *cancel;                  /* {seq: true}: killed by a DELETE (under mu) */
	long long hist[KJ__SERVE_BUCKETS + 1];
	double lat_sum;
	long long running;
};

/* kill a judging child's group and the child (server.c). */
void kj__serve_kill_child(pid_t pid);

/* Whether the server refuses new work (a drain asked for). */
static inline int kj__serve_draining(const struct kj_serve *s)
{
	return s->draining || (s->drain_flag && *s->drain_flag);
}

/* The outcome of a submission (server.c) for http.c to answer. */
enum kj__serve_verdict {
	KJ__SERVE_ACCEPTED,      /* 202 */
	KJ__SERVE_NO_TASK,       /* 404: no such task in the suite */
	KJ__SERVE_FULL,          /* 429 */
	KJ__SERVE_DRAINING,      /* 503 */
	KJ__SERVE_BAD,           /* 400: err says what (a task that does not load) */
	KJ__SERVE_FAILED,        /* 500: the store or the machine */
};

/* Accept r: its row committed and queued; id (size bytes) its id (an
 * earlier one's for a repeated id or attempt). */
enum kj__serve_verdict kj__serve_submit(struct kj_serve *s, const struct kj_serve_req *r,
					char *id, size_t size, struct kj_error *err);

/* The evaluation id as the API answers it (new reference), waiting up to
 * wait_s seconds while it is queued or running; *found 0 when the store
 * has no such id.  NULL with err filled when the store fails. */
json_t *kj__serve_answer(struct kj_serve *s, const char *id, double wait_s, int *found,
			 struct kj_error *err);

/* Cancel id: 0 cancelled (or already ended: *state says which), 2 it was
 * running and its judging is being stopped (it ends cancelled unless its
 * verdict came first), -1 unknown, -2 the store failed. */
int kj__serve_cancel(struct kj_serve *s, const char *id, char *state, size_t size,
		     struct kj_error *err);

/* /metrics' text (malloc'd), or NULL when out of memory. */
char *kj__serve_metrics(struct kj_serve *s);

/* server.c, for dispatch.c: the statuses /metrics counts, in the order of
 * kj_serve.finished; a task given by source staged as a verify directory
 * of one task (task_HASH12_torch.py, named by its content) in dir and
 * discovered into set; the index of the suite's task of that name, or -1;
 * the settings' text of a request (what its attempt key hashes), malloc'd,
 * NULL when out of memory. */
extern const char *const kj__serve_finish_names[5];
/* The secret bytes of request seq's seed epoch (dispatch.c): the batch's
 * for the first epoch, an HMAC of it for the others.  0, or -1. */
int kj__serve_epoch_batch(const unsigned char batch[16], long long per, long long seq,
			  unsigned char out[16]);
int kj__serve_stage_task(const char *dir, const char *src, size_t len, const char *cases,
			 struct kj_eval_set *set, struct kj_error *err);
int kj__serve_task_named(const struct kj_eval_set *set, const char *name);
char *kj__serve_settings_text(const struct kj_serve *s, const char *mode, const char *options);

/* http.c: start and stop answering on s->listen_fd. */
int kj__serve_http_start(struct kj_serve *s, struct kj_error *err);
void kj__serve_http_stop(struct kj_serve *s);

#endif /* KJ_SERVE_INTERNAL_H */
