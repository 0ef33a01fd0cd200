// The CUDA side of a plan: its kernel key, the grid limits of the CUDA kernels, and the CUDA
// backend of the GPU executor (gpu_executor.cpp runs the launches).
#include "cuda_executor.h"

#include "../generators/schedules/tile_facts.h"
#include "gpu_executor.h"

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
    // The schedule's mappings (gpu_schedule.h): threads along positions (channels-first) or along
    // channels (channels-last, and narrow channels-first phases). Checked at the largest grid
    // each can launch: one element and one row per thread (the fallback of small extents).
    struct Mapping {
        int64_t a, b;
        const char *a_name, *b_name;
    };
    std::vector<Mapping> mappings;
    const char *channels = "output channels per group ", *positions = "innermost output extent ";
    if (!nxc) mappings.push_back({width, g.c_out, positions, channels});
    if (nxc || (width < tiles::gpu_narrow_width() && g.c_out >= per_x))
        mappings.push_back({g.c_out, width, channels, positions});
    for (const Mapping &m : mappings) {
        if (blocks(m.a, per_x) * q1 > INT32_MAX) {
            return m.a_name + std::to_string(m.a) +
                   (d >= 2 ? " times the next output extent " + std::to_string(q1) : "") +
                   " exceeds the CUDA kernels' grid x (at most 2147483647 blocks of " + std::to_string(per_x) + ")";
        }
        if (blocks(m.b, per_y) * q2 > 65535) {
            return m.b_name + std::to_string(m.b) +
                   (d >= 3 ? " times the outermost output extent " + std::to_string(q2) : "") +
                   " exceeds the CUDA kernels' grid y (at most 65535 blocks of " + std::to_string(per_y) + ")";
        }
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
