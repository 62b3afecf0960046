"""Honest corpus: does half of its work on a thread of its own, started
in forward and joined before forward returns (as a kernel that overlaps a
host-side step would).  Every bit of the work is inside the timed call, so
the judge's clock and the candidate's samples agree.

Expected verdict: verify passes every case; benchmark passes, the
cross-check with it.
"""
import threading

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        part = {}

        def mul():
            part["xy"] = x * y

        t = threading.Thread(target=mul)
        t.start()
        t.join()
        return part["xy"] + x
