#!/usr/bin/env bash
# t0860-serve.sh - kjudge serve on the loopback, through the Python client
# of python/ (tests/helpers/serve_check.py): every error answer has its
# JSON, a full queue's 429 and the client's retry, SIGTERM drains; a DELETE
# cancels an evaluation being judged and frees its slot at once; a client
# of a byte a second delays no other; workers started ahead are used (a
# clean pass of a Triton kernel, benchmarked).  These bound a time or judge
# a benchmark: tests/run runs this file alone, after its lanes; the rest of
# serve's checks (verdicts, kill -9, the token rule, a unix socket) are
# t0861's.  Needs $KJ_PYTHON with torch (CPU).
. "$(dirname "$0")/lib.sh"

check() {
	timeout 280 "$KJ_PYTHON" "$KJ_TESTS/helpers/serve_check.py" "$1" || {
		tail -n 20 serve.err 2>/dev/null
		false
	}
}

test_expect 'each error code with its JSON, and SIGTERM drains: 503, the running one finishes, exit 0' '
	check errors
'

test_expect 'DELETE of an evaluation being judged kills its judging and cancels it, nothing charged' '
	check cancel
'

test_expect 'a client that sends a byte a second delays no other' '
	check slow
'

test_expect 'workers started before the request are used; killed while they wait, they cost the evaluation nothing' '
	check warm
'

test_done
