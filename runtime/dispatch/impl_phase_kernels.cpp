// The phase-kernel implementation's conf (dispatch/implementations.h): a bordered or in-place
// input, the interleaved kernels and their edges, the filter's channel blocks, tap rows, the
// output zeroed first, flat rows, phase tasks, and running serially.
#include "cpu/bordered_input.h"
#include "cpu/cpu_executor.h"
#include "cpu/phase_tasks.h"
#include "cpu/winograd_executor.h"
#include "dispatch/implementations.h"
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

// Edge windows (Plan::Impl::edges) for 1D layers on the interleaved kernel whose input needs
// margins: the whole bordered copy moved every input byte once more per run (hifigan_up3: 13 MB,
// 6% of its samples in memmove). The edges run on the plain interleaved kernel, each at least
// kEdgeMinGroups wide so that it takes the kernel's vector tiles; the blocked kernel's part is a
// whole number of its row tiles.
constexpr int64_t kEdgeMinGroups = 16;

void choose_edge_windows(Plan::Impl &p, bool blocked) {
    const OpGeometry &geo = p.geo;
    if (geo.rank != 1 || !p.interleaved_kernel || !p.border_copy || p.channels_in_rows || !p.kernel ||
        geo.data_format != DataFormat::NCX || p.policy.edge_windows == Toggle::Off)
        return;
    const int64_t s = p.info.strides[0], pad = p.info.pads_begin[0], x = geo.in_spatial[0];
    const int64_t groups = p.out_spatial[0] / s;
    CpuConf::EdgeWindows e;
    e.reach = interleaved_reach(s, pad, most_taps(p.phases[0]));
    const int64_t inside_first = std::min(std::max(-e.reach.lo, int64_t(0)), groups);
    const int64_t inside_end = std::min(std::max(x - e.reach.hi, int64_t(0)), groups);
    e.left = std::min(groups, std::max(inside_first, kEdgeMinGroups));
    e.middle = std::min(inside_end, groups - kEdgeMinGroups) - e.left;
    if (blocked) e.middle = e.middle / p.tiles.blocked_groups * p.tiles.blocked_groups;
    e.kernel = blocked ? interleaved_kernel_for(p, false, false) : p.interleaved_kernel;
    if (e.middle >= kEdgeMinGroups && e.kernel) p.edges = e;
}

// Channels-last grouped layers whose tiles have the dense-group branch (tile_facts.h) copy their
// input group-major (Plan::Impl::group_major_input). With one group the caller's layout is
// already so. f32 accumulators only, as the branch. (32 groups of 8 -> 8 channels, 28x28,
// kernel 3 stride 2: 0.278 -> 0.249 ms, 2 threads, Zen 4.)
bool group_major_copy(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    const bool f32_accumulators = p.dtype == DType::f32 || p.dtype == DType::f16 || p.dtype == DType::bf16;
    if (p.policy.group_major == Toggle::Off || g.data_format != DataFormat::NXC || !p.channel_major || p.groups ||
        p.dots || p.ci_pairs || p.group_block || g.groups < 2 || !f32_accumulators)
        return false;
    if (p.policy.group_major == Toggle::On) return true;
    return g.c_in == tiles::kDenseGroupChannels && tiles::dense_group_tile((int)p.tiles.lanes, g.c_out);
}

