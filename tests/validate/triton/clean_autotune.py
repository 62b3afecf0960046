"""Clean: @triton.autotune over @triton.jit(...), a grid lambda, a launch from a staticmethod."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
@triton.jit(do_not_specialize=["n"])
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class Op:
    @staticmethod
    def run(x):
        out = torch.empty_like(x)
        n = x.numel()
        relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        return out


class ModelNew(nn.Module):
    def forward(self, x):
        return Op.run(x)
