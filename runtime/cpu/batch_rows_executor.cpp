// The batch-rows executor (impl_batch_rows.cpp, choose_batch_rows): channels-last layers of narrow
// phase rows and a wide batch, run with the images as the innermost row.
#include "cpu/bordered_input.h"
#include "cpu/cpu_executor.h"
#include "kernels/kernel_call.h"
#include "cpu/fused_epilogue.h"
#include "cpu/phase_kernel_calls.h"
#include "kernels/cpu_thread_pool.h"
#include "kernels/tensor_copy.h"
#include "cpu/slicing.h"

#include <algorithm>

namespace deconv {
namespace detail {

namespace {

// A run of batch rows makes its calls the tasks of one parallel loop, each call's kernel loops
// serial, where its calls number kRowsTasksPerThread per thread or more, or where as parallel
// kernel calls they would keep less than kRowsMinSpread of the threads busy. Otherwise each call
// is one parallel kernel call, in turn: the layers of one window per phase and many channel
// tiles ran 0.93-0.98x as tasks (kernel 2, stride 2, 4x4 and 5x5 inputs, batch 16 and 64).
constexpr int64_t kRowsTasksPerThread = 4;
constexpr double kRowsMinSpread = 0.9;

// The share of the threads that one parallel kernel call keeps busy: of its parallel loops
// (schedules/cpu_channels_last_schedule.h: groups, channel tiles, then the outermost axis's
// rows), those with fewer tasks than threads run their tasks in turn, and the first with as
// many or more deals them out (kernels/cpu_thread_pool.cpp).
double call_spread(int64_t groups, int64_t channel_tiles, int64_t rows, int64_t threads) {
    for (int64_t f : {groups, channel_tiles, rows})
        if (f >= threads) return (double)f / (double)(threads * ((f + threads - 1) / threads));
    return 1.0 / (double)threads;
}

}  // namespace

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
    // The calls: (phase, window) of every axis, as tasks or in turn (kRowsTasksPerThread). As
    // parallel kernel calls, half of dcgan_l2's 64 calls (channel blocks of one tile, windows of
    // one to three rows) ran on one thread: 2 threads ran it 1.42x faster than one, as tasks 1.9x.
    std::vector<std::vector<std::pair<size_t, size_t>>> entries(rank);
    for (int i = 0; i < rank; i++)
        for (size_t f = 0; f < p.phases[i].size(); f++)
            for (size_t w = 0; w < p.tap_windows[i][f].size(); w++) entries[i].push_back({f, w});
    std::vector<size_t> counts(rank);
    for (int i = 0; i < rank; i++) counts[i] = entries[i].size();
    struct Call {
        std::vector<size_t> at;
        int64_t image0 = 0, images = 0, work = 0;
    };
    std::vector<Call> calls;
    for_each_combination(counts, [&](const std::vector<size_t> &at) {
        int64_t work = 1;
        for (int i = 0; i < rank; i++) {
            const TapWindow &win = p.tap_windows[i][entries[i][at[i]].first][entries[i][at[i]].second];
            work *= win.q_count * std::max<int64_t>(win.j_count, 1);
        }
        calls.push_back({at, 0, geo.n, work});
    });
    // Tasks or parallel calls; as tasks, runs of images (whole row tiles) where the calls are few.
    const int64_t threads = pool_threads();
    const int64_t bc = packed.block ? packed.block_channels : geo.c_out;
    const int64_t tile_c = std::max<int64_t>(p.tiles.four_position_channels, 1);
    const int64_t channel_tiles = (bc + tile_c - 1) / tile_c;
    double spread = 0, work = 0;
    for (const Call &c : calls) {
        const TapWindow &rows = p.tap_windows[0][entries[0][c.at[0]].first][entries[0][c.at[0]].second];
        spread += (double)c.work * call_spread(geo.groups, channel_tiles, rows.q_count, threads);
        work += (double)c.work;
    }
    const bool as_tasks = threads > 1 && !p.serial && ((int64_t)calls.size() >= kRowsTasksPerThread * threads ||
                                          spread < kRowsMinSpread * work);
    const int64_t tile = std::max<int64_t>(row_tile, 1);
    const int64_t runs = !as_tasks ? 1
                                   : std::clamp<int64_t>((kRowsTasksPerThread * threads + (int64_t)calls.size() - 1) /
                                                             (int64_t)calls.size(),
                                                         1, std::max<int64_t>(geo.n / (2 * tile), 1));
    if (runs > 1) {
        std::vector<Call> split;
        const int64_t tiles_all = (geo.n + tile - 1) / tile;
        for (const Call &c : calls)
            for (int64_t r = 0; r < runs; r++) {
                const int64_t i0 = std::min(geo.n, tiles_all * r / runs * tile);
                const int64_t i1 = std::min(geo.n, tiles_all * (r + 1) / runs * tile);
                if (i1 > i0) split.push_back({c.at, i0, i1 - i0, c.work});
            }
        calls = std::move(split);
    }
    for (Call &c : calls) c.work *= c.images;
    std::stable_sort(calls.begin(), calls.end(), [](const Call &a, const Call &b) { return a.work > b.work; });

