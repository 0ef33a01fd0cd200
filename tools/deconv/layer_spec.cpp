#include "layer_spec.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "errors.h"

namespace deconv_cli {

using deconv::DataFormat;
using deconv::Op;

Op op_for_ranks(size_t input_rank, size_t filter_rank) {
    return filter_rank == input_rank ? Op::ConvolutionBackpropData : Op::GroupConvolutionBackpropData;
}

DataFormat data_format_of(const LayerSpec &layer) {
    if (layer.attrs.data_format) return *layer.attrs.data_format;
    return layer.op == Op::ConvolutionBackwardData ? DataFormat::NXC : DataFormat::NCX;
}

const char *layout_name(DataFormat f) { return f == DataFormat::NXC ? "nxc" : "ncx"; }

Dims ncx_to_nxc(const Dims &s) {
    if (s.size() < 3) return s;
    Dims r{s[0]};
    r.insert(r.end(), s.begin() + 2, s.end());
    r.push_back(s[1]);
    return r;
}

Dims nxc_to_ncx(const Dims &s) {
    if (s.size() < 3) return s;
    Dims r{s[0], s.back()};
    r.insert(r.end(), s.begin() + 1, s.end() - 1);
    return r;
}

void set_data_format(LayerSpec &layer, DataFormat f) {
    const DataFormat from = data_format_of(layer);
    layer.attrs.data_format = f;
    if (from == f) return;
    auto conv = [&](Dims &d) {
        if (d.empty()) return;
        d = f == DataFormat::NXC ? ncx_to_nxc(d) : nxc_to_ncx(d);
    };
    conv(layer.input_shape);
    conv(layer.declared_output);
    if (layer.op == Op::ConvolutionBackwardData) {
        if (layer.output_shape) conv(*layer.output_shape);
        if (layer.attrs.dst_shape) conv(*layer.attrs.dst_shape);
    }
}

std::string describe_shapes(const LayerSpec &layer) {
    return join_dims(layer.input_shape, 'x') + " * " + join_dims(layer.filter_shape, 'x');
}

LayerGeometry layer_geometry(const LayerSpec &layer) {
    LayerGeometry g;
    const Dims x = data_format_of(layer) == DataFormat::NXC ? nxc_to_ncx(layer.input_shape)
                                                             : layer.input_shape;
    const Dims &w = layer.filter_shape;
    if (x.size() < 3) return g;
    const size_t d = x.size() - 2;
    g.n = x[0];
    g.spatial.assign(x.begin() + 2, x.end());
    g.forward = layer.op == Op::GroupConvolution;
    switch (layer.op) {
    case Op::GroupConvolutionBackpropData:
    case Op::GroupConvolution:
        if (w.size() != d + 3) return g;
        g.groups = w[0];
        g.c_in = layer.op == Op::GroupConvolution ? w[2] : w[1];
        g.c_out = layer.op == Op::GroupConvolution ? w[1] : w[2];
        g.kernel.assign(w.begin() + 3, w.end());
        break;
    case Op::ConvolutionBackpropData:
        if (w.size() != d + 2) return g;
        g.c_in = w[0];
        g.c_out = w[1];
        g.kernel.assign(w.begin() + 2, w.end());
        break;
    case Op::ConvolutionBackwardData: {
        if (w.size() != d + 2) return g;
        g.groups = layer.attrs.groups.value_or(1);
        if (g.groups < 1) g.groups = 1;
        const bool oix = layer.attrs.weights_format.value_or(deconv::WeightsFormat::XIO) ==
                         deconv::WeightsFormat::OIX;
        const int64_t oc = oix ? w[0] : w[d + 1];
        g.c_in = oc / g.groups;
        g.c_out = oix ? w[1] : w[d];
        if (oix) g.kernel.assign(w.begin() + 2, w.end());
        else g.kernel.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(d));
        break;
    }
    }
    return g;
}

