/*
 * sandbox.c - a sandbox's description, and its cgroup.
 *
 * See kjudge/sandbox.h for the theory of operation; the child's side of a
 * sandboxed start is view.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kjudge/sandbox.h"
#include "sandbox/sandbox_internal.h"
#include "sandbox/sysnr.h"

void kj_sandbox_init(struct kj_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
}

static int add_path(struct kj_sandbox *sb, const char **v, int *n, const char *path)
{
	if (!path)
		return KJ_EINVAL;
	if (*n >= KJ_SANDBOX_MAX_PATHS) {
		sb->overflow = 1;
		return KJ_ELIMIT;
	}
	v[(*n)++] = path;
	return KJ_OK;
}

/* Add path to sb->ro as `how` (KJ_SB_*), looking depth levels down. */
static int add_ro(struct kj_sandbox *sb, const char *path, int how, int depth)
{
	int rc = add_path(sb, sb->ro, &sb->n_ro, path);

	if (rc == KJ_OK) {
		sb->ro_how[sb->n_ro - 1] = (unsigned char)how;
		sb->ro_depth[sb->n_ro - 1] = (unsigned char)depth;
	}
	return rc;
}

int kj_sandbox_ro(struct kj_sandbox *sb, const char *path)
{
	return add_ro(sb, path, KJ_SB_BIND, 0);
}

int kj_sandbox_hide(struct kj_sandbox *sb, const char *dir)
{
	return add_ro(sb, dir, KJ_SB_HIDE, 0);
}

int kj_sandbox_mask(struct kj_sandbox *sb, const char *dir, int depth)
{
	if (depth < 0 || depth > KJ_SANDBOX_MASK_DEPTH)
		return KJ_EINVAL;
	return add_ro(sb, dir, KJ_SB_MASK, depth);
}

int kj_sandbox_rw(struct kj_sandbox *sb, const char *path)
{
	return kj_sandbox_rw_at(sb, path, NULL);
}

int kj_sandbox_rw_at(struct kj_sandbox *sb, const char *path, const char *inside)
{
	int rc = add_path(sb, sb->rw, &sb->n_rw, path);

	if (rc == KJ_OK)
		sb->rw_at[sb->n_rw - 1] = inside;
	if (rc == KJ_OK && inside && inside[0] != '/') {
		sb->overflow = 1; /* refused at spawn, never bound elsewhere */
		return KJ_EINVAL;
	}
	return rc;
}


/* --- cgroups -------------------------------------------------------------------- */

static long long read_ll(const char *path, const char *key)
{
	char buf[4096], *at;

	if (kj__read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!key)
		return strtoll(buf, NULL, 10);
	for (at = buf; (at = strstr(at, key)) != NULL; at++)
		if ((at == buf || at[-1] == '\n') && at[strlen(key)] == ' ')
			return strtoll(at + strlen(key) + 1, NULL, 10);
	return -1;
}

/* The judge's own v2 group, as a directory under root. */
static int v2_self(const char *root, char *buf, size_t size)
{
	char line[300];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, size, "%s%s", root, strcmp(line + 3, "/") ? line + 3 : "");
			found = 1;
		}
	fclose(f);
	return found ? 0 : -1;
}

/* Whether the space-separated list holds word (cgroup.subtree_control). */
static int lists(const char *list, const char *word)
{
	size_t w = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)) != NULL; p += w)
		if ((p == list || p[-1] == ' ') && (p[w] == '\0' || p[w] == ' ' || p[w] == '\n'))
			return 1;
	return 0;
}

/* Write text into dir/file.  On failure: KJ_ESANDBOX, err naming the file
 * and the reason, and *errnum (when not NULL) the errno. */
static int put(const char *dir, const char *file, const char *text, int *errnum,
	       struct kj_error *err)
{
	char p[600];
	int e;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	if (kj__write_text(p, text) == 0)
		return KJ_OK;
	e = errno;
	if (errnum)
		*errnum = e;
	return kj_error_set(err, KJ_ESANDBOX, "cgroup: cannot write '%s' to '%s': %s",
			    text, p, strerror(e));
}

/* The swap limit: written when the kernel accounts swap (the file exists),
 * else recorded as not in force. */
static int put_swap(struct kj_cgroup *cg, const char *file, const char *text,
		    struct kj_error *err)
{
	struct kj_error e;
	int errnum = 0, rc = put(cg->mem, file, text, &errnum, &e);

