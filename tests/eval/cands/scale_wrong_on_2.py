import torch.nn as nn


class ModelNew(nn.Module):
    """Right for scale 0.5, wrong for 2.0: fails exactly those cases."""

    def __init__(self, scale=1.0):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x * (self.scale if self.scale < 1 else 1.0)
