// The Winograd implementation's rule (dispatch/implementations.h): the tile F(m, r) a layer takes,
// or none.
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
#include "plan/thresholds.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <set>

namespace deconv {
namespace detail {

// Winograd under Algorithm::Auto: layers of enough channels and tiles per phase that save half of
// the multiplications, or a third where the direct kernels run channels-last too (hifigan_up3 on
// the blocked interleaved kernel: 9.6 ms direct, 12.5 on Winograd); few tiles: their own rule.

int choose_winograd_tile(const Plan::Impl &p, Algorithm algorithm) {
    if (algorithm == Algorithm::Direct || p.device != Device::CPU) return 0;
    const int m = p.policy.winograd_tile > 0 ? (int)p.policy.winograd_tile : (int)threshold(p, Threshold::WinogradTile);
    const std::string why = winograd_unsupported(p, m);
    if (algorithm == Algorithm::Winograd) {
        if (!why.empty()) {
            throw Error(ErrorKind::Unsupported,
                        std::string("algorithm winograd cannot run ") + op_name(p.op) + " " + std::to_string(p.geo.rank) +
                            "D " + dtype_name(p.dtype) + ": " + why + " (use algorithm direct or auto)");
        }
        return m;
    }
    // A pinned winograd implementation pins the path as algorithm=winograd does.
    const bool pinned = p.policy.implementation == "winograd";
    if (!why.empty() || (p.policy.algorithm == Policy::Algorithm::Direct && !pinned)) return 0;
    if (p.policy.algorithm == Policy::Algorithm::Winograd || pinned) return m;
    const int64_t min_channels = threshold(p, Threshold::WinogradMinChannels);
    if (p.geo.c_in < min_channels || p.geo.c_out < min_channels) return 0;
    const int64_t products = winograd_macs(p, m);
    const int64_t tiles = winograd_phase_tiles(p, m);
    if (tiles < threshold(p, Threshold::WinogradMinTiles)) return winograd_pays_on_few_tiles(p, tiles, products) ? m : 0;
    if (products * threshold(p, Threshold::WinogradSavingNum) <= p.macs * threshold(p, Threshold::WinogradSavingDen))
        return m;
    const bool channels_last = p.geo.data_format == DataFormat::NXC || choose_via_channels_last(p);
    const bool saves_a_third = products * threshold(p, Threshold::WinogradChannelsLastSavingNum) <=
                               p.macs * threshold(p, Threshold::WinogradChannelsLastSavingDen);
    return saves_a_third && channels_last ? m : 0;
}

namespace {

std::string accept_winograd(Plan::Impl &p, const PlanRequest &request) {
    if (request.winograd_tile == 0) return "the direct kernels serve the layer (choose_winograd_tile)";
    if (p.dtype != DType::f32) return "it computes in f32: as_f32 runs it on the f32 plan";
    set_winograd(p, request.winograd_tile);
    // Channels-first layers run it on their channels-last twin (transposed copies).
    if (p.geo.data_format == DataFormat::NCX) p.via_nxc = layout_twin(p, DataFormat::NXC);
    return "";
}

void run_winograd_plan(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                       const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed) {
    if (p.via_nxc) {
        run_winograd_plan(*p.via_nxc, input, ncx_to_nxc_order(in_st), output, ncx_to_nxc_order(out_st), packed);
        return;
    }
    run_winograd(p, input, in_st, output, out_st, packed);
}

}  // namespace

// F(m, r) per phase: input and output transforms around one matrix product per tile position
// (cpu/winograd_executor.cpp); f32, channels-last.
extern const Implementation kWinograd{"winograd", accept_winograd, run_winograd_plan};

}  // namespace detail
}  // namespace deconv
