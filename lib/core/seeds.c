/*
 * seeds.c - the judge's secret key and the seeds derived from it (see
 * kjudge/pipeline.h).
 *
 * The key is 32 random bytes in state_dir/seed-key, readable by the judge's
 * user only; no candidate can see it (the sandbox shows none of the judge's
 * files).  A seed is a hash of the key, the task file's SHA-256, the case
 * and the input set, so it is stable for the judge (golden outputs stay
 * cacheable) and unpredictable for anyone else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/pipeline.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/internal.h"

int kj_seed_key(const char *state_dir, uint64_t key[4], struct kj_error *err)
{
	char path[PATH_MAX + 16];
	int fd;
	ssize_t n;

	if (!state_dir || !*state_dir)
		return kj_error_set(err, KJ_EINVAL, "no state directory for the seed key "
				    "(set KJ_STATE_DIR or HOME)");
	if (kj__mkdirs(state_dir, 0700) < 0)
		return kj_error_set(err, KJ_EIO, "'%s': cannot create: %s", state_dir,
				    strerror(errno));
	if (snprintf(path, sizeof(path), "%s/seed-key", state_dir) >= (int)sizeof(path))
		return kj_error_set(err, KJ_EINVAL, "'%s': path too long", state_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* First use: draw the key and publish it with link(), which never
		 * replaces a key another judge published first. */
		char tmp[PATH_MAX + 32];
		uint64_t fresh[4];
		int wfd;

		if (getrandom(fresh, sizeof(fresh), 0) != (ssize_t)sizeof(fresh))
			return kj_error_set(err, KJ_EIO, "getrandom: %s", strerror(errno));
		snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
		wfd = mkstemp(tmp);
		if (wfd < 0)
			return kj_error_set(err, KJ_EIO, "'%s': %s", tmp, strerror(errno));
		if (write(wfd, fresh, sizeof(fresh)) != (ssize_t)sizeof(fresh) || fsync(wfd) < 0) {
			int e = errno;

			close(wfd);
			unlink(tmp);
			return kj_error_set(err, KJ_EIO, "'%s': %s", tmp, strerror(e));
		}
		close(wfd);
		if (link(tmp, path) < 0 && errno != EEXIST) {
			int e = errno;

			unlink(tmp);
			return kj_error_set(err, KJ_EIO, "'%s': %s", path, strerror(e));
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

static uint64_t splitmix(uint64_t x)
{
	return kj__mix64(x + 0x9e3779b97f4a7c15ull);
}

uint64_t kj_seed_derive(const uint64_t key[4], const char *task_sha256, int case_idx, int set)
{
	uint64_t h = splitmix(key[0]);
	const char *p;

	for (p = task_sha256; p && *p; p++)
		h = splitmix(h ^ (unsigned char)*p);
	h = splitmix(h ^ key[1] ^ ((uint64_t)(uint32_t)case_idx << 20));
	h = splitmix(h ^ key[2] ^ (uint64_t)(uint32_t)set);
	h = splitmix(h ^ key[3]);
	/* Positive and within 2^53: every Python and JSON reader keeps it exact. */
	return (h & ((1ull << 53) - 1)) | 1;
}

int kj_seed_run_key(const uint64_t key[4], const unsigned char *batch, uint64_t run_key[4],
		    struct kj_error *err)
{
	unsigned char nonce[16], out[32];

	if (batch)
		memcpy(nonce, batch, sizeof(nonce));
	else if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		return kj_error_set(err, KJ_EIO, "getrandom: %s", strerror(errno));
	/* No run key is ever made up: a failed HMAC fails the attempt. */
	if (kj__hmac_sha256(key, 4 * sizeof(uint64_t), nonce, sizeof(nonce), out) != 0)
		return kj_error_set(err, KJ_ENOMEM, "the run's key: HMAC-SHA256 failed (out of memory)");
	memcpy(run_key, out, 4 * sizeof(uint64_t));
	return KJ_OK;
}
