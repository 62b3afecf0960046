/*
 * cache.c - golden outputs and reference latencies kept across runs (see
 * core.h for the layout, the locking and the checks).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "core/core.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/vec.h"
#include "base/internal.h"

#define META_MAX (64u << 20)

void kj__entry_init(struct kj__entry *e)
{
	memset(e, 0, sizeof(*e));
	e->lock_fd = -1;
}

static int temp_entry(const struct kj__entry *e)
{
	return strstr(e->dir, ".tmp-") != NULL;
}

void kj__entry_release(struct kj__entry *e)
{
	/* A golden run that could not be published (another judge published
	 * the same one first) was used from its temporary directory. */
	if (e->dir[0] && temp_entry(e))
		kj__rm_rf(e->dir);
	if (e->lock_fd >= 0)
		close(e->lock_fd); /* releases the flock */
	kj_value_free(e->outputs);
	json_decref(e->input_desc);
	kj__entry_init(e);
}

static int remove_entry(struct kj_cache *c, const char *path);
static int ledger_add(struct kj_cache *c, long long bytes);

/* "PREFIX-PID-..." where PID no longer runs. */
static int dead_owner(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long pid;

	if (strncmp(name, prefix, n) != 0)
		return 0;
	pid = strtol(name + n, &end, 10);
	if (end == name + n || *end != '-' || pid <= 0)
		return 0;
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static int sweep_one(void *ctx, const char *name, const struct stat *st)
{
	const char *dir = ctx;
	const char *tmp = strstr(name, ".tmp-");
	char p[PATH_MAX];

	(void)st;
	if (dead_owner(name, "stage-") || dead_owner(name, ".trash-") ||
	    (tmp && dead_owner(tmp + 1, "tmp-"))) {
		if (snprintf(p, sizeof(p), "%s/%s", dir, name) < (int)sizeof(p))
			kj__rm_rf(p);
	}
	return 0;
}

int kj__cache_open(struct kj_cache **out, const char *dir, long long cap, int threads,
		   struct kj_error *err)
{
	struct kj_cache *c;

	*out = NULL;
	if (kj__mkdirs(dir, 0700) < 0)
		return kj_error_set(err, KJ_EIO, "cache '%s': cannot create: %s", dir,
				    strerror(errno));
	c = calloc(1, sizeof(*c));
	if (!c)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (snprintf(c->dir, sizeof(c->dir), "%s", dir) >= (int)sizeof(c->dir)) {
		free(c);
		return kj_error_set(err, KJ_EINVAL, "cache '%s': path too long", dir);
	}
	if (cap < 0) {
		struct statvfs fs;

		/* A quarter of its file system (the goldens of one 1.6 G-element
		 * task take 19 GB). */
		cap = statvfs(dir, &fs) == 0 ? (long long)fs.f_blocks * (long long)fs.f_frsize / 4
					     : 16LL << 30;
	}
	c->cap = cap;
	c->threads = threads;
	kj__each_entry(dir, sweep_one, c->dir);
	*out = c;
	return KJ_OK;
}

void kj__cache_close(struct kj_cache *c)
{
	size_t i;
	char p[PATH_MAX];
	long long gone = 0;

	if (!c)
		return;

	for (i = 0; i < c->n_own; i++)
		if (snprintf(p, sizeof(p), "%s/%s", c->dir, c->own[i].name) < (int)sizeof(p) &&
		    remove_entry(c, p) == 0)
			gone += c->own[i].bytes;
	if (gone)
		(void)ledger_add(c, -gone);
	free(c->own);
	free(c);
}

int kj__cache_key(const char *kind, const struct kj_task *t, int case_idx, uint64_t seed,
		  uint64_t extra, char hex[65], struct kj_error *err)
{
	char buf[2048];
	int n = snprintf(buf, sizeof(buf), "kjudge-cache-1|%s|%s|%s|%d|%llu|%llu", kind,
			 kj_task_identity(t), t->device_key, case_idx, (unsigned long long)seed,
			 (unsigned long long)extra);

	if (kj__sha256_hex(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1, hex) < 0)
		return kj_error_set(err, KJ_ENOMEM, "cannot make a cache key (libcrypto failed)");
	return KJ_OK;
}

/* Remove an entry no one holds: renamed away first, so a reader either
 * finds it whole or not at all.  0 removed, -1 in use or gone. */
static int remove_entry(struct kj_cache *c, const char *path)
{
	static unsigned seq;
	char trash[PATH_MAX + 40];
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	snprintf(trash, sizeof(trash), "%s/.trash-%d-%u", c->dir, (int)getpid(), seq++);
	if (rename(path, trash) == 0)
		kj__rm_rf(trash);
	close(fd);
	return 0;
}

struct trim_entry {
	char name[80];
	time_t mtime;
	long long bytes;
};

struct trim_list {
	const char *dir;
	struct trim_entry *v;
	size_t n, cap;
	long long total;
	int oom;
};

static int trim_collect(void *ctx, const char *name, const struct stat *st)
{
	struct trim_list *l = ctx;
	char p[PATH_MAX];
	long long bytes;

	if (snprintf(p, sizeof(p), "%s/%s", l->dir, name) >= (int)sizeof(p))
		return 0;
	bytes = S_ISDIR(st->st_mode) ? kj__tree_bytes(p) : (long long)st->st_size;
	l->total += bytes;
	/* Entries only: not the bytecode tree, stage or temporary directories. */
	if (!(name[0] == 'g' || name[0] == 't') || name[1] != '-' || strstr(name, ".tmp-") ||
	    strlen(name) >= sizeof(l->v[0].name))
		return 0;
	if (KJ__GROW(l->v, l->cap, l->n + 1) != KJ_OK) {
		l->oom = 1;
		return 1;
	}
	snprintf(l->v[l->n].name, sizeof(l->v[0].name), "%s", name);
	l->v[l->n].mtime = st->st_mtime;
	l->v[l->n].bytes = bytes;
	l->n++;
	return 0;
}

static int by_age(const void *x, const void *y)
{
	const struct trim_entry *a = x, *b = y;

	return a->mtime < b->mtime ? -1 : a->mtime > b->mtime;
}

/*
 * The ledger (.ledger in the cache: "BYTES WALKED_AT"): the cache's size as
 * the last walk over every entry found it, plus what was put since and
 * less what the judges' own entries took with them.  A put walks the cache
 * (a stat of every file of every entry) only when the ledger says it is
 * over its cap, is older than LEDGER_WALK_S, or cannot be read or locked:
 * a cache of thousands of entries costs every put a second otherwise.
 * What else removes files (a damaged entry, a dead judge's stage) only
 * makes the ledger say more than there is, so a walk comes early, never
 * late.
 */
#define LEDGER_WALK_S 600

/* Lock the ledger (a few short tries: its holders hold it for a read and
 * a write).  The fd, or -1. */
static int ledger_lock(struct kj_cache *c)
{
	char p[PATH_MAX];
	int fd, i;

	if (snprintf(p, sizeof(p), "%s/.ledger", c->dir) >= (int)sizeof(p))
		return -1;
	fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	for (i = 0; i < 50; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK)
			break;
		usleep(2000);
	}
	close(fd);
	return -1;
}