	if (rc == KJ_OK)
		cg->swap_limited = 1;
	else if (errnum != ENOENT) {
		if (err)
			*err = e;
		return rc;
	}
	return KJ_OK;
}

/*
 * cgroup v2: a child of the judge's own group, with the memory and pids
 * controllers where the judge's group hands them to its children (it does
 * not where it holds processes itself and is not the root: then there is
 * no cgroup limit, only the rlimits, and no group is made).
 */
static int attach_v2(struct kj_cgroup *cg, const struct kj_sandbox *sb,
		     const char *root, int pid, unsigned seq, struct kj_error *err)
{
	char base[400], p[600], ctl[256], v[32];
	int mem, pids, rc;

	if (v2_self(root, base, sizeof(base)) < 0)
		return KJ_OK;
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", base);
	(void)kj__write_text(p, "+memory +pids");
	if (kj__read_text(p, ctl, sizeof(ctl)) < 0)
		return KJ_OK;
	mem = lists(ctl, "memory");
	pids = lists(ctl, "pids");
	if (!mem && !pids)
		return KJ_OK;
	snprintf(cg->mem, sizeof(cg->mem), "%s/kjudge-%d-%u", base, (int)getpid(), seq);
	if (mkdir(cg->mem, 0700) < 0) {
		cg->mem[0] = '\0';
		return KJ_OK;
	}
	cg->version = 2;
	if (mem && sb->mem_bytes > 0) {
		snprintf(v, sizeof(v), "%lld", sb->mem_bytes);
		if ((rc = put(cg->mem, "memory.max", v, NULL, err)) != KJ_OK)
			return rc;
		cg->mem_bytes = sb->mem_bytes;
		if ((rc = put_swap(cg, "memory.swap.max", "0", err)) != KJ_OK)
			return rc;
	}
	if (pids && sb->nproc > 0) {
		snprintf(v, sizeof(v), "%ld", sb->nproc);
		if ((rc = put(cg->mem, "pids.max", v, NULL, err)) != KJ_OK)
			return rc;
		cg->pids_max = sb->nproc;
	}
	snprintf(v, sizeof(v), "%d", pid);
	return put(cg->mem, "cgroup.procs", v, NULL, err);
}

/* Whether dir is a v1 hierarchy we can see (its root has a tasks file). */
static int v1_hierarchy(const char *root, const char *name, char *dir, size_t size)
{
	char p[600];

	snprintf(dir, size, "%s/%s", root, name);
	snprintf(p, sizeof(p), "%s/tasks", dir);
	return access(p, F_OK) == 0;
}

/* The group kjudge-PID-SEQ in the v1 hierarchy `name`, into group: 1 when
 * it was made (cg->version is then 1), else 0 with group "". */
static int v1_group(struct kj_cgroup *cg, char *group, size_t size,
		    const char *root, const char *name, unsigned seq)
{
	char dir[450];

	group[0] = '\0';
	if (!v1_hierarchy(root, name, dir, sizeof(dir)))
		return 0;
	snprintf(group, size, "%s/kjudge-%d-%u", dir, (int)getpid(), seq);
	if (mkdir(group, 0700) < 0) {
		group[0] = '\0';
		return 0;
	}
	cg->version = 1;
	return 1;
}

/* cgroup v1: a group in the memory hierarchy and one in the pids
 * hierarchy, each where it can be made. */
static int attach_v1(struct kj_cgroup *cg, const struct kj_sandbox *sb,
		     const char *root, int pid, unsigned seq, struct kj_error *err)
{
	char v[32], n[32];
	int rc;

	snprintf(v, sizeof(v), "%d", pid);
	if (v1_group(cg, cg->mem, sizeof(cg->mem), root, "memory", seq)) {
		if (sb->mem_bytes > 0) {
			snprintf(n, sizeof(n), "%lld", sb->mem_bytes);
			if ((rc = put(cg->mem, "memory.limit_in_bytes", n, NULL, err)) != KJ_OK)
				return rc;
			cg->mem_bytes = sb->mem_bytes;
			if ((rc = put_swap(cg, "memory.memsw.limit_in_bytes", n, err)) != KJ_OK)
				return rc;
		}
		if ((rc = put(cg->mem, "cgroup.procs", v, NULL, err)) != KJ_OK)
			return rc;
	}
	if (v1_group(cg, cg->pids, sizeof(cg->pids), root, "pids", seq)) {
		if (sb->nproc > 0) {
			snprintf(n, sizeof(n), "%ld", sb->nproc);
			if ((rc = put(cg->pids, "pids.max", n, NULL, err)) != KJ_OK)
				return rc;
			cg->pids_max = sb->nproc;
		}
		if ((rc = put(cg->pids, "cgroup.procs", v, NULL, err)) != KJ_OK)
			return rc;
	}
	return KJ_OK;
}

