/*
 * torch.c - the torch runner's verify flow (see torch.h).
 *
 * Theory of operation.
 *
 *   kj_torch_verify
 *     scratch dir (tmpfs when there is one): ref/ and cand/, one per side
 *     reference worker  <-fd 3->  judge  <-fd 3->  candidate worker
 *       hello, load(Model)                    hello, load(ModelNew)
 *       for each case, for each input set (secret seed):
 *         run -> outputs as .npy         run -> outputs as .npy
 *                      \                 /
 *                       kj_compare each output
 *
 * Both workers get the "run" request before the judge waits for either, so
 * they compute at the same time.  A candidate worker that timed out, died,
 * or reported a sticky (CUDA) error is killed and a fresh one is started and
 * loaded for the next case.  The reference worker is the task's own code:
 * if it fails on a case the case is recorded as failed with error type
 * "ReferenceError" (the candidate is not charged with a wrong verdict, and
 * the run does not pass).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/compare.h"
#include "kjudge/fileio.h"
#include "kjudge/proc.h"
#include "kjudge/report.h"
#include "kjudge/tensor.h"
#include "kjudge/torch.h"
#include "base/internal.h"
#include "base/locate.h"

#define ERROR_MSG_LIMIT 2000

void kj_torch_opts_init(struct kj_torch_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->verify_dir = ".";
	o->impl_name = "triton_ascend_impl";
	o->timeout_s = 900;
	o->input_sets = 2;
}

/* --- files ------------------------------------------------------------------- */

int kj_file_hash(const char *path, uint64_t *hash, struct kj_error *err)
{
	unsigned char buf[65536];
	uint64_t h = 0xcbf29ce484222325ull;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': %s",
				    path, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		ssize_t i;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return kj_error_set(err, KJ_EIO, "'%s': %s", path,
					    strerror(errno));
		}
		for (i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ull;
		}
	}
	close(fd);
	*hash = h;
	return KJ_OK;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void rm_rf(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p))
			continue;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rm_rf(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* --- secret seeds ------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t x)
{
	return kj__mix64(x + 0x9e3779b97f4a7c15ull);
}

static int state_dir(char *buf, size_t size, struct kj_error *err)
{
	const char *s = getenv("KJ_STATE_DIR"), *x = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (s && *s)
		n = snprintf(buf, size, "%s", s);
	else if (x && *x)
		n = snprintf(buf, size, "%s/kjudge", x);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.local/state/kjudge", home);
	else
		return kj_error_set(err, KJ_EINVAL, "no state directory: set "
				    "KJ_STATE_DIR or HOME");
	if (n >= (int)size)
		return kj_error_set(err, KJ_EINVAL, "state directory path too long");
	return KJ_OK;
}

