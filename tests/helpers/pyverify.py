#!/usr/bin/env python3
"""pyverify - a small, slow stand-in for `kjudge verify`, in Python.

It exists to test the test material (examples/, tests/candidates/ and
tests/helpers/check_verify.py) independently of the C judge, and as an
executable statement of the behaviour those tests expect.  It is not the
judge.  Usage mirrors kjudge:

    pyverify.py verify --op_name OP [--verify_dir D] [--triton_impl_name N]
                [--output F] [--timeout S] [--device cpu|cuda] [--sets K]

What it does: the reference (Model) and the candidate (ModelNew) each run in
their own worker process (this file with --worker FD, in its own session),
which talks JSON lines over a socketpair; each request carries a random id
and lines without that id are ignored, so what the candidate prints or writes
to stray descriptors cannot forge a reply.  Each case runs on K input sets
made with secret seeds (torch seeded, torch.set_default_device active, all
groups generated, as verify.py does); models are built with one secret init
seed on both sides.  Outputs travel as .npy files in a scratch directory and
are compared here with the MERE/MARE rule; the candidate runs before the
reference and every output file is deleted once compared, so no golden output
is on disk while candidate code runs.  A candidate that changes its
inputs fails with InputModified; outputs that alias inputs are named in the
message.  A worker that dies fails its case with WorkerCrashed and is
restarted for the next one.  --timeout bounds the whole run: when it expires
the worker is killed and the current and remaining cases fail with Timeout.
On the CPU, Triton kernels run in its interpreter (TRITON_INTERPRET=1).
"""
import argparse
import hashlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

THRESHOLDS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -13}


def truncate(msg, limit=2000):
    if len(msg) <= limit:
        return msg
    return f"{msg[:limit // 2]}\n... [truncated {len(msg) - limit} chars] ...\n{msg[-limit // 2:]}"


# --- worker side --------------------------------------------------------------

