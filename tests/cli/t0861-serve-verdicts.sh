#!/usr/bin/env bash
# t0861-serve-verdicts.sh - kjudge serve on the loopback, through the Python
# client of python/ (tests/helpers/serve_check.py): honest and hostile
# candidates at once get verify's verdicts; kill -9 at random moments, ten
# times, leaves every accepted evaluation with exactly one result; the token
# rule; a unix socket.  None of it bounds a time or judges a benchmark
# (verify's verdicts only), so tests/run runs it in a lane; what does is
# t0860's.  Needs $KJ_PYTHON with torch (CPU).
. "$(dirname "$0")/lib.sh"

check() {
	timeout 280 "$KJ_PYTHON" "$KJ_TESTS/helpers/serve_check.py" "$1" || {
		tail -n 20 serve.err 2>/dev/null
		false
	}
}

test_expect 'honest and hostile candidates at once: verify'"'"'s verdicts (a task by source or by its name in --suite), and report reads the store' '
	check verdicts
	"$KJUDGE" report s.db --json r.json >/dev/null
	test "$(jget r.json "\"%d %s\" % (len(d[\"attempts\"]), \" \".join(d[\"models\"]))")" = "5 m"
'

test_expect 'kill -9 at random moments, ten times: every accepted evaluation has one result' '
	check kill
'

test_expect 'the token rule: an address off the loopback needs --token-file, kept from others' '
	expect_exit 2 "$KJUDGE" serve --db s.db --listen 0.0.0.0:0 >out 2>err
	grep -q "^kjudge serve: --listen 0.0.0.0 is not the loopback: it needs --token-file" err
	test ! -s out && test ! -e s.db
	echo sesame >token && chmod 644 token
	expect_exit 2 "$KJUDGE" serve --db s.db --listen 0.0.0.0:0 --token-file token 2>err
	grep -q "may be read by others than its owner" err
	expect_exit 2 "$KJUDGE" serve --db s.db --listen nowhere 2>err
	grep -q "is not HOST:PORT" err
	expect_exit 2 "$KJUDGE" serve --db s.db --listen 127.0.0.1:0 --socket x.sock 2>err
	grep -q "one or the other" err
	expect_exit 2 "$KJUDGE" serve --db s.db --gpus 0 --device cpu 2>err
	grep -q "^kjudge serve: --gpus with --device cpu" err
	expect_exit 2 "$KJUDGE" serve --db s.db --gpus 0,x 2>err
	grep -q "gpus" err
	test ! -e s.db
'

test_expect 'a unix socket: mode 0600, the first line names it, SIGTERM ends it with exit 0' '
	"$KJUDGE" serve --db s.db --device cpu --socket "$SCRATCH/k.sock" >out 2>err &
	pid=$!
	for _ in $(seq 100); do test -s out && break; sleep 0.1; done
	test "$(head -n 1 out)" = "listening on unix:$SCRATCH/k.sock"
	test "$(stat -c %a k.sock)" = 600
	py "import sys; sys.path.insert(0, \"$KJ_TESTS/../python\")
from kjudge_client import Client
assert Client(\"unix:$SCRATCH/k.sock\").health()[\"status\"] == \"ok\""
	kill -TERM $pid
	wait $pid
	test ! -e k.sock
'

test_done
