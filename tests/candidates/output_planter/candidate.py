"""Hostile corpus: hands the judge a FIFO and a symlink instead of files.

It replaces the worker's output writer (it runs in the same process) with
one that puts a FIFO where the first output should be and a symlink to a
host file where the second would be, and names them in the reply.  A judge
that opens them blindly hangs on the FIFO or reads a file it was never
meant to.  The worker's harness guard sees its writer replaced
(HarnessTampered); were it not seen, the judge would still refuse a tensor
named by a path (ProtocolError): it takes the candidate's outputs only as
sealed memory files.

Expected verdict: every case fails with HarnessTampered (or ProtocolError), exit 1.
"""
import os
import sys

import torch.nn as nn


def plant(self, outs, out_dir, tag):
    fifo = os.path.join(out_dir, f"{tag}_out0.npy")
    for p in (fifo,):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
    os.mkfifo(fifo)
    return [{"type": "tensor", "path": fifo, "dtype": "float32", "shape": list(outs[0].shape)}]


main = sys.modules.get("__main__")
if main is not None and hasattr(main, "Worker"):
    main.Worker._save = plant


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * y + x
