#include "tuning/schedule_database.h"

#include "layer/messages.h"
#include "layer/op_geometry.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

namespace deconv {
namespace detail {

// The database compiled into the library (builtin_schedules.cpp, generated from schedules/).
extern const char *const kBuiltinSchedules;

namespace {

using nlohmann::json;

constexpr const char *kFormat = "deconv-schedules";
constexpr int kVersion = 1;

[[noreturn]] void bad(const std::string &what, const std::string &why) {
    throw Error(ErrorKind::InvalidArgument, "schedule database " + what + ": " + why);
}

std::vector<int64_t> ints(const json &j, const char *field, const std::string &where) {
    if (!j.contains(field) || !j.at(field).is_array()) bad(where, std::string("'") + field + "' must be an array of integers");
    std::vector<int64_t> v;
    for (const json &x : j.at(field)) {
        if (!x.is_number_integer()) bad(where, std::string("'") + field + "' holds " + x.dump() + ", not an integer");
        v.push_back(x.get<int64_t>());
    }
    return v;
}

std::string text(const json &j, const char *field, const std::string &where, bool required = true) {
    if (!j.contains(field)) {
        if (required) bad(where, std::string("'") + field + "' is missing");
        return "";
    }
    if (!j.at(field).is_string()) bad(where, std::string("'") + field + "' must be a string, not " + j.at(field).dump());
    return j.at(field).get<std::string>();
}

ScheduleEntry parse_entry(const json &e, const std::string &where) {
    if (!e.is_object()) bad(where, "is not an object");
    ScheduleEntry r;
    if (!e.contains("layer") || !e.at("layer").is_object()) bad(where, "'layer' must be an object");
    const json &l = e.at("layer");
    ScheduleKey &k = r.key;
    try {
        k.op = parse_op(text(l, "op", where));
        k.dtype = parse_dtype(text(l, "dtype", where));
        k.data_format = parse_data_format(text(l, "data_format", where));
    } catch (const Error &err) {
        bad(where, err.what());
    }
    k.weights_format = text(l, "weights_format", where, false);
    k.types = text(l, "types", where, false);
    if (!k.types.empty()) {
        try {
            parse_data_types(k.types);
        } catch (const Error &err) {
            bad(where, err.what());
        }
    }
    if (!k.weights_format.empty() && k.weights_format != "oix" && k.weights_format != "xio") {
        bad(where, "weights_format '" + k.weights_format + "' is neither oix nor xio");
    }
    k.input = ints(l, "input", where);
    k.filter = ints(l, "filter", where);
    k.output = ints(l, "output", where);
    k.strides = ints(l, "strides", where);
    k.pads_begin = ints(l, "pads_begin", where);
    k.pads_end = ints(l, "pads_end", where);
    k.dilations = ints(l, "dilations", where);
    k.output_padding = ints(l, "output_padding", where);
    if (!e.contains("machine") || !e.at("machine").is_object()) bad(where, "'machine' must be an object");
    const json &m = e.at("machine");
    k.cpu_variant = text(m, "cpu_variant", where);
    r.cpu = text(m, "cpu", where, false);
    if (!m.contains("threads") || !m.at("threads").is_number_integer() || m.at("threads").get<int64_t>() < 1 ||
        m.at("threads").get<int64_t>() > 4096) {
        bad(where, "'threads' must be an integer from 1 to 4096");
    }
    k.threads = (int)m.at("threads").get<int64_t>();
    if (!e.contains("policy") || !e.at("policy").is_object()) bad(where, "'policy' must be an object of knob: value");
    for (const auto &kv : e.at("policy").items()) {
        const json &v = kv.value();
        if (!v.is_string() && !v.is_number_integer()) {
            bad(where, "policy knob " + kv.key() + " has the value " + v.dump() + " (a string or an integer)");
        }
        try {
            set_policy_knob(r.policy, kv.key(), v.is_string() ? v.get<std::string>() : std::to_string(v.get<int64_t>()));
        } catch (const Error &err) {
            bad(where, err.what());
        }
    }
    r.name = text(e, "name", where, false);
    r.tuned_on = text(e, "tuned_on", where, false);
    for (auto [field, out] : {std::pair<const char *, double *>{"tuned_ms", &r.tuned_ms}, {"default_ms", &r.default_ms}}) {
        if (!e.contains(field)) continue;
        if (!e.at(field).is_number() || e.at(field).get<double>() < 0) bad(where, std::string("'") + field + "' must be a non-negative number");
        *out = e.at(field).get<double>();
    }
    return r;
}

json entry_json(const ScheduleEntry &r) {
    const ScheduleKey &k = r.key;
    json layer = {{"op", op_name(k.op)},
                  {"dtype", dtype_name(k.dtype)},
                  {"data_format", data_format_name(k.data_format)},
                  {"input", k.input},
                  {"filter", k.filter},
                  {"output", k.output},
                  {"strides", k.strides},
                  {"pads_begin", k.pads_begin},
                  {"pads_end", k.pads_end},
                  {"dilations", k.dilations},
                  {"output_padding", k.output_padding}};
    if (!k.weights_format.empty()) layer["weights_format"] = k.weights_format;
    if (!k.types.empty()) layer["types"] = k.types;
    json policy = json::object();
    for (const std::string &knob : policy_knobs()) {
        const std::string v = policy_knob_value(r.policy, knob);
        if (v != "auto") policy[knob] = v;
    }
    json e = {{"layer", layer},
              {"machine", {{"cpu_variant", k.cpu_variant}, {"cpu", r.cpu}, {"threads", k.threads}}},
              {"policy", policy}};
    if (!r.name.empty()) e["name"] = r.name;
    if (r.tuned_ms > 0) e["tuned_ms"] = r.tuned_ms;
    if (r.default_ms > 0) e["default_ms"] = r.default_ms;
    if (!r.tuned_on.empty()) e["tuned_on"] = r.tuned_on;
    return e;
}

// The databases Plan::create consults, most preferred first: loaded files (last loaded first),
// DECONV_SCHEDULES, the built-in one.
struct Databases {
    std::mutex lock;
    std::vector<std::pair<std::string, std::vector<ScheduleEntry>>> loaded;  // in load order
    std::vector<ScheduleEntry> environment, builtin;
    std::string environment_path;
};

Databases &databases() {
    static Databases *d = [] {
        auto *db = new Databases();
        db->builtin = parse_schedules(kBuiltinSchedules, "built-in");
        if (const char *path = std::getenv("DECONV_SCHEDULES"); path && *path) {
            db->environment_path = path;
            db->environment = read_schedule_file(path);
        }
        return db;
    }();
    return *d;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) bad(path, "cannot be opened");
    std::ostringstream s;
    s << in.rdbuf();
    if (in.bad()) bad(path, "cannot be read");
    return s.str();
}

}  // namespace

bool ScheduleKey::same_layer(const ScheduleKey &o) const {
    return op == o.op && dtype == o.dtype && data_format == o.data_format && weights_format == o.weights_format &&
           types == o.types &&
           input == o.input && filter == o.filter && output == o.output && strides == o.strides &&
           pads_begin == o.pads_begin && pads_end == o.pads_end && dilations == o.dilations &&
           output_padding == o.output_padding && cpu_variant == o.cpu_variant && threads == o.threads;
}

ScheduleKey schedule_key(Op op, DType dtype, const std::vector<int64_t> &input_shape,
                         const std::vector<int64_t> &filter_shape, const ShapeInfo &info, const Attributes &attrs) {
    ScheduleKey k;
    k.op = op;
    k.dtype = dtype;
    k.data_format = info.data_format;
    if (op == Op::ConvolutionBackwardData) k.weights_format = weights_format_name(attrs.weights_format.value_or(WeightsFormat::XIO));
    k.input = input_shape;
    k.filter = filter_shape;
    k.output = info.output_shape;
    k.strides = info.strides;
    k.pads_begin = info.pads_begin;
    k.pads_end = info.pads_end;
    k.dilations = info.dilations;
    k.output_padding = info.output_padding;
    k.cpu_variant = cpu_variant();
    k.threads = cpu_threads();
    return k;
}

const std::string &cpu_model_name() {
    static const std::string name = [] {
        std::ifstream in("/proc/cpuinfo");
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("model name", 0) == 0 || line.rfind("Model name", 0) == 0) {
                const size_t colon = line.find(':');
                if (colon != std::string::npos) {
                    std::string v = line.substr(colon + 1);
                    v.erase(0, v.find_first_not_of(" \t"));
                    return v;
                }
            }
        }
        return std::string("unknown");
    }();
    return name;
}

