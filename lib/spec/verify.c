/*
 * verify.c - kj_spec_verify: a spec's program copied, overlaid with a
 * translation, built (cached by content), run and judged by every strategy,
 * and timed when asked.
 *
 * Files.  The run's scratch directory (kj_attempt_open: a private tmpfs in
 * a mount namespace of the judge's own where the machine allows) holds one
 * side per program judged ("cand", and "ref" for a baseline):
 *
 *   SIDE/tree/     the copy, laid out as the project tree is (so that a
 *                  run argument "../../data/x" finds what it found there):
 *                  source_dir's and working_dir's subtrees, every file the
 *                  spec lists but verification_only, the configuration's
 *                  input_files; never a verification_only file, an expected
 *                  output (expected_results.reference_output_file), a
 *                  strategy's reference_file, verification.reference_files,
 *                  or the outputs the strategies read (a stale one in the
 *                  source tree would pass file_hash for a program that
 *                  writes nothing).  A tmpfs of its own where the scratch is
 *                  private: its size is the written-bytes limit above what
 *                  was copied (or built).
 *   SIDE/home/     HOME and TMPDIR's parent for builds and runs
 *   SIDE/sb/       the sandbox's empty root
 *
 * The sandbox sees the system read-only (/usr, /lib*, /bin, /sbin, /etc,
 * /opt), SIDE/tree and SIDE/home writable, nothing of the project: the
 * files left out of the copy do not exist inside it, and the judge reads
 * them outside.
 *
 * TOCTOU.  Spec paths are resolved by kj_spec_resolve (lstat and readlink
 * one component at a time, links followed only while they stay inside the
 * tree); the copy is then made through descriptors: each subtree's root
 * opened by kj_spec_open_nofollow (every component O_NOFOLLOW), each entry
 * opened with openat(O_NOFOLLOW) and checked with fstat on the descriptor
 * before a byte is read.  A link put in the source tree after the check
 * makes the open fail rather than lead out.  Links found inside a copied
 * subtree are resolved by kj_spec_resolve; one whose target is a regular
 * file inside the tree (and not left out) is copied as that file's content,
 * others are not copied (the record lists them).  After a run, the outputs
 * are read the same way from SIDE/tree: the program (dead by then, with
 * every process of its PID namespace) may have left links; one that leads
 * out of its working directory fails the strategy.
 *
 * Cache.  A build is kept in $cache_dir/spec-builds/KEY/ (tree/ and
 * build.json), KEY the SHA-256 of: every copied file's path, mode and
 * SHA-256; the clean, configure and build commands; the variables; the
 * spec's environment; the executable's path; the compilers on PATH (the
 * real path, size and mtime of cc, c++, gcc, g++, clang, nvcc, make,
 * cmake); and whether the sandbox is on.  A hit copies tree/ instead of
 * building.  Only passing builds are kept; an entry is written under
 * .tmp-PID-XXXXXX and renamed, so a reader finds it whole or not at all.
 * The golden cache's trimming does not count these entries (docs/spec.md).
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
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "kjudge/fileio.h"
#include "kjudge/pipeline.h"
#include "kjudge/spec.h"
#include "spec/spec_internal.h"
#include "core/core.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/vec.h"
#include "base/text.h"

#define TAIL_MAX (8u << 10)           /* stdout / stderr tails in the record */
#define BUILD_KEEP (64u << 10)        /* what is kept of a build command's output */
/* A spec's builds and runs: its own PID namespace outside the sandbox, and
 * the first the OOM killer takes. */
#define SPEC_PROGRAM (KJ__PROGRAM_PIDNS | KJ__PROGRAM_OOM_FIRST)

static const char *const status_names[] = {
#define KJ__SPEC_NAME(n, m) #n,
	KJ_SPEC_STATUS_MAP(KJ__SPEC_NAME)
#undef KJ__SPEC_NAME
};
static const char *const status_meanings[] = {
#define KJ__SPEC_MEAN(n, m) m,
	KJ_SPEC_STATUS_MAP(KJ__SPEC_MEAN)
#undef KJ__SPEC_MEAN
};

const char *kj_spec_status_name(enum kj_spec_status st)
{
	return (unsigned)st < KJ_SPEC_STATUS_COUNT_ ? status_names[st] : "?";
}

const char *kj_spec_status_meaning(enum kj_spec_status st)
{
	return (unsigned)st < KJ_SPEC_STATUS_COUNT_ ? status_meanings[st] : "?";
}

/* --- the copy ---------------------------------------------------------------------- */

/* One file of a copy, for the content key. */
struct entry {
	char *path;                    /* relative to the tree */
	char line[KJ_SHA256_HEX + 32]; /* "MODE SHA256" */
};

struct copy {
	const struct kj_spec *s;
	const char *dst_root;          /* SIDE/tree */
	char **skip;                   /* absolute source paths left out */
	size_t n_skip;
	struct entry *v;
	size_t n, cap;
	json_t *dropped;               /* links not copied, as relative paths */
	struct kj_error *err;
	int faithful;                  /* a cache copy: links kept as links */
};

static int skipped(const struct copy *c, const char *abs)
{
	size_t i;

	for (i = 0; i < c->n_skip; i++)
		if (!strcmp(c->skip[i], abs))
			return 1;
	return 0;
}

static int add_entry(struct copy *c, const char *rel, mode_t mode, const char *hex)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].path, rel))
			break;
	if (i == c->n) {
		if (KJ__GROW(c->v, c->cap, c->n + 1) != KJ_OK)
			return -1;
		if (!(c->v[c->n].path = strdup(rel)))
			return -1;
		c->n++;
	}
	snprintf(c->v[i].line, sizeof(c->v[i].line), "%o %s", (unsigned)(mode & 0777), hex);
	return 0;
}

/* Copy the open regular file in to dst_dir/name (replacing one that is
 * there), hashing it.  0, or -1 with c->err filled. */
static int copy_fd(struct copy *c, int in, int dst_dir, const char *name, const char *rel,
		   mode_t mode)
{
	char buf[1 << 16], hex[KJ_SHA256_HEX];
	unsigned char md[32];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int out, rc = -1, i;
	ssize_t n;

	if (!ctx) {
		kj_error_set(c->err, KJ_ENOMEM, "out of memory");
		return -1;
	}
	unlinkat(dst_dir, name, 0);
	out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     (mode & 0777) | 0600);
	if (out < 0 || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		kj_error_set(c->err, KJ_EIO, "'%s': cannot copy: %s", rel, strerror(errno));
		goto done;
	}
	for (;;) {
		ssize_t w = 0;

		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		while (w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				kj_error_set(c->err, KJ_EIO, "'%s': cannot copy: %s (the written-bytes "
					     "limit is counted on the copy too)", rel,
					     k < 0 ? strerror(errno) : "short write");
				goto done;
			}
			w += k;
		}
	}
	if (n < 0 || EVP_DigestFinal_ex(ctx, md, &mdlen) != 1) {
		kj_error_set(c->err, KJ_EIO, "'%s': cannot read: %s", rel, strerror(errno));
		goto done;
	}
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	if (add_entry(c, rel, mode, hex) < 0) {
		kj_error_set(c->err, KJ_ENOMEM, "out of memory");
		goto done;
	}
	rc = 0;
done:
	if (out >= 0)
		close(out);
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* Make the directories of rel (a path under the tree) in the copy; returns
 * a descriptor of the last one, or -1. */
