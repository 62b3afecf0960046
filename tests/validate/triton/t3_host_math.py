"""Type 3: numpy computes on the host."""
import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def inc_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        inc_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
        host = x.cpu().numpy()
        return torch.as_tensor(np.exp(host), device=x.device)