/* mkdir -p with mode 0700 for the directories it creates. */
static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -1;
	for (p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

static int secret_key(uint64_t key[4], struct kj_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int fd, rc;
	ssize_t n;

	rc = state_dir(dir, sizeof(dir), err);
	if (rc != KJ_OK)
		return rc;
	if (mkdirs(dir) < 0)
		return kj_error_set(err, KJ_EIO, "'%s': cannot create: %s", dir,
				    strerror(errno));
	snprintf(path, sizeof(path), "%s/seed-key", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* First use: draw the key and publish it atomically, so two
		 * judges starting together agree on one key. */
		char tmp[PATH_MAX + 32];
		uint64_t fresh[4];
		int wfd;

		if (getrandom(fresh, sizeof(fresh), 0) != (ssize_t)sizeof(fresh))
			return kj_error_set(err, KJ_EIO, "getrandom: %s",
					    strerror(errno));
		snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
		wfd = mkstemp(tmp);
		if (wfd < 0)
			return kj_error_set(err, KJ_EIO, "'%s': %s", tmp,
					    strerror(errno));
		if (write(wfd, fresh, sizeof(fresh)) != (ssize_t)sizeof(fresh) ||
		    fsync(wfd) < 0) {
			close(wfd);
			unlink(tmp);
			return kj_error_set(err, KJ_EIO, "'%s': %s", tmp,
					    strerror(errno));
		}
		close(wfd);
		if (link(tmp, path) < 0 && errno != EEXIST) {
			unlink(tmp);
			return kj_error_set(err, KJ_EIO, "'%s': %s", path,
					    strerror(errno));
		}
		unlink(tmp);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return kj_error_set(err, KJ_EIO, "'%s': %s", path, strerror(errno));
	n = read(fd, key, 4 * sizeof(uint64_t));
	close(fd);
	if (n != (ssize_t)(4 * sizeof(uint64_t)))
		return kj_error_set(err, KJ_EIO, "'%s': not a kjudge seed key", path);
	return KJ_OK;
}

static uint64_t derive_seed(const uint64_t key[4], uint64_t task_hash,
			    int case_idx, int set)
{
	uint64_t h;

	h = splitmix(key[0] ^ task_hash);
	h = splitmix(h ^ key[1] ^ ((uint64_t)(uint32_t)case_idx << 20));
	h = splitmix(h ^ key[2] ^ (uint64_t)(uint32_t)set);
	h = splitmix(h ^ key[3]);
	/* Positive and within 2^53: every Python and JSON reader keeps it exact. */
	return (h & ((1ull << 53) - 1)) | 1;
}

int kj_torch_seed(uint64_t task_hash, int case_idx, int set, uint64_t *seed,
		  struct kj_error *err)
{
	uint64_t key[4];
	int rc = secret_key(key, err);

	if (rc != KJ_OK)
		return rc;
	*seed = derive_seed(key, task_hash, case_idx, set);
	return KJ_OK;
}

/* --- workers ------------------------------------------------------------------------- */

struct side {
	const char *role;        /* "reference" or "candidate" */
	struct kj_proc proc;
	char out_dir[PATH_MAX];
	int sandboxed;           /* started with kj_proc_spawn_in */
	double cpu_limit_s;      /* its RLIMIT_CPU, or 0 */
	json_t *load_req;        /* what to send after a (re)start */
	json_t *load_reply;      /* last successful load reply, or NULL */
	char load_error_type[64];
	char *load_error_msg;
};

struct env {
	char *v[24];
	int n;
};

struct run_env {
	const struct kj_torch_opts *o;
	char python[PATH_MAX];
	char worker[PATH_MAX];
	char scratch[PATH_MAX];
	struct env env, cenv;  /* the reference's and the candidate's */
	int sandboxed;         /* the candidate runs in the sandbox */
	int infra_errors;      /* workers the machine could not restart */
	struct kj_sandbox sb;
	char sb_root[PATH_MAX];    /* the sandbox's root mount point */
	char cand_src[PATH_MAX];   /* what the candidate sees of the task */
	char cand_home[PATH_MAX];  /* its HOME, TMPDIR and caches */
	char py_root[PATH_MAX], py_base[PATH_MAX];
	char pycache[PATH_MAX];     /* the bytecode tree in the cache, or "" */
	char extra[8][PATH_MAX];   /* PYTHONPATH / LD_LIBRARY_PATH / CUDA_HOME dirs */
	char device[16];
	char device_id[256];   /* device, its name and torch's version: cache keys */
	uint64_t key[4];       /* the secret seed key, read once per run */
	const char *scratch_kind; /* see kj__scratch_private() */
	char stage[PATH_MAX];  /* the reference's outputs, in the cache, or "" */
	double t0;             /* when the run began (monotonic seconds) */
	json_t *timings;       /* where the run's time went, see tally() */
};

static void env_add(struct env *e, const char *name, const char *value)
{
	size_t len;
	char *s;

	if (!value || e->n >= (int)(sizeof(e->v) / sizeof(e->v[0])) - 1)
		return;
	len = strlen(name) + strlen(value) + 2;
	s = malloc(len);
	if (!s)
		return;
	snprintf(s, len, "%s=%s", name, value);
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
}

static void env_free(struct env *e)
{
	int i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	e->n = 0;
	e->v[0] = NULL;
}

/*
 * A worker's environment: only what Python, torch and Triton need, and its
 * own HOME, TMPDIR and caches under `home`, so that one side's compiled
 * kernels (Triton, torch extensions) are never found by another.
 */
static void env_build(struct env *e, const char *home)
{
	static const char *const pass[] = {
		"PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_VISIBLE_DEVICES",
		"CUDA_HOME", "TRITON_INTERPRET", "LANG", "OMP_NUM_THREADS",
	};
	char buf[PATH_MAX + 32];
	size_t i;

	e->n = 0;
	e->v[0] = NULL;
	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		env_add(e, pass[i], getenv(pass[i]));
	env_add(e, "PYTHONUNBUFFERED", "1");
	env_add(e, "PYTHONDONTWRITEBYTECODE", "1");
	env_add(e, "PYTHONNOUSERSITE", "1");
	env_add(e, "HOME", home);
	snprintf(buf, sizeof(buf), "%s/cache", home);
	env_add(e, "XDG_CACHE_HOME", buf);
	snprintf(buf, sizeof(buf), "%s/cache/triton", home);
	env_add(e, "TRITON_CACHE_DIR", buf);
	snprintf(buf, sizeof(buf), "%s/cache/torch_extensions", home);
	env_add(e, "TORCH_EXTENSIONS_DIR", buf);
	snprintf(buf, sizeof(buf), "%s/tmp", home);
	env_add(e, "TMPDIR", buf);
}

static char *capture_tail(const struct kj_capture *c, size_t max)
{
	const char *s = c->data ? c->data : "";
	size_t len = c->len;
	char *out;

	if (len > max) {
		s += len - max;
		len = max;
	}
	out = malloc(len + 1);
	if (out) {
		memcpy(out, s, len);
		out[len] = '\0';
	}
	return out;
}

/* The tail of a worker's stderr (then stdout) for an error message. */
static char *worker_output(struct side *s)
{
	struct kj_capture *c = s->proc.cap_err.len ? &s->proc.cap_err : &s->proc.cap_out;

	return capture_tail(c, ERROR_MSG_LIMIT / 2);
}

static const char *jstr(const json_t *o, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : dflt;
}

static int cache_dir(char *buf, size_t size);

/*
 * Start the workers of `n` sides together and load their modules: all are
 * spawned, then all get "hello" (which imports torch, the slow part), then
 * all get "load"; each wait comes after every send, so the workers start up
 * side by side.  *hello (when not NULL) gets the first side's hello reply,
 * and the device is taken from it when none was given.  A side whose worker
 * cannot load its module is not an error here: its load_error_type/msg say
 * why, and each case reports it.  Returns a code only when a worker could
 * not be started at all.
 */
static int sides_start(struct run_env *r, struct side **sv, int n,
		       json_t **hello, struct kj_error *err)
{
	char fd_flag[] = "--fd", fd_num[] = "3";
	char *argv[] = { r->python, r->worker, fd_flag, fd_num, NULL };
	uint64_t nonce[2];
	int i, rc[2];
	struct kj_error e[2];
	/* Starting Python, torch and CUDA takes seconds (4.8 s on an H200
	 * machine): a short --timeout is meant for the cases, not for this. */
	double startup_s = r->o->timeout_s > 300 ? r->o->timeout_s : 300;

	for (i = 0; i < n; i++) {
		struct side *s = sv[i];

		json_decref(s->load_reply);
		s->load_reply = NULL;
		free(s->load_error_msg);
		s->load_error_msg = NULL;
		s->load_error_type[0] = '\0';
		if ((s->sandboxed
			     ? kj_proc_spawn_in(&s->proc, argv, r->cenv.v, s->out_dir, &r->sb, err)
			     : kj_proc_spawn(&s->proc, argv, r->env.v, s->out_dir, err)) != KJ_OK)
			return err->code;
		s->proc.output_limit = s->sandboxed;
	}
	/* The bytecode tree is written by the reference only (see the
	 * worker's _bytecode). */
	for (i = 0; i < n; i++)
		rc[i] = kj_proc_send(&sv[i]->proc,
				     json_pack("{s:s, s:s?, s:b}", "op", "hello",
					       "pycache", r->pycache[0] ? r->pycache : NULL,
					       "write_bytecode", !strcmp(sv[i]->role, "reference")),
				     startup_s, &nonce[i], &e[i]);
	for (i = 0; i < n; i++) {
		json_t *rep = NULL;

		if (rc[i] == KJ_OK)
			rc[i] = kj_proc_wait(&sv[i]->proc, nonce[i], startup_s,
					     &rep, &e[i]);
		if (rc[i] != KJ_OK || !json_is_true(json_object_get(rep, "ok"))) {
			char *tail = worker_output(sv[i]);
			int code = kj_error_set(err, KJ_ESPAWN, "the torch worker did "
						"not start (%s): %s",
						rc[i] != KJ_OK ? e[i].msg : jstr(rep, "error_msg", "error"),
						tail ? tail : "");

			free(tail);
			json_decref(rep);
			return code;
		}
		if (i == 0 && !r->device[0])
			snprintf(r->device, sizeof(r->device), "%s",
				 json_is_true(json_object_get(rep, "cuda_available"))
					 ? "cuda" : "cpu");
		if (i == 0)
			snprintf(r->device_id, sizeof(r->device_id), "%s|%s|%s",
				 r->device, jstr(rep, "device_name", ""),
				 jstr(rep, "torch", ""));
		if (i == 0 && hello)
			*hello = rep;
		else
			json_decref(rep);
	}
	for (i = 0; i < n; i++) {
		json_object_set_new(sv[i]->load_req, "device", json_string(r->device));
		rc[i] = kj_proc_send(&sv[i]->proc, json_deep_copy(sv[i]->load_req),
				     startup_s, &nonce[i], &e[i]);
	}
	for (i = 0; i < n; i++) {
		struct side *s = sv[i];
		json_t *rep = NULL;

		if (rc[i] == KJ_OK)
			rc[i] = kj_proc_wait(&s->proc, nonce[i], startup_s, &rep, &e[i]);
		if (rc[i] != KJ_OK) {
			char *tail = worker_output(s);

			snprintf(s->load_error_type, sizeof(s->load_error_type), "%s",
				 rc[i] == KJ_ETIMEDOUT ? "Timeout" : "WorkerCrashed");
			if (asprintf(&s->load_error_msg, "%s while loading: %s\n%s",
				     s->role, e[i].msg, tail ? tail : "") < 0)
				s->load_error_msg = NULL;
			free(tail);
		} else if (!json_is_true(json_object_get(rep, "ok"))) {
			snprintf(s->load_error_type, sizeof(s->load_error_type), "%s",
				 jstr(rep, "error_type", "Error"));
			s->load_error_msg = strdup(jstr(rep, "error_msg", ""));
			json_decref(rep);
		} else {
			s->load_reply = rep;
		}
	}
	return KJ_OK;
}

static int side_start(struct run_env *r, struct side *s, struct kj_error *err)
{
	struct side *sv[1] = { s };

	return sides_start(r, sv, 1, NULL, err);
}

static void side_stop(struct side *s)
{
	if (s->proc.pid)
		kj_proc_release(&s->proc, 2.0);
}

/* --- where the time goes ------------------------------------------------------------ */

/*
 * Every result carries kjudge.timings: the judge's own phases in seconds
 * (start_s: both workers up and their modules loaded; compare_s: the
 * comparator; total_s) and, per side, the sum of the phases its worker
 * reported (inputs, forward, checks, timed loop, writing outputs).  The two
 * sides run at the same time, so the parts add up to more than total_s.
 */
static void tally_s(struct run_env *r, const char *key, double s)
{
	json_t *v = json_object_get(r->timings, key);

	json_object_set_new(r->timings, key, json_real(json_number_value(v) + s));
}

static void tally(struct run_env *r, const char *who, const json_t *rep)
{
	json_t *dst = json_object_get(r->timings, who), *v;
	const char *k;

	if (!dst) {
		dst = json_object();
		json_object_set_new(r->timings, who, dst);
	}
	json_object_foreach(json_object_get(rep, "phases"), k, v)
		if (json_is_number(v))
			json_object_set_new(dst, k, json_real(json_number_value(
				json_object_get(dst, k)) + json_number_value(v)));
}

/* The timings record, with total_s, for the result (a new reference). */
static json_t *timings_done(struct run_env *r)
{
	tally_s(r, "total_s", kj__now_s() - r->t0);
	return json_incref(r->timings);
}

/* --- the golden cache ------------------------------------------------------------------ */

/*
 * Golden outputs and reference latencies are kept by (task file, case, seed,
 * device, torch version) so that judging another candidate of the same task
 * runs only the candidate.  Entries live in $KJ_CACHE_DIR (default: a
 * directory in /dev/shm, where the scratch directory is, so that storing an
 * entry is a rename; else ~/.cache/kjudge).  An entry is a directory
 * published by rename, so readers see all of it or nothing; the oldest
 * entries go when the cache grows past $KJ_CACHE_MAX_MB (default: a quarter
 * of the file system it is on).
 */

static int cache_dir(char *buf, size_t size)
{
	const char *c = getenv("KJ_CACHE_DIR"), *home = getenv("HOME");
	int n;

	if (c && !strcmp(c, "off"))
		return -1;
	if (c && *c)
		n = snprintf(buf, size, "%s", c);
	else if (access("/dev/shm", W_OK) == 0)
		n = snprintf(buf, size, "/dev/shm/kjudge-cache-%u", (unsigned)getuid());
	else if (home && *home)
		n = snprintf(buf, size, "%s/.cache/kjudge", home);
	else
		return -1;
	if (n >= (int)size || mkdirs(buf) < 0)
		return -1;
	return 0;
}

/* The entry path of one golden run or one reference timing. */
static int cache_entry(const struct run_env *r, uint64_t task_hash, int case_idx,
		       uint64_t seed, const char *kind, uint64_t extra,
		       char *buf, size_t size)
{
	char dir[PATH_MAX];
	uint64_t h = splitmix(task_hash ^ 0x6b6a75646765ull);
	const char *d = r->device_id;

	if (cache_dir(dir, sizeof(dir)) < 0)
		return -1;
	for (; *d; d++)
		h = splitmix(h ^ (unsigned char)*d);
	h = splitmix(h ^ (uint64_t)(uint32_t)case_idx);
	h = splitmix(h ^ seed);
	h = splitmix(h ^ extra);
	return snprintf(buf, size, "%s/%s-%016llx", dir, kind,
			(unsigned long long)h) >= (int)size ? -1 : 0;
}

/* Copy src to dst (a new file); the source is removed on success, as a
 * rename would.  Returns 0 or -1. */
static int copy_file(const char *src, const char *dst)
{
	char buf[1 << 16];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	ssize_t n = 0;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (n > 0) {
			ssize_t w = write(out, p, (size_t)n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				break;
			p += w;
			n -= w;
		}
		if (n > 0)
			break;
	}
	close(in);
	if (n != 0 || close(out) != 0) {
		unlink(dst);
		return -1;
	}
	unlink(src);
	return 0;
}

/* A cached golden run as a "run" reply, or NULL. */
static json_t *cache_golden_get(const char *entry)
{
	char meta[PATH_MAX + 16];
	json_t *rep;

	snprintf(meta, sizeof(meta), "%s/meta.json", entry);
	rep = json_load_file(meta, 0, NULL);
	if (rep)
		utimes(entry, NULL); /* recently used */
	return rep;
}

static long long dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long long sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p) &&
		    lstat(p, &st) == 0)
			sum += S_ISDIR(st.st_mode) ? dir_bytes(p) : (long long)st.st_size;
	}
	closedir(d);
	return sum;
}

