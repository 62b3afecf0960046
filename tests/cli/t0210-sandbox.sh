#!/usr/bin/env bash
# t0210-sandbox.sh - the candidate's sandbox as verify starts it: what the
# candidate can see whatever PYTHONPATH, KJ_PYTHON or /opt hold (never the
# task's directory, the golden cache or the seed key), a cgroup limit that
# cannot be written (a judge error, never an unlimited run), the quota
# on the files the candidate writes, and the reference in the same kind of
# sandbox.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state

# task DIR: the hostile corpus' task (addmul) in DIR.
task() {
	mkdir -p "$1"
	cp "$KJ_TESTS/candidates/addmul_torch.py" "$1/"
}

# prober DIR TASKDIR CACHE STATE: a candidate in DIR that reads every
# reference (a *_torch.py with its Model), golden output (.npy) and seed
# key it can find under the three directories, and raises naming them;
# it is right only when it finds none.
prober() {
	cat > "$1/addmul_triton_ascend_impl.py" <<PY
import os
import torch.nn as nn

LOOK = ["$2", "$3", "$4"]


def readable():
    got = []
    for root in LOOK:
        for d, dirs, files in os.walk(root):
            for f in files:
                p = os.path.join(d, f)
                try:
                    with open(p, "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                if f.endswith(".npy") or f == "seed-key" or \\
                        (f.endswith("_torch.py") and b"class Model" in data):
                    got.append(p)
    return got


class ModelNew(nn.Module):
    def forward(self, x, y):
        got = readable()
        if got:
            raise RuntimeError("the candidate can read " + ", ".join(got[:6]))
        return x * y + x
PY
}

# passed FILE: all three cases of the verify record passed.
passed() {
	test "$(jget "$1" "(d[\"passed_cases\"], d[\"total_cases\"])")" = "(3, 3)"
}

# hidden FILE ACTION WHAT: the record says a path was left out or hidden
# because it is WHAT.
hidden() {
	test "$(jget "$1" "any(h[\"action\"] == \"$2\" and \"$3\" in h[\"what\"] for h in d[\"kjudge\"][\"limits\"][\"candidate_in_force\"][\"hidden\"])")" = True
}

test_expect 'PYTHONPATH naming the task directory and the cache shows neither' '
	task d
	export KJ_CACHE_DIR=$SCRATCH/cache
	prober d "$SCRATCH/d" "$SCRATCH/cache" "$KJ_STATE_DIR"
	# The prober is not blind: outside the sandbox it finds the reference.
	KJ_SANDBOX=off $KJUDGE verify --op_name addmul --verify_dir d --device cpu > /dev/null || true
	test "$(jget d/verify_result.json "d[\"passed_cases\"]")" = 0
	jget d/verify_result.json "d[\"failures\"][0][\"error_msg\"]" | grep -q "addmul_torch.py"
	# In it, twice: the second run finds the goldens of the first in the
	# cache (fixed seeds share them), which PYTHONPATH names, and the
	# candidate still sees none.
	for run in 1 2; do
		PYTHONPATH="$SCRATCH/d:$SCRATCH/cache:$SCRATCH" \
			$KJUDGE verify --op_name addmul --verify_dir d --device cpu --seed 5 > /dev/null
		passed d/verify_result.json
	done
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"] > 0")" = True
	hidden d/verify_result.json "not bound" "task"
	hidden d/verify_result.json "not bound" "golden cache"
	# $SCRATCH itself holds the task, the cache and nothing else the
	# candidate may see: bound, with both hidden in it.
	hidden d/verify_result.json "hidden" "task"
	hidden d/verify_result.json "hidden" "golden cache"
'

test_expect 'KJ_PYTHON in a directory that also holds the cache: the cache is hidden' '
	task d
	base=$("$KJ_PYTHON" -c "import sys; print(sys._base_executable)")
	site=$("$KJ_PYTHON" -c "import sysconfig; print(sysconfig.get_paths()[\"purelib\"])")
	site=$(cd "$site" && pwd -P)
	"$base" -m venv --without-pip "$SCRATCH/py"
	export KJ_PYTHON=$SCRATCH/py/bin/python PYTHONPATH=$site KJ_CACHE_DIR=$SCRATCH/py/kjcache
	prober d "$SCRATCH/d" "$SCRATCH/py/kjcache" "$KJ_STATE_DIR"
	for run in 1 2; do
		$KJUDGE verify --op_name addmul --verify_dir d --device cpu --seed 5 > /dev/null
		passed d/verify_result.json
	done
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"] > 0")" = True
	ls "$SCRATCH"/py/kjcache | grep -q .
	hidden d/verify_result.json "hidden" "golden cache"
'

# in_private_ns SCRIPT: run SCRIPT in a mount namespace of its own (as root,
# or as root of a user namespace of its own), so that what it mounts is
# seen by it alone; status 77 when the machine allows neither.
in_private_ns() {
	if unshare -m --propagation private true 2>/dev/null; then
		unshare -m --propagation private sh -c "$1"
	elif unshare -rm --propagation private true 2>/dev/null; then
		unshare -rm --propagation private sh -c "$1"
	else
		return 77
	fi
}

test_expect 'the state directory under /opt (a tmpfs over /opt in a private namespace): the key is hidden' '
	test -d /opt || { echo "note: no /opt on this machine"; exit 0; }
	task d
	prober d "$SCRATCH/d" /opt/kjcache /opt/kjstate
	in_private_ns "mount -t tmpfs kj-test-opt /opt &&
		KJ_STATE_DIR=/opt/kjstate KJ_CACHE_DIR=/opt/kjcache $KJUDGE verify --op_name addmul \
			--verify_dir d --device cpu > /dev/null &&
		test -s /opt/kjstate/seed-key && ls /opt/kjcache | grep -q ." || {
		rc=$?; [ $rc -eq 77 ] && { echo "note: no private mount namespace here"; exit 0; }
		exit $rc; }
	passed d/verify_result.json
	hidden d/verify_result.json "hidden" "seed key"
	hidden d/verify_result.json "hidden" "golden cache"
