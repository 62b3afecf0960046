/*
 * fs.c - directories and whole files (see fs.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "base/fs.h"
#include "base/internal.h"

int kj__mkdirs(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, mode) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -1;
	return kj__is_dir(tmp) ? 0 : (errno = ENOTDIR, -1);
}

/* Remove what is under the open directory dfd (which is then closed). */
static int rm_under(int dfd, dev_t dev)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		close(dfd);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub;

			if (st.st_dev != dev)
				continue; /* another file system mounted here */
			sub = openat(dirfd(d), e->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 || rm_under(sub, dev) < 0)
				rc = -1;
			if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
				rc = -1;
		} else if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno != ENOENT) {
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

int kj__rm_rf(const char *path)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rm_under(fd, st.st_dev);
	if (rmdir(path) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

void kj__clear_dir(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t sl = suffix ? strlen(suffix) : 0;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		size_t nl = strlen(e->d_name);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (suffix && (nl < sl || strcmp(e->d_name + nl - sl, suffix)))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno == EISDIR) {
			char p[PATH_MAX];

			if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p))
				kj__rm_rf(p);
		}
	}
	closedir(d);
}

static long long bytes_under(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	long long sum = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			sum += (long long)st.st_size;
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				sum += bytes_under(sub);
		}
	}
	closedir(d);
	return sum;
}

long long kj__tree_bytes(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? 0 : bytes_under(fd);
}

int kj__each_entry(const char *dir,
		   int (*fn)(void *ctx, const char *name, const struct stat *st),
		   void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return -1;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		rc = fn(ctx, e->d_name, &st);
	}
	closedir(d);
	return rc;
}

/* What st is, for a message: "a FIFO", "a directory", ... */
static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "a special file";
}

/* openat(at, name) for reading as fs.h says, checked: a regular file (a
 * directory with KJ_OPEN_DIR); shown is what messages call it.  The
 * descriptor, or a negative code with err filled. */
static int open_checked(int at, const char *name, const char *shown, unsigned flags,
			struct kj_error *err)
{
	struct stat st;
	int fd, e, want_dir = !!(flags & KJ_OPEN_DIR);

	fd = openat(at, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		    (flags & KJ_OPEN_NOFOLLOW ? O_NOFOLLOW : 0) | (want_dir ? O_DIRECTORY : 0));
	if (fd < 0) {
		e = errno;
		/* O_NOFOLLOW's ELOOP, and O_DIRECTORY's ENOTDIR, say what the
		 * entry is better than their errno's words. */
		if ((e == ELOOP || e == ENOTDIR) && fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (S_ISLNK(st.st_mode) || (want_dir && !S_ISDIR(st.st_mode))))
			return kj_error_set(err, KJ_EINVAL, "'%s': %s%s", shown,
					    S_ISLNK(st.st_mode) ? "" : "not a directory: ",
					    S_ISLNK(st.st_mode) ? "a symbolic link (not followed)"
								: S_ISREG(st.st_mode) ? "a file"
								: kind_of(st.st_mode));
		return kj_error_set(err, kj_err_from_errno(e), "'%s': %s", shown, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return kj_error_set(err, KJ_EIO, "'%s': %s", shown, strerror(e));
	}
	if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		close(fd);
		return kj_error_set(err, KJ_EINVAL, "'%s': not a %s (%s)", shown,
				    want_dir ? "directory" : "regular file", kind_of(st.st_mode));
	}
	if (!want_dir && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		e = errno;
		close(fd);
		return kj_error_set(err, KJ_EIO, "'%s': %s", shown, strerror(e));
	}
	return fd;
}

int kj__open_regular(const char *path, unsigned flags, struct kj_error *err)
{
	return open_checked(AT_FDCWD, path, path, flags & ~(unsigned)KJ_OPEN_DIR, err);
}

