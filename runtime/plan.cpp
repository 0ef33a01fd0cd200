// Plan: validates and resolves a layer once, then runs it on the AOT kernels: the backprop ops
// as one kernel call per combination of stride phases, the forward op as one call.
#include "bordered_input.h"
#include "buffer_pool.h"
#include "checked_math.h"
#include "cpu_thread_pool.h"
#include "cuda_glue.h"
#include "deconv/deconv.h"
#include "f16_conversion.h"
#include "halide_glue.h"
#include "kernel_registry.h"
#include "messages.h"
#include "op_geometry.h"
#include "phase_decomposition.h"
#include "tensor_copy.h"

#include "HalideRuntime.h"
#if defined(DECONV_HAVE_CUDA)
#include "HalideRuntimeCuda.h"
#include "deconv_cuda_zero_fill_u16.h"
#include "deconv_cuda_zero_fill_u32.h"
#include "deconv_cuda_zero_fill_u64.h"
#include "deconv_cuda_zero_fill_u8.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <vector>

namespace deconv {

using detail::AxisPhase;
using detail::checked_mul;

struct Plan::Impl {
    Op op;
    DType dtype;
    std::vector<int64_t> input_shape, filter_shape;  // as the caller gives them
    ShapeInfo info;
    detail::OpGeometry geo;
    std::vector<int64_t> out_spatial;            // spec order
    std::vector<std::vector<AxisPhase>> phases;  // backprop: per spatial axis (spec order)
    const detail::KernelEntry *kernel = nullptr;           // backprop: bounded, any phase
    const detail::KernelEntry *interior_kernel = nullptr;  // phases whose taps all read inside the input
    // The kernels vectorize output channels (and read the filter packed channel-major).
    bool channel_major = false;
    // bf16 channels-last kernels that reduce input channel pairs with vdpbf16ps: the packed
    // filter holds each pair's two weights of an output channel adjacent (pack_filter).
    bool ci_pairs = false;
    // Backprop layers whose input is small enough (channel-vectorized ones, and position-
    // vectorized ones with few output channels) run every phase on the interior kernel over a
    // zero-bordered copy of the input (bordered_input.h): the bounded kernels' clamped reads
    // compile to gathers or scalar loads behind selects. Margins per spatial axis, spec order;
    // empty when the layer reads the caller's input directly.
    std::vector<int64_t> border_lo, border_hi;
    bool border_copy = false;  // some margin is non-zero: each run copies the input into one
    mutable detail::BufferPool bordered_pool;  // the copies' buffers, kept between runs
    mutable detail::BufferPool output_pool;    // dense outputs of channels-last kernels (see run_cpu)
    mutable detail::BufferPool slab_pool;      // their row slabs' buffers, one per task (see run_cpu)
    // Bordered layers whose innermost axis has stride 2 or 8 (dilation 1) run all of its phases
    // together, stored as dense rows (deconv_phase_conv_interleaved); null otherwise.
    const detail::KernelEntry *interleaved_kernel = nullptr;
    // With the blocked interleaved kernel: the plain one, for the groups of a row past its last
    // whole multiple of kBlockedRowTile (null when the rows are such multiples).
    const detail::KernelEntry *interleaved_tail_kernel = nullptr;
    // Depthwise rows (one input channel) of the plain interleaved kernel that are no multiple of
    // kExactRowTile groups: run as their first whole multiple, which takes the kernel's exact-tile
    // branch, then the rest in a second call.
    bool interleaved_exact_rows = false;
    // 1D layers on the interleaved kernel read the caller's input in place, not a bordered copy
    // of it: the row's groups [left, left + middle) read inside the input, those before and after
    // read zero-bordered copies of their input windows, on `kernel` (choose_edge_windows).
    // middle = 0: the layer reads a whole bordered copy.
    struct EdgeWindows {
        int64_t left = 0, middle = 0;
        detail::InterleavedReach reach{0, 0};  // group q reads input [q + reach.lo, q + reach.hi]
        const detail::KernelEntry *kernel = nullptr;
    } edges;
    // 3D layers on the blocked interleaved kernel: the input copy lays the channel axis out
    // between the innermost axis and the outer ones (bordered_buffer), and every run makes one,
    // margins or not (see choose_bordered_input).
    bool channels_in_rows = false;
    // Channels-last layers of narrow phase rows and a wide batch run with the images as the
    // innermost row, on this kernel of the next rank (choose_batch_rows), one call per tap window
    // of each axis's phases (tap_windows[axis][phase]); null otherwise.
    const detail::KernelEntry *batch_rows_kernel = nullptr;
    std::vector<std::vector<std::vector<detail::TapWindow>>> tap_windows;
    // Where `kernel` runs. CUDA kernels read the caller's filter unpacked, through its strides.
    Device device = Device::CPU;
    // Why a Device::CUDA request runs on the CPU (ExecOptions::allow_cpu_fallback); else empty.
    std::string fallback_reason;
    int64_t macs = 0;
    // f16 layers on x86 with F16C: the f32 plan of the same layer (see f16_conversion.h).
    std::shared_ptr<const Impl> via_f32;
    // Channels-first backprop layers with many output channels: the same layer on channels-last
    // data, whose kernels store whole channel vectors (see choose_via_channels_last). Runs
    // transpose the input into it and its result back.
    std::shared_ptr<const Impl> via_nxc;
};

namespace {

using detail::invalid;
using detail::shape_str;

// The measuring switches (DECONV_BORDERED_INPUT, DECONV_CHANNEL_BLOCKS, ...): the environment
// variable `name` set to "0" turns a path off.
bool switched_off(const char *name) {
    const char *env = std::getenv(name);
    return env && std::strcmp(env, "0") == 0;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> st(shape.size());
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        st[i] = s;
        s *= shape[i];
    }
    return st;
}

// Checks a view against the plan: dtype, shape, pointer and strides. Returns the strides to
// use (dense when the view gives none).
std::vector<int64_t> check_view(const char *what, const void *data, DType dtype, const std::vector<int64_t> &shape,
                                const std::vector<int64_t> &strides, DType want_dtype,
                                const std::vector<int64_t> &want_shape, bool is_output) {
    if (dtype != want_dtype) {
        invalid(std::string(what) + " dtype " + dtype_name(dtype) + " does not match the layer's dtype " +
                dtype_name(want_dtype));
    }
    if (shape != want_shape) {
        invalid(std::string(what) + " shape " + shape_str(shape) + " does not match the expected " +
                shape_str(want_shape));
    }
    if (!data) invalid(std::string(what) + " data pointer is null");
    if (strides.empty()) return dense_strides(shape);
    if (strides.size() != shape.size()) {
        invalid(std::string(what) + " has " + std::to_string(strides.size()) + " strides " + shape_str(strides) +
                " for " + std::to_string(shape.size()) + " axes");
    }
    for (size_t i = 0; i < strides.size(); i++) {
        if (strides[i] < 0) {
            invalid(std::string(what) + " strides[" + std::to_string(i) + "] is " + std::to_string(strides[i]) +
                    "; negative strides are not supported");
        }
        if (strides[i] > (int64_t(1) << 48)) {
            throw Error(ErrorKind::TooLarge, std::string(what) + " strides[" + std::to_string(i) + "] is " +
                                                 std::to_string(strides[i]) + ", beyond any addressable tensor");
        }
    }
    if (is_output) {
        // No two elements of the output may share memory: order the axes by stride and require
        // each stride to step over the whole extent of the axes inside it.
        std::vector<size_t> order(shape.size());
        for (size_t i = 0; i < order.size(); i++) order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
        int64_t span = 1;
        for (size_t i : order) {
            if (shape[i] == 1) continue;
            if (strides[i] < span) {
                invalid(std::string(what) + " strides " + shape_str(strides) + " make elements overlap (axis " +
                        std::to_string(i) + " stride " + std::to_string(strides[i]) + " < " +
                        std::to_string(span) + ")");
            }
            span = checked_mul(strides[i], shape[i], "output span");
        }
    }
    return strides;
}

void set_dim(halide_dimension_t &d, int64_t min, int64_t extent, int64_t stride) {
    d.min = (int32_t)min;
    d.extent = (int32_t)extent;
    d.stride = (int32_t)stride;
    d.flags = 0;
}

halide_type_t halide_type(DType t) {
    switch (t) {
    case DType::f32: return halide_type_t(halide_type_float, 32);
    case DType::f16: return halide_type_t(halide_type_float, 16);
    case DType::bf16: return halide_type_t(halide_type_bfloat, 16);
    case DType::f64: return halide_type_t(halide_type_float, 64);
    case DType::i8: return halide_type_t(halide_type_int, 8);
    case DType::u8: return halide_type_t(halide_type_uint, 8);
    case DType::i32: return halide_type_t(halide_type_int, 32);
    }
    return halide_type_t();
}

// Writes zeros at the strided positions of one phase that receives no tap.
void zero_fill(uint8_t *base, size_t elem, const std::vector<int64_t> &extent, const std::vector<int64_t> &stride,
               size_t axis = 0) {
    if (axis == extent.size()) {
        std::memset(base, 0, elem);
        return;
    }
    for (int64_t i = 0; i < extent[axis]; i++) {
        zero_fill(base + i * stride[axis] * (int64_t)elem, elem, extent, stride, axis + 1);
    }
}

// Halide's buffer fields are 32-bit: every extent, stride and coordinate of a call must fit.
void check_fits_int32(const std::vector<int64_t> &values, const char *what) {
    for (int64_t v : values) {
        if (v > INT32_MAX || v < INT32_MIN) {
            throw Error(ErrorKind::TooLarge, std::string(what) + " value " + std::to_string(v) +
                                                 " does not fit the kernels' 32-bit buffer fields");
        }
    }
}

// Halide dimension of a data tensor's logical axis (0..D-1: spatial, Halide order; D: channel;
// D+1: group; D+2: batch), per data format. Mirrors generators/data_layout.h.
int data_dim(DataFormat f, int rank, int logical) {
    if (f == DataFormat::NCX) return logical;
    if (logical < rank) return 2 + logical;
    if (logical == rank) return 0;
    if (logical == rank + 1) return 1;
    return rank + 2;
}

// Halide dimension of a filter's logical axis (0..D-1: taps; D: co; D+1: ci; D+2: g).
int filter_dim(bool channel_major, int rank, int logical) {
    if (!channel_major) return logical;
    if (logical < rank) return 3 + logical;
    return logical - rank;
}

// The channel, group and batch axes of the three kernel buffers, the same for every phase:
// data strides in NCX order (in_nc, out_nc: batch, channel, ...), the filter's as the kernel
// reads it (the packed copy on the CPU, the caller's tensor on CUDA).
struct ChannelStrides {
    int64_t co, ci, g;
};
void set_channel_dims(const detail::OpGeometry &geo, bool channel_major, const std::vector<int64_t> &in_nc,
                      const std::vector<int64_t> &out_nc, ChannelStrides w, halide_dimension_t *in_dims,
                      halide_dimension_t *w_dims, halide_dimension_t *out_dims) {
    const int rank = geo.rank;
    auto dd = [&](int logical) { return data_dim(geo.data_format, rank, logical); };
    auto fd = [&](int logical) { return filter_dim(channel_major, rank, logical); };
    set_dim(in_dims[dd(rank)], 0, geo.c_in, in_nc[1]);
    set_dim(in_dims[dd(rank + 1)], 0, geo.groups, geo.c_in * in_nc[1]);
    set_dim(in_dims[dd(rank + 2)], 0, geo.n, in_nc[0]);
    set_dim(w_dims[fd(rank)], 0, geo.c_out, w.co);
    set_dim(w_dims[fd(rank + 1)], 0, geo.c_in, w.ci);
    set_dim(w_dims[fd(rank + 2)], 0, geo.groups, w.g);
    set_dim(out_dims[dd(rank)], 0, geo.c_out, out_nc[1]);
    set_dim(out_dims[dd(rank + 1)], 0, geo.groups, geo.c_out * out_nc[1]);
    set_dim(out_dims[dd(rank + 2)], 0, geo.n, out_nc[0]);
}

// The filter of the interleaved kernel, from the position kernels' packing: logical
// [j, ph, k_1 .. k_{D-1}, co, ci, g] (innermost axis first) where (j, ph) is tap
// tap_first(ph) + s*j of the innermost axis (stride s, one phase per output residue), zero where that phase has fewer taps; stored
// [g, k_outer.., ph, j, ci, co] (outermost first).
struct InterleavedFilter {
    std::vector<uint8_t> data;
    int64_t taps = 0;                  // j extent: the most taps of a phase
    int64_t j = 0, ph = 0, g = 0;      // strides
    std::vector<int64_t> k;            // outer axes' tap strides, spec order (rank - 1)
};

// The packed filter the kernels read: position-vectorized kernels [g, k.., ci, co],
// channel-vectorized kernels [k.., g, ci, co] (outermost first). Output channels are innermost
// in both: the former broadcast co_tile consecutive weights per (ci, tap), which then share a
// cache line; the latter load them as vectors.
struct FilterPacking {
    std::vector<uint8_t> data;
    int64_t co = 1, ci = 0, g = 0;
    std::vector<int64_t> k;  // spec order
    // Channel-vectorized kernels (channel_block_width): blocks of block_channels output channels,
    // each a whole packing of its own, [k.., g, ci, block_channels] or, for channel pairs,
    // [k.., g, ci/2, block_channels, 2] (the last block zero-padded), so that a kernel call on
    // one block streams its weights from one contiguous array.
    int64_t block = 0;           // elements per block; 0: one packing of every output channel
    int64_t block_channels = 0;  // output channels per block
    // Plans with an interleaved kernel: its filter too, packed with the rest (once per
    // Plan::pack_filter; repacked per run, it cost hifigan_up3 a fresh 128 KiB mapping, zeroed
    // and faulted in, every run).
    InterleavedFilter interleaved;
};

InterleavedFilter pack_interleaved(const FilterPacking &f, const std::vector<AxisPhase> &inner,
                                   const detail::OpGeometry &geo, size_t elem);

// Output channels per block of the channel-vectorized kernels' packing: one kernel call per block.
// Channels-last: two of the kernels' channel tiles (4 AVX-512 vectors of f32 accumulators).
// Measured on unet_up1_bf16 (medians of 4 alternating runs): 64 channels 4.68 ms, 128 4.51, 256
// 4.73.
constexpr int64_t kChannelBlock = 128;
// Rows narrower than the kernels' position tile (6 on AVX-512), either layout: the narrow-row
// branch's tiles of 3 vectors (48 f32 channels; cpu_channels_last_schedule.h) take four to a
// block, so that each tile's weights stream from one contiguous run rather than 192 bytes of
// every 1 KiB row. dcgan_l2 (4x4 phases, 256 channels, 2048 input channels x taps; 2 threads,
// medians of 2 alternating runs): unblocked 20.0 ms, blocks of 96 16.2, of 192 15.7; blocks of
// 128 (not a whole number of tiles) 24.0. Layers with wider rows measured slower blocked
// (centernet_up3 25.5 -> 31.7 ms, unet_up1 10.6 -> 13.4), so channels-first layers keep one
// packing there.
constexpr int64_t kNarrowRowChannelBlock = 192;
constexpr int64_t kNarrowRowWidth = 6;

// Output channels per block of the filter packing of plan `p`, 0 for one packing of every output
// channel. DECONV_CHANNEL_BLOCKS=0 turns blocks off where the kernels allow it (for measuring).
int64_t channel_block_width(const Plan::Impl &p) {
    if (p.ci_pairs) return kChannelBlock;  // the pair kernels read blocked packings only
    if (!p.channel_major || p.geo.forward || switched_off("DECONV_CHANNEL_BLOCKS")) return 0;
    // Batch rows: every output channel in one call, whose parallel loops then hold all the
    // channel tiles (a window may be one row).
    if (p.batch_rows_kernel) return 0;
    bool narrow = p.geo.rank >= 2;
    for (const AxisPhase &a : p.phases[p.geo.rank - 1]) narrow = narrow && a.out_count < kNarrowRowWidth;
    if (narrow) return kNarrowRowChannelBlock;
    return p.geo.data_format == DataFormat::NXC ? kChannelBlock : 0;
}

// dst[i] = src[i * stride] for i < count, elements of `elem` bytes (typed copies: this loop
// runs once per weight on every run).
template <typename T>
void gather_typed(uint8_t *dst, const uint8_t *src, int64_t count, int64_t stride) {
    // Fixed-size memcpy: one move each, and no alignment assumed about the caller's buffer.
    for (int64_t i = 0; i < count; i++) std::memcpy(dst + i * sizeof(T), src + i * stride * sizeof(T), sizeof(T));
}

void gather_row(uint8_t *dst, const uint8_t *src, int64_t count, int64_t stride, size_t elem) {
    switch (elem) {
    case 1: return gather_typed<uint8_t>(dst, src, count, stride);
    case 2: return gather_typed<uint16_t>(dst, src, count, stride);
    case 4: return gather_typed<uint32_t>(dst, src, count, stride);
    default: return gather_typed<uint64_t>(dst, src, count, stride);
    }
}

FilterPacking pack_filter(const void *src, const std::vector<int64_t> &st, const Plan::Impl &p, size_t elem) {
    const detail::OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    FilterPacking f;
    int64_t taps = 1;
    for (int64_t k : geo.kernel) taps *= k;
    const int64_t block_width = channel_block_width(p);
    const bool blocked = block_width > 0;
    const int64_t width = blocked ? std::min(block_width, geo.c_out) : geo.c_out;  // channels per block
    const int64_t blocks = (geo.c_out + width - 1) / width;
    f.ci = width;
    f.k.assign(rank, 0);
    int64_t inner = geo.c_in * width;  // elements inside the innermost tap axis
    if (p.channel_major) {
        f.g = inner;
        inner *= geo.groups;
    }
    for (int i = rank; i-- > 0;) {
        f.k[i] = inner;
        inner *= geo.kernel[i];
    }
    if (!p.channel_major) f.g = inner;
    if (blocked) {
        f.block = inner;
        f.block_channels = width;
    }
    f.data.assign((size_t)(blocks * geo.groups * taps * geo.c_in * width) * elem, 0);

    const detail::FilterAxes &fa = geo.filter;
    const int64_t src_g = fa.g_stride(st), src_ci = st[fa.ci_axis], src_co = st[fa.co_axis];
    const uint8_t *in = (const uint8_t *)src;
    for (int64_t g = 0; g < geo.groups; g++) {
        for (int64_t t = 0; t < taps; t++) {
            // Decompose the flat tap index t into per-axis taps (C order).
            int64_t rem = t, src_off = g * src_g, dst_off = g * f.g;
            for (int i = rank; i-- > 0;) {
                const int64_t kd = geo.kernel[i], k = rem % kd;
                src_off += k * st[fa.k_axes[i]];
                dst_off += k * f.k[i];
                rem /= kd;
            }
            for (int64_t ci = 0; ci < geo.c_in; ci++) {
                const uint8_t *row = in + (src_off + ci * src_ci) * (int64_t)elem;
                if (p.ci_pairs) {
                    // Block co / width, [ci/2, co % width, ci % 2] inside it.
                    for (int64_t co = 0; co < geo.c_out; co++) {
                        const int64_t at = (co / width) * f.block + dst_off + (ci / 2) * 2 * width + 2 * (co % width) + ci % 2;
                        std::memcpy(f.data.data() + at * (int64_t)elem, row + co * src_co * (int64_t)elem, elem);
                    }
                } else {
                    for (int64_t c0 = 0; c0 < geo.c_out; c0 += width) {
                        uint8_t *dst = f.data.data() + ((c0 / width) * f.block + dst_off + ci * width) * (int64_t)elem;
                        const uint8_t *from = row + c0 * src_co * (int64_t)elem;
                        const int64_t count = std::min(width, geo.c_out - c0);
                        if (src_co == 1) {
                            std::memcpy(dst, from, (size_t)(count * (int64_t)elem));
                        } else {
                            gather_row(dst, from, count, src_co, elem);
                        }
                    }
                }
            }
        }
    }
    if (p.interleaved_kernel) f.interleaved = pack_interleaved(f, p.phases[rank - 1], geo, elem);
    return f;
}


InterleavedFilter pack_interleaved(const FilterPacking &f, const std::vector<AxisPhase> &inner,
                                   const detail::OpGeometry &geo, size_t elem) {
    const int rank = geo.rank;
    InterleavedFilter w;
    for (const AxisPhase &a : inner) w.taps = std::max(w.taps, a.tap_count);
    const int64_t block = geo.c_in * geo.c_out;  // [ci, co] in both packings
    w.j = block;
    w.ph = w.taps * block;
    int64_t outer_taps = 1, stride = (int64_t)inner.size() * w.ph;
    w.k.assign(rank - 1, 0);
    for (int i = rank - 1; i-- > 0;) {
        w.k[i] = stride;
        stride *= geo.kernel[i];
        outer_taps *= geo.kernel[i];
    }
    w.g = stride;
    w.data.assign((size_t)(geo.groups * stride) * elem, 0);
    for (int64_t g = 0; g < geo.groups; g++) {
        for (int64_t t = 0; t < outer_taps; t++) {
            int64_t rem = t, src = g * f.g, dst = g * w.g;
            for (int i = rank - 1; i-- > 0;) {
                const int64_t k = rem % geo.kernel[i];
                src += k * f.k[i];
                dst += k * w.k[i];
                rem /= geo.kernel[i];
            }
            for (size_t ph = 0; ph < inner.size(); ph++) {
                const AxisPhase &a = inner[ph];
                for (int64_t j = 0; j < a.tap_count; j++) {
                    const int64_t k = a.tap_first + j * a.tap_step;
                    std::memcpy(w.data.data() + (dst + (int64_t)ph * w.ph + j * w.j) * (int64_t)elem,
                                f.data.data() + (src + k * f.k[rank - 1]) * (int64_t)elem, (size_t)(block * (int64_t)elem));
                }
            }
        }
    }
    return w;
}

// Pairs (output position, tap) of a forward axis whose input index lies inside [0, X).
int64_t forward_pairs(int64_t x, int64_t k, int64_t y, int64_t s, int64_t d, int64_t pb) {
    int64_t pairs = 0;
    for (int64_t j = 0; j < k; j++) {
        // 0 <= q*s + j*d - pb < x, 0 <= q < y
        const int64_t lo = std::max<int64_t>(0, detail::floor_div(pb - j * d + s - 1, s));
        const int64_t hi = std::min<int64_t>(y, detail::floor_div(x - 1 + pb - j * d, s) + 1);
        if (hi > lo) pairs += hi - lo;
    }
    return pairs;
}

// Channels-first backprop layers choose their schedule: vectorized output channels when a
// group has at least a vector of them (16 f32 lanes on AVX-512) and each tile's reduction
// (input channels x taps per phase, above 256) is long enough to amortize its stores, which scatter
// across channel planes; else vectorized output positions. Measured on the bench suite
// (README, "Speed"): unet3d_up (128 x 1 tap) runs faster on positions, vnet_up_3x3x3 (64 x 8)
// and dilated_s1 (64 x 9) on channels. DECONV_NCX_SCHEDULE = positions | channels overrides
// the choice (for measuring and tuning).
bool choose_channel_major(const detail::OpGeometry &g, const std::vector<int64_t> &strides) {
    if (g.forward || g.data_format == DataFormat::NXC) return true;
    if (const char *env = std::getenv("DECONV_NCX_SCHEDULE")) {
        if (std::strcmp(env, "channels") == 0) return true;
        if (std::strcmp(env, "positions") == 0) return false;
    }
    int64_t taps = 1;  // taps per phase, at most
    for (int i = 0; i < g.rank; i++) taps *= (g.kernel[i] + strides[i] - 1) / strides[i];
    return g.c_out >= 16 && g.c_in * taps > 256;
}

// `ci_pairs`: the bf16 dot-product kernels (channels-last backprop only).
const char *kernel_op(const detail::OpGeometry &g, bool channel_major, bool interior, bool ci_pairs = false) {
    const bool nxc = g.data_format == DataFormat::NXC;
    if (g.forward) return nxc ? "group_conv_nxc" : "group_conv";
    if (nxc && ci_pairs) return interior ? "phase_conv_nxc_pairs_interior" : "phase_conv_nxc_pairs";
    if (nxc) return interior ? "phase_conv_nxc_interior" : "phase_conv_nxc";
    if (channel_major) return interior ? "phase_conv_channels_interior" : "phase_conv_channels";
    return interior ? "phase_conv_interior" : "phase_conv";
}

// The CUDA kernel of a layer: one per op and data layout (generators/CMakeLists.txt).
const char *cuda_kernel_op(const detail::OpGeometry &g) {
    const bool nxc = g.data_format == DataFormat::NXC;
    if (g.forward) return nxc ? "group_conv_nxc" : "group_conv";
    return nxc ? "phase_conv_nxc" : "phase_conv";
}

// The CUDA kernels' grid (generators/schedules/gpu_schedule.h, default knobs: blocks of 32 along
// the thread axis, 16 along the tile axis): grid x the thread-axis blocks times q1, grid y the
// tile-axis blocks times q2, grid z groups times batch; y and z at most 65535, x at most 2^31 - 1.
// Phases make the kernels' extents smaller than the layer's; this bounds them by the layer's.
// Empty when the layer fits.
std::string cuda_grid_problem(const detail::OpGeometry &g, const std::vector<int64_t> &out_spatial) {
    const bool nxc = g.data_format == DataFormat::NXC;
    const size_t d = out_spatial.size();
    const int64_t width = out_spatial.back();
    const int64_t a = nxc ? g.c_out : width, b = nxc ? width : g.c_out;
    const int64_t q1 = d >= 2 ? out_spatial[d - 2] : 1, q2 = d >= 3 ? out_spatial[d - 3] : 1;
    const auto blocks = [](int64_t n, int64_t per) { return (n + per - 1) / per; };
    const auto axis_name = [&](bool thread_axis) {
        return std::string(nxc == thread_axis ? "output channels per group " : "innermost output extent ");
    };
    if (blocks(a, 32) * q1 > INT32_MAX) {
        return axis_name(true) + std::to_string(a) + (d >= 2 ? " times the next output extent " + std::to_string(q1) : "") +
               " exceeds the CUDA kernels' grid x (at most 2147483647 blocks of 32)";
    }
    if (blocks(b, 16) * q2 > 65535) {
        return axis_name(false) + std::to_string(b) + (d >= 3 ? " times the outermost output extent " + std::to_string(q2) : "") +
               " exceeds the CUDA kernels' grid y (at most 65535 blocks of 16)";
    }
    if (g.groups * g.n > 65535) {
        return "groups " + std::to_string(g.groups) + " times batch " + std::to_string(g.n) +
               " exceeds the CUDA kernels' grid z (at most 65535)";
    }
    return "";
}

void fail_kernel(const detail::KernelEntry *kernel, int rc) {
    std::string msg = detail::take_halide_error();
    throw Error(ErrorKind::Kernel, std::string("kernel ") + kernel->name + " failed (Halide error " +
                                       std::to_string(rc) + ")" + (msg.empty() ? "" : ": " + msg));
}


#if defined(DECONV_HAVE_CUDA)
// ---------------------------------------------------------------- CUDA

using ZeroFillFn = int (*)(halide_buffer_t *);

ZeroFillFn zero_fill_kernel(size_t elem) {
    switch (elem) {
    case 1: return &deconv_cuda_zero_fill_u8;
    case 2: return &deconv_cuda_zero_fill_u16;
    case 4: return &deconv_cuda_zero_fill_u32;
    default: return &deconv_cuda_zero_fill_u64;
    }
}

[[noreturn]] void fail_cuda(const std::string &what, int rc) {
    std::string msg = detail::take_halide_error();
    throw Error(ErrorKind::Kernel, what + " failed on CUDA (Halide error " + std::to_string(rc) + ")" +
                                       (msg.empty() ? "" : ": " + msg));
}

// A dense device copy of a host tensor (or a dense device buffer for the output), freed on scope
// exit, failures included.
struct DeviceBuffer {
    halide_buffer_t buf{};
    halide_dimension_t dims[8]{};
    bool allocated = false;

    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    ~DeviceBuffer() {
        if (allocated) halide_device_free(nullptr, &buf);
    }