/* The ledger's figures: 1 read, 0 none or garbage. */
static int ledger_read(int fd, long long *bytes, long long *walked)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%lld %lld", bytes, walked) == 2 && *bytes >= 0 && *walked > 0;
}

static void ledger_write(int fd, long long bytes, long long walked)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%lld %lld\n", bytes < 0 ? 0 : bytes, walked);

	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		(void)ftruncate(fd, 0); /* unreadable: the next put walks */
}

/* Add bytes to the ledger (a walk will come: 0 when it says nothing). */
static int ledger_add(struct kj_cache *c, long long bytes)
{
	long long have, walked;
	int fd = ledger_lock(c);

	if (fd < 0)
		return -1;
	if (ledger_read(fd, &have, &walked))
		ledger_write(fd, have + bytes, walked);
	close(fd);
	return 0;
}

/* Drop the least recently used entries no one holds until the cache fits
 * its cap, when the ledger says it may not (added: the bytes just put).
 * Best effort: a cache over its cap is not an error. */
static void trim(struct kj_cache *c, const char *keep, long long added)
{
	struct trim_list l = { c->dir, NULL, 0, 0, 0, 0 };
	long long have, walked, now = (long long)time(NULL);
	int fd = ledger_lock(c);
	size_t i;

	if (fd >= 0 && ledger_read(fd, &have, &walked) && now - walked < LEDGER_WALK_S &&
	    now >= walked && have + added <= c->cap) {
		ledger_write(fd, have + added, walked);
		close(fd);
		return;
	}
	if (kj__each_entry(c->dir, trim_collect, &l) != 0 || l.oom || l.total <= c->cap) {
		if (fd >= 0) {
			if (!l.oom)
				ledger_write(fd, l.total, now);
			close(fd);
		}
		free(l.v);
		return;
	}
	qsort(l.v, l.n, sizeof(l.v[0]), by_age);
	/* Down to nine tenths of the cap: the puts that follow fill the
	 * last tenth without a walk each. */
	for (i = 0; i < l.n && l.total > c->cap - c->cap / 10; i++) {
		char p[PATH_MAX];

		if (keep && !strcmp(l.v[i].name, keep))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", c->dir, l.v[i].name) >= (int)sizeof(p))
			continue;
		if (remove_entry(c, p) == 0)
			l.total -= l.v[i].bytes;
	}
	if (fd >= 0) {
		ledger_write(fd, l.total, now);
		close(fd);
	}
	free(l.v);
}

