// One layer of the benchmark suite (bench/layers.json), as this tool needs it: the shapes and
// attributes of a GroupConvolutionBackpropData-1 layer. The tool measures f32 channels-first
// layers only, the form every autoscheduler sees the same way (one dtype, one memory order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace deconv_asb {

struct SuiteLayer {
    std::string name;
    int64_t n = 1, g = 1, c_in = 1, c_out = 1;
    std::vector<int64_t> x, k, strides, pads_begin, pads_end, dilations, output_padding;
    std::string dtype, layout;

    int rank() const { return (int)x.size(); }
    std::vector<int64_t> input_shape() const;   // [N, G*C_in, X..]
    std::vector<int64_t> filter_shape() const;  // [G, C_in, C_out, K..]
};

// The named layers of the suite at `path`, in the order asked; throws std::runtime_error
// naming a layer that is missing or not f32 channels-first.
std::vector<SuiteLayer> read_suite_layers(const std::string &path, const std::vector<std::string> &names);

}  // namespace deconv_asb
