"""Hostile corpus: prints without end.

A judge that only caps what it keeps would wait for the timeout, and one
that does not cap would run out of memory.  kjudge stops the worker once it
has printed past the capture cap (256 KiB).

Expected verdict: every case fails with OutputLimitExceeded, exit 1.
"""
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        line = "flood " * 100 + "\n"
        while True:
            sys.stdout.write(line)
