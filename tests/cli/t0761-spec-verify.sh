#!/usr/bin/env bash
# t0761-spec-verify.sh - kjudge spec verify on tests/spec's program: every
# strategy passing and failing (all evaluated), the statuses and exit codes,
# hostile runs (a hang, 1 GB written, a fork bomb, a flood, a link written
# out), what the sandbox does not show, a candidate's overlay, the build
# cache, and whole-program timing.
. "$(dirname "$0")/lib.sh"
spec_root="$KJ_TESTS/spec"
base="$spec_root/specs/t-basic.json"
# One cache for the file: the program is built once, whatever the spec's
# strategies and arguments.
export KJ_CACHE_DIR="$kj_root/cache"

mkspec() {
	"$KJ_PYTHON" "$spec_root/mkspec.py" "$base" "$1" "$2"
}

# verify SPEC ARGS...: spec verify --json into r.json; its exit status.
verify() {
	local s=$1 rc=0
	shift
	"$KJUDGE" spec verify "$s" --root "$spec_root" --json "$@" >r.json 2>err || rc=$?
	return $rc
}

# args MODE...: the correctness arguments.
args() {
	printf 'd["run"]["input_configurations"]["correctness"]["arguments"] = %s' \
		"$("$KJ_PYTHON" -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@")"
}

test_expect 'the reference passes every strategy; the second verification builds nothing' '
	verify "$base"
	jget r.json "d[\"status\"]" | grep -qx PASS
	jget r.json "[s[\"status\"] for s in d[\"strategies\"]]" |
		grep -qx "\[.PASS., .PASS., .PASS., .PASS., .PASS., .PASS.\]"
	jget r.json "d[\"run\"][\"argv\"]" | grep -qx "\[.\./prog., .ok.\]"
	jget r.json "d[\"run\"][\"stdout_tail\"]" | grep -qx "argv0 ./prog"
	verify "$base"
	jget r.json "d[\"build\"][\"cached\"]" | grep -qx True
	jget r.json "d[\"status\"]" | grep -qx PASS
	# A kept build that lost its executable is made again, not a BUILD_FAIL.
	key=$(jget r.json "d[\"build\"][\"key\"]")
	rm "$KJ_CACHE_DIR/spec-builds/$key/tree/suite/basic/prog"
	verify "$base"
	jget r.json "(d[\"status\"], d[\"build\"][\"cached\"])" | grep -qxF "('"'"'PASS'"'"', False)"
	test -f "$KJ_CACHE_DIR/spec-builds/$key/tree/suite/basic/prog"
'

