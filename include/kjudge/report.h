/*
 * kjudge/report.h - machine-readable records of kjudge's results.
 *
 * Records are jansson values (json_t).  Ownership follows jansson: every
 * function here returns a new reference that the caller must json_decref();
 * NULL means out of memory.  Numbers that JSON cannot carry (NaN, +-Inf) are
 * written as the strings "nan", "inf" and "-inf"; undefined figures as null.
 */
#ifndef KJUDGE_REPORT_H
#define KJUDGE_REPORT_H

#include <jansson.h>

#include "kjudge/compare.h"

/* The whole comparison record (fields documented in docs/cli.md). */
json_t *kj_cmp_result_json(const struct kj_cmp_result *res);

/* A double as JSON: a real, or "nan"/"inf"/"-inf". */
json_t *kj_json_number(double v);

#endif /* KJUDGE_REPORT_H */
