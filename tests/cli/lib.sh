# lib.sh - helpers for the CLI tests (sourced by tests/cli/tNNNN-*.sh).
#
# A test file is a sequence of
#     test_expect 'what a user would check' '
#         shell commands; the last status decides
#     '
# Each body runs in a subshell inside a fresh scratch directory ($SCRATCH).
# Output: "ok   FILE: title" or "FAIL FILE: title" plus the body's output,
# which tests/run counts.  $KJUDGE is the binary under test, $KJ_PYTHON a
# python with numpy, $KJ_TESTS the tests/ directory.
set -u
: "${KJUDGE:?run through tests/run}"
kj_test_file=$(basename "$0" .sh)
kj_root=$(mktemp -d "${TMPDIR:-/tmp}/kj-cli-XXXXXX")
trap 'rm -rf "$kj_root"' EXIT

test_expect() {
	local title=$1 body=$2 out rc
	SCRATCH=$(mktemp -d "$kj_root/t-XXXXXX")
	out=$(cd "$SCRATCH" && export SCRATCH && (set -e; eval "$body") 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok   $kj_test_file: $title"
	else
		echo "FAIL $kj_test_file: $title"
		printf '%s\n' "$out" | sed 's/^/    | /' | tail -n 40
	fi
}

# test_done: the last line of every test file.  tests/run fails a file
# that ends without it (a file that died half-way through, or exited early).
test_done() {
	echo "# done: $kj_test_file"
}

# expect_exit N cmd...: run cmd, succeed iff it exits with status N.
expect_exit() {
	local want=$1 got
	shift
	"$@" && got=0 || got=$?
	if [ "$got" -ne "$want" ]; then
		echo "expected exit $want, got $got: $*"
		return 1
	fi
}

# py CODE: run python (with numpy) on CODE.
py() {
	"$KJ_PYTHON" -c "$1"
}

# jget FILE EXPR: print EXPR, a Python expression over the JSON file's
# content `d`.
jget() {
	py "import json; d = json.load(open('$1')); print($2)"
}

# eval_verdicts STORE: one line per finished attempt of an eval store, what
# must not depend on how the work was cut or interrupted (the verdict, its
# layers, its cases, and the number of its case rows).
eval_verdicts() {
	"$KJ_PYTHON" - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("""SELECT task, model, attempt, state, status, clean, error_type, category,
                              charged, cases_total, cases_passed, static_ok, disabled_ok,
                              (SELECT count(*) FROM case_results c WHERE c.attempt_key = a.attempt_key)
                       FROM attempts a WHERE state = 'done' ORDER BY task, model, attempt"""):
    print("|".join("" if v is None else str(v) for v in r))
PY
}
