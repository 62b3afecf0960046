/*
 * hash.h - content hashes (kj__ internals, lib/base/hash.c).
 *
 * Two kinds, for two jobs:
 *   - identity: SHA-256 (OpenSSL's libcrypto), as 64 hex digits, for what
 *     names a thing for good: task and candidate files in a verify record,
 *     the keys of results.
 *   - integrity: a checksum of a large file's bytes (XXH3, 64 bits, over
 *     1 MiB blocks combined in order; blocks are hashed by several threads
 *     for large files, so a 6 GB golden output is checked at memory speed),
 *     for cache entries checked before every use.  Not a defence against
 *     someone who can write the cache; only against damage.
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_BASE_HASH_H
#define KJ_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "kjudge/error.h"

#define KJ_SHA256_HEX 65 /* 64 hex digits and a NUL */

/* SHA-256 of n bytes at p, as lowercase hex, into hex.  0, or -1 when
 * libcrypto failed (out of memory): hex is then "" and never a sum. */
int kj__sha256_hex(const void *p, size_t n, char hex[KJ_SHA256_HEX]);

/* SHA-256 of a file's bytes.  Returns KJ_OK, or a code with err filled. */
int kj__sha256_file(const char *path, char hex[KJ_SHA256_HEX], struct kj_error *err);

/* HMAC-SHA256 of n bytes at p under key[0..klen), its 32 bytes into d.
 * 0, or -1 when libcrypto failed (d is then not a sum). */
int kj__hmac_sha256(const void *key, size_t klen, const void *p, size_t n, unsigned char d[32]);

/* HMAC-SHA256 of n bytes at p under key[0..klen), as hex.  0, or -1 when
 * libcrypto failed: hex is then "", which matches no signature. */
int kj__hmac_sha256_hex(const void *key, size_t klen, const void *p, size_t n,
			char hex[KJ_SHA256_HEX]);

/* The integrity checksum of n bytes at p (see above) into *out; `threads`
 * 0 picks one per CPU, at most 16.  0, or -1 when out of memory. */
int kj__checksum(const void *p, size_t n, int threads, uint64_t *out);

/* The checksum and size of a whole file (mapped read-only).  Returns KJ_OK,
 * or a code with err filled. */
int kj__checksum_file(const char *path, uint64_t *sum, long long *size, int threads,
		      struct kj_error *err);

#endif /* KJ_BASE_HASH_H */
