"""Hostile corpus: forward never returns (sleeps for 11 days).

Run with --timeout 5 (expect.json says so): the judge must kill the worker,
still write verify_result.json, and leave no process behind.

Expected verdict: every case fails with error_type Timeout, exit 1.
"""
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        time.sleep(10 ** 6)
        return x * y + x
