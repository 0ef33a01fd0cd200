// One layer to run, check or time, whatever it came from (flags, an IR layer, a benchdnn
// descriptor, a suite entry): the op, the shapes (data in the layer's data format), the
// attributes, the optional output_shape input, and what the source said about dtype.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "deconv/deconv.h"
#include "dims.h"

namespace deconv_cli {

// The output scales of a quantized layer or one with an epilogue, as --oscale gives them (their
// count depends on the output channels, known once the shapes are):
//   per_tensor:V (alias common:V)   one scale V for the whole output
//   per_oc:V (alias per_channel:V)  channel c gets V * 2^((c mod 5) - 2): V/4, V/2, V, 2V, 4V,
//                                   V/4, ... (powers of two: a deterministic spread that keeps
//                                   the products exact; as benchdnn's per_oc, one value in)
struct OutputScaleRule {
    deconv::ScaleMode mode = deconv::ScaleMode::none;
    float value = 1;
};

// A quantized layer or one with an epilogue (--cfg, --src-dtype, --wei-dtype, --dst-dtype,
// --oscale, --src-zp, --dst-zp, --bias, --post-ops, or a suite entry's fields of those names):
// what Plan::create(op, DataTypes, ..., Epilogue) takes, the scales as a rule and the bias as a
// dtype (its data is random, seeded).
struct QuantSpec {
    std::optional<deconv::DataTypes> types;  // unset: the layer's dtype three times
    OutputScaleRule oscale;
    int32_t src_zero_point = 0, dst_zero_point = 0;
    std::optional<deconv::DType> bias;
    std::vector<deconv::PostOp> post_ops;

    // Whether the layer runs through the typed Plan::create (types given, or any epilogue).
    bool typed() const {
        return types || oscale.mode != deconv::ScaleMode::none || src_zero_point != 0 ||
               dst_zero_point != 0 || bias || !post_ops.empty();
    }
};

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
    // Quantization and epilogue (QuantSpec::typed() false: a plain layer of `dtype`).
    QuantSpec quant;
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

// The tensors' dtypes: quant.types, else the layer's dtype (f32 when unset) three times.
deconv::DataTypes layer_types(const LayerSpec &layer);
// The output's channel count (axis 1 under NCX, the last under NXC) of an inferred shape.
int64_t output_channels(const deconv::ShapeInfo &shape);
// The scales the rule gives for `channels` output channels (empty for ScaleMode::none).
std::vector<float> output_scales(const OutputScaleRule &rule, int64_t channels);
// The library's Epilogue of the layer, its scales materialised for `channels` output channels.
deconv::Epilogue layer_epilogue(const LayerSpec &layer, int64_t channels);
// One line, e.g. "u8s8u8 oscale per_oc:0.25 src_zp 3 bias i32 post_ops relu;sum:0.5" (only
// what is set; "" for a plain layer).
std::string describe_quant(const LayerSpec &layer);
// The --post-ops syntax of a list of post-ops ("relu;clip:0:6;sum:0.5:2").
std::string post_ops_text(const std::vector<deconv::PostOp> &ops);

// Parsers of the quantization flags and suite fields; UsageError names `what` and the value (a
// library message, when the library refused it, passed through).
//   cfg        "u8s8u8", "s8s8f32", "f32" (benchdnn's --cfg; s8 is i8)
//   oscale     "per_tensor:V" | "common:V" | "per_oc:V" | "per_channel:V" (V a finite number)
//   zero point a decimal 32-bit integer
//   post-ops   "relu;sum:0.5;clip:0:6": eltwise NAME[:alpha[:beta]] or sum[:scale[:zero_point]],
//              separated by ';' (empty items are refused)
deconv::DataTypes parse_cfg_arg(const std::string &text, const std::string &what);
deconv::DType parse_quant_dtype_arg(const std::string &text, const std::string &what);
OutputScaleRule parse_oscale_arg(const std::string &text, const std::string &what);

// The values of the quantization flags (--cfg, --oscale, --post-ops, ...: layer_options.h) and of
// a suite's fields of the same names. Unset fields leave the layer's own as they are.
struct QuantFlags {
    std::optional<deconv::DataTypes> cfg;
    std::optional<deconv::DType> src, wei, dst;
    std::optional<OutputScaleRule> oscale;
    std::optional<int32_t> src_zp, dst_zp;
    std::optional<deconv::DType> bias;
    std::string bias_file;  // run: --bias B.npy
    std::optional<std::vector<deconv::PostOp>> post_ops;
};
// Applies them to `layer`: --cfg replaces its three dtypes, --src-dtype and the others one each
// (starting from layer_types(layer)), the rest replace the layer's values.
void apply_quant_flags(const QuantFlags &f, LayerSpec &layer);
int32_t parse_zero_point_arg(const std::string &text, const std::string &what);
std::vector<deconv::PostOp> parse_post_ops_arg(const std::string &text, const std::string &what);

// The command line's name of an op: group_convolution_backprop_data, ...
const char *op_cli_name(deconv::Op op);

}  // namespace deconv_cli
