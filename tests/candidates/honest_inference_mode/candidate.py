"""Honest corpus: runs its forward under its own torch.no_grad and
torch.inference_mode (the judge calls it under no_grad already).

Expected verdict: pass.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        with torch.no_grad():
            with torch.inference_mode():
                return x * y + x