double nominal_macs(const LayerSpec &layer, const Dims &output_shape) {
    const LayerGeometry g = layer_geometry(layer);
    if (g.kernel.empty()) return 0.0;
    double m = static_cast<double>(g.n) * static_cast<double>(g.groups) *
               static_cast<double>(g.c_in) * static_cast<double>(g.c_out);
    if (g.forward) {
        const Dims y = data_format_of(layer) == DataFormat::NXC ? nxc_to_ncx(output_shape) : output_shape;
        for (size_t i = 2; i < y.size(); ++i) m *= static_cast<double>(y[i]);
    } else {
        for (int64_t v : g.spatial) m *= static_cast<double>(v);
    }
    for (int64_t v : g.kernel) m *= static_cast<double>(v);
    return m;
}

void settle_op(LayerSpec &layer) {
    if (!layer.op_fixed) layer.op = op_for_ranks(layer.input_shape.size(), layer.filter_shape.size());
}

void check_declared_output(const LayerSpec &layer, const Dims &inferred) {
    const Dims &d = layer.declared_output;
    if (d.empty()) return;
    for (int64_t v : d)
        if (v < 0) return;  // dynamic dims: nothing to check
    if (d != inferred)
        throw UsageError((layer.origin.empty() ? std::string("layer") : layer.origin) +
                         ": declares output " + join_dims(d) + " but shape inference gives " +
                         join_dims(inferred));
}

void rethrow_with_origin(const deconv::Error &e, const LayerSpec &layer) {
    if (layer.origin.empty()) throw e;
    throw deconv::Error(e.kind(), layer.origin + ": " + e.what());
}

deconv::DType parse_dtype_arg(const std::string &name, const std::string &what) {
    try {
        return deconv::parse_dtype(name);
    } catch (const deconv::Error &) {
        throw UsageError(what + ": unknown dtype '" + name +
                         "' (expected f32, f16, bf16, f64, i8, u8 or i32)");
    }
}

Op parse_op_arg(const std::string &name, const std::string &what) {
    try {
        return deconv::parse_op(name);
    } catch (const deconv::Error &) {
        throw UsageError(what + ": unknown op '" + name +
                         "' (expected group_convolution_backprop_data, convolution_backprop_data, "
                         "group_convolution or convolution_backward_data)");
    }
}

DataFormat parse_data_format_arg(const std::string &name, const std::string &what) {
    try {
        return deconv::parse_data_format(name);
    } catch (const deconv::Error &) {
        throw UsageError(what + ": unknown data format '" + name + "' (expected ncx or nxc)");
    }
}

deconv::WeightsFormat parse_weights_format_arg(const std::string &name, const std::string &what) {
    try {
        return deconv::parse_weights_format(name);
    } catch (const deconv::Error &) {
        throw UsageError(what + ": unknown weights format '" + name + "' (expected xio or oix)");
    }
}

// ---------------------------------------------------------------- quantization and epilogues

deconv::DataTypes layer_types(const LayerSpec &layer) {
    if (layer.quant.types) return *layer.quant.types;
    const deconv::DType t = layer.dtype.value_or(deconv::DType::f32);
    return deconv::DataTypes{t, t, t};
}

int64_t output_channels(const deconv::ShapeInfo &shape) {
    const Dims &y = shape.output_shape;
    if (y.size() < 2) return 0;
    return shape.data_format == DataFormat::NXC ? y.back() : y[1];
}

std::vector<float> output_scales(const OutputScaleRule &rule, int64_t channels) {
    switch (rule.mode) {
    case deconv::ScaleMode::none: return {};
    case deconv::ScaleMode::per_tensor: return {rule.value};
    case deconv::ScaleMode::per_channel: break;
    }
    std::vector<float> s(static_cast<size_t>(std::max<int64_t>(channels, 0)));
    for (size_t c = 0; c < s.size(); ++c)
        s[c] = std::ldexp(rule.value, static_cast<int>(c % 5) - 2);
    return s;
}

deconv::Epilogue layer_epilogue(const LayerSpec &layer, int64_t channels) {
    const QuantSpec &q = layer.quant;
    deconv::Epilogue e;
    e.src_zero_point = q.src_zero_point;
    e.dst_zero_point = q.dst_zero_point;
    e.scale_mode = q.oscale.mode;
    e.scales = output_scales(q.oscale, channels);
    e.bias = q.bias;
    e.post_ops = q.post_ops;
    return e;
}