    // Describes `host` as a dense tensor of `shape` (C order).
    void describe(void *host, DType t, const std::vector<int64_t> &shape) {
        buf.host = (uint8_t *)host;
        buf.type = halide_type(t);
        buf.dimensions = (int)shape.size();
        buf.dim = dims;
        int64_t stride = 1;
        for (size_t i = 0; i < shape.size(); i++) {
            const size_t axis = shape.size() - 1 - i;  // Halide order: innermost first
            set_dim(dims[i], 0, shape[axis], stride);
            stride *= shape[axis];
        }
    }
    void upload(const char *what) {
        buf.set_host_dirty(true);
        const int rc = halide_copy_to_device(nullptr, &buf, halide_cuda_device_interface());
        allocated = buf.device != 0;
        if (rc != 0) fail_cuda(std::string("copying the ") + what + " to the GPU", rc);
    }
    void allocate(const char *what) {
        const int rc = halide_device_malloc(nullptr, &buf, halide_cuda_device_interface());
        allocated = buf.device != 0;
        if (rc != 0) fail_cuda(std::string("allocating the ") + what + " on the GPU", rc);
    }
    void download(const char *what) {
        buf.set_device_dirty(true);
        const int rc = halide_copy_to_host(nullptr, &buf);
        if (rc != 0) fail_cuda(std::string("copying the ") + what + " from the GPU", rc);
    }
};

bool is_dense(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
    return strides == dense_strides(shape);
}

// A tensor as the CUDA kernels see it: a device address and element strides (spec order).
struct DeviceTensor {
    uint64_t base = 0;
    std::vector<int64_t> strides;
};

// The caller's tensor on the device: its own memory when it is device memory, else a dense copy
// (host views that are not dense are packed on the host first).
DeviceTensor to_device(const void *data, Memory memory, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides, DType t, DeviceBuffer &holder,
                       std::vector<uint8_t> &staging, const char *what) {
    if (memory == Memory::CudaDevice) return {(uint64_t)(uintptr_t)data, strides};
    const size_t elem = dtype_size(t);
    check_fits_int32(dense_strides(shape), what);
    const void *host = data;
    if (!is_dense(shape, strides)) {
        int64_t count = 1;
        for (int64_t v : shape) count = checked_mul(count, v, "element count");
        staging.resize((size_t)count * elem);
        detail::copy_tensor((const uint8_t *)data, strides, staging.data(), dense_strides(shape), shape, elem);
        host = staging.data();
    }
    holder.describe(const_cast<void *>(host), t, shape);
    holder.upload(what);
    return {holder.buf.device, dense_strides(shape)};
}

void run_cuda(const Plan::Impl &p, const ConstTensorView &input, const ConstTensorView &filter,
              const TensorView &output, const std::vector<int64_t> &in_st0, const std::vector<int64_t> &w_st0,
              const std::vector<int64_t> &out_st0) {
    const size_t elem = dtype_size(p.dtype);
    const detail::OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DataFormat fmt = geo.data_format;
    const halide_device_interface_t *iface = halide_cuda_device_interface();

    // Device copies (host views) or the caller's device memory; freed on every exit.
    DeviceBuffer in_dev, w_dev, out_dev;
    std::vector<uint8_t> in_stage, w_stage, out_stage;
    const DeviceTensor in = to_device(input.data, input.memory, p.input_shape, in_st0, p.dtype, in_dev, in_stage, "data");
    const DeviceTensor w =
        to_device(filter.data, filter.memory, p.filter_shape, w_st0, p.dtype, w_dev, w_stage, "filter");
    DeviceTensor out;
    const bool out_on_host = output.memory == Memory::Host;
    if (out_on_host) {
        // The kernels write a dense device buffer; it comes back into the caller's memory when
        // that is dense, else into a staging buffer copied out at the end.
        void *host = output.data;
        check_fits_int32(dense_strides(p.info.output_shape), "output");
        if (!is_dense(p.info.output_shape, out_st0)) {
            int64_t count = 1;
            for (int64_t v : p.info.output_shape) count = checked_mul(count, v, "output element count");
            out_stage.resize((size_t)count * elem);
            host = out_stage.data();
        }
        out_dev.describe(host, p.dtype, p.info.output_shape);
        out_dev.allocate("output");
        out = {out_dev.buf.device, dense_strides(p.info.output_shape)};
    } else {
        out = {(uint64_t)(uintptr_t)output.data, out_st0};
    }
    const std::vector<int64_t> in_nc = detail::to_ncx(in.strides, fmt), out_nc = detail::to_ncx(out.strides, fmt);

    // The filter through the caller's strides (no packing): canonical axes from FilterAxes.
    const detail::FilterAxes &fa = geo.filter;
    const int64_t w_g = fa.g_stride(w.strides), w_ci = w.strides[fa.ci_axis], w_co = w.strides[fa.co_axis];
    std::vector<int64_t> w_k(rank);
    for (int i = 0; i < rank; i++) w_k[i] = w.strides[fa.k_axes[i]];

    const int dims = rank + 3;
    halide_dimension_t in_dims[6], w_dims[6], out_dims[6];
    auto dd = [&](int logical) { return data_dim(fmt, rank, logical); };
    auto fd = [&](int logical) { return filter_dim(p.channel_major, rank, logical); };
    set_channel_dims(geo, p.channel_major, in_nc, out_nc, {w_co, w_ci, w_g}, in_dims, w_dims, out_dims);

    // Views on device memory: `device` is the address of the view's first element.
    auto device_view = [&](halide_buffer_t &b, uint64_t address, halide_dimension_t *d, int n) {
        b = halide_buffer_t{};
        b.device = address;
        b.device_interface = iface;
        b.type = halide_type(p.dtype);
        b.dimensions = n;
        b.dim = d;
    };

    if (geo.forward) {
        int32_t strides[3] = {1, 1, 1}, dilations[3] = {1, 1, 1};
        for (int i = 0; i < rank; i++) {
            const int h = rank - 1 - i;
            set_dim(in_dims[dd(h)], p.info.pads_begin[i], geo.in_spatial[i], in_nc[2 + i]);
            set_dim(w_dims[fd(h)], 0, geo.kernel[i], w_k[i]);
            set_dim(out_dims[dd(h)], 0, p.out_spatial[i], out_nc[2 + i]);
            strides[h] = (int32_t)p.info.strides[i];
            dilations[h] = (int32_t)p.info.dilations[i];
        }
        halide_buffer_t in_buf, w_buf, out_buf;
        device_view(in_buf, in.base, in_dims, dims);
        device_view(w_buf, w.base, w_dims, dims);
        device_view(out_buf, out.base, out_dims, dims);
        const int rc = p.kernel->as<detail::GroupConvKernelFn>()(strides[0], strides[1], strides[2], dilations[0],
                                                                 dilations[1], dilations[2], &in_buf, &w_buf, &out_buf);
        if (rc != 0) fail_cuda(std::string("kernel ") + p.kernel->name, rc);
    } else {
        std::vector<size_t> ph(rank, 0);
        for (;;) {
            int64_t out_off = 0, w_off = 0;
            int32_t steps[3] = {1, 1, 1};
            bool has_taps = true, empty = false;
            for (int i = 0; i < rank; i++) {
                const AxisPhase &a = p.phases[i][ph[i]];
                const int h = rank - 1 - i;
                const int64_t ys = out_nc[2 + i];
                out_off += a.out_first * ys;
                w_off += a.tap_first * w_k[i];
                set_dim(out_dims[dd(h)], 0, a.out_count, p.info.strides[i] * ys);
                set_dim(w_dims[fd(h)], 0, a.tap_count, a.tap_step * w_k[i]);
                set_dim(in_dims[dd(h)], -a.in_offset, geo.in_spatial[i], in_nc[2 + i]);
                steps[h] = (int32_t)a.in_step;
                has_taps = has_taps && a.tap_count > 0;
                empty = empty || a.out_count <= 0;
            }
            const uint64_t out_base = out.base + (uint64_t)(out_off * (int64_t)elem);
            if (empty) {
                // No output position in this phase combination.
            } else if (!has_taps) {
                // Zeros on the device: the phase's view, padded to the zero-fill kernel's six axes.
                halide_dimension_t z_dims[6];
                for (int h = 0; h < 6; h++) {
                    if (h < dims) z_dims[h] = out_dims[h];
                    else set_dim(z_dims[h], 0, 1, 0);
                }
                halide_buffer_t z;
                device_view(z, out_base, z_dims, 6);
                z.type = halide_type_t(halide_type_uint, (uint8_t)(8 * elem));
                const int rc = zero_fill_kernel(elem)(&z);
                if (rc != 0) fail_cuda("the zero fill of a phase without taps", rc);
            } else {
                halide_buffer_t in_buf, w_buf, out_buf;
                device_view(in_buf, in.base, in_dims, dims);
                device_view(w_buf, w.base + (uint64_t)(w_off * (int64_t)elem), w_dims, dims);
                device_view(out_buf, out_base, out_dims, dims);
                const int rc = p.kernel->as<detail::PhaseKernelFn>()(steps[0], steps[1], steps[2], &in_buf, &w_buf,
                                                                     &out_buf);
                if (rc != 0) fail_cuda(std::string("kernel ") + p.kernel->name, rc);
            }
            int i = rank - 1;
            for (; i >= 0; i--) {
                if (++ph[i] < p.phases[i].size()) break;
                ph[i] = 0;
            }
            if (i < 0) break;
        }
    }

    if (out_on_host) {
        // Waits for the kernels (same stream) and copies the whole output back.
        out_dev.download("output");
        if (!out_stage.empty()) {
            detail::copy_tensor(out_stage.data(), dense_strides(p.info.output_shape), (uint8_t *)output.data, out_st0,
                         p.info.output_shape, elem);
        }
    } else {
        // Device output: return when the GPU is done (and report its failures here).
        halide_buffer_t sync{};
        sync.device = out.base;
        sync.device_interface = iface;
        const int rc = halide_device_sync(nullptr, &sync);
        if (rc != 0) fail_cuda("waiting for the kernels", rc);
    }
}
#endif  // DECONV_HAVE_CUDA

}  // namespace

