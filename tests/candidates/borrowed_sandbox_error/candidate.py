"""Hostile corpus: raises a class named SandboxError, the name of the error
type that charges the machine: a judge error would not count against it.

Expected verdict: every case fails with ForwardError, its exception named
SandboxError, charged to the candidate, exit 1 (not a judge error).
"""
import torch.nn as nn


class SandboxError(Exception):
    pass


class ModelNew(nn.Module):
    def forward(self, x, y):
        raise SandboxError("the sandbox failed, not me")
