"""Type 3: the kernel runs, and cuBLAS does the matrix product."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = """
#include <cublas_v2.h>

__global__ void bias_relu(float* y, const float* b, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(y[i] + b[i % m], 0.0f);
}

torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto y = torch::empty({x.size(0), w.size(0)}, x.options());
    cublasHandle_t handle;
    cublasCreate(&handle);
    float one = 1.0f, zero = 0.0f;
    cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, w.size(0), x.size(0), x.size(1), &one,
                w.data_ptr<float>(), x.size(1), x.data_ptr<float>(), x.size(1), &zero,
                y.data_ptr<float>(), w.size(0));
    int n = y.numel();
    bias_relu<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(), n, w.size(0));
    return y;
}
"""

ext = load_inline(name="lr", cpp_sources="", cuda_sources=SRC, functions=["linear_relu"],
                  extra_ldflags=["-lcublas"])


class ModelNew(nn.Module):
    def forward(self, x, w, b):
        return ext.linear_relu(x, w, b)
