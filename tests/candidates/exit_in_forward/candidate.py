"""Hostile corpus: forward ends the process with os._exit(3) -- no exception,
no reply, no cleanup.

Expected verdict: every case fails with error_type WorkerCrashed, exit 1.
"""
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        os._exit(3)
