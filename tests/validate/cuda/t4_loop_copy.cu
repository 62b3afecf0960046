// Type 4: a grid-stride loop that copies, and nothing else.
#include <torch/extension.h>

__global__ void copy_loop(const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float v = x[i];
        y[i] = v;
    }
}

torch::Tensor copy(torch::Tensor x) {
    auto y = torch::empty_like(x);
    copy_loop<<<128, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("copy", &copy);
}
