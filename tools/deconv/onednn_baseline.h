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
//
// Quantized layers and layers with an epilogue (OnednnEpilogue):
//   quantized (u8/i8 data): oneDNN's own int8 deconvolution: the same src dtype (u8 or s8), s8
//     weights, the same dst dtype (u8, s8, s32, f32 or bf16), the bias (f32 or s32), the output
//     scales (primitive_attr::set_output_scales, mask 0 per tensor, 1<<1 per output channel), the
//     zero points (set_zero_points on DNNL_ARG_SRC / DNNL_ARG_DST, run-time values where oneDNN
//     takes them, else constant ones) and the post-ops (append_eltwise(1, alg, alpha, beta),
//     append_sum(scale[, zero_point])). The weights are always format_tag::any: explicit weights
//     layouts send oneDNN to its reference kernel (oneDNN issue 1355). The configurations are
//     "plain" (the layer's data format, weights any) and "any".
//   float with an epilogue: each configuration twice, "fused" (bias and the epilogue as oneDNN
//     attributes; oneDNN 2.6 applies a deconvolution's post-ops in a reference loop) and "+pass"
//     (the plain deconvolution, then a separate vectorised, OpenMP-parallel pass of bias, scales
//     and eltwise post-ops over its output, timed inside the same run; f32 only, and not with a
//     sum post-op). The faster is reported, both are kept (fused_ms, pass_ms).
// A sum post-op reads the output's earlier contents: oneDNN's output starts from `dst_init` for
// the compared run, as ours did.
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
    // Float layers with an epilogue: the best fused and "+pass" medians (-1: not timed) and
    // their implementations; why "+pass" was not timed, if it was not.
    double fused_ms = -1, pass_ms = -1;
    std::string fused_impl, pass_impl, pass_note;
    // Quantized layers: the zero points went to oneDNN as run-time values (else as constants).
    bool runtime_zero_points = false;
};

// What a quantized layer or one with an epilogue adds (the library's terms; scales materialised).
struct OnednnEpilogue {
    deconv::DataTypes types;
    deconv::Epilogue epilogue;
    const HostTensor *bias = nullptr;      // output-channel values of epilogue.bias's dtype
    const HostTensor *dst_init = nullptr;  // the output's earlier contents (our layout, dst dtype)
};

// Whether this build has the oneDNN baseline, and its version ("2.6.3") or "".
bool onednn_available();
std::string onednn_version();

// Sets oneDNN's thread count (OpenMP: omp_set_num_threads) when > 0. Returns false if this build
// cannot set it (then OMP_NUM_THREADS in the environment is the way).
bool onednn_set_threads(int threads);

// Times oneDNN on `layer` (shapes resolved as `shape`), with our input `x` and filter `w` (in the
// layer's layouts and the compute dtype, or the src and weights dtypes) as data. `ours`, when
// given, is our output to compare against. `epi`: the layer's quantization and epilogue.
OnednnTiming onednn_time(const LayerSpec &layer, const deconv::ShapeInfo &shape,
                         const HostTensor &x, const HostTensor &w, const HostTensor *ours,
                         const TimingOptions &timing, const OnednnEpilogue *epi = nullptr);

}  // namespace deconv_cli
