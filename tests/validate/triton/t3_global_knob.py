"""Type 3: global PyTorch settings flipped, and the reference module inherited."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from reference import Model

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.benchmark = True


@triton.jit
def mul_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.5, mask=mask)


class ModelNew(Model):
    def forward(self, x):
        mul_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
        return x
