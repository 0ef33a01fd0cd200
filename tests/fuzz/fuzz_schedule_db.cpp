// libFuzzer target: the schedule-database reader (runtime/tuning/schedule_database.cpp), what
// load_schedules, DECONV_SCHEDULES and --schedules read. Only deconv::Error may escape, and a
// database that parses must write back to a text that parses to the same entries.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tuning/schedule_database.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    std::vector<deconv::detail::ScheduleEntry> entries;
    try {
        entries = deconv::detail::parse_schedules(text, "fuzz.json");
    } catch (const deconv::Error &) {
        return 0;
    }
    const std::string again = deconv::detail::format_schedules(entries);
    const auto back = deconv::detail::parse_schedules(again, "written");
    if (back.size() != entries.size()) std::abort();
    for (size_t i = 0; i < back.size(); i++) {
        if (!back[i].key.same_layer(entries[i].key) || back[i].policy != entries[i].policy) std::abort();
    }
    if (deconv::detail::format_schedules(back) != again) std::abort();
    return 0;
}
