// The as_f32 and as_f64 implementations (dispatch/implementations.h): a narrow layer runs on the
// plan of the same layer in its wider dtype (kernels/kernel_registry.h, wider_dtype), the input
// converted exactly and the output rounded once, where the CPU or the build has no better kernels
// for it. f16 and bf16 run as f32 (kernels/half_conversion.h): the f32 sums their own kernels
// have. i8 and u8 run as f64 where the build has f64 kernels (it then builds no 8-bit CPU kernels,
// cmake/DeconvKernels.cmake): every product of two 8-bit values and every sum of fewer than 2^37
// of them is an f64 integer, so the f64 plan's sums are the exact sums that 8-bit layers saturate
// on store. Filters whose sums stay under 2^24 run on the f32 plan instead, exact too, with the
// f32 families and twice the lanes (api/plan.cpp, wider_filter).
#include "dispatch/implementations.h"
#include "dispatch/strategy.h"
#include "kernels/half_conversion.h"

namespace deconv {
namespace detail {

namespace {

std::string accept_as_wider(Plan::Impl &p, const PlanRequest &request, DType wide) {
    const bool half = wide == DType::f32;
    if (p.dtype == wide || wider_dtype(p.dtype) != wide)
        return std::string("the layer is not ") + (half ? "f16 or bf16" : "i8 or u8");
    if (half && !runs_as_f32(p.dtype, p.variant) && request.winograd_tile == 0 && !request.on_wider && !request.pinned)
        return std::string("its own ") + dtype_name(p.dtype) + " kernels run here";
    if (!half && !request.on_wider) return std::string("its own ") + dtype_name(p.dtype) + " kernels run here";
    KernelKey key = cpu_kernel_key(p, p.geo.rank, p.channel_major, false);
    key.dtype = wide;
    if (!find_kernel(key, p.variant)) return std::string("this build has no ") + dtype_name(wide) + " kernel of the layer";
    // The wider plan runs with this plan's pins (its database entry is this layer's) and its choice
    // of algorithm: the Winograd path computes in f32.
    ExecOptions as_wide;
    as_wide.schedule = format_policy(p.policy);
    if (request.winograd_tile > 0) as_wide.schedule += " winograd_tile=" + std::to_string(request.winograd_tile);
    as_wide.algorithm = request.winograd_tile > 0 ? Algorithm::Winograd : Algorithm::Direct;
    as_wide.use_schedule_database = false;
    p.via_wider = request.make_plan(wide, as_wide);
    // 8-bit layers: the f32 plan too, for filters that keep every sum an f32 integer.
    key.dtype = DType::f32;
    if (!half && find_kernel(key, p.variant)) p.fast_via_wider = request.make_plan(DType::f32, as_wide);
    return "";
}

std::string accept_as_f32(Plan::Impl &p, const PlanRequest &request) { return accept_as_wider(p, request, DType::f32); }
std::string accept_as_f64(Plan::Impl &p, const PlanRequest &request) { return accept_as_wider(p, request, DType::f64); }

}  // namespace

// Their executor is Plan::run's conversion around the wider plan's run (it needs the unpacked
// filter).
extern const Implementation kAsF32{"as_f32", accept_as_f32, nullptr};
extern const Implementation kAsF64{"as_f64", accept_as_f64, nullptr};

}  // namespace detail
}  // namespace deconv
