// Type 4: the kernel writes zeros.
#include <torch/extension.h>

__global__ void zero_kernel(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.0f;
}

torch::Tensor zeros(torch::Tensor x) {
    auto y = torch::empty_like(x);
    zero_kernel<<<(x.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), x.numel());
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("zeros", &zeros);
}
