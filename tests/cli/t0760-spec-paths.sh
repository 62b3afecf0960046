#!/usr/bin/env bash
# t0760-spec-paths.sh - kjudge spec prompt, and the paths of a spec held
# inside the project tree: '..', absolute paths, symbolic links, a missing
# file, config/paths.json's downloads_root; each refusal with its message.
. "$(dirname "$0")/lib.sh"
spec_root="$KJ_TESTS/spec"
base="$spec_root/specs/t-basic.json"

# mkspec OUT STATEMENTS: the base spec changed by Python statements over d.
mkspec() {
	"$KJ_PYTHON" "$spec_root/mkspec.py" "$base" "$1" "$2"
}

# A copy of tests/spec to add links to.
proj() {
	cp -r "$spec_root" proj
}

test_expect 'prompt prints exactly the payload files, each after a header line' '
	"$KJUDGE" spec prompt "$base" --root "$spec_root" >got
	src="$spec_root/suite/basic"
	{ printf "==> prog.c (%s bytes) <==\n" "$(wc -c <"$src/prog.c")"; cat "$src/prog.c"; echo
	  printf "==> prog.h (%s bytes) <==\n" "$(wc -c <"$src/prog.h")"; cat "$src/prog.h"; echo; } >want
	cmp got want
	! grep -q "Makefile\|not for the program" got
'

test_expect 'prompt takes no option of verify' '
	expect_exit 2 "$KJUDGE" spec prompt "$base" --root "$spec_root" --json 2>err
	grep -qx "kjudge spec: --json is an option of '"'"'spec verify'"'"', not of '"'"'spec prompt'"'"'" err
	expect_exit 2 "$KJUDGE" spec frobnicate "$base" 2>err
	grep -qx "kjudge spec: '"'"'frobnicate'"'"' is not a spec subcommand (prompt, verify, validate, pairs, argc)" err
'

# refused FIELD-STATEMENT MESSAGE: the spec changed by STATEMENT is refused
# by both commands with "kjudge spec: 'S': MESSAGE" and exit 2.
refused() {
	mkspec s.json "$1"
	expect_exit 2 "$KJUDGE" spec prompt s.json --root "${root:-$spec_root}" 2>err
	printf "kjudge spec: 's.json': %s\n" "$2" >want
	diff want err
	expect_exit 2 "$KJUDGE" spec verify s.json --root "${root:-$spec_root}" 2>err
	diff want err
}

test_expect 'a payload file escaping by .. is refused, naming the field' '
	refused "d[\"files\"][\"prompt_payload\"].append(\"../../../etc/passwd\")" \
		"files.prompt_payload[2]: '"'"'../../../etc/passwd'"'"' leaves the project tree"
'

test_expect 'an absolute path outside the tree is refused' '
	refused "d[\"files\"][\"support_files\"] = [\"/etc/passwd\"]" \
		"files.support_files[0]: '"'"'/etc/passwd'"'"' is an absolute path outside the project tree"
	refused "d[\"build\"][\"working_directory\"] = \"/tmp\"" \
		"build.working_directory: '"'"'/tmp'"'"' is an absolute path outside the project tree"
	refused "d[\"provenance\"][\"repo_root\"] = \"../..\"" \
		"provenance.repo_root: '"'"'../..'"'"' leaves the project tree"
'

test_expect 'a symbolic link in the source tree that leaves it is refused' '
	proj
	ln -s /etc/passwd proj/suite/basic/leak.c
	root=proj refused "d[\"files\"][\"prompt_payload\"].append(\"leak.c\")" \
		"files.prompt_payload[2]: '"'"'leak.c'"'"' leaves the project tree through the symbolic link '"'"'suite/basic/leak.c'"'"'"
	ln -s ../../../.. proj/suite/basic/up
	root=proj refused "d[\"files\"][\"verification_only\"] = [\"up/etc/passwd\"]" \
		"files.verification_only[0]: '"'"'up/etc/passwd'"'"' leaves the project tree through the symbolic link '"'"'suite/basic/up'"'"'"
'

test_expect 'a link that stays inside is followed, and prompt shows its target' '
	proj
	ln -s prog.h proj/suite/basic/alias.h
	mkspec s.json "d[\"files\"][\"prompt_payload\"] = [\"alias.h\"]"
	"$KJUDGE" spec prompt s.json --root proj >got
	{ printf "==> alias.h (%s bytes) <==\n" "$(wc -c <proj/suite/basic/prog.h)"
	  cat proj/suite/basic/prog.h; echo; } >want
	cmp got want
'

test_expect 'a missing file, a strategy path out of the working directory, a missing config' '
	refused "d[\"files\"][\"support_files\"] = [\"nope.h\"]" \
		"files.support_files[0]: '"'"'nope.h'"'"' does not exist"
	refused "d[\"verification\"][\"strategies\"][4][\"path\"] = \"../../x\"" \
		"verification.strategies[4].path: '"'"'../../x'"'"' leaves the working directory"
	refused "d[\"verification\"][\"strategies\"][5][\"reference_file\"] = \"../../../../x\"" \
		"verification.strategies[5].reference_file: '"'"'../../../../x'"'"' leaves the project tree"
	expect_exit 2 "$KJUDGE" spec verify "$base" --root "$spec_root" --config nope 2>err
	grep -qx "kjudge spec: '"'"'$base'"'"': no input configuration '"'"'nope'"'"' (it has: correctness)" err
'

test_expect 'a spec with a duplicate key, NaN or not an object is refused with its place' '
	printf "{\"identity\": {}, \"identity\": {}}\n" >dup.json
	expect_exit 2 "$KJUDGE" spec prompt dup.json --root "$spec_root" 2>err
	grep -qx "kjudge spec: dup.json:1:18: duplicate key '"'"'identity'"'"' in an object" err
	printf "[1]\n" >arr.json
	expect_exit 2 "$KJUDGE" spec prompt arr.json --root "$spec_root" 2>err
	grep -qx "kjudge spec: arr.json:1:1: expected an object at the top level, found an array" err
	printf "{\"a\": NaN}\n" >nan.json
	expect_exit 2 "$KJUDGE" spec verify nan.json --root "$spec_root" 2>err
	grep -qx "kjudge spec: nan.json:1:7: NaN is not JSON (numbers must be finite)" err
	mkspec s.json "del d[\"run\"][\"executable\"]"
	expect_exit 2 "$KJUDGE" spec prompt s.json --root "$spec_root" 2>err
	grep -qx "kjudge spec: '"'"'s.json'"'"': run.executable: is required" err
'

test_expect 'config/paths.json moves the tree to downloads_root, relative to the root' '
	mkdir -p proj/config proj/dl
	cp -r "$spec_root/suite" proj/dl/
	printf "{\"downloads_root\": \"dl\"}\n" >proj/config/paths.json
	"$KJUDGE" spec prompt "$base" --root proj >got
	head -n 1 got | grep -qx "==> prog.c ([0-9]* bytes) <=="
	expect_exit 2 "$KJUDGE" spec prompt "$base" --root "$spec_root/suite" 2>err
	grep -q "provenance.repo_root: '"'"'suite'"'"' does not exist" err
'

test_done
