#include "plan/policy.h"

#include "deconv/deconv.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_registry.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace deconv {
namespace detail {

namespace {

// One knob: its name, the values a search tries, and how it reads and writes a Policy.
struct Knob {
    const char *name;
    std::vector<std::string> values;  // "auto" first
    std::function<std::string(const Policy &)> get;
    std::function<bool(Policy &, const std::string &)> set;  // false: not a value of this knob
};

template <typename E>
Knob enum_knob(const char *name, E Policy::*field, std::vector<std::pair<E, const char *>> names) {
    Knob k{name, {}, nullptr, nullptr};
    for (const auto &n : names) k.values.push_back(n.second);
    k.get = [field, names](const Policy &p) {
        for (const auto &n : names)
            if (p.*field == n.first) return std::string(n.second);
        return std::string("auto");
    };
    k.set = [field, names](Policy &p, const std::string &v) {
        for (const auto &n : names) {
            if (v == n.second) {
                p.*field = n.first;
                return true;
            }
        }
        return false;
    };
    return k;
}

Knob toggle_knob(const char *name, Toggle Policy::*field) {
    return enum_knob<Toggle>(name, field, {{Toggle::Auto, "auto"}, {Toggle::Off, "off"}, {Toggle::On, "on"}});
}

// -1 prints as "auto"; `limit` bounds what a database or the environment may ask for.
Knob count_knob(const char *name, int64_t Policy::*field, std::vector<std::string> search, int64_t limit) {
    Knob k{name, std::move(search), nullptr, nullptr};
    k.get = [field](const Policy &p) { return p.*field < 0 ? std::string("auto") : std::to_string(p.*field); };
    k.set = [field, limit](Policy &p, const std::string &v) {
        if (v == "auto") {
            p.*field = -1;
            return true;
        }
        if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return false;
        const int64_t n = std::atoll(v.c_str());
        if (n > limit) return false;
        p.*field = n;
        return true;
    };
    return k;
}

// The CPU implementations by name, in the order of dispatch/implementations.cpp's list (a test
// holds the two equal).
const char *const kImplementationNames[] = {"as_f32",     "as_f64",     "winograd",      "channels_last_twin",
                                            "channels_first_twin", "batch_rows", "phase_kernels"};

Knob implementation_knob() {
    Knob k{"implementation", {"auto"}, nullptr, nullptr};
    for (const char *name : kImplementationNames) k.values.push_back(name);
    k.get = [](const Policy &p) { return p.implementation.empty() ? std::string("auto") : p.implementation; };
    k.set = [](Policy &p, const std::string &v) {
        if (v == "auto") {
            p.implementation.clear();
            return true;
        }
        for (const char *name : kImplementationNames) {
            if (v == name) {
                p.implementation = v;
                return true;
            }
        }
        return false;
    };
    return k;
}

// DECONV_CPU_VARIANT's place in the variant order (cpu_variant_rank), 0 where unset or unknown:
// a cap for testing the lower variants on a bigger CPU.
int variant_cap() {
    static const int cap = [] {
        const char *env = std::getenv("DECONV_CPU_VARIANT");
        return env && *env ? std::max(0, cpu_variant_rank(env)) : 0;
    }();
    return cap;
}

// The CPU variant: a search over the built variants this CPU runs, up to DECONV_CPU_VARIANT (a
// capped tuning searched avx512 on an AVX-512 machine and filed it as the avx2 machine's best:
// dilated_s1 "2.01x"); any variant name parses (a plan pinned to one this build or CPU lacks is
// refused when it is made, naming it).
Knob cpu_variant_knob() {
    Knob k{"cpu_variant", {"auto"}, nullptr, nullptr};
    for (const std::string &v : built_cpu_variants())
        if (cpu_supports_variant(v) && cpu_variant_rank(v) >= variant_cap()) k.values.push_back(v);
    k.get = [](const Policy &p) { return p.cpu_variant.empty() ? std::string("auto") : p.cpu_variant; };
    k.set = [](Policy &p, const std::string &v) {
        if (v == "auto") {
            p.cpu_variant.clear();
            return true;
        }
        if (cpu_variant_rank(v) < 0) return false;
        p.cpu_variant = v;
        return true;
    };
    return k;
}

const std::vector<Knob> &knobs() {
    using R = Policy::Route;
    using I = Policy::Interleave;
    // The algorithm first: the tuner searches knobs in this order, each on the last winner, and the
    // Winograd path's knobs refine it where the direct kernels' leave it as it is.
    static const std::vector<Knob> table = {
        enum_knob<Policy::Algorithm>("algorithm", &Policy::algorithm,
                                     {{Policy::Algorithm::Auto, "auto"},
                                      {Policy::Algorithm::Direct, "direct"},
                                      {Policy::Algorithm::Winograd, "winograd"}}),
        count_knob("winograd_tile", &Policy::winograd_tile, {"auto", "2", "4"}, 4),
        count_knob("winograd_slice_kib", &Policy::winograd_slice_kib, {"auto", "1024", "16384"}, 1 << 22),
        implementation_knob(),
        enum_knob<R>("route", &Policy::route,
                     {{R::Auto, "auto"},
                      {R::Positions, "positions"},
                      {R::Channels, "channels"},
                      {R::ChannelsLast, "channels_last"},
                      {R::ChannelsFirst, "channels_first"},
                      {R::Groups, "groups"}}),
        enum_knob<I>("interleave", &Policy::interleave,
                     {{I::Auto, "auto"}, {I::Off, "off"}, {I::Plain, "plain"}, {I::Blocked, "blocked"}}),
        toggle_knob("bordered_input", &Policy::bordered_input),
        toggle_knob("batch_rows", &Policy::batch_rows),
        toggle_knob("bf16_dot", &Policy::bf16_dot),
        enum_knob<Policy::QuantDots>("quant_dots", &Policy::quant_dots,
                                     {{Policy::QuantDots::Auto, "auto"},
                                      {Policy::QuantDots::Off, "off"},
                                      {Policy::QuantDots::Quads, "quads"},
                                      {Policy::QuantDots::Pairs, "pairs"}}),
        toggle_knob("short_phase", &Policy::short_phase),
        toggle_knob("interleaved_tail", &Policy::interleaved_tail),
        toggle_knob("exact_groups", &Policy::exact_groups),
        toggle_knob("channels_in_rows", &Policy::channels_in_rows),
        toggle_knob("edge_windows", &Policy::edge_windows),
        toggle_knob("exact_row_tiles", &Policy::exact_row_tiles),
        toggle_knob("serial", &Policy::serial),
        toggle_knob("zero_first", &Policy::zero_first),
        toggle_knob("group_major", &Policy::group_major),
        toggle_knob("group_blocks", &Policy::group_blocks),
        toggle_knob("tap_windows", &Policy::tap_windows),
        toggle_knob("flat_rows", &Policy::flat_rows),
        toggle_knob("phase_tasks", &Policy::phase_tasks),
        toggle_knob("tap_rows", &Policy::tap_rows),
        count_knob("channel_block", &Policy::channel_block, {"auto", "0", "16", "32", "64", "128", "192", "256"}, 1 << 20),
        count_knob("group_slices", &Policy::group_slices, {"auto", "0", "1", "2", "4"}, 1024),
        count_knob("row_slabs", &Policy::row_slabs, {"auto", "0", "1", "2", "4", "8", "16"}, 1 << 20),
        // The channels-last schedule's own branches take 4 positions and 1 vector: variants with
        // those would repeat a branch (cmake/DeconvSchedules.cmake refuses them).
        count_knob("kernel_q_tile", &Policy::kernel_q_tile, {"auto", "3", "5", "6", "7", "8"}, 16),
        count_knob("kernel_vectors", &Policy::kernel_vectors, {"auto", "2", "3", "4"}, 8),
        cpu_variant_knob(),
    };
    return table;
}

const Knob &knob(const std::string &name) {
    for (const Knob &k : knobs())
        if (name == k.name) return k;
    std::string known;
    for (const Knob &k : knobs()) known += std::string(known.empty() ? "" : ", ") + k.name;
    throw Error(ErrorKind::InvalidArgument, "unknown schedule knob '" + name + "' (known: " + known + ")");
}

}  // namespace

bool Policy::operator==(const Policy &o) const {
    for (const Knob &k : knobs())
        if (k.get(*this) != k.get(o)) return false;
    return true;
}

std::vector<std::string> policy_knobs() {
    std::vector<std::string> names;
    for (const Knob &k : knobs()) names.push_back(k.name);
    return names;
}

std::vector<std::string> policy_knob_values(const std::string &name) { return knob(name).values; }

void set_policy_knob(Policy &p, const std::string &name, const std::string &value) {
    const Knob &k = knob(name);
    if (!k.set(p, value)) {
        std::string values;
        for (const std::string &v : k.values) values += (values.empty() ? "" : ", ") + v;
        throw Error(ErrorKind::InvalidArgument, "schedule knob " + name + " does not take the value '" + value +
                                                    "' (values: " + values + (k.values.back()[0] >= '0' && k.values.back()[0] <= '9' ? ", or another count" : "") + ")");
    }
}

std::string policy_knob_value(const Policy &p, const std::string &name) { return knob(name).get(p); }

std::string format_policy(const Policy &p) {
    std::string s;
    for (const Knob &k : knobs()) {
        const std::string v = k.get(p);
        if (v != "auto") s += (s.empty() ? "" : " ") + std::string(k.name) + "=" + v;
    }
    return s;
}

Policy parse_policy(const std::string &text, const std::string &what) {
    Policy p;
    size_t at = 0;
    while (at < text.size()) {
        const size_t end = std::min(text.find_first_of(" ,", at), text.size());
        const std::string item = text.substr(at, end - at);
        at = end + 1;
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
            throw Error(ErrorKind::InvalidArgument, what + ": '" + item + "' is not knob=value");
        }
        try {
            set_policy_knob(p, item.substr(0, eq), item.substr(eq + 1));
        } catch (const Error &e) {
            throw Error(ErrorKind::InvalidArgument, what + ": " + e.what());
        }
    }
    return p;
}

