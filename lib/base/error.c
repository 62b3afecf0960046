/*
 * error.c - the error table of error.h: names, messages, and the
 * caller-owned struct kj_error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kjudge/error.h"
#include "base/internal.h"

struct err_entry {
	int code;
	const char *name;
	const char *msg;
};

static const struct err_entry err_table[] = {
	{ KJ_OK, "KJ_OK", "success" },
#define KJ__ERR_ROW(name, msg) { KJ_E##name, "KJ_E" #name, msg },
	KJ_ERROR_MAP(KJ__ERR_ROW)
#undef KJ__ERR_ROW
};

static const struct err_entry *err_lookup(int code)
{
	size_t i;

	for (i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
		if (err_table[i].code == code)
			return &err_table[i];
	return NULL;
}

const char *kj_strerror(int code)
{
	const struct err_entry *e = err_lookup(code);

	return e ? e->msg : "unknown error";
}

const char *kj_err_name(int code)
{
	const struct err_entry *e = err_lookup(code);

	return e ? e->name : "KJ_E?";
}

int kj_error_set(struct kj_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void kj_error_clear(struct kj_error *err)
{
	if (!err)
		return;
	err->code = KJ_OK;
	err->msg[0] = '\0';
}

int kj_err_from_errno(int errnum)
{
	switch (errnum) {
	case 0:
		return KJ_OK;
	case ENOMEM:
		return KJ_ENOMEM;
	case ENOENT:
	case ENOTDIR:
		return KJ_ENOENT;
	case EACCES:
	case EPERM:
		return KJ_EACCES;
	case EINVAL:
		return KJ_EINVAL;
	case ENOSPC:
	case EDQUOT:
		return KJ_ENOSPC;
	default:
		return KJ_EIO;
	}
}
