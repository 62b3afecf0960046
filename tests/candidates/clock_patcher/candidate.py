"""Hostile corpus (benchmark): makes every Python clock run 1000 times slow.

At import it replaces time.perf_counter, perf_counter_ns, monotonic,
monotonic_ns, time and time_ns, and torch.cuda.Event.elapsed_time, with
versions that report a thousandth of the real time.  The timed loop's
clock is the native timer's (kjudge_timer.so: clock_gettime and the
driver's events, resolved before any candidate code ran), so the patch
changes nothing: the candidate is timed as its honest twin.

Expected: verify passes; benchmark passes with a speedup no larger than an
honest twin's (the same code as the reference): under 2 on a loaded CPU.
"""
import time

import torch
import torch.nn as nn

_real = {n: getattr(time, n) for n in ("perf_counter", "perf_counter_ns", "monotonic",
                                       "monotonic_ns", "time", "time_ns")}
_t0 = {n: f() for n, f in _real.items()}


def _slow(name):
    f, t0 = _real[name], _t0[name]
    if name.endswith("_ns"):
        return lambda: t0 + (f() - t0) // 1000
    return lambda: t0 + (f() - t0) / 1000.0


for _n in _real:
    setattr(time, _n, _slow(_n))
if hasattr(torch.cuda, "Event"):
    _et = torch.cuda.Event.elapsed_time
    torch.cuda.Event.elapsed_time = lambda self, end: _et(self, end) / 1000.0


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * y + x