/* Drop the least recently used entries until the cache fits its cap. */
static void cache_trim(const char *entry)
{
	const char *cap_s = getenv("KJ_CACHE_MAX_MB");
	long long cap;
	char dir[PATH_MAX];
	const char *slash = strrchr(entry, '/');
	struct statvfs fs;

	if (!slash || (size_t)(slash - entry) >= sizeof(dir))
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - entry), entry);
	/* Default cap: a quarter of the file system the cache is on (the
	 * goldens of one 1.6 G-element task take 19 GB). */
	if (cap_s && *cap_s)
		cap = strtoll(cap_s, NULL, 10) << 20;
	else if (statvfs(dir, &fs) == 0)
		cap = (long long)fs.f_blocks * (long long)fs.f_frsize / 4;
	else
		cap = 16384LL << 20;
	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *e;
		char oldest[PATH_MAX] = "";
		time_t t_old = 0;

		if (!d || dir_bytes(dir) <= cap) {
			if (d)
				closedir(d);
			return;
		}
		while ((e = readdir(d)) != NULL) {
			char p[PATH_MAX];
			struct stat st;

			if (e->d_name[0] == '.' ||
			    snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p) ||
			    lstat(p, &st) != 0 || !strcmp(p, entry))
				continue;
			/* Not entries: the bytecode tree, and the outputs of
			 * runs going on now (a day old: left by a dead run). */
			if (!strcmp(e->d_name, "pycache") ||
			    (!strncmp(e->d_name, "stage-", 6) &&
			     st.st_mtime > time(NULL) - 86400))
				continue;
			if (!oldest[0] || st.st_mtime < t_old) {
				snprintf(oldest, sizeof(oldest), "%s", p);
				t_old = st.st_mtime;
			}
		}
		closedir(d);
		if (!oldest[0])
			return;
		rm_rf(oldest);
		unlink(oldest);
	}
}

/*
 * Keep a reference "run" reply and its output files: the files move into a
 * new entry (a rename when the cache shares the scratch's file system, as by
 * default, else a copy) and the reply, with its paths pointing into the entry,
 * becomes the entry's meta.json.  The entry appears by one rename of its
 * directory.  Returns the reply to use from now on, which is `rep` itself
 * (files untouched) when it could not be stored.
 */
static json_t *cache_golden_put(const char *entry, json_t *rep)
{
	char tmp[PATH_MAX + 16], meta[PATH_MAX + 32];
	json_t *copy = json_deep_copy(rep), *outs;
	size_t i, moved = 0;

	if (!copy || snprintf(tmp, sizeof(tmp), "%s.XXXXXX", entry) >= (int)sizeof(tmp) ||
	    !mkdtemp(tmp)) {
		json_decref(copy);
		return rep;
	}
	outs = json_object_get(copy, "outputs");
	for (i = 0; i < json_array_size(outs); i++, moved++) {
		json_t *o = json_array_get(outs, i);
		const char *src = json_string_value(json_object_get(o, "path"));
		char dst[PATH_MAX + 64], final_path[PATH_MAX + 64];

		if (!src)
			continue;
		snprintf(dst, sizeof(dst), "%s%s", tmp, strrchr(src, '/'));
		snprintf(final_path, sizeof(final_path), "%s%s", entry, strrchr(src, '/'));
		if (rename(src, dst) < 0 && (errno != EXDEV || copy_file(src, dst) < 0))
			goto fail;
		json_object_set_new(o, "path", json_string(final_path));
	}
	snprintf(meta, sizeof(meta), "%s/meta.json", tmp);
	if (json_dump_file(copy, meta, JSON_COMPACT) != 0 || rename(tmp, entry) < 0)
		goto fail;
	cache_trim(entry);
	json_decref(rep);
	return copy;
fail:
	/* Put the files back where the reply says they are. */
	for (i = 0; i < moved; i++) {
		const char *was = json_string_value(json_object_get(
			json_array_get(json_object_get(rep, "outputs"), i), "path"));
		char at[PATH_MAX + 64];

		if (!was)
			continue;
		snprintf(at, sizeof(at), "%s%s", tmp, strrchr(was, '/'));
		rename(at, was);
	}
	rm_rf(tmp);
	json_decref(copy);
	return rep;
}

/* A cached reference timing ("time" reply), or NULL. */
static json_t *cache_time_get(const char *entry)
{
	return json_load_file(entry, 0, NULL);
}

static void cache_time_put(const char *entry, const json_t *rep)
{
	char *text = json_dumps(rep, JSON_COMPACT);

	if (text)
		kj_write_file_atomic(entry, text, strlen(text), NULL);
	free(text);
}

/* --- one case ---------------------------------------------------------------------- */

static json_t *failure(int case_idx, json_t *input_desc, const char *type,
		       const char *msg)
{
	char *m = NULL;
	size_t len = msg ? strlen(msg) : 0;
	json_t *f;

	/* verify.py's truncation: first and last half of the limit. */
	if (len > ERROR_MSG_LIMIT) {
		if (asprintf(&m, "%.*s\n... [truncated %zu chars] ...\n%s",
			     ERROR_MSG_LIMIT / 2, msg, len - ERROR_MSG_LIMIT,
			     msg + len - ERROR_MSG_LIMIT / 2) < 0)
			m = NULL;
	}
	f = json_pack("{s:i, s:o, s:s, s:s}", "case_idx", case_idx,
		      "input_desc", input_desc ? json_incref(input_desc) : json_array(),
		      "error_type", type, "error_msg", m ? m : (msg ? msg : ""));
	free(m);
	return f;
}

/* Load one output the worker reported, with its logical dtype. */
static int load_output(const json_t *o, const char *dir, struct kj_tensor *t,
		       struct kj_error *err)
{
	const char *path = json_string_value(json_object_get(o, "path"));
	const char *dt = json_string_value(json_object_get(o, "dtype"));
	size_t dlen = strlen(dir);
	enum kj_dtype logical;
	int rc;

