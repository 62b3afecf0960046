/*
 * extcache.c - torch extensions (torch.utils.cpp_extension's load_inline
 * and load) built once, by the judge, and kept by the content of what
 * determines them (see runner_internal.h for the interface).
 *
 * Theory of operation.
 *
 *   candidate's worker (sandbox)           judge                      builder (a sandbox of its own)
 *   load_inline(name, sources, flags)
 *     torch writes main.cpp, cuda.cu,
 *     build.ninja in /kjudge/ext/NAME
 *     (the worker's wrapper of torch's
 *     _run_ninja_build:)
 *     {"nonce", "build": NAME}  ------->   reads NAME's inputs from the
 *                                          candidate's directory (build.ninja
 *                                          and sources only, no outputs),
 *                                          key = SHA-256(toolchain, NAME,
 *                                          every input's name and bytes)
 *                                          x-KEY in the cache, checked?
 *                                            no: inputs into a fresh
 *                                            stage-PID-XXXXXX  ---------->  the stage, alone writable,
 *                                                                           at /kjudge/ext/NAME: ninja -v
 *                                          <-------------------------------  {"rc", "output"}
 *                                            every file hashed into a
 *                                            manifest, made read-only,
 *                                            renamed to x-KEY
 *                                          the entry's files copied into
 *     {"nonce", "built": true}  <-------   the candidate's directory
 *     torch imports NAME.so
 *
 * Threat model.  The candidate's own code runs before and around its
 * build: it can write anything into its build directory, send any build
 * request at any time of a request it is serving, and read everything its
 * process holds.  What it must never do is put bytes into an entry that
 * another candidate, or a later run of its own (benchmark after verify,
 * eval's layers), will load in place of what building that entry's inputs
 * gives.  So:
 *   - only the judge writes the cache, which no sandbox ever shows; a
 *     candidate gets a copy of an entry's files in its own directory,
 *     never the entry (nor a hard link to one: it owns what the judge owns);
 *   - an entry is what a build in a sandbox of its own made from exactly
 *     the files its key hashes: the builder sees the system and the Python
 *     installation read-only and nothing of any run but its stage, which is
 *     new and empty but for those inputs (no object, library or log of an
 *     earlier build that ninja could take as up to date), and which it can
 *     write alone; a write anywhere else fails (read-only, or a private
 *     tmpfs thrown away with it), and whatever build.ninja says, what it
 *     runs, it runs there.  A build.ninja that is not torch's gives an
 *     entry no honest load_inline call asks for: its key is its own bytes;
 *   - the key covers everything that decides the build: the toolchain (the
 *     worker's Python, torch, Triton, CUDA and device, from its hello,
 *     answered before any code of the candidate ran; the compiler, nvcc
 *     and ninja by path, size and time), the extension's name, build.ninja
 *     (flags, include paths, the device's architectures, the build
 *     directory) and every source file, byte for byte;
 *   - the judge writes the manifest (each file's size and SHA-256) after
 *     the build and checks every file against it each time the entry is
 *     used: a damaged or changed entry is removed and built again, never
 *     copied; anything in a stage but regular files (a link, a directory,
 *     a FIFO) and the entry is not made.
 * A build whose output depends on more than its inputs (the time, chance:
 * __TIME__, a flag that runs $RANDOM) is kept as it first came out, and
 * whoever sends the same inputs, byte for byte, gets that one: as any
 * build cache, and never another key's.
 * What a candidate can still do: build what it likes for itself (a build
 * that the judge will not make, or one it makes in its own process anyway,
 * is its own), and ask for builds: at most KJ__EXT_BUILDS_MAX a run, all
 * of them within the candidate's timeout (torch.c), past which it builds
 * in its own process, against its own requests' time.
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

#include "kjudge/proc.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/locate.h"
#include "base/vec.h"
#include "runner/runner_internal.h"

/* Set when an allocation failed while serving a request: the judge's own
 * failure, which no answer may hide (a build declined for want of memory
 * would end in the candidate's own build, and perhaps a pass).  The judge
 * serves one request at a time, from one thread. */
static int oom;

/* One input: build.ninja or a source file of the build directory. */
struct input {
	char name[256];
	char *data;
	size_t len;
};

struct inputs {
	struct input v[KJ__EXT_INPUTS_MAX];
	int n;
	size_t bytes;
};