Plan::Plan(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(const Plan &) = default;
Plan &Plan::operator=(const Plan &) = default;
Plan::Plan(Plan &&) noexcept = default;
Plan &Plan::operator=(Plan &&) noexcept = default;
Plan::~Plan() = default;

const ShapeInfo &Plan::shape() const { return impl_->info; }
DType Plan::dtype() const { return impl_->dtype; }
Op Plan::op() const { return impl_->op; }
int64_t Plan::macs() const { return impl_->macs; }
Device Plan::device() const { return impl_->device; }
const std::string &Plan::fallback_reason() const { return impl_->fallback_reason; }

namespace {

// The CPU kernels of a layer: which schedule (channel_major) and the bounded and interior kernels.
// bf16 backprop layers on channels-last data with an even number of input channels per group
// run on the dot-product kernels where the CPU has AVX512-BF16 (phase_conv_nxc_pairs: two
// multiply-adds per lane and instruction). DECONV_BF16_DOT=0 keeps the f32-FMA kernels (for
// measuring).
bool uses_bf16_dot(const Plan::Impl &p) {
    return p.dtype == DType::bf16 && !p.geo.forward && p.geo.data_format == DataFormat::NXC && p.geo.c_in % 2 == 0 &&
           !switched_off("DECONV_BF16_DOT") && detail::find_kernel(kernel_op(p.geo, true, false, true), p.geo.rank, p.dtype) &&
           detail::find_kernel(kernel_op(p.geo, true, true, true), p.geo.rank, p.dtype) && detail::cpu_has_bf16_dot();
}

void set_cpu_kernels(Plan::Impl &p, bool channel_major) {
    p.channel_major = channel_major;
    p.ci_pairs = channel_major && uses_bf16_dot(p);
    p.kernel = detail::find_kernel(kernel_op(p.geo, p.channel_major, false, p.ci_pairs), p.geo.rank, p.dtype);
    p.interior_kernel = detail::find_kernel(kernel_op(p.geo, p.channel_major, true, p.ci_pairs), p.geo.rank, p.dtype);
}

void choose_cpu_kernels(Plan::Impl &p) { set_cpu_kernels(p, choose_channel_major(p.geo, p.info.strides)); }

// The interleaved kernel of a channels-first backprop layer on the position-vectorized
// schedule, if the layer can run it: stride 2 or 8 (blocked: 2) and dilation 1 on the innermost
// axis, one phase per output residue in residue order (every residue has an output). Null
// otherwise.
const detail::KernelEntry *interleaved_kernel_for(const Plan::Impl &p, bool channel_major, bool blocked) {
    const int in = p.geo.rank - 1;  // the innermost axis, spec order
    const int64_t s = p.info.strides[in];
    if (p.geo.forward || channel_major || p.geo.data_format != DataFormat::NCX || (s != 2 && (blocked || s != 8)) ||
        p.info.dilations[in] != 1 || p.out_spatial[in] < s || (int64_t)p.phases[in].size() != s)
        return nullptr;
    for (int64_t r = 0; r < s; r++)
        if (p.phases[in][r].out_first != r) return nullptr;
    const std::string op = std::string(blocked ? "phase_conv_interleaved_blocked_s" : "phase_conv_interleaved_s") +
                           std::to_string(s);
    // Phase 0 one tap short of phase 1 (an odd kernel, odd pads_begin): the variant that skips the
    // packed zero. grouped32_up (kernel 3, pad 1; 2 threads, Zen 4 VM): 0.237 -> 0.184 ms.
    if (!blocked && s == 2 && p.phases[in][0].tap_count + 1 == p.phases[in][1].tap_count &&
        !switched_off("DECONV_SHORT_PHASE")) {
        if (const detail::KernelEntry *k = detail::find_kernel((op + "_short0").c_str(), p.geo.rank, p.dtype)) return k;
    }
    return detail::find_kernel(op.c_str(), p.geo.rank, p.dtype);
}

// Layers with 16 or more output channels whose weights per kernel call fit half of L2 and whose
// rows hold at least 32 groups of s outputs (two AVX-512 vectors of f32 accumulators: the wide
// tile) run on the blocked interleaved kernel (cpu_interleaved_schedule.h) rather than on the
// channels-last kernels: no transposes. Measured (2 threads, ms, channels-last -> blocked):
// hifigan_up3 7.3 -> 4.8, unet_up4 11.4 -> 8.5, unet3d_up 18.1 -> 13.6. Narrower rows take the
// 1-vector tile, whose tails and channel tiles recompute more: dcgan_l4 (16 groups) 13.0 ->
// 13.7, vnet_up_3x3x3 (24 groups, kernel 3 padded to 2 taps per phase) 4.6 -> 8.1. Larger
// weights (hifigan_up1: 8 MiB) would stream from L3 once per block.
constexpr int64_t kBlockedWeightBytes = int64_t(512) << 10;
// Groups of s outputs per blocked tile, a multiple of every target's (2 AVX-512 vectors of f32;
// 1 AVX2 vector; 2 NEON vectors; 1 SSE vector): a row of another length ends in a tile shifted
// back over its neighbour, which recomputes up to a tile less one group (unet_up4: rows of 196
// groups, 224 computed). The rows' rest runs on the plain interleaved kernel instead.
constexpr int64_t kBlockedRowTile = 32;
constexpr int64_t kBlockedMinGroups = 32;
// Depthwise rows on the plain interleaved kernel: its 2D/3D two-tap depthwise tiles have a branch
// for rows a whole number of tiles long (cpu_interleaved_schedule.h), whose addresses step by a
// constant; other rows end in a tile shifted back, whose min() LLVM recomputes every load's
// address from. 16 groups is a whole number of tiles on every target (a vector of f32: 16 on
// AVX-512, 8 on AVX2, 4 on SSE and NEON). A row of another length runs as its first multiple of
// 16 groups, then the rest in a second call (narrower tiles, or scalar under 4 groups).
// fcn8s_upscore8 (rows of 65 groups; 2 threads, Zen 4 VM, medians of 5 alternating runs): 1.11-1.31
// -> 1.04-1.19 ms. Running the last 16 groups again instead (the whole tile branch for both calls)
// was slower on 2 threads, 1.43-1.59: the second pass over each row re-fetches its cache lines.
constexpr int64_t kExactRowTile = 16;

bool prefers_blocked_interleave(const Plan::Impl &p) {
    const int in = p.geo.rank - 1;
    if (p.geo.c_out < 16 || std::getenv("DECONV_NCX_SCHEDULE") || !interleaved_kernel_for(p, false, true) ||
        p.out_spatial[in] / p.info.strides[in] < kBlockedMinGroups)
        return false;
    int64_t taps = 1;  // per call: the most taps of a phase on the outer axes, every phase of the innermost
    for (int i = 0; i < p.geo.rank; i++) {
        int64_t most = 0;
        for (const AxisPhase &a : p.phases[i]) most = std::max(most, a.tap_count);
        taps *= i == p.geo.rank - 1 ? most * p.info.strides[i] : most;
    }
    const int64_t acc_bytes = 4;  // f32 accumulators (the kernel's dtypes are f32, f16, bf16)
    if (p.geo.c_in * taps * p.geo.c_out * acc_bytes > kBlockedWeightBytes) return false;
    // It reads a zero-bordered input copy: within that copy's limit.
    std::vector<int64_t> lo, hi;
    return detail::border_margins(p.phases, p.geo, dtype_size(p.dtype), p.info.strides[in], p.info.pads_begin[in],
                                  p.out_spatial[in], lo, hi);
}

// Edge windows (Plan::Impl::edges) for 1D layers on the interleaved kernel whose input needs
// margins: the whole bordered copy moved every input byte once more per run (hifigan_up3: 13 MB,
// 6% of its samples in memmove). The edges run on the plain interleaved kernel, each at least
// kEdgeMinGroups wide so that it takes the kernel's vector tiles; the blocked kernel's part is a
// whole number of its row tiles.
constexpr int64_t kEdgeMinGroups = 16;

void choose_edge_windows(Plan::Impl &p, bool blocked) {
    const detail::OpGeometry &geo = p.geo;
    if (geo.rank != 1 || !p.interleaved_kernel || !p.border_copy || p.channels_in_rows || !p.kernel ||
        geo.data_format != DataFormat::NCX || switched_off("DECONV_EDGE_WINDOWS"))
        return;
    const int64_t s = p.info.strides[0], pad = p.info.pads_begin[0], x = geo.in_spatial[0];
    const int64_t groups = p.out_spatial[0] / s;
    int64_t taps = 0;
    for (const AxisPhase &a : p.phases[0]) taps = std::max(taps, a.tap_count);
    Plan::Impl::EdgeWindows e;
    e.reach = detail::interleaved_reach(s, pad, taps);
    const int64_t inside_first = std::min(std::max(-e.reach.lo, int64_t(0)), groups);
    const int64_t inside_end = std::min(std::max(x - e.reach.hi, int64_t(0)), groups);
    e.left = std::min(groups, std::max(inside_first, kEdgeMinGroups));
    e.middle = std::min(inside_end, groups - kEdgeMinGroups) - e.left;
    if (blocked) e.middle = e.middle / kBlockedRowTile * kBlockedRowTile;
    e.kernel = blocked ? interleaved_kernel_for(p, false, false) : p.interleaved_kernel;
    if (e.middle >= kEdgeMinGroups && e.kernel) p.edges = e;
}

// Whether a CPU backprop layer reads a zero-bordered input copy, and whether it runs the
// interleaved kernel (both need the phases).
void choose_bordered_input(Plan::Impl &p) {
    const detail::OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DType dtype = p.dtype;
    if (!geo.forward && !switched_off("DECONV_BORDERED_INPUT")) {
        // The interleaved kernel is a positions schedule.
        const bool blocked = prefers_blocked_interleave(p);
        if (blocked && p.channel_major) set_cpu_kernels(p, false);
        const int in = rank - 1;  // the innermost axis, spec order
        const int64_t s = p.info.strides[in];
        const detail::KernelEntry *ik = interleaved_kernel_for(p, p.channel_major, blocked);
        const bool interleave = ik != nullptr;
        std::vector<int64_t> lo, hi;
        // Channel-vectorized kernels always: their bounded twin reads each input value through
        // a scalar load behind a bounds select, and the copy is small beside their reduction.
        // Positions kernels with few output channels: with 16 or more, the position kernel's
        // wider register tile (2 vectors x 8 channels) beats the interleaved one and the copy
        // does not pay (measured: unet_up4, unet3d_up 1.4-1.6x slower bordered and interleaved),
        // unless the blocked kernel serves the layer.
        const auto positive = [](int64_t v) { return v > 0; };
        if ((p.channel_major || geo.c_out < 16 || blocked) &&
            detail::border_margins(p.phases, geo, dtype_size(dtype), interleave ? s : 0, p.info.pads_begin[in],
                                   p.out_spatial[in], lo, hi)) {
            const bool margins = std::any_of(lo.begin(), lo.end(), positive) || std::any_of(hi.begin(), hi.end(), positive);
            if (interleave || margins) {
                p.border_lo = lo;
                p.border_hi = hi;
                p.border_copy = margins;
                if (interleave) p.interleaved_kernel = ik;
                if (interleave && blocked && (p.out_spatial[in] / s) % kBlockedRowTile != 0 &&
                    !switched_off("DECONV_INTERLEAVED_TAIL")) {
                    p.interleaved_tail_kernel = interleaved_kernel_for(p, false, false);
                }
                const int64_t groups = p.out_spatial[in] / s;
                p.interleaved_exact_rows = interleave && !blocked && geo.c_in == 1 && rank >= 2 &&
                                           groups > kExactRowTile && groups % kExactRowTile != 0 &&
                                           !switched_off("DECONV_EXACT_ROWS");
                // The blocked kernel reduces every input channel at the rows of its block; in 3D a
                // plain copy (or the caller's input) puts each channel a whole plane further on
                // (unet3d_up: 128 KiB), with channels in rows a row's channels are one contiguous
                // run (17 KiB). Measured on a Zen 4 VM (2 threads, ms, medians of 3-4 alternating
                // runs, plain -> channels in rows, the copy included): unet3d_up 27.8 -> 24.7;
                // plain planes padded to an odd number of cache lines (against cache-set
                // conflicts) 29.7, plain with transparent huge pages (against TLB misses) 34.6: the
                // contiguous run itself is what helps. In 2D it lost (unet_up4, whose input needs
                // no margins and so no copy otherwise, 18.1 -> 21.6; 192x192 15.3 -> 16.7): 3D only.
                p.channels_in_rows = interleave && blocked && rank == 3 && !switched_off("DECONV_CHANNELS_IN_ROWS");
                choose_edge_windows(p, blocked);
            }
        }
    }
}

// Channels-first backprop layers with at least 16 output channels per group run on the
// channels-last kernels, over a transposed copy of the input, their result transposed back: the
// channels-first kernels store each register tile across output planes, an element at a time
// (stride-phase rows are strided), which cost more than their arithmetic unless the reduction
// per output is long. Measured on the suite (2 threads, ms, channels-first kernels against
// channels-last ones): dcgan_l4 40 -> 13, centernet_up3 49 -> 23, unet3d_up 25 -> 13, unet_up4
// 12.5 -> 9.4, vnet_up_3x3x3 8.0 -> 5.5, hifigan_up3 7.2 -> 5.9.
// Phases of one tap with 128 or more output channels stay on the channels-first kernels: with a
// single tap their tile's input rows are contiguous, and on 2026-11-25 (2 threads, ms, medians of
// alternating runs, channels-first against channels-last) unet_up1 17.7 vs 18.6, 2048->128 at
// 28x28 9.8 vs 10.8, 1024->256 at 8x8 batch 4 3.9 vs 4.4, 512->256 at 28x28 4.1 vs 4.3; with
// 64 output channels channels-last won (512->64 at 32x32: 1.78 vs 1.53). Phases of several taps
// run channels-last at every reduction length: dcgan_l2 (2048 input channels x taps) 25.9 vs
// 23.8, 1024->512 at 16x16 k4 39-45 vs 28, 512->256 at 32x32 k4 59-61 vs 48-50.
// bf16 layers always take the channels-last route, where its dot-product kernels are.
// DECONV_NCX_SCHEDULE = positions | channels keeps the channels-first kernels, = channels_last
// takes this route for every layer (for measuring).
constexpr int64_t kOneTapChannelsFirstMinCout = 128;
constexpr int64_t kMaxLayoutCopyBytes = int64_t(512) << 20;

bool choose_via_channels_last(const Plan::Impl &p) {
    const detail::OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX) return false;
    const char *env = std::getenv("DECONV_NCX_SCHEDULE");
    const bool forced = env && std::strcmp(env, "channels_last") == 0;
    if (env && !forced) return false;
    if (!detail::find_kernel("phase_conv_nxc", g.rank, p.dtype) ||
        !detail::find_kernel("phase_conv_nxc_interior", g.rank, p.dtype))
        return false;
    if (forced) return true;
    if (g.c_out < 16 || prefers_blocked_interleave(p)) return false;
    int64_t taps = 1;  // the most taps of a phase
    for (const auto &axis : p.phases) {
        int64_t most = 0;
        for (const AxisPhase &a : axis) most = std::max(most, a.tap_count);
        taps *= most;
    }
    if (taps == 1 && g.c_out >= kOneTapChannelsFirstMinCout && p.dtype != DType::bf16) return false;
    // The copies (the input transposed, the output before it is transposed back) stay within
    // kMaxLayoutCopyBytes; larger layers run the channels-first kernels on the caller's buffers.
    int64_t bytes = (int64_t)dtype_size(p.dtype);
    for (int64_t v : p.input_shape) bytes = checked_mul(bytes, v, "data bytes");
    int64_t out_bytes = (int64_t)dtype_size(p.dtype);
    for (int64_t v : p.info.output_shape) out_bytes = checked_mul(out_bytes, v, "output bytes");
    return bytes + out_bytes <= kMaxLayoutCopyBytes;
}

// Batch rows: channels-last plans (channels-last layers, and the twins of channels-first ones)
// whose phase rows along the innermost axis are narrower than the kernels' position tile, with a
// batch of kBatchRowsMinImages or more, 1D and 2D. Their data is laid out [X_1 .. X_D, N, C]
// (outermost first) and each phase runs on the interior kernel of rank D + 1 with the images as
// its innermost axis (one tap there): rows of N positions instead of a few, so the wide register
// tile serves them. The phases are cut into tap windows (tap_windows), one kernel call each, so no
// copy needs a zero border and no product with one is computed. dcgan_l2 (batch 64, 4x4 input,
// 512 -> 256, kernel 4 stride 2 pad 1) spends 23% of its nominal products on the border
// otherwise. Measured on a Zen 4 VM (2 threads, ms): as the channels-last 2D layer it ran
// 25.7-27.2; in the batch-rows layout over a bordered copy, every tap computed, 21-22; in tap
// windows 18.9-19.3 (oneDNN 16-18 in the same runs). dcgan_l4 (rows of 16) measured the same either
// way (24 ms: its whole-tensor transposes cost what its tiles gain) and keeps its image slices.
// DECONV_BATCH_ROWS=0 turns it off (for measuring).
constexpr int64_t kBatchRowsMinImages = 16;

bool choose_batch_rows(Plan::Impl &p) {
    const detail::OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || !p.channel_major || g.rank > 2 || g.n < kBatchRowsMinImages ||
        switched_off("DECONV_BATCH_ROWS"))
        return false;
    for (const AxisPhase &a : p.phases[g.rank - 1])
        if (a.out_count >= kNarrowRowWidth) return false;
    const detail::KernelEntry *k = detail::find_kernel(kernel_op(g, true, true, p.ci_pairs), g.rank + 1, p.dtype);
    if (!k) return false;
    // Both copies within the layout copies' limit.
    int64_t elements = 0;
    for (const std::vector<int64_t> *shape : {&p.input_shape, &p.info.output_shape}) {
        int64_t n = 1;
        for (int64_t v : *shape) n = checked_mul(n, v, "tensor elements");
        elements += n;
    }
    if (elements * (int64_t)dtype_size(p.dtype) > kMaxLayoutCopyBytes) return false;
    p.batch_rows_kernel = k;
    p.tap_windows.clear();
    for (int i = 0; i < g.rank; i++) {
        std::vector<std::vector<detail::TapWindow>> axis;
        for (const AxisPhase &a : p.phases[i]) axis.push_back(detail::tap_windows(a, g.in_spatial[i]));
        p.tap_windows.push_back(std::move(axis));
    }
    return true;
}

