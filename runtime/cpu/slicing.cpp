// The slices of a CPU run (slicing.h): each streams the packed filter again, so they run only
// where it fits half of L2.
#include "cpu/slicing.h"

#include "layer/phase_decomposition.h"
#include "plan/thresholds.h"

#include <algorithm>

namespace deconv {
namespace detail {

// Slices of (image, group) pairs, of images or of row slabs each copy their input and write their
// output while in the core's cache, where the packed filter fits half of L2 (dcgan_l5: 5.6-10.9 ms
// whole, 4.5-4.6 sliced). Policy group_slices (DECONV_GROUP_SLICES) and row_slabs pin them.
Slicing slicing(const Plan::Impl &p, bool copies_input, bool dense_output, size_t filter_bytes, size_t elem) {
    const OpGeometry &g = p.geo;
    // Every slice streams the packed filter again: within half of L2, for either kind.
    if (p.policy.group_slices == 0 || g.forward ||
        (int64_t)filter_bytes > threshold(p, Threshold::SliceMaxFilterBytes))
        return {};
    const int64_t threads = pool_threads();
    if (threads < 2) return {};
    // At least so many slices per thread.
    const int64_t fewest = threshold(p, Threshold::SlicesPerThreadMin) * threads;
    const int64_t slice_output_bytes = threshold(p, Threshold::SliceOutputBytes);
    // Layers whose caller's output is the other layout (a layout twin's) run in slices of images
    // or slabs of rows, each transposed out while in cache (images of 1 MiB or more in slabs:
    // batch 4, 32 -> 32, 16^3: 3.3-5.1 -> 2.3-2.5 ms); NXC layers run so only then.
    if (dense_output) {
        int64_t image_bytes = (int64_t)elem * g.groups * g.c_out;
        for (int64_t y : p.out_spatial) image_bytes *= y;
        int64_t per_slice = std::max<int64_t>(1, slice_output_bytes / std::max<int64_t>(image_bytes, 1));
        // Channels-last layers that copy their input: slices of at most the input slices'
        // bytes too (by the output's alone, dcgan_l5_nxc's staged u8 run took 10 of its 64 images
        // a slice, 3.5 ms; with these, 3.0).
        if (g.data_format == DataFormat::NXC && copies_input) {
            int64_t in_image = (int64_t)elem * g.groups * g.c_in;
            for (int64_t x : g.in_spatial) in_image *= x;
            per_slice = std::min(per_slice, std::max<int64_t>(1, threshold(p, Threshold::SliceInputBytes) / in_image));
        }
        const Slicing image_slices =
            g.n >= fewest ? Slicing{std::max(fewest, (g.n + per_slice - 1) / per_slice), g.n, true} : Slicing{};
        if (g.n >= fewest && (image_bytes < threshold(p, Threshold::SlabMinImageBytes) || g.rank < 2))
            return image_slices;
        // Row slabs of the outermost output axis within the slice bytes, one task each, each
        // thread its own range first (two tasks per thread: the first to finish waited 8% of the
        // run). DECONV_ROW_SLABS=N: slabs of N rows, whatever their bytes (0: none).
        const int64_t forced = p.policy.row_slabs;
        const int64_t rows = p.out_spatial[0], row_bytes = image_bytes / std::max<int64_t>(rows, 1);
        if (g.rank < 2 || forced == 0 || (forced < 0 && row_bytes > threshold(p, Threshold::SlabMaxRowBytes)))
            return image_slices;
        const int64_t slab_rows =
            forced > 0 ? forced : std::max<int64_t>(1, slice_output_bytes / std::max<int64_t>(row_bytes, 1));
        const int64_t slabs = (rows + slab_rows - 1) / slab_rows;
        if (g.n * slabs < fewest) return {};
        return {g.n * slabs, g.n * slabs, false, slab_rows};
    }
    // Channels-last layers with a batch that read an input copy run in slices of images, each
    // phase reading them from L2 rather than the whole input from memory (dcgan_l5_nxc on the
    // channel dots: 5.5 -> 3.6 ms).
    int64_t in_count = 1, out_count = 1;
    for (int64_t v : p.input_shape) in_count *= v;
    for (int64_t v : p.info.output_shape) out_count *= v;
    if (g.data_format == DataFormat::NXC && copies_input && g.n >= fewest) {
        const int64_t image_bytes = (int64_t)elem * in_count / g.n;
        const int64_t per_slice =
            std::max<int64_t>(1, threshold(p, Threshold::SliceInputBytes) / std::max<int64_t>(image_bytes, 1));
        return {std::max(fewest, (g.n + per_slice - 1) / per_slice), g.n, true};
    }
    // Without an input copy, and whatever their growth, only 2D-3D depthwise layers of one-tap
    // phases, whose per-row calls' parallel loops cost as much as their products (128 groups of
    // 28x28, kernel = stride = 2: 0.038 -> 0.028 ms); other layers ran up to 2x slower sliced.
    const bool one_tap_depthwise = g.rank >= 2 && g.c_in == 1 && g.c_out == 1 && uniform_taps(p.phases, 1);
    if (g.data_format == DataFormat::NXC || !(copies_input || one_tap_depthwise)) return {};
    if (out_count > threshold(p, Threshold::SliceMaxGrowth) * in_count && !one_tap_depthwise) return {};
    const int64_t units = g.n * g.groups;
    if (units < fewest) return {};
    const int64_t per_thread =
        p.policy.group_slices > 0 ? p.policy.group_slices : threshold(p, Threshold::SliceTasksPerThread);
    return {std::min(units, per_thread * threads), units, false};
}

}  // namespace detail
}  // namespace deconv
