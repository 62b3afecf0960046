#!/bin/sh
# The figures issue 26 asks for, from a checkout (default: this one):
# lines per C file (the 15 longest), the 15 longest functions, which files
# include <sqlite3.h>, and the lines of src/cmd_eval.c.  Functions are
# counted from a line holding only "{" at column 0 to the next "}" at
# column 0 (the project's style), named by the signature's first line.
# Usage: bench/structure/measure.sh [CHECKOUT]
set -eu
root=${1:-$(dirname "$0")/../..}
cd "$root"
echo "== lines per file (C sources in lib/ and src/), longest 15"
wc -l lib/*/*.c src/*.c | sort -rn | sed -n '2,16p'
echo "== total"
wc -l lib/*/*.c lib/*/*.h src/*.c src/*.h include/kjudge/*.h 2>/dev/null | tail -1
echo "== longest functions, 15"
for f in lib/*/*.c src/*.c; do
	awk -v f="$f" '
		/^[A-Za-z_].*\(/ && !/;$/ { sig = $0 }
		/^\{$/ { start = NR; name = sig; next }
		/^\}/ && start { n = NR - start + 1; sub(/\(.*/, "", name);
				 sub(/.*[ *]/, "", name); print n, f ":" name; start = 0 }' "$f"
done | sort -rn | head -15
echo "== files that include <sqlite3.h> outside lib/store/"
grep -l 'sqlite3\.h' lib/*/*.c lib/*/*.h src/*.c src/*.h include/kjudge/*.h 2>/dev/null |
	grep -v '^lib/store/' || echo "(none)"
echo "== src/cmd_eval.c"
wc -l < src/cmd_eval.c
