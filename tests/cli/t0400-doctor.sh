#!/usr/bin/env bash
# t0400-doctor.sh - `kjudge doctor`: its report, JSON, groups and exit codes,
# what it finds on this machine, and stand-in nvidia-smi and Python programs
# for the machines it is not (a GPU, a broken or hanging interpreter).
. "$(dirname "$0")/lib.sh"

# check_report FILE: the promises of every JSON report.
check_report() {
	py "
import json
d = json.load(open(\"$1\"))
assert set(d) == {\"checks\", \"summary\"}, d.keys()
n = {\"ok\": 0, \"warn\": 0, \"fail\": 0}
for c in d[\"checks\"]:
    assert set(c) == {\"name\", \"group\", \"status\", \"detail\", \"fix\"}, c
    assert c[\"group\"] in (\"sandbox\", \"timing\", \"runtimes\"), c
    assert c[\"detail\"], c
    # a fix for every problem, and none where there is none
    assert (c[\"status\"] == \"ok\") == (c[\"fix\"] == \"\"), c
    n[c[\"status\"]] += 1
assert d[\"summary\"] == n, (d[\"summary\"], n)
"
}

# status FILE NAME: the status of the record NAME ("none" if absent).
status() {
	jget "$1" "([c[\"status\"] for c in d[\"checks\"] if c[\"name\"] == \"$2\"] or [\"none\"])[0]"
}

# groups FILE: the groups of the report's records, sorted, comma-separated.
groups() {
	jget "$1" "\",\".join(sorted({c[\"group\"] for c in d[\"checks\"]}))"
}

# fake DIR NAME BODY: an executable shell script DIR/NAME.
fake() {
	mkdir -p "$1"
	printf '#!/bin/sh\n%s\n' "$3" > "$1/$2"
	chmod +x "$1/$2"
}

test_expect 'doctor is a command with help' '
	$KJUDGE --help | grep -q "^  doctor"
	$KJUDGE doctor --help > h.txt
	grep -q -- "--group NAME" h.txt
	grep -q -- "--json" h.txt
	grep -q "exit status" h.txt
'

test_expect 'the JSON report has every group, a fix for every problem, and the exit code of its summary' '
	rc=0; $KJUDGE doctor --json > r.json || rc=$?
	check_report r.json
	test "$(groups r.json)" = runtimes,sandbox,timing
	fails=$(jget r.json "d[\"summary\"][\"fail\"]")
	if [ "$fails" -eq 0 ]; then test $rc -eq 0; else test $rc -eq 1; fi
	for name in user-namespaces seccomp cgroups cgroup-memory cgroup-pids \
		private-tmpfs cpu-governor smt cpu-boost gpu python worker nvcc cc \
		clang opencl tree-sitter; do
		test "$(status r.json $name)" != none || { echo "no $name"; false; }
	done
'

test_expect 'the human report: groups in order, the fix under each problem, the same summary' '
	rc=0; $KJUDGE doctor > out.txt || rc=$?
	$KJUDGE doctor --json > r.json || true
	test "$(grep -v "^ " out.txt | grep -v "^$" | head -3 | tr "\n" " ")" = \
		"sandbox timing runtimes "
	problems=$(jget r.json "d[\"summary\"][\"warn\"] + d[\"summary\"][\"fail\"]")
	test "$(grep -c "^ *fix: " out.txt)" -eq "$problems"
	test "$(grep -c -E "^  (WARN|FAIL) " out.txt)" -eq "$problems"
	tail -1 out.txt | grep -q -E "^[0-9]+ ok, [0-9]+ warn, [0-9]+ fail$"
	test "$(tail -1 out.txt)" = "$(jget r.json "\"%d ok, %d warn, %d fail\" % (d[\"summary\"][\"ok\"], d[\"summary\"][\"warn\"], d[\"summary\"][\"fail\"])")"
'

test_expect '--group keeps one group, or those of a list' '
	$KJUDGE doctor --json --group timing > t.json
	check_report t.json
	test "$(groups t.json)" = timing
	$KJUDGE doctor --json --group sandbox,timing > st.json || true
	test "$(groups st.json)" = sandbox,timing
	$KJUDGE doctor --json --group runtimes --group timing > rt.json || true
	test "$(groups rt.json)" = runtimes,timing
	$KJUDGE doctor --group timing > out.txt
	test "$(head -1 out.txt)" = timing
'

test_expect 'bad flags exit 2 with one line on stderr' '
	expect_exit 2 $KJUDGE doctor --group bogus 2> e.txt
	grep -q "option .--group. wants sandbox, timing or runtimes, or a comma list of them, not .bogus.$" e.txt
	test "$(wc -l < e.txt)" -eq 1
	expect_exit 2 $KJUDGE doctor --group sandbox, 2> e.txt
	expect_exit 2 $KJUDGE doctor --group 2> e.txt
	grep -q "option .--group. needs a value" e.txt
	expect_exit 2 $KJUDGE doctor --bogus 2> e.txt
	grep -q "unknown option" e.txt
	expect_exit 2 $KJUDGE doctor --timeout 0 2> e.txt
	expect_exit 2 $KJUDGE doctor --timeout soon 2> e.txt
	grep -q "whole number" e.txt
	expect_exit 2 $KJUDGE doctor extra 2> e.txt
	grep -q "takes no operands" e.txt
'

test_expect 'on this machine (root) namespaces, seccomp and the private tmpfs are ok, and nothing is left behind' '
	mkdir tmp
	TMPDIR=$SCRATCH/tmp $KJUDGE doctor --json --group sandbox > s.json || true
	check_report s.json
	test -z "$(ls -A tmp)"
	test "$(status s.json seccomp)" = ok
	test "$(status s.json cgroups)" = ok
	if [ "$(id -u)" -eq 0 ]; then
		test "$(status s.json user-namespaces)" = ok
		test "$(status s.json namespaces)" = ok
		test "$(status s.json private-tmpfs)" = ok
		test "$(status s.json cgroup-memory)" = ok
	else
		echo "not root: the root-only expectations are not checked"
		test "$(status s.json namespaces)" = none
	fi
'

test_expect 'a KJ_PYTHON that does not exist fails the python probe with a fix' '
	rc=0; KJ_PYTHON=$SCRATCH/no/python $KJUDGE doctor --json --group runtimes > r.json || rc=$?
	test $rc -eq 1
	check_report r.json
	test "$(status r.json python)" = fail
	jget r.json "[c for c in d[\"checks\"] if c[\"name\"] == \"python\"][0]" > p.txt
	grep -q "no/python" p.txt
	grep -q "KJ_PYTHON" p.txt
	# nothing is said about modules of an interpreter that is not there
	test "$(status r.json torch)" = none
	KJ_PYTHON=$SCRATCH/no/python expect_exit 1 $KJUDGE doctor --group runtimes > out.txt
	grep -q "^  FAIL  python" out.txt
	# --python wins over KJ_PYTHON
	KJ_PYTHON=$SCRATCH/no/python $KJUDGE doctor --json --group runtimes \
		--python "$KJ_PYTHON" > r2.json || true
	test "$(status r2.json python)" = ok
'

test_expect 'the workers interpreter: modules it lacks, a crash, a hang' '
	fake bin py "echo noise; echo \"KJ_DOCTOR {\\\"python\\\": \\\"3.99\\\", \\\"numpy\\\": \\\"9.9\\\", \\\"torch\\\": null, \\\"torch_error\\\": \\\"ModuleNotFoundError: no torch\\\", \\\"triton\\\": null}\""
	expect_exit 1 $KJUDGE doctor --json --group runtimes --python bin/py > r.json
	check_report r.json
	test "$(status r.json python)" = ok
	test "$(status r.json numpy)" = ok
	test "$(status r.json torch)" = fail
	test "$(status r.json triton)" = warn
	test "$(status r.json torch-cuda)" = none
	jget r.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"torch\"][0]" | grep -q "no torch"

	fake bin crash "echo \"Fatal Python error: init failed\" >&2; exit 1"
	expect_exit 1 $KJUDGE doctor --json --group runtimes --python bin/crash > r.json
	test "$(status r.json python)" = fail
	jget r.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"python\"][0]" | grep -q "Fatal Python error"

	fake bin hang "sleep 6661"
	start=$(date +%s)
	expect_exit 1 $KJUDGE doctor --json --group runtimes --timeout 1 --python bin/hang > r.json
	test $(( $(date +%s) - start )) -lt 20
	jget r.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"python\"][0]" | grep -q "within 1 s"
	sleep 0.2
	! pgrep -f "sleep 6661"
'

test_expect 'no nvidia-smi is no GPU, not a problem' '
	mkdir empty
	PATH=$SCRATCH/empty:/usr/bin:/bin $KJUDGE doctor --json --group timing > t.json
	test "$(status t.json gpu)" = ok
	jget t.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"gpu\"][0]" | grep -q "no GPU"
	test "$(status t.json gpu-clocks)" = none
'

test_expect 'GPUs through nvidia-smi: clocks, slowdowns, persistence mode, the newer field name' '
	# This nvidia-smi knows only the newer name of the reasons field.
	fake bin nvidia-smi "case \"\$*\" in *clocks_throttle_reasons*) echo \"not a valid field\" >&2; exit 2;; esac
echo \"NVIDIA H200, 570.86.15, 345 MHz, 1980 MHz, 0x0000000000000001, Enabled\"
echo \"NVIDIA H200, 570.86.15, 1500 MHz, 1980 MHz, 0x0000000000000040, Disabled\""
	PATH=$SCRATCH/bin:$PATH $KJUDGE doctor --json --group timing > t.json
	check_report t.json
	test "$(status t.json gpu)" = ok
	jget t.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"gpu\"][0]" > g.txt
	grep -q "2 GPUs, driver 570.86.15" g.txt
	test "$(status t.json gpu-persistence)" = warn
	jget t.json "[c for c in d[\"checks\"] if c[\"name\"] == \"gpu-persistence\"][0]" > p.txt
	grep -q "nvidia-smi -pm 1" p.txt
	grep -q "off on GPU 1" p.txt
	test "$(status t.json gpu-clocks)" = warn
	jget t.json "[c for c in d[\"checks\"] if c[\"name\"] == \"gpu-clocks\"][0]" > c.txt
	grep -q "hardware thermal slowdown" c.txt
	grep -q "GPU 0: SM 345 of 1980 MHz (idle)" c.txt
	grep -q -- "--lock-gpu-clocks=" c.txt
'

test_expect 'an nvidia-smi that fails or hangs is a warning, and the doctor does not wait for it' '
	fake bin nvidia-smi "echo \"NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\"; exit 9"
	PATH=$SCRATCH/bin:$PATH $KJUDGE doctor --json --group timing > t.json
	test "$(status t.json gpu)" = warn
	jget t.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"gpu\"][0]" | grep -q "could not communicate"

	fake bin nvidia-smi "sleep 6662"
	start=$(date +%s)
	PATH=$SCRATCH/bin:$PATH $KJUDGE doctor --json --group timing --timeout 1 > t.json
	test $(( $(date +%s) - start )) -lt 20
	test "$(status t.json gpu)" = warn
	jget t.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"gpu\"][0]" | grep -q "did not answer within 1 s"
	sleep 0.2
	! pgrep -f "sleep 6662"
'

test_expect 'a doctor stopped by SIGTERM kills the program it waits for, exits 143 and prints no report' '
	fake bin nvidia-smi "sleep 6663"
	PATH=$SCRATCH/bin:$PATH $KJUDGE doctor --json --group timing > t.json 2> e.txt &
	pid=$!
	for i in $(seq 100); do pgrep -f "sleep 6663" > /dev/null && break; sleep 0.1; done
	pgrep -f "sleep 6663" > /dev/null
	kill -TERM $pid
	rc=0; wait $pid || rc=$?
	test $rc -eq 143
	grep -q "interrupted by SIGTERM" e.txt
	test ! -s t.json
	sleep 0.2
	! pgrep -f "sleep 6663"
'
test_done
