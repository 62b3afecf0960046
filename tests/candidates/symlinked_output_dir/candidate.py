"""Hostile corpus: names an output under a symlinked directory.

It turns the worker's sealed outputs off (clearing the worker object's
`sealed` flag, no guarded function replaced), puts in its output
directory a symlink (to a directory: its own here, the reference's output
directory in the attack, where a judge that opened the named path would
compare the golden with itself), and rewrites the request so that the
worker writes and names its output under that link.  Names
with a '/' are not file names, and a candidate's outputs are taken only
as sealed memory files anyway.

Expected verdict: every case fails with ProtocolError, exit 1.
"""
import gc
import os
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        for o in gc.get_objects():
            # The request's state (Request), or the worker's own where
            # a worker keeps it there.
            if type(o).__name__ in ("Request", "Worker") and hasattr(o, "sealed"):
                o.sealed = False
        f = sys._getframe(1)
        while f is not None:
            req = f.f_locals.get("req")
            if isinstance(req, dict) and "out_dir" in req:
                link = os.path.join(req["out_dir"], "ref")
                try:
                    os.symlink(".", link)
                except OSError:
                    pass
                req["tag"] = "ref/ref"
                break
            f = f.f_back
        return x * y + x
