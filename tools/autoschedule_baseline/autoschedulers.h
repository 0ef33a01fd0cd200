// Halide 14's autoschedulers as Debian ships them: plugins (libautoschedule_<name>.so) that
// register themselves with Pipeline::add_autoscheduler when loaded.
#pragma once

#include "Halide.h"

#include <string>

namespace deconv_asb {

// The names Halide registers: "Adams2019", "Li2018", "Mullapudi2016".
bool is_autoscheduler(const std::string &name);

// Loads the plugin of `name` from `plugin_dir` once per process (a second registration of the
// same name is an error in Halide), then schedules `pipeline` with it for `target` and
// `machine`. Returns the schedule the autoscheduler wrote, as C++ source. Halide's errors
// propagate as Halide::Error.
std::string autoschedule(Halide::Pipeline &pipeline, const std::string &name, const std::string &plugin_dir,
                         const Halide::Target &target, const Halide::MachineParams &machine);

}  // namespace deconv_asb