// Whether a CPU backprop layer reads a zero-bordered input copy, and whether it runs the
// interleaved kernel (both need the phases). `in_place`: the plan's runs read their input as the
// caller (or the f32 plan of a 16-bit layer) hands it; a layout twin's runs read a transposed
// copy, which takes the margins at no further cost.
void choose_bordered_input(Plan::Impl &p, bool in_place) {
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DType dtype = p.dtype;
    if (in_place && p.policy.bordered_input == Toggle::Auto && p.interior_kernel && in_place_1d_channels_last(p)) {
        p.in_place_edges = true;
        return;
    }
    if (!geo.forward && p.policy.bordered_input != Toggle::Off) {
        // The interleaved kernel is a positions schedule.
        const bool blocked = prefers_blocked_interleave(p);
        if (blocked && p.channel_major) set_cpu_kernels(p, false);
        const int in = rank - 1;  // the innermost axis, spec order
        const int64_t s = p.info.strides[in];
        const KernelEntry *ik =
            p.policy.interleave == Policy::Interleave::Off ? nullptr : interleaved_kernel_for(p, p.channel_major, blocked);
        const bool interleave = ik != nullptr;
        if (ik && !p.groups) p.tiles.interleaved_groups = kernel_tiles(p.regs, p.dtype, nullptr, ik).interleaved_groups;
        std::vector<int64_t> lo, hi;
        // Channel-vectorized kernels always (but in_place_1d_channels_last): their bounded twin
        // reads each input value through a scalar load behind a bounds select, and the copy is
        // small beside their reduction.
        // Positions kernels with few output channels: with 16 or more, the position kernel's
        // wider register tile (2 vectors x 8 channels) beats the interleaved one and the copy
        // does not pay (measured: unet_up4, unet3d_up 1.4-1.6x slower bordered and interleaved),
        // unless the blocked kernel serves the layer.
        const auto positive = [](int64_t v) { return v > 0; };
        const bool pinned = p.policy.bordered_input == Toggle::On || p.policy.interleave == Policy::Interleave::Plain;
        if ((p.channel_major || geo.c_out < 16 || blocked || pinned || short_strided_2d(p) ||
             short_1d_positions(p)) &&
            border_margins(p.phases, geo, dtype_size(dtype), interleave ? s : 0, p.info.pads_begin[in],
                                   p.out_spatial[in], lo, hi)) {
            const bool margins = std::any_of(lo.begin(), lo.end(), positive) || std::any_of(hi.begin(), hi.end(), positive);
            // (The group-block kernels read their block-interleaved copy, margins or not.)
            if (interleave || margins || p.group_block) {
                p.border_lo = lo;
                p.border_hi = hi;
                p.border_copy = margins || p.group_block;
                if (interleave) p.interleaved_kernel = ik;
                if (interleave && blocked && (p.out_spatial[in] / s) % p.tiles.blocked_groups != 0 &&
                    p.policy.interleaved_tail != Toggle::Off) {
                    p.interleaved_tail_kernel = interleaved_kernel_for(p, false, false);
                }
                const int64_t groups = p.out_spatial[in] / s;
                const int64_t tile = p.tiles.interleaved_groups;
                // (With 16 registers the split measured slower: fcn8s_upscore8 1.75x without, on AVX2;
                // and so it did on rows of fewer than kExactGroupsMinTiles tiles.)
                p.interleaved_exact_rows =
                    interleave && !blocked && geo.c_in == 1 && rank >= 2 && tile > 0 && groups % tile != 0 &&
                    ((groups >= kExactGroupsMinTiles * tile && p.policy.exact_groups != Toggle::Off && p.regs.many) ||
                     (groups > tile && p.policy.exact_groups == Toggle::On));
                // The blocked kernel reduces every input channel at the rows of its block; in 3D a
                // plain copy (or the caller's input) puts each channel a whole plane further on
                // (unet3d_up: 128 KiB), with channels in rows a row's channels are one contiguous
                // run (17 KiB). Measured on a Zen 4 VM (2 threads, ms, medians of 3-4 alternating
                // runs, plain -> channels in rows, the copy included): unet3d_up 27.8 -> 24.7;
                // plain planes padded to an odd number of cache lines (against cache-set
                // conflicts) 29.7, plain with transparent huge pages (against TLB misses) 34.6: the
                // contiguous run itself is what helps. In 2D it lost (unet_up4, whose input needs
                // no margins and so no copy otherwise, 18.1 -> 21.6; 192x192 15.3 -> 16.7): 3D only.
                p.channels_in_rows = interleave && blocked && rank == 3 && p.policy.channels_in_rows != Toggle::Off;
                p.group_major_input = !interleave && group_major_copy(p);
                choose_edge_windows(p, blocked);
            }
        }
    }
}