'

test_expect 'a cgroup limit that cannot be written stops the run: exit 2, no verdict' '
	task d
	cp "$KJ_TESTS/candidates/pass/candidate.py" d/addmul_triton_ascend_impl.py
	# A v1 memory hierarchy whose groups take no limit (the files are not
	# there), over /sys/fs/cgroup in a private namespace.
	in_private_ns "mount -t tmpfs kj-test-cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/memory &&
		touch /sys/fs/cgroup/memory/tasks &&
		$KJUDGE verify --op_name addmul --verify_dir d --device cpu > out.txt 2> err.txt" && rc=0 || rc=$?
	[ $rc -eq 77 ] && { echo "note: no private mount namespace here"; exit 0; }
	test $rc -eq 2
	grep -q "memory.limit_in_bytes" err.txt
	grep -qi "sandbox\|cgroup" err.txt
	test ! -e d/verify_result.json
'
# probe_task DIR: a task whose reference adds 1 to its answer unless it runs
# under a seccomp filter, in a network namespace of its own (no interface
# up), and can read the data file beside it; its candidate computes the
# plain answer, so the cases pass only where the reference runs in the
# same kind of sandbox as the candidate.
probe_task() {
	mkdir -p "$1"
	echo 3 > "$1/data.txt"
	cat > "$1/probe_torch.py" <<'PY'
import os
import torch
import torch.nn as nn


def sandboxed():
    with open("/proc/self/status") as f:
        seccomp = any(l.split() == ["Seccomp:", "2"] for l in f)
    with open("/proc/net/dev") as f:
        up = [l.split(":")[0].strip() for l in f.readlines()[2:]]
    return seccomp and up == ["lo"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data.txt")) as f:
            self.k = float(f.read())
        self.off = 0.0 if sandboxed() else 1.0

    def forward(self, x):
        return x * self.k + self.off


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
PY
	cat > "$1/probe_triton_ascend_impl.py" <<'PY'
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 3.0
PY
}

# secret_task DIR FILE...: the addmul task in DIR whose reference adds 1 to
# its answer when it can read any of the FILEs, and the secret_reader
# candidate, which raises naming every private file it can read.
secret_task() {
	local dir=$1 look
	shift
	look=$(printf '"%s", ' "$@")
	mkdir -p "$dir"
	cat > "$dir/addmul_torch.py" <<PY
import torch
import torch.nn as nn

LOOK = [$look]


def reads_any():
    for p in LOOK:
        try:
            with open(p, "rb") as f:
                f.read(1)
            return True
        except OSError:
            pass
    return False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.off = 1.0 if reads_any() else 0.0

    def forward(self, x, y):
        return x * y + x + self.off


def get_input_groups():
    return [[torch.randn(64), torch.randn(64)], [torch.randn(33, 17), torch.randn(33, 17)],
            [torch.randn(8, 128), torch.randn(8, 128)]]


def get_init_inputs():
    return []
PY
	cp "$KJ_TESTS/candidates/secret_reader/candidate.py" "$dir/addmul_triton_ascend_impl.py"
}

# leaked FILE PATH: the candidate's error names PATH (it read that file).
leaked() {
	jget "$1" "d[\"failures\"][0][\"error_msg\"]" | grep -q -e " $2\( \|\$\)"
}

# hidden_ref FILE WHAT: the reference's record says a path was left out
# because it is WHAT.
hidden_ref() {
	test "$(jget "$1" "any(h[\"action\"] == \"not bound\" and \"$2\" in h[\"what\"] for h in d[\"kjudge\"][\"limits\"][\"reference_in_force\"][\"hidden\"])")" = True
}

test_expect 'as root: neither side reads the private files of /etc and /root, even with PYTHONPATH=/root' '
	kj_host_lock -x
	[ "$(id -u)" = 0 ] || { echo "note: not root, see the next test"; exit 0; }
	tag=kj-probe-$$-$RANDOM
	trap "rm -rf /etc/$tag /etc/$tag.d /root/$tag" EXIT
	# A root-only file and directory in /etc (as shadow and ssl/private
	# are), and a root-only file in /root.
	(umask 077 && echo "$tag-etc" > /etc/$tag && mkdir /etc/$tag.d && echo "$tag-key" > /etc/$tag.d/key &&
		echo "$tag-root" > /root/$tag)
	chmod 644 /etc/$tag.d/key
	secret_task d /etc/$tag /etc/$tag.d/key /root/$tag
	# The probes are not blind: outside the sandbox both read them.
	test "$(cd d && "$KJ_PYTHON" -c "import addmul_torch; print(addmul_torch.Model().off)")" = 1.0
	KJ_SANDBOX=off PYTHONPATH=/root $KJUDGE verify --op_name addmul --verify_dir d --device cpu > /dev/null || true
	test "$(jget d/verify_result.json "d[\"passed_cases\"]")" = 0
	leaked d/verify_result.json "/etc/$tag"
	leaked d/verify_result.json "/etc/$tag.d"
	leaked d/verify_result.json "/root/$tag"
	# In it, the candidate finds nothing private, and the reference
	# computes the plain answer: every case passes.
	PYTHONPATH=/root $KJUDGE verify --op_name addmul --verify_dir d --device cpu > out.txt
	passed d/verify_result.json
	hidden d/verify_result.json "not bound" "home directory"
	hidden_ref d/verify_result.json "home directory"
'

# as_user USER SCRIPT: run SCRIPT (sh) as USER, in a mount namespace of
# this test, where /root is made passable when the workers' Python lives
# under it (the rest of /root stays out of reach); status 77 when no such
# namespace can be made.
as_user() {
	unshare -m --propagation private true 2>/dev/null || return 77
	unshare -m --propagation private sh -c "
		set -e
		if ! runuser -u $1 -- \"$KJ_PYTHON\" -c 1 2>/dev/null; then
			keep=\$(mktemp -d)
			mount --rbind /root/.pyenv \"\$keep\"
			mount -t tmpfs -o mode=0711,size=1m kj-test-root /root
			mkdir /root/.pyenv
			mount --move \"\$keep\" /root/.pyenv
			rmdir \"\$keep\"
		fi
		exec runuser -u $1 -- sh -c '$2'"
}

test_expect 'as an ordinary user: the user'"'"'s own private files in /etc and its home stay out' '
	kj_host_lock -x
	[ "$(id -u)" = 0 ] || { echo "note: not root: no user to become"; exit 0; }
	command -v useradd > /dev/null && command -v runuser > /dev/null ||
		{ echo "note: no useradd or runuser here"; exit 0; }
	user=kjprobe made=
	if ! id "$user" > /dev/null 2>&1; then
		useradd -m -s /bin/sh "$user"
		made=1
	fi
	home=$(getent passwd "$user" | cut -d: -f6)
	tag=kj-probe-$$-$RANDOM
	trap "rm -rf /etc/$tag $home/$tag; [ -z \"$made\" ] || userdel -r $user 2>/dev/null" EXIT
	if ! runuser -u "$user" -- unshare -Ur true 2>/dev/null; then
		echo "note: no user namespace for an ordinary user here"
		exit 0
	fi
	# The user'"'"'s own private files: one in /etc, one in its home.
	install -o "$user" -m 600 /dev/null /etc/$tag
	echo "$tag-etc" > /etc/$tag
	install -o "$user" -m 600 /dev/null "$home/$tag"
	echo "$tag-home" > "$home/$tag"
	chmod 711 "$kj_root" "$SCRATCH"
	secret_task d /etc/$tag "$home/$tag"
	chown -R "$user" d
	run="cd $SCRATCH && env -i PATH=/usr/bin:/bin HOME=$home PYTHONPATH=$home KJ_PYTHON=$KJ_PYTHON \
		KJ_STATE_DIR=$SCRATCH/d/.state KJ_CACHE_DIR=$SCRATCH/d/.cache"
	# Not blind: outside the sandbox the user reads both.
	as_user "$user" "$run KJ_SANDBOX=off $KJUDGE verify --op_name addmul --verify_dir d --device cpu" \
		> /dev/null || { rc=$?; [ $rc -eq 77 ] && { echo "note: no mount namespace here"; exit 0; }; }
	leaked d/verify_result.json "/etc/$tag"
	leaked d/verify_result.json "$home/$tag"
	as_user "$user" "$run $KJUDGE verify --op_name addmul --verify_dir d --device cpu" > out.txt
	passed d/verify_result.json
	hidden d/verify_result.json "not bound" "home directory"
	hidden_ref d/verify_result.json "home directory"
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"limits\"][\"isolation\"][\"candidate\"]")" = sandbox
'

test_expect 'the reference runs in the same kind of sandbox as the candidate, seeing its own directory' '
	probe_task d
	$KJUDGE verify --op_name probe --verify_dir d --device cpu > out.txt
	test "$(jget d/verify_result.json "d[\"passed_cases\"]")" = 1
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"limits\"][\"isolation\"] == dict(reference=\"sandbox\", candidate=\"sandbox\")")" = True
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"limits\"][\"reference_in_force\"][\"isolation\"]")" = sandbox
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"limits\"][\"reference_in_force\"][\"nofile\"]")" = \
		"$(jget d/verify_result.json "d[\"kjudge\"][\"limits\"][\"candidate_in_force\"][\"nofile\"]")"
	$KJUDGE benchmark --op_name probe --verify_dir d --device cpu --output perf.json > /dev/null
	test "$(jget perf.json "d[\"per_shape_results\"][0][\"status\"]")" = pass
	# The probe is not blind: outside the sandbox the reference is off by one.
	KJ_SANDBOX=off $KJUDGE verify --op_name probe --verify_dir d --device cpu > /dev/null || true
	test "$(jget d/verify_result.json "d[\"passed_cases\"]")" = 0
