#!/usr/bin/env bash
# t0610-eval-kill.sh - kill -9 at random moments during an evaluation, 20
# times (KJ_KILLS), each time followed by the same command; at the end the
# store's verdicts equal those of an uninterrupted run, every attempt has
# each of its cases once, the store passes SQLite's integrity check after
# every kill, and no judge or worker outlives the killed judge.  The
# study: four attempts on tests/eval's suite (cands/kill.jsonl: a pass, a
# wrong answer, one wrong on some cases of a cases file, a crash), verify
# only (the verdicts are what is compared; timing is t0600's).
# KJ_KILL_SEED replays a draw.
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite
gens=$KJ_TESTS/eval/cands/kill.jsonl
kills=${KJ_KILLS:-20}
seed=${KJ_KILL_SEED:-$RANDOM}
echo "# t0610: $kills kills, seed $seed (KJ_KILL_SEED replays it)"

# verdicts STORE: one line per attempt, what must not depend on kills.
verdicts() {
	"$KJ_PYTHON" - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("""SELECT task, model, attempt, state, status, clean, error_type, category,
                              charged, cases_total, cases_passed, static_ok, disabled_ok, profile_ok,
                              (SELECT count(*) FROM case_results c WHERE c.attempt_key = a.attempt_key
                                                                   AND c.phase = 'verify')
                       FROM attempts a ORDER BY task, model, attempt"""):
    print("|".join("" if v is None else str(v) for v in r))
PY
}

test_expect 'an uninterrupted run: the reference verdicts' '
	"$KJUDGE" eval "$suite" "$gens" --db "$kj_root/ref.db" --verify-only -j 2 -q >/dev/null 2>&1
	verdicts "$kj_root/ref.db" >"$kj_root/ref.txt"
	test "$(wc -l <"$kj_root/ref.txt")" = 4
	! grep -q "|running|" "$kj_root/ref.txt"
'

test_expect "kill -9 at $kills random moments, each time the same command again: the same verdicts" '
	db=$PWD/killed.db
	"$KJ_PYTHON" "$KJ_TESTS/helpers/eval_kill.py" "$KJUDGE" "$suite" "$gens" "$db" "$kills" "$seed"
	verdicts "$db" >got.txt
	diff "$kj_root/ref.txt" got.txt
'

test_done