std::vector<ScheduleEntry> parse_schedules(const std::string &text, const std::string &what) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception &e) {
        bad(what, std::string("is not JSON (") + e.what() + ")");
    }
    if (!j.is_object()) bad(what, "must be a JSON object with format, version and entries");
    if (!j.contains("format") || j.at("format") != kFormat) bad(what, std::string("'format' must be \"") + kFormat + "\"");
    if (!j.contains("version") || !j.at("version").is_number_integer()) bad(what, "'version' must be an integer");
    if (j.at("version").get<int64_t>() != kVersion) {
        bad(what, "version " + j.at("version").dump() + " is not supported (this library reads version " +
                      std::to_string(kVersion) + ")");
    }
    if (!j.contains("entries") || !j.at("entries").is_array()) bad(what, "'entries' must be an array");
    std::vector<ScheduleEntry> entries;
    size_t i = 0;
    for (const json &e : j.at("entries")) {
        entries.push_back(parse_entry(e, what + ": entry " + std::to_string(i)));
        i++;
    }
    return entries;
}

std::string format_schedules(const std::vector<ScheduleEntry> &entries) {
    // One entry per line, so that a database diffs and merges line by line.
    std::string s = "{\"format\": \"" + std::string(kFormat) + "\", \"version\": " + std::to_string(kVersion) +
                    ", \"entries\": [\n";
    for (size_t i = 0; i < entries.size(); i++) s += "  " + entry_json(entries[i]).dump() + (i + 1 < entries.size() ? ",\n" : "\n");
    return s + "]}\n";
}

