"""Honest corpus: outputs of 32 MiB and 8 MiB a call.

Expected verdict: pass (on tasks/big_torch.py).
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return 1 + 2 * x, x[:, :1024].sum(dim=0, keepdim=True).expand(2048, -1).contiguous()
