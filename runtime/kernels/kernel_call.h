// Describing a kernel call: Halide buffer dimensions over the caller's or the plan's memory, the
// axis orders of the kernels' buffers per layout, and reporting a kernel's failure. Shared by the
// CPU, batch-rows and CUDA executors.
#pragma once

#include "HalideRuntime.h"
#include "deconv/deconv.h"
#include "kernels/kernel_registry.h"
#include "layer/op_geometry.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// C-order strides of a dense tensor of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape);
// A channels-first shape or strides [N, C, X..] in channels-last order [N, X.., C].
std::vector<int64_t> ncx_to_nxc_order(const std::vector<int64_t> &v);
// And back: [N, X.., C] in channels-first order [N, C, X..].
std::vector<int64_t> nxc_to_ncx_order(const std::vector<int64_t> &v);

void set_dim(halide_dimension_t &d, int64_t min, int64_t extent, int64_t stride);
halide_type_t halide_type(DType t);
// Writes zeros at the strided positions of one phase that receives no tap; extent and stride
// in Halide order (innermost first). Dense innermost runs are one memset each, and large fills
// run on the thread pool: element by element on one thread, the phases without taps of a layer
// of kernel 3 at stride 4 took a quarter of its run (2D, 256 -> 128 channels, 32x32).
void zero_fill(uint8_t *base, size_t elem, const std::vector<int64_t> &extent, const std::vector<int64_t> &stride);
// zero_fill over a kernel call's output view: its `n` dims, then `copies` of them `step`
// elements apart (an interleaved call's phases).
void zero_fill_view(uint8_t *base, size_t elem, const halide_dimension_t *dims, int n, int64_t copies = 1,
                    int64_t step = 0);
// Halide's buffer fields are 32-bit: every extent, stride and coordinate of a call must fit.
void check_fits_int32(const std::vector<int64_t> &values, const char *what);
// Halide dimension of a data tensor's logical axis (0..D-1: spatial, Halide order; D: channel;
// D+1: group; D+2: batch), per data format. Mirrors generators/data_layout.h.
int data_dim(DataFormat f, int rank, int logical);
// Halide dimension of a filter's logical axis (0..D-1: taps; D: co; D+1: ci; D+2: g).
int filter_dim(bool channel_major, int rank, int logical);

// The channel, group and batch axes of the three kernel buffers, the same for every phase:
// data strides in NCX order (in_nc, out_nc: batch, channel, ...), the filter's as the kernel
// reads it (the packed copy on the CPU, the caller's tensor on CUDA).
struct ChannelStrides {
    int64_t co, ci, g;
};
void set_channel_dims(const OpGeometry &geo, bool channel_major, const std::vector<int64_t> &in_nc,
                      const std::vector<int64_t> &out_nc, ChannelStrides w, halide_dimension_t *in_dims,
                      halide_dimension_t *w_dims, halide_dimension_t *out_dims);

[[noreturn]] void fail_kernel(const KernelEntry *kernel, int rc);

// The three buffers of one kernel call over dimension arrays the caller keeps, `dims` each.
struct KernelBuffers {
    halide_buffer_t in{}, w{}, out{};
    KernelBuffers(DType dtype, int dims, const uint8_t *in_base, const uint8_t *w_base, uint8_t *out_base,
                  halide_dimension_t *in_dims, halide_dimension_t *w_dims, halide_dimension_t *out_dims) {
        view(in, dtype, dims, (uint8_t *)in_base, in_dims);
        view(w, dtype, dims, (uint8_t *)w_base, w_dims);
        view(out, dtype, dims, out_base, out_dims);
    }
    static void view(halide_buffer_t &b, DType dtype, int dims, uint8_t *host, halide_dimension_t *dim) {
        b.host = host;
        b.type = halide_type(dtype);
        b.dimensions = dims;
        b.dim = dim;
    }
};

// One call of a phase kernel (`kernel_rank` spatial axes; position or channel schedule) on the

// Visits every combination of per-axis entries (counts[i] entries on axis i), the last axis
// fastest: the phase odometer every executor walks.
template <typename Fn>
void for_each_combination(const std::vector<size_t> &counts, Fn fn) {
    for (size_t c : counts)
        if (c == 0) return;
    std::vector<size_t> at(counts.size(), 0);
    for (;;) {
        fn(at);
        int i = (int)counts.size() - 1;
        for (; i >= 0; i--) {
            if (++at[i] < counts[i]) break;
            at[i] = 0;
        }
        if (i < 0) return;
    }
}

}  // namespace detail
}  // namespace deconv