// Output channels per block of the channel-vectorized kernels' packing: one kernel call per block.
// Channels-last: one of the kernels' channel tiles where a group holds two or more, else two
// tiles, or one where two tiles' weights would leave L2 (channels_last_channel_block); the bf16
// pair kernels two (unet_up1_bf16: 64 channels 4.68 ms, 128 4.51, 256 4.73). On CPUs
// of 16 vector registers one tile (AVX2, 16 channels), whose weights then
// stream as one contiguous run instead of a tile's 64 bytes in every 512 (unet_up1 27-43 ms ->
// 18-20, two tiles 21; 128 -> 64 channels, kernel 5, 16^3: 146 -> 78; the narrow-row blocks
// likewise). Rows narrower than the kernels' position tile, either layout: up to four of the
// narrow-row branch's 3-vector tiles (dcgan_l2: unblocked 20.0 ms, blocks of 192 15.7), one full
// tile where a group holds two (narrow_row_channel_block). Channels-first layers with wider rows
// keep one packing (centernet_up3 measured 25.5 -> 31.7 ms blocked). Batch rows: every output
// channel in one call, whose parallel loops then hold all the channel tiles, up to a limit of
// weights (batch_rows_channel_block).
constexpr int64_t kChannelBlock = 128;
constexpr int64_t kNarrowRowChannelBlock = 192;

int64_t choose_channel_block(const Plan::Impl &p) {
    const int64_t pinned = p.policy.channel_block;
    if (p.group_block) return 0;  // the group-block kernels take every channel of a group per call
    if (p.ci_pairs) return pinned > 0 ? pinned : kChannelBlock;  // the pair kernels read blocked packings only
    if (!p.channel_major || p.geo.forward || pinned == 0) return 0;
    if (pinned > 0) return pinned;
    if (p.batch_rows_kernel) return batch_rows_channel_block(p);
    bool narrow = p.geo.rank >= 2;
    for (const AxisPhase &a : p.phases[p.geo.rank - 1]) narrow = narrow && a.out_count < p.tiles.row_positions;
    const bool one_tile = !p.regs.many && p.tiles.four_position_channels > 0;
    // (Narrow rows' blocks hold their own branches' tiles: narrow_row_channel_block counts them,
    // exact_channel_blocks the others.)
    if (narrow) return one_tile ? p.tiles.four_position_channels : narrow_row_channel_block(p, kNarrowRowChannelBlock);
    if (p.geo.data_format != DataFormat::NXC) return 0;
    return exact_channel_blocks(
        p, one_tile ? p.tiles.four_position_channels : channels_last_channel_block(p, kChannelBlock));
}

// The interior calls of channels-last layers of tap_rows_class (layer_classes.cpp) on the
// tap-row kernels, where this build has them (x86-64, f32, ranks 2-3); the policy's tap_rows
// pins them on or off. Their register tiles are the channels-last kernels' (p.tiles holds).
void choose_tap_rows(Plan::Impl &p) {
    const Toggle pin = p.policy.tap_rows;
    if (pin == Toggle::Off || !p.interior_kernel || p.batch_rows_kernel || p.group_block) return;
    if (pin != Toggle::On && (!tap_rows_class(p, p.channel_block) || p.interior_kernel->knobs.q_tile > 0 ||
                              p.interior_kernel->knobs.vectors > 0))
        return;  // (a kernel of pinned register tiles stays)
    KernelKey key = p.interior_kernel->key;
    key.tap_rows = true;
    if (const KernelEntry *k = find_kernel(key, p.variant)) p.interior_kernel = k;
}

// Phase plans whose phases without taps (kernel below the stride) hold half of the output or more
// zero the whole output first, densely and on the pool, and skip those phases: zeroed phase by
// phase, each pass wrote every s-th element of rows it fetched again for the next phase (kernel 1
// at stride 3, 3D, 46^3 outputs: 67% of the run in the fill, 12-16 -> 2.1-2.8 ms). Phases the
// interleaved kernel serves count as written: it stores their zeros itself. (Batch rows and the
// Winograd path zero their own way.)
bool choose_zero_first(const Plan::Impl &p) {
    if (p.geo.forward || p.batch_rows_kernel || p.winograd.f) return false;
    if (p.policy.zero_first != Toggle::Auto) return p.policy.zero_first == Toggle::On;
    return tapped_fraction(p, p.interleaved_kernel != nullptr) <= 0.5;
}