std::vector<ScheduleEntry> read_schedule_file(const std::string &path) { return parse_schedules(read_file(path), path); }

void merge_schedule_file(const std::string &path, const std::vector<ScheduleEntry> &entries) {
    std::vector<ScheduleEntry> all;
    if (std::ifstream(path).good()) all = read_schedule_file(path);  // a malformed file is never overwritten
    for (const ScheduleEntry &e : entries) {
        bool replaced = false;
        for (ScheduleEntry &o : all) {
            // Entries of one layer tuned on CPUs of different models live side by side: a
            // database shared by a team's machines keeps each machine's plan.
            if (o.key.same_layer(e.key) && o.cpu == e.cpu) {
                o = e;
                replaced = true;
            }
        }
        if (!replaced) all.push_back(e);
    }
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << format_schedules(all);
        out.flush();
        if (!out) {
            std::remove(tmp.c_str());
            throw Error(ErrorKind::InvalidArgument, "schedule database " + path + ": cannot write " + tmp);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw Error(ErrorKind::InvalidArgument, "schedule database " + path + ": cannot replace it with " + tmp);
    }
}

std::optional<ScheduleMatch> find_schedule(const ScheduleKey &key) {
    Databases &d = databases();
    const std::lock_guard<std::mutex> hold(d.lock);
    // Within one database: the last entry tuned on a CPU of this one's model, else the last entry
    // of the layer (valid on any CPU of the variant, perhaps not the best).
    const auto search = [&](const std::vector<ScheduleEntry> &entries, const std::string &what) -> std::optional<ScheduleMatch> {
        std::optional<size_t> any;
        for (size_t i = entries.size(); i-- > 0;) {
            if (!entries[i].key.same_layer(key)) continue;
            if (entries[i].cpu == cpu_model_name())
                return ScheduleMatch{entries[i], what + " entry " + std::to_string(i), true};
            if (!any) any = i;
        }
        if (!any) return std::nullopt;
        return ScheduleMatch{entries[*any], what + " entry " + std::to_string(*any), false};
    };
    for (size_t f = d.loaded.size(); f-- > 0;)
        if (auto m = search(d.loaded[f].second, d.loaded[f].first)) return m;
    if (auto m = search(d.environment, d.environment_path)) return m;
    return search(d.builtin, "built-in database");
}

}  // namespace detail

void load_schedules(const std::string &path) {
    std::vector<detail::ScheduleEntry> entries = detail::read_schedule_file(path);
    detail::Databases &d = detail::databases();
    const std::lock_guard<std::mutex> hold(d.lock);
    d.loaded.emplace_back(path, std::move(entries));
}

void clear_schedules() {
    detail::Databases &d = detail::databases();
    const std::lock_guard<std::mutex> hold(d.lock);
    d.loaded.clear();
}

}  // namespace deconv
