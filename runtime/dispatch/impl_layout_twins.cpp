// The layout twins (dispatch/implementations.h): a layer run on the kernels of the other data
// layout over transposed copies of its input and output, and the rules that choose them. Their
// thresholds are rows of plan/thresholds.cpp, their measurements in docs/performance-log.md.
#include "cpu/bordered_input.h"
#include "cpu/cpu_executor.h"
#include "cpu/phase_tasks.h"
#include "cpu/winograd_executor.h"
#include "dispatch/implementations.h"
#include "facts/interleaved_depthwise_facts.h"
#include "dispatch/channels_last_families.h"
#include "dispatch/layer_classes.h"
#include "dispatch/strategy.h"
#include "kernels/cpu_thread_pool.h"
#include "kernels/cpu_tiles.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_call.h"
#include "layer/checked_math.h"
#include "plan/thresholds.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <set>

namespace deconv {
namespace detail {

// Bytes of the layer's tensors `shapes`, together.
int64_t tensors_bytes(const Plan::Impl &p, std::initializer_list<const std::vector<int64_t> *> shapes) {
    int64_t elements = 0;
    for (const std::vector<int64_t> *shape : shapes) {
        int64_t n = 1;
        for (int64_t v : *shape) n = checked_mul(n, v, "tensor elements");
        elements = checked_add(elements, n, "tensor elements");
    }
    return checked_mul(elements, (int64_t)dtype_size(p.dtype), "tensor bytes");
}

// The copies of a layout change (the input, and the output before it is copied back) stay within
// max_layout_copy_bytes; larger layers run on their own layout's kernels, on the caller's buffers.
bool layout_copies_fit(const Plan::Impl &p) {
    return tensors_bytes(p, {&p.input_shape, &p.info.output_shape}) <= threshold(p, Threshold::MaxLayoutCopyBytes);
}

// Whether this build has the bounded and interior kernels of the layer in `format`: the
// channel-vectorized ones under NXC, the position-vectorized ones under NCX.
bool has_layout_kernels(const Plan::Impl &p, DataFormat format) {
    KernelKey bounded = cpu_kernel_key(p, p.geo.rank, format == DataFormat::NXC, false);
    bounded.layout = format;
    bounded.channels = format == DataFormat::NXC;
    KernelKey interior = bounded;
    interior.bounded = false;
    return find_kernel(bounded, p.variant) && find_kernel(interior, p.variant);
}

// The fraction of the outputs that phases with taps write (kernels below the stride leave the
// rest zero), leaving out the innermost axis when `all_inner` (an interleaved kernel writes every
// phase of it).
double tapped_fraction(const Plan::Impl &p, bool all_inner) {
    double written = 1.0;
    for (int i = 0; i < p.geo.rank; i++) {
        if (all_inner && i == p.geo.rank - 1) continue;
        int64_t with_taps = 0;
        for (const AxisPhase &a : p.phases[i])
            if (a.tap_count > 0) with_taps += a.out_count;
        written *= (double)with_taps / (double)std::max<int64_t>(1, p.out_spatial[i]);
    }
    return written;
}

// The share of the outputs, at most, that tapped phases write for a layer to stay off the twin
// (few_tapped_outputs_num / few_tapped_outputs_den).
static double few_tapped_outputs(const Plan::Impl &p) {
    return (double)threshold(p, Threshold::FewTappedOutputsNum) / (double)threshold(p, Threshold::FewTappedOutputsDen);
}

// Depthwise channels-first layers run on the twin's group kernels where the channels-first ones
// have no good tile: 3D (planes strided; 48 groups, 12^3: 94 -> 9.5 ms), and 2D at stride 3 or
// more, or stride 2 with three taps or more, unless few outputs are tapped. x86-64 only.
bool depthwise_prefers_twin(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.c_in != 1 || g.c_out != 1 || g.rank < 2 || !has_channels_last_pair(p, &KernelKey::groups)) return false;
    const int in = g.rank - 1;
    const int64_t s = p.info.strides[in];
    // 3D kernel = stride = 2 on long rows stays: a product per output, no strided reduction (48
    // groups of 16^3, batch 2: 0.42-0.50 ms here, 0.73-0.77 twinned).
    if (g.rank == 3)
        return !(s == 2 && every_phase_one_tap(p) && g.in_spatial[in] >= threshold(p, Threshold::DepthwiseOneTap3DRows));
    if (s == 1 || tapped_fraction(p, false) <= few_tapped_outputs(p)) return false;
    // Strides 4 and 8, and 3 at kernel = stride or on the fast branch, stay on the interleaved
    // kernel's dense vectors (fcn8s_upscore8: 1.46 ms twinned, 0.70 here).
    const bool fast_s3 =
        s == 3 && (every_phase_one_tap(p) ||
                   (floor_mod(p.info.pads_begin[in], s) == tiles::interleaved_depthwise_pad_residue((int)s) &&
                    uniform_taps(p, tiles::kInterleavedDepthwiseTaps)));
    if ((s == 4 || s == 8 || fast_s3) && interleaved_kernel_for(p, false, false)) return false;
    // At stride 2, phases of at most two taps run well here (kernel 3: 0.11 against 0.14 twinned).
    return s > 2 || most_taps(p.phases[in]) > 2;
}

// Channels-first layers of a few output channels (up to 15) take the twin's channel vectors on
// narrow rows with a long reduction, and in 3D with several taps per phase (96 -> 8, kernel 3,
// 12^3, batch 4: 12-15 ms on positions, 5-7.7 twinned).
bool favours_channel_vectors(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.c_out < threshold(p, Threshold::FavoursChannelVectorsMinCout)) return false;
    if (g.rank == 3 && has_multi_tap_phase(p)) return true;
    if (!long_reduction(p)) return false;
    return widest_phase(p.phases[g.rank - 1]) < threshold(p, Threshold::FavoursChannelVectorsNarrowRow);
}

