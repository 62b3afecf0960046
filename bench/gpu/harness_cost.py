"""harness_cost.py - what each step of a queued timed call costs the host,
on this machine's device, outside kjudge: the steps kjudge_worker.py's
_time_round takes per call in a queued round (seeding, the flush, the
native timer's events and persisting-L2 check, the call, the copy of its
outputs), each timed alone over many repetitions with nothing waited for,
then one whole call of those steps together.  The round waits on the
host when their sum exceeds the device's work per call.

    python3 bench/gpu/harness_cost.py build/kjudge_timer.so > harness_cost.json
"""
import ctypes
import json
import random
import sys
import time

import numpy
import torch


def per_call_us(fn, n=2000):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def main():
    kjt = ctypes.CDLL(sys.argv[1])
    for name, args in (("kjt_init", [ctypes.c_int]), ("kjt_qbegin", [ctypes.c_void_p]),
                       ("kjt_qend", [ctypes.c_void_p]), ("kjt_qfinish", [ctypes.c_double]),
                       ("kjt_l2_check", [ctypes.c_void_p]), ("kjt_reset", [])):
        getattr(kjt, name).argtypes = args
    dev = torch.device("cuda")
    torch.zeros(1, device=dev)
    assert kjt.kjt_init(1) == 0
    stream = torch.cuda.current_stream(dev).cuda_stream
    flush = torch.empty((256 << 20) // 4, dtype=torch.int32, device=dev)
    a = torch.randn(512, 512, device=dev)
    b = torch.randn(512, 512, device=dev)
    model = torch.nn.Linear(512, 512, device=dev)
    out = a @ b

    def seed():
        random.seed(5)
        numpy.random.seed(5)
        torch.manual_seed(5)
        torch.cuda.manual_seed_all(5)

    def events():
        kjt.kjt_qbegin(stream)
        kjt.kjt_qend(stream)
        if kjt.kjt_qfinish(1e9) != 0:
            raise RuntimeError("qfinish")
        kjt.kjt_reset()

    steps = {
        "seed (random, numpy, torch, cuda)": seed,
        "torch.manual_seed alone": lambda: torch.manual_seed(5),
        "numpy.random.seed alone": lambda: numpy.random.seed(5),
        "flush.fill_(0), 256 MiB": lambda: flush.fill_(0),
        "kjt_l2_check": lambda: kjt.kjt_l2_check(stream),
        "a @ b (512^3 matmul)": lambda: torch.matmul(a, b),
        "nn.Linear(512) forward": lambda: model(a),
        "out.detach().clone()": lambda: out.detach().clone(),
        "torch.eq(x, y).all()": lambda: torch.eq(out, out).all(),
    }
    res = {"device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
           "per_call_us": {k: round(per_call_us(fn), 2) for k, fn in steps.items()}}
    # The native events of a call, one round of 1000 calls then its finish.
    kjt.kjt_reset()
    t0 = time.perf_counter()
    for _ in range(1000):
        kjt.kjt_qbegin(stream)
        kjt.kjt_qend(stream)
    t1 = time.perf_counter()
    kjt.kjt_qfinish(1e9)
    kjt.kjt_reset()
    res["per_call_us"]["kjt_qbegin + kjt_qend"] = round((t1 - t0) / 1000 * 1e6, 2)

    # A whole queued call (the steps above in the worker's order), 300 in
    # a round: the host's time per call, and the round's wall per call.
    def whole(n=300):
        torch.cuda.synchronize()
        kjt.kjt_reset()
        t0 = time.perf_counter()
        keep = []
        for _ in range(n):
            seed()
            flush.fill_(0)
            kjt.kjt_qbegin(stream)
            o = torch.matmul(a, b)
            kjt.kjt_qend(stream)
            kjt.kjt_l2_check(stream)
            keep.append(o.detach().clone())
        t1 = time.perf_counter()
        kjt.kjt_qfinish(1e9)
        flags = [torch.eq(keep[0], x).all() for x in keep]
        torch.stack(flags).tolist()
        t2 = time.perf_counter()
        kjt.kjt_reset()
        return (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6
    whole(50)
    host, wall = zip(*[whole() for _ in range(5)])
    res["whole_call_host_us"] = [round(x, 1) for x in host]
    res["whole_call_wall_us"] = [round(x, 1) for x in wall]
    # The device's own work per call: flush + matmul + copy, queued with
    # no host work between them.
    def device_only(n=300):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            flush.fill_(0)
            o = torch.matmul(a, b)
            o.clone()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n * 1e6
    device_only(50)
    res["device_only_us"] = [round(device_only(), 1) for _ in range(5)]
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