Policy overlay(Policy base, const Policy &over) {
    for (const Knob &k : knobs()) {
        const std::string v = k.get(over);
        if (v != "auto") k.set(base, v);
    }
    return base;
}

Policy policy_from_environment() {
    Policy p;
    const auto env = [](const char *name) -> const char * {
        const char *v = std::getenv(name);
        return v && *v ? v : nullptr;
    };
    // Switches that turn a path off with "0".
    const std::pair<const char *, const char *> offs[] = {
        {"DECONV_BORDERED_INPUT", "bordered_input"}, {"DECONV_BATCH_ROWS", "batch_rows"},
        {"DECONV_BF16_DOT", "bf16_dot"},             {"DECONV_SHORT_PHASE", "short_phase"},
        {"DECONV_INTERLEAVED_TAIL", "interleaved_tail"}, {"DECONV_EXACT_ROWS", "exact_groups"},
        {"DECONV_CHANNELS_IN_ROWS", "channels_in_rows"}, {"DECONV_EDGE_WINDOWS", "edge_windows"},
        {"DECONV_EXACT_ROW_TILES", "exact_row_tiles"},   {"DECONV_CHANNEL_BLOCKS", "channel_block"},
        {"DECONV_SERIAL_MACS", "serial"},
        {"DECONV_GROUP_MAJOR", "group_major"},           {"DECONV_TAP_WINDOWS", "tap_windows"},
        {"DECONV_GROUP_BLOCKS", "group_blocks"},
        {"DECONV_TAP_ROWS", "tap_rows"},
    };
    for (const auto &o : offs) {
        const char *v = env(o.first);
        if (v && std::strcmp(v, "0") == 0) set_policy_knob(p, o.second, std::strcmp(o.second, "channel_block") ? "off" : "0");
    }
    if (const char *v = env("DECONV_NCX_SCHEDULE")) {
        // The channels-first kernels pinned also keep the layer off the blocked interleaved kernel.
        if (std::strcmp(v, "positions") == 0 || std::strcmp(v, "channels") == 0) {
            set_policy_knob(p, "route", v);
            if (p.interleave == Policy::Interleave::Auto) p.interleave = Policy::Interleave::Plain;
        } else if (std::strcmp(v, "channels_last") == 0) {
            p.route = Policy::Route::ChannelsLast;
        }
    }
    if (const char *v = env("DECONV_GROUP_SLICES")) {
        if (std::atoll(v) >= 0 && std::strlen(v) <= 4) p.group_slices = std::atoll(v);
    }
    if (const char *v = env("DECONV_ROW_SLABS")) {
        if (std::atoll(v) >= 0 && std::strlen(v) <= 6) p.row_slabs = std::atoll(v);
    }
    return p;
}

