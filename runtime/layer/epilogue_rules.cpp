#include "layer/epilogue_rules.h"

#include "layer/messages.h"

#include <cmath>
#include <string>

namespace deconv {
namespace detail {

namespace {

bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }

std::string types_text(const DataTypes &t) {
    return std::string("src ") + dtype_name(t.src) + ", weights " + dtype_name(t.weights) + ", dst " + dtype_name(t.dst);
}

void check_zero_point(const char *what, int32_t zp, DType t) {
    const int32_t lo = t == DType::u8 ? 0 : -128, hi = t == DType::u8 ? 255 : 127;
    if (zp < lo || zp > hi) {
        invalid(std::string(what) + " " + std::to_string(zp) + " is outside the " + dtype_name(t) + " range [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
}

void check_scales(const char *what, const float *s, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        if (!std::isfinite(s[i])) {
            invalid(std::string(what) + "[" + std::to_string(i) + "] is " + std::to_string(s[i]) + " but must be finite");
        }
    }
}

int64_t scale_count(ScaleMode m, int64_t out_channels) {
    return m == ScaleMode::per_channel ? out_channels : m == ScaleMode::per_tensor ? 1 : 0;
}

void check_post_op(const PostOp &op, size_t i, bool float_layer) {
    const std::string at = "post_ops[" + std::to_string(i) + "]";
    if (op.kind == PostOp::Kind::sum) {
        if (!std::isfinite(op.scale)) invalid(at + " (sum) scale " + std::to_string(op.scale) + " is not finite");
        if (float_layer && op.zero_point != 0) {
            invalid(at + " (sum) zero point " + std::to_string(op.zero_point) + " applies to integer outputs only");
        }
        return;
    }
    if (op.kind != PostOp::Kind::eltwise) invalid(at + " has an unknown kind");
    if (!std::isfinite(op.alpha) || !std::isfinite(op.beta)) {
        invalid(at + " (" + eltwise_name(op.alg) + ") alpha " + std::to_string(op.alpha) + " and beta " +
                std::to_string(op.beta) + " must be finite");
    }
    if (op.alg == Eltwise::clip && op.alpha > op.beta) {
        invalid(at + " (clip) lower bound alpha " + std::to_string(op.alpha) + " is above the upper bound beta " +
                std::to_string(op.beta));
    }
    if (op.alg == Eltwise::bounded_relu && op.alpha < 0) {
        invalid(at + " (bounded_relu) bound alpha " + std::to_string(op.alpha) + " is negative");
    }
}

}  // namespace

bool is_quantized(const DataTypes &t) { return (t.src == DType::u8 || t.src == DType::i8) && t.weights == DType::i8; }

void check_epilogue(Op op, const DataTypes &types, const Epilogue &e, int64_t out_channels) {
    const bool quantized = is_quantized(types);
    if (quantized) {
        if (types.dst != DType::u8 && types.dst != DType::i8 && types.dst != DType::i32 && types.dst != DType::f32 &&
            types.dst != DType::bf16) {
            throw Error(ErrorKind::Unsupported, "quantized layers (" + types_text(types) +
                                                    ") write dst u8, i8, i32, f32 or bf16, not " + dtype_name(types.dst));
        }
        if (op == Op::ConvolutionBackwardData) {
            throw Error(ErrorKind::Unsupported, std::string("ConvolutionBackwardData is not quantized (") + types_text(types) +
                                                    "): oneDNN Graph's table has f32, bf16 and f16 only");
        }
    } else if (!(is_float(types.src) && types.weights == types.src && types.dst == types.src)) {
        throw Error(ErrorKind::Unsupported,
                    "dtype combination " + types_text(types) +
                        " is not supported: quantized layers take src u8 or i8 with weights i8 (dst u8, i8, i32, f32 or "
                        "bf16), float layers one float dtype for all three");
    }
    if (quantized) {
        check_zero_point("src zero point", e.src_zero_point, types.src);
        if (types.dst == DType::u8 || types.dst == DType::i8) check_zero_point("dst zero point", e.dst_zero_point, types.dst);
        if ((types.dst == DType::f32 || types.dst == DType::bf16) && e.dst_zero_point != 0) {
            invalid("dst zero point " + std::to_string(e.dst_zero_point) + " applies to integer dst only, not " +
                    dtype_name(types.dst));
        }
    } else {
        if (e.src_zero_point != 0) {
            invalid("src zero point " + std::to_string(e.src_zero_point) + " applies to quantized layers only, not " +
                    dtype_name(types.src));
        }
        if (e.dst_zero_point != 0) {
            invalid("dst zero point " + std::to_string(e.dst_zero_point) + " applies to integer dst only, not " +
                    dtype_name(types.dst));
        }
    }
    const int64_t want = scale_count(e.scale_mode, out_channels);
    if (!e.scales.empty()) {
        if (e.scale_mode == ScaleMode::none) {
            invalid(std::to_string(e.scales.size()) + " output scales given with scale mode none");
        }
        if ((int64_t)e.scales.size() != want) {
            invalid(std::to_string(e.scales.size()) + " output scales given, but " +
                    (e.scale_mode == ScaleMode::per_tensor ? std::string("per_tensor takes 1")
                                                           : "per_channel takes one per output channel, " +
                                                                 std::to_string(out_channels)));
        }
        check_scales("output scale", e.scales.data(), want);
    }
    if (e.bias) {
        const DType b = *e.bias;
        const bool ok = quantized ? (b == DType::f32 || b == DType::i32) : (b == DType::f32 || b == types.dst);
        if (!ok) {
            throw Error(ErrorKind::Unsupported, std::string("bias dtype ") + dtype_name(b) + " is not supported with " +
                                                    types_text(types) +
                                                    (quantized ? " (f32 or i32)" : " (f32 or the layer's dtype)"));
        }
    }
    int sums = 0;
    for (size_t i = 0; i < e.post_ops.size(); i++) {
        check_post_op(e.post_ops[i], i, !quantized || types.dst == DType::f32 || types.dst == DType::bf16);
        if (e.post_ops[i].kind == PostOp::Kind::sum && ++sums > 1) {
            invalid("post_ops[" + std::to_string(i) + "] is a second sum (a plan takes one, as oneDNN does)");
        }
    }
}

void check_run_args(const Epilogue &e, const RunArgs &args, int64_t out_channels) {
    if (e.bias && !args.bias) {
        invalid(std::string("the plan has a ") + dtype_name(*e.bias) + " bias but the run gives none (RunArgs::bias)");
    }
    if (!e.bias && args.bias) invalid("the run gives a bias but the plan was made without one (Epilogue::bias)");
    const bool runtime_scales = e.scale_mode != ScaleMode::none && e.scales.empty();
    if (runtime_scales && !args.scales) {
        invalid("the plan takes its output scales at run time but the run gives none (RunArgs::scales)");
    }
    if (!runtime_scales && args.scales) {
        invalid(e.scale_mode == ScaleMode::none ? "the run gives output scales but the plan's scale mode is none"
                                                : "the run gives output scales but the plan was made with its own");
    }
    if (runtime_scales) check_scales("run-time output scale", args.scales, scale_count(e.scale_mode, out_channels));
}

}  // namespace detail
}  // namespace deconv
