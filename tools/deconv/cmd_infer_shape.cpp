// `deconv infer-shape`: the output shape of a layer, comma-separated; --verbose adds the
// resolved attributes and the effective pads.
#include <iostream>

#include "commands.h"
#include "errors.h"

namespace deconv_cli {

int infer_shape_command(const InferShapeOptions &o) {
    std::vector<std::string> notes;
    LayerSpec spec = resolve_layer(o.layer, notes);
    for (const std::string &n : notes) std::cerr << "note: " << n << "\n";
    if (spec.input_shape.empty())
        throw UsageError("infer-shape needs --input-shape (or --layer FILE.xml, or --desc)");
    if (spec.filter_shape.empty())
        throw UsageError("infer-shape needs --filter-shape (or --layer FILE.xml, or --desc)");
    settle_op(spec);
    deconv::ShapeInfo si;
    try {
        si = deconv::infer_shape(spec.op, spec.input_shape, spec.filter_shape, spec.attrs,
                                 spec.output_shape);
    } catch (const deconv::Error &e) {
        rethrow_with_origin(e, spec);
    }
    check_declared_output(spec, si.output_shape);
    std::cout << join_dims(si.output_shape) << "\n";
    if (o.verbose) {
        std::cout << "op: " << deconv::op_name(spec.op) << "\n"
                  << "data_format: " << layout_name(si.data_format) << "\n"
                  << "input: " << join_dims(spec.input_shape) << "\n"
                  << "filter: " << join_dims(spec.filter_shape) << "\n"
                  << "output: " << join_dims(si.output_shape) << "\n"
                  << "groups: " << si.groups << "\n";
        if (spec.op == deconv::Op::ConvolutionBackwardData)
            std::cout << "weights_format: "
                      << (spec.attrs.weights_format == deconv::WeightsFormat::OIX ? "oix" : "xio") << "\n"
                      << "dst_shape attribute: "
                      << (spec.attrs.dst_shape ? join_dims(*spec.attrs.dst_shape) : std::string("none"))
                      << "\n";
        std::cout << "strides: " << join_dims(si.strides) << "\n"
                  << "dilations: " << join_dims(si.dilations) << "\n"
                  << "auto_pad: " << deconv::auto_pad_name(spec.attrs.auto_pad) << "\n"
                  << "output_padding: " << join_dims(si.output_padding) << "\n"
                  << "output_shape input: "
                  << (spec.output_shape ? join_dims(*spec.output_shape) : std::string("none")) << "\n"
                  << "pads_begin (effective): " << join_dims(si.pads_begin) << "\n"
                  << "pads_end (effective): " << join_dims(si.pads_end) << "\n";
        if (!spec.origin.empty()) std::cout << "source: " << spec.origin << "\n";
    }
    return kExitOk;
}

}  // namespace deconv_cli
