// Schedule databases: tuned dispatch policies per layer and machine, in versioned JSON
// (docs/tuning.md has the format). Plan::create consults, in order, the files loaded with
// load_schedules (the last loaded first), the file named by DECONV_SCHEDULES, then the database
// compiled into the library from schedules/<arch>.json; without a matching entry the heuristics
// decide.
#pragma once

#include "deconv/deconv.h"
#include "plan/policy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace deconv {
namespace detail {

// What an entry is for: the layer after shape inference, and the machine.
struct ScheduleKey {
    Op op = Op::GroupConvolutionBackpropData;
    DType dtype = DType::f32;
    DataFormat data_format = DataFormat::NCX;
    std::string weights_format;  // ConvolutionBackwardData: "oix" or "xio"; else empty
    // Plans of separate tensor types (Plan::create with DataTypes): data_types_name, e.g.
    // "u8s8u8", `dtype` being the source's; empty for plans of one dtype.
    std::string types;
    std::vector<int64_t> input, filter, output, strides, pads_begin, pads_end, dilations, output_padding;
    std::string cpu_variant;  // cpu_variant()
    int threads = 0;          // cpu_threads()

    bool same_layer(const ScheduleKey &o) const;  // and the same variant and threads
};

struct ScheduleEntry {
    ScheduleKey key;
    std::string cpu;  // the CPU's model name where it was tuned
    Policy policy;
    std::string name;  // the layer's name in the tuned suite (informational)
    double tuned_ms = 0, default_ms = 0;
    std::string tuned_on;  // date
};

struct ScheduleMatch {
    ScheduleEntry entry;
    std::string source;  // "<file> entry <i>", "built-in entry <i>"
    bool exact = false;  // tuned on a CPU of the same model name
};

// The key of a layer on this machine now.
ScheduleKey schedule_key(Op op, DType dtype, const std::vector<int64_t> &input_shape,
                         const std::vector<int64_t> &filter_shape, const ShapeInfo &info, const Attributes &attrs);
// This CPU's model name ("unknown" where the system does not say).
const std::string &cpu_model_name();

// The entry for `key`, searching as described above (in each database, an entry tuned on a CPU of
// this model before any other); nullopt when none matches.
std::optional<ScheduleMatch> find_schedule(const ScheduleKey &key);

// Parses a database; throws Error naming `what` (the file) and the entry that is malformed.
std::vector<ScheduleEntry> parse_schedules(const std::string &text, const std::string &what);
std::string format_schedules(const std::vector<ScheduleEntry> &entries);
// Reads a database file (Error naming it when it cannot be read or parsed).
std::vector<ScheduleEntry> read_schedule_file(const std::string &path);
// Adds or replaces (same layer, machine and CPU model) `entries` in the database file at `path`, creating
// it, keeping every other entry; written to a temporary file and renamed over the old one.
void merge_schedule_file(const std::string &path, const std::vector<ScheduleEntry> &entries);

}  // namespace detail
}  // namespace deconv
