// The layout twins (dispatch/implementations.h): a layer run on the kernels of the other data
// layout over transposed copies of its input and output, and the rules that choose them.
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

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <set>

namespace deconv {
namespace detail {

// Channels-first backprop layers with at least 16 output channels per group run on the
// channels-last kernels, over a transposed copy of the input, their result transposed back: the
// channels-first kernels store each register tile across output planes, an element at a time,
// which costs more than their arithmetic unless the reduction per output is long (dcgan_l4: 40
// -> 13 ms). On CPUs of 32 vector registers, one-tap phases (kernel = stride, no phase without
// taps) with 128 or more output channels and a long reduction (the channel-vectorized kernels:
// choose_channel_major) stay on the channels-first kernels, whose tiles then read contiguous
// input rows (unet_up1: 17.7 against 18.6 ms on AVX-512; kernel 3 at stride 4, 3D, 256 -> 128:
// 125 ms there against 59 here; 16 -> 128 at 7x7 on the position kernels 0.27 ms); with 16
// registers the channels-last route wins there too (AVX2: unet_up1 1.47x, unet_up4 1.23x, found
// by deconv tune). bf16 layers always take this route,
// where the dot-product kernels are. docs/performance.md has the measurements.
constexpr int64_t kOneTapChannelsFirstMinCout = 128;

constexpr int64_t kMaxLayoutCopyBytes = int64_t(512) << 20;

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
// kMaxLayoutCopyBytes; larger layers run on the kernels of their own layout, on the caller's buffers.
bool layout_copies_fit(const Plan::Impl &p) {
    return tensors_bytes(p, {&p.input_shape, &p.info.output_shape}) <= kMaxLayoutCopyBytes;
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

// Depthwise channels-first layers (one input and one output channel per group) run on the
// channels-last twin's group-vectorized kernels where the channels-first kernels have no good tile:
// 3D layers (but kernel = stride = 2, below), whose reduction strides whole planes (kernel 4 at
// stride 3, 48 groups, 12^3, batch 4: 94 -> 9.5 ms), and 2D layers at stride 3 or more on the
// innermost axis (but see below), or at stride 2 with phases of three taps or more there (kernel 5,
// 96 groups of 14x14, batch 2: 0.55 -> 0.09 ms). Kernels of 2s and less at stride 2
// (centernet_dla_dw: 0.078 against 0.46 twinned) and stride 1 stay, and so do 2D layers whose
// phases with taps write a quarter of the outputs or less (kernels below the stride:
// kFewTappedOutputs): the twin transposes the whole output, of which the channels-first kernels
// write those few after one dense zero fill (zero_first; kernel 1 at stride 4, 48 groups of 32x32:
// 0.105 -> 0.033 ms; kernel 2 at stride 4: 0.24 -> 0.19; kernel 2 at stride 3, 44% written, stays:
// 0.16 twinned against 0.22). Only where this build has the group kernels (x86-64). The bound is a
// third, not a quarter: kernels below the stride write a quarter and the last row of each axis
// (kernel 1 at stride 2, 28x28: (28/55)^2, 26%).
constexpr double kFewTappedOutputs = 1.0 / 3.0;
constexpr int64_t kDepthwiseOneTap3dRows = 16;

bool depthwise_prefers_twin(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.c_in != 1 || g.c_out != 1 || g.rank < 2 || !has_channels_last_pair(p, &KernelKey::groups)) return false;
    const int in = g.rank - 1;
    const int64_t s = p.info.strides[in];
    // 3D kernel = stride = 2 on rows of kDepthwiseOneTap3dRows inputs or more stays: its one-tap
    // tiles are a product per output, no reduction strides (48 groups of 16^3, batch 2: 0.42-0.50
    // ms here, 0.73-0.77 twinned; rows of 8: 0.13-0.17 against 0.10-0.11).
    if (g.rank == 3) return !(s == 2 && every_phase_one_tap(p) && g.in_spatial[in] >= kDepthwiseOneTap3dRows);
    if (s == 1 || tapped_fraction(p, false) <= kFewTappedOutputs) return false;
    // At strides 4 and 8 the interleaved kernel writes every phase of a row as dense vectors (48
    // groups of 32x32, kernel 4: 0.19 ms twinned, 0.076 here; fcn8s_upscore8, kernel 16 stride 8:
    // 1.46 against 0.70). At stride 3 at kernel = stride (its one-tap tiles, any pad: 128 groups
    // of 56x56, pad 1: 0.86 ms twinned, 0.34 here), and at kernel 6 where its depthwise tiles have
    // their fast branch (interleaved_depthwise_facts.h: pads a multiple of 3); elsewhere the
    // three-way interleave of its vectors costs more than the twin (64 groups of 20x20, batch 2,
    // kernel 4 or 7: 0.18-0.25 ms twinned, 0.35-0.66 here).
    const bool fast_s3 =
        s == 3 && (every_phase_one_tap(p) ||
                   (floor_mod(p.info.pads_begin[in], s) == tiles::interleaved_depthwise_pad_residue((int)s) &&
                    uniform_taps(p, tiles::kInterleavedDepthwiseTaps)));
    if ((s == 4 || s == 8 || fast_s3) && interleaved_kernel_for(p, false, false)) return false;
    // At stride 2, phases of at most two taps (kernel 3 with the short-phase kernel, kernel 4)
    // run well here (kernel 3: 0.11 against 0.14 ms twinned).
    return s > 2 || most_taps(p.phases[in]) > 2;
}

// Channels-first layers of 8-15 output channels per group with a long reduction (long_reduction)
// whose phase rows are narrower than kTwinNarrowRowPositions run on the channels-last kernels, on
// their twin (channels-last layers of 8 or more run there anyway): the position kernels fill a
// fraction of a vector per row there, the channels-last ones a vector (8 lanes on AVX-512) of
// channels. 96 -> 8, kernel 3, 12^3, batch 4: 12-15 ms on positions, 5-7.7 twinned (AVX2:
// 4.7-8.1 against 3.4); 256 -> 8, kernel 4 stride 2, 14x14 (rows of 14): 1.45 against 0.40-0.79.
// Rows of 28 stay (96 -> 8 at 28x28: 0.12 against 0.18 twinned).
// 3D layers of 8-15 output channels whose phases have several taps run there whatever their
// reduction and rows (the position kernels' strided planes: 32 -> 8, kernel 3 stride 3, 12^3:
// 0.76 ms on positions, 0.33 twinned; 256 -> 8, kernel 6 stride 3, 16^3: 49 against 23; 4
// groups of 32 -> 8, kernel 2 dilation 2: 1.54 against 0.52); of one-tap phases they stay
// (128 -> 8, kernel 2 stride 2: 0.50 against 0.72).
constexpr int64_t kTwinMinCout = 8;
constexpr int64_t kTwinNarrowRowPositions = 16;

bool favours_channel_vectors(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.c_out < kTwinMinCout) return false;
    if (g.rank == 3 && has_multi_tap_phase(p)) return true;
    if (!long_reduction(p)) return false;
    return widest_phase(p.phases[g.rank - 1]) < kTwinNarrowRowPositions;
}

constexpr int64_t kOneDimDenseMaxReduction = 96;

bool choose_via_channels_last(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX) return false;
    const bool forced = p.policy.route == Policy::Route::ChannelsLast;
    if (p.policy.route != Policy::Route::Auto && !forced) return false;
    if (!has_layout_kernels(p, DataFormat::NXC)) return false;
    if (forced) return true;
    if (flat_rows_class(p)) return false;
    if (depthwise_prefers_twin(p)) return layout_copies_fit(p);
    // Kernels below the stride whose phases have one tap at most and write a quarter of the
    // outputs or less (kFewTappedOutputs) stay on the channels-first kernels (zero first): the
    // twin transposes the whole output, mostly zeros, around a short reduction (64 -> 32, kernel 1
    // stride 3, 64x64: 0.32 ms twinned, 0.15 here; 2 groups of 4 -> 16, 1D kernel 1 stride 4: 0.20
    // against 0.09).
    // With more taps the reduction pays for the copies (4 groups of 32 -> 8, 3D kernel 2 dilation
    // 2, an eighth written: 0.52 twinned against 1.54), and so it does at half written (16 -> 32,
    // 1D kernel 1 stride 2: 0.056 against 0.073).
    if (!has_multi_tap_phase(p) && tapped_fraction(p, false) <= kFewTappedOutputs) return false;
    if (one_tap_1d_positions(p)) return false;
    if (one_tap_channel_tiles(p) && large_one_tap_1d(p)) return layout_copies_fit(p);
    // 1D layers at stride 1 with kOneDimDenseMaxReduction or fewer products per output (input
    // channels x taps) stay too: their rows are long and stored a vector at a time, and the
    // twin's two transposes cost more than its channel tiles save (8 groups of 8 -> 16, kernel 2,
    // 4000 positions: 0.225 ms twinned, 0.150 here; 16 -> 32, kernel 3: 0.100 against 0.073; 32
    // -> 64, kernel 2: 0.126 against 0.104). From 32 x 4 on the twin is as fast or faster (rows
    // of 100: 0.008 against 0.012; 64 x 3: 0.241 against 0.270).
    if (g.rank == 1 && p.info.strides[0] == 1 && g.c_in * g.kernel[0] <= kOneDimDenseMaxReduction) return false;
    if (few_outputs_twin(p) || dot_outputs_twin(p)) return layout_copies_fit(p);
    if (kernel4_stride2_1d_twin(p)) return layout_copies_fit(p);
    if (group_blocks_twin(p)) return layout_copies_fit(p);
    if ((g.c_out < 16 && !favours_channel_vectors(p)) || prefers_blocked_interleave(p)) return false;
    if (short_strided_2d(p) || short_1d_positions(p)) return false;
    if (!large_one_tap_2d(p) && !strided_one_tap_2d(p) && (one_tap_channel_tiles(p) ||
         (every_phase_one_tap(p) && g.c_out >= kOneTapChannelsFirstMinCout && p.dtype != DType::bf16 && p.regs.many)) &&
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

// Channels-last backprop layers with fewer than kTwinMinCout output channels per group run the
// channels-last kernels' narrow branches: 4-lane vectors, or scalar code under 4 channels
// (centernet_dla_dw_nxc, depthwise: 10.3 ms, against 0.30 ms on the channels-first kernels). They
// run on the channels-first kernels instead, over a transposed copy of the input, the result
// transposed back (the copies stay within kMaxLayoutCopyBytes). From 8 channels per group on,
// the channels-last kernels' one-vector tiles, every group at each position tile, run them without
// the copies (grouped32_up_nxc: 0.27 ms against 0.35 twinned; AVX2 0.44 against 0.50).

bool choose_via_channels_first(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || p.ci_pairs || p.groups || p.dots || p.group_block) return false;
    const bool forced = p.policy.route == Policy::Route::ChannelsFirst;
    if (!forced && (p.policy.route != Policy::Route::Auto || g.c_out >= kTwinMinCout))
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
