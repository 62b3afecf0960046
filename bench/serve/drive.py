"""drive.py - the three ways an RL loop gets verdicts, one stream of candidates
each (bench/serve/serve_vs_kb.sh runs them side by side):

    drive.py stream DIR LEVEL1 IDS    the stream: for each KernelBench
                                      level-1 problem of IDS, its reference
                                      as candidate (ModelNew(Model)), and an
                                      honest Triton kernel for the
                                      elementwise ones (19_ReLU, 21_Sigmoid,
                                      22_Tanh); LOAD_INLINE=1 adds a CUDA
                                      load_inline ReLU per 19_ReLU
    drive.py serve URL DIR OUT.json   kjudge serve through the Python client,
                                      CONCURRENCY (8) at once
    drive.py cli KJUDGE DIR OUT.json  kjudge verify then benchmark, one
                                      candidate after another
    drive.py kb KBSRC DIR OUT.json    KernelBench's eval_kernel_against_ref
                                      called in a loop in this one process

The same trials everywhere: TRIALS correctness trials (5: --input_sets,
num_correct_trials) and PERF timed calls (100: --repeats and --max_repeats,
num_perf_trials).  Each mode writes OUT.json: per candidate its task, kind,
verdict, latency (seconds from its submission or start to its verdict) and
for kjudge its judge_s; the wall time, evaluations per hour, latency p50
and p95.  A mode that runs past DEADLINE_S (default 240) stops submitting
and says how many it finished.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TRIALS = int(os.environ.get("TRIALS", "5"))
PERF = int(os.environ.get("PERF", "100"))
DEADLINE_S = float(os.environ.get("DEADLINE_S", "240"))

ELEMENTWISE = {
    "19_ReLU": "tl.maximum(x, 0.0)",
    "21_Sigmoid": "tl.sigmoid(x)",
    "22_Tanh": "2.0 * tl.sigmoid(2.0 * x) - 1.0",
}

TRITON = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, {expr}, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
'''

LOAD_INLINE = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = """
__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
_mod = load_inline(name="serve_bench_relu_%s", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                   cuda_sources=_src, functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return _mod.relu(x.contiguous())
'''


def stream(out_dir, level1, ids):
    """The stream as DIR/stream.json: [{task, kind, task_file, cand_file}]."""
    os.makedirs(out_dir, exist_ok=True)
    items = []
    files = {f.split("_", 1)[0]: f for f in os.listdir(level1) if f.endswith(".py")}
    for pid in ids.replace(",", " ").split():
        f = files.get(pid)
        if not f:
            print("no level-1 problem", pid, file=sys.stderr)
            continue
        name = f[:-3]
        task = open(os.path.join(level1, f)).read()
        cands = [("reference", task + "\n\nclass ModelNew(Model):\n    pass\n")]
        if name in ELEMENTWISE:
            cands.append(("triton", TRITON.replace("{expr}", ELEMENTWISE[name])))
        if name == "19_ReLU" and os.environ.get("LOAD_INLINE"):
            # A name of its own per stream entry: each is built, none cached.
            cands.append(("load_inline", LOAD_INLINE % len(items)))
        for kind, src in cands:
            base = os.path.join(out_dir, "%s-%s" % (name, kind))
            open(base + ".task.py", "w").write(task)
            open(base + ".cand.py", "w").write(src)
            items.append({"task": name, "kind": kind, "task_file": base + ".task.py",
                          "cand_file": base + ".cand.py"})
    json.dump(items, open(os.path.join(out_dir, "stream.json"), "w"), indent=1)
    print("stream: %d candidates over %d tasks" % (len(items), len({i["task"] for i in items})))


def summary(mode, rows, wall, out):
    lat = sorted(r["latency_s"] for r in rows if r.get("latency_s") is not None)
    q = (lambda p: lat[min(len(lat) - 1, int(round(p * (len(lat) - 1))))] if lat else None)
    s = {"mode": mode, "evaluations": len(rows), "wall_s": wall,
         "per_hour": 3600.0 * len(rows) / wall if wall > 0 else None,
         "latency_p50_s": q(0.5), "latency_p95_s": q(0.95),
         "latency_mean_s": statistics.mean(lat) if lat else None,
         "trials": TRIALS, "perf_trials": PERF, "rows": rows}
    json.dump(s, open(out, "w"), indent=1)
    print("%s: %d evaluations in %.1f s: %.0f an hour, latency p50 %s s, p95 %s s" % (
        mode, len(rows), wall, s["per_hour"] or 0, q(0.5), q(0.95)))


def load(stream_dir):
    return json.load(open(os.path.join(stream_dir, "stream.json")))


def run_serve(url, stream_dir, out):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
    from kjudge_client import Client
    from concurrent.futures import ThreadPoolExecutor
    items = load(stream_dir)
    c = Client(url)
    t0 = time.monotonic()

    def one(it):
        if time.monotonic() - t0 > DEADLINE_S:
            return None
        s = time.monotonic()
        r = c.evaluate(open(it["task_file"]).read(), open(it["cand_file"]).read(),
                       model=it["kind"], options={"repeats": PERF, "warmup": 5})
        return dict(it, status=r.status, clean=r.clean, error_type=r.error_type,
                    speedup=r.speedup, judge_s=r.judge_s, latency_s=time.monotonic() - s)
    with ThreadPoolExecutor(int(os.environ.get("CONCURRENCY", "8"))) as ex:
        rows = [r for r in ex.map(one, items) if r]
    summary("serve", rows, time.monotonic() - t0, out)


def run_cli(kjudge, stream_dir, out):
    items = load(stream_dir)
    rows = []
    t0 = time.monotonic()
    for it in items:
        if time.monotonic() - t0 > DEADLINE_S:
            break
        d = tempfile.mkdtemp(prefix="serve-bench-")
        op = "op"
        open(os.path.join(d, op + "_torch.py"), "w").write(open(it["task_file"]).read())
        open(os.path.join(d, op + "_kjudge_impl.py"), "w").write(open(it["cand_file"]).read())
        s = time.monotonic()
        v = subprocess.run([kjudge, "verify", "--op_name", op, "--verify_dir", d,
                            "--triton_impl_name", "kjudge_impl", "--input_sets", str(TRIALS)],
                           capture_output=True, text=True)
        b = None
        if v.returncode == 0:
            b = subprocess.run([kjudge, "benchmark", "--op_name", op, "--verify_dir", d,
                                "--triton_impl_name", "kjudge_impl", "--repeats", str(PERF),
                                "--max_repeats", str(PERF), "--warmup", "5",
                                "--output", os.path.join(d, "perf.json")],
                               capture_output=True, text=True)
        speed = None
        try:
            speed = json.load(open(os.path.join(d, "perf.json"))).get("speedup_vs_torch")
        except (OSError, ValueError):
            pass
        rows.append(dict(it, status="pass" if v.returncode == 0 else "fail",
                         bench_rc=b.returncode if b else None, speedup=speed,
                         latency_s=time.monotonic() - s))
        subprocess.run(["rm", "-rf", d])
    summary("cli", rows, time.monotonic() - t0, out)


def run_kb(kb_src, stream_dir, out):
    sys.path.insert(0, kb_src)
    from kernelbench.eval import eval_kernel_against_ref
    items = load(stream_dir)
    rows = []
    t0 = time.monotonic()
    for it in items:
        if time.monotonic() - t0 > DEADLINE_S:
            break
        s = time.monotonic()
        try:
            r = eval_kernel_against_ref(open(it["task_file"]).read(), open(it["cand_file"]).read(),
                                        num_correct_trials=TRIALS, num_perf_trials=PERF,
                                        measure_performance=True, timing_method="cuda_event",
                                        backend="triton" if it["kind"] == "triton" else "cuda",
                                        build_dir=tempfile.mkdtemp(prefix="kb-build-"))
            st = "pass" if r is not None and r.correctness else "fail"
            speed = (r.ref_runtime / r.runtime) if r is not None and r.runtime and \
                r.runtime > 0 and r.ref_runtime and r.ref_runtime > 0 else None
        except Exception as e:  # one CUDA error poisons the process: said, not hidden
            st, speed = "error: %s" % str(e)[:200], None
        rows.append(dict(it, status=st, speedup=speed, latency_s=time.monotonic() - s))
    summary("kb", rows, time.monotonic() - t0, out)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "stream":
        stream(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "serve":
        run_serve(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "cli":
        run_cli(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "kb":
        run_kb(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: drive.py stream|serve|cli|kb ...")