int kj_cgroup_attach(struct kj_cgroup *cg, const struct kj_sandbox *sb, int pid,
		     struct kj_error *err)
{
	static unsigned seq;
	const char *root = sb->cgroup_root ? sb->cgroup_root : "/sys/fs/cgroup";
	char p[600];
	int rc;

	memset(cg, 0, sizeof(*cg));
	snprintf(p, sizeof(p), "%s/cgroup.controllers", root);
	rc = access(p, F_OK) == 0 ? attach_v2(cg, sb, root, pid, seq, err)
				  : attach_v1(cg, sb, root, pid, seq, err);
	seq++;
	if (rc != KJ_OK)
		kj_cgroup_release(cg);
	return rc;
}

int kj_cgroup_oom_killed(const struct kj_cgroup *cg)
{
	char p[600];

	if (cg->version == 2) {
		snprintf(p, sizeof(p), "%s/memory.events", cg->mem);
		return read_ll(p, "oom_kill") > 0;
	}
	if (cg->version == 1 && cg->mem[0]) {
		long long n;

		snprintf(p, sizeof(p), "%s/memory.oom_control", cg->mem);
		n = read_ll(p, "oom_kill");
		if (n >= 0)
			return n > 0;
		snprintf(p, sizeof(p), "%s/memory.failcnt", cg->mem);
		return read_ll(p, NULL) > 0;
	}
	return 0;
}

/* Kill every process listed in a group's cgroup.procs. */
static void kill_procs(const char *group)
{
	char p[600], buf[8192], *s, *end;

	snprintf(p, sizeof(p), "%s/cgroup.procs", group);
	if (kj__read_text(p, buf, sizeof(buf)) <= 0)
		return;
	for (s = buf; *s; s = end) {
		long pid = strtol(s, &end, 10);

		if (end == s)
			break;
		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
		while (*end == '\n')
			end++;
	}
}

static void remove_group(const char *group)
{
	int tries;

	if (!group[0])
		return;
	for (tries = 0; tries < 200; tries++) {
		char p[600];

		snprintf(p, sizeof(p), "%s/cgroup.kill", group);
		if (kj__write_text(p, "1") < 0)
			kill_procs(group);
		if (rmdir(group) == 0 || errno == ENOENT)
			return;
		usleep(10000);
	}
}

void kj_cgroup_release(struct kj_cgroup *cg)
{
	if (cg->version) {
		remove_group(cg->mem);
		remove_group(cg->pids);
	}
	memset(cg, 0, sizeof(*cg));
}

/* The smallest limit in `file` from top+path up to top itself; 0 none.
 * Values from 2^62 up are v1's "unlimited". */