	/* Only files inside the side's own directory are read. */
	if (!path || strncmp(path, dir, dlen) != 0 || path[dlen] != '/' ||
	    strstr(path, "/../"))
		return kj_error_set(err, KJ_EPROTOCOL, "output path outside the "
				    "scratch directory");
	/* A regular file, not a symlink to somewhere else or a FIFO that
	 * would block the judge: the candidate's worker made it. */
	{
		struct stat st;

		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
			return kj_error_set(err, KJ_EPROTOCOL, "output '%s' is not a "
					    "regular file", strrchr(path, '/') + 1);
	}
	rc = kj_npy_load(t, path, err);
	if (rc != KJ_OK)
		return rc;
	logical = kj_dtype_from_name(dt);
	if (logical == KJ_DTYPE_INVALID)
		return kj_error_set(err, KJ_EDTYPE, "unsupported output dtype '%s'",
				    dt ? dt : "?");
	return kj_tensor_reinterpret(t, logical, err);
}

/*
 * Compare the two replies of one run.  Returns NULL when they agree, else
 * the failure record.
 */
static json_t *judge_outputs(const struct kj_torch_opts *o, int case_idx,
			     json_t *desc, json_t *ref, json_t *cand,
			     const char *ref_dir, const char *cand_dir)
{
	json_t *ro = json_object_get(ref, "outputs"), *co = json_object_get(cand, "outputs");
	size_t i;

	if (json_is_true(json_object_get(cand, "inputs_changed")))
		return failure(case_idx, desc, "InputModified",
			       "the candidate changed its input tensors");
	if (json_array_size(ro) != json_array_size(co)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "output count mismatch: reference %zu, "
			 "candidate %zu", json_array_size(ro), json_array_size(co));
		return failure(case_idx, desc, "AssertionError", msg);
	}
	for (i = 0; i < json_array_size(ro); i++) {
		json_t *r = json_array_get(ro, i), *c = json_array_get(co, i);
		struct kj_cmp_options copt = { .threads = o->threads };
		struct kj_tensor g, a;
		struct kj_cmp_result res;
		struct kj_error err;
		json_t *f = NULL;

		/* Outputs that are not tensors are not compared (verify.py). */
		if (strcmp(jstr(r, "type", ""), "tensor") ||
		    strcmp(jstr(c, "type", ""), "tensor"))
			continue;
		kj_tensor_init(&g);
		kj_tensor_init(&a);
		if (load_output(r, ref_dir, &g, &err) != KJ_OK) {
			f = failure(case_idx, desc, "ReferenceError", err.msg);
		} else if (load_output(c, cand_dir, &a, &err) != KJ_OK) {
			f = failure(case_idx, desc, err.code == KJ_EPROTOCOL
						    ? "ProtocolError" : "OutputError",
				    err.msg);
		} else if (kj_compare(&g, &a, &copt, &res, &err) != KJ_OK) {
			f = failure(case_idx, desc, "OutputError", err.msg);
		} else if (!res.pass) {
			char msg[700];

			snprintf(msg, sizeof(msg), "output %zu: %s", i + 1, res.message);
			f = failure(case_idx, desc, "AccuracyError", msg);
			json_object_set_new(f, "output", json_integer((json_int_t)i + 1));
			json_object_set_new(f, "metrics", kj_cmp_result_json(&res));
		}
		kj_tensor_release(&g);
		kj_tensor_release(&a);
		if (f)
			return f;
	}
	return NULL;
}

static json_t *reply_failure(int case_idx, json_t *desc, json_t *rep)
{
	return failure(case_idx, desc, jstr(rep, "error_type", "Error"),
		       jstr(rep, "error_msg", ""));
}

/* A failed request: timeout, crash or protocol breach, with the output tail. */
static json_t *proc_failure(const struct kj_torch_opts *o, int case_idx,
			    json_t *desc, struct side *s, int rc,
			    const struct kj_error *err)
{
	char *tail = worker_output(s), *msg = NULL;
	const char *type;
	json_t *f;

	if (rc == KJ_ETIMEDOUT) {
		type = "Timeout";
		if (asprintf(&msg, "验证超时（%g秒）: the %s did not finish the case\n%s",
			     o->timeout_s, s->role, tail ? tail : "") < 0)
			msg = NULL;
	} else {
		type = rc == KJ_EPROTOCOL ? "ProtocolError" : "WorkerCrashed";
		/* The sandbox's limits, each a verdict of its own. */
		if (s->proc.output_over)
			type = "OutputLimitExceeded";
		else if (s->proc.oom_killed)
			type = "MemoryLimitExceeded";
		else if (s->sandboxed && s->proc.reaped && WIFSIGNALED(s->proc.status) &&
			 (WTERMSIG(s->proc.status) == SIGXCPU ||
			  WTERMSIG(s->proc.status) == SIGKILL) &&
			 s->cpu_limit_s > 0 && s->proc.cpu_s >= s->cpu_limit_s - 0.5)
			/* As PID 1 of its namespace the worker ignores SIGXCPU;
			 * the hard limit's SIGKILL and its CPU time tell. */
			type = "CPUTimeLimitExceeded";
		if (asprintf(&msg, "%s: %s\n%s", s->role, err->msg, tail ? tail : "") < 0)
			msg = NULL;
	}
	f = failure(case_idx, desc, type, msg ? msg : err->msg);
	free(msg);
	free(tail);
	return f;
}

static void clear_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX];

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p) &&
		    strstr(e->d_name, ".npy"))
			unlink(p);
	}
	closedir(d);
}

/* The "run" request of one input set of one case. */
static json_t *run_request(int case_idx, uint64_t seed, const char *out_dir,
			   const char *tag)
{
	return json_pack("{s:s, s:i, s:I, s:I, s:s, s:s}", "op", "run",
			 "case", case_idx, "seed", (json_int_t)seed,
			 "init_seed", (json_int_t)seed, "out_dir", out_dir,
			 "tag", tag);
}

/* A worker in an unknown state is never reused: stop it, start a fresh one
 * and load its module again (a failure to do so shows in load_error_*). */
static void restart(struct run_env *r, struct side *s, struct kj_error *err)
{
	int rc;

	side_stop(s);
	rc = side_start(r, s, err);
	/* The machine failed, not the candidate: its later cases say so with
	 * an error type of their own, and the run ends in a judge error. */
	if (rc != KJ_OK) {
		snprintf(s->load_error_type, sizeof(s->load_error_type), "%s",
			 rc == KJ_ESANDBOX ? "SandboxError" : "SpawnError");
		free(s->load_error_msg);
		s->load_error_msg = strdup(err->msg);
		r->infra_errors++;
	}
}

/* The reference died or hung: the next set or case starts it again. */
static void ref_lost(struct side *s)
{
	side_stop(s);
	json_decref(s->load_reply);
	s->load_reply = NULL;
}

/* The directory a golden reply's files are in: the side's own, or a cache
 * entry (judge_outputs reads nothing outside the directory it is given). */
static const char *golden_dir(const json_t *rep, const char *side_dir,
			      char *dir, size_t size)
{
	const char *p = json_string_value(json_object_get(
		json_array_get(json_object_get(rep, "outputs"), 0), "path"));
	const char *slash = p ? strrchr(p, '/') : NULL;

	if (!slash || (size_t)(slash - p) >= size)
		return side_dir;
	snprintf(dir, size, "%.*s", (int)(slash - p), p);
	return dir;
}

/* --- the whole run ------------------------------------------------------------------ */

/* Remove the scratch directories of judges that died before they could
 * (kjudge-PID-XXXXXX, PID no longer running). */
static void sweep_scratch(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char p[PATH_MAX];

		/* kjudge-PID-XXXXXX: a dead run's scratch directory (not the
		 * cache, kjudge-cache-UID). */
		if (kj__left_by_dead_run(e->d_name) &&
		    strlen(strchr(e->d_name + 7, '-')) == 7 &&
		    snprintf(p, sizeof(p), "%s/%s", parent, e->d_name) < (int)sizeof(p))
			rm_rf(p);
	}
	if (d)
		closedir(d);
}

