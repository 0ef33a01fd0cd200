// One layer to run, check or time, whatever it came from (flags, an IR layer, a benchdnn
// descriptor, a suite entry): the op, the ncx shapes, the attributes, the optional spatial
// output_shape, and what the source said about dtype and layout.
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
    bool op_fixed = false;  // the source named the op; otherwise the filter rank decides it
    Dims input_shape;   // [N, G*C_in, X1..XD]   (ncx)
    Dims filter_shape;  // [G, C_in, C_out, K1..KD] or [C_in, C_out, K1..KD]
    deconv::Attributes attrs;
    std::optional<Dims> output_shape;  // spatial, the spec's optional input 3
    std::optional<deconv::DType> dtype;
    std::string layout = "ncx";  // "ncx" or "nxc"
    bool scale = false;          // suite: a large one-off layer, skipped by default
    // The output dims the source declares (an IR's output port), checked against shape
    // inference; empty when unknown or when flags changed the shapes.
    Dims declared_output;
};

// The op a filter rank implies next to an input rank: equal ranks mean ConvolutionBackpropData,
// anything else GroupConvolutionBackpropData (whose checks then name the bad rank).
deconv::Op op_for_ranks(size_t input_rank, size_t filter_rank);

// "1x20x224x224 * 4x5x2x3x3": the input and filter shapes on one line.
std::string describe_shapes(const LayerSpec &layer);

// N*G*C_in*C_out*prod(X)*prod(K): the nominal multiply-accumulate count (as the suite defines
// it). Returns a double: it is only used for rates.
double nominal_macs(const LayerSpec &layer);

// Sets op from the ranks unless op_fixed.
void settle_op(LayerSpec &layer);

// Throws UsageError if the source declared output dims (all static) that differ from `inferred`.
void check_declared_output(const LayerSpec &layer, const Dims &inferred);

// Rethrows a library error with the layer's origin in front of its message (same kind).
[[noreturn]] void rethrow_with_origin(const deconv::Error &e, const LayerSpec &layer);

// Parses a dtype name through the library, turning its error into a UsageError naming `what`.
deconv::DType parse_dtype_arg(const std::string &name, const std::string &what);

}  // namespace deconv_cli
