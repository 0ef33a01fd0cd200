// Schedule databases: the file format round-trips, merging keeps other layers' (and other CPU
// models') entries, a lookup prefers this CPU model's entry, every malformed database is refused
// naming the file and the entry, and a matching entry is what Plan::create runs (describe() names
// it).
#include "tuning/schedule_database.h"
#include "kernels/halide_glue.h"

#include "deconv/tuning.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

namespace {

using deconv::detail::ScheduleEntry;

// A file in the test's temporary folder, removed at the end.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string &name) : path(testing::TempDir() + name + "." + std::to_string(getpid())) {
        std::remove(path.c_str());
    }
    ~TempFile() { std::remove(path.c_str()); }
    void write(const std::string &text) const { std::ofstream(path) << text; }
    std::string read() const {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
};

// The spec's 2D example layer, small: 1 image, 2 groups of 4 -> 3 channels, 6x6, kernel 3 stride 2.
const std::vector<int64_t> kIn = {1, 8, 6, 6}, kW = {2, 4, 3, 3, 3};
deconv::Attributes example_attrs() {
    deconv::Attributes a;
    a.strides = {2, 2};
    a.pads_begin = {1, 1};
    a.pads_end = {1, 1};
    a.output_padding = {1, 1};
    return a;
}

ScheduleEntry example_entry(const std::string &policy) {
    const deconv::ShapeInfo info =
        deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData, kIn, kW, example_attrs());
    ScheduleEntry e;
    e.key = deconv::detail::schedule_key(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32, kIn, kW, info,
                                         example_attrs());
    e.cpu = deconv::detail::cpu_model_name();
    e.policy = deconv::detail::parse_policy(policy, "test");
    e.name = "example";
    e.tuned_ms = 0.5;
    e.default_ms = 0.75;
    e.tuned_on = "2026-11-26";
    return e;
}

std::string error_of(const std::string &text, const std::string &what = "db.json") {
    try {
        deconv::detail::parse_schedules(text, what);
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument);
        return e.what();
    }
    return "no error";
}

const char *kHead = R"({"format": "deconv-schedules", "version": 1, "entries": [)";

TEST(ScheduleDatabase, RoundTrip) {
    const std::vector<ScheduleEntry> entries = {example_entry("route=channels_last channel_block=64"),
                                                example_entry("")};
    const std::string text = deconv::detail::format_schedules(entries);
    const std::vector<ScheduleEntry> back = deconv::detail::parse_schedules(text, "text");
    ASSERT_EQ(back.size(), 2u);
    EXPECT_TRUE(back[0].key.same_layer(entries[0].key));
    EXPECT_EQ(back[0].policy, entries[0].policy);
    EXPECT_EQ(back[0].cpu, entries[0].cpu);
    EXPECT_EQ(back[0].name, "example");
    EXPECT_DOUBLE_EQ(back[0].tuned_ms, 0.5);
    EXPECT_DOUBLE_EQ(back[0].default_ms, 0.75);
    EXPECT_EQ(back[0].tuned_on, "2026-11-26");
    EXPECT_TRUE(back[1].policy.all_auto());
    EXPECT_EQ(deconv::detail::format_schedules(back), text);
}

// An entry of separate tensor types ("types", the quantized layers') round-trips, is another
// layer than the same shape's plain entry, and a malformed one is refused naming the entry.
TEST(ScheduleDatabase, TypedEntries) {
    ScheduleEntry typed = example_entry("quant_dots=pairs");
    typed.key.dtype = deconv::DType::u8;
    typed.key.types = "u8s8u8";
    const std::string text = deconv::detail::format_schedules({typed});
    EXPECT_NE(text.find("\"types\":\"u8s8u8\""), std::string::npos) << text;
    const std::vector<ScheduleEntry> back = deconv::detail::parse_schedules(text, "text");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(back[0].key.same_layer(typed.key));
    EXPECT_EQ(back[0].key.types, "u8s8u8");
    ScheduleEntry plain = typed;
    plain.key.types.clear();
    EXPECT_FALSE(plain.key.same_layer(typed.key));
    std::string bad = text;
    bad.replace(bad.find("u8s8u8"), 6, "u8x8u8");
    EXPECT_NE(error_of(bad).find("db.json: entry 0: "), std::string::npos) << error_of(bad);
    EXPECT_NE(error_of(bad).find("u8x8u8"), std::string::npos) << error_of(bad);
}

TEST(ScheduleDatabase, MergeReplacesTheSameLayerAndKeepsOthers) {
    TempFile f("merge.json");
    ScheduleEntry other = example_entry("serial=on");
    other.key.threads += 7;  // another machine's entry for the same layer
    deconv::detail::merge_schedule_file(f.path, {other});
    deconv::detail::merge_schedule_file(f.path, {example_entry("channel_block=64")});
    deconv::detail::merge_schedule_file(f.path, {example_entry("channel_block=128")});
    const auto all = deconv::detail::read_schedule_file(f.path);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(deconv::detail::format_policy(all[0].policy), "serial=on");
    EXPECT_EQ(deconv::detail::format_policy(all[1].policy), "channel_block=128");
}