// Channels-first backprop layers of channels_last_twin_min_cout output channels or more run on the
// channels-last kernels over transposed copies: the channels-first tiles store across planes, an
// element at a time (dcgan_l4: 40 -> 13 ms). The exceptions follow, each its rule.
bool choose_via_channels_last(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX) return false;
    const bool forced = p.policy.route == Policy::Route::ChannelsLast;
    if (p.policy.route != Policy::Route::Auto && !forced) return false;
    if (!has_layout_kernels(p, DataFormat::NXC)) return false;
    if (forced) return true;
    if (flat_rows_class(p)) return false;
    if (depthwise_prefers_twin(p)) return layout_copies_fit(p);
    // One-tap phases writing few outputs stay (zero first): the twin transposes mostly zeros (64
    // -> 32, kernel 1 stride 3, 64x64: 0.32 ms twinned, 0.15 here).
    if (!has_multi_tap_phase(p) && tapped_fraction(p, false) <= few_tapped_outputs(p)) return false;
    if (one_tap_1d_positions(p)) return false;
    if (one_tap_channel_tiles(p) && large_one_tap_1d(p)) return layout_copies_fit(p);
    // 1D stride-1 layers of short reductions stay: long rows stored a vector at a time (8 groups
    // of 8 -> 16, kernel 2, 4000 positions: 0.225 ms twinned, 0.150 here).
    if (g.rank == 1 && p.info.strides[0] == 1 &&
        g.c_in * g.kernel[0] <= threshold(p, Threshold::OneDimDenseMaxReduction))
        return false;
    if (few_outputs_twin(p) || dot_outputs_twin(p)) return layout_copies_fit(p);
    if (kernel4_stride2_1d_twin(p)) return layout_copies_fit(p);
    if (group_blocks_twin(p)) return layout_copies_fit(p);
    if ((g.c_out < threshold(p, Threshold::ChannelsLastTwinMinCout) && !favours_channel_vectors(p)) ||
        prefers_blocked_interleave(p))
        return false;
    if (short_strided_2d(p) || short_1d_positions(p)) return false;
    // One-tap phases of many output channels on the channel tiles stay channels-first on 32
    // registers, reading contiguous rows (unet_up1: 17.7 against 18.6 ms twinned); bf16 twins.
    if (!large_one_tap_2d(p) && !strided_one_tap_2d(p) &&
        (one_tap_channel_tiles(p) ||
         (every_phase_one_tap(p) && g.c_out >= threshold(p, Threshold::OneTapChannelsFirstMinCout) &&
          p.dtype != DType::bf16 && rule_applies(p, Threshold::OneTapChannelsFirst))) &&
        choose_channel_major(p))
        return false;
    return layout_copies_fit(p);
}

