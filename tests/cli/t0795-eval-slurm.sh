#!/usr/bin/env bash
# t0795-eval-slurm.sh - kjudge eval on a real Slurm cluster: a single-node
# cluster on loopback (tests/slurm/cluster.sh: munged, slurmctld, slurmd,
# a slurm.conf of the test's own), a 4-shard array over CPU tasks followed
# with --wait; one running array task requeued with `scontrol requeue`,
# another's kjudge killed with kill -9 (--wait submits that shard again);
# the merged store ends with the verdicts of a local run, each attempt
# once, and the report reads it while it is merged.  The study's store is
# in a folder whose name holds a blank and a '%' (Slurm's %j): the shards'
# logs, named in job.sh's #SBATCH line, land in it.  The cluster is stopped
# and nothing is left running.  Needs Slurm and munge (scripts/install-deps
# installs them) and $KJ_PYTHON with torch (CPU).
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite
gens=$KJ_TESTS/eval/cands/generations.jsonl
cluster=$KJ_TESTS/slurm/cluster.sh
cdir=$kj_root/cluster
mkdir -p "$cdir" "$kj_root/node"
trap '"$cluster" stop "$cdir" >/dev/null 2>&1; rm -rf "$kj_root"' EXIT

verdicts() { eval_verdicts "$1"; }

# Where the study's store is: a blank and a '%' that sbatch and Slurm's
# filename patterns would read otherwise.
study="$kj_root/a b%j"
mkdir -p "$study"

# alive PID: a process that runs (this machine's PID 1 may leave zombies).
alive() { grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status" 2>/dev/null; }

test_expect 'Slurm and munge are installed, and the cluster starts' '
	command -v sbatch && command -v slurmctld && command -v slurmd && command -v munged
	"$cluster" start "$cdir" >"$kj_root/cluster.env"
	. "$kj_root/cluster.env"
	sinfo -h -o "%t" | grep -q idle
'
. "$kj_root/cluster.env" 2>/dev/null || true

test_expect 'a local run: the reference verdicts' '
	"$KJUDGE" eval "$suite" "$gens" --db "$kj_root/ref.db" --verify-only -j 1 -q >/dev/null 2>&1
	verdicts "$kj_root/ref.db" >"$kj_root/ref.txt"
	test "$(wc -l <"$kj_root/ref.txt")" = 7
'

test_expect 'a 4-shard array, one task requeued, one kjudge killed: the local verdicts' '
	db=$study/study.db
	KJ_SHARD_DIR=$kj_root/node KJ_SLURM_POLL_S=1 "$KJUDGE" eval "$suite" "$gens" --db "$db" \
		--slurm --shards 4 --device cpu --verify-only -j 1 --wait >out 2>err &
	waiter=$!
	job=
	for t in $(seq 1 300); do
		job=$(squeue -h -o "%F" 2>/dev/null | head -n 1)
		test -n "$job" && break
		sleep 0.2
	done
	test -n "$job" || { cat out err; false; }
	# Requeue the first array task seen running, once it has started judging.
	requeued=
	for t in $(seq 1 600); do
		requeued=$(squeue -h -r -j "$job" -t RUNNING -o "%K" | head -n 1)
		test -n "$requeued" && pgrep -f -- "--shard $requeued/4 --plan" >/dev/null && break
		requeued=
		sleep 0.2
	done
	test -n "$requeued"
	sleep 2
	before=$(squeue -h -r -j "$job" -t RUNNING -o "%K" | tr "\n" " ")
	scontrol requeue "${job}_$requeued"
	# kill -9 the kjudge of a task that started after the requeue (on the
	# CPU it freed): one surely in the middle of its work.
	killed=
	for t in $(seq 1 900); do
		for k in $(squeue -h -r -j "$job" -t RUNNING -o "%K"); do
			case " $before " in *" $k "*) continue ;; esac
			pid=$(pgrep -o -f -- "--shard $k/4 --plan" || true)
			if test -n "$pid"; then
				killed=$k
				break
			fi
		done
		test -n "$killed" && break
		sleep 0.2
	done
	test -n "$killed"
	sleep 1
	test ! -e "$db.slurm"/plan-*/shards/shard-$killed.json
	kill -9 "$pid"
	# The store is readable while it is merged.
	"$KJUDGE" report "$db" --json mid.json >/dev/null 2>&1
	wait $waiter || { echo "--wait exit $?"; cat out err; false; }
	cat out err
	grep -q "submitted job $job (array 0-3)" out
	# Every shard'"'"'s log in the folder job.sh names, not in "a", "b%j" or
	# "b<JOBID>" beside it.
	for k in 0 1 2 3; do
		grep -q "^kjudge shard $k/4: job" "$db.slurm"/plan-*/logs/shard-$k.out
	done
	test ! -e "$kj_root/a" && test "$(ls "$kj_root" | grep -c "^a b")" = 1
	grep -q "shard $killed/4 ended without finishing; submitted again as job" err
	grep -q "attempts of plan .*: 4 passed (1 clean), 3 failed, 0 judge or task errors, 0 not judged" out
	verdicts "$db" >got.txt
	diff "$kj_root/ref.txt" got.txt
	# The requeued task ran twice (Slurm restarted it), the killed one was
	# submitted again: both runs are in the store, with their nodes.
	"$KJ_PYTHON" - "$db" "$requeued" <<PY
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
envs = [json.loads(e) for (e,) in db.execute("SELECT env FROM runs WHERE env IS NOT NULL")]
shards = [e for e in envs if "shard" in e]
assert any(e["shard"] == sys.argv[2] + "/4" and e.get("SLURM_RESTART_COUNT") == "1" for e in shards), shards
assert all(e.get("SLURM_JOB_ID") for e in shards), shards
nodes = {json.loads(e)["node"] for (e,) in db.execute("SELECT env FROM attempts")}
assert db.execute("SELECT count(*) FROM attempts WHERE state != ?", ("done",)).fetchone()[0] == 0
assert len(nodes) == 1 and None not in nodes, nodes
PY
	cp "$db" "$kj_root/study-final.db"