def worker_main(fd):
    import numpy as np
    import torch
    chan = socket.socket(fileno=fd)
    rfile = chan.makefile("rb")
    state = {}

    def digest(xs):
        h = hashlib.sha256()
        for x in xs:
            if isinstance(x, torch.Tensor):
                h.update(x.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
                h.update(repr((tuple(x.shape), x.dtype)).encode())
            else:
                h.update(repr(x).encode())
        return h.hexdigest()

    def run(req):
        task, cls, dev = state["task"], state["cls"], torch.device(req["device"])
        torch.manual_seed(req["seed"])
        torch.set_default_device(dev)
        try:
            groups = task.get_input_groups() if hasattr(task, "get_input_groups") else [task.get_inputs()]
        finally:
            torch.set_default_device("cpu")
        inputs = list(groups[req["case"]])
        desc = [{"type": "tensor", "shape": list(x.shape), "dtype": str(x.dtype)}
                if isinstance(x, torch.Tensor) else {"type": "scalar", "value": x} for x in inputs]
        before = digest(inputs)
        init = task.get_init_inputs() if hasattr(task, "get_init_inputs") else []
        torch.manual_seed(req["init_seed"])
        model = cls(*init).to(dev).eval()
        with torch.no_grad():
            out = model(*inputs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if dev.type == "cuda":
            torch.cuda.synchronize()
        aliases, saved = [], []
        for k, o in enumerate(outs):
            if o is None:
                raise TypeError(f"output {k + 1} is None")
            if not isinstance(o, torch.Tensor):
                saved.append(None)
                continue
            for m, x in enumerate(inputs):
                if isinstance(x, torch.Tensor) and x.numel() and o.numel() and \
                        x.untyped_storage().data_ptr() == o.untyped_storage().data_ptr():
                    aliases.append([k + 1, m + 1])
            t = o.detach().cpu().contiguous()
            path = os.path.join(req["out_dir"], f"{req['tag']}_{k}.npy")
            np.save(path, (t.float() if t.dtype == torch.bfloat16 else t).numpy())
            saved.append({"path": path, "dtype": str(t.dtype).replace("torch.", "")})
        return {"outputs": saved, "input_desc": desc, "aliases": aliases,
                "inputs_changed": digest(inputs) != before}

    for line in rfile:
        req = json.loads(line)
        try:
            if req["op"] == "load":
                sys.path.insert(0, req["dir"])
                import importlib
                state["task"] = importlib.import_module(req["task"])
                state["cls"] = getattr(importlib.import_module(req["module"]), req["cls"])
                g = state["task"]
                n = len(g.get_input_groups()) if hasattr(g, "get_input_groups") else 1
                rep = {"cases": n}
            else:
                rep = run(req)
            rep.update(id=req["id"], ok=True)
        except BaseException as e:  # the code under test may raise anything
            rep = {"id": req["id"], "ok": False, "error_type": type(e).__name__,
                   "error_msg": truncate(traceback.format_exc())}
        chan.sendall((json.dumps(rep) + "\n").encode())


# --- judge side ----------------------------------------------------------------

class WorkerDied(Exception):
    pass


class TimedOut(Exception):
    pass


class Worker:
    def __init__(self, scratch, name, env):
        self.log = os.path.join(scratch, name + ".log")
        ours, theirs = socket.socketpair()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", str(theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, env=env, start_new_session=True)
        theirs.close()
        self.sock, self.buf, self.foreign = ours, b"", 0

    def call(self, deadline, **req):
        req["id"] = secrets.token_hex(16)
        self.sock.sendall((json.dumps(req) + "\n").encode())
        while True:
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimedOut()
                self.sock.settimeout(left)
                try:
                    chunk = self.sock.recv(1 << 16)
                except socket.timeout:
                    raise TimedOut() from None
                if not chunk:
                    raise WorkerDied(self.death())
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                rep = json.loads(line)
            except ValueError:
                rep = None
            if isinstance(rep, dict) and rep.get("id") == req["id"]:
                return rep
            self.foreign += 1

    def death(self):
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            rc = None
        how = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        with open(self.log, "rb") as f:
            f.seek(max(0, os.path.getsize(self.log) - 1000))
            tail = f.read().decode(errors="replace")
        return f"worker died ({how}); last output:\n{tail}"

    def close(self):
        if self.foreign:
            print(f"pyverify: ignored {self.foreign} lines on the protocol channel that answered "
                  "no request (forged or garbage)", file=sys.stderr)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and whatever it started
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.sock.close()


def compare(gold, cand, dtype):
    """MERE/MARE with the NaN/Inf pre-checks; returns None or the reason."""
    import numpy as np
    if gold.shape != cand.shape:
        return f"shape mismatch: reference {list(gold.shape)}, candidate {list(cand.shape)}"
    g = gold.reshape(-1).astype(np.float64)
    a = cand.reshape(-1).astype(gold.dtype).astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(a)):
        return f"nan_mismatch: NaN at {int(np.isnan(a).sum())} positions, reference {int(np.isnan(g).sum())}"
    gi, ai = np.isinf(g), np.isinf(a)
    if not np.array_equal(gi, ai) or not np.array_equal(np.sign(g[gi]), np.sign(a[ai])):
        return "inf_mismatch"
    fin = np.isfinite(g) & np.isfinite(a)
    if gold.dtype == np.bool_:
        return None if np.array_equal(gold, cand) else "bool mismatch"
    if not fin.any():
        return None
    t = THRESHOLDS.get(dtype, 2.0 ** -13)
    rel = np.abs(a[fin] - g[fin]) / np.maximum(np.abs(g[fin]), t)
    mere, mare = rel.mean(), rel.max()
    if mere < t and mare < 10 * t:
        return None
    return f"MERE {mere:.4g} (limit {t:.4g}), MARE {mare:.4g} (limit {10 * t:.4g})"


def judge_case(workers, case, args, seeds, init_seed, scratch, deadline):
    """Returns (input_desc, None) or (input_desc, (error_type, error_msg))."""
    desc = []
    for s, seed in enumerate(seeds):
        try:
            desc, err = judge_set(workers, case, args, seed, init_seed, scratch, deadline)
        finally:  # no output outlives its comparison (a candidate could read it)
            for f in os.listdir(scratch):
                if f.endswith(".npy"):
                    os.unlink(os.path.join(scratch, f))
        if err:
            return desc, (err[0], f"input set {s + 1}: {err[1]}")
    return desc, None


def judge_set(workers, case, args, seed, init_seed, scratch, deadline):
    import numpy as np
    reps, desc = {}, []
    for side in ("cand", "ref"):  # the candidate first: no golden output exists yet
        rep = workers[side].call(deadline, op="run", case=case, seed=seed, init_seed=init_seed,
                                 device=args.device, out_dir=scratch, tag=f"{side}_{case}")
        if not rep["ok"]:
            if side == "ref":
                return desc, ("ReferenceError", rep["error_msg"])
            return desc, (rep["error_type"], rep["error_msg"])
        reps[side] = rep
    desc = reps["ref"]["input_desc"]
    ref, cand = reps["ref"]["outputs"], reps["cand"]["outputs"]
    if len(ref) != len(cand):
        return desc, ("AssertionError", f"output count mismatch: reference {len(ref)}, candidate {len(cand)}")
    if reps["cand"]["inputs_changed"]:
        return desc, ("InputModified", "the candidate changed its inputs")
    for k, (r, c) in enumerate(zip(ref, cand)):
        if r is None or c is None:
            continue
        why = compare(np.load(r["path"]), np.load(c["path"]), r["dtype"])
        if why:
            al = [f"output {o} aliases input {i}" for o, i in reps["cand"]["aliases"] if o == k + 1]
            return desc, ("AccuracyError", f"output {k + 1}: {why}" + "".join("; " + x for x in al))
    return desc, None


def kill_strays():
    """Kill whatever the workers left behind.  pyverify is a child subreaper,
    so a process that escaped its worker's process group (setsid) becomes its
    child when the worker dies."""
    me = str(os.getpid())
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[1] == me:
                    os.kill(int(p), signal.SIGKILL)
                    os.waitpid(int(p), 0)
        except (OSError, ValueError, IndexError, ChildProcessError):
            pass


def verify(args):
    import ctypes
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    vdir = os.path.abspath(args.verify_dir)
    if not os.path.isdir(vdir):
        print(f"pyverify: {vdir}: not a directory", file=sys.stderr)
        return 1
    output = args.output or os.path.join(vdir, "verify_result.json")
    deadline = time.monotonic() + args.timeout
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if args.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    seeds = [secrets.randbelow(2 ** 31 - 1) + 1 if args.seed is None else args.seed + s
             for s in range(args.sets)]
    init_seed = secrets.randbelow(2 ** 31 - 1) + 1
    load = {"ref": (f"{args.op_name}_torch", "Model"),
            "cand": (f"{args.op_name}_{args.triton_impl_name}", "ModelNew")}
    failures, total, timed_out = [], 0, False
    with tempfile.TemporaryDirectory(prefix="pyverify-") as scratch:
        workers, load_err = {}, {}

        def start(side):
            workers[side] = Worker(scratch, side, env)
            rep = workers[side].call(deadline, op="load", dir=vdir, task=load["ref"][0],
                                     module=load[side][0], cls=load[side][1])
            load_err[side] = None if rep["ok"] else (rep["error_type"], rep["error_msg"])
            return rep
        try:
            rep = start("ref")
            if not rep["ok"]:
                print(f"pyverify: the task does not load:\n{rep['error_msg']}", file=sys.stderr)
                return 1
            total = rep["cases"]
            for case in range(total):
                try:
                    for side in ("ref", "cand"):
                        if side not in workers:
                            start(side)
                    err = load_err["cand"]
                    desc = []
                    if err is None:
                        desc, err = judge_case(workers, case, args, seeds, init_seed, scratch, deadline)
                except WorkerDied as e:
                    err = ("WorkerCrashed", str(e))
                except TimedOut:
                    timed_out = True
                    for c in range(case, total):
                        failures.append({"case_idx": c + 1, "input_desc": [], "error_type": "Timeout",
                                         "error_msg": f"the time limit ({args.timeout} s) was reached"})
                    break
                finally:
                    for side in list(workers):  # a dead or timed-out worker is replaced
                        if workers[side].proc.poll() is not None or timed_out:
                            workers.pop(side).close()
                if err:
                    failures.append({"case_idx": case + 1, "input_desc": desc, "error_type": err[0],
                                     "error_msg": truncate(err[1])})
        finally:
            for w in workers.values():
                w.close()
            kill_strays()
    result = {"op_name": args.op_name, "total_cases": total, "passed_cases": total - len(failures),
              "failed_cases": len(failures), "failures": failures}
    tmp = output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, output)
    if timed_out:
        print(f"pyverify: timed out after {args.timeout} s", file=sys.stderr)
    print(f"{args.op_name}: {result['passed_cases']}/{total} cases passed")
    return 0 if total and not failures else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        return worker_main(int(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["verify"])
    ap.add_argument("--op_name", required=True)
    ap.add_argument("--verify_dir", default=".")
    ap.add_argument("--triton_impl_name", default="triton_ascend_impl")
    ap.add_argument("--output")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sets", type=int, default=2, help="input sets per case (secret seeds)")
    ap.add_argument("--seed", type=int, help="seed of the first set, the next ones count up "
                    "(default: secret; verify.py is --sets 1 --seed 0)")
    return verify(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
