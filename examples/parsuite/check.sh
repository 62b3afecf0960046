#!/usr/bin/env bash
# check.sh - the parsuite example suite checked without kjudge: the specs'
# file lists and names, the manifest, every variant built with make, the
# OpenMP and OpenCL variants run with their correctness arguments and each
# strategy of their oracle checked by hand (sha256sum, cmp, grep, awk).  The
# CUDA variants are compiled only, since this machine has no GPU.
#
#   check.sh                           every spec of the manifest
#   check.sh --spec FILE [--candidate DIR]
#                                      one spec; with a candidate, the files
#                                      of DIR named by the spec's
#                                      translation_targets replace the
#                                      pristine ones first
#
# Everything is built and run in a copy of parsuite-src/ under a temporary
# directory, so the tree stays clean and two runs do not meet.  The
# verification-only files are removed from that copy before the program
# runs, as in kjudge's sandbox, and compared from the pristine tree.
#
# Environment: NVCC (default /usr/local/cuda/bin/nvcc); PARSUITE_NO_CUDA=1
# skips the CUDA builds and says so.  Output: an "ok" or "FAIL" line per
# check, then a count.  Exit 0 when all passed, 1 when any failed, 2 for bad
# usage.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
spec_arg= candidate=
while [ $# -gt 0 ]; do
	case $1 in
	--spec) spec_arg=${2:?--spec takes a file}; shift 2 ;;
	--candidate) candidate=$(cd "${2:?--candidate takes a directory}" && pwd) || exit 2; shift 2 ;;
	*) echo "usage: check.sh [--spec FILE [--candidate DIR]]" >&2; exit 2 ;;
	esac
done
if [ -n "$candidate" ] && [ -z "$spec_arg" ]; then
	echo "check.sh: --candidate goes with --spec" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/parsuite-XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# The static checks and the plan, in Python: the specs are JSON.  Each plan
# line is TAB-separated: uid, api, working directory, build command,
# executable, then the correctness arguments (joined by \x1f).  The
# strategies go to $work/UID.strategies, one a line: type and its fields.
if [ -n "$spec_arg" ]; then
	specs=$(cd "$(dirname "$spec_arg")" && pwd)/$(basename "$spec_arg")
else
	specs=
fi
python3 - "$here" "$work" $specs > "$work/plan" <<'PY' || exit 2
import json, os, re, sys
root, work, only = sys.argv[1], sys.argv[2], sys.argv[3:]
paths = json.load(open(os.path.join(root, "config/paths.json")))
downloads = os.path.normpath(os.path.join(root, paths.get("downloads_root", ".")))
manifest = [json.loads(l) for l in open(os.path.join(root, "manifest.jsonl")) if l.strip()]
files = only or [os.path.join(root, m["spec_file"]) for m in manifest]
problems = []
def say(ok, what):
    if not ok:
        problems.append(what)
if not only:
    on_disk = sorted(os.path.relpath(os.path.join(root, "specs", f), root) for f in os.listdir(os.path.join(root, "specs")))
    same = sorted(m["spec_file"] for m in manifest) == on_disk
    print(("ok" if same else "FAIL") + "\tmanifest: every spec file is listed once, and no other")
for path in files:
    s = json.load(open(path))
    i = s["identity"]
    uid = i["unique_id"]
    say(uid == os.path.basename(path)[:-5] == f"{i['source_suite']}-{i['kernel_name']}-{i['parallel_api']}",
        f"{uid}: the id matches the file name and suite-kernel-api")
    say(s["implementation"]["api"] == i["parallel_api"], f"{uid}: implementation.api is identity.parallel_api")
    src = os.path.join(downloads, s["provenance"]["repo_root"], s["provenance"]["source_path"])
    f = s["files"]
    listed = f["prompt_payload"] + f.get("support_files", []) + f.get("verification_only", [])
    say(all(os.path.isfile(os.path.join(src, n)) for n in listed), f"{uid}: every listed file exists")
    say(not set(f["prompt_payload"]) & set(f.get("verification_only", [])), f"{uid}: no file is both in the prompt and verification-only")
    say(set(f.get("translation_targets", [])) <= set(f["prompt_payload"]), f"{uid}: the translation targets are in the prompt")
    orphans = sorted(set(n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n))) - set(listed))
    say(not orphans, f"{uid}: no file of the source directory is in no list {orphans if orphans else ''}")
    if not only:
        m = [e for e in manifest if e["spec_file"] == os.path.relpath(path, root)][0]
        say((m["kernel_name"], m["parallel_api"], os.path.normpath(os.path.join(root, m["source_dir"]))) ==
            (i["kernel_name"], i["parallel_api"], os.path.normpath(src)), f"{uid}: the manifest line agrees with the spec")
    print(("FAIL\t" + "; ".join(problems)) if problems else
          f"ok\t{uid}: names, file lists{' and manifest line' if not only else ''} as the rules want")
    problems.clear()
    r = s["run"]
    args = r["input_configurations"]["correctness"]["arguments"]
    b = s["build"]
    cmd = b["commands"]["build"]
    for name, var in (b.get("variables") or {}).items():
        cmd = cmd.replace("${" + name + "}", var["default"])
    wd = os.path.relpath(os.path.join(downloads, s["provenance"]["repo_root"], b["working_directory"]), downloads)
    with open(os.path.join(work, uid + ".strategies"), "w") as out:
        for st in s["verification"]["strategies"]:
            t = st["type"]
            fields = {"exit_code": ["expected"], "stdout_pattern": ["pattern"], "stdout_exclude_pattern": ["pattern"],
                      "numeric_comparison": ["extract_regex", "expected", "tolerance", "tolerance_type"],
                      "file_hash": ["path", "expected_sha256"], "file_diff": ["path", "reference_file"]}[t]
            out.write("\t".join([t] + [str(st.get(k, "absolute" if k == "tolerance_type" else 0)) for k in fields]) + "\n")
    with open(os.path.join(work, uid + ".remove"), "w") as out:
        out.write("".join(v + "\n" for v in f.get("verification_only", [])))
    with open(os.path.join(work, uid + ".targets"), "w") as out:
        out.write("".join(t + "\n" for t in f.get("translation_targets", f["prompt_payload"])))
    print("\t".join(["plan", uid, i["parallel_api"], wd, cmd, r["executable"], "\x1f".join(args), os.path.relpath(src, downloads)]))