/* --- checking an entry ------------------------------------------------------------ */

struct check {
	const char *dir;
	const json_t *files;
	int threads;
	int bad;
	int oom;       /* the judge ran out of memory: not the entry's fault */
};

static int check_file(void *ctx, const struct kj_value *leaf)
{
	struct check *k = ctx;
	const json_t *f = json_object_get(k->files, leaf->text);
	const char *want = json_string_value(json_object_get(f, "sum"));
	char p[PATH_MAX], got[24];
	uint64_t sum;
	long long size;

	struct kj_error e;
	int rc;

	if (!want || snprintf(p, sizeof(p), "%s/%s", k->dir, leaf->text) >= (int)sizeof(p)) {
		k->bad = 1;
		return 1;
	}
	rc = kj__checksum_file(p, &sum, &size, k->threads, &e);
	if (rc == KJ_ENOMEM) {
		k->oom = 1;
		return 1;
	}
	if (rc != KJ_OK || size != json_integer_value(json_object_get(f, "size"))) {
		k->bad = 1;
		return 1;
	}
	snprintf(got, sizeof(got), "%016llx", (unsigned long long)sum);
	if (strcmp(got, want) != 0) {
		k->bad = 1;
		return 1;
	}
	return 0;
}

/* Read and check the entry held open at fd (its path is e->dir):
 * 1 good, 0 damaged, or a code. */
