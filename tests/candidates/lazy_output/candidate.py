"""Hostile corpus: returns a tensor subclass that does its work when read.

forward returns at once a LazyTensor, a torch.Tensor subclass whose
__torch_function__ computes x * y + x the first time anything reads it:
in a timed loop, the work would run after the timer stopped, when the
judge writes the output.  Outputs must be plain tensors: a subclass is
refused with its own error type, in verify as in the timed runs.

Expected verdict: every case fails with LazyOutput, exit 1.
"""
import torch
import torch.nn as nn


class LazyTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(nn.Module):
    def forward(self, x, y):
        return (x * y + x).as_subclass(LazyTensor)
