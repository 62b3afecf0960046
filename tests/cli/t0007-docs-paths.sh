#!/usr/bin/env bash
# t0007-docs-paths.sh - docs/ARCHITECTURE.md and docs/cli.md name only files
# that exist: every path under lib/, src/, tests/, docs/, worker/, include/,
# rules/, bench/ or examples/ (a test named by its number, tests/cli/t0005
# or t0005, is the file of that number), and every source file named
# alone in backquotes (`reply.c`, `spawn.h`) is somewhere in the tree
# (other names alone, `verify.py`, may be the seed scripts' or a layout's).
# A file renamed or removed without its page following fails here.
. "$(dirname "$0")/lib.sh"
root=$(cd "$KJ_TESTS/.." && pwd)

check_paths() {
	"$KJ_PYTHON" - "$root" "$@" <<'PY'
import glob, os, re, sys
root, docs = sys.argv[1], sys.argv[2:]
names = set()
for top, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if d not in (".git", "build", ".venv")]
    names.update(files)
def test_file(num):
    return glob.glob(os.path.join(root, "tests/cli", f"t{num}-*.sh"))
bad, seen = [], 0
for doc in docs:
    for n, line in enumerate(open(os.path.join(root, doc)), 1):
        for m in re.finditer(r"(?<![\w./$-])((?:lib|src|tests|docs|worker|include|rules|bench|examples)"
                             r"/[\w.*/-]*[\w*/])", line):
            p, seen = m.group(1).rstrip("/"), seen + 1
            t = re.fullmatch(r"tests/cli/t(\d{4})", p)
            ok = test_file(t.group(1)) if t else glob.glob(os.path.join(root, p))
            if not ok:
                bad.append(f"{doc}:{n}: {p}")
        for m in re.finditer(r"(?<![\w/.-])t(\d{4})(?![\w.-])", line):
            seen += 1
            if not test_file(m.group(1)):
                bad.append(f"{doc}:{n}: t{m.group(1)}")
        for m in re.finditer(r"`([\w-]+\.[ch])`", line):
            seen += 1
            if m.group(1) not in names:
                bad.append(f"{doc}:{n}: {m.group(1)}")
assert not bad, "names of files that do not exist:\n" + "\n".join(bad)
assert seen > 50, f"only {seen} file names found: the patterns no longer match the pages"
print(f"{seen} file names, all of existing files")
PY
}

# Every folder of lib/ and tests/, and src/, worker/ and include/kjudge/,
# is a row (its name in the first column) of the Layers section's tables.
check_layers() {
	"$KJ_PYTHON" - "$root" <<'PY'
import os, re, sys
root = sys.argv[1]
text = open(os.path.join(root, "docs/ARCHITECTURE.md")).read()
section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
rows = set()
for line in section.splitlines():
    if line.startswith("| "):
        rows.update(re.findall(r"`([\w./-]+/)`", line.split("|")[1]))
def dirs(top):
    return sorted(d for d in os.listdir(os.path.join(root, top))
                  if os.path.isdir(os.path.join(root, top, d)) and not d.startswith("."))
want = [d + "/" for d in dirs("lib")] + ["tests/" + d + "/" for d in dirs("tests")]
want += ["src/", "worker/", "include/kjudge/"]
missing = [w for w in want if w not in rows]
assert not missing, f"folders without a row in the Layers table: {missing}"
print(f"{len(want)} folders, each a row")
PY
}

test_expect 'every file docs/ARCHITECTURE.md and docs/cli.md name exists' '
	check_paths docs/ARCHITECTURE.md docs/cli.md
'

test_expect 'the check finds a path, a test number and a file name that do not exist' '
	mkdir -p docs &&
	printf "%s\n" "see \`lib/base/gone.c\`, t0009 and \`nothere.h\`; \`lib/base/vec.c\` is here" >docs/fake.md &&
	for i in $(seq 60); do echo "lib/base/vec.h" >>docs/fake.md; done &&
	root=$PWD &&
	mkdir -p lib/base tests/cli && touch lib/base/vec.c lib/base/vec.h &&
	! check_paths docs/fake.md >out 2>&1 &&
	grep -q "docs/fake.md:1: lib/base/gone.c" out &&
	grep -q "docs/fake.md:1: t0009" out &&
	grep -q "docs/fake.md:1: nothere.h" out &&
	! grep -q "vec" out
'
test_expect 'the Layers table of docs/ARCHITECTURE.md has a row for every folder' '
	check_layers
'
test_done