static void inputs_free(struct inputs *in)
{
	int i;

	for (i = 0; i < in->n; i++)
		free(in->v[i].data);
	in->n = 0;
}

/* Whether a file of the build directory is an input: build.ninja, or a
 * source or header by its extension.  Outputs (objects, the library,
 * ninja's logs, torch's lock) never are: a stage holds no earlier build. */
static int input_name(const char *name)
{
	static const char *const ext[] = { ".cpp", ".cc", ".cxx", ".c", ".cu", ".cuh",
		".h", ".hpp", ".hh", ".hxx", ".inc", ".inl" };
	const char *dot = strrchr(name, '.');
	size_t i;

	if (!strcmp(name, "build.ninja"))
		return 1;
	if (!dot || dot == name)
		return 0;
	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (!strcmp(dot, ext[i]))
			return 1;
	return 0;
}

int kj__ext_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 128 || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_' || name[i] == '-' ||
		      name[i] == '.'))
			return 0;
	return 1;
}

/* The whole of a regular file opened as fd, at most max bytes: a new
 * buffer, or NULL (errno: EFBIG past max, EINVAL not a regular file). */
static char *read_fd(int fd, size_t max, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	if ((unsigned long long)st.st_size > max) {
		errno = EFBIG;
		return NULL;
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		oom = 1;
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	*len = got;
	return buf;
}

/* A directory stream of its own over the directory open as fd (fd stays
 * the caller's); NULL with errno, nothing left open. */
static DIR *dir_of(int fd)
{
	int d = dup(fd);
	DIR *dir = d < 0 ? NULL : fdopendir(d);

	if (!dir) {
		oom |= errno == ENOMEM;
		if (d >= 0)
			close(d);
	}
	return dir;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct input *)a)->name, ((const struct input *)b)->name);
}

/*
 * The inputs of the build directory NAME under the candidate's root
 * (host): opened without following a link, each a regular file, never
 * blocking (the candidate could have put a FIFO there).  0, or -1 with
 * why filled (not built: the candidate's own build goes on).
 */
