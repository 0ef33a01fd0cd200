#include "cpu/fused_epilogue.h"

#include <algorithm>
#include <limits>

namespace deconv {
namespace detail {

namespace {

thread_local const KernelEpilogue *offered = nullptr;
thread_local bool *offered_taken = nullptr;

constexpr float kUnbounded = std::numeric_limits<float>::infinity();

}  // namespace

bool fold_store_post_ops(const std::vector<PostOp> &ops, float &alpha, float &lo, float &hi) {
    alpha = 1;
    lo = -kUnbounded;
    hi = kUnbounded;
    bool relu = false, clipped = false;
    for (const PostOp &op : ops) {
        if (op.kind != PostOp::Kind::eltwise) return false;
        float a, b;
        switch (op.alg) {
        case Eltwise::relu:
            if (relu || clipped) return false;
            relu = true;
            alpha = op.alpha;
            continue;
        case Eltwise::clip: a = op.alpha, b = op.beta; break;
        case Eltwise::bounded_relu: a = 0, b = op.alpha; break;
        case Eltwise::linear:
            if (op.alpha == 1 && op.beta == 0) continue;
            return false;
        default: return false;
        }
        // clamp(clamp(v, lo, hi), a, b) is clamp(v, max(lo, a), min(hi, b)) where the ranges meet.
        if (!(a <= b) || std::max(lo, a) > std::min(hi, b)) return false;
        lo = std::max(lo, a);
        hi = std::min(hi, b);
        clipped = true;
    }
    return true;
}

FusedEpilogueScope::FusedEpilogueScope(const KernelEpilogue *e) : prev_e_(offered), prev_taken_(offered_taken) {
    offered = e;
    offered_taken = &taken_;
}

FusedEpilogueScope::~FusedEpilogueScope() {
    offered = prev_e_;
    offered_taken = prev_taken_;
}

const KernelEpilogue *take_fused_epilogue() {
    const KernelEpilogue *e = offered;
    if (e) {
        *offered_taken = true;
        offered = nullptr;  // a plan that the taker runs in turn gets none
    }
    return e;
}

}  // namespace detail
}  // namespace deconv