'

test_expect 'the same command again: nothing left to judge, nothing submitted' '
	before=$(squeue -h | wc -l)
	KJ_SHARD_DIR=$kj_root/node "$KJUDGE" eval "$suite" "$gens" --db "$study/study.db" --slurm \
		--shards 4 --device cpu --verify-only -j 1 --wait >out 2>err
	grep -q "nothing to judge" out
	test "$(squeue -h | wc -l)" = "$before"
	verdicts "$study/study.db" >got.txt
	diff "$kj_root/ref.txt" got.txt
'

test_expect 'without --wait: the options reach sbatch; the same command finds the job, submits none' '
	KJ_SHARD_DIR=$kj_root/node "$KJUDGE" eval "$suite" "$gens" --db sub.db --slurm --shards 2 \
		--device cpu --verify-only -j 1 --partition debug --time 7 --sbatch-arg=--hold \
		--sbatch-arg=--comment=kjudge-t0795 >out 2>err || { cat err; false; }
	job=$(sed -n "s/^kjudge eval: submitted job \([0-9]*\) (array 0-1)$/\1/p" out)
	test -n "$job"
	grep -q "run this command again with --wait" out
	scontrol show job "${job}_0" >show 2>&1 || scontrol show job "$job" >show
	grep -q "Partition=debug" show
	grep -q "TimeLimit=00:07:00" show
	grep -q "Comment=kjudge-t0795" show
	test -x sub.db.slurm/plan-*/job.sh
	grep -q "^$job 0-1$" sub.db.slurm/plan-*/jobs
	KJ_SHARD_DIR=$kj_root/node "$KJUDGE" eval "$suite" "$gens" --db sub.db --slurm --shards 2 \
		--device cpu --verify-only -j 1 >out2 2>err2
	grep -q "is in Slurm.s queue as job $job: follow it with --wait" out2
	test "$(wc -l <sub.db.slurm/plan-*/jobs)" = 1
	scancel "$job"
'

test_expect 'the shards merged again by hand change nothing' '
	cp "$kj_root/study-final.db" m.db
	verdicts m.db >before.txt
	"$KJUDGE" merge "$study"/study.db.slurm/plan-*/shards/shard-*.db --db m.db >mout
	test "$(grep -c "0 attempts new, 0 replacing" mout)" = 4
	verdicts m.db >after.txt
	diff before.txt after.txt
'

test_expect 'the cluster stops and nothing is left running' '
	"$cluster" stop "$cdir"
	for p in $(pgrep -f "$kj_root" || true); do
		if alive "$p" && test "$p" != "$$"; then
			ps -o pid,stat,args -p "$p" || true
			false
		fi
	done
	for name in slurmctld slurmd munged slurmstepd; do
		for p in $(pgrep -x "$name" || true); do
			if alive "$p" && tr "\0" " " <"/proc/$p/cmdline" | grep -q "$cdir"; then
				echo "still running: $name $p"
				false
			fi
		done
	done
'

test_done