// The L1 set period: addresses this far apart share a set (4 KiB: 64 sets of 64-byte lines).
constexpr int64_t kFlatRowsAliasBytes = 4096;

// The scratch output of flat rows (phase_kernel_calls.cpp, call_flat_rows): the output with its rows
// at the bordered copy's pitch; held to the copy's own limit.
int64_t flat_rows_scratch_bytes(const Plan::Impl &p) {
    const int in = p.geo.rank - 1;
    const int64_t pitch = p.geo.in_spatial[in] + p.border_lo[in] + p.border_hi[in];
    int64_t bytes = (int64_t)dtype_size(p.dtype) * pitch;
    for (size_t i = 0; i + 1 < p.info.output_shape.size() && bytes <= kMaxBorderedInputBytes; i++)
        bytes *= p.info.output_shape[i];  // (at most 2^26 x an extent of 31 bits: no overflow)
    return bytes;
}

// Flat rows (Plan::Impl::flat_rows) for the layers of flat_rows_class on the position kernels
// over a bordered copy, the copy's margins grown where its channels would alias in L1.
void choose_flat_rows(Plan::Impl &p) {
    p.flat_rows = flat_rows_class(p) && !p.channel_major && p.border_copy && !p.interleaved_kernel &&
                  !p.channels_in_rows && !p.zero_first && flat_rows_scratch_bytes(p) <= kMaxBorderedInputBytes;
    if (!p.flat_rows) return;
    // Channels of the copy a multiple of kFlatRowsAliasBytes apart put every channel's rows in the
    // same L1 sets, which the reduction over input channels then evicts: one more row apart they
    // are not (96 -> 8 channels, 12^3, kernel 3: 2.2 -> 1.0 ms, 2 threads).
    int64_t channel_bytes = (int64_t)dtype_size(p.dtype);
    for (int i = 0; i < p.geo.rank; i++) channel_bytes *= p.geo.in_spatial[i] + p.border_lo[i] + p.border_hi[i];
    if (channel_bytes % kFlatRowsAliasBytes == 0) p.border_hi[p.geo.rank - 2] += 1;
}

// Layers below both limits run on the calling thread alone: a second core would first pull the
// input and output from the first one's caches, and each kernel call's hand-off costs
// microseconds (ov_spec_1d, 27 thousand MACs: 3 us on one thread, 8 on two; 16 -> 128 channels,
// 100 positions, kernel 3 stride 4, 0.61M MACs: 8 us against 26). Forced serial, random class
// layers below these limits ran 1.05x faster in geomean natively and 1.08x under AVX2 (Zen 5,
// 2 threads, two seeded sets), where 256K MACs and 256 KiB had held to 1.00-1.02x.
constexpr int64_t kSerialMacs = int64_t(3) << 18;
constexpr int64_t kSerialBytes = int64_t(1) << 20;

bool choose_serial(const Plan::Impl &p) {
    if (p.policy.serial != Toggle::Auto) return p.policy.serial == Toggle::On;
    if (p.macs >= kSerialMacs) return false;
    return tensors_bytes(p, {&p.input_shape, &p.filter_shape, &p.info.output_shape}) <= kSerialBytes;
}

// The steps every plan on its own kernels takes last (batch_rows shares them).
void finish_phase_kernels_conf(Plan::Impl &p) {
    p.channel_block = choose_channel_block(p);
    choose_tap_rows(p);
    p.zero_first = choose_zero_first(p);
    choose_flat_rows(p);
    p.phase_tasks = choose_phase_tasks(p);
}

namespace {

// Takes every layer: the last implementation of the list.
std::string accept_phase_kernels(Plan::Impl &p, const PlanRequest &request) {
    if (!request.twin) p.serial = choose_serial(p);
    choose_bordered_input(p, request.in_place);
    finish_phase_kernels_conf(p);
    return "";
}

}  // namespace

// One kernel call per phase combination (or per row part, slice, or tap window): the direct
// algorithm on the layer's own layout (cpu/cpu_executor.cpp).
extern const Implementation kPhaseKernels{"phase_kernels", accept_phase_kernels, run_phase_kernels};

}  // namespace detail
}  // namespace deconv
