// The CUDA driver as the library sees it: whether it can run CUDA kernels here, and the context
// Halide's CUDA runtime uses (the primary context of the chosen GPU, the one the CUDA runtime
// API and most frameworks use, so callers' device pointers are valid in it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace deconv {
namespace detail {

struct CudaState {
    bool available = false;
    std::string reason;   // why not, when !available
    int ordinal = 0;      // the GPU used (HL_GPU_DEVICE, default 0)
    std::string name;     // its name, when available
};

// Probed once (thread-safe), then cached: loads libcuda.so.1, calls cuInit, counts GPUs,
// retains the primary context and points Halide's CUDA runtime at it. Never throws.
const CudaState &cuda_state();

// Driver memory calls in that context (CudaBuffer). Each returns "" on success, else the failing
// call and the driver's error; they require cuda_state().available.
std::string cuda_mem_alloc(size_t bytes, uint64_t *address);
void cuda_mem_free(uint64_t address);
std::string cuda_copy_to_device(uint64_t dst, const void *src, size_t bytes);
std::string cuda_copy_to_host(void *dst, uint64_t src, size_t bytes);

}  // namespace detail
}  // namespace deconv
