#include "layer_selection.h"

#include <filesystem>
#include <iostream>

#include "errors.h"
#include "suite.h"

namespace deconv_cli {

LayerSelection select_layers(const LayerOptions &lo, const std::string &suite_flag, const std::string &dtype) {
    LayerSelection sel;
    const QuantFlags quant = parse_quant_flags(lo);  // bad values before any file is read
    std::string suite = suite_flag;
    bool has_layer_flags = false;
    for (CLI::Option *opt : lo.layer_flags()) has_layer_flags = has_layer_flags || (opt && opt->count() > 0);
    if (suite.empty() && !has_layer_flags) {
        // An installed binary may run where the source tree it was built from is gone.
        if (!std::filesystem::exists(default_suite_path()))
            throw UsageError(std::string("no --suite or layer given, and the default suite ") + default_suite_path() +
                             " is not there: name a suite with --suite FILE");
        suite = default_suite_path();
    }
    if (!suite.empty()) {
        if (has_layer_flags)
            throw UsageError("--suite cannot be combined with --layer, --layer-name, --desc, --op, shape "
                             "or attribute flags (pick suite layers with --only; --data-format applies "
                             "to every layer)");
        const std::optional<deconv::DataFormat> format = data_format_flag(lo);
        Suite s = load_suite(suite);
        for (const std::string &n : s.notes) std::cerr << "note: " << n << "\n";
        sel.layers = std::move(s.layers);
        sel.source = suite;
        if (format)
            for (LayerSpec &l : sel.layers) set_data_format(l, *format);
    } else {
        std::vector<std::string> notes;
        LayerSpec spec = resolve_layer(lo, notes);
        for (const std::string &n : notes) std::cerr << "note: " << n << "\n";
        if (spec.input_shape.empty() || spec.filter_shape.empty())
            throw UsageError("a layer is needed: --suite FILE, --layer FILE.xml, --desc, or "
                             "--input-shape and --filter-shape");
        if (spec.name.empty()) spec.name = "layer";
        sel.source = spec.origin.empty() ? "the command line" : spec.origin;
        sel.layers.push_back(std::move(spec));
    }
    if (!dtype.empty()) {
        if (type_flags_given(lo))
            throw UsageError("--dtype " + dtype + " cannot be combined with --cfg, --src-dtype, --wei-dtype or "
                             "--dst-dtype (--cfg " + dtype + " is the float layer with an epilogue)");
        const deconv::DType t = parse_dtype_arg(dtype, "--dtype");
        for (LayerSpec &l : sel.layers) {
            l.dtype = t;
            l.quant.types.reset();  // a suite entry's "cfg": --dtype names all three
        }
    }
    // The quantization flags apply to every layer (a single layer has them from resolve_layer).
    if (!suite.empty())
        for (LayerSpec &l : sel.layers) apply_quant_flags(quant, l);
    return sel;
}

std::vector<std::string> split_names(const std::string &list) {
    std::vector<std::string> names;
    std::string item;
    for (size_t i = 0; i <= list.size(); ++i) {
        if (i == list.size() || list[i] == ',') {
            if (!item.empty()) names.push_back(item);
            item.clear();
        } else {
            item.push_back(list[i]);
        }
    }
    return names;
}

}  // namespace deconv_cli
