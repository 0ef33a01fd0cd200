// The batch-rows executor (impl_batch_rows.cpp, choose_batch_rows): channels-last layers of narrow
// phase rows and a wide batch, run with the images as the innermost row.
#include "cpu/bordered_input.h"
#include "cpu/cpu_executor.h"
#include "kernels/kernel_call.h"
#include "cpu/fused_epilogue.h"
#include "cpu/phase_kernel_calls.h"
#include "kernels/tensor_copy.h"

namespace deconv {
namespace detail {

// Runs a batch-rows plan (choose_batch_rows): the input copied to [X_1 .. X_D, N, C] (outermost
// first), one call of the next rank's interior kernel per phase and tap window of every axis
// (the images its innermost axis, with one tap), the result copied back from the same layout.
// `in_st`, `out_st`: the caller's views, in the plan's [N, X.., C] order.
void run_batch_rows(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                    const TensorView &output, const std::vector<int64_t> &out_st, const FilterPacking &packed) {
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank, kernel_rank = rank + 1, dims = kernel_rank + 3;
    const size_t elem = dtype_size(p.dtype);
    // Every output goes through a kernel's store or fill_tapless_view: it stores the epilogue a
    // plan with one offers (cpu/fused_epilogue.h).
    const KernelEpilogue *const fused = take_fused_epilogue();
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
    BufferPool::Lease in_rows = p.bordered_pool.take((size_t)in_count * elem);
    BufferPool::Lease out_rows = p.output_pool.take((size_t)out_count * elem);
    copy_tensor((const uint8_t *)input.data, in_st, in_rows.data(), in_rows_st, p.input_shape, elem);

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
    if (p.ci_pairs) set_dim(w_dims[1], 0, geo.c_in / 2, 2 * packed.ci);  // pairs: see run_phase_kernels
    set_dim(w_dims[2], 0, geo.groups, packed.g);
    set_dim(w_dims[3], 0, 1, 1);

    const int64_t row_tile = channels_last_row_tile(p);  // rows: the images
    // Odometer over (phase, window) of every axis.
    std::vector<std::vector<std::pair<size_t, size_t>>> entries(rank);
    for (int i = 0; i < rank; i++)
        for (size_t f = 0; f < p.phases[i].size(); f++)
            for (size_t w = 0; w < p.tap_windows[i][f].size(); w++) entries[i].push_back({f, w});
    std::vector<size_t> counts(rank);
    for (int i = 0; i < rank; i++) counts[i] = entries[i].size();
    for_each_combination(counts, [&](const std::vector<size_t> &at) {
        int64_t out_off = 0, w_off = 0;
        int32_t steps[3] = {1, 1, 1};
        bool has_taps = true;
        for (int i = 0; i < rank; i++) {
            const AxisPhase &a = p.phases[i][entries[i][at[i]].first];
            const TapWindow &win = p.tap_windows[i][entries[i][at[i]].first][entries[i][at[i]].second];
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
                                   out_base, 1, in_dims, w_dims, out_dims, CallEpilogue{fused, 0});
        } else {
            fill_tapless_view(fused, p.dtype, out_base, out_dims, dims, 0, 1, 0, 0);
        }
    });
    copy_tensor(out_rows.data(), out_rows_st, (uint8_t *)output.data, out_st, p.info.output_shape, elem);
}

}  // namespace detail
}  // namespace deconv
