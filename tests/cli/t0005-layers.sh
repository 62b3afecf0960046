#!/usr/bin/env bash
# t0005-layers.sh - the library's folders depend on each other one way only:
# base, tensor, validate, sandbox, core, runner, spec, store, eval, doctor, each using only
# itself and the folders before it (docs/ARCHITECTURE.md, "Layers").  The
# public headers belong to the folder that implements them.
. "$(dirname "$0")/lib.sh"
root=$(cd "$KJ_TESTS/.." && pwd)

test_expect 'every include in lib/ goes to the same layer or one below it' '
	"$KJ_PYTHON" - "$root" <<PY
import os, re, sys
root = sys.argv[1]
order = ["base", "tensor", "validate", "sandbox", "core", "runner", "spec", "store", "eval", "doctor"]
public = {
    "error.h": "base", "fileio.h": "base",
    "dtype.h": "tensor", "tensor.h": "tensor", "compare.h": "tensor", "report.h": "tensor",
    "validate.h": "validate",
    "proc.h": "sandbox", "sandbox.h": "sandbox",
    "config.h": "core", "verdict.h": "core", "value.h": "core", "runner.h": "core",
    "pipeline.h": "core", "anticheat.h": "core",
    "torch.h": "runner",
    "jschema.h": "spec", "spec.h": "spec", "spec_check.h": "spec",
    "doctor.h": "doctor",
    "store.h": "store", "metrics.h": "store", "eval.h": "eval",
}
inc = os.path.join(root, "include", "kjudge")
missing = sorted(set(os.listdir(inc)) - set(public))
assert not missing, f"public headers without a layer: {missing}"
bad = []
def check(path, layer):
    for n, line in enumerate(open(path), 1):
        m = re.match(r"\s*#\s*include\s+\"([^\"]+)\"", line)
        if not m:
            continue
        target = m.group(1)
        if target.startswith("kjudge/"):
            to = public.get(target[7:])
        else:
            to = target.split("/")[0] if "/" in target else layer
        if to not in order:
            bad.append(f"{path}:{n}: {target}: unknown layer")
        elif order.index(to) > order.index(layer):
            bad.append(f"{path}:{n}: {layer} includes {target} ({to})")
for layer in order:
    d = os.path.join(root, "lib", layer)
    for f in sorted(os.listdir(d)):
        if f.endswith((".c", ".h")):
            check(os.path.join(d, f), layer)
for f, layer in public.items():
    check(os.path.join(inc, f), layer)
assert os.listdir(os.path.join(root, "lib")) and sorted(os.listdir(os.path.join(root, "lib"))) == sorted(order), os.listdir(os.path.join(root, "lib"))
assert not bad, "\n".join(bad)
PY
'
test_done