const std::string &default_cpu_variant() {
    static const std::string variant = [] {
        for (const std::string &b : built_cpu_variants())
            if (cpu_variant_rank(b) >= variant_cap() && cpu_supports_variant(b)) return b;
        return std::string("none");
    }();
    return variant;
}

std::string missing_cpu_variant_reason() {
    if (default_cpu_variant() != "none") return "";
    std::string built;
    for (const std::string &b : built_cpu_variants()) built += (built.empty() ? "" : ", ") + b;
    const int cap = variant_cap();
    return "this library's CPU kernels are built for " + built + " only, which " +
           (cap > 0 ? "DECONV_CPU_VARIANT=" + cpu_variant_names()[cap] + " or this CPU" : std::string("this CPU")) +
           " does not allow: a library built with -DDECONV_CPU_VARIANTS=native runs on CPUs like its build "
           "machine's; build with -DDECONV_CPU_VARIANTS=all for every variant";
}

bool verbose_plans() {
    static const bool on = [] {
        const char *v = std::getenv("DECONV_VERBOSE");
        return v && *v && std::strcmp(v, "0") != 0;
    }();
    return on;
}

}  // namespace detail
}  // namespace deconv

namespace deconv {
std::string cpu_variant() { return detail::default_cpu_variant(); }
}  // namespace deconv
