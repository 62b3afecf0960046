// Type 2: every launch is dead: #if 0, if (0), after return.
#include <torch/extension.h>

__global__ void inc_kernel(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] + 1.0f;
}

torch::Tensor inc(torch::Tensor x) {
    int n = x.numel();
#if 0
    inc_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
#endif
    if (0) {
        inc_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
    }
    return x;
    inc_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("inc", &inc);
}