test_expect 'every strategy failing is reported, each with its reason (all evaluated)' '
	mkspec s.json "d[\"verification\"][\"strategies\"] = [
	  {\"type\": \"exit_code\", \"expected\": 1},
	  {\"type\": \"stdout_pattern\", \"pattern\": \"Nope\"},
	  {\"type\": \"stdout_exclude_pattern\", \"pattern\": \"simulation\"},
	  {\"type\": \"numeric_comparison\", \"extract_regex\": \"result: (\\\\S+)\", \"expected\": 2.5, \"tolerance\": 0.01},
	  {\"type\": \"file_hash\", \"path\": \"out.txt\", \"expected_sha256\": \"0\" * 64},
	  {\"type\": \"file_diff\", \"path\": \"out.txt\", \"reference_file\": \"wrong.txt\"}]"
	expect_exit 1 verify s.json
	jget r.json "d[\"status\"]" | grep -qx VERIFY_FAIL
	jget r.json "\"\\n\".join(s[\"status\"] + \" \" + s[\"detail\"] for s in d[\"strategies\"])" >got
	cat >want <<-EOF
	FAIL exit code 0, expected 1
	FAIL '"'"'Nope'"'"' not found in stdout
	FAIL '"'"'simulation'"'"' found in stdout: '"'"'simulation'"'"'
	FAIL got 1.5, expected 2.5: |difference| 1 is more than 0.01 (absolute)
	FAIL sha256 of '"'"'out.txt'"'"' is 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03, expected 0000000000000000000000000000000000000000000000000000000000000000
	FAIL '"'"'out.txt'"'"' differs from '"'"'wrong.txt'"'"' at byte 0 (sizes 6 and 8)
	EOF
	diff want got
'

test_expect 'a translation printing both PASS and FAIL is caught by stdout_exclude_pattern' '
	mkspec s.json "$(args both); d[\"verification\"][\"strategies\"] = [
	  {\"type\": \"stdout_pattern\", \"pattern\": \"PASS\"},
	  {\"type\": \"stdout_exclude_pattern\", \"pattern\": \"^FAIL\", \"multiline\": True}]"
	expect_exit 1 verify s.json
	jget r.json "d[\"status\"]" | grep -qx VERIFY_FAIL
	jget r.json "[(s[\"status\"], s[\"detail\"]) for s in d[\"strategies\"]]" |
		grep -qxF "[('"'"'PASS'"'"', \"'"'"'PASS'"'"' found in stdout: '"'"'PASS'"'"'\"), ('"'"'FAIL'"'"', \"'"'"'^FAIL'"'"' found in stdout: '"'"'FAIL'"'"'\")]"
'

test_expect 'a program that hangs is TIMEOUT at run.timeout_seconds' '
	mkspec s.json "$(args hang); d[\"run\"][\"timeout_seconds\"] = 1"
	expect_exit 1 verify s.json
	jget r.json "(d[\"status\"], d[\"run\"][\"reason\"])" |
		grep -qxF "('"'"'TIMEOUT'"'"', '"'"'passed its time limit of 1 s (run.timeout_seconds)'"'"')"
'

test_expect 'a program that writes 1 GB is stopped by the written-bytes limit' '
	mkspec s.json "$(args big)"
	expect_exit 1 verify s.json
	jget r.json "(d[\"status\"], d[\"run\"][\"reason\"])" |
		grep -qxF "('"'"'RUN_FAIL'"'"', '"'"'reached the written-bytes limit of 268435456 bytes (exited with status 4)'"'"')"
'

test_expect 'a program that forks without end is stopped by the process limit' '
	mkspec s.json "$(args fork)"
	KJ_LIMIT_PROCS=64 expect_exit 1 verify s.json
	jget r.json "d[\"status\"]" | grep -qx RUN_FAIL
	jget r.json "d[\"run\"][\"reason\"]" >reason
	# Where the machine gives a cgroup, its pids counter names the limit;
	# the rlimit alone shows in the refused fork.
	grep -qx "exited with status 3; the process limit (64) was reached" reason ||
		{ grep -qx "exited with status 3" reason &&
		  jget r.json "d[\"run\"][\"stderr_tail\"]" | grep -q "^fork: "; }
'

test_expect 'a program that floods stdout is stopped at the output limit' '
	mkspec s.json "$(args flood)"
	expect_exit 1 verify s.json --max-output-mb 1
	jget r.json "(d[\"status\"], d[\"run\"][\"reason\"])" |
		grep -qxF "('"'"'RUN_FAIL'"'"', '"'"'printed more than 1048576 bytes on stdout (the output limit): stopped'"'"')"
'

test_expect 'an output the program made a link out of the working directory is not read' '
	mkspec s.json "$(args symlink); d[\"verification\"][\"strategies\"] = d[\"verification\"][\"strategies\"][4:]"
	expect_exit 1 verify s.json
	jget r.json "\"\\n\".join(s[\"status\"] + \" \" + s[\"detail\"] for s in d[\"strategies\"])" >got
	printf "%s\n" "FAIL '"'"'out.txt'"'"' leads out of the working directory through a symbolic link: not read" \
		"FAIL '"'"'out.txt'"'"' leads out of the working directory through a symbolic link: not read" >want
	diff want got
'

test_expect 'verification-only files and expected outputs do not exist in the sandbox' '
	mkspec s.json "$(args peek); d[\"verification\"][\"strategies\"] = [
	  {\"type\": \"stdout_pattern\", \"pattern\": \"expected.txt absent\"},
	  {\"type\": \"stdout_pattern\", \"pattern\": \"secret.txt absent\"},
	  {\"type\": \"file_diff\", \"path\": \"none.txt\", \"reference_file\": \"expected.txt\"}]"
	expect_exit 1 verify s.json
	jget r.json "[s[\"status\"] for s in d[\"strategies\"]]" | grep -qx "\[.PASS., .PASS., .FAIL.\]"
'

test_expect 'repo_root copied whole when small, else source_dir and the input files where the arguments find them' '
	mkspec s.json "$(args read ../data/temp.txt ../data/other.txt);
d[\"run\"][\"input_configurations\"][\"correctness\"][\"input_files\"] = [\"../data/temp.txt\"];
d[\"verification\"][\"strategies\"] = [
  {\"type\": \"stdout_pattern\", \"pattern\": \"^../data/temp.txt: temperatures$\", \"multiline\": True},
  {\"type\": \"stdout_pattern\", \"pattern\": \"^../data/other.txt: not listed$\", \"multiline\": True}]"
	verify s.json
	jget r.json "(d[\"status\"], d[\"notes\"][\"copied\"][\"scope\"])" | grep -qxF "('"'"'PASS'"'"', '"'"'repo_root'"'"')"
	cp -r "$spec_root" proj
	head -c 2000000 /dev/zero >proj/suite/filler.bin
	sed -i "s/other.txt: not listed/other.txt: absent/" s.json
	"$KJUDGE" spec verify s.json --root proj --json --max-copy-mb 1 >r.json
	jget r.json "(d[\"status\"], d[\"notes\"][\"copied\"][\"scope\"])" |
		grep -qxF "('"'"'PASS'"'"', '"'"'source_dir and working_dir'"'"')"
	mkspec s.json "d[\"run\"][\"input_configurations\"][\"correctness\"][\"input_files\"] = [\"../../../x\"]"
	expect_exit 2 verify s.json
	grep -qx "kjudge spec: '"'"'s.json'"'"': run.input_configurations.correctness.input_files\[0\]: '"'"'../../../x'"'"' leaves the project tree" err
	# Another configuration'"'"'s inputs need not be there; the run'"'"'s must.
	mkspec s.json "c = d[\"run\"][\"input_configurations\"]; c[\"performance\"] = dict(c[\"correctness\"], input_files=[\"../data/big.txt\"])"
	verify s.json
	expect_exit 2 verify s.json --config performance
	grep -qx "kjudge spec: '"'"'s.json'"'"': run.input_configurations.performance.input_files\[0\]: '"'"'../data/big.txt'"'"' does not exist" err
'

test_expect 'numeric comparison just inside and just outside each tolerance type' '
	for c in "1.5099 absolute 1.5 0.01 PASS" "1.5101 absolute 1.5 0.01 FAIL" \
		 "1.4901 absolute 1.5 0.01 PASS" "201.99 relative 200 0.01 PASS" \
		 "202.01 relative 200 0.01 FAIL" "198.01 relative 200 0.01 PASS" \
		 "197.99 relative 200 0.01 FAIL"; do
		set -- $c
		mkspec s.json "$(args ok "$1"); d[\"verification\"][\"strategies\"] = [
		  {\"type\": \"numeric_comparison\", \"extract_regex\": \"result: (\\\\S+)\",
		   \"expected\": $3, \"tolerance\": $4, \"tolerance_type\": \"$2\"}]"
		verify s.json || :
		jget r.json "d[\"strategies\"][0][\"status\"]" | grep -qx "$5" || { echo "$c"; cat r.json; exit 1; }
	done
	jget r.json "d[\"strategies\"][0][\"detail\"]" |
		grep -qxF "got 197.99, expected 200: |difference| 2.01 is more than 0.01 * |expected| = 2 (relative)"
'

test_expect 'an unknown strategy and a malformed tolerance are ERROR, the others still evaluated' '
	mkspec s.json "d[\"verification\"][\"strategies\"][0] = {\"type\": \"custom_script\", \"script\": \"x.py\"}"
	expect_exit 1 verify s.json
	jget r.json "(d[\"status\"], d[\"strategies\"][0][\"status\"], d[\"strategies\"][0][\"detail\"])" |
		grep -qxF "('"'"'ERROR'"'"', '"'"'ERROR'"'"', \"unknown strategy type '"'"'custom_script'"'"'\")"
	jget r.json "[s[\"status\"] for s in d[\"strategies\"][1:]]" | grep -qx "\[.PASS., .PASS., .PASS., .PASS., .PASS.\]"
	for t in "-0.01:tolerance must be a finite number >= 0" \
		 "True:tolerance must be a number, not a bool or a string" \
		 "\"0.01\":tolerance must be a number, not a bool or a string"; do
		mkspec s.json "d[\"verification\"][\"strategies\"][3][\"tolerance\"] = ${t%%:*}"
		expect_exit 1 verify s.json
		jget r.json "(d[\"status\"], d[\"strategies\"][3][\"detail\"])" |
			grep -qxF "('"'"'ERROR'"'"', '"'"'${t#*:}'"'"')"
	done
	mkspec s.json "d[\"verification\"][\"strategies\"][3][\"tolerance_type\"] = \"percent\""
	expect_exit 1 verify s.json
	jget r.json "d[\"strategies\"][3][\"detail\"]" | grep -qx "tolerance_type must be .absolute. or .relative."
'

test_expect 'an empty list of strategies is SKIP, exit 1' '
	mkspec s.json "d[\"verification\"][\"strategies\"] = []"
	expect_exit 1 verify s.json
	jget r.json "(d[\"status\"], d[\"strategies\"])" | grep -qxF "('"'"'SKIP'"'"', [])"
	expect_exit 1 "$KJUDGE" spec verify s.json --root "$spec_root" >out
	head -n 1 out | grep -qx "t-basic-serial \[correctness\]: SKIP"
'

test_expect 'a candidate overlays only its translation targets; the rest is ignored, and said' '
	mkdir cand
	sed "s/argc > 2 ? argv\[2\] : RESULT/\"9.5\"/" "$spec_root/suite/basic/prog.c" >cand/prog.c
	printf "#define RESULT \"1.5\"\n#define MARKER \"none\"\n" >cand/prog.h
	echo x >cand/extra.txt
	expect_exit 1 verify "$base" --candidate cand
	grep -qx "kjudge spec: candidate '"'"'cand'"'"': 2 files not in files.translation_targets ignored" err
	jget r.json "sorted(d[\"notes\"][\"ignored_candidate_files\"])" | grep -qx "\[.extra.txt., .prog.h.\]"
	jget r.json "(d[\"build\"][\"cached\"], d[\"status\"])" | grep -qxF "(False, '"'"'VERIFY_FAIL'"'"')"
	# The marker is prog.h'"'"'s, which stayed the reference'"'"'s.
	jget r.json "[s[\"status\"] for s in d[\"strategies\"]]" | grep -qx "\[.PASS., .PASS., .PASS., .FAIL., .PASS., .PASS.\]"
'

test_expect 'a candidate without a target, or one that does not build' '
	mkdir empty
	expect_exit 2 verify "$base" --candidate empty
	grep -qx "kjudge spec: candidate '"'"'empty'"'"': files.translation_targets\[0\]: '"'"'prog.c'"'"' does not exist in the candidate" err
	mkdir bad
	echo "int main(void) { return }" >bad/prog.c
	expect_exit 1 verify "$base" --candidate bad
	jget r.json "(d[\"status\"], d[\"build\"][\"reason\"], d[\"run\"][\"status\"])" |
		grep -qxF "('"'"'BUILD_FAIL'"'"', '"'"'the build command failed'"'"', '"'"'SKIP'"'"')"
	jget r.json "{s[\"status\"] for s in d[\"strategies\"]}" | grep -qxF "{'"'"'SKIP'"'"'}"
'

test_expect 'a build command that hangs is TIMEOUT; a build without the executable is BUILD_FAIL' '
	mkspec s.json "d[\"build\"][\"commands\"][\"build\"] = \"sleep 30\""
	expect_exit 1 verify s.json --build-timeout 0.5
	jget r.json "(d[\"status\"], d[\"build\"][\"reason\"], d[\"build\"][\"commands\"][-1][\"how\"])" |
		grep -qxF "('"'"'TIMEOUT'"'"', '"'"'a build command passed its time limit of 0.5 s'"'"', '"'"'timed out'"'"')"
	mkspec s.json "d[\"build\"][\"commands\"][\"build\"] = \"true\""
	expect_exit 1 verify s.json
	jget r.json "(d[\"status\"], d[\"build\"][\"reason\"])" |
		grep -qxF "('"'"'BUILD_FAIL'"'"', \"build.outputs.executable '"'"'./prog'"'"' is missing after the build\")"
	mkspec s.json "d[\"build\"][\"commands\"][\"configure\"] = \"echo configured >&2; exit 3\""
	expect_exit 1 verify s.json
	jget r.json "(d[\"build\"][\"reason\"], d[\"build\"][\"commands\"][-1][\"stderr_tail\"])" |
		grep -qxF "('"'"'the configure command failed'"'"', '"'"'configured\\n'"'"')"
'

test_expect 'links in the source tree: one inside copied as its target, one out not copied' '
	cp -r "$spec_root" proj
	ln -s /etc/passwd proj/suite/basic/passwd
	ln -s prog.h proj/suite/basic/alias.h
	mkspec s.json "$(args read passwd alias.h); d[\"verification\"][\"strategies\"] = [
	  {\"type\": \"stdout_pattern\", \"pattern\": \"^passwd: absent$\", \"multiline\": True},
	  {\"type\": \"stdout_pattern\", \"pattern\": \"^alias.h: /. prog.h\", \"multiline\": True}]"
	"$KJUDGE" spec verify s.json --root proj --json >r.json
	jget r.json "(d[\"status\"], d[\"notes\"][\"links_not_copied\"])" |
		grep -qxF "('"'"'PASS'"'"', ['"'"'suite/basic/passwd'"'"'])"
'

test_expect 'KJ_SANDBOX=off runs the same verification as plain processes, and says so' '
	KJ_SANDBOX=off verify "$base"
	jget r.json "(d[\"status\"], d[\"limits\"][\"sandbox\"])" | grep -qxF "('"'"'PASS'"'"', False)"
'

test_expect 'whole-program timing: repeats, spread, and a speedup over the baseline' '
	verify "$base" --time --warmup 1 --repeats 3
	jget r.json "(len(d[\"timing\"][\"program\"][\"runs_s\"]), d[\"timing\"][\"warmup\"])" | grep -qx "(3, 1)"
	jget r.json "t = d[\"timing\"][\"program\"]; t[\"min_s\"] <= t[\"median_s\"] <= t[\"max_s\"]" 2>/dev/null ||
		py "import json; t = json.load(open(\"r.json\"))[\"timing\"][\"program\"]; assert t[\"min_s\"] <= t[\"median_s\"] <= t[\"max_s\"]"
	mkdir cand
	{ cat "$spec_root/suite/basic/prog.c"; echo "/* the same program */"; } >cand/prog.c
	verify "$base" --candidate cand --time --repeats 3 --baseline
	py "import json; t = json.load(open(\"r.json\"))[\"timing\"]
assert len(t[\"baseline\"][\"runs_s\"]) == 3 and t[\"speedup\"] > 0, t"
	expect_exit 2 "$KJUDGE" spec verify "$base" --root "$spec_root" --baseline 2>err
	grep -qx "kjudge spec: --baseline needs --time and --candidate" err
'

test_done
