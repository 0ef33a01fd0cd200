// Benchmark suites: a JSON file in the format of shared/bench/layers.json, or every
// deconvolution layer of an OpenVINO IR model (.xml).
//
// JSON layer fields (C_in and C_out per group; filter [G, C_in, C_out, K...]):
//   required  name, N, G, C_in, C_out, X (spatial input), K (kernel)
//   optional  strides, pads_begin, pads_end, dilations, output_padding (default: the spec's),
//             auto_pad ("explicit"), output_shape (spatial), dtype ("f32"), layout ("ncx"|"nxc"),
//             scale (false: large one-off layers), op ("GroupConvolutionBackpropData" or
//             "ConvolutionBackpropData", whose filter is [C_in, C_out, K...] with G = 1)
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
