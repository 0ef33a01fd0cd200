// libFuzzer target: benchdnn descriptors (tools/deconv/problem_desc.cpp), the --desc flag.
// A descriptor is parsed, turned into its layer and printed back in the short form; the printed
// form must parse to the same layer (it is what bench prints for a layer to be rerun). Only
// UsageError may escape the parser.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "errors.h"
#include "problem_desc.h"

namespace {

bool same_layer(const deconv_cli::LayerSpec &a, const deconv_cli::LayerSpec &b) {
    return a.op == b.op && a.input_shape == b.input_shape && a.filter_shape == b.filter_shape &&
           a.output_shape == b.output_shape && a.attrs.strides == b.attrs.strides &&
           a.attrs.pads_begin == b.attrs.pads_begin && a.attrs.pads_end == b.attrs.pads_end &&
           a.attrs.dilations == b.attrs.dilations && a.attrs.output_padding == b.attrs.output_padding;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    deconv_cli::ProblemDesc desc;
    try {
        desc = deconv_cli::parse_problem_desc(text);
    } catch (const deconv_cli::UsageError &) {
        return 0;
    }
    deconv_cli::LayerSpec layer;
    try {
        layer = deconv_cli::problem_desc_to_layer(desc);
    } catch (const deconv_cli::UsageError &) {
        return 0;
    }
    const std::string printed = deconv_cli::format_problem_desc(desc);
    try {
        if (!same_layer(deconv_cli::problem_desc_to_layer(deconv_cli::parse_problem_desc(printed)), layer))
            std::abort();
    } catch (const deconv_cli::UsageError &) {
        std::abort();  // what format_problem_desc prints must parse
    }
    return 0;
}
