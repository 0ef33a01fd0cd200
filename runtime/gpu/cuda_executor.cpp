// The CUDA side of a plan: its kernel key, the grid limits of the CUDA kernels, and the CUDA
// backend of the GPU executor (gpu_executor.cpp runs the launches).
#include "gpu/cuda_executor.h"

#include "facts/tile_facts.h"
#include "gpu/gpu_executor.h"

#include <climits>
#include <string>
#include <vector>

#if defined(DECONV_HAVE_CUDA)
#include "HalideRuntimeCuda.h"
#include "deconv_cuda_strided_copy_u16.h"
#include "deconv_cuda_strided_copy_u32.h"
#include "deconv_cuda_strided_copy_u64.h"
#include "deconv_cuda_strided_copy_u8.h"
#include "deconv_cuda_zero_fill_u16.h"
#include "deconv_cuda_zero_fill_u32.h"
#include "deconv_cuda_zero_fill_u64.h"
#include "deconv_cuda_zero_fill_u8.h"
#endif

namespace deconv {
namespace detail {

KernelKey cuda_kernel_key(const OpGeometry &g, DType dtype) {
    KernelKey k;
    k.family = g.forward ? KernelFamily::GroupConv : KernelFamily::Phase;
    k.rank = g.rank;
    k.dtype = dtype;
    k.device = Device::CUDA;
    k.layout = g.data_format;
    k.channels = g.data_format == DataFormat::NXC;
    return k;
}

std::string cuda_launch_problem(const OpGeometry &g, const std::vector<int64_t> &out_spatial) {
    const bool nxc = g.data_format == DataFormat::NXC;
    const size_t d = out_spatial.size();
    const int64_t width = out_spatial.back();
    const int64_t q1 = d >= 2 ? out_spatial[d - 2] : 1, q2 = d >= 3 ? out_spatial[d - 3] : 1;
    const auto blocks = [](int64_t n, int64_t per) { return (n + per - 1) / per; };
    const int64_t per_x = tiles::gpu_threads_x(), per_y = tiles::gpu_threads_y();
    // The schedule's mappings (gpu_schedule.h), each at the largest grid it can launch: one
    // element of its tile axes per thread (the fallback of small extents).
    //   threads along positions: x = q0 blocks x q1, y = channel blocks (of threads_y) x q2;
    //   threads along channels: x = channel blocks x q0 (rank 1: x q0 blocks of threads_y),
    //                           y = q1 blocks (of threads_y) x q2.
    const char *channels = "output channels per group ", *positions = "innermost output extent ";
    // Threads along positions serve every layer (the fallback of every layout); threads along
    // channels where the schedule's specializations pick them.
    const bool channel_major = nxc ? g.c_out >= tiles::gpu_channel_threads_min()
                                   : width < tiles::gpu_narrow_width() && g.c_out >= per_x;
    const auto too_wide = [&](const std::string &what) {
        return what + " exceeds the CUDA kernels' grid x (at most 2147483647 blocks)";
    };
    const auto too_tall = [&](const std::string &what) {
        return what + " exceeds the CUDA kernels' grid y (at most 65535 blocks)";
    };
    const std::string next = d >= 2 ? " times the next output extent " + std::to_string(q1) : "";
    const std::string outer = d >= 3 ? " times the outermost output extent " + std::to_string(q2) : "";
    if (blocks(width, per_x) * q1 > INT32_MAX) return too_wide(positions + std::to_string(width) + next);
    if (blocks(g.c_out, per_y) * q2 > 65535) return too_tall(channels + std::to_string(g.c_out) + outer);
    if (channel_major) {
        const int64_t x = blocks(g.c_out, per_x) * (d >= 2 ? width : blocks(width, per_y));
        if (x > INT32_MAX) return too_wide(channels + std::to_string(g.c_out) + " times " + positions + std::to_string(width));
        if (d >= 2 && blocks(q1, per_y) * q2 > 65535)
            return too_tall("next output extent " + std::to_string(q1) + outer);
    }
    if (g.groups * g.n > 65535) {
        return "groups " + std::to_string(g.groups) + " times batch " + std::to_string(g.n) +
               " exceeds the CUDA kernels' grid z (at most 65535)";
    }
    // 32-bit indexing (DECONV_GPU_KERNEL_FEATURES, cmake/DeconvKernels.cmake). The extents are
    // validated, so these products fit int64.
    const auto count = [](int64_t first, const std::vector<int64_t> &rest) {
        for (int64_t v : rest) first *= v;
        return first;
    };
    const struct {
        const char *name;
        int64_t elements;
    } tensors[] = {{"data", count(g.n * g.groups * g.c_in, g.in_spatial)},
                   {"filter", count(g.groups * g.c_in * g.c_out, g.kernel)},
                   {"output", count(g.n * g.groups * g.c_out, out_spatial)}};
    for (const auto &t : tensors) {
        if (t.elements > INT32_MAX) {
            return std::string("the ") + t.name + " tensor's " + std::to_string(t.elements) +
                   " elements exceed the CUDA kernels' 32-bit indexing (at most 2147483647)";
        }
    }
    return "";
}

#if defined(DECONV_HAVE_CUDA)
namespace {

// CUDA device handles are addresses: a view inside a tensor is its address plus the offset.
int cuda_view_at(uint64_t base, int64_t bytes, uint64_t *view) {
    *view = base + (uint64_t)bytes;
    return 0;
}

const GpuBackend kCudaBackend = {
    "CUDA",
    &halide_cuda_device_interface,
    {&deconv_cuda_zero_fill_u8, &deconv_cuda_zero_fill_u16, &deconv_cuda_zero_fill_u32, &deconv_cuda_zero_fill_u64},
    {&deconv_cuda_strided_copy_u8, &deconv_cuda_strided_copy_u16, &deconv_cuda_strided_copy_u32,
     &deconv_cuda_strided_copy_u64},
    &cuda_view_at,
    nullptr,
};

}  // namespace

void run_cuda(const Plan::Impl &p, const ConstTensorView &input, const ConstTensorView &filter,
              const TensorView &output, const std::vector<int64_t> &in_st0, const std::vector<int64_t> &w_st0,
              const std::vector<int64_t> &out_st0, const GpuPackedFilter *packed) {
    run_gpu(kCudaBackend, p, *p.kernel, input, filter, output, in_st0, w_st0, out_st0, packed);
}

std::shared_ptr<const GpuPackedFilter> pack_filter_cuda(const Plan::Impl &p, const ConstTensorView &filter,
                                                        const std::vector<int64_t> &w_st0) {
    return pack_filter_on_gpu(kCudaBackend, p, filter, w_st0);
}

#endif  // DECONV_HAVE_CUDA

}  // namespace detail
}  // namespace deconv
