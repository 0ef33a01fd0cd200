#include "cpu/fused_epilogue.h"

#include <algorithm>
#include <limits>

namespace deconv {
namespace detail {

namespace {

thread_local const KernelEpilogue *offered = nullptr;
thread_local const OutputStage *offered_stage = nullptr;
thread_local bool *offered_taken = nullptr;

constexpr float kUnbounded = std::numeric_limits<float>::infinity();

}  // namespace

bool fold_store_post_ops(const std::vector<PostOp> &ops, float &alpha, float &hi) {
    alpha = 1;
    hi = kUnbounded;
    bool relu = false;
    for (const PostOp &op : ops) {
        if (op.kind != PostOp::Kind::eltwise) return false;
        switch (op.alg) {
        case Eltwise::relu:
            // max(alpha * v, v) is the relu for slopes up to 1; one relu, before any bound.
            if (relu || hi != kUnbounded || !(op.alpha <= 1)) return false;
            relu = true;
            alpha = op.alpha;
            continue;
        case Eltwise::clip:
        case Eltwise::bounded_relu: {
            // clamp(v, 0, b) is min(relu(v), b); after a relu of slope 0, the same.
            const float lo = op.alg == Eltwise::clip ? op.alpha : 0.f;
            const float b = op.alg == Eltwise::clip ? op.beta : op.alpha;
            if (lo != 0 || !(b >= 0) || (relu && alpha != 0)) return false;
            relu = true;
            alpha = 0;
            hi = std::min(hi, b);
            continue;
        }
        case Eltwise::linear:
            if (op.alpha == 1 && op.beta == 0) continue;
            return false;
        default: return false;
        }
    }
    return true;
}

FusedEpilogueScope::FusedEpilogueScope(const KernelEpilogue *e, const OutputStage *s)
    : prev_e_(offered), prev_s_(offered_stage), prev_taken_(offered_taken) {
    offered = e;
    offered_stage = s;
    offered_taken = &taken_;
}

FusedEpilogueScope::~FusedEpilogueScope() {
    offered = prev_e_;
    offered_stage = prev_s_;
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

const OutputStage *offered_output_stage(const void *output, const std::vector<int64_t> &strides) {
    const OutputStage *s = offered_stage;
    return s && s->scratch == output && s->scratch_st == strides ? s : nullptr;
}

void take_output_stage() {
    *offered_taken = true;
    offered_stage = nullptr;
}

}  // namespace detail
}  // namespace deconv
