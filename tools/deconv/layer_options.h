// The flags that describe one layer, shared by run, infer-shape and bench:
//   --layer FILE.xml [--layer-name NAME]   an OpenVINO IR layer or model
//   --desc DESCRIPTOR                      a benchdnn-style descriptor
//   --op NAME                              the op (default: from the ranks, see layer_spec.h)
//   --input-shape, --filter-shape, --output-shape, --strides, --pads-begin, --pads-end,
//   --dilations, --auto-pad, --output-padding
//   --data-format (alias --layout)          ncx|nxc, every op
//   --groups, --weights-format, --dst-shape ConvolutionBackwardData's attributes
// and, for run and bench (add_quant_options), a quantized layer or one with an epilogue:
//   --cfg u8s8u8 | --src-dtype, --wei-dtype, --dst-dtype   the tensors' dtypes
//   --oscale per_tensor:V|per_oc:V, --src-zp N, --dst-zp N, --bias DTYPE, --post-ops LIST
// Flags given beside --layer or --desc override the values those give (--data-format nxc
// reorders the shapes those give, which are ncx).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "layer_spec.h"

namespace deconv_cli {

struct LayerOptions {
    std::string layer_file, layer_name, desc;
    std::string input_shape, filter_shape, output_shape;
    std::string strides, pads_begin, pads_end, dilations, output_padding, auto_pad;
    std::string op, data_format, weights_format, groups, dst_shape;

    CLI::Option *o_input_shape = nullptr, *o_filter_shape = nullptr, *o_output_shape = nullptr;
    CLI::Option *o_strides = nullptr, *o_pads_begin = nullptr, *o_pads_end = nullptr;
    CLI::Option *o_dilations = nullptr, *o_output_padding = nullptr, *o_auto_pad = nullptr;
    CLI::Option *o_layer = nullptr, *o_layer_name = nullptr, *o_desc = nullptr;
    CLI::Option *o_op = nullptr, *o_data_format = nullptr, *o_weights_format = nullptr;
    CLI::Option *o_groups = nullptr, *o_dst_shape = nullptr;

    // Quantization and epilogue flags (add_quant_options; they apply to every layer of a suite).
    std::string cfg, src_dtype, wei_dtype, dst_dtype, oscale, src_zp, dst_zp, bias, post_ops;
    CLI::Option *o_cfg = nullptr, *o_src_dtype = nullptr, *o_wei_dtype = nullptr, *o_dst_dtype = nullptr;
    CLI::Option *o_oscale = nullptr, *o_src_zp = nullptr, *o_dst_zp = nullptr, *o_bias = nullptr;
    CLI::Option *o_post_ops = nullptr;
    bool bias_file_ok = false;  // run: --bias B.npy

    // The flags that describe one layer (not --data-format, which also applies to a suite).
    std::vector<CLI::Option *> layer_flags() const;
};

// Rejects an explicitly empty (or all-blank) value of a list-valued flag (--strides '' and the
// like): left out, such a flag takes its default; given empty, it is a mistake, not a request
// for the default. CLI11 reports it as "--strides: ...", naming the flag.
extern const CLI::Validator NonEmptyList;

// Registers the flags on `app` (run takes its shapes from the .npy files, but accepts
// --input-shape/--filter-shape for --random).
void add_layer_options(CLI::App &app, LayerOptions &o);

// Registers the quantization and epilogue flags (run and bench). `run`: --bias also takes a
// B.npy file.
void add_quant_options(CLI::App &app, LayerOptions &o, bool run);

// Whether any of those flags was given, and whether one of the dtype flags (--cfg, --src-dtype,
// --wei-dtype, --dst-dtype) was.
bool quant_flags_given(const LayerOptions &o);
bool type_flags_given(const LayerOptions &o);

// The quantization flags' values, parsed (UsageError naming the flag and the value): QuantFlags
// (layer_spec.h).
QuantFlags parse_quant_flags(const LayerOptions &o);

// The layer the flags describe. Shapes may be empty when no flag or source gives them (the
// caller then takes them from files, or reports what is missing). Notes from IR loading are
// appended to `notes`.
LayerSpec resolve_layer(const LayerOptions &o, std::vector<std::string> &notes);

// The data format --data-format (or --layout) gives, if given; throws UsageError on a bad name.
std::optional<deconv::DataFormat> data_format_flag(const LayerOptions &o);

}  // namespace deconv_cli
