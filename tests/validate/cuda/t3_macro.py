"""Type 3: macros hide library calls: token pasting and a torch:: call."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#define LIB(name) cub##las##name
#define PRODUCT(a, b) torch::mm(a, b)

__global__ void twice(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}

torch::Tensor run(torch::Tensor a, torch::Tensor b) {
    auto y = PRODUCT(a, b);
    twice<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), y.numel());
    return y;
}
"""

ext = load_inline(name="m", cpp_sources="", cuda_sources=SRC, functions=["run"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.run(a, b)