static int setup(struct run_env *r, const struct kj_torch_opts *o,
		 struct kj_error *err)
{
	/* The same rules as kjudge doctor's (locate.h). */
	const char *py = kj__python_name(o->python, NULL);
	const char *tmp = getenv("TMPDIR"), *sdir = getenv("KJ_SCRATCH_DIR"), *parent;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->t0 = kj__now_s();
	if (kj__find_in_path(py, r->python, sizeof(r->python)) < 0)
		return kj_error_set(err, KJ_ENOENT, "no Python interpreter '%s' "
				    "(set --python or KJ_PYTHON)", py);
	if (o->worker)
		snprintf(r->worker, sizeof(r->worker), "%s", o->worker);
	else if (kj__beside_self("kjudge_worker.py", r->worker, sizeof(r->worker)) < 0)
		r->worker[0] = '\0';
	if (!is_file(r->worker))
		return kj_error_set(err, KJ_ENOENT, "'%s': the torch worker is "
				    "missing (it is installed beside kjudge)",
				    r->worker);
	/* $KJ_SCRATCH_DIR, else tmpfs when there is one: outputs are written
	 * and read once. */
	parent = sdir && *sdir ? sdir
		 : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (tmp && *tmp ? tmp : "/tmp");
	sweep_scratch(parent);
	snprintf(r->scratch, sizeof(r->scratch), "%s/kjudge-%d-XXXXXX", parent, (int)getpid());
	if (!mkdtemp(r->scratch))
		return kj_error_set(err, KJ_EIO, "cannot create a scratch "
				    "directory: %s", strerror(errno));
	/* A tmpfs of the run's own with huge pages, where the machine allows
	 * one (KJ_SCRATCH=shared keeps the plain directory); else the plain
	 * directory, which works as well, only slower for large outputs. */
	r->scratch_kind = "shared";
	if (!(getenv("KJ_SCRATCH") && !strcmp(getenv("KJ_SCRATCH"), "shared")))
		(void)kj__scratch_private(r->scratch, &r->scratch_kind);
	/* The bytecode tree in the cache, when there is a cache. */
	if (cache_dir(r->pycache, sizeof(r->pycache) - 16) == 0)
		memcpy(r->pycache + strlen(r->pycache), "/pycache", sizeof("/pycache"));
	else
		r->pycache[0] = '\0';
	snprintf(r->cand_home, sizeof(r->cand_home), "%.*s/cand-home",
		 (int)sizeof(r->cand_home) - 16, r->scratch);
	env_build(&r->env, r->scratch);
	env_build(&r->cenv, r->cand_home);
	{
		static const char *const sub[] = { "", "/tmp", "/cache" };
		char p[PATH_MAX + 32];
		size_t i;

		for (i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s%s", r->scratch, sub[i]);
			mkdir(p, 0700);
			snprintf(p, sizeof(p), "%s%s", r->cand_home, sub[i]);
			mkdir(p, 0700);
		}
	}
	return KJ_OK;
}

struct task_paths {
	char dir[PATH_MAX];
	char task_mod[256], cand_mod[384];
	char task[PATH_MAX + 64], cand_file[PATH_MAX + 128];
	uint64_t task_hash;
};