TEST(ScheduleDatabase, MergeKeepsEachCpuModelsEntry) {
    TempFile f("models.json");
    ScheduleEntry elsewhere = example_entry("serial=on");
    elsewhere.cpu = "another CPU model";  // the same layer and variant, tuned on another machine
    deconv::detail::merge_schedule_file(f.path, {example_entry("channel_block=64")});
    deconv::detail::merge_schedule_file(f.path, {elsewhere});
    deconv::detail::merge_schedule_file(f.path, {example_entry("channel_block=128")});  // replaces this model's
    const auto all = deconv::detail::read_schedule_file(f.path);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(deconv::detail::format_policy(all[0].policy), "channel_block=128");
    EXPECT_EQ(all[0].cpu, deconv::detail::cpu_model_name());
    EXPECT_EQ(deconv::detail::format_policy(all[1].policy), "serial=on");
    EXPECT_EQ(all[1].cpu, "another CPU model");
}

// The match for `key` with `entries` as the one loaded database (file `path`).
std::optional<deconv::detail::ScheduleMatch> lookup_in(const std::vector<ScheduleEntry> &entries,
                                                       const std::string &path,
                                                       const deconv::detail::ScheduleKey &key) {
    std::ofstream(path) << deconv::detail::format_schedules(entries);
    deconv::load_schedules(path);
    auto m = deconv::detail::find_schedule(key);
    deconv::clear_schedules();
    return m;
}

// In one database, this CPU model's entry wins over another model's whatever their order; another
// model's entry still applies where it is the only one.
TEST(ScheduleDatabase, LookupPrefersThisCpuModel) {
    const ScheduleEntry here = example_entry("channel_block=64");
    ScheduleEntry elsewhere = example_entry("serial=on");
    elsewhere.cpu = "another CPU model";
    TempFile f("lookup.json");
    for (bool here_first : {true, false}) {
        const auto m = lookup_in(here_first ? std::vector<ScheduleEntry>{here, elsewhere}
                                            : std::vector<ScheduleEntry>{elsewhere, here},
                                 f.path, here.key);
        ASSERT_TRUE(m.has_value());
        EXPECT_TRUE(m->exact);
        EXPECT_EQ(deconv::detail::format_policy(m->entry.policy), "channel_block=64");
        EXPECT_EQ(m->source, f.path + " entry " + (here_first ? "0" : "1"));
    }
    const auto m = lookup_in({elsewhere}, f.path, here.key);
    ASSERT_TRUE(m.has_value());
    EXPECT_FALSE(m->exact);
    EXPECT_EQ(deconv::detail::format_policy(m->entry.policy), "serial=on");
}

TEST(ScheduleDatabase, MalformedDatabasesAreRefusedByName) {
    EXPECT_EQ(error_of("{not json").rfind("schedule database db.json: is not JSON (", 0), 0u);
    EXPECT_EQ(error_of("[]"), "schedule database db.json: must be a JSON object with format, version and entries");
    EXPECT_EQ(error_of(R"({"format": "other", "version": 1, "entries": []})"),
              "schedule database db.json: 'format' must be \"deconv-schedules\"");
    EXPECT_EQ(error_of(R"({"format": "deconv-schedules", "version": 2, "entries": []})"),
              "schedule database db.json: version 2 is not supported (this library reads version 1)");
    EXPECT_EQ(error_of(R"({"format": "deconv-schedules", "version": 1})"),
              "schedule database db.json: 'entries' must be an array");
    // Entries: each problem names the entry.
    std::string good = deconv::detail::format_schedules({example_entry("serial=on")});
    good = good.substr(good.find('{', 1));  // the entry's object
    good = good.substr(0, good.rfind('}', good.rfind(']')) + 1);
    const auto with = [&](const std::string &from, const std::string &to) {
        std::string e = good;
        const size_t at = e.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        if (at != std::string::npos) e.replace(at, from.size(), to);
        return std::string(kHead) + good + ", " + e + "]}";
    };
    EXPECT_EQ(error_of(std::string(kHead) + good + "]}"), "no error");
    EXPECT_EQ(error_of(with("\"dtype\":\"f32\"", "\"dtype\":\"f33\"")),
              "schedule database db.json: entry 1: dtype 'f33' is not one of f32, f16, bf16, f64, i8, u8, i32");
    EXPECT_EQ(error_of(with("\"strides\":[2,2]", "\"strides\":[2,\"x\"]")),
              "schedule database db.json: entry 1: 'strides' holds \"x\", not an integer");
    EXPECT_EQ(error_of(with("\"serial\":\"on\"", "\"serial\":\"sometimes\"")),
              "schedule database db.json: entry 1: schedule knob serial does not take the value 'sometimes' "
              "(values: auto, off, on)");
    EXPECT_EQ(error_of(with("\"serial\":\"on\"", "\"warp\":\"on\"")).rfind(
                  "schedule database db.json: entry 1: unknown schedule knob 'warp'", 0),
              0u);
    EXPECT_EQ(error_of(with("\"threads\":", "\"threads\":-")),
              "schedule database db.json: entry 1: 'threads' must be an integer from 1 to 4096");
    EXPECT_EQ(error_of(with("\"layer\":", "\"player\":")), "schedule database db.json: entry 1: 'layer' must be an object");
}

