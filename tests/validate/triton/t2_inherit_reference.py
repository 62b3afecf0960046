"""Type 2: ModelNew is the reference in disguise."""
import triton
import triton.language as tl
from reference import Model


@triton.jit
def unused_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


class ModelNew(Model):
    pass