    auto run_call = [&](const Call &c) {
        halide_dimension_t id[7], wd[7], od[7];
        std::copy(in_dims, in_dims + dims, id);
        std::copy(w_dims, w_dims + dims, wd);
        std::copy(out_dims, out_dims + dims, od);
        id[2].extent = (int32_t)c.images;
        od[2].extent = (int32_t)c.images;
        int64_t out_off = c.image0 * c_out_all, w_off = 0;
        int32_t steps[3] = {1, 1, 1};
        bool has_taps = true;
        for (int i = 0; i < rank; i++) {
            const AxisPhase &a = p.phases[i][entries[i][c.at[i]].first];
            const TapWindow &win = p.tap_windows[i][entries[i][c.at[i]].first][entries[i][c.at[i]].second];
            const int h = rank - i;  // the kernel's spatial axis (0: the images)
            const int64_t s = p.info.strides[i];
            out_off += (a.out_first + s * win.q_first) * out_rows_st[1 + i];
            set_dim(od[2 + h], 0, win.q_count, s * out_rows_st[1 + i]);
            w_off += (a.tap_first + win.j_first * a.tap_step) * packed.k[i];
            set_dim(wd[3 + h], 0, win.j_count, a.tap_step * packed.k[i]);
            // Output q of the window reads input q + origin - j*in_step at its tap j.
            const int64_t origin = win.q_first + a.in_offset - win.j_first * a.in_step;
            set_dim(id[2 + h], -origin, geo.in_spatial[i], in_rows_st[1 + i]);
            steps[h] = (int32_t)a.in_step;
            has_taps = has_taps && win.j_count > 0;
        }
        uint8_t *out_base = out_rows.data() + out_off * (int64_t)elem;
        if (has_taps) {
            const uint8_t *in_base = in_rows.data() + c.image0 * c_in_all * (int64_t)elem;
            call_phase_kernel_rows(p, row_tile, 2, p.batch_rows_kernel, packed, steps, kernel_rank, in_base, w_off,
                                   out_base, 1, id, wd, od, CallEpilogue{fused, 0});
        } else {
            fill_tapless_view(fused, p.dtype, out_base, od, dims, 0, 1, 0, 0);
        }
    };
    if (!as_tasks) {
        for (const Call &c : calls) run_call(c);
    } else {
        // One task per call, largest first: each thread runs its range, then helps with the
        // others' (cpu_thread_pool.cpp).
        run_slices((int64_t)calls.size(), (int64_t)calls.size(), [&](int64_t begin, int64_t count) {
            for (int64_t t = begin; t < begin + count; t++) run_call(calls[(size_t)t]);
        });
    }
    copy_tensor(out_rows.data(), out_rows_st, (uint8_t *)output.data, out_st, p.info.output_shape, elem);
}

}  // namespace detail
}  // namespace deconv
