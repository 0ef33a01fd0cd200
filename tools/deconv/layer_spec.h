// One layer to run, check or time, whatever it came from (flags, an IR layer, a benchdnn
// descriptor, a suite entry): the op, the shapes (data in the layer's data format), the
// attributes, the optional output_shape input, and what the source said about dtype.
#pragma once

#include <optional>
#include <string>

#include "deconv/deconv.h"
#include "dims.h"

namespace deconv_cli {

struct LayerSpec {
    std::string name;    // layer name, suite entry name or descriptor name; may be empty
    std::string origin;  // where it came from, for messages: "IR foo.xml", "descriptor ..."
    deconv::Op op = deconv::Op::GroupConvolutionBackpropData;
    bool op_fixed = false;  // the source or --op named the op; otherwise the filter rank decides
    // The data in the data format's order ([N, C, X1..XD] for ncx, [N, X1..XD, C] for nxc;
    // attrs.data_format, else the op's default); the filter in the op's own layout.
    Dims input_shape;
    Dims filter_shape;
    deconv::Attributes attrs;
    // The op's optional shape input: spatial for the OpenVINO backprop ops (their output_shape),
    // the full diff_src shape in the data format's order for ConvolutionBackwardData (dst_shape,
    // which wins over attrs.dst_shape).
    std::optional<Dims> output_shape;
    std::optional<deconv::DType> dtype;
    bool scale = false;  // suite: a large one-off layer, skipped by default
    // The output dims the source declares (an IR's output port), in the data format's order,
    // checked against shape inference; empty when unknown or when flags changed the shapes.
    Dims declared_output;
};

// The op a filter rank implies next to an input rank when nothing names the op: equal ranks
// mean ConvolutionBackpropData, anything else GroupConvolutionBackpropData (whose checks then
// name the bad rank).
deconv::Op op_for_ranks(size_t input_rank, size_t filter_rank);

// The layer's data format: attrs.data_format, else the op's default (NXC for oneDNN's
// ConvolutionBackwardData, NCX for the OpenVINO ops).
deconv::DataFormat data_format_of(const LayerSpec &layer);
// "ncx" or "nxc".
const char *layout_name(deconv::DataFormat f);

// Sets attrs.data_format to `f`, reordering the shapes that are in the data format's order
// (input, declared output, and ConvolutionBackwardData's full dst_shape input and attribute).
void set_data_format(LayerSpec &layer, deconv::DataFormat f);

// [N, C, X..] <-> [N, X.., C] (shapes of rank < 3 are returned as they are).
Dims ncx_to_nxc(const Dims &s);
Dims nxc_to_ncx(const Dims &s);

// "1x20x224x224 * 4x5x2x3x3": the input and filter shapes on one line.
std::string describe_shapes(const LayerSpec &layer);

// What every op reduces to: N, groups, channels per group on the op's input (c_in) and output
// (c_out), the input's spatial extents and the kernel's, whatever the op's layouts. Only
// meaningful for shapes the library has accepted.
struct LayerGeometry {
    int64_t n = 0, groups = 1, c_in = 0, c_out = 0;
    Dims spatial, kernel;
    bool forward = false;  // GroupConvolution
};
LayerGeometry layer_geometry(const LayerSpec &layer);

// The nominal multiply-accumulate count (as the suite defines it): N*G*C_in*C_out*prod(X)*
// prod(K) for the transposed convolutions (X: the op's input), N*G*C_in*C_out*prod(Y)*prod(K)
// for the forward GroupConvolution (Y: its output, `output_shape` in the data format's order).
// A double: it is only used for rates.
double nominal_macs(const LayerSpec &layer, const Dims &output_shape);

// Sets op from the ranks unless op_fixed.
void settle_op(LayerSpec &layer);

// Throws UsageError if the source declared output dims (all static) that differ from `inferred`.
void check_declared_output(const LayerSpec &layer, const Dims &inferred);

// Rethrows a library error with the layer's origin in front of its message (same kind).
[[noreturn]] void rethrow_with_origin(const deconv::Error &e, const LayerSpec &layer);

// Name parsers through the library, turning its error into a UsageError naming `what`
// (a flag or a file field) and the value.
deconv::DType parse_dtype_arg(const std::string &name, const std::string &what);
deconv::Op parse_op_arg(const std::string &name, const std::string &what);
deconv::DataFormat parse_data_format_arg(const std::string &name, const std::string &what);
deconv::WeightsFormat parse_weights_format_arg(const std::string &name, const std::string &what);

// The command line's name of an op: group_convolution_backprop_data, ...
const char *op_cli_name(deconv::Op op);

}  // namespace deconv_cli
