import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """torch.relu itself: correct, and no kernel of its own."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
