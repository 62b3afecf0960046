/*
 * keys.h - the store's keys (lib/store/keys.c), for the store and for
 * eval's discovery, which keys what it finds as the store will: no SQLite
 * in it.
 */
#ifndef KJ_STORE_KEYS_H
#define KJ_STORE_KEYS_H

/*
 * The store's keys (keys.c, docs/store.md): a task's, from its name, its
 * path in the suite and its content key; an attempt's, from its task's key,
 * its candidate's SHA-256, model, attempt label, device kind ("cpu",
 * "cuda"), the judge's version and the settings' text.  64 hex digits into
 * key: 0, or -1 when out of memory.
 */
int kj__store_task_key(const char *name, const char *path, const char *content,
		       char key[65]);
int kj__store_attempt_key(const char *task_key, const char *cand_sha256, const char *model,
			  const char *attempt, const char *device_kind, const char *version,
			  const char *settings, char key[65]);

#endif /* KJ_STORE_KEYS_H */
