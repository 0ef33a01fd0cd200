// The CPU executor: runs a validated plan on its kernels, one call per combination of stride
// phases (or per row part of the interleaved kernels), whole or in slices on the thread pool.
#include "cpu/cpu_executor.h"

#include "cpu/bordered_input.h"
#include "cpu/slicing.h"
#include "layer/checked_math.h"
#include "kernels/cpu_thread_pool.h"
#include "kernels/kernel_call.h"
#include "cpu/phase_kernel_calls.h"
#include "cpu/fused_epilogue.h"
#include "cpu/phase_tasks.h"
#include "kernels/tensor_copy.h"
#include "cpu/winograd_executor.h"
#include "plan/thresholds.h"

#include "facts/channels_last_tiles.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <optional>

namespace deconv {
namespace detail {

// Tap windows on the outer axes: a phase whose outputs near an outer axis's ends skip enough of
// its products runs one call per tap window there, each with only its taps, the edges as tasks
// (policy tap_windows; 128 -> 128 channels, 8^3, kernel 4 stride 2: 1.42x on 2 threads).
namespace {

bool windows_axis(const Plan::Impl &p, int axis, const AxisPhase &a) {
    // (Flat rows merge the rows into the innermost axis: no windows of theirs.)
    if (p.policy.tap_windows == Toggle::Off || a.tap_count < 1 || (p.flat_rows && axis == p.geo.rank - 2)) return false;
    const int64_t computed = a.out_count * a.tap_count, border = computed - a.pairs;
    if (p.policy.tap_windows == Toggle::On) return border > 0;
    return border * threshold(p, Threshold::TapWindowShare) >= computed &&
           (double)p.macs * border >= (double)threshold(p, Threshold::TapWindowMinSaved) * computed;
}

}  // namespace

bool tap_windowed(const Plan::Impl &p) {
    if (p.geo.forward || p.winograd.f || p.batch_rows_kernel) return false;
    for (int i = 0; i + 1 < p.geo.rank; i++)
        for (const AxisPhase &a : p.phases[i])
            if (windows_axis(p, i, a)) return true;
    return false;
}

// Runs a validated CPU layer: views checked, strides fitting the kernels' 32-bit fields.
void run_phase_kernels(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                       const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed) {
    const size_t elem = dtype_size(p.dtype);
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DataFormat fmt = geo.data_format;
    // Every output this executor writes goes through a kernel's store or fill_tapless_view, so
    // it stores the epilogue a plan with one offers.
    const KernelEpilogue *const fused = take_fused_epilogue();

    // The kernels read the innermost data axis densely (x_D, or C under NXC): a view that is
    // not is repacked, into the zero-bordered copy when the layer reads one (any layout: the
    // channels-first data of a layer run on channels-last kernels is transposed there).
    const void *in_data = input.data;
    const size_t filter_bytes = packed.data.size() + packed.interleaved.data.size();
    const bool strided_input = in_st.back() != 1;
    // An output stage offered for this run (cpu/output_stage.h) writes the caller's output from
    // slices that compute into buffers of their own, as the copy of a dense output does: images,
    // and row slabs of channels-last layers; the layer's slicing decides whether there are such
    // slices. (Channels-first slabs split every phase's call per slab: the whole run and a pass
    // after it were faster, fcn8s_upscore8 as u8 1.16 ms against 1.57; channels last, 1.35
    // against 2.03. dcgan_l5 with a bias and a tanh: 3.7 -> 2.7 ms.)
    const OutputStage *stage = offered_output_stage(output.data, out_st);
    std::optional<Slicing> staged;  // the run's slicing, where the stage is taken
    if (stage) {
        const Slicing s = slicing(p, p.border_copy || p.channels_in_rows || strided_input, true, filter_bytes, elem);
        if (s.images || (s.slab_rows > 0 && fmt == DataFormat::NXC)) {
            take_output_stage();
            staged = s;
        } else {
            stage = nullptr;
        }
    }
    // Edge windows (CpuConf::EdgeWindows) read the caller's input where it is dense (not under
    // slices of the output).
    const bool edge_windows = p.edges.middle > 0 && !strided_input && out_st.back() == 1 && !stage;
    const bool bordered = !p.border_lo.empty() && !edge_windows;
    const std::vector<int64_t> caller_in_st = in_st;
    const size_t first_spatial = fmt == DataFormat::NXC ? 1 : 2;
    const bool copies_input = (p.border_copy && !edge_windows) || p.channels_in_rows || strided_input;
    // The kernels store vectors along the output's innermost axis (channels, or the rows of the
    // interleaved kernels): an output whose innermost axis is not dense (a twin's view of the
    // caller's other layout) is computed densely into a buffer the plan keeps, then copied
    // (validation is complete, so nothing partial is written). Row slabs compute it slab by slab
    // into buffers of their own instead. An output stage takes the copy's place.
    std::optional<BufferPool::Lease> dense_output;
    uint8_t *out_data = (uint8_t *)output.data;
    std::vector<int64_t> caller_out_st = out_st;
    const bool needs_dense_output = out_st.back() != 1 || stage;
    // Slices (Slicing): each copies its own part of the input, runs its kernels, and copies its
    // part of a dense output back.
    // (With a stage, edge windows are off, and the slicing above is the same call's.)
    const Slicing slices = staged ? *staged : slicing(p, copies_input, needs_dense_output, filter_bytes, elem);
    // Part `shape` of the output at image n0 and row y0 of the outermost axis, held in `src` with
    // strides `src_st`, to the caller's output.
    const auto deliver = [&](const uint8_t *src, const std::vector<int64_t> &src_st, const std::vector<int64_t> &shape,
                             int64_t n0, int64_t y0) {
        std::vector<int64_t> origin(shape.size(), 0);
        origin[0] = n0;
        origin[first_spatial] = y0;
        if (stage) return stage->write(src, src_st, shape, origin);
        copy_tensor(src, src_st,
                    (uint8_t *)output.data + (n0 * caller_out_st[0] + y0 * caller_out_st[first_spatial]) * (int64_t)elem,
                    caller_out_st, shape, elem);
    };
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
    std::optional<BorderedInput> bordered_copy;
    if (copies_input) {
        // Without margins (a plain dense copy) when the layer reads no bordered input.
        const std::vector<int64_t> none(rank, 0);
        // Group-major copies: blocks of one group's channels, or of a group block's.
        const int64_t group_channels = p.group_block ? geo.c_in * p.group_block : p.group_major_input ? geo.c_in : 0;
        bordered_copy.emplace(bordered_buffer(p.bordered_pool, p.input_shape, bordered ? p.border_lo : none,
                                                      bordered ? p.border_hi : none, first_spatial, elem,
                                                      p.channels_in_rows, group_channels, p.group_block));
        if (slices.tasks == 0 || slices.slab_rows > 0) {
            copy_bordered(*bordered_copy, (const uint8_t *)in_data, in_st, p.input_shape, first_spatial, elem);
        }
        in_data = bordered_copy->buffer.data();
        in_st = bordered_copy->strides;
    }
    const std::vector<int64_t> in_nc = to_ncx(in_st, fmt), out_nc = to_ncx(out_st, fmt);
    // Elements from one group's input to the next (group-major copies: a block of positions).
    const int64_t in_group_stride =
        bordered_copy && bordered_copy->group_channels > 0 ? bordered_copy->group_stride : geo.c_in * in_nc[1];

    const int dims = rank + 3;
    halide_dimension_t layer_in_dims[6], layer_w_dims[6], layer_out_dims[6];
    auto dd = [&](int logical) { return data_dim(fmt, rank, logical); };
    auto fd = [&](int logical) { return filter_dim(p.channel_major, rank, logical); };
    set_channel_dims(geo, p.channel_major, in_nc, out_nc, {packed.co, packed.ci, packed.g}, layer_in_dims,
                     layer_w_dims, layer_out_dims);
    layer_in_dims[dd(rank + 1)].stride = (int32_t)in_group_stride;
    // The group-block kernels read blocks of group_block groups (generators/group_block_layout.h):
    // [c_in * group_block channels, groups / group_block blocks] (NXC slices hold every group).
    if (p.group_block) {
        set_dim(layer_in_dims[dd(rank)], 0, geo.c_in * p.group_block, 1);
        layer_in_dims[dd(rank + 1)].extent = (int32_t)(geo.groups / p.group_block);
    }
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
        KernelEpilogueArgs e(fused, p.dtype, layer_out_dims[dd(rank)], layer_out_dims[dd(rank + 1)], 0, 0);
        const int rc = p.kernel->as<GroupConvKernelFn>()(strides[0], strides[1], strides[2], dilations[0], dilations[1],
                                                         dilations[2], &b.in, &b.w, &e.bias, e.alpha, e.hi, &b.out);
        if (rc != 0) fail_kernel(p.kernel, rc);
    } else {
        // The interleaved kernel serves the innermost axis's groups of s outputs (every phase at
        // once) when the output's rows are dense (channels last: always, the channels being
        // dense); the last Y mod s outputs run on the phase kernel.
        const int in = rank - 1;
        const int64_t x_step = out_nc[2 + in];  // output elements per position of the innermost axis
        const bool interleave = p.interleaved_kernel && (fmt == DataFormat::NXC || x_step == 1);
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
            int64_t channel_stride;  // NXC: 1; NCX: the slab's rows times a row's elements
        };
        auto run_phases = [&](int64_t n0, int64_t nn, int64_t g0, int64_t gn, const RowSlab *slab = nullptr) {
            halide_dimension_t slice_in_dims[6], slice_w_dims[6], slice_out_dims[6];
            std::copy(layer_in_dims, layer_in_dims + dims, slice_in_dims);
            std::copy(layer_w_dims, layer_w_dims + dims, slice_w_dims);
            std::copy(layer_out_dims, layer_out_dims + dims, slice_out_dims);
            slice_in_dims[dd(rank + 1)].extent = slice_out_dims[dd(rank + 1)].extent =
                slice_w_dims[fd(rank + 2)].extent = (int32_t)gn;
            if (p.group_block) slice_in_dims[dd(rank + 1)].extent = (int32_t)(gn / p.group_block);
            slice_in_dims[dd(rank + 2)].extent = slice_out_dims[dd(rank + 2)].extent = (int32_t)nn;
            const uint8_t *in_base =
                (const uint8_t *)in_data + (n0 * in_nc[0] + g0 * in_group_stride) * (int64_t)elem;
            const int64_t out_c_stride = slab ? slab->channel_stride : out_nc[1];
            const int64_t out_shift = (slab ? 0 : n0 * out_nc[0]) + g0 * geo.c_out * out_c_stride;
            uint8_t *const out_root = slab ? slab->data : out_data;
            slice_out_dims[dd(rank)].stride = (int32_t)out_c_stride;
            slice_out_dims[dd(rank + 1)].stride = (int32_t)(geo.c_out * out_c_stride);
            const int64_t w_shift = g0 * packed.g, iw_shift = g0 * iw.g;
            const CallEpilogue epi{fused, g0};
            // Outputs no tap reaches (the slice's channel axes at dims dd(rank), dd(rank + 1)).
            const auto fill_tapless = [&](uint8_t *base, const halide_dimension_t *fill_dims, int64_t copies = 1,
                                          int64_t step = 0) {
                fill_tapless_view(fused, p.dtype, base, fill_dims, dims, dd(rank), dd(rank + 1), 0, g0, copies, step);
            };
            if (p.zero_first) {
                // This call's whole output (images x groups x channels x rows), densely.
                halide_dimension_t all[6];
                std::copy(slice_out_dims, slice_out_dims + dims, all);
                for (int i = 0; i < rank; i++) {
                    const int64_t rows = slab && i == 0 ? slab->y1 - slab->y0 : p.out_spatial[i];
                    set_dim(all[dd(rank - 1 - i)], 0, rows, out_nc[2 + i]);
                }
                fill_tapless(out_root + out_shift * (int64_t)elem, all);
            }
            std::vector<size_t> counts(rank);
            for (int i = 0; i < rank; i++) counts[i] = entries(i);
            // One phase (or, under interleaving, one entry of the innermost axis) of the slice: its
            // dims are its own, so that phase tasks (Plan::Impl::phase_tasks) run them at once.
            const auto run_phase = [&](const std::vector<size_t> &ph) {
                halide_dimension_t in_dims[6], w_dims[6], out_dims[6];
                std::copy(slice_in_dims, slice_in_dims + dims, in_dims);
                std::copy(slice_w_dims, slice_w_dims + dims, w_dims);
                std::copy(slice_out_dims, slice_out_dims + dims, out_dims);
                int64_t out_off = 0, w_off = 0, iw_off = 0;
                int32_t steps[3] = {1, 1, 1};
                bool has_taps = true;
                // Every output q of the phase reads input q + in_offset - j*in_step for j < T: when
                // all of those lie in [0, X) the interior kernel (no boundary tests) serves the phase.
                bool interior = true, in_slab = true;
                const bool interleaved_call = interleave && ph[in] == 0;
                // 2D tail outputs run as a column, transposed (call_phase_kernel_transposed): 1.3-2.4x
                // on depthwise layers with tails (kernel 3 stride 2 pad 1; padded kernel = stride),
                // 1.4-1.7x on grouped ones of 4-8 channels per group (2 threads, Zen 4).
                const bool transposed_tail = interleave && ph[in] > 0 && rank == 2 && fmt == DataFormat::NCX &&
                                             !p.channel_major && slab == nullptr;
                AxisPhase axes[3];
                for (int i = 0; i < rank; i++) {
                    AxisPhase a = interleave && i == in ? p.phases[in][ph[in] == 0 ? 0 : ph[in] - 1] : p.phases[i][ph[i]];
                    if (interleave && i == in && ph[in] > 0) {
                        // A tail output s*groups + e - 1: phase e - 1's output q = groups. Run
                        // along the row (1D, 3D), with the phase's outputs before it up to the
                        // position kernel's narrowest vector (recomputed after the interleaved
                        // call, which they overwrite within rounding, the same every run): one
                        // output alone ran the kernel's scalar branch (32 groups of 8 -> 8
                        // channels, 28x28, kernel 3 stride 2 pad 1: 0.32 -> 0.23 ms). The group
                        // kernels (channels last) vectorize groups instead, and the transposed
                        // column vectorizes its rows: one wide.
                        const int64_t span = p.channel_major || transposed_tail ? 1 : p.tiles.short_positions;
                        const int64_t back = std::min<int64_t>(span - 1, groups);
                        a.out_first += s_in * (groups - back);
                        a.in_offset += groups - back;
                        a.out_count = 1 + back;
                    }
                    if (slab && i == 0) {
                        // The phase's outputs q in [q_lo, q_hi) lie in the slab's rows; its row
                        // first + q_lo * s is the slab's row first + q_lo * s - y0.
                        const int64_t s0 = p.info.strides[0];
                        const int64_t q_lo = std::max<int64_t>(0, -floor_div(a.out_first - slab->y0, s0));
                        const int64_t q_hi = std::min(a.out_count, -floor_div(a.out_first - slab->y1, s0));
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
                    axes[i] = a;
                }
                const KernelEntry *kernel = interior || bordered ? p.interior_kernel : p.kernel;
                uint8_t *out_base = out_root + (out_off + out_shift) * (int64_t)elem;
                if (interleaved_call) {
                    set_dim(out_dims[dd(0)], 0, groups, s_in * x_step);
                }
                if (!in_slab) {
                    // No output row of this phase in the slab.
                } else if (!has_taps) {
                    if (p.zero_first) return;  // zeroed above
                    // Under interleaving, every phase of every group.
                    fill_tapless(out_base, out_dims, interleaved_call ? s_in : 1, x_step);
                } else if (interleaved_call) {
                    // [ph, q, outer axes.., co, g, n] and [j, ph, outer taps.., co, ci, g], whatever the
                    // layout (the group-vectorized kernel's groups are dense instead of its phases).
                    halide_dimension_t io_dims[7], iw_dims[7];
                    set_dim(io_dims[0], 0, s_in, x_step);
                    set_dim(iw_dims[0], 0, iw.taps, iw.j);
                    set_dim(iw_dims[1], 0, s_in, iw.ph);
                    for (int h = 0; h < dims; h++) io_dims[h + 1] = out_dims[dd(h)];
                    for (int h = 1; h < rank; h++) {
                        const int i = rank - 1 - h;
                        const AxisPhase &a = p.phases[i][ph[i]];
                        set_dim(iw_dims[h + 1], 0, a.tap_count, a.tap_step * iw.k[i]);
                    }
                    set_dim(iw_dims[rank + 1], 0, geo.c_out, 1);
                    set_dim(iw_dims[rank + 2], 0, geo.c_in, geo.c_out);
                    set_dim(iw_dims[rank + 3], 0, gn, iw.g);
                    // The blocked kernel takes the rows' first whole multiple of p.tiles.blocked_groups groups,
                    // the plain one the rest (interleaved_tail_kernel); depthwise rows run their first
                    // multiple of p.tiles.interleaved_groups groups, then the rest (interleaved_exact_rows). The
                    // input's origin moves by the groups before.
                    // Edge windows: the groups before and after the middle read their windows' copies.
                    struct RowPart {
                        int64_t q0, count;
                        const KernelEntry *kernel;
                        bool window = false;
                    };
                    RowPart parts[3] = {{0, groups, p.interleaved_kernel}, {0, 0, nullptr}, {0, 0, nullptr}};
                    if (edge_windows) {
                        const int64_t right = p.edges.left + p.edges.middle;
                        parts[0] = {0, p.edges.left, p.edges.kernel, true};
                        parts[1] = {p.edges.left, p.edges.middle, p.interleaved_kernel};
                        parts[2] = {right, groups - right, p.edges.kernel, true};
                    } else if (p.interleaved_tail_kernel) {
                        const int64_t head = groups / p.tiles.blocked_groups * p.tiles.blocked_groups;
                        parts[0].count = head;
                        parts[1] = {head, groups - head, p.interleaved_tail_kernel};
                    } else if (p.interleaved_exact_rows) {
                        parts[0].count = groups / p.tiles.interleaved_groups * p.tiles.interleaved_groups;
                        parts[1] = {parts[0].count, groups - parts[0].count, p.interleaved_kernel};
                    }
                    // pads_begin modulo the stride, the rest of it in the input's origin (the
                    // kernel specializes the common residues: cpu_interleaved_schedule.h).
                    const int64_t pad = p.info.pads_begin[in], pad_rest = floor_div(pad, s_in);
                    for (const RowPart &part : parts) {
                        if (part.count == 0) continue;
                        const int64_t q0 = part.q0;
                        const KernelEntry *k = part.kernel;
                        io_dims[1].extent = (int32_t)part.count;
                        halide_dimension_t id[6];
                        std::copy(in_dims, in_dims + dims, id);
                        id[dd(0)].min -= (int32_t)(q0 + pad_rest);
                        const uint8_t *part_in = in_base;
                        std::optional<BufferPool::Lease> window;
                        if (part.window) {
                            // Input [q0 + reach.lo, q0 + count + reach.hi) of every row (n, c), zero
                            // outside the input; coordinate v of the kernel is input v + q0 + pad_rest.
                            const int64_t first = q0 + p.edges.reach.lo;
                            const int64_t width = part.count + p.edges.reach.hi - p.edges.reach.lo;
                            window.emplace(p.bordered_pool.take((size_t)(nn * gn * geo.c_in * width) * elem));
                            copy_row_window(window->data(), in_base, nn, in_nc[0], gn * geo.c_in, in_nc[1],
                                                    geo.in_spatial[0], first, width, elem);
                            part_in = window->data();
                            set_dim(id[0], (int32_t)(first - q0 - pad_rest), width, 1);
                            set_dim(id[1], 0, geo.c_in, width);
                            set_dim(id[2], 0, gn, geo.c_in * width);
                            set_dim(id[3], 0, nn, gn * geo.c_in * width);
                        }
                        KernelBuffers b(p.dtype, dims + 1, part_in, iw.data.data() + (iw_off + iw_shift) * (int64_t)elem,
                                        out_base + q0 * s_in * x_step * (int64_t)elem, id, iw_dims, io_dims);
                        b.in.dimensions = dims;
                        KernelEpilogueArgs e(fused, p.dtype, io_dims[rank + 1], io_dims[rank + 2], 0, g0);  // (logical order)
                        const int rc = k->as<InterleavedKernelFn>()((int32_t)(pad - pad_rest * s_in), steps[1], steps[2],
                                                                    &b.in, &b.w, &e.bias, e.alpha, e.hi, &b.out);
                        if (rc != 0) fail_kernel(k, rc);
                    }
                } else if (transposed_tail) {
                    call_phase_kernel_transposed(p, kernel, packed, steps, in_base, w_off + w_shift, out_base, out_c_stride,
                                                 in_dims, w_dims, out_dims, epi);
                } else {
                    // Tap windows of the outer axes (windows_axis): an odometer over every windowed
                    // axis's windows, the middle combination (every axis's full-tap window) first.
                    std::vector<std::vector<TapWindow>> windows(rank - 1);
                    std::vector<size_t> counts_w(rank - 1, 1);
                    bool windowed = false;
                    for (int i = 0; i + 1 < rank && slab == nullptr; i++) {
                        if (!windows_axis(p, i, axes[i])) continue;
                        windows[i] = tap_windows(axes[i], geo.in_spatial[i]);
                        counts_w[i] = windows[i].size();
                        windowed = windowed || windows[i].size() > 1;
                    }
                    // (Flat rows, channels-first on the position kernels, have no row splits.)
                    const auto call = [&](int64_t w_at, uint8_t *ob, const halide_dimension_t *id,
                                          const halide_dimension_t *wd, const halide_dimension_t *od) {
                        if (p.flat_rows) {
                            call_flat_rows(p, kernel, packed, steps, in_base, w_at, ob, id, wd, od, epi);
                        } else {
                            call_phase_kernel_rows(p, row_tile, dd(0), kernel, packed, steps, rank, in_base, w_at, ob,
                                                   out_c_stride, id, wd, od, epi);
                        }
                    };
                    if (!windowed && p.in_place_edges && kernel == p.kernel && rank == 1 && slab == nullptr) {
                        call_phase_kernel_edges(p, row_tile, dd(0), axes[0], geo.in_spatial[0], packed, steps, in_base,
                                                w_off + w_shift, out_base, out_c_stride, in_dims, w_dims, out_dims, epi);
                        return;
                    }
                    if (!windowed) {
                        call(w_off + w_shift, out_base, in_dims, w_dims, out_dims);
                        return;
                    }
                    std::vector<std::vector<size_t>> edges;
                    auto run_window = [&](const std::vector<size_t> &wi) {
                        halide_dimension_t id[6], wd[6], od[6];
                        std::copy(in_dims, in_dims + dims, id);
                        std::copy(w_dims, w_dims + dims, wd);
                        std::copy(out_dims, out_dims + dims, od);
                        int64_t o_shift = 0, k_shift = 0;
                        bool taps = true;
                        for (int i = 0; i + 1 < rank; i++) {
                            if (windows[i].empty()) continue;
                            const TapWindow &t = windows[i][wi[i]];
                            const int h = rank - 1 - i;
                            // Output q of the window is the phase's q + q_first, tap j its j + j_first:
                            // it reads input q + (q_first + in_offset) - (j + j_first) * in_step.
                            o_shift += t.q_first * od[dd(h)].stride;
                            k_shift += t.j_first * wd[fd(h)].stride;
                            od[dd(h)].extent = (int32_t)t.q_count;
                            wd[fd(h)].extent = (int32_t)t.j_count;
                            id[dd(h)].min -= (int32_t)(t.q_first - t.j_first * axes[i].in_step);
                            taps = taps && t.j_count > 0;
                        }
                        uint8_t *ob = out_base + o_shift * (int64_t)elem;
                        if (taps) {
                            call(w_off + w_shift + k_shift, ob, id, wd, od);
                        } else if (!p.zero_first) {
                            fill_tapless(ob, od);
                        }
                    };
                    std::vector<size_t> middle(rank - 1, 0);
                    for (int i = 0; i + 1 < rank; i++) {
                        for (size_t w = 0; w < windows[i].size(); w++)
                            if (windows[i][w].j_count == axes[i].tap_count) middle[i] = w;
                    }
                    for_each_combination(counts_w, [&](const std::vector<size_t> &wi) {
                        if (wi != middle) edges.push_back(wi);
                    });
                    run_window(middle);
                    // The edge windows dealt to one task per thread by their products, largest first
                    // to the least loaded (in contiguous halves, a 3D layer's thread waited for the
                    // other's plane-sized windows: 0.93x).
                    const int64_t bins = std::min<int64_t>((int64_t)edges.size(), pool_threads());
                    std::vector<std::pair<int64_t, size_t>> by_work;
                    for (size_t e = 0; e < edges.size(); e++) {
                        int64_t work = 1;
                        for (int i = 0; i + 1 < rank; i++)
                            if (!windows[i].empty()) work *= windows[i][edges[e][i]].q_count * windows[i][edges[e][i]].j_count;
                        by_work.push_back({work, e});
                    }
                    std::sort(by_work.rbegin(), by_work.rend());
                    std::vector<std::vector<size_t>> bin(bins);
                    std::vector<int64_t> load(bins, 0);
                    for (const auto &w : by_work) {
                        const size_t b = std::min_element(load.begin(), load.end()) - load.begin();
                        bin[b].push_back(w.second);
                        load[b] += w.first;
                    }
                    run_slices(bins, bins, [&](int64_t begin, int64_t count) {
                        for (int64_t b = begin; b < begin + count; b++)
                            for (size_t e : bin[b]) run_window(edges[e]);
                    });
                }
            };
            if (!p.phase_tasks) {
                for_each_combination(counts, run_phase);
                return;
            }
            // Phase tasks, largest first: each thread runs its range of them, then helps with the
            // other's (cpu_thread_pool.cpp).
            const std::vector<PhaseTask> tasks = phase_tasks(p, counts, interleave, x_step);
            run_slices((int64_t)tasks.size(), (int64_t)tasks.size(), [&](int64_t begin, int64_t count) {
                for (int64_t t = begin; t < begin + count; t++)
                    for (const std::vector<size_t> &ph : tasks[t].phases) run_phase(ph);
            });
        };
        if (slices.tasks == 0) {
            run_phases(0, geo.n, 0, geo.groups);
        } else if (slices.slab_rows > 0) {
            // Whole input already copied; (image, slab) units, each slab computed into a buffer of
            // the task's own, as those rows of the dense output (NCX: of every channel), and
            // transposed out at once.
            const int64_t rows = p.out_spatial[0], slabs = (rows + slices.slab_rows - 1) / slices.slab_rows;
            const size_t row_axis = first_spatial;
            const int64_t row_elems = out_st[row_axis];  // NXC: with the channels
            const int64_t channels = fmt == DataFormat::NXC ? 1 : geo.groups * geo.c_out;
            run_slices(slices.tasks, slices.units, [&](int64_t begin, int64_t count) {
                BufferPool::Lease buf = p.slab_pool.take((size_t)(slices.slab_rows * row_elems * channels) * elem);
                for (int64_t u = begin; u < begin + count; u++) {
                    const int64_t n = u / slabs, y0 = u % slabs * slices.slab_rows;
                    const int64_t slab_rows = std::min(rows, y0 + slices.slab_rows) - y0;
                    const RowSlab slab{y0, y0 + slab_rows, buf.data(),
                                       fmt == DataFormat::NXC ? out_nc[1] : slab_rows * row_elems};
                    run_phases(n, 1, 0, geo.groups, &slab);
                    std::vector<int64_t> part = p.info.output_shape, slab_st = out_st;
                    part[0] = 1;
                    part[row_axis] = slab_rows;
                    if (fmt == DataFormat::NCX) slab_st[1] = slab.channel_stride;
                    deliver(buf.data(), slab_st, part, n, y0);
                }
            });
        } else if (slices.images) {
            run_slices(slices.tasks, slices.units, [&](int64_t n0, int64_t nn) {
                // Images [n0, n0 + nn) in, computed, and out (NCX: their channel rows in).
                if (bordered_copy) {
                    const int64_t rows_per_image = fmt == DataFormat::NXC ? 1 : geo.groups * geo.c_in;
                    copy_bordered(*bordered_copy, (const uint8_t *)input.data, caller_in_st, p.input_shape,
                                  first_spatial, elem, n0 * rows_per_image, nn * rows_per_image);
                }
                run_phases(n0, nn, 0, geo.groups);
                if (dense_output) {
                    std::vector<int64_t> part = p.info.output_shape;
                    part[0] = nn;
                    deliver(dense_output->data() + n0 * out_st[0] * (int64_t)elem, out_st, part, n0, 0);
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
                        copy_bordered(*bordered_copy, (const uint8_t *)input.data, caller_in_st, p.input_shape,
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
        copy_tensor(dense_output->data(), out_st, (uint8_t *)output.data, caller_out_st, p.info.output_shape, elem);
    }
}


}  // namespace detail
}  // namespace deconv
