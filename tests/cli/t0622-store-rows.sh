#!/usr/bin/env bash
# t0622-store-rows.sh - a store holding values no judge writes (a shard
# doctored by hand or a bug: judge_s = +Inf, prompt_tokens = -1000000, a
# status off its list, a negative speedup of a timing): merge refuses it
# whole (exit 2, the shard, the attempt and the column named, the target
# byte for byte as it was), and report of such a store leaves the attempt
# out, named on stderr and in the JSON, with the figures of the rest those
# of the store without it (exit 0).
. "$(dirname "$0")/lib.sh"

# doctor DB SQL: SQL run on DB, its CHECK constraints not enforced.
doctor() {
	"$KJ_PYTHON" -c "import sqlite3, sys
d = sqlite3.connect(sys.argv[1]); d.execute('PRAGMA ignore_check_constraints = ON')
d.executescript(sys.argv[2]); d.commit()" "$1" "$2"
}

test_expect 'merge refuses a shard with a value no judge writes: exit 2, named, the target as it was' '
	make_store shard.db
	"$KJUDGE" merge shard.db --db study.db -q
	sum=$(md5sum <study.db)
	for bad in "judge_s = 9e999|judge_s is inf" "prompt_tokens = -1000000|prompt_tokens is -1000000" \
		   "status = '\''win'\''|status is '\''win'\''"; do
		cp shard.db bad.db
		doctor bad.db "UPDATE attempts SET ${bad%|*} WHERE attempt_key = '\''a1'\''"
		expect_exit 2 "$KJUDGE" merge bad.db --db study.db 2>err
		grep -q "^kjudge merge: .bad.db.: attempt a1 (model .m1., task .19_ReLU., attempt .0.): ${bad#*|}, not " err
		grep -q "nothing of this store was merged$" err
		test "$(md5sum <study.db)" = "$sum"
	done
	# A timing of a case: the case named too; and into a new store: none made.
	cp shard.db bad.db
	doctor bad.db "UPDATE timings SET speedup = -2 WHERE attempt_key = '\''a1'\'' AND case_idx = 2"
	expect_exit 2 "$KJUDGE" merge bad.db --db new.db 2>err
	grep -q "attempt a1 (.*), case 2: timings.speedup is -2, not a finite number, at least 0" err
	py "import sqlite3; assert sqlite3.connect(\"new.db\").execute(\"SELECT count(*) FROM attempts\").fetchone()[0] == 0"
'

test_expect 'report of a store with a bad row: exit 0, the row named, the figures of the rest' '
	make_store s.db
	cp s.db bad.db
	doctor bad.db "UPDATE attempts SET judge_s = 9e999, prompt_tokens = -1000000 WHERE attempt_key = '\''a1'\''"
	cp s.db rest.db
	doctor rest.db "DELETE FROM timings WHERE attempt_key = '\''a1'\''; DELETE FROM attempts WHERE attempt_key = '\''a1'\''"
	"$KJUDGE" report bad.db --json bad.json --md bad.md 2>err >out
	grep -q "^kjudge report: left out: attempt a1 (model .m1., task .19_ReLU., attempt .0.): prompt_tokens is -1000000, not a whole number of tokens" err
	grep -q "^kjudge report: warning: 1 attempt of the store is left out of every figure" err
	"$KJUDGE" report rest.db --json rest.json 2>/dev/null >/dev/null
	py "
import json
b, r = json.load(open(\"bad.json\")), json.load(open(\"rest.json\"))
assert b[\"models\"] == r[\"models\"] and b[\"attempts\"] == r[\"attempts\"] and b[\"operators\"] == r[\"operators\"]
assert [(x[\"attempt_key\"], x[\"column\"]) for x in b[\"left_out\"]] == [(\"a1\", \"prompt_tokens\")], b[\"left_out\"]
assert b[\"models\"][\"m1\"][\"judge_s\"] == 24.0 and b[\"models\"][\"m1\"][\"attempts\"] == 8
"
	grep -q "left out of every figure" bad.md
'
test_done
