"""Hostile corpus: steals the answer instead of computing it.

It looks for .npy files the judge may have left where the candidate can read
them -- next to the task, in the working directory, in the temporary
directories, /dev/shm and ~/.cache -- and returns the most recently written
one with the output's shape and dtype.  If the judge writes the golden output
of the current inputs somewhere readable before it runs the candidate, this
passes.  When nothing fits it returns zeros.

Expected verdict: every case fails with AccuracyError, exit 1.
"""
import os
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn

ROOTS = [os.path.dirname(os.path.abspath(__file__)), os.getcwd(), tempfile.gettempdir(),
         "/tmp", "/dev/shm", "/var/tmp", os.path.expanduser("~/.cache")]


def npy_files(limit=20000):
    seen = 0
    for root in dict.fromkeys(ROOTS):
        for d, dirs, files in os.walk(root):
            if d.count(os.sep) - root.count(os.sep) >= 5:
                dirs[:] = []
            for f in files:
                seen += 1
                if f.endswith(".npy"):
                    yield os.path.join(d, f)
            if seen > limit:
                return


def steal(shape):
    warnings.simplefilter("ignore")
    best = None
    for p in npy_files():
        try:
            a = np.load(p, mmap_mode="r")
            if a.shape == shape and a.dtype == np.float32:
                t = os.stat(p).st_mtime
                if best is None or t > best[0]:
                    best = (t, p)
        except Exception:
            pass
    return None if best is None else np.array(np.load(best[1]))


class ModelNew(nn.Module):
    def forward(self, x, y):
        got = steal(tuple(x.shape))
        if got is None:
            return torch.zeros_like(x)
        return torch.from_numpy(got).to(x.device)