static int mkdirs_at(struct copy *c, const char *rel_dir)
{
	int fd = open(c->dst_root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	const char *p = rel_dir;
	char part[NAME_MAX + 1];

	while (fd >= 0 && *p) {
		size_t n = strcspn(p, "/");
		int next;

		if (n == 0 || n > NAME_MAX) {
			p += n + (p[n] == '/');
			continue;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		p += n + (p[n] == '/');
		if (mkdirat(fd, part, 0755) < 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	return fd;
}

/* The part of abs below the tree ("" for the tree itself). */
static const char *below(const char *tree, const char *abs)
{
	size_t n = strlen(tree);

	return abs[n] == '/' ? abs + n + 1 : abs + n;
}

static int copy_file_abs(struct copy *c, const char *abs);

static int copy_dir(struct copy *c, int src, const char *abs, int depth)
{
	DIR *d;
	struct dirent *e;
	int rc = 0, dst;

	if (depth > 64) {
		kj_error_set(c->err, KJ_EINVAL, "'%s': directories nested too deep", abs);
		return -1;
	}
	if ((dst = mkdirs_at(c, below(c->s->tree, abs))) < 0) {
		kj_error_set(c->err, KJ_EIO, "'%s': cannot make it in the copy: %s", abs,
			     strerror(errno));
		return -1;
	}
	if (!(d = fdopendir(dup(src)))) {
		close(dst);
		kj_error_set(c->err, KJ_EIO, "'%s': cannot list: %s", abs, strerror(errno));
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char child[PATH_MAX];
		struct stat st;
		int fd;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", abs, e->d_name) >= (int)sizeof(child) ||
		    skipped(c, child))
			continue;
		if (fstatat(src, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			rc = copy_file_abs(c, child);
			continue;
		}
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			continue;
		fd = openat(src, e->d_name, (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0) | O_RDONLY |
				O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			kj_error_set(c->err, KJ_EIO, "'%s': cannot open: %s", child, strerror(errno));
			rc = -1;
			break;
		}
		if (S_ISDIR(st.st_mode))
			rc = copy_dir(c, fd, child, depth + 1);
		else if (S_ISREG(st.st_mode))
			rc = copy_fd(c, fd, dst, e->d_name, below(c->s->tree, child), st.st_mode);
		close(fd);
	}
	closedir(d);
	close(dst);
	return rc;
}

/*
 * Copy abs (a path in the tree: a file, a directory, or a link) to the
 * same place in the copy.  A link is followed when it stays inside the
 * tree and leads to something not left out; else it is listed as dropped.
 */
static int copy_file_abs(struct copy *c, const char *abs)
{
	char real[PATH_MAX], dir[PATH_MAX], *slash;
	struct stat st;
	struct kj_error e;
	int fd, dst, rc;

	if (skipped(c, abs))
		return 0;
	if (lstat(abs, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		snprintf(dir, sizeof(dir), "%s", abs);
		slash = strrchr(dir, '/');
		*slash = '\0';
		if (kj_spec_resolve(c->s->tree, dir, slash + 1, 1, "link", real, &e) != KJ_OK ||
		    skipped(c, real) || !kj__is_file(real)) {
			json_array_append_new(c->dropped, json_string(below(c->s->tree, abs)));
			return 0;
		}
	} else {
		snprintf(real, sizeof(real), "%s", abs);
	}
	if (kj__is_dir(real) && !S_ISLNK(st.st_mode)) {
		fd = kj_spec_open_nofollow(real, O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			kj_error_set(c->err, KJ_EIO, "'%s': cannot open: %s", abs, strerror(errno));
			return -1;
		}
		rc = copy_dir(c, fd, real, 0);
		close(fd);
		return rc;
	}
	fd = kj_spec_open_nofollow(real, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		kj_error_set(c->err, KJ_EIO, "'%s': cannot open as a regular file: %s", abs,
			     strerror(errno));
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", below(c->s->tree, abs));
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	dst = mkdirs_at(c, dir);
	if (dst < 0) {
		close(fd);
		kj_error_set(c->err, KJ_EIO, "'%s': cannot make its directory in the copy: %s", abs,
			     strerror(errno));
		return -1;
	}
	rc = copy_fd(c, fd, dst, strrchr(abs, '/') + 1, below(c->s->tree, abs), st.st_mode);
	close(dst);
	close(fd);
	return rc;
}

static void copy_release(struct copy *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	for (i = 0; i < c->n_skip; i++)
		free(c->skip[i]);
	free(c->skip);
	json_decref(c->dropped);
}

static int skip_add(struct copy *c, const char *abs)
{
	if (KJ__RESIZE(c->skip, c->n_skip + 1) != KJ_OK)
		return -1;
	if (!(c->skip[c->n_skip] = strdup(abs)))
		return -1;
	c->n_skip++;
	return 0;
}

/* What never enters the copy (see the header comment). */
static int skip_list(struct copy *c)
{
	const struct kj_spec *s = c->s;
	const json_t *refs = json_object_get(json_object_get(s->doc, "verification"),
					     "reference_files");
	size_t i;

	for (i = 0; i < s->verification_only.n; i++)
		if (skip_add(c, s->verification_only.v[i].abs) < 0)
			return -1;
	for (i = 0; i < s->n_configs; i++)
		if (s->configs[i].reference_output.abs &&
		    skip_add(c, s->configs[i].reference_output.abs) < 0)
			return -1;
	for (i = 0; i < s->n_strategies; i++) {
		const struct kj_spec_strategy *st = &s->strategies[i];
		char abs[PATH_MAX];
		struct kj_error e;

		if (st->reference.abs && skip_add(c, st->reference.abs) < 0)
			return -1;
		if (st->path.rel &&
		    kj_spec_resolve(s->tree, s->working_dir, st->path.rel, 0, "path", abs, &e) == KJ_OK &&
		    skip_add(c, abs) < 0)
			return -1;
	}
	for (i = 0; i < json_array_size(refs); i++) {
		const json_t *p = json_object_get(json_array_get(refs, i), "path");
		char abs[PATH_MAX];
		struct kj_error e;

		if (json_is_string(p) &&
		    kj_spec_resolve(s->tree, s->source_dir, json_string_value(p), 0, "path", abs,
				    &e) == KJ_OK &&
		    skip_add(c, abs) < 0)
			return -1;
	}
	return 0;
}

static int cmp_entry(const void *x, const void *y)
{
	return strcmp(((const struct entry *)x)->path, ((const struct entry *)y)->path);
}

/* --- sides ------------------------------------------------------------------------ */

struct side {
	const char *name;              /* "cand" or "ref" */
	const char *candidate;         /* the overlay's directory, or NULL */
	char dir[PATH_MAX], tree[PATH_MAX], home[PATH_MAX], sbroot[PATH_MAX], work[PATH_MAX];
	char exe_abs[PATH_MAX];
	int quota;                     /* tree is a tmpfs of its own */
	struct kj_sandbox sb;
	char **env;
	char key[KJ_SHA256_HEX];
	json_t *build;                 /* the build record */
	enum kj_spec_status build_status;
};

struct ctx {
	const struct kj_spec *s;
	const struct kj_spec_verify_opts *o;
	const struct kj_spec_config *cfgn;
	struct kj_attempt a;
	long long out_cap, written, copy_max;
	double build_timeout;
	struct kj_error *err;
};

/* The CPU topology under /sys too: OpenCL on the CPU (PoCL, through hwloc)
 * sizes its device from it, and without it runs out of memory at once
 * ("failed to find sysfs cpu topology directory") and crashes. */
static const char *const sys_ro[] = { "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin",
	"/etc", "/opt", "/sys/devices/system/cpu", "/sys/devices/system/node" };

static int path_in(char *out, const char *a, const char *b)
{
	return snprintf(out, PATH_MAX, "%s/%s", a, b) >= PATH_MAX ? -1 : 0;
}

static void strv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The environment of builds and runs: a PATH, HOME and TMPDIR of the
 * side's, what the judge may hand on, then the spec's variables. */
static char **side_env(const struct ctx *x, const struct side *sd)
{
	static const char *const pass[] = { "PATH", "LANG", "LD_LIBRARY_PATH", "CUDA_HOME",
		"CUDA_VISIBLE_DEVICES", "OCL_ICD_VENDORS", "POCL_DEVICES" };
	size_t n = 0, i, cap = sizeof(pass) / sizeof(pass[0]) + x->s->n_env + 4;
	char **v = calloc(cap, sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		const char *val = kj_config_env(x->o->cfg, pass[i]);

		if (!val && !strcmp(pass[i], "PATH"))
			val = "/usr/local/bin:/usr/bin:/bin";
		if (val && asprintf(&v[n++], "%s=%s", pass[i], val) < 0)
			goto oom;
	}
	if (asprintf(&v[n++], "HOME=%s", sd->home) < 0 || asprintf(&v[n++], "TMPDIR=/tmp") < 0)
		goto oom;
	for (i = 0; i < x->s->n_env; i++)
		if (!(v[n++] = strdup(x->s->env[i])))
			goto oom;
	return v;
oom:
	v[n ? n - 1 : 0] = NULL;
	strv_free(v);
	return NULL;
}

static int side_sandbox(struct ctx *x, struct side *sd)
{
	const struct kj_config *cfg = x->o->cfg;
	size_t i;

	kj_sandbox_init(&sd->sb);
	sd->sb.root_dir = sd->sbroot;
	for (i = 0; i < sizeof(sys_ro) / sizeof(sys_ro[0]); i++)
		kj_sandbox_ro(&sd->sb, sys_ro[i]);
	kj_sandbox_rw(&sd->sb, sd->tree);
	kj_sandbox_rw(&sd->sb, sd->home);
	sd->sb.gpu = kj__nvidia_driver_loaded();
	sd->sb.keep_links = 1;
	sd->sb.cpu_s = cfg->limits.cpu_s;
	sd->sb.mem_bytes = cfg->limits.mem_bytes;
	sd->sb.fsize_bytes = x->written;
	sd->sb.nproc = cfg->limits.procs;
	sd->sb.nofile = cfg->limits.nofile;
	sd->sb.tmp_bytes = cfg->limits.tmp_bytes;
	if (sd->sb.overflow)
		return kj_error_set(x->err, KJ_ESANDBOX, "the sandbox cannot hold its paths");
	return KJ_OK;
}

/* (Re)size the side's tmpfs to what it holds plus the written-bytes limit. */
static int side_quota(struct ctx *x, struct side *sd, long long holds)
{
	char opts[64];

	if (!sd->quota)
		return KJ_OK;
	snprintf(opts, sizeof(opts), "size=%lld,mode=0755", holds + x->written + (1LL << 20));
	if (mount(NULL, sd->tree, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts) < 0)
		return kj_error_set(x->err, KJ_ESANDBOX, "cannot resize the copy's tmpfs at '%s': %s",
				    sd->tree, strerror(errno));
	return KJ_OK;
}

static long long fs_used(const char *dir)
{
	struct statvfs v;

	if (statvfs(dir, &v) < 0)
		return 0;
	return (long long)(v.f_blocks - v.f_bfree) * (long long)v.f_frsize;
}

static int fs_full(const char *dir)
{
	struct statvfs v;

	return statvfs(dir, &v) == 0 && v.f_bavail * v.f_frsize < 64 * 1024;
}

/* The size of the largest regular file under the directory open on fd
 * (links not followed; fd is closed). */
static long long largest_file(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	long long most = 0;

	if (!d) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode) && st.st_size > most)
			most = st.st_size;
		if (S_ISDIR(st.st_mode) && depth < 64) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
			long long m = sub >= 0 ? largest_file(sub, depth + 1) : 0;

			if (m > most)
				most = m;
		}
	}
	closedir(d);
	return most;
}

/* Whether a run wrote up to the written-bytes limit: a file as large as
 * the largest-file limit (the kernel refuses the write with EFBIG: as PID
 * 1 of its namespace the program ignores SIGXFSZ), or the copy's tmpfs
 * full. */
static int wrote_limit(const struct ctx *x, const struct side *sd)
{
	int fd = open(sd->tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (sd->quota && fs_full(sd->tree)) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	return fd >= 0 && largest_file(fd, 0) >= x->written;
}

static int side_dirs(struct ctx *x, struct side *sd)
{
	char rel_work[PATH_MAX];

	if (path_in(sd->dir, x->a.scratch, sd->name) < 0 || path_in(sd->tree, sd->dir, "tree") < 0 ||
	    path_in(sd->home, sd->dir, "home") < 0 || path_in(sd->sbroot, sd->dir, "sb") < 0)
		return kj_error_set(x->err, KJ_EINVAL, "scratch path too long");
	if (kj__mkdirs(sd->tree, 0755) < 0 || kj__mkdirs(sd->home, 0755) < 0 ||
	    kj__mkdirs(sd->sbroot, 0700) < 0)
		return kj_error_set(x->err, KJ_EIO, "'%s': cannot create: %s", sd->dir,
				    strerror(errno));
	if (strcmp(x->a.scratch_kind, "shared") != 0) {
		/* In the judge's own mount namespace: it goes with the run. */
		if (mount("kjudge-spec", sd->tree, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
			return kj_error_set(x->err, KJ_ESANDBOX, "cannot mount the copy's tmpfs at "
					    "'%s': %s", sd->tree, strerror(errno));
		sd->quota = 1;
	}
	snprintf(rel_work, sizeof(rel_work), "%s", below(x->s->tree, x->s->working_dir));
	if (snprintf(sd->work, sizeof(sd->work), "%s%s%s", sd->tree, *rel_work ? "/" : "",
		     rel_work) >= (int)sizeof(sd->work))
		return kj_error_set(x->err, KJ_EINVAL, "scratch path too long");
	return KJ_OK;
}

/* The files of the candidate's directory that are not translation targets. */
struct extra {
	const struct kj_spec_list *targets;
	json_t *ignored;
	char prefix[PATH_MAX];
	const char *root;
};

static int list_extra(void *ctx, const char *name, const struct stat *st)
{
	struct extra *e = ctx;
	char rel[PATH_MAX], full[PATH_MAX * 2];
	size_t i;

	if (snprintf(rel, sizeof(rel), "%s%s", e->prefix, name) >= (int)sizeof(rel))
		return 0;
	if (S_ISDIR(st->st_mode)) {
		struct extra sub = *e;

		snprintf(full, sizeof(full), "%s/%s", e->root, rel);
		if (snprintf(sub.prefix, sizeof(sub.prefix), "%s/", rel) < (int)sizeof(sub.prefix))
			kj__each_entry(full, list_extra, &sub);
		return 0;
	}
	for (i = 0; i < e->targets->n; i++) {
		const char *t = e->targets->v[i].rel;

		while (t[0] == '.' && t[1] == '/')
			t += 2;
		if (!strcmp(t, rel))
			return 0;
	}
	json_array_append_new(e->ignored, json_string(rel));
	return 0;
}

static const struct kj_spec_list *targets_of(const struct kj_spec *s)
{
	return s->targets_given ? &s->targets : &s->prompt;
}

/* Overlay the candidate's targets on the copy. */
static int overlay(struct ctx *x, struct side *sd, struct copy *c)
{
	const struct kj_spec_list *t = targets_of(x->s);
	char root[PATH_MAX];
	size_t i;

	if (!realpath(sd->candidate, root))
		return kj_error_set(x->err, KJ_ENOENT, "candidate '%s': %s", sd->candidate,
				    strerror(errno));
	for (i = 0; i < t->n; i++) {
		char abs[PATH_MAX], field[96], rel_dst[PATH_MAX], dir[PATH_MAX], *slash;
		struct kj_error e;
		struct stat st;
		int rc, fd, dst;

		snprintf(field, sizeof(field), "files.%s[%zu]",
			 x->s->targets_given ? "translation_targets" : "prompt_payload", i);
		rc = kj_spec_resolve(root, NULL, t->v[i].rel, 1, field, abs, &e);
		if (rc != KJ_OK)
			return kj_error_set(x->err, rc, "candidate '%s': %s%s", sd->candidate, e.msg,
					    rc == KJ_ENOENT ? " in the candidate" : "");
		fd = kj_spec_open_nofollow(abs, O_RDONLY);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			return kj_error_set(x->err, KJ_EINVAL, "candidate '%s': %s: '%s' is not a "
					    "regular file", sd->candidate, field, t->v[i].rel);
		}
		snprintf(rel_dst, sizeof(rel_dst), "%s", below(x->s->tree, t->v[i].abs));
		snprintf(dir, sizeof(dir), "%s", rel_dst);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			dir[0] = '\0';
		dst = mkdirs_at(c, dir);
		rc = dst < 0 ? -1 : copy_fd(c, fd, dst, strrchr(t->v[i].abs, '/') + 1, rel_dst,
					     st.st_mode);
		if (dst >= 0)
			close(dst);
		close(fd);
		if (rc < 0)
			return x->err->code;
	}
	return KJ_OK;
}

/* The compilers a build may call, as the cache key sees them. */
static void compilers(const struct ctx *x, char *buf, size_t size)
{
	static const char *const names[] = { "cc", "c++", "gcc", "g++", "clang", "nvcc", "make",
		"cmake" };
	const char *path = kj_config_env(x->o->cfg, "PATH");
	size_t i, len = 0;

	buf[0] = '\0';
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *p = path;

		while (*p) {
			size_t n = strcspn(p, ":");
			char cand[PATH_MAX], real[PATH_MAX];
			struct stat st;

			if (n && snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, names[i]) <
					 (int)sizeof(cand) &&
			    realpath(cand, real) && stat(real, &st) == 0) {
				int w = snprintf(buf + len, size - len, "%s=%s:%lld:%lld;", names[i], real,
						 (long long)st.st_size, (long long)st.st_mtime);

				if (w > 0 && (size_t)w < size - len)
					len += (size_t)w;
				break;
			}
			p += n + (p[n] == ':');
		}
	}
}

/* One NUL-ended field of the key ("(none)" for an absent one). */
static void feed(EVP_MD_CTX *m, const char *str)
{
	if (!str)
		str = "(none)";
	EVP_DigestUpdate(m, str, strlen(str) + 1);
}

static int build_key(struct ctx *x, struct side *sd, struct copy *c)
{
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	unsigned char md[32];
	unsigned int len = 0;
	char comp[4096];
	size_t i;
	const struct kj_spec *s = x->s;

	if (!m)
		return kj_error_set(x->err, KJ_ENOMEM, "out of memory");
	qsort(c->v, c->n, sizeof(*c->v), cmp_entry);
	compilers(x, comp, sizeof(comp));
	EVP_DigestInit_ex(m, EVP_sha256(), NULL);
	feed(m, "kjudge-spec-build-1");
	for (i = 0; i < c->n; i++) {
		feed(m, c->v[i].path);
		feed(m, c->v[i].line);
	}
	feed(m, below(s->tree, s->working_dir));
	feed(m, s->clean);
	feed(m, s->configure);
	feed(m, s->build);
	for (i = 0; i < s->n_vars; i++) {
		feed(m, s->vars[i].name);
		feed(m, s->vars[i].value);
	}
	for (i = 0; i < s->n_env; i++)
		feed(m, s->env[i]);
	feed(m, s->build_output);
	feed(m, comp);
	feed(m, x->o->cfg->sandbox ? "sandbox" : "plain");
	EVP_DigestFinal_ex(m, md, &len);
	EVP_MD_CTX_free(m);
	for (i = 0; i < 32; i++)
		snprintf(sd->key + 2 * i, 3, "%02x", md[i]);
	return KJ_OK;
}

/* ${VAR} replaced by build.variables' defaults; unknown names stay. */
static char *expand(const struct kj_spec *s, const char *cmd)
{
	size_t cap = strlen(cmd) + 1, len = 0;
	char *out = malloc(cap);
	const char *p = cmd;

	if (!out)
		return NULL;
	while (*p) {
		const char *val = NULL;
		size_t skip = 1, i, vl;

		if (p[0] == '$' && p[1] == '{') {
			const char *end = strchr(p + 2, '}');

			for (i = 0; end && i < s->n_vars; i++)
				if (strlen(s->vars[i].name) == (size_t)(end - p - 2) &&
				    !strncmp(s->vars[i].name, p + 2, (size_t)(end - p - 2))) {
					val = s->vars[i].value;
					skip = (size_t)(end - p) + 1;
				}
		}
		vl = val ? strlen(val) : 1;
		if (KJ__GROW(out, cap, len + vl + 1) != KJ_OK) {
			free(out);
			return NULL;
		}
		if (val)
			memcpy(out + len, val, vl);
		else
			out[len] = *p;
		len += vl;
		p += skip;
	}
	out[len] = '\0';
	return out;
}

/* A JSON string of bytes that may not be UTF-8 (a program's output):
 * invalid bytes and NULs become U+FFFD, so the record is always valid
 * JSON.  NULL when out of memory. */
static json_t *text_json(const char *p, size_t n)
{
	char *clean = kj__text_clean(p, n, 4 * n + 16);
	json_t *j = clean ? json_string(clean) : NULL;

	free(clean);
	return j;
}

static json_t *sink_json(const struct kj__sink *k)
{
	size_t n = k->len > TAIL_MAX ? TAIL_MAX : k->len;

	return text_json(k->buf + k->len - n, n);
}

/* One build command under /bin/sh -c; its record appended to cmds.
 * Returns KJ_OK with *ok (exited 0) and *timed_out, or a judge error. */
static int build_step(struct ctx *x, struct side *sd, const char *step, const char *cmd,
		      json_t *cmds, int *ok, int *timed_out)
{
	char *expanded = expand(x->s, cmd);
	char sh[] = "/bin/sh", dash_c[] = "-c";
	char *argv[4] = { sh, dash_c, expanded, NULL };
	struct kj__run_req q = { argv, sd->env, sd->work, x->o->cfg->sandbox ? &sd->sb : NULL,
				 x->build_timeout, SPEC_PROGRAM };
	struct kj__run_res r;
	json_t *rec;
	int rc;

	if (!expanded)
		return kj_error_set(x->err, KJ_ENOMEM, "out of memory");
	kj__program_init(&r, BUILD_KEEP, KJ__SINK_TAIL, BUILD_KEEP, KJ__SINK_TAIL);
	rc = kj__program_run(&q, &r, x->err);
	if (rc != KJ_OK) {
		free(expanded);
		kj__program_release(&r);
		return rc;
	}
	*ok = r.started && !r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
	*timed_out = r.timed_out;
	rec = json_pack("{s:s, s:s, s:s, s:f, s:o, s:o}", "step", step, "command", expanded, "how",
			r.timed_out ? "timed out" : r.started ? r.how : "could not start /bin/sh",
			"duration_s", r.wall_s,
			"stdout_tail", sink_json(&r.out), "stderr_tail", sink_json(&r.err));
	if (rec && WIFEXITED(r.status) && r.started && !r.timed_out)
		json_object_set_new(rec, "exit_code", json_integer(WEXITSTATUS(r.status)));
	free(expanded);
	kj__program_release(&r);
	if (!rec || json_array_append_new(cmds, rec) < 0)
		return kj_error_set(x->err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* The executable the build must leave, inside the copy's working dir:
 * 0, -1 missing (why says so), -2 the judge's failure (x->err). */
static int find_exe(struct ctx *x, struct side *sd, const char *rel, char out[PATH_MAX],
		    char *why, size_t size)
{
	struct kj_error e;
	int rc = kj_spec_resolve(sd->tree, sd->work, rel, 1, "build.outputs.executable", out, &e);

	if (rc == KJ_ENOMEM) {
		kj_error_set(x->err, KJ_ENOMEM, "out of memory");
		return -2;
	}
	if (rc == KJ_ENOENT) {
		snprintf(why, size, "build.outputs.executable '%s' is missing after the build", rel);
		return -1;
	}
	if (rc != KJ_OK) {
		snprintf(why, size, "%s", e.msg);
		return -1;
	}
	if (!kj__is_file(out)) {
		snprintf(why, size, "build.outputs.executable '%s' is not a regular file", rel);
		return -1;
	}
	return 0;
}

static int cache_dir(const struct ctx *x, char out[PATH_MAX])
{
	const char *base = x->o->cfg->cache_dir;

	if (!base)
		return -1;
	return snprintf(out, PATH_MAX, "%s/spec-builds", base) >= PATH_MAX ? -1 : 0;
}

/* Copy a cache tree or a built one, links kept as links. */
static int copy_faithful(const char *src, const char *dst, struct kj_error *err);

static int faithful_dir(int src, int dst, const char *what, int depth, struct kj_error *err)
{
	DIR *d = fdopendir(dup(src));
	struct dirent *e;
	int rc = 0;

	if (!d || depth > 64) {
		if (d)
			closedir(d);
		return kj_error_set(err, KJ_EIO, "'%s': cannot list", what);
	}
	while (rc == KJ_OK && (e = readdir(d)) != NULL) {
		struct stat st;
		int in, out;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(src, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t n = readlinkat(src, e->d_name, t, sizeof(t) - 1);

			if (n > 0) {
				t[n] = '\0';
				if (symlinkat(t, dst, e->d_name) < 0)
					rc = kj_error_set(err, KJ_EIO, "'%s': cannot copy a link: %s", what,
							  strerror(errno));
			}
		} else if (S_ISDIR(st.st_mode)) {
			in = openat(src, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (in < 0 || mkdirat(dst, e->d_name, st.st_mode & 07777) < 0 ||
			    (out = openat(dst, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					  O_CLOEXEC)) < 0) {
				rc = kj_error_set(err, KJ_EIO, "'%s': cannot copy: %s", what, strerror(errno));
			} else {
				rc = faithful_dir(in, out, what, depth + 1, err);
				close(out);
			}
			if (in >= 0)
				close(in);
		} else if (S_ISREG(st.st_mode)) {
			char buf[1 << 16];
			ssize_t n = 0;

			in = openat(src, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			out = openat(dst, e->d_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				     st.st_mode & 07777);
			while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
				if (write(out, buf, (size_t)n) != n) {
					n = -1;
					break;
				}
			if (in < 0 || out < 0 || n < 0)
				rc = kj_error_set(err, KJ_EIO, "'%s': cannot copy: %s", what,
						  strerror(errno));
			if (in >= 0)
				close(in);
			if (out >= 0)
				close(out);
		}
	}
	closedir(d);
	return rc;
}

static int copy_faithful(const char *src, const char *dst, struct kj_error *err)
{
	int in = kj_spec_open_nofollow(src, O_RDONLY | O_DIRECTORY), out, rc;

	if (in < 0)
		return kj_error_set(err, KJ_EIO, "'%s': cannot open: %s", src, strerror(errno));
	if (kj__mkdirs(dst, 0755) < 0 ||
	    (out = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		close(in);
		return kj_error_set(err, KJ_EIO, "'%s': cannot create: %s", dst, strerror(errno));
	}
	rc = faithful_dir(in, out, src, 0, err);
	close(in);
	close(out);
	return rc;
}

/* Remove what a tree holds, keeping the tree (a mount point). */
static void empty_tree(const char *dir)
{
	kj__clear_dir(dir, NULL);
}

/* Keep a passing build: SIDE/tree as the entry's tree. */
static void cache_put(struct ctx *x, struct side *sd)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 64], final[PATH_MAX + 80], t[PATH_MAX + 80];
	struct kj_error e;
	char *text;
	int oom;

	if (cache_dir(x, dir) < 0 || kj__mkdirs(dir, 0700) < 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%d-XXXXXX", dir, (int)getpid());
	snprintf(final, sizeof(final), "%s/%s", dir, sd->key);
	if (!mkdtemp(tmp))
		return;
	snprintf(t, sizeof(t), "%s/tree", tmp);
	text = kj__json_dumps(sd->build, JSON_INDENT(1) | JSON_SORT_KEYS, &oom);
	if (copy_faithful(sd->tree, t, &e) == KJ_OK && text) {
		snprintf(t, sizeof(t), "%s/build.json", tmp);
		if (kj_write_file_atomic(t, text, strlen(text), &e) == KJ_OK &&
		    rename(tmp, final) == 0) {
			free(text);
			return;
		}
	}
	free(text);
	kj__rm_rf(tmp);
}

/* A kept build for sd->key, copied into SIDE/tree.  1 hit, 0 miss, or a
 * judge error. */
static int cache_get(struct ctx *x, struct side *sd)
{
	char dir[PATH_MAX], t[PATH_MAX + 80], m[PATH_MAX + 80];
	json_t *rec;
	int oom, rc;

	if (cache_dir(x, dir) < 0)
		return 0;
	snprintf(t, sizeof(t), "%s/%s/tree", dir, sd->key);
	snprintf(m, sizeof(m), "%s/%s/build.json", dir, sd->key);
	if (!kj__is_dir(t) || !(rec = kj__json_load_file(m, 0, NULL, &oom)))
		return 0;
	/* An entry without its executable was damaged after it was kept (only
	 * passing builds are): it goes, and the build is made again, rather
	 * than charge the program a BUILD_FAIL. */
	{
		char work[PATH_MAX * 2], exe[PATH_MAX], entry[PATH_MAX + 80];
		const char *rel = below(x->s->tree, x->s->working_dir);
		struct kj_error e;

		snprintf(work, sizeof(work), "%s%s%s", t, *rel ? "/" : "", rel);
		if (strcmp(json_string_value(json_object_get(rec, "status")) ?
				   json_string_value(json_object_get(rec, "status")) : "", "PASS") ||
		    kj_spec_resolve(t, work, x->s->build_output, 1, "executable", exe, &e) != KJ_OK ||
		    !kj__is_file(exe)) {
			json_decref(rec);
			snprintf(entry, sizeof(entry), "%s/%s", dir, sd->key);
			kj__rm_rf(entry);
			return 0;
		}
	}
	empty_tree(sd->tree);
	if ((rc = copy_faithful(t, sd->tree, x->err)) != KJ_OK) {
		json_decref(rec);
		return rc;
	}
	json_decref(sd->build);
	sd->build = rec;
	json_object_set_new(sd->build, "cached", json_true());
	return 1;
}

static long long path_bytes(const char *abs)
{
	struct stat st;

	if (lstat(abs, &st) < 0)
		return 0;
	return S_ISDIR(st.st_mode) ? kj__tree_bytes(abs) : S_ISREG(st.st_mode) ? st.st_size : 0;
}

/* What the copy will hold, about. */
static long long copy_estimate(const struct ctx *x)
{
	const struct kj_spec *s = x->s;
	const struct kj_spec_list *lists[4] = { &s->prompt, &s->support, &s->targets,
						&x->cfgn->input_files };
	long long n = path_bytes(s->source_dir);
	size_t i, k;

	if (strcmp(s->working_dir, s->source_dir))
		n += path_bytes(s->working_dir);
	for (k = 0; k < 4; k++)
		for (i = 0; i < lists[k]->n; i++)
			n += path_bytes(lists[k]->v[i].abs);
	return n;
}

/* Copy, overlay, and build one side (or take its build from the cache). */
static int prepare_side(struct ctx *x, struct side *sd, json_t *notes)
{
	const struct kj_spec *s = x->s;
	struct copy c;
	json_t *cmds = NULL;
	double t0 = kj__now_s();
	long long repo_bytes = path_bytes(s->repo_root);
	int whole = repo_bytes <= x->copy_max;
	char why[PATH_MAX + 128];
	size_t i;
	int rc, hit, ok = 1, to = 0;

	memset(&c, 0, sizeof(c));
	c.s = s;
	c.err = x->err;
	c.dst_root = sd->tree;
	sd->build_status = KJ_SPEC_PASS;
	if ((rc = side_dirs(x, sd)) != KJ_OK)
		return rc;
	if (!(c.dropped = json_array()) || skip_list(&c) < 0) {
		copy_release(&c);
		return kj_error_set(x->err, KJ_ENOMEM, "out of memory");
	}
	/* The copy may hold what is copied and the limit: the estimate is
	 * doubled, for the links copied as their targets' content and the
	 * files counted twice (a tmpfs uses memory only for what is written,
	 * so a generous size costs nothing; the run's is exact). */
	if ((rc = side_quota(x, sd, 2 * (copy_estimate(x) + (whole ? repo_bytes : 0)))) != KJ_OK)
		goto out;
	rc = KJ_OK;
	/* The whole repository where it is small enough (a build that reads
	 * ../../common/make.config, as Rodinia's and the bundled suite's do,
	 * finds it), else source_dir and working_dir only. */
	json_object_set_new(notes, "copied", json_pack("{s:s, s:I}", "scope",
				whole ? "repo_root" : "source_dir and working_dir",
				"repo_root_bytes", (json_int_t)repo_bytes));
	if ((whole && copy_file_abs(&c, s->repo_root) < 0) ||
	    (!whole && (copy_file_abs(&c, s->source_dir) < 0 ||
			(strcmp(s->working_dir, s->source_dir) &&
			 copy_file_abs(&c, s->working_dir) < 0))))
		goto fail;
	for (i = 0; i < s->prompt.n; i++)
		if (copy_file_abs(&c, s->prompt.v[i].abs) < 0)
			goto fail;
	for (i = 0; i < s->support.n; i++)
		if (copy_file_abs(&c, s->support.v[i].abs) < 0)
			goto fail;
	for (i = 0; i < s->targets.n; i++)
		if (copy_file_abs(&c, s->targets.v[i].abs) < 0)
			goto fail;
	for (i = 0; i < x->cfgn->input_files.n; i++)
		if (copy_file_abs(&c, x->cfgn->input_files.v[i].abs) < 0)
			goto fail;
	if (kj__mkdirs(sd->work, 0755) < 0) {
		rc = kj_error_set(x->err, KJ_EIO, "'%s': cannot create: %s", sd->work, strerror(errno));
		goto out;
	}
	if (sd->candidate && (rc = overlay(x, sd, &c)) != KJ_OK)
		goto out;
	if (json_array_size(c.dropped))
		json_object_set(notes, "links_not_copied", c.dropped);
	if ((rc = build_key(x, sd, &c)) != KJ_OK)
		goto out;
	if (!(sd->env = side_env(x, sd))) {
		rc = kj_error_set(x->err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = side_sandbox(x, sd)) != KJ_OK)
		goto out;
	hit = cache_get(x, sd);
	if (hit < 0) {
		rc = hit;
		goto out;
	}
	if (hit) {
		int fe = find_exe(x, sd, s->build_output, sd->exe_abs, why, sizeof(why));

		if (fe == -2) {
			rc = x->err->code;
			goto out;
		}
		if (fe < 0) {
			sd->build_status = KJ_SPEC_BUILD_FAIL;
			json_object_set_new(sd->build, "reason", json_string(why));
		}
		goto out;
	}
	cmds = json_array();
	sd->build = json_pack("{s:s, s:b, s:s, s:o}", "status", "PASS", "cached", 0, "key", sd->key,
			      "commands", cmds);
	if (!sd->build) {
		rc = kj_error_set(x->err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	/* clean (its failure ignored, as the original does), configure, build. */
	if (s->clean && (rc = build_step(x, sd, "clean", s->clean, cmds, &ok, &to)) != KJ_OK)
		goto out;
	ok = 1;
	if (!to && s->configure &&
	    (rc = build_step(x, sd, "configure", s->configure, cmds, &ok, &to)) != KJ_OK)
		goto out;
	if (ok && !to && (rc = build_step(x, sd, "build", s->build, cmds, &ok, &to)) != KJ_OK)
		goto out;
	json_object_set_new(sd->build, "duration_s", json_real(kj__now_s() - t0));
	if (to) {
		sd->build_status = KJ_SPEC_TIMEOUT;
		snprintf(why, sizeof(why), "a build command passed its time limit of %g s",
			 x->build_timeout);
	} else if (!ok) {
		sd->build_status = KJ_SPEC_BUILD_FAIL;
		snprintf(why, sizeof(why), "the %s command failed",
			 json_string_value(json_object_get(json_array_get(cmds, json_array_size(cmds) - 1),
							   "step")));
	} else {
		int fe = find_exe(x, sd, s->build_output, sd->exe_abs, why, sizeof(why));

		if (fe == -2) {
			rc = x->err->code;
			goto out;
		}
		if (fe < 0)
			sd->build_status = KJ_SPEC_BUILD_FAIL;
	}
	json_object_set_new(sd->build, "status", json_string(kj_spec_status_name(sd->build_status)));
	if (sd->build_status != KJ_SPEC_PASS)
		json_object_set_new(sd->build, "reason", json_string(why));
	else
		cache_put(x, sd);
	goto out;
fail:
	rc = x->err->code;
out:
	copy_release(&c);
	return rc;
}

/* --- the run ----------------------------------------------------------------------- */

struct run_out {
	struct kj__run_res r;
	enum kj_spec_status status;
	char reason[512];
	int exit_only;          /* RUN_FAIL only for exiting with a status other than 0 */
};

/* The floor of the clock: /bin/true started in the side's sandbox. */
static int floor_once(struct ctx *x, struct side *sd, double *s)
{
	char prog[] = "/bin/true";
	char *argv[2] = { prog, NULL };
	struct kj__run_req q = { argv, sd->env, sd->work, x->o->cfg->sandbox ? &sd->sb : NULL, 10,
				 SPEC_PROGRAM };
	struct kj__run_res r;
	int rc;

	kj__program_init(&r, 4096, KJ__SINK_TAIL, 4096, KJ__SINK_TAIL);
	rc = kj__program_run(&q, &r, x->err);
	*s = r.wall_s;
	kj__program_release(&r);
	return rc;
}

static int run_once(struct ctx *x, struct side *sd, struct run_out *ro)
{
	const struct kj_spec_config *cf = x->cfgn;
	char **argv = calloc(cf->n_args + 2, sizeof(*argv));
	struct kj__run_req q;
	const struct kj_config *cfg = x->o->cfg;
	size_t i;
	int rc;

	if (!argv)
		return kj_error_set(x->err, KJ_ENOMEM, "out of memory");
	/* argv[0] is the spec's executable as written, relative to the
	 * working directory (execve after chdir: no shell, no PATH). */
	argv[0] = x->s->executable;
	for (i = 0; i < cf->n_args; i++)
		argv[i + 1] = cf->args[i];
	if ((rc = side_quota(x, sd, fs_used(sd->tree))) != KJ_OK) {
		free(argv);
		return rc;
	}
	q.argv = argv;
	q.envp = sd->env;
	q.cwd = sd->work;
	q.sb = cfg->sandbox ? &sd->sb : NULL;
	q.timeout_s = x->s->run_timeout_s;
	q.flags = SPEC_PROGRAM;
	kj__program_init(&ro->r, (size_t)x->out_cap, KJ__SINK_LIMIT, TAIL_MAX, KJ__SINK_TAIL);
	rc = kj__program_run(&q, &ro->r, x->err);
	free(argv);
	if (rc != KJ_OK)
		return rc;
	ro->status = KJ_SPEC_PASS;
	ro->reason[0] = '\0';
	ro->exit_only = 0;
	if (!ro->r.started) {
		ro->status = KJ_SPEC_RUN_FAIL;
		snprintf(ro->reason, sizeof(ro->reason), "cannot execute '%s': %s", x->s->executable,
			 strerror(ro->r.exec_errno));
	} else if (ro->r.timed_out) {
		ro->status = KJ_SPEC_TIMEOUT;
		snprintf(ro->reason, sizeof(ro->reason), "passed its time limit of %g s "
			 "(run.timeout_seconds)", x->s->run_timeout_s);
	} else if (ro->r.out.over) {
		ro->status = KJ_SPEC_RUN_FAIL;
		snprintf(ro->reason, sizeof(ro->reason), "printed more than %lld bytes on stdout "
			 "(the output limit): stopped", x->out_cap);
	} else if ((WIFSIGNALED(ro->r.status) && WTERMSIG(ro->r.status) == SIGXFSZ) ||
		   wrote_limit(x, sd)) {
		ro->status = KJ_SPEC_RUN_FAIL;
		snprintf(ro->reason, sizeof(ro->reason), "reached the written-bytes limit of %lld "
			 "bytes (%s)", x->written, ro->r.how);
	} else if (ro->r.oom_killed) {
		ro->status = KJ_SPEC_RUN_FAIL;
		snprintf(ro->reason, sizeof(ro->reason), "killed for memory: the limit is %lld bytes "
			 "(%s)", cfg->limits.mem_bytes, ro->r.how);
	} else if (!WIFEXITED(ro->r.status) || WEXITSTATUS(ro->r.status) != 0) {
		ro->status = KJ_SPEC_RUN_FAIL;
		ro->exit_only = WIFEXITED(ro->r.status);
		if (WIFSIGNALED(ro->r.status) && WTERMSIG(ro->r.status) == SIGKILL &&
		    cfg->limits.cpu_s > 0 && ro->r.cpu_s >= cfg->limits.cpu_s)
			snprintf(ro->reason, sizeof(ro->reason), "passed its CPU time limit of %g s (%s)",
				 cfg->limits.cpu_s, ro->r.how);
		else
			snprintf(ro->reason, sizeof(ro->reason), "%s", ro->r.how);
	}
	if (ro->r.pids_max) {
		size_t n = strlen(ro->reason);

		snprintf(ro->reason + n, sizeof(ro->reason) - n, "%sthe process limit (%ld) was "
			 "reached", n ? "; " : "", cfg->limits.procs);
		if (ro->status == KJ_SPEC_PASS)
			ro->status = KJ_SPEC_RUN_FAIL;
		ro->exit_only = 0;
	}
	return KJ_OK;
}

static json_t *run_json(const struct ctx *x, const struct run_out *ro)
{
	json_t *argv = json_array(), *j;
	size_t i;

	json_array_append_new(argv, json_string(x->s->executable));
	for (i = 0; i < x->cfgn->n_args; i++)
		json_array_append_new(argv, json_string(x->cfgn->args[i]));
	j = json_pack("{s:s, s:o, s:s, s:f, s:f, s:I, s:I, s:o, s:o}",
		      "status", kj_spec_status_name(ro->status), "argv", argv,
		      "how", ro->r.started ? (ro->r.timed_out ? "timed out" : ro->r.how) : "not started",
		      "duration_s", ro->r.wall_s, "cpu_s", ro->r.cpu_s,
		      "stdout_bytes", (json_int_t)ro->r.out.total,
		      "stderr_bytes", (json_int_t)ro->r.err.total,
		      "stdout_tail", sink_json(&ro->r.out), "stderr_tail", sink_json(&ro->r.err));
	if (j && ro->r.started && !ro->r.timed_out && WIFEXITED(ro->r.status))
		json_object_set_new(j, "exit_code", json_integer(WEXITSTATUS(ro->r.status)));
	if (j && ro->reason[0])
		json_object_set_new(j, "reason", json_string(ro->reason));
	return j;
}

/* --- timing ------------------------------------------------------------------------ */

static json_t *stats_json(double *v, size_t n)
{
	json_t *runs = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(runs, json_real(v[i]));
	kj__sort_doubles(v, n);
	return json_pack("{s:o, s:f, s:f, s:f, s:f, s:f}", "runs_s", runs,
			 "median_s", kj__quantile_sorted(v, n, 0.5), "min_s", v[0], "max_s",
			 v[n - 1], "q1_s", kj__quantile_sorted(v, n, 0.25), "q3_s",
			 kj__quantile_sorted(v, n, 0.75));
}

/* Warm-up and timed runs, the sides interleaved (ABBA) so that a drift of
 * the machine's speed falls on both. */
static int time_sides(struct ctx *x, struct side **sides, int n_sides, json_t **out)
{
	int warm = x->o->warmup, reps = x->o->repeats, i, k, rc = KJ_OK;
	double *t[3] = { calloc((size_t)reps, sizeof(double)), calloc((size_t)reps, sizeof(double)),
			 calloc((size_t)reps, sizeof(double)) };
	json_t *j = NULL;
	char bad[600] = "";

	if (!t[0] || !t[1] || !t[2]) {
		rc = kj_error_set(x->err, KJ_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < reps; i++)
		if ((rc = floor_once(x, sides[0], &t[2][i])) != KJ_OK)
			goto done;
	for (i = 0; i < warm + reps && !bad[0]; i++) {
		for (k = 0; k < n_sides && !bad[0]; k++) {
			int which = (i % 2) ? n_sides - 1 - k : k;
			struct run_out ro;

			rc = run_once(x, sides[which], &ro);
			if (rc != KJ_OK) {
				kj__program_release(&ro.r);
				goto done;
			}
			if (ro.status != KJ_SPEC_PASS)
				snprintf(bad, sizeof(bad), "a timed run of the %s failed: %s",
					 which ? "reference" : "candidate", ro.reason);
			else if (i >= warm)
				t[which][i - warm] = ro.r.wall_s;
			kj__program_release(&ro.r);
		}
	}
	j = json_pack("{s:i, s:i, s:s, s:o}", "warmup", warm, "repeats", reps, "clock",
		      "the judge's monotonic clock, from the sandbox's start to the exit",
		      "floor", stats_json(t[2], (size_t)reps));
	if (!j) {
		rc = kj_error_set(x->err, KJ_ENOMEM, "out of memory");
		goto done;
	}
	if (bad[0]) {
		json_object_set_new(j, "error", json_string(bad));
	} else {
		json_t *c = stats_json(t[0], (size_t)reps);

		json_object_set_new(j, "program", c);
		if (n_sides > 1) {
			json_t *b = stats_json(t[1], (size_t)reps);
			double mc = json_real_value(json_object_get(c, "median_s"));
			double mb = json_real_value(json_object_get(b, "median_s"));

			json_object_set_new(j, "baseline", b);
			if (mc > 0)
				json_object_set_new(j, "speedup", json_real(mb / mc));
		}
	}
done:
	free(t[0]);
	free(t[1]);
	free(t[2]);
	*out = j;
	return rc;
}

/* --- the whole verification ------------------------------------------------------------ */

static void side_release(struct side *sd)
{
	strv_free(sd->env);
	json_decref(sd->build);
	if (sd->quota)
		umount2(sd->tree, MNT_DETACH);
}

int kj_spec_verify(const struct kj_spec *s, const struct kj_spec_verify_opts *o,
		   enum kj_spec_status *status, json_t **out, struct kj_error *err)
{
	struct ctx x;
	struct side cand, ref;
	struct run_out ro;
	json_t *rec = NULL, *strats = NULL, *notes = NULL;
	const char *cname = o->config ? o->config : "correctness";
	enum kj_spec_status st = KJ_SPEC_PASS;
	int rc, ran = 0, first = 0, exit_declared = 0;
	size_t i, n_pass = 0;

	*out = NULL;
	*status = KJ_SPEC_ERROR;
	memset(&x, 0, sizeof(x));
	memset(&cand, 0, sizeof(cand));
	memset(&ref, 0, sizeof(ref));
	memset(&ro, 0, sizeof(ro));
	x.s = s;
	x.o = o;
	x.err = err;
	x.out_cap = o->output_bytes ? o->output_bytes : 16LL << 20;
	x.written = o->written_bytes ? o->written_bytes : 256LL << 20;
	x.copy_max = o->copy_bytes ? o->copy_bytes : 256LL << 20;
	x.build_timeout = o->build_timeout_s > 0 ? o->build_timeout_s : 600;
	if (!(x.cfgn = kj_spec_config_find(s, cname))) {
		char names[512] = "";
		size_t len = 0;

		for (i = 0; i < s->n_configs && len < sizeof(names); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
						s->configs[i].name);
		return kj_error_set(err, KJ_EINVAL, "'%s': no input configuration '%s' (it has: %s)",
				    s->file, cname, names);
	}
	for (i = 0; i < x.cfgn->input_files.n; i++) {
		struct stat in;

		if (lstat(x.cfgn->input_files.v[i].abs, &in) < 0)
			return kj_error_set(err, KJ_ENOENT, "'%s': run.input_configurations.%s."
					    "input_files[%zu]: '%s' does not exist", s->file, cname, i,
					    x.cfgn->input_files.v[i].rel);
	}
	cand.name = "cand";
	cand.candidate = o->candidate;
	ref.name = "ref";
	if (!(notes = json_object()))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (o->candidate) {
		struct extra e;
		char root[PATH_MAX];

		memset(&e, 0, sizeof(e));
		e.targets = targets_of(s);
		e.ignored = json_array();
		if (!realpath(o->candidate, root) || !kj__is_dir(root)) {
			json_decref(e.ignored);
			json_decref(notes);
			return kj_error_set(err, KJ_ENOENT, "candidate '%s' is not a directory",
					    o->candidate);
		}
		e.root = root;
		kj__each_entry(root, list_extra, &e);
		if (json_array_size(e.ignored))
			json_object_set(notes, "ignored_candidate_files", e.ignored);
		json_decref(e.ignored);
	}
	if ((rc = kj_attempt_open(&x.a, o->cfg, err)) != KJ_OK) {
		json_decref(notes);
		return rc;
	}
	if ((rc = prepare_side(&x, &cand, notes)) != KJ_OK)
		goto done;
	if (o->repeats > 0 && o->baseline && o->candidate &&
	    (rc = prepare_side(&x, &ref, notes)) != KJ_OK)
		goto done;
	strats = json_array();
	rec = json_pack("{s:s, s:s, s:s, s:s?, s:O, s:o}", "spec", s->file, "unique_id",
			s->unique_id, "config", cname, "candidate", o->candidate, "build", cand.build,
			"strategies", strats);
	if (!rec) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto done;
	}
	if (cand.build_status == KJ_SPEC_PASS) {
		if ((rc = run_once(&x, &cand, &ro)) != KJ_OK)
			goto done;
		ran = 1;
		json_object_set_new(rec, "run", run_json(&x, &ro));
	} else {
		json_object_set_new(rec, "run", json_pack("{s:s, s:s}", "status", "SKIP", "reason",
							  "the build did not pass"));
	}
	for (i = 0; i < s->n_strategies; i++) {
		const struct kj_spec_strategy *sg = &s->strategies[i];
		char detail[1024];
		const char *sst;
		struct kj_spec_outcome oc;

		oc.exited = ran && ro.r.started && !ro.r.timed_out && WIFEXITED(ro.r.status);
		oc.exit_code = oc.exited ? WEXITSTATUS(ro.r.status) : -1;
		oc.out = ran ? ro.r.out.buf : "";
		oc.out_len = ran ? ro.r.out.len : 0;
		oc.work_dir = ran ? cand.work : NULL;
		if (!ran && !sg->error) {
			sst = "SKIP";
			snprintf(detail, sizeof(detail), "not evaluated: the build did not pass");
		} else {
			if (kj_spec_strategy_eval(sg, &oc, &sst, detail, sizeof(detail)) != KJ_OK) {
				rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
				goto done;
			}
		}
		/* The first strategy, in the declared order, that failed or
		 * could not be evaluated gives the verdict, as ParBench's
		 * verifier returns it; the others are reported all the same. */
		if (!first && (!strcmp(sst, "ERROR") || !strcmp(sst, "FAIL")))
			first = !strcmp(sst, "ERROR") ? 'E' : 'F';
		exit_declared |= sg->type == KJ_STRAT_EXIT_CODE;
		n_pass += !strcmp(sst, "PASS");
		json_array_append_new(strats, json_pack("{s:s, s:s, s:o}", "type", sg->type_name,
							"status", sst, "detail",
							text_json(detail, strlen(detail))));
	}
	/* The order of precedence is ParBench's verifier's: the build; then
	 * the strategies, the first in the declared order that did not pass.
	 * The run comes between them only where it did not end by exiting
	 * (a timeout, a signal, a limit of the judge's), or where it exited
	 * with a status other than 0 and no exit_code strategy says which
	 * status is expected: an exit_code strategy that fails is the
	 * oracle's verdict (VERIFY_FAIL), as the original says. */
	if (cand.build_status != KJ_SPEC_PASS)
		st = cand.build_status;
	else if (ro.status != KJ_SPEC_PASS && !(exit_declared && ro.exit_only))
		st = ro.status;
	else if (first)
		st = first == 'E' ? KJ_SPEC_ERROR : KJ_SPEC_VERIFY_FAIL;
	else if (!s->n_strategies)
		st = KJ_SPEC_SKIP;
	else if (n_pass != s->n_strategies)
		st = KJ_SPEC_ERROR; /* a pass is every strategy's PASS, never the lack of a FAIL */
	if (st == KJ_SPEC_PASS && o->repeats > 0) {
		struct side *sides[2] = { &cand, &ref };
		json_t *tj = NULL;

		if (ref.build && ref.build_status != KJ_SPEC_PASS) {
			tj = json_pack("{s:s}", "error", "the reference's build did not pass");
		} else if ((rc = time_sides(&x, sides, ref.build ? 2 : 1, &tj)) != KJ_OK) {
			json_decref(tj);
			goto done;
		}
		if (ref.build)
			json_object_set(tj, "baseline_build", ref.build);
		json_object_set_new(rec, "timing", tj);
	}
	json_object_set_new(rec, "status", json_string(kj_spec_status_name(st)));
	json_object_set_new(rec, "limits", json_pack(
		"{s:f, s:f, s:I, s:I, s:I, s:I, s:f, s:b, s:b}",
		"run_timeout_s", s->run_timeout_s, "build_timeout_s", x.build_timeout,
		"memory_bytes", (json_int_t)o->cfg->limits.mem_bytes,
		"procs", (json_int_t)o->cfg->limits.procs,
		"stdout_bytes", (json_int_t)x.out_cap, "written_bytes", (json_int_t)x.written,
		"cpu_s", o->cfg->limits.cpu_s, "sandbox", o->cfg->sandbox,
		"written_bytes_quota", cand.quota));
	if (json_object_size(notes))
		json_object_set(rec, "notes", notes);
	/* Every piece above was added without a check of its own: a record
	 * that lost one to an allocation is the judge's failure, never a
	 * verdict with a part missing. */
	if (!json_is_string(json_object_get(rec, "status")) ||
	    !json_is_object(json_object_get(rec, "run")) ||
	    !json_is_object(json_object_get(rec, "limits")) ||
	    json_array_size(strats) != s->n_strategies ||
	    (o->repeats > 0 && st == KJ_SPEC_PASS && !json_object_get(rec, "timing"))) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto done;
	}
	*status = st;
	*out = rec;
	rec = NULL;
	rc = KJ_OK;
done:
	json_decref(rec);
	json_decref(notes);
	kj__program_release(&ro.r);
	side_release(&cand);
	side_release(&ref);
	kj_attempt_close(&x.a);
	return rc;
}
