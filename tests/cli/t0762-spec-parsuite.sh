#!/usr/bin/env bash
# t0762-spec-parsuite.sh - kjudge spec verify on the bundled suite
# (examples/parsuite): its OpenMP variants pass in the sandbox (builds that
# include ../../common/omp.mk: repo_root copied whole), and the cheat of
# tests/spec/translations, which copies the verification-only expected
# output, finds nothing to copy.  (jacobi, three seconds of stencil, and
# the OpenCL variants, four seconds of PoCL compiling each, are left to
# the suite's own check.)
. "$(dirname "$0")/lib.sh"
suite="$KJ_TESTS/../examples/parsuite"
export KJ_CACHE_DIR="$kj_root/cache"

test_expect 'the OpenMP variants of dot, histogram and matvec pass' '
	for k in dot histogram matvec; do
		"$KJUDGE" spec verify "$suite/specs/parsuite-$k-omp.json" --root "$suite" --json >r.json
		jget r.json "(d[\"status\"], d[\"notes\"][\"copied\"][\"scope\"])" |
			grep -qxF "('"'"'PASS'"'"', '"'"'repo_root'"'"')"
	done
'

test_expect 'a translation that copies the verification-only output fails: it is not there' '
	expect_exit 1 "$KJUDGE" spec verify "$suite/specs/parsuite-histogram-omp.json" --root "$suite" \
		--candidate "$KJ_TESTS/spec/translations/parsuite-histogram-omp/cheat" --json >r.json
	jget r.json "d[\"status\"]" | grep -qx VERIFY_FAIL
	jget r.json "{s[\"type\"]: s[\"status\"] for s in d[\"strategies\"]}[\"file_hash\"]" | grep -qx FAIL
'

test_done