static long long limit_up(const char *top, const char *path, const char *file)
{
	char dir[PATH_MAX], p[PATH_MAX + 64], buf[64];
	size_t top_len = strlen(top);
	long long best = 0;

	if (snprintf(dir, sizeof(dir), "%s%s", top, strcmp(path, "/") ? path : "") >=
	    (int)sizeof(dir))
		return 0;
	for (;;) {
		char *slash;

		snprintf(p, sizeof(p), "%s/%s", dir, file);
		if (kj__read_text(p, buf, sizeof(buf)) > 0 && buf[0] >= '0' && buf[0] <= '9') {
			long long v = strtoll(buf, NULL, 10);

			if (v > 0 && v < (1LL << 62) && (!best || v < best))
				best = v;
		}
		if (strlen(dir) <= top_len)
			break;
		slash = strrchr(dir + top_len, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return best;
}

long long kj_cgroup_mem_limit(const char *root, const char *self)
{
	char v2[PATH_MAX] = "", v1[PATH_MAX] = "", p[PATH_MAX], top[450];
	const char *line;

	if (!root)
		root = "/sys/fs/cgroup";
	/* Lines "ID:CONTROLLERS:PATH": v2's is "0::PATH", v1's memory one
	 * names the memory controller in its list. */
	for (line = self; line && *line;) {
		const char *end = strchr(line, '\n'), *c1 = strchr(line, ':'), *c2;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		c2 = c1 && c1 < line + len ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2 && (size_t)(line + len - c2 - 1) < sizeof(v2)) {
			size_t plen = (size_t)(line + len - c2 - 1);
			char ctl[256];

			snprintf(ctl, sizeof(ctl), ",%.*s,", (int)(c2 - c1 - 1), c1 + 1);
			if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1)
				snprintf(v2, sizeof(v2), "%.*s", (int)plen, c2 + 1);
			else if (strstr(ctl, ",memory,"))
				snprintf(v1, sizeof(v1), "%.*s", (int)plen, c2 + 1);
		}
		line = end ? end + 1 : NULL;
	}
	snprintf(p, sizeof(p), "%s/cgroup.controllers", root);
	if (v2[0] == '/' && access(p, F_OK) == 0)
		return limit_up(root, v2, "memory.max");
	if (v1[0] == '/' && v1_hierarchy(root, "memory", top, sizeof(top)))
		return limit_up(top, v1, "memory.limit_in_bytes");
	return 0;
}

static void sweep_group(const char *path, void *arg)
{
	(void)arg;
	remove_group(path);
}

int kj_cgroup_sweep(const char *root)
{
	char dir[450], base[400];
	int n = 0;

	if (!root)
		root = "/sys/fs/cgroup";
	if (v1_hierarchy(root, "memory", dir, sizeof(dir)))
		n += kj__sweep_dead_runs(dir, "kjudge-", sweep_group, NULL);
	if (v1_hierarchy(root, "pids", dir, sizeof(dir)))
		n += kj__sweep_dead_runs(dir, "kjudge-", sweep_group, NULL);
	snprintf(dir, sizeof(dir), "%s/cgroup.controllers", root);
	if (access(dir, F_OK) == 0 && v2_self(root, base, sizeof(base)) == 0)
		n += kj__sweep_dead_runs(base, "kjudge-", sweep_group, NULL);
	return n;
}


/* --- a description for a template's child ---------------------------------------- */

struct packer {
	char *buf;
	size_t len, cap;
	int nomem;
};

static void pk_put(struct packer *p, const char *s)
{
	size_t n = strlen(s) + 1;

	if (p->nomem)
		return;
	if (p->len + n > p->cap) {
		size_t cap = p->cap ? p->cap : 1024;
		char *b;

		while (cap < p->len + n)
			cap *= 2;
		if (!(b = realloc(p->buf, cap))) {
			p->nomem = 1;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
}

static void pk_num(struct packer *p, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	pk_put(p, num);
}

static void put_ll(struct packer *p, const char *key, long long v)
{
	pk_put(p, key);
	pk_num(p, v);
}

char *kj__sandbox_pack(const struct kj_sandbox *sb, size_t *len)
{
	struct packer p = { NULL, 0, 0, 0 };
	int i;

	pk_put(&p, "root");
	pk_put(&p, sb->root_dir ? sb->root_dir : "");
	for (i = 0; i < sb->n_ro; i++) {
		put_ll(&p, "ro", sb->ro_how[i]);
		pk_num(&p, sb->ro_depth[i]);
		pk_put(&p, sb->ro[i]);
	}
	for (i = 0; i < sb->n_rw; i++) {
		pk_put(&p, sb->rw_at[i] ? "rwat" : "rw");
		pk_put(&p, sb->rw[i]);
		if (sb->rw_at[i])
			pk_put(&p, sb->rw_at[i]);
	}
	put_ll(&p, "gpu", sb->gpu);
	put_ll(&p, "links", sb->keep_links);
	/* RLIMIT_CPU takes whole seconds (view.c rounds the same way). */
	put_ll(&p, "cpu", sb->cpu_s > 0 ? (long long)sb->cpu_s : 0);
	put_ll(&p, "fsize", sb->fsize_bytes);
	put_ll(&p, "nproc", sb->nproc);
	put_ll(&p, "nofile", sb->nofile);
	put_ll(&p, "tmp", sb->tmp_bytes);
	pk_put(&p, "end");
	if (p.nomem) {
		free(p.buf);
		return NULL;
	}
	*len = p.len;
	return p.buf;
}
