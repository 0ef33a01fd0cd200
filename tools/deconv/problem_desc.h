// benchdnn-style deconvolution problem descriptors, e.g. "g4mb1ic20ih224oc8oh447kh3sh2ph1".
//
// Fields: g mb ic id ih iw oc od oh ow kd kh kw sd sh sw dd dh dw pd ph pw, then n"name" (the
// rest of the text; quotes are dropped). '_' may separate fields. As in benchdnn:
//   - ic and oc are TOTAL channels: C_in per group is ic/g, C_out per group is oc/g;
//   - defaults g=1, mb=2, s=1, d=0, p=0; a descriptor without g is ConvolutionBackpropData
//     (filter [ic, oc, K...]), one with g (even g1) GroupConvolutionBackpropData;
//   - the spatial rank is set by the deepest axis mentioned: a depth-only problem copies its
//     depth values to height and width, a height-only one copies height to width;
//   - a missing output is deduced: o = (i-1)*s + (k-1)*(d+1) - 2p + 1; a missing pad with a
//     given output: p = ((i-1)*s - o + (k-1)*(d+1) + 1) / 2; the right pad is then
//     pr = (i-1)*s + (k-1)*(d+1) + 1 - o - p.
//   - DILATION COUNTS FROM 0 in benchdnn (d0 = no dilation); the OpenVINO dilation is d+1.
// A negative pr (an output longer on the right than the pads allow) becomes output_padding.
#pragma once

#include <array>
#include <string>

#include "layer_spec.h"

namespace deconv_cli {

struct ProblemDesc {
    bool has_groups = false;
    int64_t g = 1, mb = 2, ic = 0, oc = 0;
    int spatial_rank = 0;  // 1..3
    // Spatial values in benchdnn's (d, h, w) order; only the last spatial_rank are used.
    std::array<int64_t, 3> i{}, o{}, k{}, s{}, d{}, p{}, pr{};
    std::string name;
};

// Throws UsageError naming the descriptor and the offending field.
ProblemDesc parse_problem_desc(const std::string &text);

// The short benchdnn form (defaults left out, "square" axes folded as benchdnn prints them).
std::string format_problem_desc(const ProblemDesc &desc);

// The equivalent layer (ncx): op, shapes and attributes (dilations d+1, pads_end pr, or
// output_padding -pr when pr < 0).
LayerSpec problem_desc_to_layer(const ProblemDesc &desc);

}  // namespace deconv_cli
