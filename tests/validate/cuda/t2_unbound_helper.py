"""Type 2: the host function that launches is not the one forward calls."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = """
__global__ void abs_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fabsf(x[i]);
}

void launch_abs(const float* x, float* y, int n) {
    abs_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
}

torch::Tensor abs_fast(torch::Tensor x) {
    return x.clone();
}

torch::Tensor abs_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    launch_abs(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

ext = load_inline(name="absx", cpp_sources="", cuda_sources=SRC,
                  functions=["abs_fast", "abs_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.abs_fast(x)
