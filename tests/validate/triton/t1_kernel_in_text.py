"""Type 1: the kernel exists only in a comment and in a string.

@triton.jit
def kernel(x_ptr): tl.store(x_ptr, tl.load(x_ptr) + 1)
"""
import torch
import torch.nn as nn

# @triton.jit
# def add_kernel(a, b, out): tl.store(out, tl.load(a) + tl.load(b))
SOURCE = "@triton.jit\ndef k(p):\n    tl.store(p, tl.load(p) * 2)\n"


class ModelNew(nn.Module):
    def forward(self, a, b):
        # add_kernel[grid](a, b, out)
        return torch.add(a, b)
