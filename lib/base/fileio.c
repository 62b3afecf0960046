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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* --- a full file system, named ---------------------------------------------------- */

/* A field of /proc/self/mountinfo with its octal escapes (\040 for a
 * blank) undone, in place. */
static void mountinfo_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Whether the mount point mp holds the absolute path p (a whole
 * component: "/mnt/a" does not hold "/mnt/ab"); its length, else 0. */
static size_t mount_holds(const char *mp, const char *p)
{
	size_t n = strlen(mp);

	if (!strcmp(mp, "/"))
		return 1;
	return strncmp(mp, p, n) == 0 && (p[n] == '/' || p[n] == '\0') ? n : 0;
}

/*
 * The file system that holds path: the nearest existing directory (path
 * itself or a parent) is stat'ed and resolved, and /proc/self/mountinfo's
 * line with its device and the longest mount point that holds it is taken
 * (any line whose mount point holds it when no device matches: btrfs
 * subvolumes report devices of their own).  0 with mount point, source
 * and type written, or -1.
 */
static int find_mount(const char *path, char *mp, size_t mp_size, char *src, size_t src_size,
		      char *type, size_t type_size)
{
	char dir[PATH_MAX], real[PATH_MAX], *line = NULL;
	size_t cap = 0, best = 0;
	int best_dev = 0, found = -1;
	struct stat st;
	FILE *f;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	while (stat(dir, &st) < 0) {
		char *slash = strrchr(dir, '/');

		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
		if (!strcmp(dir, ".") || !strcmp(dir, "/")) {
			if (stat(dir, &st) < 0)
				return -1;
			break;
		}
	}
	if (!realpath(dir, real))
		return -1;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char *field[12], *save = NULL, *tok;
		unsigned maj, min;
		int n = 0, dash = -1, same;
		size_t held;

		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok && n < 12; tok = strtok_r(NULL, " ", &save)) {
			if (dash < 0 && n >= 6 && !strcmp(tok, "-"))
				dash = n;
			field[n++] = tok;
		}
		if (dash < 0 || n < dash + 3 || sscanf(field[2], "%u:%u", &maj, &min) != 2)
			continue;
		mountinfo_unescape(field[4]);
		held = mount_holds(field[4], real);
		if (!held)
			continue;
		same = maj == major(st.st_dev) && min == minor(st.st_dev);
		/* A device that matches beats one that does not; then the
		 * longest mount point, the last of equals (mounted over). */
		if ((same && !best_dev) || (same == best_dev && held >= best)) {
			best = held;
			best_dev = same;
			snprintf(mp, mp_size, "%s", field[4]);
			snprintf(type, type_size, "%s", field[dash + 1]);
			mountinfo_unescape(field[dash + 2]);
			snprintf(src, src_size, "%s", field[dash + 2]);
			found = 0;
		}
	}
	free(line);
	fclose(f);
	return found;
}

char *kj__nospace_text(int e, const char *path, char *buf, size_t size)
{
	const char *what = e == EDQUOT ? "disk quota exceeded on" : "no space left on";
	char mp[PATH_MAX], src[512], type[64];
	unsigned char *c;

	if (find_mount(path, mp, sizeof(mp), src, sizeof(src), type, sizeof(type)) == 0)
		snprintf(buf, size, "%s %s (%s, %s)", what, mp, src, type);
	else
		snprintf(buf, size, "%s the device that holds '%s'", what, path);
	/* A mount point may hold any byte; the message is one line. */
	for (c = (unsigned char *)buf; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			*c = '?';
	return buf;
}

int kj_error_write(struct kj_error *err, int e, const char *path, const char *stage)
{
	char where[PATH_MAX + 640];

	if (e == ENOSPC || e == EDQUOT)
		return kj_error_set(err, KJ_ENOSPC, "'%s': %s: %s", path, stage,
				    kj__nospace_text(e, path, where, sizeof(where)));
	return kj_error_set(err, kj_err_from_errno(e), "'%s': %s: %s", path, stage, strerror(e));
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
 * Look at what is at path (relative to dirfd; links followed) without
 * blocking: 0 when nothing is there, 1 when something is (*st filled;
 * *what says what refuses it, NULL for a regular file that may be
 * replaced), -1 with errno when it cannot be looked at.
 */
static int look_at(int dirfd, const char *path, struct stat *st, const char **what)
{
	unsigned char head[72];
	ssize_t n;
	int fd, e;

	*what = NULL;
	if (fstatat(dirfd, path, st, 0) < 0)
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
	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
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
	int there = look_at(AT_FDCWD, path, &st, &what);

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
		if (look_at(AT_FDCWD, base, &bs, &bw) == 1 && (bw == kind_store || bw == kind_db))
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
		return kj_error_write(err, errno, path, "cannot create a temporary file");
	if (kj__write_full(fd, data, len) < 0) {
		int e = errno;

		close(fd);
		unlink(tmp);
		return kj_error_write(err, e, path, stage);
	}
	/* Checked last, just before the rename: the window in which a
	 * database could come to be there is as short as it can be. */
	if ((rc = kj_output_check(path, NULL, err)) != KJ_OK) {
		close(fd);
		unlink(tmp);
		return rc;
	}
	if (kj__tmp_commit(fd, tmp, path, &stage) < 0)
		return kj_error_write(err, errno, path, stage);
	return KJ_OK;
}

/* kj_error_write for name under dirfd: the file system named is dirfd's. */
static int write_at_error(struct kj_error *err, int e, int dirfd, const char *name,
			  const char *stage)
{
	char fdpath[64], where[PATH_MAX + 640];

	if (e != ENOSPC && e != EDQUOT)
		return kj_error_set(err, kj_err_from_errno(e), "'%s': %s: %s", name, stage,
				    strerror(e));
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", dirfd);
	return kj_error_set(err, KJ_ENOSPC, "'%s': %s: %s", name, stage,
			    kj__nospace_text(e, fdpath, where, sizeof(where)));
}

int kj__write_file_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		      struct kj_error *err)
{
	char tmp[PATH_MAX];
	const char *stage = "cannot write", *what;
	struct stat st;
	int fd, e;

	if (strchr(name, '/'))
		return kj_error_set(err, KJ_EINVAL, "'%s': not a plain name", name);
	fd = tmp_create_at(dirfd, tmp, sizeof(tmp), name);
	if (fd < 0)
		return write_at_error(err, errno, dirfd, name, "cannot create a temporary file");
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
	/* As kj_write_file_atomic: never over a database or its log. */
	if (look_at(dirfd, name, &st, &what) == 1 && what) {
		unlinkat(dirfd, tmp, 0);
		return kj_error_set(err, KJ_EINVAL, "'%s': the output would replace %s: "
				    "refused, name another file", name, what);
	}
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
	return write_at_error(err, e, dirfd, name, stage);
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
