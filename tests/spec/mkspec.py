"""mkspec.py BASE OUT STATEMENTS: write the spec BASE, changed by the Python
statements STATEMENTS over its JSON as `d`, to OUT (the CLI tests' variants
of tests/spec/specs/t-basic.json)."""
import json
import sys

d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=1)