static int read_inputs(const char *host, const char *name, struct inputs *in, char *why,
		       size_t wsize)
{
	int root = -1, dfd = -1, rc = -1, i;
	DIR *d = NULL;
	struct dirent *e;

	in->n = 0;
	in->bytes = 0;
	if ((root = open(host, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (dfd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, wsize, "no build directory '%s' (%s)", name, strerror(errno));
		goto out;
	}
	if (!(d = dir_of(dfd))) {
		snprintf(why, wsize, "cannot read the build directory: %s", strerror(errno));
		goto out;
	}
	while ((e = readdir(d)) != NULL) {
		struct input *x;
		int fd;

		if (!input_name(e->d_name))
			continue;
		if (in->n == KJ__EXT_INPUTS_MAX || strlen(e->d_name) >= sizeof(x->name)) {
			snprintf(why, wsize, "more than %d inputs, or a name too long",
				 KJ__EXT_INPUTS_MAX);
			goto out;
		}
		x = &in->v[in->n];
		fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		x->data = fd < 0 ? NULL : read_fd(fd, KJ__EXT_INPUT_BYTES - in->bytes, &x->len);
		if (fd >= 0)
			close(fd);
		if (!x->data) {
			snprintf(why, wsize, "'%s': not a regular file of at most %d MiB in all (%s)",
				 e->d_name, KJ__EXT_INPUT_BYTES >> 20, strerror(errno));
			goto out;
		}
		snprintf(x->name, sizeof(x->name), "%s", e->d_name);
		in->bytes += x->len;
		in->n++;
	}
	qsort(in->v, (size_t)in->n, sizeof(in->v[0]), by_name);
	rc = 0;
	for (i = 0; i < in->n && rc == 0; i++)
		if (!strcmp(in->v[i].name, "build.ninja"))
			rc = 1;
	if (rc == 0)
		snprintf(why, wsize, "no build.ninja in '%s'", name);
	rc = rc == 1 ? 0 : -1;
out:
	if (d)
		closedir(d);
	if (dfd >= 0)
		close(dfd);
	if (root >= 0)
		close(root);
	if (rc < 0)
		inputs_free(in);
	return rc;
}

/* The key: SHA-256 of the toolchain, the name and every input, each
 * framed by its name and length so that no two sets of inputs hash the
 * same text.  0, or -1 out of memory. */
static int make_key(const char *identity, const char *name, const struct inputs *in,
		    char key[KJ_SHA256_HEX])
{
	size_t cap = strlen(identity) + strlen(name) + 64 + in->bytes + (size_t)in->n * 300, at;
	char *buf = malloc(cap);
	int i, rc;

	if (!buf)
		return -1;
	at = (size_t)snprintf(buf, cap, "kjudge-ext-1\n%s\n%s\n", identity, name);
	for (i = 0; i < in->n; i++) {
		at += (size_t)snprintf(buf + at, cap - at, "%s\n%zu\n", in->v[i].name, in->v[i].len);
		memcpy(buf + at, in->v[i].data, in->v[i].len);
		at += in->v[i].len;
	}
	rc = kj__sha256_hex(buf, at, key);
	free(buf);
	return rc;
}

/* SHA-256 of a regular file opened as fd (whole, at most 1 GiB). */
static int sha_fd(int fd, char hex[KJ_SHA256_HEX], long long *size)
{
	size_t len = 0;
	char *buf = read_fd(fd, 1u << 30, &len);
	int rc;

	if (!buf)
		return -1;
	rc = kj__sha256_hex(buf, len, hex);
	free(buf);
	*size = (long long)len;
	oom |= rc < 0;
	return rc;
}

/* Removal of an entry or a stage the judge made read-only. */
static void remove_sealed(const char *path)
{
	chmod(path, 0700);
	kj__rm_rf(path);
}

#define MANIFEST ".manifest"

/*
 * Whether the entry at path is whole: its manifest (the judge's) names
 * every file it holds, each a regular file of the size and SHA-256 it
 * says, and nothing else is there.  1 whole, 0 damaged, -1 not there, -2
 * not known for want of memory (oom).
 */
static int entry_whole(const char *path)
{
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int mfd, ok = 0, listed = 0, found = 0;
	size_t len = 0;
	char *man, *line, *save = NULL;
	DIR *d;
	struct dirent *e;

	if (dfd < 0)
		return errno == ENOENT ? -1 : 0;
	mfd = openat(dfd, MANIFEST, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	man = mfd < 0 ? NULL : read_fd(mfd, 1u << 20, &len);
	if (mfd >= 0)
		close(mfd);
	if (!man) {
		close(dfd);
		return oom ? -2 : 0;
	}
	man[len] = '\0';
	ok = 1;
	for (line = strtok_r(man, "\n", &save); line && ok; line = strtok_r(NULL, "\n", &save)) {
		char want[KJ_SHA256_HEX], got[KJ_SHA256_HEX], fname[256];
		long long size = -1, have = -2;
		int fd;

		if (sscanf(line, "%64s %lld %255s", want, &size, fname) != 3 ||
		    !kj__ext_name_ok(fname)) {
			ok = 0;
			break;
		}
		fd = openat(dfd, fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		ok = fd >= 0 && sha_fd(fd, got, &have) == 0 && have == size && !strcmp(got, want);
		if (fd >= 0)
			close(fd);
		listed++;
	}
	free(man);
	/* Nothing but the manifest and what it lists. */
	d = ok ? dir_of(dfd) : NULL;
	if (ok && !d)
		ok = 0;
	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			found++;
	if (d)
		closedir(d);
	close(dfd);
	if (oom)
		return -2;
	return ok && listed > 0 && found == listed + 1;
}

/*
 * Seal a stage the builder left: every entry a regular file (else 0 with
 * why), each hashed into the manifest, the files and the directory made
 * read-only.  1 sealed, 0 not an entry, -1 the judge's failure (errno).
 */
static int seal(const char *stage, char *why, size_t wsize)
{
	int dfd = open(stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), mfd, rc = -1;
	DIR *d = NULL;
	struct dirent *e;
	char *man = NULL;
	size_t len = 0, cap = 0;
	int files = 0;

	if (dfd < 0 || !(d = dir_of(dfd)))
		goto out;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		char hex[KJ_SHA256_HEX];
		long long size;
		int fd;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto out;
		if (!S_ISREG(st.st_mode) || !kj__ext_name_ok(e->d_name) ||
		    !strcmp(e->d_name, MANIFEST)) {
			snprintf(why, wsize, "the build left '%.100s', which is not a regular file "
				 "of a plain name", e->d_name);
			rc = 0;
			goto out;
		}
		fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || sha_fd(fd, hex, &size) < 0) {
			if (fd >= 0)
				close(fd);
			goto out;
		}
		close(fd);
		if (KJ__GROW(man, cap, len + 400) != KJ_OK) {
			oom = 1;
			goto out;
		}
		len += (size_t)snprintf(man + len, cap - len, "%s %lld %s\n", hex, size, e->d_name);
		if (fchmodat(dfd, e->d_name, 0444, 0) < 0)
			goto out;
		files++;
	}
	if (!files) {
		snprintf(why, wsize, "the build left nothing");
		rc = 0;
		goto out;
	}
	mfd = openat(dfd, MANIFEST, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (mfd < 0 || kj__write_full(mfd, man, len) < 0 || fsync(mfd) < 0) {
		if (mfd >= 0)
			close(mfd);
		goto out;
	}
	close(mfd);
	rc = fchmod(dfd, 0555) < 0 ? -1 : 1;
out:
	if (d)
		closedir(d);
	if (dfd >= 0)
		close(dfd);
	free(man);
	return rc;
}

/*
 * Copy the entry's files (all but the manifest) into the candidate's
 * build directory NAME under host: each written to a new file of its own
 * (O_EXCL, never through a link the candidate left) and renamed over the
 * name, with the entry's modification time, so that a later ninja of its
 * own sees them up to date.  0, or -1 with why filled.
 */
static int copy_out(const char *entry, const char *host, const char *name, char *why,
		    size_t wsize)
{
	int src = -1, root = -1, dst = -1, rc = -1;
	DIR *d = NULL;
	struct dirent *e;
	static unsigned seq;

	if ((src = open(entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (root = open(host, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (dst = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    !(d = dir_of(src))) {
		snprintf(why, wsize, "cannot open the entry or the build directory: %s",
			 strerror(errno));
		goto out;
	}
	while ((e = readdir(d)) != NULL) {
		char tmp[64];
		struct stat st;
		struct timespec ts[2];
		size_t len = 0;
		char *buf;
		int in, out, bad;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, MANIFEST))
			continue;
		in = openat(src, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		buf = in < 0 ? NULL : read_fd(in, 1u << 30, &len);
		if (in >= 0 && fstat(in, &st) < 0) {
			free(buf);
			buf = NULL;
		}
		if (in >= 0)
			close(in);
		if (!buf) {
			snprintf(why, wsize, "cannot read '%s' of the entry: %s", e->d_name,
				 strerror(errno));
			goto out;
		}
		snprintf(tmp, sizeof(tmp), ".kjudge-%ld-%u", (long)getpid(), seq++);
		out = openat(dst, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
		ts[0] = st.st_atim;
		ts[1] = st.st_mtim;
		bad = out < 0 || kj__write_full(out, buf, len) < 0 || futimens(out, ts) < 0;
		free(buf);
		if (out >= 0)
			close(out);
		if (bad || renameat(dst, tmp, dst, e->d_name) < 0) {
			snprintf(why, wsize, "cannot write '%s' into the build directory: %s",
				 e->d_name, strerror(errno));
			unlinkat(dst, tmp, 0);
			goto out;
		}
	}
	rc = 0;
out:
	if (d)
		closedir(d);
	if (dst >= 0)
		close(dst);
	if (root >= 0)
		close(root);
	if (src >= 0)
		close(src);
	return rc;
}

/* Write the inputs into the new stage (the builder's only writable
 * directory).  0, or -1 with errno. */
static int stage_inputs(const char *stage, const struct inputs *in)
{
	int dfd = open(stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), i, rc = 0;

	if (dfd < 0)
		return -1;
	for (i = 0; i < in->n && rc == 0; i++) {
		int fd = openat(dfd, in->v[i].name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				O_CLOEXEC, 0644);

		rc = fd < 0 || kj__write_full(fd, in->v[i].data, in->v[i].len) < 0 ? -1 : 0;
		if (fd >= 0)
			close(fd);
	}
	close(dfd);
	return rc;
}

/*
 * Build the inputs in a stage of the cache's directory with the builder
 * (the worker's "build" request, in a sandbox whose one writable path is
 * the stage, seen at the build directory's place) and publish the stage
 * as the entry at `entry`.  KJ_OK with res->why set when nothing was
 * published (the build failed, or left what no entry holds); a code for
 * the judge's own failures.
 */
static int build(const struct kj__ext_ctx *c, const char *name, const struct inputs *in,
		 const char *entry, struct kj__ext_result *res, struct kj_error *err)
{
	char stage[PATH_MAX], inside[PATH_MAX];
	struct kj_sandbox sb;
	struct kj_proc p;
	struct kj_error e;
	json_t *rep = NULL;
	int rc, sealed;

	if (snprintf(stage, sizeof(stage), "%s/stage-%ld-XXXXXX", c->cache_root,
		     (long)getpid()) >= (int)sizeof(stage) ||
	    snprintf(inside, sizeof(inside), "%s/%s", KJ__EXT_INSIDE, name) >= (int)sizeof(inside)) {
		snprintf(res->why, sizeof(res->why), "path too long");
		return KJ_OK;
	}
	if (!mkdtemp(stage) || stage_inputs(stage, in) < 0) {
		snprintf(res->why, sizeof(res->why), "cannot make a stage in '%s': %s",
			 c->cache_root, strerror(errno));
		if (stage[strlen(stage) - 1] != 'X')
			kj__rm_rf(stage);
		return KJ_OK;
	}
	sb = *c->view;
	sb.n_rw = 0;
	sb.gpu = 0;
	sb.root_dir = c->root_dir;
	if (kj_sandbox_rw_at(&sb, stage, inside) != KJ_OK) {
		kj__rm_rf(stage);
		return kj_error_set(err, KJ_ESANDBOX, "the builder's sandbox cannot hold its stage");
	}
	kj_proc_init(&p);
	res->ran = 1;
	rc = kj_proc_spawn_in(&p, c->argv, c->envp, inside, &sb, &e);
	if (rc == KJ_OK)
		rc = kj_proc_request(&p, json_pack("{s:s, s:s, s:f}", "op", "build", "dir", inside,
						   "timeout", c->timeout_s),
				     c->timeout_s + 5, &rep, &e);
	kj_proc_release(&p, 1.0);
	if (rc == KJ_EINTR || rc == KJ_ENOMEM) {
		json_decref(rep);
		kj__rm_rf(stage);
		return kj_error_set(err, rc, "%s", e.msg);
	}
	if (rc == KJ_ETIMEDOUT) {
		/* Its time is up (the builder ends ninja at its timeout; this is
		 * a build that kept the builder past it too). */
		res->failed = 1;
		snprintf(res->why, sizeof(res->why), "the build did not finish within %.0f s",
			 c->timeout_s);
		kj__rm_rf(stage);
		return KJ_OK;
	}
	if (rc != KJ_OK || !json_is_true(json_object_get(rep, "ok")) ||
	    !json_is_integer(json_object_get(rep, "rc"))) {
		/* The builder did not run the build (a sandbox that cannot be
		 * set up, a worker that died): the machine's, not the
		 * candidate's; its own build goes on. */
		snprintf(res->why, sizeof(res->why), "the judge's builder failed: %.400s",
			 rc != KJ_OK ? e.msg : json_string_value(json_object_get(rep, "error_msg"))
			 ? json_string_value(json_object_get(rep, "error_msg")) : "");
		json_decref(rep);
		kj__rm_rf(stage);
		return KJ_OK;
	}
	if (json_integer_value(json_object_get(rep, "rc")) != 0) {
		/* ninja failed: the build's own failure (a compile error, a
		 * write outside its stage, its time up), as the candidate's
		 * own ninja would have failed. */
		const char *out = json_string_value(json_object_get(rep, "output"));

		res->failed = 1;
		snprintf(res->why, sizeof(res->why), "%s", out ? out : "");
		json_decref(rep);
		kj__rm_rf(stage);
		return KJ_OK;
	}
	json_decref(rep);
	sealed = seal(stage, res->why, sizeof(res->why));
	if (sealed <= 0) {
		if (sealed < 0)
			snprintf(res->why, sizeof(res->why), "cannot seal the build: %s",
				 strerror(errno));
		remove_sealed(stage);
		return KJ_OK;
	}
	if (rename(stage, entry) < 0) {
		/* Another judge published the same entry first: its own build of
		 * the same inputs, checked below like any other. */
		int gone = errno == EEXIST || errno == ENOTEMPTY;

		if (!gone)
			snprintf(res->why, sizeof(res->why), "cannot publish the build: %s",
				 strerror(errno));
		remove_sealed(stage);
	}
	return KJ_OK;
}

int kj__ext_serve(const struct kj__ext_ctx *c, const char *name, struct kj__ext_result *res,
		  struct kj_error *err)
{
	struct inputs *in;
	char key[KJ_SHA256_HEX], entry[PATH_MAX];
	int whole, rc = KJ_OK;

	memset(res, 0, sizeof(*res));
	oom = 0;
	if (!kj__ext_name_ok(name)) {
		snprintf(res->why, sizeof(res->why), "not a name of a build directory");
		return KJ_OK;
	}
	if (!(in = calloc(1, sizeof(*in))))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (read_inputs(c->host, name, in, res->why, sizeof(res->why)) < 0)
		goto out;
	if (make_key(c->identity, name, in, key) < 0) {
		rc = kj_error_set(err, KJ_ENOMEM, "cannot hash a build's inputs (out of memory)");
		goto out;
	}
	snprintf(res->key, sizeof(res->key), "%s", key);
	if (snprintf(entry, sizeof(entry), "%s/x-%s", c->cache_root, key) >= (int)sizeof(entry)) {
		snprintf(res->why, sizeof(res->why), "path too long");
		goto out;
	}
	whole = entry_whole(entry);
	if (whole == -2)
		goto out;
	if (whole == 0) {
		/* Damaged or changed since the judge sealed it: never used. */
		res->damaged = 1;
		remove_sealed(entry);
	}
	if (whole != 1) {
		rc = build(c, name, in, entry, res, err);
		if (rc != KJ_OK || res->failed || entry_whole(entry) != 1) {
			if (rc == KJ_OK && !res->why[0])
				snprintf(res->why, sizeof(res->why), "the entry is not whole");
			goto out;
		}
	} else {
		res->cached = 1;
	}
	if (copy_out(entry, c->host, name, res->why, sizeof(res->why)) == 0)
		res->built = 1;
out:
	inputs_free(in);
	free(in);
	if (oom && rc == KJ_OK) {
		res->built = 0;
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory serving a build");
	}
	return rc;
}

/* "path size mtime" of the program name found in path (PATH's way), or
 * "-" where there is none. */
static void program_id(const char *name, const char *path, char *out, size_t size)
{
	char found[PATH_MAX], real[PATH_MAX];
	struct stat st;

	if (kj__find_in_path(name, path, found, sizeof(found)) < 0 || !realpath(found, real) ||
	    stat(real, &st) < 0) {
		snprintf(out, size, "%s:-", name);
		return;
	}
	snprintf(out, size, "%s:%s:%lld:%lld.%09ld", name, real, (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

int kj__ext_identity(const json_t *hello, const char *path, const char *cuda_home, char *out,
		     size_t size)
{
	static const char *const keys[] = { "python", "torch", "triton", "cuda", "device_name" };
	char cxx[PATH_MAX + 100], nvcc[PATH_MAX + 100], ninja[PATH_MAX + 100], cpath[PATH_MAX];
	size_t i, at = 0;
	int n;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(hello, keys[i]);

		n = snprintf(out + at, size - at, "%s=%s\n", keys[i],
			     json_is_string(v) ? json_string_value(v) : "-");
		if (n < 0 || (size_t)n >= size - at)
			return -1;
		at += (size_t)n;
	}
	program_id("c++", path, cxx, sizeof(cxx));
	program_id("ninja", path, ninja, sizeof(ninja));
	if (cuda_home && cuda_home[0] &&
	    snprintf(cpath, sizeof(cpath), "%s/bin", cuda_home) < (int)sizeof(cpath))
		program_id("nvcc", cpath, nvcc, sizeof(nvcc));
	else
		program_id("nvcc", path, nvcc, sizeof(nvcc));
	n = snprintf(out + at, size - at, "%s\n%s\n%s\n", cxx, ninja, nvcc);
	return n < 0 || (size_t)n >= size - at ? -1 : 0;
}
