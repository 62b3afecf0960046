// Type 3: ATen does the work in host code: torch::matmul, a tensor method,
// a qualified at:: call, and tensor arithmetic.
#include <torch/extension.h>

__global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

torch::Tensor fused(torch::Tensor a, torch::Tensor b, torch::Tensor bias) {
    auto y = torch::matmul(a, b);
    y = y.softmax(-1);
    y = at::native::relu(y);
    add_one<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), y.numel());
    return y + bias;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("fused", &fused);
}
