#!/usr/bin/env bash
# t0215-template.sh - sandboxed torch workers forked from a worker template
# (lib/sandbox/spawn.h, "Templates"): the same verdicts, views and limits as
# workers started on their own (KJ_TEMPLATE=off), what a worker sees of its
# start, the fallback when the template cannot serve, and nothing of a
# template outliving its judge.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state

# A candidate that computes the right answer only where its process is what
# a sandboxed worker's must be: PID 1 of its own namespace, alone in it, its
# own HOME and TMPDIR (the template's are another's), its environment and
# argv the worker's, no descriptor of the template's, not dumpable into the
# judge's files.  Anything else fails the case with the reason.
probe() {
	cat > "$1/scale_triton_ascend_impl.py" <<'PY'
import os, sys, tempfile
import torch
import torch.nn as nn

def check():
    bad = []
    if os.getpid() != 1:
        bad.append(f"pid {os.getpid()}")
    procs = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    if procs != [1]:
        bad.append(f"processes {procs}")
    home = os.environ.get("HOME", "")
    if not home or not os.environ.get("TMPDIR", "").startswith(home):
        bad.append(f"HOME {home!r} TMPDIR {os.environ.get('TMPDIR')!r}")
    if tempfile.gettempdir() != os.environ.get("TMPDIR"):
        bad.append(f"tempdir {tempfile.gettempdir()!r}")
    if sys.argv[1:] != ["--fd", "3"]:
        bad.append(f"argv {sys.argv!r}")
    # Above 0-3 only what the worker opened since, no socket but its own
    # channel's copy (the template's socket was above them and is closed).
    links = []
    for f in sorted(int(f) for f in os.listdir("/proc/self/fd")):
        try:
            links.append((f, os.readlink(f"/proc/self/fd/{f}")))
        except OSError:
            pass  # the listing's own descriptor
    chan = dict(links).get(3)
    if any(f > 3 and l.startswith("socket:") and l != chan for f, l in links):
        bad.append(f"descriptors {links}")
    try:
        open("/proc/1/root/../../../etc/hostname-kj-probe", "w")
        bad.append("wrote outside its view")
    except OSError:
        pass
    return bad

class ModelNew(nn.Module):
    def forward(self, x):
        bad = check()
        if bad:
            raise RuntimeError("not a sandboxed worker: " + "; ".join(bad))
        return 2 * x + 1
PY
}

started() {
	jget "$1" "d['kjudge']['limits']['reference_in_force']['started'] + ' ' + d['kjudge']['limits']['candidate_in_force']['started']"
}

test_expect 'workers are forked from the template by default, started on their own with KJ_TEMPLATE=off, and judged the same' '
	scale_task t && probe t
	$KJUDGE verify --op_name scale --verify_dir t > out 2> err
	test "$(jget t/verify_result.json "d[\"passed_cases\"]")" = 2
	test "$(started t/verify_result.json)" = "template template"
	KJ_TEMPLATE=off $KJUDGE verify --op_name scale --verify_dir t > out2 2> err2
	test "$(jget t/verify_result.json "d[\"passed_cases\"]")" = 2
	test "$(started t/verify_result.json)" = "exec exec"
	expect_exit 2 env KJ_TEMPLATE=maybe $KJUDGE verify --op_name scale --verify_dir t 2> e3
	grep -q "KJ_TEMPLATE" e3
'

test_expect 'a crash, an abort and a wrong answer are the same verdicts from a template' '
	scale_task t
	for body in "os.kill(os.getpid(), 11)" "os.abort()" "x * 3"; do
		cat > t/scale_triton_ascend_impl.py <<PY
import os
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return $body
PY
		for m in on off; do
			KJ_TEMPLATE=$m $KJUDGE verify --op_name scale --verify_dir t > /dev/null 2>&1 || :
			jget t/verify_result.json "sorted({f[\"error_type\"] for f in d[\"failures\"]}), d[\"passed_cases\"], d[\"kjudge\"][\"limits\"][\"candidate_in_force\"][\"started\"]" > "v.$m"
		done
		cat v.on v.off
		test "$(sed "s/template/X/" v.on)" = "$(sed "s/exec/X/" v.off)"
		grep -q "\[.[A-Za-z]" v.on
	done
'

test_expect 'a template that cannot serve leaves the workers to start on their own, with the same verdict' '
	scale_task t && probe t
	mkdir bin
	for f in kjudge kjudge_worker.py kjudge_timer.so kjudge_audit.py; do cp "$KJ_BUILD/$f" bin/; done
	# Not a library: the template fails before it is ready.
	echo "not a library" > bin/kjudge_template.so
	bin/kjudge verify --op_name scale --verify_dir t > out 2> err
	test "$(jget t/verify_result.json "d[\"passed_cases\"]")" = 2
	test "$(started t/verify_result.json)" = "exec exec"
	# No library at all: the same.
	rm bin/kjudge_template.so
	bin/kjudge verify --op_name scale --verify_dir t > out 2> err
	test "$(started t/verify_result.json)" = "exec exec"
'

test_expect 'the template goes with its judge, killed or finished' '
	scale_task t
	cat > t/scale_triton_ascend_impl.py <<PY
import time
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        time.sleep(60)
        return 2 * x + 1
PY
	$KJUDGE verify --op_name scale --verify_dir t --timeout 120 > out 2> err &
	judge=$!
	# The template: a child of the judge running the worker in --template mode.
	for _ in $(seq 300); do
		tpl=$(pgrep -P $judge -f -- "--template" || :)
		[ -n "$tpl" ] && break
		sleep 0.1
	done
	test -n "$tpl"
	# The workers are the judge'"'"'s children too (re-parented to it).
	for _ in $(seq 300); do
		[ "$(pgrep -P $judge | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	kids=$(pgrep -P $judge | tr "\n" " ")
	test "$(echo $kids | wc -w)" -ge 3
	kill -KILL $judge
	wait $judge || :
	for _ in $(seq 100); do
		left=
		for p in $kids; do
			# A zombie is gone (whoever reaps it now).
			case $(ps -o stat= -p $p 2>/dev/null) in "" | Z*) ;; *) left="$left $p" ;; esac
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	test -z "$left"
'

test_done
