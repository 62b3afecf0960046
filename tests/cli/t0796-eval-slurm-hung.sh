#!/usr/bin/env bash
# t0796-eval-slurm-hung.sh - Slurm's commands run under a deadline: with
# an sbatch on PATH that takes the job and a squeue that never answers
# (real programs: shell scripts that sleep), `kjudge eval --slurm --wait`
# kills squeue after $KJ_SLURM_CMD_S, says which command hung, stops
# following with exit 1 and leaves nothing running; run again, the same
# hung squeue stops it before it submits a second plan beside the first.
# A sbatch missing from PATH is told as such.  No cluster is needed.
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite
gens=$KJ_TESTS/eval/cands/generations.jsonl
bin=$kj_root/bin
mkdir -p "$bin"
cat >"$bin/sbatch" <<'SH'
#!/bin/sh
echo "$*" >>"${0%/*}/sbatch.log"
echo 4242
SH
# The squeue notes its pid (the sleep takes it over), to check after
# that nothing of it is left.
cat >"$bin/squeue" <<'SH'
#!/bin/sh
echo $$ >>"${0%/*}/squeue.pids"
exec sleep 7969
SH
chmod +x "$bin/sbatch" "$bin/squeue"
# alive PID: a process that runs (this machine's PID 1 may leave zombies).
alive() { grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status" 2>/dev/null; }
none_alive() {
	for p in $(cat "$bin/squeue.pids"); do
		! alive "$p" || return 1
	done
}
trap 'for p in $(cat "$bin/squeue.pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$kj_root"' EXIT

test_expect 'a squeue that hangs is killed at its deadline: exit 1, nothing left running' '
	start=$(date +%s)
	code=0
	PATH=$bin:$PATH KJ_SLURM_CMD_S=1 KJ_SLURM_POLL_S=0.1 timeout 120 "$KJUDGE" eval \
		"$suite" "$gens" --db s.db --slurm-dir "$kj_root/sl" --slurm --shards 2 \
		--device cpu --verify-only --wait >out 2>err || code=$?
	cat err
	test "$code" = 1
	test $(( $(date +%s) - start )) -lt 60
	grep -q "submitted job 4242" out
	grep -q "squeue did not end within 1 s (killed)" err
	grep -q "stopped following" err
	test "$(wc -l <"$bin/sbatch.log")" = 1
	test "$(wc -l <"$bin/squeue.pids")" = 1
	none_alive
'

test_expect 'run again, the hung squeue stops it before a second plan is submitted' '
	code=0
	PATH=$bin:$PATH KJ_SLURM_CMD_S=1 timeout 120 "$KJUDGE" eval "$suite" "$gens" --db s.db \
		--slurm-dir "$kj_root/sl" --slurm --shards 2 --device cpu --verify-only \
		>out 2>err || code=$?
	cat err
	test "$code" = 1
	grep -q "squeue did not end within 1 s" err
	test "$(wc -l <"$bin/sbatch.log")" = 1
	test "$(wc -l <"$bin/squeue.pids")" = 2
	none_alive
'

test_expect 'an sbatch not on PATH is told as such' '
	mkdir nobin
	code=0
	to=$(command -v timeout)
	PATH=$PWD/nobin "$to" 120 "$KJUDGE" eval "$suite" "$gens" \
		--db t.db --slurm-dir "$kj_root/sl2" --slurm --shards 2 --device cpu \
		--verify-only --python "$KJ_PYTHON" >out 2>err || code=$?
	cat err
	test "$code" = 1
	grep -q "sbatch 0-1: not found" err
'

test_done
