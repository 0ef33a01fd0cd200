// Names of the public enums, and their parsers.
#include "deconv/deconv.h"

#include <algorithm>
#include <cctype>

namespace deconv {

namespace {
std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return (char)std::tolower(c); });
    return s;
}
}  // namespace

const char *dtype_name(DType t) {
    switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f64: return "f64";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
    case DType::i32: return "i32";
    }
    return "?";
}

size_t dtype_size(DType t) {
    switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::f64: return 8;
    case DType::i8: return 1;
    case DType::u8: return 1;
    case DType::i32: return 4;
    }
    return 0;
}

DType parse_dtype(const std::string &name) {
    const std::string s = lower(name);
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i32}) {
        if (s == dtype_name(t)) return t;
    }
    if (s == "float32" || s == "fp32") return DType::f32;
    if (s == "float16" || s == "fp16") return DType::f16;
    if (s == "bfloat16") return DType::bf16;
    if (s == "float64" || s == "fp64") return DType::f64;
    if (s == "int8" || s == "s8") return DType::i8;
    if (s == "uint8") return DType::u8;
    if (s == "int32" || s == "s32") return DType::i32;
    throw Error(ErrorKind::InvalidArgument,
                "dtype '" + name + "' is not one of f32, f16, bf16, f64, i8, u8, i32");
}

AutoPad parse_auto_pad(const std::string &name) {
    const std::string s = lower(name);
    if (s.empty() || s == "explicit" || s == "notset" || s == "none") return AutoPad::Explicit;
    if (s == "same_upper") return AutoPad::SameUpper;
    if (s == "same_lower") return AutoPad::SameLower;
    if (s == "valid") return AutoPad::Valid;
    throw Error(ErrorKind::InvalidArgument,
                "auto_pad '" + name + "' is not one of explicit, same_upper, same_lower, valid");
}

const char *auto_pad_name(AutoPad a) {
    switch (a) {
    case AutoPad::Explicit: return "explicit";
    case AutoPad::SameUpper: return "same_upper";
    case AutoPad::SameLower: return "same_lower";
    case AutoPad::Valid: return "valid";
    }
    return "?";
}

const char *op_name(Op op) {
    switch (op) {
    case Op::GroupConvolutionBackpropData: return "GroupConvolutionBackpropData";
    case Op::ConvolutionBackpropData: return "ConvolutionBackpropData";
    case Op::GroupConvolution: return "GroupConvolution";
    case Op::ConvolutionBackwardData: return "ConvolutionBackwardData";
    }
    return "?";
}

Op parse_op(const std::string &name) {
    // Spec names and their snake_case spellings compare equal once underscores are dropped.
    std::string s;
    for (char c : lower(name))
        if (c != '_' && c != '-') s += c;
    for (Op op : {Op::GroupConvolutionBackpropData, Op::ConvolutionBackpropData, Op::GroupConvolution,
                  Op::ConvolutionBackwardData}) {
        if (s == lower(op_name(op))) return op;
    }
    throw Error(ErrorKind::InvalidArgument,
                "op '" + name +
                    "' is not one of group_convolution_backprop_data, convolution_backprop_data, "
                    "group_convolution, convolution_backward_data");
}

DataFormat parse_data_format(const std::string &name) {
    const std::string s = lower(name);
    if (s == "ncx") return DataFormat::NCX;
    if (s == "nxc") return DataFormat::NXC;
    throw Error(ErrorKind::InvalidArgument, "data_format '" + name + "' is not one of NCX, NXC");
}

const char *data_format_name(DataFormat f) { return f == DataFormat::NXC ? "NXC" : "NCX"; }

const char *device_name(Device d) { return d == Device::CUDA ? "cuda" : "cpu"; }

Device parse_device(const std::string &name) {
    const std::string s = lower(name);
    if (s == "cpu" || s == "host") return Device::CPU;
    if (s == "cuda") return Device::CUDA;
    throw Error(ErrorKind::InvalidArgument, "device '" + name + "' is not one of cpu (host), cuda");
}

