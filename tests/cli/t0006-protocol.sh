#!/usr/bin/env bash
# t0006-protocol.sh - docs/protocol.md is the contract of the torch worker
# (worker/kjudge_worker.py): the worker handles exactly the requests the
# document's table lists, its docstring names the same ones, and a request
# the document does not list is a failed request after which the worker goes
# on.  No torch is imported: the worker's dispatch and failure path run
# without it.
. "$(dirname "$0")/lib.sh"
root=$(cd "$KJ_TESTS/.." && pwd)

test_expect 'the worker handles exactly the ops docs/protocol.md lists, and its docstring names them' '
	"$KJ_PYTHON" - "$root/docs/protocol.md" "$root/worker/kjudge_worker.py" <<PY
import ast, re, sys
doc, worker = sys.argv[1], sys.argv[2]
# The document: the table whose header begins with "op".
documented, in_table = [], False
for line in open(doc):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if line.startswith("|") and cells[0] == "op":
        assert not in_table and not documented, "two op tables in the document"
        in_table = True
    elif in_table and line.startswith("|"):
        m = re.fullmatch(r"\`([a-z_]+)\`", cells[0])
        if m:
            documented.append(m.group(1))
        else:
            assert set(cells[0]) <= set("-: "), f"a row of the op table without an op: {line!r}"
    else:
        in_table = False
assert len(documented) == len(set(documented)), f"an op listed twice: {documented}"
documented = set(documented)
# The worker: its Worker.op_NAME methods (main() calls op_ + the request op)
# and the ops main() answers itself (compared with req.get("op")).
tree = ast.parse(open(worker).read())
handled = set()
for node in ast.walk(tree):
    if isinstance(node, ast.ClassDef) and node.name == "Worker":
        handled |= {f.name[3:] for f in node.body
                    if isinstance(f, ast.FunctionDef) and f.name.startswith("op_")}
    if isinstance(node, ast.FunctionDef) and node.name == "main":
        src = ast.get_source_segment(open(worker).read(), node)
        assert "\"op_\" + str(req.get(\"op\"))" in src, "main() no longer dispatches to op_ methods"
        for c in ast.walk(node):
            left = c.left if isinstance(c, ast.Compare) else None
            if (isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute)
                    and left.func.attr == "get" and len(left.args) == 1
                    and isinstance(left.args[0], ast.Constant) and left.args[0].value == "op"):
                handled |= {k.value for k in c.comparators if isinstance(k, ast.Constant)}
assert len(handled) >= 10, f"too few ops found in the worker: {sorted(handled)}"
# The docstring: its request lines, two spaces in, the op first.
doclines = ast.get_docstring(tree, clean=False).splitlines()
named = {m.group(1) for l in doclines for m in [re.match(r"  ([a-z_]+)(\s|$)", l)] if m}
problems = []
if handled - documented:
    problems.append(f"handled by the worker, not in docs/protocol.md: {sorted(handled - documented)}")
if documented - handled:
    problems.append(f"in docs/protocol.md, not handled by the worker: {sorted(documented - handled)}")
if named != handled:
    problems.append(f"the worker docstring names {sorted(named)}, the worker handles {sorted(handled)}")
assert not problems, "\n".join(problems)
print(sorted(handled))
PY
'

test_expect 'an op the document does not list fails that request only, and exit ends the worker' '
	"$KJ_PYTHON" - "$root/worker/kjudge_worker.py" <<PY
import json, socket, subprocess, sys
a, b = socket.socketpair()
w = subprocess.Popen([sys.executable, sys.argv[1], "--fd", str(b.fileno())], pass_fds=[b.fileno()],
                     stdout=subprocess.DEVNULL)
b.close()
a.settimeout(60)
def ask(req):
    a.sendall((json.dumps(req) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = a.recv(65536)
        if not chunk:
            return None
        buf += chunk
    return json.loads(buf)
for nonce in (7, 8):  # twice: the worker went on after the first
    rep = ask({"op": "no_such_op", "nonce": nonce})
    assert rep["nonce"] == nonce and rep["ok"] is False, rep
    assert rep["error_type"] == "ValueError" and "unknown op" in rep["error_msg"], rep
    assert rep["exits"] is False and rep["sticky"] is False and rep["phase"] == "", rep
assert ask({"op": "exit", "nonce": 9}) is None, "exit has no reply"
assert w.wait(timeout=60) == 0, w.returncode
PY
'
test_done
