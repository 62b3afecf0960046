"""Hostile corpus: raises Python's own ReferenceError, the name of the error
type that charges the task: the candidate would choose who is blamed.

Expected verdict: every case fails with ForwardError, exception
ReferenceError, charged to the candidate, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        raise ReferenceError("the task is broken, not me")
