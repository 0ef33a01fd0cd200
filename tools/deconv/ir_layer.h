// OpenVINO IR layers: a file holding a single <layer> element (as in the spec's examples) or a
// whole IR model (<net> with <layers> and <edges>), of type GroupConvolutionBackpropData,
// ConvolutionBackpropData or GroupConvolution (the forward op). Reads the type, the <data> attributes
// (strides, pads_begin, pads_end, dilations, auto_pad, output_padding), the input port dims
// (port 0 data, port 1 filter, optional port 2 output_shape) and the output port dims.
//
// output_shape (input port 2) is resolved from the Const layer that feeds it: its "value"
// attribute if present, else its bytes in the model's .bin file (offset/size/element_type).
// When that is impossible, the spatial dims of the output port stand in, and `notes` says so;
// with neither, loading fails and says so.
#pragma once

#include <string>
#include <vector>

#include "layer_spec.h"

namespace deconv_cli {

struct IrLayer {
    LayerSpec spec;                  // op, shapes, attrs, output_shape, dtype, declared_output
    std::vector<std::string> notes;  // how output_shape was resolved, if it was not a Const
};

// The layer in `path`: the single <layer>, or in a <net> the layer named `layer_name` (which
// may be omitted when the model has exactly one layer of the types above). Throws IoError for files
// that cannot be read or parsed as XML, UsageError for bad content.
IrLayer load_ir_layer(const std::string &path, const std::string &layer_name);

// Every GroupConvolutionBackpropData / ConvolutionBackpropData / GroupConvolution layer of the
// file, in order.
std::vector<IrLayer> load_ir_deconv_layers(const std::string &path);

// True if `path` ends in ".xml" (case-insensitive).
bool is_xml_path(const std::string &path);

}  // namespace deconv_cli