PY
grep -v "^plan" "$work/plan" | while IFS=$'\t' read -r verdict what; do printf "%-4s %s\n" "$verdict" "$what"; done
passed=$((passed + $(grep -c '^ok' "$work/plan")))
failed=$((failed + $(grep -c '^FAIL' "$work/plan")))

# One copy of the sources for every run: the variants build in their own
# directories, so they do not meet in it.
mkdir "$work/tree" && cp -r "$here/parsuite-src" "$work/tree/"

# check_run UID WD OUT STATUS SRC: every strategy of UID against a run.
check_run() {
	local uid=$1 wd=$2 out=$3 status=$4 src=$5 type a b c d got
	while IFS=$'\t' read -r type a b c d; do
		case $type in
		exit_code)
			[ "$status" -eq "$a" ] && ok "$uid: exit status $status" || fail "$uid: exit status $status, not $a" ;;
		stdout_pattern)
			grep -Eq -- "$a" "$out" && ok "$uid: stdout has /$a/" || fail "$uid: stdout lacks /$a/" ;;
		stdout_exclude_pattern)
			grep -Eq -- "$a" "$out" && fail "$uid: stdout has the excluded /$a/" || ok "$uid: stdout has no /$a/" ;;
		numeric_comparison)
			got=$(sed -nE "s/.*$a.*/\\1/p" "$out" | head -n 1)
			if [ -n "$got" ] && awk -v g="$got" -v e="$b" -v t="$c" -v k="$d" 'BEGIN {
				diff = g - e; if (diff < 0) diff = -diff
				lim = (k == "relative") ? t * (e < 0 ? -e : e) : t
				exit !(diff <= lim) }'; then
				ok "$uid: $got is within $d $c of $b"
			else
				fail "$uid: '${got:-no match}' is not within $d $c of $b"
			fi ;;
		file_hash)
			got=$(sha256sum "$wd/$a" 2>/dev/null | cut -d' ' -f1)
			[ "$got" = "$b" ] && ok "$uid: sha256 of $a" || fail "$uid: sha256 of $a is ${got:-missing}, not $b" ;;
		file_diff)
			cmp -s "$wd/$a" "$src/$b" && ok "$uid: $a equals $b" || fail "$uid: $a differs from $b" ;;
		*) fail "$uid: unknown strategy $type" ;;
		esac
	done < "$work/$uid.strategies"
}

# build_one UID WD CMD: the variant's make in its working directory.
build_one() {
	(cd "$work/tree/$2" && make -s clean >/dev/null 2>&1; eval "$3") > "$work/$1.build" 2>&1
}

cuda_pids=()
while IFS=$'\t' read -r tag uid api wd cmd exe args src; do
	[ "$tag" = plan ] || continue
	if [ -n "$candidate" ]; then
		while IFS= read -r t; do
			cp "$candidate/$t" "$work/tree/$src/$t" || fail "$uid: the candidate has no $t"
		done < "$work/$uid.targets"
	fi
	if [ "$api" = cuda ]; then
		if [ "${PARSUITE_NO_CUDA:-}" = 1 ] || [ ! -x "$NVCC" ]; then
			echo "skip $uid: no CUDA compiler ($NVCC; PARSUITE_NO_CUDA=${PARSUITE_NO_CUDA:-})"
			continue
		fi
		# nvcc takes seconds a file: the CUDA builds run beside the rest.
		build_one "$uid" "$wd" "$cmd" & cuda_pids+=("$!:$uid:$wd:$exe")
		continue
	fi
	if ! build_one "$uid" "$wd" "$cmd" || [ ! -x "$work/tree/$wd/$exe" ]; then
		fail "$uid: build"
		sed 's/^/    | /' "$work/$uid.build" | tail -n 20
		continue
	fi
	ok "$uid: build"
	while IFS= read -r v; do
		[ -n "$v" ] && rm -f "$work/tree/$src/$v"
	done < "$work/$uid.remove"
	IFS=$'\x1f' read -r -a argv <<< "$args"
	status=0
	(cd "$work/tree/$wd" && timeout 60 "$exe" "${argv[@]}") > "$work/$uid.out" 2> "$work/$uid.err" || status=$?
	check_run "$uid" "$work/tree/$wd" "$work/$uid.out" "$status" "$here/$src"
	if [ "$status" -ne 0 ]; then
		sed 's/^/    | /' "$work/$uid.out" "$work/$uid.err" | tail -n 20
	fi
done < "$work/plan"
for entry in "${cuda_pids[@]}"; do
	IFS=: read -r pid uid wd exe <<< "$entry"
	if wait "$pid" && [ -x "$work/tree/$wd/$exe" ]; then
		ok "$uid: build (compiled only: no GPU here)"
	else
		fail "$uid: build"
		sed 's/^/    | /' "$work/$uid.build" | tail -n 20
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
