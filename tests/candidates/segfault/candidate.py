"""Hostile corpus: forward dereferences a null pointer (SIGSEGV), as a
kernel launcher with a bad pointer would.

Expected verdict: every case fails with error_type WorkerCrashed, exit 1.
"""
import ctypes

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        ctypes.string_at(0)
        return x * y + x
