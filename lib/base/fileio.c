/*
 * fileio.c - files written so that a reader never sees half of one: a
 * temporary file beside the target, written, fsync'ed, renamed over the
 * target, and the directory fsync'ed.  Used by the .npy writer and by every
 * JSON result kjudge writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "base/fs.h"
#include "base/internal.h"

/*
 * Create "<path>.tmp.XXXXXX" exclusively, as mkstemp() would, but with mode
 * 0666 filtered by the umask: mkstemp() creates 0600 files, and the renamed
 * result should have the permissions np.save() or any other writer would
 * give it.  O_EXCL makes a collision a retry, never a shared file, so the
 * names need only be unlikely to collide (time, process and a stack
 * address, which differs between threads).
 */
static int tmp_create_at(int dirfd, char *tmp, size_t size, const char *path);

int kj__tmp_create(char *tmp, size_t size, const char *path)
{
	return tmp_create_at(AT_FDCWD, tmp, size, path);
}

/* kj__tmp_create, path relative to dirfd (O_NOFOLLOW: a link planted under
 * the temporary name is never written through). */
static int tmp_create_at(int dirfd, char *tmp, size_t size, const char *path)
{
	static const char alphabet[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct timespec ts;
	uint64_t seed;
	int attempt, n, fd;

	n = snprintf(tmp, size, "%s.tmp.XXXXXX", path);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	seed = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	seed ^= (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)&ts;
	for (attempt = 0; attempt < 100; attempt++) {
		uint64_t r = kj__mix64(seed + (uint64_t)attempt);
		int i;

		for (i = 0; i < 6; i++) {
			tmp[n - 6 + i] = alphabet[r % (sizeof(alphabet) - 1)];
			r /= sizeof(alphabet) - 1;
		}
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int kj__write_full(int fd, const void *buf, size_t n)
{
	const unsigned char *p = buf;

	while (n > 0) {
		/* Linux writes at most about 2 GiB per call anyway. */
		size_t chunk = n < (1u << 30) ? n : (1u << 30);
		ssize_t w = write(fd, p, chunk);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Make the rename durable: fsync the directory that holds `path`.  Best
 * effort, since some file systems refuse fsync on a directory, and the file
 * itself is complete either way.
 */
static void sync_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;
	int fd;

	if (!slash) {
		dir[0] = '.';
		n = 1;
	} else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof(dir))
			return;
		memcpy(dir, path, n);
	}
	dir[n] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)fsync(fd);
	close(fd);
}

int kj__tmp_commit(int fd, const char *tmp, const char *path, const char **stage)
{
	int rc, e;

	while ((rc = fsync(fd)) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		*stage = "cannot sync";
		goto fail;
	}
	/* close() is where some file systems (NFS) report write errors. */
	rc = close(fd);
	fd = -1;
	if (rc < 0) {
		*stage = "cannot write";
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		*stage = "cannot rename the temporary file";
		goto fail;
	}
	sync_parent(path);
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = e;
	return -1;
}

/* --- what an output must never replace ------------------------------------------- */

/* The kjudge store's PRAGMA application_id ("kjdg", kjudge/store.h),
 * big-endian at offset 68 of an SQLite header. */
#define KJDG_APP_ID 0x6b6a6467u

/* The databases themselves, as sqlite_kind names them. */
static const char kind_store[] = "a kjudge results store";
static const char kind_db[] = "an SQLite database";

/*
 * What the first n bytes of a file say it is, when it is a file of SQLite:
 * kind_store, kind_db, "an SQLite rollback journal", "an SQLite write-ahead
 * log"; NULL otherwise.
 */
static const char *sqlite_kind(const unsigned char *h, size_t n)
{
	static const unsigned char journal[8] = { 0xd9, 0xd5, 0x05, 0xf9,
						  0x20, 0xa1, 0x63, 0xd7 };

	if (n >= 16 && !memcmp(h, "SQLite format 3", 16)) {
		uint32_t app = 0;

		if (n >= 72)
			app = (uint32_t)h[68] << 24 | (uint32_t)h[69] << 16 |
			      (uint32_t)h[70] << 8 | h[71];
		return app == KJDG_APP_ID ? kind_store : kind_db;
	}
	if (n >= 8 && !memcmp(h, journal, 8))
		return "an SQLite rollback journal";
	/* The WAL's magic number, big-endian: 0x377f0682 or 0x377f0683. */
	if (n >= 4 && h[0] == 0x37 && h[1] == 0x7f && h[2] == 0x06 && (h[3] & 0xfe) == 0x82)
		return "an SQLite write-ahead log";
	return NULL;
}

/*
 * Look at what is at path (links followed) without blocking: 0 when nothing
 * is there, 1 when something is (*st filled; *what says what refuses it,
 * NULL for a regular file that may be replaced), -1 with errno when it
 * cannot be looked at.
 */
static int look_at(const char *path, struct stat *st, const char **what)
{
	unsigned char head[72];
	ssize_t n;
	int fd, e;

	*what = NULL;
	if (stat(path, st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (S_ISDIR(st->st_mode)) {
		*what = "a directory";
		return 1;
	}
	if (!S_ISREG(st->st_mode)) {
		*what = "something that is not a regular file";
		return 1;
	}
	/* O_NONBLOCK: what was a regular file at stat() may be a FIFO now. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*what = "a file that cannot be read to make sure it is not a database";
		return 1;
	}
	do
		n = pread(fd, head, sizeof(head), 0);
	while (n < 0 && errno == EINTR);
	e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	*what = sqlite_kind(head, (size_t)n);
	return 1;
}

static const char *const companions[] = { "-wal", "-shm", "-journal" };
#define N_COMPANIONS (sizeof(companions) / sizeof(companions[0]))

/* Whether a and b are the same file. */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int kj_output_check(const char *path, const char *keep, struct kj_error *err)
{
	struct stat st, ks;
	const char *what;
	size_t len = strlen(path), i;
	int there = look_at(path, &st, &what);

	if (there < 0)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': cannot look at the "
				    "output: %s", path, strerror(errno));
	if (what)
		return kj_error_set(err, KJ_EINVAL, "'%s': the output would replace %s: "
				    "refused, name another file", path, what);
	/* A companion of a database, by its name: a file written as DB-wal
	 * over a store's log, or left where none is, would damage DB. */
	for (i = 0; i < N_COMPANIONS; i++) {
		size_t sl = strlen(companions[i]);
		char base[PATH_MAX];
		struct stat bs;
		const char *bw;

		if (len <= sl || len - sl >= sizeof(base) || strcmp(path + len - sl, companions[i]))
			continue;
		memcpy(base, path, len - sl);
		base[len - sl] = '\0';
		if (look_at(base, &bs, &bw) == 1 && (bw == kind_store || bw == kind_db))
			return kj_error_set(err, KJ_EINVAL, "'%s': the output would be the '%s' "
					    "file of '%s', %s: refused, name another file", path,
					    companions[i] + 1, base, bw);
	}
	if (!keep || !there)
		return KJ_OK;
	if (stat(keep, &ks) == 0 && same_file(&st, &ks))
		return kj_error_set(err, KJ_EINVAL, "'%s': the output would replace '%s', the "
				    "store this command reads: refused, name another file", path,
				    keep);
	for (i = 0; i < N_COMPANIONS; i++) {
		char name[PATH_MAX];

		if (snprintf(name, sizeof(name), "%s%s", keep, companions[i]) < (int)sizeof(name) &&
		    stat(name, &ks) == 0 && same_file(&st, &ks))
			return kj_error_set(err, KJ_EINVAL, "'%s': the output would replace "
					    "'%s', the '%s' file of the store this command reads: "
					    "refused, name another file", path, name,
					    companions[i] + 1);
	}
	return KJ_OK;
}

int kj_write_file_atomic(const char *path, const char *data, size_t len,
			 struct kj_error *err)
{
	char tmp[PATH_MAX];
	const char *stage = "cannot write";
	int fd = kj__tmp_create(tmp, sizeof(tmp), path), rc;

	if (fd < 0)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': cannot "
				    "create a temporary file: %s", path, strerror(errno));
	if (kj__write_full(fd, data, len) < 0) {
		int e = errno;

		close(fd);
		unlink(tmp);
		return kj_error_set(err, KJ_EIO, "'%s': %s: %s", path, stage,
				    strerror(e));
	}
	/* Checked last, just before the rename: the window in which a
	 * database could come to be there is as short as it can be. */
	if ((rc = kj_output_check(path, NULL, err)) != KJ_OK) {
		close(fd);
		unlink(tmp);
		return rc;
	}
	if (kj__tmp_commit(fd, tmp, path, &stage) < 0)
		return kj_error_set(err, KJ_EIO, "'%s': %s: %s", path, stage,
				    strerror(errno));
	return KJ_OK;
}

int kj__write_file_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		      struct kj_error *err)
{
	char tmp[PATH_MAX];
	const char *stage = "cannot write";
	int fd, e;

	if (strchr(name, '/'))
		return kj_error_set(err, KJ_EINVAL, "'%s': not a plain name", name);
	fd = tmp_create_at(dirfd, tmp, sizeof(tmp), name);
	if (fd < 0)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': cannot create a "
				    "temporary file: %s", name, strerror(errno));
	if (kj__write_full(fd, data, len) < 0 || (mode && fchmod(fd, mode) < 0))
		goto fail;
	stage = "cannot sync";
	while (fsync(fd) < 0)
		if (errno != EINTR)
			goto fail;
	stage = "cannot write";
	e = close(fd);
	fd = -1;
	if (e < 0)
		goto fail;
	stage = "cannot rename the temporary file";
	if (renameat(dirfd, tmp, dirfd, name) < 0)
		goto fail;
	(void)fsync(dirfd);
	return KJ_OK;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return kj_error_set(err, KJ_EIO, "'%s': %s: %s", name, stage, strerror(e));
}

int kj__write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = kj__write_full(fd, text, strlen(text));
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

long kj__read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (size == 0)
		return -1;
	buf[0] = '\0';
	if (fd < 0)
		return -1;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' ||
		       buf[len - 1] == '\t' || buf[len - 1] == '\r'))
		len--;
	buf[len] = '\0';
	return (long)len;
}