static int load_entry(struct kj_cache *c, struct kj__entry *e, struct kj_error *err)
{
	char meta[PATH_MAX + 16];
	struct check k;
	json_t *m;
	char *text;
	size_t len;
	struct kj_error e2;
	int rc, oom;

	snprintf(meta, sizeof(meta), "%s/meta.json", e->dir);
	text = kj__read_file(meta, META_MAX, &len, &e2);
	if (!text)
		return e2.code == KJ_ENOMEM ? kj_error_set(err, KJ_ENOMEM, "out of memory") : 0;
	m = kj__json_loadb(text, len, 0, NULL, &oom);
	free(text);
	if (oom)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (!m)
		return 0;
	if (json_integer_value(json_object_get(m, "version")) != 1) {
		json_decref(m);
		return 0;
	}
	rc = kj_value_parse(json_object_get(m, "outputs"), &e->outputs, &e2);
	if (rc != KJ_OK) {
		json_decref(m);
		return rc == KJ_ENOMEM ? kj_error_set(err, KJ_ENOMEM, "out of memory") : 0;
	}
	k.dir = e->dir;
	k.files = json_object_get(m, "files");
	k.threads = c->threads;
	k.bad = 0;
	k.oom = 0;
	kj_value_each_file(e->outputs, check_file, &k);
	if (k.oom) {
		json_decref(m);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	if (!k.bad)
		e->input_desc = json_incref(json_object_get(m, "input_desc"));
	json_decref(m);
	return !k.bad;
}

/* The shared cache's entry of key, read only: 1 found and good, 0 none
 * (or damaged, or being removed there), or a code. */
static int golden_get_shared(struct kj_cache *c, const char *key, struct kj__entry *e,
			     struct kj_error *err)
{
	int fd, rc;

	kj__entry_init(e);
	if (!c->shared[0] ||
	    snprintf(e->dir, sizeof(e->dir), "%s/g-%s", c->shared, key) >= (int)sizeof(e->dir)) {
		kj__entry_init(e);
		return 0;
	}
	fd = open(e->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		kj__entry_init(e);
		return 0;
	}
	/* Its owner may be trimming it (an exclusive lock); a file system
	 * without locks is read as it is. */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 && errno != ENOLCK && errno != EOPNOTSUPP &&
	    errno != ENOSYS) {
		close(fd);
		kj__entry_init(e);
		return 0;
	}
	e->lock_fd = fd;
	rc = load_entry(c, e, err);
	if (rc == 1)
		return 1;
	kj__entry_release(e);
	kj__entry_init(e);
	return rc;
}

int kj__golden_get(struct kj_cache *c, const char *key, struct kj__entry *e,
		   struct kj_error *err)
{
	struct stat a, b;
	int fd, rc;

	kj__entry_init(e);
	if (snprintf(e->dir, sizeof(e->dir), "%s/g-%s", c->dir, key) >= (int)sizeof(e->dir))
		return kj_error_set(err, KJ_EINVAL, "cache path too long");
	fd = open(e->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return golden_get_shared(c, key, e, err);
	/* Held shared while in use; an exclusive holder is removing it. */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 || fstat(fd, &a) < 0 || stat(e->dir, &b) < 0 ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
		close(fd);
		kj__entry_init(e);
		return 0;
	}
	e->lock_fd = fd;
	rc = load_entry(c, e, err);
	if (rc == 1) {
		utimensat(AT_FDCWD, e->dir, NULL, 0); /* recently used */
		return 1;
	}
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s", e->dir);
		kj__entry_release(e);
		if (rc == 0) {
			/* Damaged: nobody is charged; the reference rebuilds it. */
			c->damaged++;
			remove_entry(c, path);
		}
	}
	return rc;
}

struct move {
	const char *from, *to;
	json_t *files;
	int threads;
	size_t moved;
	long long bytes;
	int failed;
	int oom;
};

static int move_file(void *ctx, const struct kj_value *leaf)
{
	struct move *m = ctx;
	char src[PATH_MAX], dst[PATH_MAX], sum[24];
	struct kj_error e;
	uint64_t h;
	long long size;
	int rc;

	if (snprintf(src, sizeof(src), "%s/%s", m->from, leaf->text) >= (int)sizeof(src) ||
	    snprintf(dst, sizeof(dst), "%s/%s", m->to, leaf->text) >= (int)sizeof(dst) ||
	    rename(src, dst) < 0) {
		m->failed = 1;
		return 1;
	}
	m->moved++;
	rc = kj__checksum_file(dst, &h, &size, m->threads, &e);
	if (rc != KJ_OK) {
		m->failed = 1;
		m->oom = rc == KJ_ENOMEM;
		return 1;
	}
	m->bytes += size;
	snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)h);
	if (json_object_set_new(m->files, leaf->text,
				json_pack("{s:I, s:s}", "size", (json_int_t)size, "sum", sum))) {
		m->failed = m->oom = 1;
		return 1;
	}
	return 0;
}