// Shapes and strides of a channels-first tensor [N, C, X..] in channels-last order [N, X.., C].
std::vector<int64_t> ncx_to_nxc_order(const std::vector<int64_t> &v) {
    std::vector<int64_t> r = {v[0]};
    r.insert(r.end(), v.begin() + 2, v.end());
    r.push_back(v[1]);
    return r;
}

// The channels-last plan of a channels-first layer: the same geometry, phases and filter.
std::shared_ptr<const Plan::Impl> channels_last_twin(const Plan::Impl &p) {
    auto t = std::make_shared<Plan::Impl>();
    t->op = p.op;
    t->dtype = p.dtype;
    t->input_shape = ncx_to_nxc_order(p.input_shape);
    t->filter_shape = p.filter_shape;
    t->info = p.info;
    t->info.output_shape = ncx_to_nxc_order(p.info.output_shape);
    t->info.data_format = DataFormat::NXC;
    t->geo = p.geo;
    t->geo.data_format = DataFormat::NXC;
    t->out_spatial = p.out_spatial;
    t->phases = p.phases;
    t->macs = p.macs;
    choose_cpu_kernels(*t);
    if (!choose_batch_rows(*t)) choose_bordered_input(*t);
    return t;
}

}  // namespace

Plan Plan::create(Op op, DType dtype, const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                  const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape,
                  const ExecOptions &exec) {
    auto impl = std::make_shared<Impl>();
    impl->op = op;
    impl->dtype = dtype;
    impl->input_shape = input_shape;
    impl->filter_shape = filter_shape;
    impl->geo = detail::op_geometry(op, input_shape, filter_shape, attrs);
    impl->info = detail::infer_shape(op, impl->geo, input_shape, filter_shape, attrs, output_shape);
    const detail::OpGeometry &geo = impl->geo;
    const int rank = geo.rank;
    if (op == Op::ConvolutionBackwardData && dtype != DType::f32 && dtype != DType::bf16 && dtype != DType::f16) {
        detail::invalid(std::string("ConvolutionBackwardData supports f32, bf16 and f16 (oneDNN Graph's table), not ") +
                        dtype_name(dtype));
    }
    const std::vector<int64_t> out_ncx = detail::to_ncx(impl->info.output_shape, geo.data_format);
    impl->out_spatial.assign(out_ncx.begin() + 2, out_ncx.end());

    if (exec.device == Device::CUDA) {
        // CUDA, or why not (then the CPU when the caller allows it).
        const detail::KernelEntry *k = detail::find_kernel(cuda_kernel_op(geo), rank, dtype, Device::CUDA);
        std::string why;
        ErrorKind kind = ErrorKind::Unsupported;
#if !defined(DECONV_HAVE_CUDA)
        why = "CUDA is unavailable: " + cuda_unavailable_reason();  // the build has no CUDA kernels
#else
        if (!k) {
            const char *detail = dtype == DType::bf16
                                     ? "Halide 14 cannot compile bf16 for CUDA: bf16 layers run on the CPU"
                                     : "not among this build's CUDA kernels: see DECONV_CUDA_DTYPES, DECONV_RANKS and "
                                       "built_dtypes(Device::CUDA)";
            why = std::string(op_name(op)) + " " + std::to_string(rank) + "D " + dtype_name(dtype) + " " +
                  data_format_name(geo.data_format) + " is not supported on CUDA (" + detail + ")";
        } else if (!cuda_available()) {
            why = "CUDA is unavailable: " + cuda_unavailable_reason();
        } else {
            why = cuda_grid_problem(geo, impl->out_spatial);
            if (!why.empty()) kind = ErrorKind::TooLarge;
        }
#endif
        if (why.empty()) {
            impl->device = Device::CUDA;
            impl->channel_major = geo.data_format == DataFormat::NXC;
            impl->kernel = impl->interior_kernel = k;
        } else if (!exec.allow_cpu_fallback) {
            throw Error(kind, why);
        } else {
            impl->fallback_reason = why;
        }
    }
    if (impl->device == Device::CPU) choose_cpu_kernels(*impl);
    if (!impl->kernel || !impl->interior_kernel) {
        throw Error(ErrorKind::Unsupported, std::string("no kernel for ") + op_name(op) + " " + std::to_string(rank) +
                                                "D " + dtype_name(dtype) + " " + data_format_name(geo.data_format) +
                                                " in this build (see DECONV_RANKS / DECONV_DTYPES)");
    }
    // Every extent and stride handed to a kernel must fit Halide's 32-bit buffer fields.
    check_fits_int32(input_shape, "data shape");
    check_fits_int32(filter_shape, "filter shape");
    check_fits_int32(impl->info.output_shape, "output shape");

    int64_t macs = checked_mul(checked_mul(geo.n, geo.groups, "MACs"), checked_mul(geo.c_in, geo.c_out, "MACs"),
                               "MACs");
    for (int i = 0; i < rank; i++) {
        const int64_t k = geo.kernel[i], x = geo.in_spatial[i], y = impl->out_spatial[i];
        const int64_t s = impl->info.strides[i], d = impl->info.dilations[i], pb = impl->info.pads_begin[i];
        if (geo.forward) {
            check_fits_int32({pb, s, d}, "attribute");
            macs = checked_mul(macs, forward_pairs(x, k, y, s, d, pb), "MACs");
            continue;
        }
        impl->phases.push_back(detail::decompose_axis(s, d, k, x, y, pb));
        int64_t pairs = 0;
        for (const AxisPhase &p : impl->phases.back()) pairs += p.pairs;
        macs = checked_mul(macs, pairs, "MACs");
        for (const AxisPhase &p : impl->phases.back()) {
            check_fits_int32({p.in_offset, p.tap_step * k}, "phase");
        }
    }
    impl->macs = macs;
    detail::install_halide_hooks();
    if (impl->device == Device::CPU && dtype == DType::f16 && detail::use_f16c_conversion() &&
        detail::find_kernel(kernel_op(geo, impl->channel_major, false), rank, DType::f32)) {
        impl->via_f32 = create(op, DType::f32, input_shape, filter_shape, attrs, output_shape).impl_;
    }
    if (impl->device == Device::CPU && !impl->via_f32 && choose_via_channels_last(*impl)) {
        impl->via_nxc = channels_last_twin(*impl);
    }
    // Only a plan that runs its own CPU kernels reads a bordered input (the twins choose theirs).
    if (impl->device == Device::CPU && !impl->via_f32 && !impl->via_nxc && !choose_batch_rows(*impl)) {
        choose_bordered_input(*impl);
    }
    return Plan(std::move(impl));
}

