#include "machine.h"

#include <fstream>

namespace deconv_cli {

namespace {

// The value of the first line of /proc/cpuinfo whose key is `key` ("" where none is).
std::string cpuinfo_field(const std::string &key) {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string k = line.substr(0, colon);
        while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
        if (k != key) continue;
        size_t v = colon + 1;
        while (v < line.size() && line[v] == ' ') v++;
        return line.substr(v);
    }
    return "";
}

}  // namespace

std::string cpu_description() {
    std::string name = cpuinfo_field("model name");
    if (name.empty()) name = cpuinfo_field("Model name");
    const std::string family = cpuinfo_field("cpu family"), model = cpuinfo_field("model");
    if (name.empty()) name = "unknown CPU";
    if (!family.empty() && !model.empty()) name += " (family " + family + " model " + model + ")";
    return name;
}

}  // namespace deconv_cli
