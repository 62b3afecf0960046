#!/usr/bin/env bash
# t0790-eval-shards.sh - an evaluation cut into shards by hand, without
# Slurm (t0795 runs the same on a cluster): `kjudge eval --shard I/K` three
# times, each into its own store, published into one directory, merged with
# `kjudge merge` into the verdicts of one local run; merging again changes
# nothing; a shard killed with kill -9 mid-run leaves nothing a merge
# counts, and started again goes on from what it published; a plan whose
# settings differ from the command's, a bad --shard and a source that is
# not a store are refused with exit 2.  Needs $KJ_PYTHON with torch (CPU).
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite
gens=$KJ_TESTS/eval/cands/generations.jsonl
kill_gens=$KJ_TESTS/eval/cands/kill.jsonl
fast="--verify-only -j 2"

verdicts() { eval_verdicts "$1"; }

test_expect 'a local run: the reference verdicts' '
	"$KJUDGE" eval "$suite" "$gens" --db "$kj_root/ref.db" $fast -q >/dev/null 2>&1
	verdicts "$kj_root/ref.db" >"$kj_root/ref.txt"
	test "$(wc -l <"$kj_root/ref.txt")" = 7
'

test_expect 'three shards, each published, merged: the local verdicts, each attempt once' '
	mkdir pub
	for i in 0 1 2; do
		"$KJUDGE" eval "$suite" "$gens" --db s$i.db --shard $i/3 --publish pub $fast \
			>out$i 2>err$i || { cat err$i; false; }
		grep -q "shard $i/3:" err$i
		test -f pub/shard-$i.db && test -f pub/shard-$i.json
		grep -q "\"exit\":0" pub/shard-$i.json
		test ! -e pub/shard-$i.db-wal
	done
	# Every attempt in exactly one shard.
	test "$(cat err0 err1 err2 | grep -c "^[^k].* m[0-9]/")" = 7
	"$KJUDGE" merge pub/shard-0.db pub/shard-1.db pub/shard-2.db --db merged.db >mout
	test "$(grep -c "attempts new" mout)" = 3
	verdicts merged.db >got.txt
	diff "$kj_root/ref.txt" got.txt
	cp merged.db "$kj_root/merged.db"
	cp -r pub "$kj_root/pub"
'

test_expect 'merging the same shards again changes nothing' '
	cp "$kj_root/merged.db" m.db
	count() { "$KJ_PYTHON" -c "import sqlite3; print(sqlite3.connect(\"m.db\").execute(\"$1\").fetchone()[0])"; }
	verdicts m.db >before.txt
	runs=$(count "SELECT count(*) FROM runs")
	cases=$(count "SELECT count(*) FROM case_results")
	"$KJUDGE" merge "$kj_root"/pub/shard-2.db "$kj_root"/pub/shard-0.db "$kj_root"/pub/shard-1.db --db m.db >mout
	test "$(grep -c "0 attempts new, 0 replacing judge errors" mout)" = 3
	verdicts m.db >after.txt
	diff before.txt after.txt
	test "$(count "SELECT count(*) FROM runs")" = "$runs"
	test "$(count "SELECT count(*) FROM case_results")" = "$cases"
'

test_expect 'a merged store and the local one give the same report' '
	"$KJUDGE" report "$kj_root/ref.db" --json a.json >/dev/null 2>&1
	"$KJUDGE" report "$kj_root/merged.db" --json b.json >/dev/null 2>&1
	"$KJ_PYTHON" - a.json b.json <<PY
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
keys = ("operators", "accuracy", "clean_pass_rate", "pass_at_k")
for m in a["models"]:
    for k in keys:
        assert a["models"][m][k] == b["models"][m][k], (m, k, a["models"][m][k], b["models"][m][k])
assert sorted(a["models"]) == sorted(b["models"])
PY
'

test_expect 'a shard killed mid-run: its published store counts nothing running; again, it goes on' '
	mkdir pub
	KJ_PUBLISH_S=0 "$KJUDGE" eval "$suite" "$kill_gens" --db k.db --shard 0/1 --publish pub \
		--verify-only -j 1 >kout 2>kerr &
	pid=$!
	# Until its first attempt is published, then kill it (and so its judges).
	for t in $(seq 1 600); do
		test -f pub/shard-0.db && break
		sleep 0.1
	done
	test -f pub/shard-0.db
	kill -9 $pid
	wait $pid || true
	test ! -f pub/shard-0.json
	"$KJUDGE" merge pub/shard-0.db --db part.db >mout
	"$KJ_PYTHON" -c "import sqlite3; assert sqlite3.connect(\"part.db\").execute(\"SELECT count(*) FROM attempts WHERE state != \x27done\x27\").fetchone()[0] == 0"
	# The same command again: it resumes (its local store, and what it
	# published), and ends with every verdict once.
	"$KJUDGE" eval "$suite" "$kill_gens" --db k.db --shard 0/1 --publish pub --verify-only \
		-j 1 >kout2 2>kerr2 || { cat kerr2; false; }
	grep -q "\"exit\":0" pub/shard-0.json
	"$KJUDGE" merge pub/shard-0.db --db part.db >mout2
	verdicts part.db >all.txt
	test "$(wc -l <all.txt)" = 4
	"$KJUDGE" eval "$suite" "$kill_gens" --db ref2.db --verify-only -j 2 -q >/dev/null 2>&1
	verdicts ref2.db >ref2.txt
	diff ref2.txt all.txt
'

test_expect 'a shard on another node (no local store) starts from what it published' '
	mkdir pub
	"$KJUDGE" eval "$suite" "$gens" --db a.db --shard 1/3 --publish pub $fast >o1 2>e1
	n1=$(verdicts a.db | wc -l)
	# What a publishing killed midway left there goes.
	echo partial >pub/shard-1.db.tmp-12345
	# Node B: a fresh local store; everything is found in pub, nothing judged.
	"$KJUDGE" eval "$suite" "$gens" --db b.db --shard 1/3 --publish pub $fast >o2 2>e2
	grep -q "resumed from" e2
	grep -q "($n1 already in b.db)" e2
	test ! -e pub/shard-1.db.tmp-12345
'

test_expect 'bad input: exit 2 with the reason' '
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db x.db --shard 3/3 2>e1
	grep -q "0 <= I < K" e1
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db x.db --publish pub 2>e2
	grep -q "needs --shard" e2
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db x.db --partition p 2>e3
	grep -q "needs --slurm" e3
	echo "not a store" >junk.db
	expect_exit 2 "$KJUDGE" merge junk.db --db y.db 2>e4
	grep -q "not a readable SQLite database" e4
	test ! -e y.db
	echo "{\"kjudge_plan\": 7}" >plan.json
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db x.db --shard 0/2 --plan plan.json 2>e5
	grep -q "not a kjudge plan" e5
	# A plan of an older judge, whose keys name tasks by content alone.
	echo "{\"kjudge_plan\": 1}" >plan.json
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db x.db --shard 0/2 --plan plan.json 2>e6
	grep -q "a plan of version 1, made by an older judge" e6
'

test_done
