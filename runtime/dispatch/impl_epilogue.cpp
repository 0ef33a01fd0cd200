// The epilogue implementation (dispatch/implementations.h): quantized layers and layers with a
// bias or post-ops run their plain accumulating plan, then the epilogue pass
// (cpu/epilogue_pass.h). Plan::create with DataTypes and an Epilogue makes such plans
// (api/epilogue_plan.cpp); the list's rules never choose it.
#include "dispatch/implementations.h"

#include <string>

namespace deconv {
namespace detail {

namespace {

std::string accept_epilogue(Plan::Impl &, const PlanRequest &) {
    return "the plan's types and epilogue choose it (Plan::create with an Epilogue)";
}

std::string number(float v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

}  // namespace

extern const Implementation kEpilogue{"epilogue", accept_epilogue, nullptr};

std::string describe_epilogue(const Plan::Impl &p) {
    const Epilogue &e = p.epilogue;
    std::string s = std::string("epilogue ") + data_types_name(p.types);
    if (e.src_zero_point) s += ", src zero point " + std::to_string(e.src_zero_point);
    if (e.scale_mode != ScaleMode::none) {
        s += e.scale_mode == ScaleMode::per_tensor ? ", per-tensor scale" : ", per-channel scales";
        if (e.scales.empty()) s += " at run time";
    }
    if (e.bias) s += std::string(", bias ") + dtype_name(*e.bias);
    if (!e.post_ops.empty()) {
        s += ", post-ops";
        for (size_t i = 0; i < e.post_ops.size(); i++) {
            const PostOp &op = e.post_ops[i];
            s += i ? ", " : " ";
            if (op.kind == PostOp::Kind::sum) {
                s += "sum(" + number(op.scale) + (op.zero_point ? ", " + std::to_string(op.zero_point) : "") + ")";
            } else {
                s += std::string(eltwise_name(op.alg)) + "(" + number(op.alpha) + ", " + number(op.beta) + ")";
            }
        }
    }
    if (e.dst_zero_point) s += ", dst zero point " + std::to_string(e.dst_zero_point);
    return s;
}

}  // namespace detail
}  // namespace deconv