namespace {

// Shortest text that reads back as the same float.
std::string num(float v) {
    std::ostringstream os;
    os.precision(std::numeric_limits<float>::max_digits10);
    os << v;
    std::string s = os.str();
    for (int p = 1; p < 10; ++p) {
        std::ostringstream t;
        t.precision(p);
        t << v;
        if (std::strtof(t.str().c_str(), nullptr) == v) return t.str();
    }
    return s;
}

std::string trim(const std::string &s) {
    const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::string item;
    for (char c : s) {
        if (c == sep) {
            out.push_back(item);
            item.clear();
        } else {
            item.push_back(c);
        }
    }
    out.push_back(item);
    return out;
}

// A finite float, the whole text; nullopt otherwise.
std::optional<float> parse_float(const std::string &text) {
    const std::string t = trim(text);
    if (t.empty()) return std::nullopt;
    char *end = nullptr;
    errno = 0;
    const float v = std::strtof(t.c_str(), &end);
    if (*end != '\0' || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
    return v;
}

std::optional<int64_t> parse_int(const std::string &text) {
    const std::string t = trim(text);
    if (t.empty()) return std::nullopt;
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE) return std::nullopt;
    return static_cast<int64_t>(v);
}

}  // namespace

std::string post_ops_text(const std::vector<deconv::PostOp> &ops) {
    std::string s;
    for (const deconv::PostOp &p : ops) {
        if (!s.empty()) s += ";";
        if (p.kind == deconv::PostOp::Kind::sum) {
            s += "sum:" + num(p.scale);
            if (p.zero_point != 0) s += ":" + std::to_string(p.zero_point);
        } else {
            s += deconv::eltwise_name(p.alg);
            if (p.alpha != 0 || p.beta != 0) s += ":" + num(p.alpha);
            if (p.beta != 0) s += ":" + num(p.beta);
        }
    }
    return s;
}

std::string describe_quant(const LayerSpec &layer) {
    const QuantSpec &q = layer.quant;
    if (!q.typed()) return "";
    std::string s = deconv::data_types_name(layer_types(layer));
    if (q.oscale.mode != deconv::ScaleMode::none)
        s += std::string(" oscale ") + (q.oscale.mode == deconv::ScaleMode::per_tensor ? "per_tensor:" : "per_oc:") +
             num(q.oscale.value);
    if (q.src_zero_point) s += " src_zp " + std::to_string(q.src_zero_point);
    if (q.dst_zero_point) s += " dst_zp " + std::to_string(q.dst_zero_point);
    if (q.bias) s += std::string(" bias ") + deconv::dtype_name(*q.bias);
    if (!q.post_ops.empty()) s += " post_ops " + post_ops_text(q.post_ops);
    return s;
}

deconv::DataTypes parse_cfg_arg(const std::string &text, const std::string &what) {
    try {
        return deconv::parse_data_types(trim(text));
    } catch (const deconv::Error &e) {
        throw UsageError(what + ": " + e.what());
    }
}

deconv::DType parse_quant_dtype_arg(const std::string &text, const std::string &what) {
    const std::string t = trim(text);
    // benchdnn's names too.
    if (t == "s8") return deconv::DType::i8;
    if (t == "s32") return deconv::DType::i32;
    try {
        return deconv::parse_dtype(t);
    } catch (const deconv::Error &) {
        throw UsageError(what + ": unknown dtype '" + text +
                         "' (expected f32, f16, bf16, f64, i8 (s8), u8 or i32 (s32))");
    }
}

