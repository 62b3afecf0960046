#!/usr/bin/env bash
# selftest.sh - start the throw-away Slurm cluster of cluster.sh, check that an
# array job runs, that `scontrol requeue` of a running array task runs it
# again (and how the task is signalled), the squeue formats for array tasks,
# what a kill -9 of a batch script's main process leads to, and stop it.
# Exits non-zero on any failure; prints what it observed (NOTES.md has it).
#   KJ_SLURM_KEEP=1  keep the temporary directory (logs, outputs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/cluster.sh

t_start=$(date +%s.%N)
elapsed() { awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
say() { printf '[%6ss] %s\n' "$(elapsed)" "$*"; }
fails=0
fail() { say "FAIL: $*"; fails=$((fails + 1)); }
ok() { say "ok: $*"; }

d=$(mktemp -d /tmp/kjslurm.XXXXXX)
orphan=""
cleanup() {
	local rc=$?
	"$cluster" stop "$d" || rc=1
	if [ -n "$orphan" ] && grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$orphan/status" 2>/dev/null; then
		say "FAIL: cluster.sh stop left the job's orphan $orphan running"
		kill -9 "$orphan" 2>/dev/null || true
		rc=1
	elif [ -n "$orphan" ]; then
		say "ok: cluster.sh stop ended the job's orphan $orphan"
	fi
	local p left=""
	for p in $(pgrep -x 'slurmctld|slurmd|slurmstepd|munged' || true); do
		grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$p/status" 2>/dev/null && left="$left $p"
	done
	# Other clusters may run on this machine; only report.
	[ -z "$left" ] || say "note: still running:$left"
	if [ "${KJ_SLURM_KEEP:-}" = 1 ] || [ $rc -ne 0 ]; then
		say "kept $d"
	else
		rm -rf "$d"
	fi
	say "total $(elapsed)s, exit $rc"
	exit $rc
}
trap cleanup EXIT

# wait_until SECS CMD...: poll CMD every 0.2s until it succeeds.
wait_until() {
	local end
	end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

t0=$(date +%s.%N)
# Not eval "$(... start)": eval of an empty string succeeds, set -e or not.
envs=$("$cluster" start "$d") || { fail "cluster.sh start"; exit 1; }
eval "$envs"
say "cluster up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s: $(sinfo -h -N -o '%N %t %c CPUs')"
[ -n "${SLURM_CONF:-}" ] || { fail "no SLURM_CONF from start"; exit 1; }
envl=$("$cluster" env "$d")
grep -q "^export SLURM_CONF=" <<<"$envl" || fail "env prints no SLURM_CONF"

out=$d/out
mkdir -p "$out"
cd "$d"

jstate() { # jstate JOBID -> JobState of one job (array task as 12_3 too)
	scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n1
}
jfield() { # jfield JOBID FIELD
	scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}
queue_empty() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }

# --- 1. a plain array ---------------------------------------------------------------
say "1. sbatch --array=0-3"
job=$(sbatch --parsable --array=0-3 -o "$out/a_%A_%a.log" \
	--wrap "sleep 2; echo \$SLURM_ARRAY_TASK_ID > $out/\$SLURM_ARRAY_TASK_ID")
job=${job%%;*}
say "job $job; squeue -h -j $job -o '%i %T':"
squeue -h -j "$job" -o '%i %T' | sed 's/^/    /'
say "same with -r:"
squeue -h -r -j "$job" -o '%i %T' | sed 's/^/    /'
# Pending tasks are folded, 12_[0-3] PENDING; -r gives one line per task.
squeue -h -j "$job" -o '%i %T' | grep -Eq "^${job}_(\[[0-9,-]+\]|[0-9]+) [A-Z]+$" ||
	fail "unexpected squeue format"
[ "$(squeue -h -r -j "$job" -o '%i' | grep -Ec "^${job}_[0-3]$")" -eq 4 ] ||
	fail "squeue -r does not list ${job}_0..3"
two_running() { [ "$(squeue -h -r -j "$job" -t RUNNING -o %i | wc -l)" -ge 2 ]; }
if wait_until 30 two_running; then
	ok "two tasks run at once: $(squeue -h -j "$job" -o '%i %T' | tr '\n' ';')"
else
	fail "never two tasks running at once"
fi
all4() { for i in 0 1 2 3; do [ "$(cat "$out/$i" 2>/dev/null)" = "$i" ] || return 1; done; }
if wait_until 60 all4; then ok "all 4 outputs"; else fail "outputs: $(ls "$out")"; fi
wait_until 20 queue_empty "$job" || fail "job $job still in the queue"
say "jobcomp lines for $job: $(grep -c "ArrayJobId=$job " "$d/log/jobcomp.txt" || true)"
say "sacct: $(sacct -j "$job" -n -o JobID,State,ExitCode 2>&1 | head -n3 | tr '\n' ';')"
# sacct -c reads the jobcomp/filetxt file: raw job ids only, and it complains
# about the ArrayJobId/ArrayTaskId fields on stderr.
say "sacct -c (stderr dropped): $(sacct -c -n -P -o JobIDRaw,State,ExitCode 2>/dev/null | tr '\n' ';')"

# --- 2. requeue of a running array task ------------------------------------------
say "2. scontrol requeue of a running array task"
cat >"$d/job.sh" <<'EOF'
#!/bin/bash
out=$1
i=$SLURM_ARRAY_TASK_ID
# $EPOCHREALTIME, not $(date): a date child would be signalled along with the job
ev() { echo "$EPOCHREALTIME task=$i restart=${SLURM_RESTART_COUNT-unset} job=$SLURM_JOB_ID pid=$$ $*" >>"$out/events"; }
echo run >>"$out/count.$i"
ev start
if [ "$i" = 1 ] && [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
	# The main process logs every signal it gets, and so does a child.
	# Python, not bash traps: bash lost the TERM trap once when SIGCONT and
	# SIGTERM came together.  exec: the logger is the batch script's process.
	export KJ_EV_PREFIX="task=$i restart=${SLURM_RESTART_COUNT-unset} job=$SLURM_JOB_ID"
	exec python3 -c '
import os, signal, sys, time
out = sys.argv[1]
who = "main"
def ev(msg):
    with open(out + "/events", "a") as f:
        f.write("%.6f %s pid=%d %s\n" % (time.time(), os.environ["KJ_EV_PREFIX"], os.getpid(), msg))
def h(sig, frame):
    ev("%s-sig=%s" % (who, signal.Signals(sig).name[3:]))
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1,
          signal.SIGUSR2, signal.SIGCONT, signal.SIGQUIT):
    signal.signal(s, h)
if os.fork() == 0:
    who = "child"
    while True:
        time.sleep(0.2)
end = time.time() + 120
while time.time() < end:
    with open(out + "/alive.1", "w") as f:
        f.write("%.6f\n" % time.time())
    time.sleep(0.2)
ev("survived")
' "$out"
fi
sleep 2
echo "$i" >"$out/r$i"
ev done
EOF
chmod +x "$d/job.sh"
rjob=$(sbatch --parsable --array=0-3 -o "$out/r_%A_%a.log" "$d/job.sh" "$out")
rjob=${rjob%%;*}
t1_running() { [ "$(jstate "${rjob}_1")" = RUNNING ] && [ -s "$out/alive.1" ]; }
wait_until 30 t1_running || fail "${rjob}_1 never ran"
sleep 1
say "before requeue: $(squeue -h -j "$rjob" -o '%i %T' | tr '\n' ';')"
t_rq=$(date +%s.%N)
scontrol requeue "${rjob}_1" || fail "scontrol requeue ${rjob}_1"
# follow the task's state until it has run twice
seq_states="" last=""
twice() { [ "$(wc -l <"$out/count.1" 2>/dev/null || echo 0)" -ge 2 ]; }
end=$(($(date +%s) + 200))
while [ "$(date +%s)" -lt "$end" ]; do
	s="$(jstate "${rjob}_1")/$(jfield "${rjob}_1" Reason)"
	if [ "$s" != "$last" ]; then
		seq_states="$seq_states $s@$(awk -v a="$t_rq" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s"
		last=$s
		case $s in PENDING/*)
			say "while pending: squeue -h -j $rjob -o '%i %T': $(squeue -h -j "$rjob" -o '%i %T' | tr '\n' ';')"
			say "  ${rjob}_1: $(scontrol show job -o "${rjob}_1" | tr ' ' '\n' | grep -E '^(Restarts|BeginTime|EligibleTime|Reason|JobId)=' | tr '\n' ' ')"
			;;
		esac
	fi
	if twice && queue_empty "$rjob"; then break; fi
	sleep 0.2
done
say "state sequence of ${rjob}_1 after requeue (state/reason@time):$seq_states"
if twice; then ok "task 1 ran twice"; else fail "task 1 ran $(wc -l <"$out/count.1" 2>/dev/null || echo 0) times"; fi
wait_until 30 queue_empty "$rjob" || fail "job $rjob still queued"
for i in 0 1 2 3; do [ "$(cat "$out/r$i" 2>/dev/null)" = "$i" ] || fail "no output of task $i"; done
say "events (time relative to requeue):"
awk -v a="$t_rq" '{ $1 = sprintf("%+7.2f", $1 - a); print "    " $0 }' "$out/events"
grep -q 'task=1 .*main-sig=TERM' "$out/events" && ok "main process got SIGTERM" || fail "main process got no SIGTERM"
grep -q 'task=1 restart=1 .* start' "$out/events" && ok "SLURM_RESTART_COUNT=1 in the rerun" ||
	fail "no SLURM_RESTART_COUNT=1 in the rerun"
grep -q 'survived' "$out/events" && fail "the requeued task's process survived"
term_t=$(awk '/task=1 .*main-sig=TERM/ { print $1; exit }' "$out/events")
alive_t=$(cat "$out/alive.1")
say "last sign of life of the first run $(awk -v a="$term_t" -v b="$alive_t" 'BEGIN { printf "%.1f", b - a }')s after its SIGTERM (KillWait=5: then SIGKILL)"
say "jobcomp lines for ${rjob}_1: $(grep "ArrayJobId=$rjob ArrayTaskId=1 " "$d/log/jobcomp.txt" | sed -n 's/.*JobState=\([A-Z_]*\).* ExitCode=\([0-9:]*\).*/\1 \2/p' | tr '\n' ';')"

# --- 3. kill -9 of a batch script's main process --------------------------------------------
say "3. kill -9 of the batch script's main process"
cat >"$d/k.sh" <<'EOF'
#!/bin/bash
echo run >>"$1/kcount"
echo $$ >"$1/kpid"
sleep 300 &
echo $! >"$1/kchild"
wait
EOF
kjob=$(sbatch --parsable -o "$out/k_%j.log" "$d/k.sh" "$out")
kjob=${kjob%%;*}
wait_until 30 test -s "$out/kchild" || fail "job $kjob never started"
sleep 0.5
kill -9 "$(cat "$out/kpid")"
t_k=$(date +%s)
kseq="" last=""
while [ $(($(date +%s) - t_k)) -lt 8 ]; do
	s=$(jstate "$kjob")
	[ "$s" != "$last" ] && { kseq="$kseq ${s:-gone}"; last=$s; }
	sleep 0.2
done
say "state sequence after kill -9:$kseq; $(scontrol show job -o "$kjob" 2>/dev/null | tr ' ' '\n' | grep -E '^(JobState|Reason|ExitCode|Restarts)=' | tr '\n' ' ')"
case $kseq in *FAILED*) ok "job $kjob FAILED" ;; *) fail "job $kjob did not end FAILED" ;; esac
[ "$(wc -l <"$out/kcount")" -eq 1 ] && ok "not requeued by Slurm (ran once)" || fail "job $kjob ran $(wc -l <"$out/kcount") times"
# (a zombie counts as gone: PID 1 of a container may not reap orphans)
alive() { grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status" 2>/dev/null; }
kc=$(cat "$out/kchild")
if alive "$kc"; then
	if grep -q '^ProctrackType=proctrack/linuxproc' "$SLURM_CONF"; then
		# linuxproc tracks the batch script's descendants; the orphan was
		# reparented to PID 1 and escaped.  cluster.sh stop must get it.
		say "note: the job's child (sleep 300, pid $kc) outlived the job: reparented to PID $(awk '/^PPid:/ { print $2 }' "/proc/$kc/status"), so proctrack/linuxproc lost it; left for cluster.sh stop"
		orphan=$kc
	else
		fail "the job's child (sleep 300, pid $kc) outlived the job"
		kill -9 "$kc" 2>/dev/null || true
	fi
else
	ok "the job's child process was killed too"
fi
say "jobcomp: $(grep "JobId=$kjob " "$d/log/jobcomp.txt" | sed -n 's/.*JobState=\([A-Z_]*\).* ExitCode=\([0-9:]*\).*/\1 \2/p')"

sc=$(sacct -c -n -P -j "$kjob" -o JobID,State,ExitCode 2>/dev/null | head -n1)
say "sacct -c -j $kjob: $sc"
case $sc in "$kjob|FAILED|0:9") ok "sacct -c reports the kill -9" ;; *) fail "sacct -c -j $kjob: $sc" ;; esac
say "versions: $(sinfo -V), $(munged -V 2>&1 | head -n1)"
cd /
if [ $fails -ne 0 ]; then say "$fails failure(s)"; exit 1; fi
say "all ok"
