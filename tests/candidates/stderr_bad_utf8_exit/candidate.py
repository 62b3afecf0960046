"""Hostile corpus: writes a byte that is not UTF-8 to stderr, then exits.

The judge shows the worker's stderr with a crash; a record holding that
byte could not be built, and a record that could not be built was counted
as a pass.

Expected verdict: every case fails with WorkerCrashed, exit 1.
"""
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        os.write(2, b"bad byte: \xff\xfe, a cut one: \xc3\n")
        os._exit(1)
