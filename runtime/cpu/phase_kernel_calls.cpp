// One phase's kernel call and the ways a call's rows are split: per block of output channels
// (call_phase_kernel), as flat rows (call_flat_rows), with a 2D tail column transposed
// (call_phase_kernel_transposed), at an exact multiple of the row tile (call_phase_kernel_rows),
// and with a 1D row's ends on the bounded kernel (call_phase_kernel_edges). The executors
// (cpu_executor.cpp, batch_rows_executor.cpp) decide which call a phase takes.
#include "cpu/phase_kernel_calls.h"
#include "cpu/fused_epilogue.h"

#include "kernels/cpu_thread_pool.h"
#include "kernels/kernel_call.h"
#include "kernels/tensor_copy.h"
#include "plan/thresholds.h"

#include "facts/channels_last_tiles.h"

#include "HalideRuntime.h"

#include <algorithm>

namespace deconv {
namespace detail {

namespace {

// Exact row tiles: a channels-last row that is no multiple of its tiles runs as a head and a
// rest that they cover with the fewest positions computed, where that saves enough of the row
// (31 as 25 + 6 on AVX-512: 1.13x). Returns the head, or 0 for one call (policy exact_row_tiles).
int64_t exact_row_head(const Plan::Impl &p, int64_t width, int64_t q_tile) {
    const int64_t four = p.tiles.short_positions;
    if (q_tile == 0 || width % q_tile == 0 || p.geo.c_out < p.tiles.four_position_channels) return 0;
    const tiles::ChannelTiles &list = p.tiles.channel_tiles;
    const int64_t whole = tiles::channels_last_row_computed(list, width);
    const int64_t saving = threshold(p, Threshold::ExactRowSaving);
    if ((whole - width) * saving < whole) return 0;  // (also every exact row: no search per call)
    int64_t best = whole, head = 0;
    // (Both parts at least four wide: narrower rows run one position per step.)
    const int64_t most_rest = std::min(threshold(p, Threshold::MaxExactRest), width - four);
    for (int64_t rest = four; rest <= most_rest; rest++) {
        const int64_t computed =
            tiles::channels_last_row_computed(list, width - rest) + tiles::channels_last_row_computed(list, rest);
        if (computed < best) best = computed, head = width - rest;
    }
    return (whole - best) * saving >= whole ? head : 0;
}

}  // namespace

// One call of a phase kernel (`kernel_rank` spatial axes; position or channel schedule) on the
// packed filter from element `w_off`: one call per block of output channels when the packing is
// blocked (FilterPacking::block), the output's channels `out_c_stride` apart.
void call_phase_kernel(const Plan::Impl &p, const KernelEntry *kernel, const FilterPacking &packed,
                       const int32_t steps[3], int kernel_rank, const uint8_t *in_base, int64_t w_off,
                       uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                       const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi) {
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
        const int c_dim = data_dim(p.geo.data_format, kernel_rank, kernel_rank);
        KernelEpilogueArgs e(epi.e, p.dtype, od[c_dim], od[c_dim + 1], c0, epi.g0);
        const int rc = kernel->as<PhaseKernelFn>()(steps[0], steps[1], steps[2], &b.in, &b.w, &e.bias, e.alpha, e.hi, &b.out);
        if (rc != 0) fail_kernel(kernel, rc);
    }
}

// A stride-1 call with flat rows (Plan::Impl::flat_rows): each plane of the zero-bordered input
// (Halide axes 0 and 1) is read as one row of its rows end to end, at the copy's row pitch, so
// that the position kernel's vectors run along whole planes instead of rows narrower than a
// vector. Output q of the flat row is row q / pitch, position q % pitch: the positions from the
// output's width to the pitch are computed too (they read the zero margins and the next row's
// start) into a scratch buffer of the copy's pitch, whose rows are then copied to the output.
// Channels-first data only (dense rows: x stride 1).
void call_flat_rows(const Plan::Impl &p, const KernelEntry *kernel, const FilterPacking &packed,
                    const int32_t steps[3], const uint8_t *in_base, int64_t w_off, uint8_t *out_base,
                    const halide_dimension_t *in_dims, const halide_dimension_t *w_dims,
                    const halide_dimension_t *out_dims,
                       const CallEpilogue &epi) {
    const int rank = p.geo.rank, dims = rank + 3;
    const int64_t elem = (int64_t)dtype_size(p.dtype);
    const auto dd = [&](int logical) { return data_dim(DataFormat::NCX, rank, logical); };
    const int64_t pitch = in_dims[dd(1)].stride, width = out_dims[dd(0)].extent, height = out_dims[dd(1)].extent;
    const int64_t plane = height * pitch;
    // The scratch output: [n][g][c][outer axes..][height][pitch], dense.
    halide_dimension_t id[6], od[6];
    std::copy(in_dims, in_dims + dims, id);
    std::copy(out_dims, out_dims + dims, od);
    id[dd(0)].extent = (int32_t)(in_dims[dd(1)].extent * pitch);
    int64_t stride = plane;
    set_dim(od[dd(0)], 0, (height - 1) * pitch + width, 1);
    set_dim(od[dd(1)], 0, 1, plane);
    for (int h = 2; h < dims; h++) {
        set_dim(od[dd(h)], 0, out_dims[dd(h)].extent, stride);
        stride *= out_dims[dd(h)].extent;
    }
    BufferPool::Lease scratch = p.slab_pool.take((size_t)(stride * elem));
    call_phase_kernel(p, kernel, packed, steps, rank, in_base, w_off, scratch.data(), od[dd(rank)].stride, id, w_dims,
                      od, epi);
    // The scratch's rows (at the pitch) into the output's.
    std::vector<int64_t> shape, from, to;
    for (int h = 0; h < dims; h++) {
        shape.push_back(out_dims[dd(h)].extent);
        from.push_back(h == 0 ? 1 : h == 1 ? pitch : od[dd(h)].stride);
        to.push_back(out_dims[dd(h)].stride);
    }
    copy_tensor(scratch.data(), from, out_base, to, shape, (size_t)elem);
}

// A 2D channels-first phase call of one output column (an interleaved row's tail output) with
// its axes swapped: the column's rows become the kernel's innermost, vectorized axis. The
// kernels read that axis densely, so the input columns the call reads are copied, transposed,
// into a buffer of their own; the output and filter take the swapped strides as they are.
// (As a plain call the column ran the kernel's scalar branch once per row.)
void call_phase_kernel_transposed(const Plan::Impl &p, const KernelEntry *kernel, const FilterPacking &packed,
                                  const int32_t steps[3], const uint8_t *in_base, int64_t w_off, uint8_t *out_base,
                                  int64_t out_c_stride, const halide_dimension_t *in_dims,
                                  const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi) {
    // NCX rank 2: data [x, y, c, g, n], filter [kx, ky, co, ci, g] (kernel_call.h).
    const int64_t elem = (int64_t)dtype_size(p.dtype);
    const halide_dimension_t &x = in_dims[0], &y = in_dims[1];
    // Input columns the call reads: output 0 at tap j reads x = -j * step, j < the taps; those
    // outside the buffer read as zero (the bounded kernel) or are never read (the interior one).
    const int64_t x_lo = std::max<int64_t>(x.min, -(int64_t)(w_dims[0].extent - 1) * steps[0]);
    const int64_t x_hi = std::min<int64_t>(x.min + x.extent, 1);
    if (x_hi <= x_lo) {
        // No column inside the buffer (interleaved rows read a copy or an input that holds every
        // read, so not met there): the plain call, whose kernel writes the column's zeros.
        call_phase_kernel(p, kernel, packed, steps, 2, in_base, w_off, out_base, out_c_stride, in_dims, w_dims,
                          out_dims, epi);
        return;
    }
    const int64_t cols = x_hi - x_lo, rows = y.extent;
    const int64_t c = in_dims[2].extent, g = in_dims[3].extent, n = in_dims[4].extent;
    // From a pool of the plan (the same sizes every run), not the bordered copy's: a window the
    // size of that copy would come back to it as its buffer, with inputs in its margins.
    BufferPool::Lease window = p.slab_pool.take((size_t)(n * g * c * cols * rows * elem));
    const std::vector<int64_t> shape = {n, g, c, cols, rows};
    const std::vector<int64_t> src_st = {in_dims[4].stride, in_dims[3].stride, in_dims[2].stride, x.stride, y.stride};
    const std::vector<int64_t> dst_st = {g * c * cols * rows, c * cols * rows, cols * rows, rows, 1};
    copy_tensor(in_base + (x_lo - x.min) * x.stride * elem, src_st, window.data(), dst_st, shape, (size_t)elem);
    halide_dimension_t id[5], wd[5], od[5];
    std::copy(in_dims, in_dims + 5, id);
    std::copy(w_dims, w_dims + 5, wd);
    std::copy(out_dims, out_dims + 5, od);
    set_dim(id[0], y.min, rows, 1);
    set_dim(id[1], x_lo, cols, rows);
    set_dim(id[2], in_dims[2].min, c, cols * rows);
    set_dim(id[3], in_dims[3].min, g, c * cols * rows);
    set_dim(id[4], in_dims[4].min, n, g * c * cols * rows);
    std::swap(wd[0], wd[1]);
    std::swap(od[0], od[1]);
    const int32_t swapped[3] = {steps[1], steps[0], steps[2]};
    call_phase_kernel(p, kernel, packed, swapped, 2, window.data(), w_off, out_base, out_c_stride, id, wd, od, epi);
}

int64_t channels_last_row_tile(const Plan::Impl &p) {
    // (The channel-dot kernels' shifted last tiles recompute at most 3 of a row's positions.)
    if (!p.channel_major || p.groups || p.dots || p.group_block || p.policy.exact_row_tiles == Toggle::Off) return 0;
    return p.tiles.row_positions;
}

// call_phase_kernel with its rows (data axis `x`, the kernel's innermost spatial one) in two calls
// when exact_row_head says so: outputs [0, head), then the rest, whose output q reads the input of
// q + head.
void call_phase_kernel_rows(const Plan::Impl &p, int64_t row_tile, int x, const KernelEntry *kernel,
                            const FilterPacking &packed, const int32_t steps[3], int kernel_rank, const uint8_t *in_base,
                            int64_t w_off, uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                            const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi) {
    const int64_t head = exact_row_head(p, out_dims[x].extent, row_tile);
    if (head == 0) {
        call_phase_kernel(p, kernel, packed, steps, kernel_rank, in_base, w_off, out_base, out_c_stride, in_dims, w_dims,
                          out_dims, epi);
        return;
    }
    const int dims = kernel_rank + 3;
    halide_dimension_t id[7], od[7];
    std::copy(in_dims, in_dims + dims, id);
    std::copy(out_dims, out_dims + dims, od);
    od[x].extent = (int32_t)head;
    call_phase_kernel(p, kernel, packed, steps, kernel_rank, in_base, w_off, out_base, out_c_stride, id, w_dims, od, epi);
    od[x].extent = out_dims[x].extent - (int32_t)head;
    id[x].min -= (int32_t)head;
    call_phase_kernel(p, kernel, packed, steps, kernel_rank, in_base, w_off,
                      out_base + head * out_dims[x].stride * (int64_t)dtype_size(p.dtype), out_c_stride, id, w_dims, od, epi);
}

// A 1D phase of a layer that reads its input in place (Plan::Impl::in_place_edges): its outputs
// [q_lo, q_hi), whose taps all read inside the input, on the interior kernel (with its row split),
// those before and after on the bounded one. Output q reads input q + in_offset - j * in_step at
// tap j. (On the bounded kernel whole, 64 -> 64 channels, kernel 4 stride 2, pad 0, 4000
// positions ran 0.61x of the bordered copy's time; its rows' tile tails cost more than the copy.)
void call_phase_kernel_edges(const Plan::Impl &p, int64_t row_tile, int x, const AxisPhase &a, int64_t in_size,
                             const FilterPacking &packed, const int32_t steps[3], const uint8_t *in_base, int64_t w_off,
                             uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                             const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi) {
    const int64_t n = out_dims[x].extent;
    const int64_t q_lo = std::clamp<int64_t>((a.tap_count - 1) * a.in_step - a.in_offset, 0, n);
    const int64_t q_hi = std::clamp<int64_t>(in_size - a.in_offset, q_lo, n);
    const int kernel_rank = 1, dims = kernel_rank + 3;
    const auto part = [&](int64_t q0, int64_t count, bool inside) {
        if (count <= 0) return;
        halide_dimension_t id[7], od[7];
        std::copy(in_dims, in_dims + dims, id);
        std::copy(out_dims, out_dims + dims, od);
        od[x].extent = (int32_t)count;
        id[x].min -= (int32_t)q0;
        uint8_t *ob = out_base + q0 * out_dims[x].stride * (int64_t)dtype_size(p.dtype);
        if (inside) {
            call_phase_kernel_rows(p, row_tile, x, p.interior_kernel, packed, steps, kernel_rank, in_base, w_off, ob,
                                   out_c_stride, id, w_dims, od, epi);
        } else {
            // A few outputs: on this thread alone, no hand-off to the pool.
            const SerialLoops serial(true);
            call_phase_kernel(p, p.kernel, packed, steps, kernel_rank, in_base, w_off, ob, out_c_stride, id, w_dims, od, epi);
        }
    };
    part(0, q_lo, false);
    part(q_lo, q_hi - q_lo, true);
    part(q_hi, n - q_hi, false);
}

}  // namespace detail
}  // namespace deconv
