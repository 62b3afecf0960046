"""Type 4: block pointers, loads and a store, and nothing computed."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tile_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tile = tl.load(src, boundary_check=(0, 1))
    tl.store(dst, tile, boundary_check=(0, 1))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        M, N = x.shape
        tile_copy[(triton.cdiv(M, 64),)](x, out, M, N, BM=64, BN=triton.next_power_of_2(N))
        return out
