// The as_f32 implementation (dispatch/implementations.h): f16 and bf16 layers run on the f32 plan
// of the same layer, the input converted exactly and the output rounded once
// (kernels/half_conversion.h), where the CPU or the build has no better kernels for them.
#include "dispatch/implementations.h"
#include "dispatch/strategy.h"
#include "kernels/half_conversion.h"

namespace deconv {
namespace detail {

namespace {

std::string accept_as_f32(Plan::Impl &p, const PlanRequest &request) {
    if (p.dtype == DType::f32) return "the layer is f32";
    const bool half = p.dtype == DType::f16 || p.dtype == DType::bf16;
    if (!runs_as_f32(p.dtype, p.variant) && request.winograd_tile == 0 && !request.half_on_f32 && !(request.pinned && half))
        return std::string("its own ") + dtype_name(p.dtype) + " kernels run here";
    KernelKey f32 = cpu_kernel_key(p, p.geo.rank, p.channel_major, false);
    f32.dtype = DType::f32;
    if (!find_kernel(f32, p.variant)) return "this build has no f32 kernel of the layer";
    // The f32 plan runs with this plan's pins (its database entry is this layer's) and its choice
    // of algorithm: the Winograd path computes in f32.
    ExecOptions as_f32;
    as_f32.schedule = format_policy(p.policy);
    if (request.winograd_tile > 0) as_f32.schedule += " winograd_tile=" + std::to_string(request.winograd_tile);
    as_f32.algorithm = request.winograd_tile > 0 ? Algorithm::Winograd : Algorithm::Direct;
    as_f32.use_schedule_database = false;
    p.via_f32 = request.make_f32_plan(as_f32);
    return "";
}

}  // namespace

// Its executor is Plan::run's conversion around the f32 plan's run (it needs the unpacked filter).
extern const Implementation kAsF32{"as_f32", accept_as_f32, nullptr};

}  // namespace detail
}  // namespace deconv