TEST(ScheduleDatabase, UnreadableFilesAreRefusedByName) {
    try {
        deconv::load_schedules("/nonexistent/db.json");
        FAIL() << "a missing file was accepted";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(std::string(e.what()), "schedule database /nonexistent/db.json: cannot be opened");
    }
    TempFile f("bad.json");
    f.write("{\"format\": \"deconv-schedules\", \"version\": 1, \"entries\": [7]}");
    try {
        deconv::load_schedules(f.path);
        FAIL() << "a malformed file was accepted";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(std::string(e.what()), "schedule database " + f.path + ": entry 0: is not an object");
    }
    // A malformed database is never overwritten by a merge.
    EXPECT_THROW(deconv::detail::merge_schedule_file(f.path, {example_entry("")}), deconv::Error);
    EXPECT_EQ(f.read(), "{\"format\": \"deconv-schedules\", \"version\": 1, \"entries\": [7]}");
}

// A plan pinned to a CPU variant (ExecOptions::schedule) takes the entries tuned on that variant,
// not those of the process's default: each built variant this CPU runs, with an entry of its own.
TEST(ScheduleDatabase, APinnedVariantTakesItsOwnEntries) {
    if (!deconv::has_kernel(deconv::Op::GroupConvolutionBackpropData, 2, deconv::DType::f32, deconv::DataFormat::NCX,
                            deconv::Device::CPU))
        GTEST_SKIP() << "needs the f32 2D kernels";
    int pinned = 0;
    for (const std::string &v : deconv::built_cpu_variants()) {
        if (!deconv::detail::cpu_supports_variant(v)) continue;
        TempFile f("variant.json");
        ScheduleEntry e = example_entry("channel_block=32");
        e.key.cpu_variant = v;
        std::vector<ScheduleEntry> entries{e};
        // The default variant's entry pins another block: a plan pinned to another variant must
        // not take it.
        if (v != deconv::cpu_variant()) {
            ScheduleEntry other = example_entry("channel_block=64");
            entries.push_back(other);
        }
        deconv::detail::merge_schedule_file(f.path, entries);
        deconv::load_schedules(f.path);
        deconv::ExecOptions o;
        o.schedule = "cpu_variant=" + v;
        const std::string d = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32, kIn,
                                                   kW, example_attrs(), std::nullopt, o)
                                  .describe();
        deconv::clear_schedules();
        EXPECT_NE(d.find("channel_block=32 cpu_variant=" + v + " from " + f.path), std::string::npos) << d;
        pinned++;
    }
    EXPECT_GE(pinned, 1);
}

TEST(ScheduleDatabase, AMatchingEntryIsChosenAndNamed) {
    if (!deconv::has_kernel(deconv::Op::GroupConvolutionBackpropData, 2, deconv::DType::f32, deconv::DataFormat::NCX,
                            deconv::Device::CPU))
        GTEST_SKIP() << "needs the f32 2D kernels";
    TempFile f("chosen.json");
    deconv::detail::merge_schedule_file(f.path, {example_entry("route=channels_last channel_block=32")});
    const auto plan = [] {
        return deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32, kIn, kW,
                                    example_attrs());
    };
    const std::string before = plan().describe();
    EXPECT_NE(before.find("from heuristics"), std::string::npos) << before;
    deconv::load_schedules(f.path);
    const std::string after = plan().describe();
    deconv::clear_schedules();
    EXPECT_NE(after.find("policy route=channels_last channel_block=32 from " + f.path + " entry 0"), std::string::npos)
        << after;
    EXPECT_NE(after.find("channels-last twin"), std::string::npos) << after;
    EXPECT_NE(after.find("channel blocks of 32"), std::string::npos) << after;
    // Another layer (one more image) has no entry.
    deconv::load_schedules(f.path);
    const std::string other = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32,
                                                   {2, 8, 6, 6}, kW, example_attrs())
                                  .describe();
    deconv::ExecOptions untuned;
    untuned.use_schedule_database = false;
    const std::string ignored =
        deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32, kIn, kW, example_attrs(),
                             std::nullopt, untuned)
            .describe();
    deconv::clear_schedules();
    EXPECT_NE(other.find("from heuristics"), std::string::npos) << other;
    EXPECT_NE(ignored.find("from heuristics"), std::string::npos) << ignored;
    EXPECT_EQ(plan().describe(), before);
}

}  // namespace
