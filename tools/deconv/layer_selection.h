// The layers a command times or tunes: every layer of a suite (--suite FILE.json | FILE.xml, by
// default the source tree's bench/layers.json) or the one layer the flags name, with --dtype
// applied. Shared by `bench` and `tune`.
#pragma once

#include <string>
#include <vector>

#include "layer_options.h"
#include "layer_spec.h"

namespace deconv_cli {

struct LayerSelection {
    std::vector<LayerSpec> layers;
    std::string source;  // the suite's path, or what the one layer came from
};

// `suite` empty and no layer flags: the default suite. UsageError for flags that do not go
// together or name no layer; IoError for a suite that cannot be read.
LayerSelection select_layers(const LayerOptions &layer, const std::string &suite, const std::string &dtype);

// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_names(const std::string &list);

// The source tree's bench/layers.json, where the binary was built (generated: default_suite.cpp).
const char *default_suite_path();

}  // namespace deconv_cli
