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
    // The register cap Halide's CUDA runtime JIT-compiles the kernels' PTX with: the caller's
    // HL_CUDA_JIT_MAX_REGISTERS when set, else kJitMaxRegisters (0 when unavailable).
    int jit_max_registers = 0;
};

// The register cap the library sets for the CUDA JIT (HL_CUDA_JIT_MAX_REGISTERS) unless the
// caller set one. Halide 14 otherwise caps every kernel at 64 registers, at which ptxas (sm_90)
// spills 200-1540 bytes per module in the rank-2 and rank-3 kernels (64-bit indexing,
// large_buffers). At 128 only the rank-3 f32 kernels still spill (at most 252 bytes), and the
// kernels' 128-thread blocks keep 4 blocks (16 warps) per multiprocessor; any block of up to 512
// threads can still launch (512 x 128 registers = the 64K register file). docs/cuda.md has the
// spill table and the H100 timings behind this value.
constexpr int kJitMaxRegisters = 128;

// Probed once (thread-safe), then cached: loads libcuda.so.1, calls cuInit, counts GPUs,
// retains the primary context, points Halide's CUDA runtime at it and sets its JIT register cap
// (before any kernel module is loaded, as Halide reads it at each module's JIT). Never throws.
const CudaState &cuda_state();

// Driver memory calls in that context (CudaBuffer). Each returns "" on success, else the failing
// call and the driver's error; they require cuda_state().available.
std::string cuda_mem_alloc(size_t bytes, uint64_t *address);
void cuda_mem_free(uint64_t address);
std::string cuda_copy_to_device(uint64_t dst, const void *src, size_t bytes);
std::string cuda_copy_to_host(void *dst, uint64_t src, size_t bytes);

}  // namespace detail
}  // namespace deconv
