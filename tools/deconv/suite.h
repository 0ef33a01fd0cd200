// Benchmark suites: a JSON file in the format of bench/layers.json, or every
// deconvolution layer of an OpenVINO IR model (.xml).
//
// JSON layer fields (C_in and C_out per group of the op's input and output; the input is
// [N, G*C_in, X...], or [N, X..., G*C_in] with layout "nxc"):
//   required  name, N, G, C_in, C_out, X (spatial input), K (kernel)
//   optional  strides, pads_begin, pads_end, dilations, output_padding (default: the spec's),
//             auto_pad ("explicit"), output_shape, dtype ("f32"), layout ("ncx"|"nxc": the
//             data_format the layer runs in), scale (false: large one-off layers), op (any name
//             deconv::parse_op takes; default GroupConvolutionBackpropData, filter
//             [G, C_in, C_out, K...]; ConvolutionBackpropData: [C_in, C_out, K...] with G = 1;
//             GroupConvolution: [G, C_out, C_in, K...]; ConvolutionBackwardData: groups G,
//             weights XIO [K..., C_out, G*C_in] or, with "weights_format": "oix",
//             [G*C_in, C_out, K...]; its output_shape is the full diff_src shape, ncx)
//   quantization and epilogue (the flags' syntax, layer_options.h; flags given override them):
//             cfg ("u8s8u8"), src_dtype, wei_dtype, dst_dtype, oscale ("per_oc:0.25"), src_zp,
//             dst_zp (integers), bias (a dtype), post_ops ("relu;sum:0.5" or ["relu", "sum:0.5"])
//   ignored   anything else (source, macs, ...)
#pragma once

#include <string>
#include <vector>

#include "layer_spec.h"

namespace deconv_cli {

struct Suite {
    std::string path;
    std::vector<LayerSpec> layers;
    std::vector<std::string> notes;  // from IR loading
};

// Throws IoError (unreadable, not JSON/XML) or UsageError (a field with a bad value, naming it).
Suite load_suite(const std::string &path);

}  // namespace deconv_cli