void Plan::run(const void *input, const void *filter, void *output) const {
    run(ConstTensorView(input, impl_->dtype, impl_->input_shape), ConstTensorView(filter, impl_->dtype, impl_->filter_shape),
        TensorView{output, impl_->dtype, impl_->info.output_shape, {}});
}

namespace {

void check_host_memory(const Plan::Impl &p, const char *what, Memory memory) {
    if (p.device == Device::CUDA || memory == Memory::Host) return;
    invalid(std::string(what) + " view is CUDA device memory but the plan runs on the CPU" +
            (p.fallback_reason.empty() ? std::string(" (create it with ExecOptions{Device::CUDA})")
                                       : " (CPU fallback: " + p.fallback_reason + ")"));
}

// f16 layers run as f32 (via_f32): the input converted exactly, `run_f32` runs the f32 plan on
// dense f32 buffers, the output is rounded once to f16. The f32 buffers come from the plan's
// pools (which its own kernels never use): fresh vectors cost every run their page faults and
// the output's zeroing, 2-3% of centernet_up3_f16.
template <typename RunF32>
void run_via_f32(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                 const TensorView &output, const std::vector<int64_t> &out_st, RunF32 run_f32) {
    int64_t in_count = 1, out_count = 1;
    for (int64_t v : p.input_shape) in_count *= v;
    for (int64_t v : p.info.output_shape) out_count *= v;
    detail::BufferPool::Lease x = p.bordered_pool.take((size_t)in_count * sizeof(float));
    detail::BufferPool::Lease y = p.output_pool.take((size_t)out_count * sizeof(float));
    detail::f16_to_dense_f32((const uint16_t *)input.data, p.input_shape, in_st, (float *)x.data());
    run_f32((const float *)x.data(), (float *)y.data());
    detail::dense_f32_to_f16((const float *)y.data(), (uint16_t *)output.data, p.info.output_shape, out_st);
}

void run_cpu(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st, const TensorView &output,
             std::vector<int64_t> out_st, const FilterPacking &packed);

// The plan whose kernels run a CPU layer: its channels-last twin, or itself. Filters are packed
// for it.
const Plan::Impl &kernel_plan(const Plan::Impl &p) { return p.via_nxc ? *p.via_nxc : p; }

// Layers below both limits run on the calling thread alone. Measured on a 2-vCPU AMD EPYC:
// ov_spec_1d (27 thousand MACs, 18 KB in, 14 KB out) took 3 us on one thread and 8 on two: the
// second core first pulls the input copy and the output rows from the first one's caches.
// centernet_dla_dw (4 million MACs, 5 MB) and grouped32_up (14 million) run 1.7-2x faster on two.
// DECONV_SERIAL_MACS overrides the MAC limit (0: every layer may run in parallel; the tests'
// small layers use it to keep the kernels' parallel loops covered).
constexpr int64_t kSerialMacs = int64_t(1) << 18;
constexpr int64_t kSerialBytes = int64_t(256) << 10;

int64_t serial_macs() {
    static const int64_t limit = [] {
        const char *env = std::getenv("DECONV_SERIAL_MACS");
        if (!env || !*env) return kSerialMacs;
        char *end = nullptr;
        const long long v = std::strtoll(env, &end, 10);
        return end && *end == '\0' && v >= 0 ? int64_t(v) : kSerialMacs;
    }();
    return limit;
}

bool runs_serially(const Plan::Impl &p) {
    if (p.macs >= serial_macs()) return false;
    int64_t elements = 0;
    for (const std::vector<int64_t> *shape : {&p.input_shape, &p.filter_shape, &p.info.output_shape}) {
        int64_t n = 1;
        for (int64_t e : *shape) n = checked_mul(n, e, "tensor elements");
        elements += n;
    }
    return elements * (int64_t)dtype_size(p.dtype) <= kSerialBytes;
}

// Runs a validated CPU layer, on its channels-last twin when it has one (the views' axes then
// reordered to [N, X.., C]: the same memory).
void run_cpu_plan(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                  const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed) {
    const detail::SerialLoops serial(runs_serially(p));
    if (!p.via_nxc) {
        run_cpu(p, input, std::move(in_st), output, std::move(out_st), packed);
        return;
    }
    run_cpu(*p.via_nxc, input, ncx_to_nxc_order(in_st), output, ncx_to_nxc_order(out_st), packed);
}

}  // namespace

// What Plan::pack_filter keeps: the CPU kernels' packing, the f32 plan's packed filter of an f16
// layer run as f32, or a CUDA plan's dense copy of the filter (its kernels read the caller's
// layout).
struct PackedFilter::Impl {
    std::weak_ptr<const Plan::Impl> owner;
    FilterPacking packing;   // CPU plans
    PackedFilter via_f32;    // f16 plans run as f32
    std::vector<uint8_t> dense;  // CUDA plans
};

