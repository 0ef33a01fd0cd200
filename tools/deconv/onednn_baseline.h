// oneDNN's deconvolution_forward (algorithm::deconvolution_direct; convolution_forward for the
// forward GroupConvolution) timed on the same layer, as the baseline `deconv bench` compares
// with. Compiled only when DECONV_WITH_ONEDNN is on and CMake finds the `dnnl` package (Debian:
// libdnnl-dev); DECONV_HAVE_ONEDNN says so.
//
// Mapping from our ops:
//   weights  ours ([G, C_in, C_out, K...], [C_in, C_out, K...], GroupConvolution's
//            [G, C_out, C_in, K...], ConvolutionBackwardData's OIX or XIO with its groups) ->
//            oneDNN [G, C_out, C_in, K...] (goi*; output channels first), or [C_out, C_in, K...]
//            (oi*) for ConvolutionBackpropData;
//   data     as our kernels take it: ncx (ncw/nchw/ncdhw) or nxc (nwc/nhwc/ndhwc);
//   pads     padding_l = the pads_begin shape inference resolved; padding_r follows from the
//            output size (it absorbs pads_end and output_padding, and may be negative);
//   dilation oneDNN counts from 0: d - 1.
// Two configurations are timed, reorders excluded: the plain layouts (the layer's data format,
// goi* weights) and format_tag::any (oneDNN's preferred layouts); the faster is
// reported; a configuration for which oneDNN only has its reference implementation (ref:any)
// is left out when the other has an optimised one (it would lose, and can take minutes per run).
// f32 layers run in f32; bf16/f16 layers in that dtype if oneDNN accepts it, else f32;
// integer and f64 layers in f32 (the dtype field says which ran).
#pragma once

#include <string>

#include "host_tensor.h"
#include "layer_spec.h"
#include "timing.h"

namespace deconv_cli {

struct OnednnTiming {
    bool ok = false;
    std::string error;         // why it did not run, when !ok
    std::string dtype;         // the dtype oneDNN ran in
    std::string dtype_note;    // e.g. "bf16 not supported by oneDNN here; ran f32"
    std::string format;        // "plain" or "any": the faster configuration
    std::string impl;          // oneDNN's implementation name for the reported configuration
    TimingStats stats;         // of the reported configuration
    double plain_ms = -1, any_ms = -1;  // medians; -1 where that configuration did not run
    std::string plain_impl, any_impl;   // implementation names ("" where oneDNN refused)
    std::string not_timed;              // a configuration left out because it was "ref:*"
    // The largest |oneDNN - ours| over the output, and the largest |ours|, when `ours` was given.
    double max_abs_diff = -1, max_abs_ours = -1;
};

// Whether this build has the oneDNN baseline, and its version ("2.6.3") or "".
bool onednn_available();
std::string onednn_version();

// Sets oneDNN's thread count (OpenMP: omp_set_num_threads) when > 0. Returns false if this build
// cannot set it (then OMP_NUM_THREADS in the environment is the way).
bool onednn_set_threads(int threads);

// Times oneDNN on `layer` (shapes resolved as `shape`), with our input `x` and filter `w` (in the
// layer's layouts and the compute dtype) as data. `ours`, when given, is our output to compare
// against.
OnednnTiming onednn_time(const LayerSpec &layer, const deconv::ShapeInfo &shape,
                         const HostTensor &x, const HostTensor &w, const HostTensor *ours,
                         const TimingOptions &timing);

}  // namespace deconv_cli
