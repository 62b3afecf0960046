"""Hostile corpus: returns the right counts as floats plus 0.75, which a cast
to the golden's int64 (torch's .to(), truncating) would turn back into the
right counts.

Expected verdict: every case fails with AccuracyError, the message naming
the lossy cast (on tasks/counts_torch.py).
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return (x > 0).float().sum(dim=1) + 0.75
