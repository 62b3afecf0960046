"""Hostile corpus (benchmark): divides the worker's timing samples by 1000.

At import it finds the worker object (it runs in the same process) and
puts a wrapper of the timed-round request on the instance (the class's
function, which the harness guard checks, stays as it was): the wrapper
runs the real round and divides every sample it reports by 1000.  The
judge keeps its own clock on every timed request: a round whose samples
add up to far less than the time the judge saw it take is a
TimingMismatch.

Expected: verify passes; benchmark fails every case with TimingMismatch
(or HarnessTampered).
"""
import gc

import torch.nn as nn


def _wrap(w):
    real = w.op_time_round

    def fast(req):
        res = real(req)
        res["samples_ms"] = [x / 1000.0 for x in res.get("samples_ms", [])]
        return res
    w.op_time_round = fast


for _o in gc.get_objects():
    if type(_o).__name__ == "Worker" and hasattr(_o, "op_time_round"):
        _wrap(_o)


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * y + x