/* A whole small file, NUL-terminated, or NULL. */
static char *read_small(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < (16L << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* A megabyte figure from the environment, or dflt. */
static long long env_mb(const char *name, long long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoll(v, NULL, 10) << 20 : dflt;
}

/* Add each directory of a colon-separated list to the read-only paths. */
static void bind_list(struct run_env *r, const char *list, int *k)
{
	while (list && *list && *k < 8) {
		const char *end = strchr(list, ':');
		size_t len = end ? (size_t)(end - list) : strlen(list);

		if (len && list[0] == '/' && len < PATH_MAX) {
			snprintf(r->extra[*k], PATH_MAX, "%.*s", (int)len, list);
			kj_sandbox_ro(&r->sb, r->extra[(*k)++]);
		}
		list = end ? end + 1 : NULL;
	}
}

/*
 * The candidate's sandbox (kjudge/sandbox.h): it sees the system and the
 * Python installation read-only, the worker, a directory with its own file
 * and the task's input generators (kj__task_view: the reference class
 * blanked out), and writes only its output directory and its own HOME.
 * Not the task directory, the golden cache, the seed key, the reference's
 * outputs, other candidates or the judge's files.  KJ_SANDBOX=off runs it
 * as a plain process (for machines that cannot; `kjudge doctor` says).
 */
static int sandbox_setup(struct run_env *r, const struct task_paths *tp,
			 struct side *cand, struct kj_error *err)
{
	static const char *const sys_ro[] = { "/usr", "/lib", "/lib64", "/lib32",
		"/bin", "/sbin", "/etc", "/opt", "/sys" };
	char path[PATH_MAX + 512], *src, *view = NULL;
	size_t len = 0, i;
	int removed = 0, k = 0, rc;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	long long ram = pages > 0 && psize > 0 ? (long long)pages * psize : 0;
	const char *e = getenv("KJ_SANDBOX");

	if (e && !strcmp(e, "off"))
		return KJ_OK;
	snprintf(r->cand_src, sizeof(r->cand_src), "%.*s/cand-src",
		 (int)sizeof(r->cand_src) - 16, r->scratch);
	snprintf(r->sb_root, sizeof(r->sb_root), "%.*s/sb-root",
		 (int)sizeof(r->sb_root) - 16, r->scratch);
	if ((mkdir(r->cand_src, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(r->sb_root, 0700) < 0 && errno != EEXIST))
		return kj_error_set(err, KJ_ESANDBOX, "cannot make the sandbox's "
				    "directories: %s", strerror(errno));
	src = read_small(tp->task, &len);
	if (!src || kj__task_view(src, len, "Model", &view, &removed) < 0) {
		free(src);
		return kj_error_set(err, KJ_EIO, "'%s': cannot read the task", tp->task);
	}
	snprintf(path, sizeof(path), "%s/%s.py", r->cand_src, tp->task_mod);
	rc = kj_write_file_atomic(path, view, strlen(view), err);
	free(src);
	free(view);
	if (rc != KJ_OK)
		return rc;
	if ((src = read_small(tp->cand_file, &len)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s.py", r->cand_src, tp->cand_mod);
		rc = kj_write_file_atomic(path, src, len, err);
		free(src);
		if (rc != KJ_OK)
			return rc;
	}
	kj_sandbox_init(&r->sb);
	r->sb.root_dir = r->sb_root;
	for (i = 0; i < sizeof(sys_ro) / sizeof(sys_ro[0]); i++)
		kj_sandbox_ro(&r->sb, sys_ro[i]);
	/* The interpreter's installation: a virtual environment's root and the
	 * base installation its python links to (each two levels above
	 * bin/python), wherever they are. */
	snprintf(r->py_root, sizeof(r->py_root), "%s", r->python);
	if (!realpath(r->python, r->py_base))
		snprintf(r->py_base, sizeof(r->py_base), "%s", r->python);
	for (i = 0; i < 4; i++) {
		char *at = i % 2 ? r->py_base : r->py_root, *slash = strrchr(at, '/');

		if (slash && slash != at)
			*slash = '\0';
	}
	kj_sandbox_ro(&r->sb, r->py_root);
	kj_sandbox_ro(&r->sb, r->py_base);
	kj_sandbox_ro(&r->sb, r->worker);
	kj_sandbox_ro(&r->sb, r->cand_src);
	if (r->pycache[0])
		kj_sandbox_ro(&r->sb, r->pycache);
	bind_list(r, getenv("PYTHONPATH"), &k);
	bind_list(r, getenv("LD_LIBRARY_PATH"), &k);
	bind_list(r, getenv("CUDA_HOME"), &k);
	kj_sandbox_rw(&r->sb, cand->out_dir);
	kj_sandbox_rw(&r->sb, r->cand_home);
	/* GPU nodes only for an attempt that may run on the GPU. */
	r->sb.gpu = access("/dev/nvidiactl", F_OK) == 0 && strcmp(r->device, "cpu") != 0;
	e = getenv("KJ_LIMIT_CPU_S");
	r->sb.cpu_s = e && *e ? strtod(e, NULL) : 4 * 3600.0;
	r->sb.mem_bytes = env_mb("KJ_LIMIT_MEM_MB", ram / 2);
	r->sb.fsize_bytes = env_mb("KJ_LIMIT_FILE_MB", ram / 4);
	r->sb.nproc = (long)(env_mb("KJ_LIMIT_PROCS", 1024LL << 20) >> 20);
	r->sb.nofile = 4096;
	r->sb.tmp_bytes = 256LL << 20;
	json_object_set_new(cand->load_req, "dir", json_string(r->cand_src));
	cand->sandboxed = r->sandboxed = 1;
	cand->cpu_limit_s = r->sb.cpu_s;
	return KJ_OK;
}

static void side_init(struct side *s, struct run_env *r, const char *role,
		      const char *dir, const char *task_module,
		      const char *module, const char *cls)
{
	memset(s, 0, sizeof(*s));
	kj_proc_init(&s->proc);
	s->role = role;
	snprintf(s->out_dir, sizeof(s->out_dir), "%.*s/%s",
		 (int)(sizeof(s->out_dir) - 16), r->scratch, role);
	mkdir(s->out_dir, 0700);
	s->load_req = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "op", "load",
				"dir", dir, "task_module", task_module,
				"module", module, "cls", cls, "device",
				r->device[0] ? r->device : "cpu");
}

static void side_release(struct side *s)
{
	side_stop(s);
	json_decref(s->load_req);
	json_decref(s->load_reply);
	free(s->load_error_msg);
}


/* The verify directory's two files, from --op_name and --triton_impl_name. */
static int resolve_task(const struct kj_torch_opts *o, struct task_paths *tp,
			struct kj_error *err)
{
	if (!o->op_name || !*o->op_name || strchr(o->op_name, '/'))
		return kj_error_set(err, KJ_EINVAL, "bad --op_name '%s'",
				    o->op_name ? o->op_name : "");
	if (!realpath(o->verify_dir, tp->dir) || !is_dir(tp->dir))
		return kj_error_set(err, KJ_ENOENT, "'%s': not a directory",
				    o->verify_dir);
	if (snprintf(tp->task_mod, sizeof(tp->task_mod), "%s_torch", o->op_name) >= (int)sizeof(tp->task_mod) ||
	    snprintf(tp->cand_mod, sizeof(tp->cand_mod), "%s_%s", o->op_name, o->impl_name) >= (int)sizeof(tp->cand_mod) ||
	    snprintf(tp->task, sizeof(tp->task), "%s/%s.py", tp->dir, tp->task_mod) >= (int)sizeof(tp->task) ||
	    snprintf(tp->cand_file, sizeof(tp->cand_file), "%s/%s.py", tp->dir, tp->cand_mod) >= (int)sizeof(tp->cand_file))
		return kj_error_set(err, KJ_EINVAL, "names too long");
	if (!is_file(tp->task))
		return kj_error_set(err, KJ_ENOENT, "'%s': no task file", tp->task);
	return kj_file_hash(tp->task, &tp->task_hash, err);
}

/* The end of every run: workers stopped, scratch directory removed. */
static void scratch_remove(struct run_env *r)
{
	if (strcmp(r->scratch_kind, "shared") != 0)
		umount2(r->scratch, MNT_DETACH); /* its files go with it */
	rm_rf(r->scratch);
}

static void finish(struct run_env *r, struct side *ref, struct side *cand,
		   json_t *hello)
{
	json_decref(hello);
	side_release(ref);
	side_release(cand);
	if (r->stage[0])
		rm_rf(r->stage);
	scratch_remove(r);
	env_free(&r->env);
	env_free(&r->cenv);
	json_decref(r->timings);
	r->timings = NULL;
}

/*
 * The start of every run: resolve the task, make the scratch directory, and
 * start both workers side by side (the candidate's only when its file
 * exists).  On success the caller owns r, ref, cand and *hello, releases
 * them with finish(), and *n_cases is the task's number of cases.  On error
 * nothing is left to release.
 */
static int begin(const struct kj_torch_opts *o, struct task_paths *tp,
		 struct run_env *r, struct side *ref, struct side *cand,
		 json_t **hello, int *n_cases, struct kj_error *err)
{
	struct side *both[2] = { ref, cand };
	int rc;

	*hello = NULL;
	rc = resolve_task(o, tp, err);
	if (rc != KJ_OK)
		return rc;
	rc = setup(r, o, err);
	if (rc != KJ_OK)
		return rc;
	/* The seed key once, not once per seed. */
	if (!o->seed_fixed && (rc = secret_key(r->key, err)) != KJ_OK) {
		scratch_remove(r);
		env_free(&r->env);
		env_free(&r->cenv);
		return rc;
	}
	r->timings = json_object();
	snprintf(r->device, sizeof(r->device), "%s", o->device ? o->device : "");
	side_init(ref, r, "reference", tp->dir, tp->task_mod, tp->task_mod, "Model");
	/* The reference writes its outputs straight into the cache's file
	 * system, so that keeping them as golden outputs is a rename. */
	if (cache_dir(r->stage, sizeof(r->stage) - 16) == 0) {
		memcpy(r->stage + strlen(r->stage), "/stage-XXXXXX", sizeof("/stage-XXXXXX"));
		if (mkdtemp(r->stage))
			snprintf(ref->out_dir, sizeof(ref->out_dir), "%s", r->stage);
		else
			r->stage[0] = '\0';
	}
	side_init(cand, r, "candidate", tp->dir, tp->task_mod, tp->cand_mod, "ModelNew");
	if (is_file(tp->cand_file) && (rc = sandbox_setup(r, tp, cand, err)) != KJ_OK) {
		finish(r, ref, cand, NULL);
		return rc;
	}
	/* The reference is first: it says which device there is, and a task
	 * that cannot be loaded is the judge's input error, not a verdict. */
	rc = sides_start(r, both, is_file(tp->cand_file) ? 2 : 1, hello, err);
	tally_s(r, "start_s", kj__now_s() - r->t0);
	if (rc == KJ_OK && !ref->load_reply)
		rc = kj_error_set(err, KJ_EINVAL, "'%s': the task cannot be "
				  "loaded: %s: %.400s", tp->task, ref->load_error_type,
				  ref->load_error_msg ? ref->load_error_msg : "");
	if (rc != KJ_OK) {
		finish(r, ref, cand, *hello);
		*hello = NULL;
		return rc;
	}
	*n_cases = (int)json_integer_value(json_object_get(ref->load_reply, "cases"));
	return KJ_OK;
}

int kj_torch_verify(const struct kj_torch_opts *o, json_t **result,
		    struct kj_error *err)
{
	struct task_paths tp;
	struct run_env r;
	struct side ref, cand;
	json_t *failures = NULL, *warnings = NULL, *hello = NULL;
	int rc, n_cases = 0, passed = 0, k, any_timeout = 0, n_cached = 0;
	int sets = o->seed_fixed ? 1 : (o->input_sets > 0 ? o->input_sets : 2);

	*result = NULL;
	rc = begin(o, &tp, &r, &ref, &cand, &hello, &n_cases, err);
	if (rc != KJ_OK)
		return rc;
	if (!is_file(tp.cand_file)) {
		snprintf(cand.load_error_type, sizeof(cand.load_error_type),
			 "FileNotFoundError");
		if (asprintf(&cand.load_error_msg, "'%s': no candidate file",
			     tp.cand_file) < 0)
			cand.load_error_msg = NULL;
	}

	failures = json_array();
	warnings = json_array();
	for (k = 0; k < n_cases; k++) {
		json_t *fail = NULL, *desc = NULL;
		int s;

		for (s = 0; s < sets && !fail; s++) {
			uint64_t seed = o->seed, rn = 0, cn = 0;
			json_t *rrep = NULL, *crep = NULL;
			struct kj_error rerr, cerr;
			char entry[PATH_MAX], gdir[PATH_MAX];
			int rrc, crc, cached, have_entry;

			if (!o->seed_fixed)
				seed = derive_seed(r.key, tp.task_hash, k, s);
			if (!ref.load_reply) {
				side_stop(&ref);
				rc = side_start(&r, &ref, err);
				if (rc != KJ_OK) {
					json_decref(desc);
					goto out;
				}
			}
			if (!ref.load_reply) {
				fail = failure(k + 1, desc, "ReferenceError",
					       "the reference worker could not be restarted");
				break;
			}
			if (!cand.load_reply) {
				fail = failure(k + 1, desc, cand.load_error_type,
					       cand.load_error_msg ? cand.load_error_msg : "");
				break;
			}
			/* Golden outputs from the cache, or both sides get the
			 * request before either is waited for: they compute at
			 * the same time. */
			have_entry = cache_entry(&r, tp.task_hash, k, seed, "g", 0,
						 entry, sizeof(entry)) == 0;
			rrep = have_entry ? cache_golden_get(entry) : NULL;
			cached = rrep != NULL;
			rrc = cached ? KJ_OK
				     : kj_proc_send(&ref.proc, run_request(k, seed, ref.out_dir, "ref"),
						    o->timeout_s, &rn, &rerr);
			crc = kj_proc_send(&cand.proc, run_request(k, seed, cand.out_dir, "cand"),
					   o->timeout_s, &cn, &cerr);
			if (rrc == KJ_OK && !cached) {
				rrc = kj_proc_wait(&ref.proc, rn, o->timeout_s, &rrep, &rerr);
				tally(&r, "reference", rrep);
				if (rrc == KJ_OK && have_entry &&
				    json_is_true(json_object_get(rrep, "ok")))
					rrep = cache_golden_put(entry, rrep);
			}
			if (crc == KJ_OK)
				crc = kj_proc_wait(&cand.proc, cn, o->timeout_s, &crep, &cerr);
			tally(&r, "candidate", crep);
			n_cached += cached;

			if (rrc == KJ_OK && json_is_true(json_object_get(rrep, "ok")) && !desc)
				desc = json_incref(json_object_get(rrep, "input_desc"));
			if (rrc != KJ_OK || !json_is_true(json_object_get(rrep, "ok"))) {
				fail = rrc != KJ_OK
					       ? proc_failure(o, k + 1, desc, &ref, rrc, &rerr)
					       : reply_failure(k + 1, desc, rrep);
				json_object_set_new(fail, "error_type",
						    json_string("ReferenceError"));
				if (rrc != KJ_OK)
					ref_lost(&ref);
			} else if (crc != KJ_OK) {
				fail = proc_failure(o, k + 1, desc, &cand, crc, &cerr);
				any_timeout |= crc == KJ_ETIMEDOUT;
				restart(&r, &cand, err);
			} else if (!json_is_true(json_object_get(crep, "ok"))) {
				fail = reply_failure(k + 1, desc, crep);
				/* A CUDA error is sticky: never reuse the worker. */
				if (json_is_true(json_object_get(crep, "sticky")))
					restart(&r, &cand, err);
			} else {
				json_t *al = json_object_get(crep, "aliases");
				double t = kj__now_s();

				fail = judge_outputs(o, k + 1, desc, rrep, crep,
						     golden_dir(rrep, ref.out_dir, gdir, sizeof(gdir)),
						     cand.out_dir);
				tally_s(&r, "compare_s", kj__now_s() - t);
				/* An output that shares memory with an input is
				 * reported: with the failure, or as a warning. */
				if (json_array_size(al) && fail) {
					char *m = NULL;

					if (asprintf(&m, "%s\nnote: an output aliases an input "
						     "(shares its memory)",
						     jstr(fail, "error_msg", "")) >= 0)
						json_object_set_new(fail, "error_msg", json_string(m));
					free(m);
					json_object_set(fail, "aliases", al);
				} else if (json_array_size(al)) {
					json_array_append_new(warnings, json_pack(
						"{s:i, s:s, s:O}", "case_idx", k + 1,
						"warning", "an output aliases an input (shares its memory)",
						"aliases", al));
				}
			}
			if (fail) {
				json_object_set_new(fail, "seed", json_integer((json_int_t)seed));
				json_object_set_new(fail, "input_set", json_integer(s + 1));
			}
			json_decref(rrep);
			json_decref(crep);
			/* The candidate's files stay: its next outputs are
			 * written over them, into pages the file system already
			 * has (see the worker's _write_npy), and only files its
			 * reply names are read. */
			clear_dir(ref.out_dir);
		}
		if (fail)
			json_array_append_new(failures, fail);
		else
			passed++;
		json_decref(desc);
	}

	*result = json_pack("{s:s, s:i, s:i, s:i, s:o,"
			    " s:{s:s, s:s, s:s, s:i, s:b, s:o, s:O, s:O, s:i}}",
			    "op_name", o->op_name, "total_cases", n_cases,
			    "passed_cases", passed, "failed_cases", n_cases - passed,
			    "failures", failures,
			    "kjudge", "version", KJ_VERSION, "device", r.device,
			    "seeds", o->seed_fixed ? "fixed" : "secret",
			    "input_sets", sets, "timed_out", any_timeout,
			    "warnings", warnings,
			    "torch", json_object_get(hello, "torch") ? json_object_get(hello, "torch") : json_null(),
			    "device_name", json_object_get(hello, "device_name") ? json_object_get(hello, "device_name") : json_null(),
			    "golden_from_cache", n_cached);
	json_object_set_new(json_object_get(*result, "kjudge"), "timings", timings_done(&r));
	json_object_set_new(json_object_get(*result, "kjudge"), "scratch",
			    json_string(r.scratch_kind));
	json_object_set_new(json_object_get(*result, "kjudge"), "sandbox",
			    json_boolean(r.sandboxed));
	json_object_set_new(json_object_get(*result, "kjudge"), "infrastructure_errors",
			    json_integer(r.infra_errors));
	failures = warnings = NULL;
	rc = *result ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
out:
	json_decref(failures);
	json_decref(warnings);
	finish(&r, &ref, &cand, hello);
	return rc;
}

/* --- benchmark ------------------------------------------------------------------------ */

void kj_bench_opts_init(struct kj_bench_opts *b)
{
	memset(b, 0, sizeof(*b));
	b->warmup = 5;
	b->repeats = 50;
	b->flush_bytes = (size_t)256 << 20;
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* {avg_latency_ms, peak_memory_mb} and kjudge's spread figures, from a
 * "time" reply. */
static json_t *latency_json(const json_t *rep)
{
	const json_t *smp = json_object_get(rep, "samples_ms");
	const json_t *esc = json_object_get(rep, "escaped_ms");
	size_t n = json_array_size(smp), i;
	double *v = n ? malloc(n * sizeof(double)) : NULL;
	double sum = 0, sq = 0, mean, med = 0, escaped = 0;

	if (n && !v)
		return NULL;
	for (i = 0; i < n; i++) {
		v[i] = json_number_value(json_array_get(smp, i));
		sum += v[i];
		escaped += json_number_value(json_array_get(esc, i));
	}
	mean = n ? sum / (double)n : 0;
	for (i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	if (n) {
		qsort(v, n, sizeof(double), cmp_dbl);
		med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	{
		json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:s, s:f}",
				      "avg_latency_ms", mean,
				      "peak_memory_mb", json_number_value(json_object_get(rep, "peak_memory_mb")),
				      "median_ms", med,
				      "stdev_ms", n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0,
				      "min_ms", n ? v[0] : 0.0,
				      "max_ms", n ? v[n - 1] : 0.0,
				      "samples", (int)n,
				      "timer", jstr(rep, "timer", "?"),
				      "escaped_ms_total", escaped);

		free(v);
		return o;
	}
}

/* Send one request and wait; on failure fill *fail (unless NULL) from the
 * reply or the worker's end, and restart the side. */
static json_t *ask(struct run_env *r, struct side *s, json_t *req, int case_idx,
		   json_t *desc, json_t **fail, struct kj_error *err)
{
	struct kj_error e;
	json_t *rep = NULL;
	int rc = kj_proc_request(&s->proc, req, r->o->timeout_s, &rep, &e);

	tally(r, s->role, rep);
	if (rc != KJ_OK) {
		*fail = proc_failure(r->o, case_idx, desc, s, rc, &e);
		restart(r, s, err);
		return NULL;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		*fail = reply_failure(case_idx, desc, rep);
		if (json_is_true(json_object_get(rep, "sticky")))
			restart(r, s, err);
		json_decref(rep);
		return NULL;
	}
	return rep;
}

static json_t *time_request(int case_idx, uint64_t seed, const struct kj_bench_opts *b,
			    const char *out_dir, const char *tag, int check)
{
	return json_pack("{s:s, s:i, s:I, s:I, s:i, s:i, s:I, s:s, s:s, s:b}",
			 "op", "time", "case", case_idx, "seed", (json_int_t)seed,
			 "init_seed", (json_int_t)seed, "warmup", b->warmup,
			 "repeats", b->repeats, "flush_bytes", (json_int_t)b->flush_bytes,
			 "out_dir", out_dir, "tag", tag, "check", check);
}

/* The spec's classification of one speedup; NULL for a valid one. */
static const char *speedup_class(const json_t *s)
{
	double v;

	if (!s || json_is_null(s))
		return "none_indices";
	v = json_number_value(s);
	if (isnan(v))
		return "nan_indices";
	if (isinf(v))
		return "inf_indices";
	if (v < 0)
		return "negative_indices";
	if (v == 0)
		return "zero_indices";
	return NULL;
}

int kj_torch_benchmark(const struct kj_torch_opts *o, const struct kj_bench_opts *b,
		       json_t **result, struct kj_error *err)
{
	static const char *const idx_names[5] = { "nan_indices", "inf_indices",
		"zero_indices", "negative_indices", "none_indices" };
	struct task_paths tp;
	struct run_env r;
	struct side ref, cand;
	json_t *per = NULL, *hello = NULL, *idx = NULL;
	double fw_sum = 0, fw_mem = 0, im_sum = 0, im_mem = 0, logsum = 0;
	int rc, n_cases = 0, passed = 0, k, i, n_fw = 0, n_im = 0, n_valid = 0;
	int n_cached = 0;

	*result = NULL;
	rc = begin(o, &tp, &r, &ref, &cand, &hello, &n_cases, err);
	if (rc != KJ_OK)
		return rc;
	if (!is_file(tp.cand_file)) {
		finish(&r, &ref, &cand, hello);
		return kj_error_set(err, KJ_ENOENT, "'%s': no candidate file",
				    tp.cand_file);
	}
	per = json_array();
	idx = json_object();
	for (i = 0; i < 5; i++)
		json_object_set_new(idx, idx_names[i], json_array());

	for (k = 0; k < n_cases; k++) {
		json_t *fail = NULL, *desc = NULL, *gold = NULL, *fw = NULL, *im = NULL;
		json_t *fw_lat = NULL, *im_lat = NULL, *rec, *sp = json_null();
		char entry[PATH_MAX] = "", tentry[PATH_MAX], gdir[PATH_MAX];
		uint64_t seed = o->seed;
		size_t u;

		/* Timed runs use an input set verify never used. */
		if (!o->seed_fixed)
			seed = derive_seed(r.key, tp.task_hash, k, 1000);
		if (!ref.load_reply)
			restart(&r, &ref, err);
		if (!cand.load_reply) {
			fail = failure(k + 1, NULL, cand.load_error_type[0] ? cand.load_error_type : "Error",
				       cand.load_error_msg ? cand.load_error_msg : "");
			restart(&r, &cand, err);
			goto record;
		}
		if (cache_entry(&r, tp.task_hash, k, seed, "g", 0, entry, sizeof(entry)) == 0 &&
		    (gold = cache_golden_get(entry)) != NULL) {
			n_cached++;
		} else {
			gold = ask(&r, &ref, run_request(k, seed, ref.out_dir, "ref"), k + 1,
				   NULL, &fail, err);
			if (!gold) {
				json_object_set_new(fail, "error_type", json_string("ReferenceError"));
				goto record;
			}
			if (entry[0])
				gold = cache_golden_put(entry, gold);
		}
		desc = json_incref(json_object_get(gold, "input_desc"));
		if (!b->skip_framework) {
			/* The reference's latency, kept by the same key plus the
			 * timing settings. */
			int have_t = cache_entry(&r, tp.task_hash, k, seed, "t",
						 ((uint64_t)b->warmup << 40) ^
							 ((uint64_t)b->repeats << 20) ^
							 b->flush_bytes,
						 tentry, sizeof(tentry)) == 0;

			fw = have_t ? cache_time_get(tentry) : NULL;
			if (fw) {
				n_cached++;
			} else {
				fw = ask(&r, &ref, time_request(k, seed, b, ref.out_dir, "reft", 0),
					 k + 1, desc, &fail, err);
				if (!fw) {
					json_object_set_new(fail, "error_type", json_string("ReferenceError"));
					goto record;
				}
				if (have_t)
					cache_time_put(tentry, fw);
			}
			fw_lat = latency_json(fw);
		} else {
			fw_lat = json_pack("{s:f, s:f}", "avg_latency_ms", b->framework_latency_ms,
					   "peak_memory_mb", 0.0);
		}
		im = ask(&r, &cand, time_request(k, seed, b, cand.out_dir, "cand", 1),
			 k + 1, desc, &fail, err);
		if (!im)
			goto record;
		im_lat = latency_json(im);
		/* Every distinct output of the timed calls against the golden. */
		if (json_is_true(json_object_get(im, "inputs_changed")))
			fail = failure(k + 1, desc, "InputModified",
				       "the candidate changed its input tensors during the timed runs");
		for (u = 0; !fail && u < json_array_size(json_object_get(im, "distinct_outputs")); u++) {
			json_t *fake = json_pack("{s:O}", "outputs",
						 json_array_get(json_object_get(im, "distinct_outputs"), u));

			double t = kj__now_s();

			fail = judge_outputs(o, k + 1, desc, gold, fake,
					     golden_dir(gold, ref.out_dir, gdir, sizeof(gdir)),
					     cand.out_dir);
			tally_s(&r, "compare_s", kj__now_s() - t);
			json_decref(fake);
			if (fail) {
				char *m = NULL;

				if (asprintf(&m, "an output of the timed runs is wrong: %s",
					     jstr(fail, "error_msg", "")) >= 0)
					json_object_set_new(fail, "error_msg", json_string(m));
				free(m);
				json_object_set_new(fail, "error_type",
						    json_string("TimedOutputMismatch"));
			}
		}
record:
		if (fail) {
			rec = json_pack("{s:i, s:O, s:s, s:n, s:n, s:n, s:O, s:O}",
					"case_idx", k + 1,
					"input_desc", desc ? desc : json_object_get(fail, "input_desc"),
					"status", "fail", "framework", "implementation",
					"speedup_vs_torch",
					"error_type", json_object_get(fail, "error_type"),
					"error_msg", json_object_get(fail, "error_msg"));
			if (json_object_get(fail, "metrics"))
				json_object_set(rec, "metrics", json_object_get(fail, "metrics"));
		} else {
			double f = json_number_value(json_object_get(fw_lat, "avg_latency_ms"));
			double m = json_number_value(json_object_get(im_lat, "avg_latency_ms"));
			const char *cls;

			sp = f > 0 && m > 0 ? json_real(round(f / m * 1e4) / 1e4) : json_real(0.0);
			passed++;
			rec = json_pack("{s:i, s:O, s:s, s:O, s:O, s:O, s:n, s:n}",
					"case_idx", k + 1, "input_desc", desc,
					"status", "pass", "framework", fw_lat,
					"implementation", im_lat, "speedup_vs_torch", sp,
					"error_type", "error_msg");
			cls = speedup_class(sp);
			if (cls) {
				json_array_append_new(json_object_get(idx, cls), json_integer(k + 1));
				json_object_set_new(rec, "speedup_vs_torch", json_null());
			} else {
				logsum += log(json_number_value(sp));
				n_valid++;
			}
			if (!b->skip_framework) {
				fw_sum += f;
				fw_mem += json_number_value(json_object_get(fw_lat, "peak_memory_mb"));
				n_fw++;
			}
			im_sum += m;
			im_mem += json_number_value(json_object_get(im_lat, "peak_memory_mb"));
			n_im++;
		}
		json_array_append_new(per, rec);
		json_decref(sp);
		json_decref(fail);
		json_decref(desc);
		json_decref(gold);
		json_decref(fw);
		json_decref(im);
		json_decref(fw_lat);
		json_decref(im_lat);
		clear_dir(ref.out_dir);
		clear_dir(cand.out_dir);
	}

	*result = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i}",
			    "op_name", o->op_name, "warmup", b->warmup,
			    "repeats", b->repeats, "total_cases", n_cases,
			    "passed_cases", passed, "failed_cases", n_cases - passed);
	if (!*result) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < 5; i++)
		json_object_set(*result, idx_names[i], json_object_get(idx, idx_names[i]));
	json_object_set_new(*result, "framework", json_pack("{s:f, s:f, s:{}}",
		"avg_latency_ms", b->skip_framework ? b->framework_latency_ms
						    : (n_fw ? round(fw_sum / n_fw * 1e4) / 1e4 : 0.0),
		"peak_memory_mb", n_fw ? round(fw_mem / n_fw * 100) / 100 : 0.0,
		"operators"));
	json_object_set_new(*result, "implementation", json_pack("{s:f, s:f, s:{}}",
		"avg_latency_ms", n_im ? round(im_sum / n_im * 1e4) / 1e4 : 0.0,
		"peak_memory_mb", n_im ? round(im_mem / n_im * 100) / 100 : 0.0,
		"operators"));
	json_object_set_new(*result, "speedup_vs_torch",
			    n_valid ? json_real(round(exp(logsum / n_valid) * 1e4) / 1e4)
				    : json_null());
	json_object_set(*result, "per_shape_results", per);
	json_object_set_new(*result, "kjudge", json_pack(
		"{s:s, s:s, s:s, s:O, s:O, s:I, s:i}",
		"version", KJ_VERSION, "device", r.device,
		"seeds", o->seed_fixed ? "fixed" : "secret",
		"torch", json_object_get(hello, "torch") ? json_object_get(hello, "torch") : json_null(),
		"device_name", json_object_get(hello, "device_name") ? json_object_get(hello, "device_name") : json_null(),
		"flush_bytes", (json_int_t)b->flush_bytes,
		"reference_from_cache", n_cached));
	{
		static const char *const env_keys[] = { "driver", "cuda", "triton",
			"sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz", "python" };
		json_t *kj = json_object_get(*result, "kjudge");

		json_object_set_new(kj, "timings", timings_done(&r));
		json_object_set_new(kj, "scratch", json_string(r.scratch_kind));
		json_object_set_new(kj, "sandbox", json_boolean(r.sandboxed));
		json_object_set_new(kj, "infrastructure_errors", json_integer(r.infra_errors));
		/* The environment every figure came from. */
		for (i = 0; i < (int)(sizeof(env_keys) / sizeof(env_keys[0])); i++)
			if (json_object_get(hello, env_keys[i]))
				json_object_set(kj, env_keys[i], json_object_get(hello, env_keys[i]));
	}
	rc = KJ_OK;
out:
	json_decref(per);
	json_decref(idx);
	finish(&r, &ref, &cand, hello);
	return rc;
}
