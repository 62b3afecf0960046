"""Type 1: a __global__ kernel sits in a string that is never built; what is
built calls ATen."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

UNUSED = """
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
"""

BUILT = """
#include <torch/extension.h>
torch::Tensor relu_fwd(torch::Tensor x) {
    return at::relu(x);
}
"""

ext = load_inline(name="r", cpp_sources=BUILT, functions=["relu_fwd"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_fwd(x)
