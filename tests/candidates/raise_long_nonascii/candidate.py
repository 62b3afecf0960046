"""Hostile corpus: forward raises RuntimeError("é" * 3000): a message whose
cut at a byte offset falls inside a character.

Expected verdict: every case fails with ForwardError (exception
RuntimeError), exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        raise RuntimeError("é" * 3000)