PackedFilter::PackedFilter() = default;
PackedFilter::PackedFilter(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
size_t PackedFilter::bytes() const {
    if (!impl_) return 0;
    return impl_->packing.data.size() + impl_->packing.interleaved.data.size() + impl_->via_f32.bytes() +
           impl_->dense.size();
}
bool PackedFilter::empty() const { return !impl_; }

PackedFilter Plan::pack_filter(const ConstTensorView &filter) const {
    const Impl &p = *impl_;
    const std::vector<int64_t> w_st = check_view("filter", filter.data, filter.dtype, filter.shape, filter.strides,
                                                 p.dtype, p.filter_shape, false);
    if (filter.memory != Memory::Host) invalid("filter to pack is CUDA device memory; pack_filter reads host memory");
    auto packed = std::make_shared<PackedFilter::Impl>();
    packed->owner = impl_;
    const size_t elem = dtype_size(p.dtype);
    if (p.device == Device::CUDA) {
        int64_t count = 1;
        for (int64_t v : p.filter_shape) count = checked_mul(count, v, "filter element count");
        packed->dense.resize((size_t)count * elem);
        detail::copy_tensor((const uint8_t *)filter.data, w_st, packed->dense.data(), dense_strides(p.filter_shape),
                     p.filter_shape, elem);
    } else if (p.via_f32) {
        std::vector<float> w = detail::f16_to_dense_f32((const uint16_t *)filter.data, p.filter_shape, w_st);
        packed->via_f32 = Plan(p.via_f32).pack_filter(ConstTensorView(w.data(), DType::f32, p.filter_shape));
    } else {
        check_fits_int32(w_st, "filter stride");
        packed->packing = ::deconv::pack_filter(filter.data, w_st, kernel_plan(p), elem);
    }
    return PackedFilter(std::move(packed));
}

void Plan::run(const ConstTensorView &input, const PackedFilter &filter, const TensorView &output) const {
    const Impl &p = *impl_;
    if (filter.empty()) invalid("packed filter is empty (make it with Plan::pack_filter)");
    if (filter.impl_->owner.lock().get() != &p) {
        invalid("packed filter was made by another plan (a packing serves the plan that made it and its copies)");
    }
    std::vector<int64_t> in_st = check_view("data", input.data, input.dtype, input.shape, input.strides, p.dtype,
                                            p.input_shape, false);
    std::vector<int64_t> out_st = check_view("output", output.data, output.dtype, output.shape, output.strides,
                                             p.dtype, p.info.output_shape, true);
    check_host_memory(p, "data", input.memory);
    check_host_memory(p, "output", output.memory);
#if defined(DECONV_HAVE_CUDA)
    if (p.device == Device::CUDA) {
        const ConstTensorView w(filter.impl_->dense.data(), p.dtype, p.filter_shape);
        run(input, w, output);
        return;
    }
#endif
    if (p.via_f32) {
        run_via_f32(p, input, in_st, output, out_st, [&](const float *x, float *y) {
            Plan(p.via_f32).run(ConstTensorView(x, DType::f32, p.input_shape), filter.impl_->via_f32,
                                TensorView{y, DType::f32, p.info.output_shape, {}});
        });
        return;
    }
    check_fits_int32(in_st, "data stride");
    check_fits_int32(out_st, "output stride");
    run_cpu_plan(p, input, std::move(in_st), output, std::move(out_st), filter.impl_->packing);
}

void Plan::run(const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output) const {
    const Impl &p = *impl_;
    std::vector<int64_t> in_st = check_view("data", input.data, input.dtype, input.shape, input.strides, p.dtype,
                                            p.input_shape, false);
    std::vector<int64_t> w_st = check_view("filter", filter.data, filter.dtype, filter.shape, filter.strides,
                                           p.dtype, p.filter_shape, false);
    std::vector<int64_t> out_st = check_view("output", output.data, output.dtype, output.shape, output.strides,
                                             p.dtype, p.info.output_shape, true);
    check_host_memory(p, "data", input.memory);
    check_host_memory(p, "filter", filter.memory);
    check_host_memory(p, "output", output.memory);
#if defined(DECONV_HAVE_CUDA)
    if (p.device == Device::CUDA) {
        check_fits_int32(in_st, "data stride");
        check_fits_int32(w_st, "filter stride");
        check_fits_int32(out_st, "output stride");
        run_cuda(p, input, filter, output, in_st, w_st, out_st);
        return;
    }
#endif
    if (p.via_f32) {
        // Everything is validated: convert exactly to f32, run the f32 plan, round once to f16.
        std::vector<float> w = detail::f16_to_dense_f32((const uint16_t *)filter.data, p.filter_shape, w_st);
        run_via_f32(p, input, in_st, output, out_st,
                    [&](const float *x, float *y) { Plan(p.via_f32).run(x, w.data(), y); });
        return;
    }
    check_fits_int32(in_st, "data stride");
    check_fits_int32(w_st, "filter stride");
    check_fits_int32(out_st, "output stride");
    run_cpu_plan(p, input, std::move(in_st), output, std::move(out_st),
                 ::deconv::pack_filter(filter.data, w_st, kernel_plan(p), dtype_size(p.dtype)));
}

namespace {

// Channels-first layers on their own kernels with several (image, group) pairs (depthwise and
// grouped upsampling: centernet_dla_dw, grouped32_up; batches: dcgan_l5) run in slices of
// (image, group) pairs on the thread pool, each slice copying its own groups into
// the bordered input and then running their phases, so that the kernels read the copy from the
// core's own cache instead of after a whole-tensor copy has pushed it out (and, on a VM whose
// vCPUs share no cache, from the other core's). Channels-first data only (a slice's channels
// are then contiguous planes), only where the layer makes an input copy, its packed filter fits
// half of L2 (every slice streams it again: kSliceMaxFilterBytes, below) and the output is at
// most kSliceMaxGrowth times the input (the copy is then a large share of the
// memory traffic; fcn8s_upscore8, stride 8 x 8, measured no faster sliced). Measured (2 threads,
// medians of 3 alternating runs, ms, whole -> 2 / 4 tasks per thread): centernet_dla_dw 0.161
// (0.106-0.135 in other runs) -> 0.097 / 0.093; grouped32_up 0.189 -> 0.207 / 0.189;
// fcn8s_upscore8 0.797 -> 0.858 / 0.922. On 2026-11-25 (medians of 4 alternating runs, 1 / 2 / 4
// tasks per thread): grouped32_up 0.237 / 0.242 / 0.256, centernet_dla_dw 0.108 / 0.111 / 0.110:
// one range per thread (the pool deals each thread its own range first, so the cores keep their
// groups run after run). DECONV_GROUP_SLICES=0 runs such layers whole, =N with N tasks per thread
// (for measuring). dcgan_l5 (64 images, 64 -> 3 channels; formerly held back by a bound of 64 on
// C_in x C_out per group): 5.6-10.9 ms whole -> 4.5-4.6 sliced over 3 alternating runs.
constexpr int64_t kSliceTasksPerThread = 1;
constexpr int64_t kSliceMaxGrowth = 4;  // output elements per input element, at most

// Image slices: channels-first layers run on the channels-last kernels (the plan's NXC twin) with
// a batch run in slices of whole images, each transposing its images' input into the copy,
// computing them and transposing their output back while both are still in the core's caches,
// rather than three whole-tensor passes. Only where the packed filter fits half of L2 (every
// slice streams it again) and the batch gives every thread two slices; kSliceOutputBytes of
// output per slice at most. DECONV_GROUP_SLICES=0 turns these off too.
constexpr int64_t kSliceMaxFilterBytes = 512 * 1024;  // either kind of slice
constexpr int64_t kSliceOutputBytes = 512 * 1024;

// Row slabs: channels-first layers of one or a few images on the channels-last kernels (vnet_up_3x3x3)
// run in slabs of rows of the outermost output axis: each computes its rows of every phase into a
// buffer of its own (kSliceOutputBytes at most, so it stays in L2) and transposes them into the
// caller's output at once. Whole, the kernels wrote the channels-last result to memory and the
// transpose read it back from there (vnet_up_3x3x3: 14 MB each way, 15% of its samples in the
// transpose). The input is transposed whole first (the slabs' input rows overlap). Under the
// same filter bound as the other slices (centernet_up3's 4 MiB would stream from L3 per slab).
// DECONV_ROW_SLABS=0 turns them off, =N makes them N rows each (for measuring and testing).

// How a layer runs in slices: `tasks` == 0, whole; else `tasks` slices over `units`, (image,
// group) pairs or, when `images`, whole images, or when `slab_rows` > 0, (image, slab) pairs of
// `slab_rows` rows of the outermost output axis.
struct Slicing {
    int64_t tasks = 0, units = 0;
    bool images = false;
    int64_t slab_rows = 0;
};

Slicing slicing(const Plan::Impl &p, bool copies_input, bool dense_output, size_t filter_bytes, size_t elem) {
    const detail::OpGeometry &g = p.geo;
    // Every slice streams the packed filter again: within half of L2, for either kind.
    if (switched_off("DECONV_GROUP_SLICES") || g.forward || (int64_t)filter_bytes > kSliceMaxFilterBytes) return {};
    const int64_t threads = detail::pool_threads();
    if (threads < 2) return {};
    if (g.data_format == DataFormat::NXC) {
        if (!dense_output) return {};
        int64_t image_bytes = (int64_t)elem * g.groups * g.c_out;
        for (int64_t y : p.out_spatial) image_bytes *= y;
        const int64_t per_slice = std::max<int64_t>(1, kSliceOutputBytes / std::max<int64_t>(image_bytes, 1));
        if (g.n >= 2 * threads) return {std::max(2 * threads, (g.n + per_slice - 1) / per_slice), g.n, true};
        // Row slabs: a row of the outermost output axis within the slab bytes, at least two slabs
        // per thread, one task each (each thread runs its own range of them first, then helps the
        // other: with two tasks per thread the first to finish waited 8% of the run).
        // DECONV_ROW_SLABS=N: slabs of N rows, whatever their bytes (0: none).
        const char *env = std::getenv("DECONV_ROW_SLABS");
        const int64_t forced = env && *env ? std::atoll(env) : -1;
        const int64_t rows = p.out_spatial[0], row_bytes = image_bytes / std::max<int64_t>(rows, 1);
        if (g.rank < 2 || forced == 0 || (forced < 0 && row_bytes > kSliceOutputBytes)) return {};
        const int64_t slab_rows =
            forced > 0 ? forced : std::max<int64_t>(1, kSliceOutputBytes / std::max<int64_t>(row_bytes, 1));
        const int64_t slabs = (rows + slab_rows - 1) / slab_rows;
        if (g.n * slabs < 2 * threads) return {};
        return {g.n * slabs, g.n * slabs, false, slab_rows};
    }
    if (!copies_input) return {};
    int64_t in_count = 1, out_count = 1;
    for (int64_t v : p.input_shape) in_count *= v;
    for (int64_t v : p.info.output_shape) out_count *= v;
    if (out_count > kSliceMaxGrowth * in_count) return {};
    const int64_t units = g.n * g.groups;
    if (units < 2 * threads) return {};
    const char *env = std::getenv("DECONV_GROUP_SLICES");  // N tasks per thread, for measuring
    const int64_t per_thread = env ? std::max<int64_t>(1, std::atoll(env)) : kSliceTasksPerThread;
    return {std::min(units, per_thread * threads), units, false};
}

// Runs fn(begin, count) over `units` split into `tasks` contiguous ranges, on the thread pool.
// The first exception a task throws is rethrown here once every task has finished.
template <typename Fn>
void run_slices(int64_t tasks, int64_t units, const Fn &fn) {
    struct Closure {
        const Fn *fn;
        int64_t tasks, units;
        std::mutex lock;
        std::exception_ptr error;
    } c{&fn, tasks, units, {}, nullptr};
    auto task = [](void *, int i, uint8_t *closure) -> int {
        Closure &c = *reinterpret_cast<Closure *>(closure);
        const int64_t begin = i * c.units / c.tasks, end = (i + 1) * c.units / c.tasks;
        try {
            (*c.fn)(begin, end - begin);
        } catch (...) {
            const std::lock_guard<std::mutex> hold(c.lock);
            if (!c.error) c.error = std::current_exception();
        }
        return 0;
    };
    halide_do_par_for(nullptr, task, 0, (int)tasks, reinterpret_cast<uint8_t *>(&c));
    if (c.error) std::rethrow_exception(c.error);
}

// Exact row tiles: the channels-last kernels tile a row by q_tile positions (6 on AVX-512 and
// ARM64; 5 on AVX2 and SSE4.1, and in the bf16 pair kernels: cpu_channels_last_schedule.h and
// generators/CMakeLists.txt) and shift its last tile back over its neighbour, recomputing up to
// q_tile - 1 positions of a row that is no multiple of q_tile (centernet_up3's phase rows of 64:
// 66 computed; dilated_s1's 56: 60; unet_up1's 28: 30). Such rows run as two calls instead: the
// longest head of whole tiles whose rest is a multiple of four positions, then the rest, which
// the kernels' four-position branch tiles exactly (it needs the full tile's channels, 64 f32 on
// AVX-512). Returns the head, or 0 for one call. DECONV_EXACT_ROW_TILES=0 turns this off (for
// measuring).
constexpr int64_t kFourPositionMinChannels = 64;

int64_t exact_row_head(const Plan::Impl &p, int64_t width, int64_t q_tile) {
    if (q_tile == 0 || width % q_tile == 0 || p.geo.c_out < kFourPositionMinChannels) return 0;
    // Rows a multiple of four whose q_tile tiles would recompute more than a tenth of the row run
    // whole on the kernels' four-position tiles already (cpu_channels_last_schedule.h): dcgan_l4's
    // rows of 16 split 12 + 4 ran 2% slower (one more call per phase and image slice).
    const int64_t recomputed = (width + q_tile - 1) / q_tile * q_tile - width;
    if (width % 4 == 0 && recomputed * 10 > width) return 0;
    for (int64_t head = width / q_tile * q_tile; head > 0; head -= q_tile)
        if ((width - head) % 4 == 0) return head;
    return 0;
}

// The channels-last kernels' q_tile on this CPU (0: rows run whole).
int64_t channels_last_row_tile(const Plan::Impl &p) {
    if (!p.channel_major || switched_off("DECONV_EXACT_ROW_TILES")) return 0;
    const std::string v = cpu_variant();
    if (v == "avx2" || v == "sse41" || p.ci_pairs) return 5;
    return 6;
}

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
// packed filter from element `w_off`: one call per block of output channels when the packing is
// blocked (FilterPacking::block), the output's channels `out_c_stride` apart.
void call_phase_kernel(const Plan::Impl &p, const detail::KernelEntry *kernel, const FilterPacking &packed,
                       const int32_t steps[3], int kernel_rank, const uint8_t *in_base, int64_t w_off,
                       uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                       const halide_dimension_t *w_dims, const halide_dimension_t *out_dims) {
    const int dims = kernel_rank + 3;
    const int64_t elem = (int64_t)dtype_size(p.dtype);
    const int64_t bc = packed.block ? packed.block_channels : p.geo.c_out;
    for (int64_t c0 = 0; c0 < p.geo.c_out; c0 += bc) {
        const int64_t width = std::min(bc, p.geo.c_out - c0);
        halide_dimension_t id[7], wd[7], od[7];
        std::copy(in_dims, in_dims + dims, id);
        std::copy(w_dims, w_dims + dims, wd);
        std::copy(out_dims, out_dims + dims, od);
        if (packed.block) {
            wd[filter_dim(p.channel_major, kernel_rank, kernel_rank)].extent = (int32_t)(p.ci_pairs ? 2 * width : width);
            od[data_dim(p.geo.data_format, kernel_rank, kernel_rank)].extent = (int32_t)width;
        }
        KernelBuffers b(p.dtype, dims, in_base, packed.data.data() + ((c0 / bc) * packed.block + w_off) * elem,
                        out_base + c0 * out_c_stride * elem, id, wd, od);
        const int rc = kernel->as<detail::PhaseKernelFn>()(steps[0], steps[1], steps[2], &b.in, &b.w, &b.out);
        if (rc != 0) fail_kernel(kernel, rc);
    }
}

// call_phase_kernel with its rows (data axis `x`, the kernel's innermost spatial one) in two calls
// when exact_row_head says so: outputs [0, head), then the rest, whose output q reads the input of
// q + head.
void call_phase_kernel_rows(const Plan::Impl &p, int64_t row_tile, int x, const detail::KernelEntry *kernel,
                            const FilterPacking &packed, const int32_t steps[3], int kernel_rank, const uint8_t *in_base,
                            int64_t w_off, uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                            const halide_dimension_t *w_dims, const halide_dimension_t *out_dims) {
    const int64_t head = exact_row_head(p, out_dims[x].extent, row_tile);
    if (head == 0) {
        call_phase_kernel(p, kernel, packed, steps, kernel_rank, in_base, w_off, out_base, out_c_stride, in_dims, w_dims,
                          out_dims);
        return;
    }
    const int dims = kernel_rank + 3;
    halide_dimension_t id[7], od[7];
    std::copy(in_dims, in_dims + dims, id);
    std::copy(out_dims, out_dims + dims, od);
    od[x].extent = (int32_t)head;
    call_phase_kernel(p, kernel, packed, steps, kernel_rank, in_base, w_off, out_base, out_c_stride, id, w_dims, od);
    od[x].extent = out_dims[x].extent - (int32_t)head;
    id[x].min -= (int32_t)head;
    call_phase_kernel(p, kernel, packed, steps, kernel_rank, in_base, w_off,
                      out_base + head * out_dims[x].stride * (int64_t)dtype_size(p.dtype), out_c_stride, id, w_dims, od);
}

// Runs a batch-rows plan (choose_batch_rows): the input copied to [X_1 .. X_D, N, C] (outermost
// first), one call of the next rank's interior kernel per phase and tap window of every axis
// (the images its innermost axis, with one tap), the result copied back from the same layout.
// `in_st`, `out_st`: the caller's views, in the plan's [N, X.., C] order.
void run_batch_rows(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                    const TensorView &output, const std::vector<int64_t> &out_st, const FilterPacking &packed) {
    const detail::OpGeometry &geo = p.geo;
    const int rank = geo.rank, kernel_rank = rank + 1, dims = kernel_rank + 3;
    const size_t elem = dtype_size(p.dtype);
    // The batch-rows strides of a [N, X.., C] shape, and its element count.
    auto rows_strides = [&](const std::vector<int64_t> &shape, int64_t &count) {
        std::vector<int64_t> st(shape.size());
        st[rank + 1] = 1;
        st[0] = shape[rank + 1];
        count = shape[0] * shape[rank + 1];
        for (int i = rank; i >= 1; i--) {
            st[i] = count;
            count *= shape[i];
        }
        return st;
    };
    int64_t in_count = 0, out_count = 0;
    const std::vector<int64_t> in_rows_st = rows_strides(p.input_shape, in_count);
    const std::vector<int64_t> out_rows_st = rows_strides(p.info.output_shape, out_count);
    detail::BufferPool::Lease in_rows = p.bordered_pool.take((size_t)in_count * elem);
    detail::BufferPool::Lease out_rows = p.output_pool.take((size_t)out_count * elem);
    detail::copy_tensor((const uint8_t *)input.data, in_st, in_rows.data(), in_rows_st, p.input_shape, elem);

    // Kernel dimensions (channels-last, rank D + 1): data [c, g, images, x_D .. x_1, n = 1], filter
    // [co, ci, g, one tap, k_D .. k_1]; the spatial axes of each call set below.
    const int64_t c_in_all = geo.groups * geo.c_in, c_out_all = geo.groups * geo.c_out;
    halide_dimension_t in_dims[7], w_dims[7], out_dims[7];
    set_dim(in_dims[0], 0, geo.c_in, 1);
    set_dim(in_dims[1], 0, geo.groups, geo.c_in);
    set_dim(in_dims[2], 0, geo.n, c_in_all);
    set_dim(in_dims[dims - 1], 0, 1, in_count);
    set_dim(out_dims[0], 0, geo.c_out, 1);
    set_dim(out_dims[1], 0, geo.groups, geo.c_out);
    set_dim(out_dims[2], 0, geo.n, c_out_all);
    set_dim(out_dims[dims - 1], 0, 1, out_count);
    set_dim(w_dims[0], 0, geo.c_out, packed.co);
    set_dim(w_dims[1], 0, geo.c_in, packed.ci);
    if (p.ci_pairs) set_dim(w_dims[1], 0, geo.c_in / 2, 2 * packed.ci);  // pairs: see run_cpu
    set_dim(w_dims[2], 0, geo.groups, packed.g);
    set_dim(w_dims[3], 0, 1, 1);

    const int64_t row_tile = channels_last_row_tile(p);  // rows: the images
    // Odometer over (phase, window) of every axis.
    std::vector<std::vector<std::pair<size_t, size_t>>> entries(rank);
    for (int i = 0; i < rank; i++)
        for (size_t f = 0; f < p.phases[i].size(); f++)
            for (size_t w = 0; w < p.tap_windows[i][f].size(); w++) entries[i].push_back({f, w});
    std::vector<size_t> at(rank, 0);
    for (;;) {
        int64_t out_off = 0, w_off = 0;
        int32_t steps[3] = {1, 1, 1};
        bool has_taps = true;
        for (int i = 0; i < rank; i++) {
            const AxisPhase &a = p.phases[i][entries[i][at[i]].first];
            const detail::TapWindow &win = p.tap_windows[i][entries[i][at[i]].first][entries[i][at[i]].second];
            const int h = rank - i;  // the kernel's spatial axis (0: the images)
            const int64_t s = p.info.strides[i];
            out_off += (a.out_first + s * win.q_first) * out_rows_st[1 + i];
            set_dim(out_dims[2 + h], 0, win.q_count, s * out_rows_st[1 + i]);
            w_off += (a.tap_first + win.j_first * a.tap_step) * packed.k[i];
            set_dim(w_dims[3 + h], 0, win.j_count, a.tap_step * packed.k[i]);
            // Output q of the window reads input q + origin - j*in_step at its tap j.
            const int64_t origin = win.q_first + a.in_offset - win.j_first * a.in_step;
            set_dim(in_dims[2 + h], -origin, geo.in_spatial[i], in_rows_st[1 + i]);
            steps[h] = (int32_t)a.in_step;
            has_taps = has_taps && win.j_count > 0;
        }
        uint8_t *out_base = out_rows.data() + out_off * (int64_t)elem;
        if (has_taps) {
            call_phase_kernel_rows(p, row_tile, 2, p.batch_rows_kernel, packed, steps, kernel_rank, in_rows.data(), w_off,
                                   out_base, 1, in_dims, w_dims, out_dims);
        } else {
            std::vector<int64_t> ext, st;
            for (int d = 0; d < dims; d++) {
                ext.push_back(out_dims[d].extent);
                st.push_back(out_dims[d].stride);
            }
            zero_fill(out_base, elem, ext, st);
        }
        int i = rank - 1;
        for (; i >= 0; i--) {
            if (++at[i] < entries[i].size()) break;
            at[i] = 0;
        }
        if (i < 0) break;
    }
    detail::copy_tensor(out_rows.data(), out_rows_st, (uint8_t *)output.data, out_st, p.info.output_shape, elem);
}

// Runs a validated CPU layer: views checked, strides fitting the kernels' 32-bit fields.
void run_cpu(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st, const TensorView &output,
             std::vector<int64_t> out_st, const FilterPacking &packed) {
    if (p.batch_rows_kernel) {
        run_batch_rows(p, input, in_st, output, out_st, packed);
        return;
    }
    const size_t elem = dtype_size(p.dtype);
    const detail::OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DataFormat fmt = geo.data_format;

    // The kernels read the innermost data axis densely (x_D, or C under NXC): a view that is
    // not is repacked, into the zero-bordered copy when the layer reads one (any layout: the
    // channels-first data of a layer run on channels-last kernels is transposed there).
    const void *in_data = input.data;
    // Edge windows (Plan::Impl::EdgeWindows) read the caller's input where it is dense.
    const bool edge_windows = p.edges.middle > 0 && in_st.back() == 1 && out_st.back() == 1;
    const bool bordered = !p.border_lo.empty() && !edge_windows;
    const std::vector<int64_t> caller_in_st = in_st;
    const size_t first_spatial = fmt == DataFormat::NXC ? 1 : 2;
    const bool copies_input = (p.border_copy && !edge_windows) || p.channels_in_rows || in_st.back() != 1;
    // Channels-last kernels store channel vectors: an output whose channels are not adjacent is
    // computed densely into a buffer the plan keeps, then copied (validation is complete, so
    // nothing partial is written).
    // (Row slabs compute it slab by slab into buffers of their own instead.)
    std::optional<detail::BufferPool::Lease> dense_output;
    uint8_t *out_data = (uint8_t *)output.data;
    std::vector<int64_t> caller_out_st = out_st;
    const bool needs_dense_output = fmt == DataFormat::NXC && out_st.back() != 1;
    // Slices (Slicing): each copies its own part of the input, runs its kernels, and copies its
    // part of a dense output back.
    const Slicing slices = slicing(p, copies_input, needs_dense_output,
                                   packed.data.size() + packed.interleaved.data.size(), elem);
    if (needs_dense_output) {
        out_st = dense_strides(p.info.output_shape);
        out_data = nullptr;
        if (slices.slab_rows == 0) {
            int64_t count = 1;
            for (int64_t v : p.info.output_shape) count = checked_mul(count, v, "output element count");
            dense_output.emplace(p.output_pool.take((size_t)count * elem));
            out_data = dense_output->data();
        }
    }
    std::optional<detail::BorderedInput> bordered_copy;
    if (copies_input) {
        // Without margins (a plain dense copy) when the layer reads no bordered input.
        const std::vector<int64_t> none(rank, 0);
        bordered_copy.emplace(detail::bordered_buffer(p.bordered_pool, p.input_shape, bordered ? p.border_lo : none,
                                                      bordered ? p.border_hi : none, first_spatial, elem,
                                                      p.channels_in_rows));
        if (slices.tasks == 0 || slices.slab_rows > 0) {
            detail::copy_bordered(*bordered_copy, (const uint8_t *)in_data, in_st, p.input_shape, first_spatial, elem);
        }
        in_data = bordered_copy->buffer.data();
        in_st = bordered_copy->strides;
    }
    const std::vector<int64_t> in_nc = detail::to_ncx(in_st, fmt), out_nc = detail::to_ncx(out_st, fmt);

    const int dims = rank + 3;
    halide_dimension_t layer_in_dims[6], layer_w_dims[6], layer_out_dims[6];
    auto dd = [&](int logical) { return data_dim(fmt, rank, logical); };
    auto fd = [&](int logical) { return filter_dim(p.channel_major, rank, logical); };
    set_channel_dims(geo, p.channel_major, in_nc, out_nc, {packed.co, packed.ci, packed.g}, layer_in_dims,
                     layer_w_dims, layer_out_dims);
    if (p.ci_pairs) {
        // The pair layout's [2*co + ci%2, ci/2] (data_layout.h, logical_filter); the co axis's
        // extent is set per block of output channels below (pair packings are always blocked).
        set_dim(layer_w_dims[fd(rank + 1)], 0, geo.c_in / 2, 2 * packed.ci);
    }

    if (geo.forward) {
        // One call: input coordinates shifted by pads_begin, so the kernel reads y*s + k*d.
        int32_t strides[3] = {1, 1, 1}, dilations[3] = {1, 1, 1};
        for (int i = 0; i < rank; i++) {
            const int h = rank - 1 - i;  // Halide axis of spec axis i (innermost first)
            set_dim(layer_in_dims[dd(h)], p.info.pads_begin[i], geo.in_spatial[i], in_nc[2 + i]);
            set_dim(layer_w_dims[fd(h)], 0, geo.kernel[i], packed.k[i]);
            set_dim(layer_out_dims[dd(h)], 0, p.out_spatial[i], out_nc[2 + i]);
            strides[h] = (int32_t)p.info.strides[i];
            dilations[h] = (int32_t)p.info.dilations[i];
        }
        KernelBuffers b(p.dtype, dims, (const uint8_t *)in_data, packed.data.data(), out_data, layer_in_dims,
                        layer_w_dims, layer_out_dims);
        const int rc = p.kernel->as<detail::GroupConvKernelFn>()(strides[0], strides[1], strides[2], dilations[0],
                                                                 dilations[1], dilations[2], &b.in, &b.w, &b.out);
        if (rc != 0) fail_kernel(p.kernel, rc);
    } else {
        // The interleaved kernel serves the innermost axis's groups of s outputs (every phase at
        // once) when the output's rows are dense; the last Y mod s outputs run on the phase kernel.
        const int in = rank - 1;
        const bool interleave = p.interleaved_kernel && out_nc[2 + in] == 1;
        const int64_t s_in = p.info.strides[in];
        const InterleavedFilter &iw = packed.interleaved;
        const int64_t groups = p.out_spatial[in] / s_in;
        const int64_t row_tile = channels_last_row_tile(p);
        // Odometer over the phases of each axis; under interleaving, the innermost axis's entries
        // are instead 0 = the interleaved groups, then e = 1 .. Y mod s: output s*groups + e - 1.
        auto entries = [&](int i) -> size_t {
            if (interleave && i == in) return (size_t)(1 + p.out_spatial[in] % s_in);
            return p.phases[i].size();
        };
        // Every phase of batch [n0, n0 + nn) x groups [g0, g0 + gn) (the whole layer, or one slice);
        // with a slab, image n0's output rows [slab->y0, slab->y1) of the outermost axis only, into
        // slab->data (laid out as those rows of the dense output).
        struct RowSlab {
            int64_t y0, y1;
            uint8_t *data;
        };
        auto run_phases = [&](int64_t n0, int64_t nn, int64_t g0, int64_t gn, const RowSlab *slab = nullptr) {
            halide_dimension_t in_dims[6], w_dims[6], out_dims[6];
            std::copy(layer_in_dims, layer_in_dims + dims, in_dims);
            std::copy(layer_w_dims, layer_w_dims + dims, w_dims);
            std::copy(layer_out_dims, layer_out_dims + dims, out_dims);
            in_dims[dd(rank + 1)].extent = out_dims[dd(rank + 1)].extent = w_dims[fd(rank + 2)].extent = (int32_t)gn;
            in_dims[dd(rank + 2)].extent = out_dims[dd(rank + 2)].extent = (int32_t)nn;
            const uint8_t *in_base =
                (const uint8_t *)in_data + (n0 * in_nc[0] + g0 * geo.c_in * in_nc[1]) * (int64_t)elem;
            const int64_t out_shift = (slab ? 0 : n0 * out_nc[0]) + g0 * geo.c_out * out_nc[1];
            uint8_t *const out_root = slab ? slab->data : out_data;
            const int64_t w_shift = g0 * packed.g, iw_shift = g0 * iw.g;
            std::vector<size_t> ph(rank, 0);
            for (;;) {
                int64_t out_off = 0, w_off = 0, iw_off = 0;
                int32_t steps[3] = {1, 1, 1};
                bool has_taps = true;
                // Every output q of the phase reads input q + in_offset - j*in_step for j < T: when
                // all of those lie in [0, X) the interior kernel (no boundary tests) serves the phase.
                bool interior = true, in_slab = true;
                const bool interleaved_call = interleave && ph[in] == 0;
                for (int i = 0; i < rank; i++) {
                    AxisPhase a = interleave && i == in ? p.phases[in][ph[in] == 0 ? 0 : ph[in] - 1] : p.phases[i][ph[i]];
                    if (interleave && i == in && ph[in] > 0) {
                        // A tail output s*groups + e - 1: phase e - 1's output q = groups alone.
                        a.out_first += s_in * groups;
                        a.in_offset += groups;
                        a.out_count = 1;
                    }
                    if (slab && i == 0) {
                        // The phase's outputs q in [q_lo, q_hi) lie in the slab's rows; its row
                        // first + q_lo * s is the slab's row first + q_lo * s - y0.
                        const int64_t s0 = p.info.strides[0];
                        const int64_t q_lo = std::max<int64_t>(0, -detail::floor_div(a.out_first - slab->y0, s0));
                        const int64_t q_hi = std::min(a.out_count, -detail::floor_div(a.out_first - slab->y1, s0));
                        in_slab = q_hi > q_lo;
                        a.out_first += q_lo * s0 - slab->y0;
                        a.in_offset += q_lo;
                        a.out_count = std::max<int64_t>(0, q_hi - q_lo);
                    }
                    const int h = rank - 1 - i;
                    const int64_t ys = out_nc[2 + i], ks = packed.k[i];
                    out_off += a.out_first * ys;
                    w_off += a.tap_first * ks;
                    if (interleave && i != in) iw_off += a.tap_first * iw.k[i];
                    set_dim(out_dims[dd(h)], 0, a.out_count, p.info.strides[i] * ys);
                    set_dim(w_dims[fd(h)], 0, a.tap_count, a.tap_step * ks);
                    // The input's origin moves so that output q reads input q + in_offset at tap 0
                    // (the interleaved kernel's innermost axis reads input coordinates as they are).
                    const int64_t origin = interleaved_call && i == in ? 0 : a.in_offset;
                    if (bordered) {
                        set_dim(in_dims[dd(h)], -origin - p.border_lo[i],
                                geo.in_spatial[i] + p.border_lo[i] + p.border_hi[i], in_nc[2 + i]);
                    } else {
                        set_dim(in_dims[dd(h)], -origin, geo.in_spatial[i], in_nc[2 + i]);
                    }
                    steps[h] = (int32_t)a.in_step;
                    has_taps = has_taps && (a.tap_count > 0 || (interleaved_call && i == in));
                    interior = interior && a.in_offset - (a.tap_count - 1) * a.in_step >= 0 &&
                               a.out_count - 1 + a.in_offset < geo.in_spatial[i];
                }
                const detail::KernelEntry *kernel = interior || bordered ? p.interior_kernel : p.kernel;
                uint8_t *out_base = out_root + (out_off + out_shift) * (int64_t)elem;
                if (interleaved_call) {
                    set_dim(out_dims[0], 0, groups, s_in);
                }
                if (!in_slab) {
                    // No output row of this phase in the slab.
                } else if (!has_taps) {
                    std::vector<int64_t> ext, st;
                    for (int h = 0; h < dims; h++) {
                        ext.push_back(out_dims[h].extent);
                        st.push_back(out_dims[h].stride);
                    }
                    if (interleaved_call) {  // every phase of every group
                        ext.push_back(s_in);
                        st.push_back(1);
                    }
                    zero_fill(out_base, elem, ext, st);
                } else if (interleaved_call) {
                    // [ph, q, outer axes.., co, g, n] and [j, ph, outer taps.., co, ci, g].
                    halide_dimension_t io_dims[7], iw_dims[7];
                    set_dim(io_dims[0], 0, s_in, 1);
                    set_dim(iw_dims[0], 0, iw.taps, iw.j);
                    set_dim(iw_dims[1], 0, s_in, iw.ph);
                    for (int h = 0; h < dims; h++) io_dims[h + 1] = out_dims[h];
                    for (int h = 1; h < rank; h++) {
                        const int i = rank - 1 - h;
                        const AxisPhase &a = p.phases[i][ph[i]];
                        set_dim(iw_dims[h + 1], 0, a.tap_count, a.tap_step * iw.k[i]);
                    }
                    set_dim(iw_dims[rank + 1], 0, geo.c_out, 1);
                    set_dim(iw_dims[rank + 2], 0, geo.c_in, geo.c_out);
                    set_dim(iw_dims[rank + 3], 0, gn, iw.g);
                    // The blocked kernel takes the rows' first whole multiple of kBlockedRowTile groups,
                    // the plain one the rest (interleaved_tail_kernel); depthwise rows run their first
                    // multiple of kExactRowTile groups, then the rest (interleaved_exact_rows). The
                    // input's origin moves by the groups before.
                    // Edge windows: the groups before and after the middle read their windows' copies.
                    struct RowPart {
                        int64_t q0, count;
                        const detail::KernelEntry *kernel;
                        bool window = false;
                    };
                    RowPart parts[3] = {{0, groups, p.interleaved_kernel}, {0, 0, nullptr}, {0, 0, nullptr}};
                    if (edge_windows) {
                        const int64_t right = p.edges.left + p.edges.middle;
                        parts[0] = {0, p.edges.left, p.edges.kernel, true};
                        parts[1] = {p.edges.left, p.edges.middle, p.interleaved_kernel};
                        parts[2] = {right, groups - right, p.edges.kernel, true};
                    } else if (p.interleaved_tail_kernel) {
                        const int64_t head = groups / kBlockedRowTile * kBlockedRowTile;
                        parts[0].count = head;
                        parts[1] = {head, groups - head, p.interleaved_tail_kernel};
                    } else if (p.interleaved_exact_rows) {
                        parts[0].count = groups / kExactRowTile * kExactRowTile;
                        parts[1] = {parts[0].count, groups - parts[0].count, p.interleaved_kernel};
                    }
                    // pads_begin modulo the stride, the rest of it in the input's origin (the
                    // kernel specializes the common residues: cpu_interleaved_schedule.h).
                    const int64_t pad = p.info.pads_begin[in], pad_rest = detail::floor_div(pad, s_in);
                    for (const RowPart &part : parts) {
                        if (part.count == 0) continue;
                        const int64_t q0 = part.q0;
                        const detail::KernelEntry *k = part.kernel;
                        io_dims[1].extent = (int32_t)part.count;
                        halide_dimension_t id[6];
                        std::copy(in_dims, in_dims + dims, id);
                        id[dd(0)].min -= (int32_t)(q0 + pad_rest);
                        const uint8_t *part_in = in_base;
                        std::optional<detail::BufferPool::Lease> window;
                        if (part.window) {
                            // Input [q0 + reach.lo, q0 + count + reach.hi) of every row (n, c), zero
                            // outside the input; coordinate v of the kernel is input v + q0 + pad_rest.
                            const int64_t first = q0 + p.edges.reach.lo;
                            const int64_t width = part.count + p.edges.reach.hi - p.edges.reach.lo;
                            window.emplace(p.bordered_pool.take((size_t)(nn * gn * geo.c_in * width) * elem));
                            detail::copy_row_window(window->data(), in_base, nn, in_nc[0], gn * geo.c_in, in_nc[1],
                                                    geo.in_spatial[0], first, width, elem);
                            part_in = window->data();
                            set_dim(id[0], (int32_t)(first - q0 - pad_rest), width, 1);
                            set_dim(id[1], 0, geo.c_in, width);
                            set_dim(id[2], 0, gn, geo.c_in * width);
                            set_dim(id[3], 0, nn, gn * geo.c_in * width);
                        }
                        KernelBuffers b(p.dtype, dims + 1, part_in, iw.data.data() + (iw_off + iw_shift) * (int64_t)elem,
                                        out_base + q0 * s_in * (int64_t)elem, id, iw_dims, io_dims);
                        b.in.dimensions = dims;
                        const int rc = k->as<detail::InterleavedKernelFn>()((int32_t)(pad - pad_rest * s_in),
                                                                            steps[1], steps[2], &b.in, &b.w, &b.out);
                        if (rc != 0) fail_kernel(k, rc);
                    }
                } else {
                    call_phase_kernel_rows(p, row_tile, dd(0), kernel, packed, steps, rank, in_base, w_off + w_shift,
                                           out_base, out_nc[1], in_dims, w_dims, out_dims);
                }
                int i = rank - 1;
                for (; i >= 0; i--) {
                    if (++ph[i] < entries(i)) break;
                    ph[i] = 0;
                }
                if (i < 0) break;
            }
        };
        if (slices.tasks == 0) {
            run_phases(0, geo.n, 0, geo.groups);
        } else if (slices.slab_rows > 0) {
            // NXC: whole input already copied; (image, slab) units, each slab computed into a buffer
            // of the task's own and transposed out at once.
            const int64_t rows = p.out_spatial[0], slabs = (rows + slices.slab_rows - 1) / slices.slab_rows;
            run_slices(slices.tasks, slices.units, [&](int64_t begin, int64_t count) {
                detail::BufferPool::Lease buf = p.slab_pool.take((size_t)(slices.slab_rows * out_st[1]) * elem);
                for (int64_t u = begin; u < begin + count; u++) {
                    const int64_t n = u / slabs, y0 = u % slabs * slices.slab_rows;
                    const RowSlab slab{y0, std::min(rows, y0 + slices.slab_rows), buf.data()};
                    run_phases(n, 1, 0, geo.groups, &slab);
                    std::vector<int64_t> part = p.info.output_shape;
                    part[0] = 1;
                    part[1] = slab.y1 - y0;
                    detail::copy_tensor(buf.data(), out_st,
                                        (uint8_t *)output.data + (n * caller_out_st[0] + y0 * caller_out_st[1]) * (int64_t)elem,
                                        caller_out_st, part, elem);
                }
            });
        } else if (slices.images) {
            run_slices(slices.tasks, slices.units, [&](int64_t n0, int64_t nn) {
                // NXC: images [n0, n0 + nn) in, computed, and out.
                if (bordered_copy) {
                    detail::copy_bordered(*bordered_copy, (const uint8_t *)input.data, caller_in_st, p.input_shape,
                                          first_spatial, elem, n0, nn);
                }
                run_phases(n0, nn, 0, geo.groups);
                if (dense_output) {
                    std::vector<int64_t> part = p.info.output_shape;
                    part[0] = nn;
                    detail::copy_tensor(dense_output->data() + n0 * out_st[0] * (int64_t)elem, out_st,
                                        (uint8_t *)output.data + n0 * caller_out_st[0] * (int64_t)elem, caller_out_st,
                                        part, elem);
                }
            });
        } else {
            run_slices(slices.tasks, slices.units, [&](int64_t begin, int64_t count) {
                // Runs of one image's groups: copy their input, then run their phases.
                while (count > 0) {
                    const int64_t n0 = begin / geo.groups, g0 = begin % geo.groups;
                    const int64_t gn = std::min(count, geo.groups - g0);
                    if (bordered_copy) {
                        // NCX: channels [g0 * C_in, (g0 + gn) * C_in) of image n0.
                        detail::copy_bordered(*bordered_copy, (const uint8_t *)input.data, caller_in_st, p.input_shape,
                                              first_spatial, elem, (n0 * geo.groups + g0) * geo.c_in, gn * geo.c_in);
                    }
                    run_phases(n0, 1, g0, gn);
                    begin += gn;
                    count -= gn;
                }
            });
        }
    }
    if (dense_output && !slices.images) {
        detail::copy_tensor(dense_output->data(), out_st, (uint8_t *)output.data, caller_out_st, p.info.output_shape, elem);
    }
}

}  // namespace

}  // namespace deconv
