/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz/ share: CHECK, which
 * aborts on a broken promise of the code under test (libFuzzer reports an
 * abort as a crash, with the input that caused it), and the entry point's
 * prototype.  Include it after the system headers.
 */
#ifndef KJ_FUZZ_H
#define KJ_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                       \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: invariant broken: %s\n",  \
				__FILE__, __LINE__, #cond);               \
			abort();                                          \
		}                                                         \
	} while (0)

#endif /* KJ_FUZZ_H */