int kj__open_beneath(const char *dir, const char *rel, unsigned flags, struct kj_error *err)
{
	char shown[PATH_MAX + 256], part[NAME_MAX + 1];
	const char *p = rel;
	int at, next;

	snprintf(shown, sizeof(shown), "%s/%s", dir, rel);
	if (!*rel)
		return kj_error_set(err, KJ_EINVAL, "'%s': an empty path", shown);
	if (rel[0] == '/')
		return kj_error_set(err, KJ_EINVAL, "'%s': an absolute path, not one relative to "
				    "'%s'", rel, dir);
	at = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (at < 0)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", dir,
				    strerror(errno));
	for (;;) {
		size_t n = strcspn(p, "/");
		int last;

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			close(at);
			return kj_error_set(err, KJ_EINVAL, "'%s': a path through '..', out of "
					    "'%s'", rel, dir);
		}
		if (n >= sizeof(part)) {
			close(at);
			return kj_error_set(err, KJ_EINVAL, "'%s': a name too long", shown);
		}
		memcpy(part, p, n);
		part[n] = '\0';
		p += n;
		while (*p == '/')
			p++;
		last = *p == '\0';
		if (n == 0 || (n == 1 && part[0] == '.')) {
			if (!last)
				continue;
			/* "a/" or "a/.": the directory itself. */
			snprintf(part, sizeof(part), ".");
		}
		next = last ? open_checked(at, part, shown, flags | KJ_OPEN_NOFOLLOW, err)
			    : open_checked(at, part, shown, KJ_OPEN_DIR | KJ_OPEN_NOFOLLOW, err);
		close(at);
		if (next < 0 || last)
			return next;
		at = next;
	}
}

char *kj__read_fd(int fd, const char *name, size_t max, size_t *len, struct kj_error *err)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		kj_error_set(err, KJ_EINVAL, "'%s': not a regular file", name);
		return NULL;
	}
	if ((unsigned long long)st.st_size > max) {
		kj_error_set(err, KJ_ELIMIT, "'%s': larger than %zu bytes (%lld)", name, max,
			     (long long)st.st_size);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		kj_error_set(err, KJ_ENOMEM, "'%s': out of memory", name);
		return NULL;
	}
	/* Read the size fstat gave, no more: a file that grows meanwhile is
	 * never read past the buffer, nor past max. */
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			kj_error_set(err, KJ_EIO, "'%s': %s", name,
				     n < 0 ? strerror(errno) : "shorter than it was");
			free(buf);
			return NULL;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (len)
		*len = got;
	return buf;
}

char *kj__read_file(const char *path, size_t max, size_t *len, struct kj_error *err)
{
	int fd = kj__open_regular(path, 0, err);
	char *buf;

	if (fd < 0)
		return NULL;
	buf = kj__read_fd(fd, path, max, len, err);
	close(fd);
	return buf;
}

static int copy_file(const char *src, const char *dst, long long left, long long *bytes,
		     struct kj_error *err)
{
	char buf[1 << 16];
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0)
		return kj_error_set(err, KJ_EIO, "'%s': %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		int e = errno;

		close(in);
		return kj_error_write(err, e, dst, "cannot create");
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || kj__write_full(out, buf, (size_t)n) < 0) {
			int e = errno;
			int rc = n < 0 ? kj_error_set(err, KJ_EIO, "'%s': %s", src, strerror(e))
				       : kj_error_write(err, e, dst, "cannot write");

			close(in);
			close(out);
			return rc;
		}
		*bytes += n;
		if (*bytes > left) {
			close(in);
			close(out);
			return kj_error_set(err, KJ_ELIMIT, "'%s': more than %lld bytes to copy", src,
					    left);
		}
	}
	close(in);
	if (close(out) < 0)
		return kj_error_write(err, errno, dst, "cannot write");
	return KJ_OK;
}

int kj__copy_tree(const char *src, const char *dst, long long max_bytes, long long *bytes,
		  struct kj_error *err)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = KJ_OK;

	if (lstat(src, &st) < 0)
		return kj_error_set(err, KJ_EIO, "'%s': %s", src, strerror(errno));
	if (S_ISREG(st.st_mode))
		return copy_file(src, dst, max_bytes, bytes, err);
	if (!S_ISDIR(st.st_mode))
		return KJ_OK;
	if (mkdir(dst, 0755) < 0)
		return kj_error_write(err, errno, dst, "cannot create");
	d = opendir(src);
	if (!d)
		return kj_error_set(err, KJ_EIO, "'%s': %s", src, strerror(errno));
	while (rc == KJ_OK && (e = readdir(d)) != NULL) {
		char s2[PATH_MAX], d2[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "__pycache__"))
			continue;
		if (snprintf(s2, sizeof(s2), "%s/%s", src, e->d_name) >= (int)sizeof(s2) ||
		    snprintf(d2, sizeof(d2), "%s/%s", dst, e->d_name) >= (int)sizeof(d2))
			continue;
		rc = kj__copy_tree(s2, d2, max_bytes, bytes, err);
	}
	closedir(d);
	return rc;
}

int kj__is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int kj__is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
