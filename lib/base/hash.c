/*
 * hash.c - SHA-256 through libcrypto, and the block checksum (see hash.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

/* xxHash from Debian's libxxhash-dev, compiled in (no run-time library). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/fs.h"
#include "base/hash.h"
#include "base/internal.h"

static void to_hex(const unsigned char *d, size_t n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * n] = '\0';
}

/*
 * A digest libcrypto could not make (it allocates a context, and more on its
 * first use) is an error, never a sum of zeros: every cache key would be the
 * same one, and a zero signature would be one that anyone can write.
 */
int kj__sha256_hex(const void *p, size_t n, char hex[KJ_SHA256_HEX])
{
	unsigned char d[32];
	unsigned int len = 0;

	if (!EVP_Digest(p, n, d, &len, EVP_sha256(), NULL) || len != 32) {
		hex[0] = '\0';
		return -1;
	}
	to_hex(d, 32, hex);
	return 0;
}

int kj__sha256_file(const char *path, char hex[KJ_SHA256_HEX], struct kj_error *err)
{
	unsigned char buf[1 << 16], d[32];
	unsigned int len = 0;
	EVP_MD_CTX *ctx;
	ssize_t n;
	int fd = kj__open_regular(path, 0, err);

	if (fd < 0)
		return fd;
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		close(fd);
		return kj_error_set(err, KJ_ENOMEM, "'%s': cannot start a hash", path);
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			EVP_MD_CTX_free(ctx);
			close(fd);
			return kj_error_set(err, KJ_EIO, "'%s': %s", path, strerror(e));
		}
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			EVP_MD_CTX_free(ctx);
			close(fd);
			return kj_error_set(err, KJ_ENOMEM, "'%s': cannot hash", path);
		}
	}
	close(fd);
	if (!EVP_DigestFinal_ex(ctx, d, &len) || len != 32) {
		EVP_MD_CTX_free(ctx);
		return kj_error_set(err, KJ_EIO, "'%s': cannot finish a hash", path);
	}
	EVP_MD_CTX_free(ctx);
	to_hex(d, 32, hex);
	return KJ_OK;
}

int kj__hmac_sha256(const void *key, size_t klen, const void *p, size_t n, unsigned char d[32])
{
	unsigned int len = 0;

	return HMAC(EVP_sha256(), key, (int)klen, p, n, d, &len) && len == 32 ? 0 : -1;
}

int kj__hmac_sha256_hex(const void *key, size_t klen, const void *p, size_t n,
			char hex[KJ_SHA256_HEX])
{
	unsigned char d[32];

	if (kj__hmac_sha256(key, klen, p, n, d) != 0) {
		hex[0] = '\0';
		return -1;
	}
	to_hex(d, 32, hex);
	return 0;
}

/* --- the block checksum ----------------------------------------------------------- */

#define BLOCK ((size_t)1 << 20)

struct sum_job {
	const unsigned char *p;
	size_t n, blocks;
	uint64_t *out;         /* one hash per block */
	atomic_size_t next;
};

static void *sum_worker(void *arg)
{
	struct sum_job *j = arg;
	size_t b;

	while ((b = atomic_fetch_add(&j->next, 1)) < j->blocks) {
		size_t off = b * BLOCK, len = j->n - off < BLOCK ? j->n - off : BLOCK;

		j->out[b] = XXH3_64bits_withSeed(j->p + off, len, (XXH64_hash_t)b);
	}
	return NULL;
}

int kj__checksum(const void *p, size_t n, int threads, uint64_t *out)
{
	struct sum_job j;
	pthread_t tid[16];
	uint64_t small[64], sum;
	int t, started = 0;

	j.p = p;
	j.n = n;
	j.blocks = (n + BLOCK - 1) / BLOCK;
	atomic_init(&j.next, 0);
	/* One block: the hash of it, seeded like the others. */
	if (j.blocks <= 1) {
		*out = XXH3_64bits_withSeed(p, n, 0) ^ (uint64_t)n;
		return 0;
	}
	j.out = j.blocks <= 64 ? small : malloc(j.blocks * sizeof(uint64_t));
	if (!j.out)
		return -1;
	if (threads <= 0)
		threads = kj__online_cpus();
	if (threads > 16)
		threads = 16;
	if ((size_t)threads > j.blocks / 8)
		threads = (int)(j.blocks / 8) + 1;
	for (t = 1; t < threads; t++)
		if (pthread_create(&tid[started], NULL, sum_worker, &j) == 0)
			started++;
	sum_worker(&j);
	for (t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	sum = XXH3_64bits(j.out, j.blocks * sizeof(uint64_t)) ^ (uint64_t)n;
	if (j.out != small)
		free(j.out);
	*out = sum;
	return 0;
}

int kj__checksum_file(const char *path, uint64_t *sum, long long *size, int threads,
		      struct kj_error *err)
{
	struct stat st;
	void *m;
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", path,
				    strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return kj_error_set(err, KJ_EIO, "'%s': not a regular file", path);
	}
	*size = (long long)st.st_size;
	if (st.st_size == 0) {
		close(fd);
		return kj__checksum("", 0, 1, sum) == 0 ? KJ_OK
			: kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return kj_error_set(err, KJ_EIO, "'%s': cannot map: %s", path, strerror(errno));
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	rc = kj__checksum(m, (size_t)st.st_size, threads, sum);
	munmap(m, (size_t)st.st_size);
	return rc == 0 ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "'%s': out of memory", path);
}