WeightsFormat parse_weights_format(const std::string &name) {
    const std::string s = lower(name);
    if (s == "oix") return WeightsFormat::OIX;
    if (s == "xio") return WeightsFormat::XIO;
    throw Error(ErrorKind::InvalidArgument, "weights_format '" + name + "' is not one of OIX, XIO");
}

const char *weights_format_name(WeightsFormat f) { return f == WeightsFormat::XIO ? "XIO" : "OIX"; }

Algorithm parse_algorithm(const std::string &name) {
    const std::string s = lower(name);
    if (s == "direct") return Algorithm::Direct;
    if (s == "winograd") return Algorithm::Winograd;
    if (s == "auto") return Algorithm::Auto;
    throw Error(ErrorKind::InvalidArgument, "algorithm '" + name + "' is not one of direct, winograd, auto");
}

const char *algorithm_name(Algorithm a) {
    return a == Algorithm::Winograd ? "winograd" : a == Algorithm::Auto ? "auto" : "direct";
}

}  // namespace deconv

namespace deconv {

namespace {
constexpr Eltwise kEltwiseAll[] = {Eltwise::relu,   Eltwise::clip,     Eltwise::linear, Eltwise::bounded_relu,
                                   Eltwise::tanh,   Eltwise::logistic, Eltwise::abs,    Eltwise::square,
                                   Eltwise::elu,    Eltwise::swish,    Eltwise::gelu_tanh, Eltwise::gelu_erf,
                                   Eltwise::hardswish};
}  // namespace

const char *eltwise_name(Eltwise e) {
    switch (e) {
    case Eltwise::relu: return "relu";
    case Eltwise::clip: return "clip";
    case Eltwise::linear: return "linear";
    case Eltwise::bounded_relu: return "bounded_relu";
    case Eltwise::tanh: return "tanh";
    case Eltwise::logistic: return "logistic";
    case Eltwise::abs: return "abs";
    case Eltwise::square: return "square";
    case Eltwise::elu: return "elu";
    case Eltwise::swish: return "swish";
    case Eltwise::gelu_tanh: return "gelu_tanh";
    case Eltwise::gelu_erf: return "gelu_erf";
    case Eltwise::hardswish: return "hardswish";
    }
    return "?";
}

Eltwise parse_eltwise(const std::string &name) {
    std::string s = lower(name);
    if (s == "clamp") s = "clip";
    if (s == "sigmoid") s = "logistic";
    if (s == "gelu") s = "gelu_erf";
    std::string known;
    for (Eltwise e : kEltwiseAll) {
        if (s == eltwise_name(e)) return e;
        known += std::string(known.empty() ? "" : ", ") + eltwise_name(e);
    }
    throw Error(ErrorKind::InvalidArgument, "post-op '" + name + "' is not one of sum, " + known);
}

DataTypes parse_data_types(const std::string &cfg) {
    // Whole names first ("f32"), then three dtype names run together ("u8s8u8", "u8s8f32").
    const std::string s = lower(cfg);
    try {
        const DType t = parse_dtype(s);
        return {t, t, t};
    } catch (const Error &) {
    }
    static const char *const names[] = {"bf16", "f32", "f16", "f64", "u8", "s8", "i8", "s32", "i32"};
    DataTypes t;
    DType *slot[3] = {&t.src, &t.weights, &t.dst};
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
        bool found = false;
        for (const char *n : names) {
            const std::string name(n);
            if (s.compare(at, name.size(), name) == 0) {
                *slot[i] = parse_dtype(name);
                at += name.size();
                found = true;
                break;
            }
        }
        if (!found) break;
        if (i == 2 && at == s.size()) return t;
    }
    throw Error(ErrorKind::InvalidArgument, "data types '" + cfg +
                                                "' are neither one dtype nor three run together as src, weights, dst "
                                                "(e.g. u8s8u8, s8s8f32)");
}

std::string data_types_name(const DataTypes &t) {
    if (t.src == t.weights && t.weights == t.dst) return dtype_name(t.src);
    auto n = [](DType d) -> std::string { return d == DType::i8 ? "s8" : d == DType::i32 ? "s32" : dtype_name(d); };
    return n(t.src) + n(t.weights) + n(t.dst);
}

}  // namespace deconv
