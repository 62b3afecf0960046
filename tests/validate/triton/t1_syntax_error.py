"""Type 1: the file does not parse."""
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


class ModelNew:
    def forward(self, x):
        return x
