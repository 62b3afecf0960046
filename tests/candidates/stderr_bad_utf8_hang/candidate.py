"""Hostile corpus: writes bytes that are not UTF-8 to stderr, then hangs.
Run with --timeout 5.

Expected verdict: every case fails with Timeout, exit 1.
"""
import os
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        os.write(2, b"\xff" * 5000 + b"\n")
        time.sleep(10 ** 6)
