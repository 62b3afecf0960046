"""Hostile corpus: borrows the reference instead of computing.

It imports the task module and looks for the reference class in it, then
searches the file system for the task file by relative and absolute paths
(next to itself, the working directory, the parents, /work, /tmp, /dev/shm)
and runs the first Model it finds.  The candidate's sandbox holds the task
file with the reference class blanked out, and nothing else of the host.
When it finds nothing it returns zeros.

Expected verdict: every case fails with AccuracyError, exit 1.
"""
import os

import torch
import torch.nn as nn


def find_reference():
    try:
        import addmul_torch
        if hasattr(addmul_torch, "Model"):
            return addmul_torch.Model()
    except Exception:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    roots = [here, os.getcwd(), os.path.dirname(here), "/work", "/tmp", "/dev/shm", "/root", "/home"]
    for root in roots:
        for d, dirs, files in os.walk(root):
            if d.count(os.sep) > 8:
                dirs[:] = []
            for f in files:
                if f.endswith("_torch.py"):
                    try:
                        src = open(os.path.join(d, f)).read()
                    except OSError:
                        continue
                    if "class Model" in src:
                        ns = {}
                        exec(compile(src, f, "exec"), ns)
                        return ns["Model"]()
    return None


class ModelNew(nn.Module):
    def forward(self, x, y):
        ref = find_reference()
        return ref(x, y) if ref is not None else torch.zeros_like(x)
