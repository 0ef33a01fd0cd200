#include "layer_spec.h"

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

const char *op_cli_name(Op op) {
    switch (op) {
    case Op::GroupConvolutionBackpropData: return "group_convolution_backprop_data";
    case Op::ConvolutionBackpropData: return "convolution_backprop_data";
    case Op::GroupConvolution: return "group_convolution";
    case Op::ConvolutionBackwardData: return "convolution_backward_data";
    }
    return "?";
}

}  // namespace deconv_cli
