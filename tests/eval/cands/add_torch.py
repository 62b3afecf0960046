import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Correct, but PyTorch does the work: passes, never clean."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.add(a, b)