// The plan of the same layer in the other data layout (`format`): the same geometry, phases and
// filter, its own kernels.
std::shared_ptr<const Plan::Impl> layout_twin(const Plan::Impl &p, DataFormat format) {
    const bool to_nxc = format == DataFormat::NXC;
    auto t = std::make_shared<Plan::Impl>();
    t->op = p.op;
    t->dtype = p.dtype;
    t->policy = p.policy;
    t->policy_source = p.policy_source;
    t->variant = p.variant;
    t->regs = p.regs;
    t->input_shape = to_nxc ? ncx_to_nxc_order(p.input_shape) : nxc_to_ncx_order(p.input_shape);
    t->filter_shape = p.filter_shape;
    t->info = p.info;
    t->info.output_shape = to_nxc ? ncx_to_nxc_order(p.info.output_shape) : nxc_to_ncx_order(p.info.output_shape);
    t->info.data_format = format;
    t->geo = p.geo;
    t->geo.data_format = format;
    t->out_spatial = p.out_spatial;
    t->phases = p.phases;
    t->macs = p.macs;
    t->winograd = p.winograd;  // a channels-first layer's Winograd path runs on its channels-last twin
    t->tiles = kernel_tiles(t->regs, t->dtype, nullptr, nullptr);
    set_cpu_kernels(*t, choose_channel_major(*t));
    PlanRequest twin;
    twin.in_place = false;
    twin.twin = true;
    // (The twin of a Winograd plan runs the Winograd path; the others take their implementation
    // from batch_rows on.)
    if (t->winograd.f) t->implementation = find_implementation("winograd");
    else choose_implementation(*t, twin, "batch_rows");
    return t;
}

// Channels-last backprop layers of few output channels per group, which the channels-last kernels
// run on narrow or scalar branches, run on the channels-first twin (centernet_dla_dw_nxc: 10.3 ms,
// 0.30 twinned).
bool choose_via_channels_first(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || p.ci_pairs || p.groups || p.dots || p.group_block) return false;
    const bool forced = p.policy.route == Policy::Route::ChannelsFirst;
    if (!forced &&
        (p.policy.route != Policy::Route::Auto || g.c_out >= threshold(p, Threshold::ChannelsFirstTwinCoutBelow)))
        return false;
    return has_layout_kernels(p, DataFormat::NCX) && layout_copies_fit(p);
}

namespace {

std::string accept_channels_last_twin(Plan::Impl &p, const PlanRequest &request) {
    if (request.twin) return "a twin runs its own layout";
    p.serial = choose_serial(p);
    if (!choose_via_channels_last(p))
        return "not a channels-first layer the channels-last kernels serve better (choose_via_channels_last)";
    p.via_nxc = layout_twin(p, DataFormat::NXC);
    return "";
}

std::string accept_channels_first_twin(Plan::Impl &p, const PlanRequest &request) {
    if (request.twin) return "a twin runs its own layout";
    p.serial = choose_serial(p);
    if (!choose_via_channels_first(p))
        return "not a channels-last layer of few output channels per group (choose_via_channels_first)";
    p.via_ncx = layout_twin(p, DataFormat::NCX);
    return "";
}

// Runs the twin on the same memory, its views' axes reordered to the twin's layout; the twin's
// executor copies them densely into its layout.
void run_channels_last_twin(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                            const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed) {
    const Plan::Impl &t = *p.via_nxc;
    t.implementation->run(t, input, ncx_to_nxc_order(in_st), output, ncx_to_nxc_order(out_st), packed);
}

void run_channels_first_twin(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                             const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed) {
    const Plan::Impl &t = *p.via_ncx;
    t.implementation->run(t, input, nxc_to_ncx_order(in_st), output, nxc_to_ncx_order(out_st), packed);
}

}  // namespace

// A channels-first layer on the channels-last kernels, over transposed copies.
extern const Implementation kChannelsLastTwin{"channels_last_twin", accept_channels_last_twin, run_channels_last_twin};
// A channels-last layer on the channels-first kernels, over transposed copies.
extern const Implementation kChannelsFirstTwin{"channels_first_twin", accept_channels_first_twin,
                                               run_channels_first_twin};

}  // namespace detail
}  // namespace deconv
