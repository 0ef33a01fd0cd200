#include "autoschedulers.h"

#include <cctype>
#include <set>

namespace deconv_asb {

bool is_autoscheduler(const std::string &name) {
    return name == "Adams2019" || name == "Li2018" || name == "Mullapudi2016";
}

std::string autoschedule(Halide::Pipeline &pipeline, const std::string &name, const std::string &plugin_dir,
                         const Halide::Target &target, const Halide::MachineParams &machine) {
    static std::set<std::string> loaded;
    if (!loaded.count(name)) {
        std::string file = name;
        for (char &c : file) c = (char)std::tolower((unsigned char)c);
        Halide::load_plugin(plugin_dir + "/libautoschedule_" + file + ".so");
        loaded.insert(name);
    }
    return pipeline.auto_schedule(name, target, machine).schedule_source;
}

}  // namespace deconv_asb