struct unmove {
	const char *from, *to;
	size_t left;
};

static int unmove_file(void *ctx, const struct kj_value *leaf)
{
	struct unmove *u = ctx;
	char src[PATH_MAX], dst[PATH_MAX];

	if (!u->left)
		return 1;
	u->left--;
	if (snprintf(src, sizeof(src), "%s/%s", u->from, leaf->text) < (int)sizeof(src) &&
	    snprintf(dst, sizeof(dst), "%s/%s", u->to, leaf->text) < (int)sizeof(dst))
		rename(src, dst);
	return 0;
}

int kj__golden_put(struct kj_cache *c, const char *key, const char *stage_dir,
		   const struct kj_value *outputs, const json_t *input_desc, int own,
		   struct kj__entry *e, struct kj_error *err)
{
	char tmp[PATH_MAX], final_path[PATH_MAX], meta[PATH_MAX + 16];
	struct move m;
	json_t *rec = NULL;
	char *text = NULL;
	int fd, rc = 0;

	kj__entry_init(e);
	if (snprintf(final_path, sizeof(final_path), "%s/g-%s", c->dir, key) >= (int)sizeof(final_path) ||
	    snprintf(tmp, sizeof(tmp), "%s.tmp-%d-XXXXXX", final_path, (int)getpid()) >= (int)sizeof(tmp) ||
	    !mkdtemp(tmp))
		return 0;
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Held from before it is published: the lock moves with the rename. */
	if (fd < 0 || flock(fd, LOCK_SH) < 0) {
		if (fd >= 0)
			close(fd);
		kj__rm_rf(tmp);
		return 0;
	}
	m.from = stage_dir;
	m.to = tmp;
	m.files = json_object();
	m.threads = c->threads;
	m.moved = 0;
	m.bytes = 0;
	m.failed = m.oom = !m.files;
	if (!m.failed)
		kj_value_each_file(outputs, move_file, &m);
	if (!m.failed) {
		rec = json_pack("{s:i, s:o, s:O, s:O}", "version", 1, "outputs",
				kj_value_json(outputs), "input_desc",
				input_desc ? input_desc : json_null(), "files", m.files);
		text = rec ? kj_json_text(rec, JSON_COMPACT, NULL) : NULL;
		snprintf(meta, sizeof(meta), "%s/meta.json", tmp);
		m.failed = !text || kj_write_file_atomic(meta, text, strlen(text), NULL) != KJ_OK;
		m.oom |= !rec || !text;
	}
	if (m.oom)
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
	free(text);
	json_decref(rec);
	json_decref(m.files);
	if (m.failed) {
		/* Put back what moved: the run goes on from the stage. */
		struct unmove u = { tmp, stage_dir, m.moved };

		kj_value_each_file(outputs, unmove_file, &u);
		close(fd);
		kj__rm_rf(tmp);
		return rc;
	}
	e->lock_fd = fd;
	/* Noted before it is published: an entry of the run's own that
	 * cannot be noted is not published (it stays in its temporary
	 * directory, removed on release), so none outlives the run. */
	if (own && KJ__GROW(c->own, c->cap_own, c->n_own + 1) != KJ_OK)
		own = -1;
	if (own >= 0 && rename(tmp, final_path) == 0) {
		snprintf(e->dir, sizeof(e->dir), "%s", final_path);
		if (own) {
			snprintf(c->own[c->n_own].name, sizeof(c->own[0].name), "g-%s", key);
			c->own[c->n_own++].bytes = m.bytes;
		}
	} else
		/* Another judge published the same run first: use ours from
		 * its temporary directory, removed on release. */
		snprintf(e->dir, sizeof(e->dir), "%s", tmp);
	e->input_desc = input_desc ? kj__jref(input_desc) : NULL;
	trim(c, strrchr(final_path, '/') + 1, m.bytes);
	return 1;
}
