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