'
# budget_ok FILE WORKERS: the memory limit of FILE's kjudge.limits is the
# formula's for the figures the run recorded (docs/cli.md, "Memory"):
# (available - max(1 GiB, available / 8)) / WORKERS in whole MiB, at least
# 256 MiB, in force around both workers, each the OOM killer's first choice.
budget_ok() {
	py "
import json
d = json.load(open('$1'))['kjudge']['limits']
b = d['memory_budget']
a = b['available_bytes']
h = max(1 << 30, a // 8)
per = max(256 << 20, ((a - h) // $2) & ~((1 << 20) - 1))
assert b['workers'] == $2 and b['headroom_bytes'] == h and b['per_worker_bytes'] == per, b
assert b['limit_bytes'] == per and not b['user_limit'] and not b['oversubscribed'], b
assert d['configured']['memory_bytes'] == per, d['configured']
for side in ('candidate_in_force', 'reference_in_force'):
    f = d[side]
    assert f['memory_bytes'] in (per, 0), f    # 0: no cgroup could be made here
    assert f['oom_score_adj'] == 1000, f
"
}

test_expect 'a worker'"'"'s default memory limit is its share of what the machine has; a limit that oversubscribes it is said' '
	task d
	cp "$KJ_TESTS/candidates/pass/candidate.py" d/addmul_triton_ascend_impl.py
	$KJUDGE verify --op_name addmul --verify_dir d --output r.json > /dev/null 2> e.txt
	budget_ok r.json 2
	# A PyTorch candidate: the static check'"'"'s warning (t0810) and nothing else.
	test -z "$(grep -v "^kjudge verify: warning: the static check failed" e.txt)"
	# What was available is what the machine says now, near enough.
	py "
import json
b = json.load(open(\"r.json\"))[\"kjudge\"][\"limits\"][\"memory_budget\"]
now = [int(l.split()[1]) << 10 for l in open(\"/proc/meminfo\") if l.startswith(\"MemAvailable:\")][0]
assert b[\"source\"] == \"cgroup\" or 0.7 * now < b[\"available_bytes\"] < 1.3 * now, (b, now)
"
	# The user'"'"'s limit wins; one the machine cannot hold twice is said.
	KJ_LIMIT_MEM_MB=512 $KJUDGE verify --op_name addmul --verify_dir d --output u.json > /dev/null 2> e.txt
	test -z "$(grep -v "^kjudge verify: warning: the static check failed" e.txt)"
	test "$(jget u.json "(b := d[\"kjudge\"][\"limits\"][\"memory_budget\"]) and (b[\"limit_bytes\"], b[\"user_limit\"], b[\"oversubscribed\"])")" = "(536870912, True, False)"
	KJ_LIMIT_MEM_MB=100000000 $KJUDGE verify --op_name addmul --verify_dir d --output o.json > /dev/null 2> e.txt
	grep -q "^kjudge verify: warning: KJ_LIMIT_MEM_MB=100000000 for each of 2 workers at once (the reference.s and the candidate.s), with [0-9.]* GiB kept for the judge, is more than the [0-9.]* GiB available" e.txt
	test "$(jget o.json "(d[\"passed_cases\"], d[\"kjudge\"][\"limits\"][\"memory_budget\"][\"oversubscribed\"])")" = "(3, True)"
'

test_expect 'in a memory cgroup of 2 GiB each of verify'"'"'s workers gets 512 MiB, and the memory hog fails there as MemoryLimitExceeded' '
	# The judge in a v1 memory cgroup of its own (where workers get groups
	# of their own beside it): what is available is then 2 GiB, and each
	# worker (2 GiB - 1 GiB) / 2.  Elsewhere (v2, or no cgroup to write)
	# there is nothing to put the judge in.
	cg=/sys/fs/cgroup/memory/kjtest-$$
	if ! mkdir "$cg" 2> /dev/null; then
		echo "# no v1 memory cgroup can be made here: the budget'"'"'s cgroup path is the unit tests'"'"'"
		exit 0
	fi
	trap "rmdir $cg" EXIT
	echo $((2 << 30)) > "$cg/memory.limit_in_bytes"
	task d
	cp "$KJ_TESTS/candidates/memory_hog/candidate.py" d/addmul_triton_ascend_impl.py
	start=$(date +%s)
	expect_exit 1 sh -c "echo \$\$ > $cg/cgroup.procs && exec $KJUDGE verify --op_name addmul --verify_dir d --timeout 20 --output r.json" > /dev/null
	budget_ok r.json 2
	test "$(jget r.json "(b := d[\"kjudge\"][\"limits\"][\"memory_budget\"]) and (b[\"source\"], b[\"available_bytes\"], b[\"per_worker_bytes\"])")" = "('"'"'cgroup'"'"', 2147483648, 536870912)"
	test "$(jget r.json "[f[\"error_type\"] for f in d[\"failures\"]] == [\"MemoryLimitExceeded\"] * 3")" = True
	# Within the timeout of each case, not at the end of a long swap.
	test $(( $(date +%s) - start )) -lt 90
'

test_done
