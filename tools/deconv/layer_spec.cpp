#include "layer_spec.h"

#include "errors.h"

namespace deconv_cli {

deconv::Op op_for_ranks(size_t input_rank, size_t filter_rank) {
    return filter_rank == input_rank ? deconv::Op::ConvolutionBackpropData
                                     : deconv::Op::GroupConvolutionBackpropData;
}

std::string describe_shapes(const LayerSpec &layer) {
    return join_dims(layer.input_shape, 'x') + " * " + join_dims(layer.filter_shape, 'x');
}

double nominal_macs(const LayerSpec &layer) {
    const Dims &x = layer.input_shape, &w = layer.filter_shape;
    const bool grouped = layer.op == deconv::Op::GroupConvolutionBackpropData;
    const size_t lead = grouped ? 3 : 2;
    if (x.size() < 3 || w.size() < lead) return 0.0;
    double m = static_cast<double>(x[0]);
    // N * (G*C_in) * C_out * prod(X) * prod(K): G*C_in is x[1] in both ops.
    m *= static_cast<double>(x[1]) * static_cast<double>(w[lead - 1]);
    for (size_t i = 2; i < x.size(); ++i) m *= static_cast<double>(x[i]);
    for (size_t i = lead; i < w.size(); ++i) m *= static_cast<double>(w[i]);
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

}  // namespace deconv_cli
