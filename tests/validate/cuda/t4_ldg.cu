// Type 4: __ldg loads, a cast and a vector copy; nothing is computed.
#include <torch/extension.h>

__global__ void move4(const float4* __restrict__ x, float4* __restrict__ y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = __ldg(&x[i]);
        y[i] = v;
    }
}

__global__ void move1(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) *(y + i) = (float)x[i];
}

torch::Tensor move(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    move4<<<(n / 4 + 255) / 256, 256>>>((const float4*)x.data_ptr<float>(),
                                        (float4*)y.data_ptr<float>(), n / 4);
    move1<<<1, 4>>>(x.data_ptr<float>(), y.data_ptr<float>(), n % 4);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("move", &move);
}
