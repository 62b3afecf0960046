"""Candidate without Triton: LayerNorm written out in torch (mean, biased
variance, scale and shift), with parameters drawn as the task's Model does."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden))
        self.bias = nn.Parameter(torch.empty(hidden))
        with torch.no_grad():  # same order of draws as Model: weight, then bias
            self.weight.normal_(1.0, 0.1)
            self.bias.normal_(0.0, 0.1)

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = (x - mean).pow(2).mean(dim=-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias
