"""Where the A/A of a 20 us kernel loses its symmetry, outside kjudge.

Two processes time the same 512 x 512 float32 matmul in alternating
rounds (ABBA), each the way kjudge's worker times a call (a seeding and a
synchronize, the persisting-L2 reset, a 256 MiB flush, the native timer's
events and device-wide synchronize, the L2 check, a clone and a bitwise
compare of the output), with the host's cost of each part measured; then
the same with every call of a round queued on the device without a host
synchronize between calls (one at the round's end).  Variants: both
processes fresh; one of them with an allocation history (8 GiB allocated
and freed, then 300 small tensors kept) before its inputs.

Usage (from the repository root, on a GPU machine):
    python3 bench/gpu/aa_diag.py [build/kjudge_timer.so] > out.json
Prints one JSON object: per variant and mode, each side's sample median,
the rounds' wall time per call (median and spread), and the host's median
cost of each part of a call.
"""
import ctypes
import json
import multiprocessing as mp
import statistics
import sys
import time

ROUNDS = 6
CALLS = 150


def child(conn, timer_path, history):
    import torch
    dev = torch.device("cuda")
    kjt = ctypes.CDLL(timer_path)
    kjt.kjt_end.argtypes = [ctypes.c_void_p, ctypes.c_double]
    kjt.kjt_begin.argtypes = [ctypes.c_void_p]
    kjt.kjt_l2_reset.argtypes = [ctypes.c_void_p]
    kjt.kjt_l2_check.argtypes = [ctypes.c_void_p]
    kjt.kjt_sample.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                               ctypes.POINTER(ctypes.c_double)]
    torch.zeros(1, device=dev)  # the context the driver calls below need
    assert kjt.kjt_init(1) == 0
    keep = []
    if history:
        big = torch.empty(8 << 30, dtype=torch.uint8, device=dev)
        del big
        keep = [torch.empty(4096 + 512 * i, device=dev) for i in range(300)]
    flush = torch.empty(64 << 20, dtype=torch.int32, device=dev)
    torch.manual_seed(1)
    sets = [(torch.randn(512, 512, device=dev), torch.randn(512, 512, device=dev))
            for _ in range(3)]
    model = torch.nn.Module()
    model.forward = lambda a, b: torch.matmul(a, b)
    stream = torch.cuda.current_stream().cuda_stream
    with torch.no_grad():
        for _ in range(20):
            model(*sets[0])
    torch.cuda.synchronize()
    kept = [model(*s).clone() for s in sets]
    conn.send("ready")
    while True:
        mode = conn.recv()
        if mode is None:
            return
        parts = {k: [] for k in ("seed_sync", "l2_reset", "flush", "begin", "call", "end",
                                 "l2_check", "clone_equal")}
        samples = []
        torch.cuda.synchronize()
        kjt.kjt_reset()
        t_round = time.perf_counter()
        with torch.no_grad():
            if mode == "sync":
                for i in range(CALLS):
                    k = i % 3
                    t = [time.perf_counter()]
                    torch.manual_seed(1000 + k)
                    torch.cuda.synchronize()
                    t.append(time.perf_counter())
                    kjt.kjt_l2_reset(stream)
                    t.append(time.perf_counter())
                    flush.fill_(0)
                    t.append(time.perf_counter())
                    kjt.kjt_begin(stream)
                    t.append(time.perf_counter())
                    out = model(*sets[k])
                    t.append(time.perf_counter())
                    kjt.kjt_end(stream, 0.05)
                    t.append(time.perf_counter())
                    kjt.kjt_l2_check(stream)
                    t.append(time.perf_counter())
                    c = out.clone()
                    assert torch.equal(c, kept[k])
                    t.append(time.perf_counter())
                    for name, a, b in zip(parts, t, t[1:]):
                        parts[name].append((b - a) * 1e6)
                wall = time.perf_counter() - t_round
                ms, esc = ctypes.c_double(), ctypes.c_double()
                for i in range(kjt.kjt_count()):
                    kjt.kjt_sample(i, ctypes.byref(ms), ctypes.byref(esc))
                    samples.append(ms.value)
            else:
                ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in range(CALLS)]
                outs = []
                kjt.kjt_l2_reset(stream)
                for i in range(CALLS):
                    k = i % 3
                    flush.fill_(0)
                    ev[i][0].record()
                    out = model(*sets[k])
                    ev[i][1].record()
                    outs.append(out.clone())
                torch.cuda.synchronize()
                wall = time.perf_counter() - t_round
                for i in range(CALLS):
                    assert torch.equal(outs[i], kept[i % 3])
                samples = [a.elapsed_time(b) for a, b in ev]
        conn.send({"wall_ms_per_call": wall * 1e3 / CALLS, "samples": samples,
                   "parts_us": {k: statistics.median(v) for k, v in parts.items() if v}})


def recv(conn):
    """A child's answer, or an error when it died or is stuck."""
    if not conn.poll(60):
        raise SystemExit("a timing process did not answer within 60 s")
    return conn.recv()


def run(timer_path, history_b):
    ctx = mp.get_context("spawn")
    pipes, procs = [], []
    for h in (False, history_b):
        a, b = ctx.Pipe()
        p = ctx.Process(target=child, args=(b, timer_path, h))
        p.start()
        assert recv(a) == "ready"
        pipes.append(a)
        procs.append(p)
    res = {}
    for mode in ("sync", "queued"):
        got = {0: [], 1: []}
        for r in range(ROUNDS):
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for side in order:
                pipes[side].send(mode)
                got[side].append(recv(pipes[side]))
        out = {}
        for side in (0, 1):
            rounds = got[side]
            allsamples = [x for g in rounds for x in g["samples"]]
            walls = [g["wall_ms_per_call"] for g in rounds]
            out["A" if side == 0 else "B"] = {
                "sample_median_ms": statistics.median(allsamples),
                "sample_min_ms": min(allsamples),
                "wall_ms_per_call_median": statistics.median(walls),
                "wall_ms_per_call_min": min(walls), "wall_ms_per_call_max": max(walls),
                "parts_us": {k: round(statistics.median(g["parts_us"][k] for g in rounds), 2)
                             for k in rounds[0]["parts_us"]},
            }
        out["sample_ratio_A_over_B"] = out["A"]["sample_median_ms"] / out["B"]["sample_median_ms"]
        out["wall_ratio_A_over_B"] = (out["A"]["wall_ms_per_call_median"]
                                      / out["B"]["wall_ms_per_call_median"])
        res[mode] = out
    for p in pipes:
        p.send(None)
    for p in procs:
        p.join(30)
    return res


if __name__ == "__main__":
    timer = sys.argv[1] if len(sys.argv) > 1 else "build/kjudge_timer.so"
    print(json.dumps({"fresh_vs_fresh": run(timer, False),
                      "fresh_vs_history": run(timer, True)}, indent=1))
