"""Wrong candidate: the Triton matmul with B's strides swapped, so it reads
B transposed and computes A @ B.T.  With square matrices it runs without
error and returns outputs of the right shape and magnitude, about 5% off:
the judge must fail it."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + k[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=torch.float32, device=a.device)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        # BUG: b.stride(1), b.stride(0) in the wrong order
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(1), b.stride(0),
                            c.stride(0), c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
        return c