OutputScaleRule parse_oscale_arg(const std::string &text, const std::string &what) {
    const size_t colon = text.find(':');
    const std::string policy = trim(text.substr(0, colon));
    OutputScaleRule r;
    if (policy == "per_tensor" || policy == "common") {
        r.mode = deconv::ScaleMode::per_tensor;
    } else if (policy == "per_oc" || policy == "per_channel") {
        r.mode = deconv::ScaleMode::per_channel;
    } else {
        throw UsageError(what + " '" + text + "': unknown scale policy '" + policy +
                         "' (expected per_tensor:V, common:V, per_oc:V or per_channel:V)");
    }
    if (colon == std::string::npos)
        throw UsageError(what + " '" + text + "': no scale value (e.g. " + policy + ":0.5)");
    const std::optional<float> v = parse_float(text.substr(colon + 1));
    if (!v) throw UsageError(what + " '" + text + "': '" + text.substr(colon + 1) + "' is not a finite number");
    r.value = *v;
    return r;
}

int32_t parse_zero_point_arg(const std::string &text, const std::string &what) {
    const std::optional<int64_t> v = parse_int(text);
    if (!v) throw UsageError(what + " '" + text + "': not an integer");
    if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max())
        throw UsageError(what + " '" + text + "': out of the 32-bit integer range");
    return static_cast<int32_t>(*v);
}

std::vector<deconv::PostOp> parse_post_ops_arg(const std::string &text, const std::string &what) {
    std::vector<deconv::PostOp> ops;
    if (trim(text).empty()) return ops;  // "": none
    for (const std::string &raw : split(text, ';')) {
        const std::string item = trim(raw);
        if (item.empty())
            throw UsageError(what + " '" + text + "': an empty item (post-ops are separated by ';')");
        const std::vector<std::string> f = split(item, ':');
        const std::string name = trim(f[0]);
        auto number = [&](size_t i, const char *field) {
            const std::optional<float> v = parse_float(f[i]);
            if (!v)
                throw UsageError(what + " '" + text + "': " + name + "'s " + field + " '" + f[i] +
                                 "' is not a finite number");
            return *v;
        };
        if (name == "sum") {
            if (f.size() > 3)
                throw UsageError(what + " '" + text + "': '" + item + "' has too many fields (sum[:scale[:zero_point]])");
            deconv::PostOp p = deconv::PostOp::sum(f.size() > 1 ? number(1, "scale") : 1.f);
            if (f.size() > 2) p.zero_point = parse_zero_point_arg(f[2], what + " '" + text + "': sum's zero point");
            ops.push_back(p);
            continue;
        }
        deconv::Eltwise alg;
        try {
            alg = deconv::parse_eltwise(name);
        } catch (const deconv::Error &e) {
            throw UsageError(what + " '" + text + "': " + e.what());
        }
        if (f.size() > 3)
            throw UsageError(what + " '" + text + "': '" + item + "' has too many fields (NAME[:alpha[:beta]])");
        ops.push_back(deconv::PostOp::eltwise(alg, f.size() > 1 ? number(1, "alpha") : 0.f,
                                              f.size() > 2 ? number(2, "beta") : 0.f));
    }
    return ops;
}

const char *op_cli_name(Op op) {
    switch (op) {
    case Op::GroupConvolutionBackpropData: return "group_convolution_backprop_data";
    case Op::ConvolutionBackpropData: return "convolution_backprop_data";
    case Op::GroupConvolution: return "group_convolution";
    case Op::ConvolutionBackwardData: return "convolution_backward_data";
    }
    return "?";
}

void apply_quant_flags(const QuantFlags &f, LayerSpec &layer) {
    if (f.cfg || f.src || f.wei || f.dst) {
        deconv::DataTypes t = f.cfg ? *f.cfg : layer_types(layer);
        if (f.src) t.src = *f.src;
        if (f.wei) t.weights = *f.wei;
        if (f.dst) t.dst = *f.dst;
        layer.quant.types = t;
        layer.dtype = t.src;
    }
    if (f.oscale) layer.quant.oscale = *f.oscale;
    if (f.src_zp) layer.quant.src_zero_point = *f.src_zp;
    if (f.dst_zp) layer.quant.dst_zero_point = *f.dst_zp;
    if (f.bias) layer.quant.bias = f.bias;
    if (f.post_ops) layer.quant.post_ops = *f.post_ops;
}

}  // namespace deconv_cli
