// The dispatch thresholds' tables (runtime/plan/thresholds.h): every row of every CPU class named
// once, with a reason and a section that docs/performance-log.md has a heading for.
#include "plan/thresholds.h"

#include "test_paths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using deconv::detail::CpuClass;
using deconv::detail::Threshold;
using deconv::detail::ThresholdRow;

const CpuClass kClasses[] = {CpuClass::X86Many, CpuClass::X86Few, CpuClass::Other};

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(Thresholds, EveryRowNamedOnceWithAReasonAndASection) {
    const std::string prefix = "docs/performance-log.md#";
    // (test_data_dir() is tests/data of the checkout.)
    const std::string log = read_file(std::string(deconv_test::test_data_dir()) + "/../../docs/performance-log.md");
    ASSERT_FALSE(log.empty());
    for (CpuClass c : kClasses) {
        std::set<std::string> names;
        int rows = 0;
        deconv::detail::for_each_threshold(c, [&](const ThresholdRow &r) {
            EXPECT_EQ((int)r.id, rows) << r.name;
            rows++;
            EXPECT_TRUE(names.insert(r.name).second) << "two rows named " << r.name;
            EXPECT_NE(std::string(r.reason), "") << r.name;
            const std::string section = r.section;
            ASSERT_EQ(section.rfind(prefix, 0), 0u) << r.name << ": " << section;
            EXPECT_NE(log.find("\n### " + section.substr(prefix.size()) + "\n"), std::string::npos)
                << r.name << ": no heading for " << section;
            EXPECT_GE(r.value, 0) << r.name;
        });
        EXPECT_EQ(rows, (int)Threshold::Count);
    }
}

TEST(Thresholds, FoundByName) {
    for (CpuClass c : kClasses) {
        const auto row = deconv::detail::find_threshold(c, "max_bordered_input_bytes");
        ASSERT_TRUE(row.has_value());
        EXPECT_EQ(row->id, Threshold::MaxBorderedInputBytes);
        EXPECT_EQ(row->value, deconv::detail::threshold(c, Threshold::MaxBorderedInputBytes));
        EXPECT_FALSE(deconv::detail::find_threshold(c, "no_such_threshold").has_value());
    }
}

TEST(Thresholds, ClassesOfTheRegisterFiles) {
    const CpuClass many = deconv::detail::cpu_class(deconv::detail::cpu_registers("avx512"));
    const CpuClass few = deconv::detail::cpu_class(deconv::detail::cpu_registers("avx2"));
#if defined(__x86_64__)
    EXPECT_EQ(many, CpuClass::X86Many);
    EXPECT_EQ(few, CpuClass::X86Few);
    EXPECT_EQ(deconv::detail::cpu_class(deconv::detail::cpu_registers("sse41")), CpuClass::X86Few);
#else
    EXPECT_EQ(many, CpuClass::Other);
    EXPECT_EQ(few, CpuClass::Other);
#endif
}

// Rules measured on x86-64 only are off on other hosts; a row read without a plan is the same on
// every class.
TEST(Thresholds, RulesOffWhereNotMeasured) {
    for (Threshold rule : {Threshold::ShortStrided2D, Threshold::Short1DPositions, Threshold::FlatRows,
                           Threshold::FewOutputsTwin, Threshold::TapRows, Threshold::ExactChannelBlocks,
                           Threshold::OneTapChannelTiles, Threshold::InterleavedFewRegisters,
                           Threshold::PhaseTasksMaxPositions})
        EXPECT_EQ(deconv::detail::threshold(CpuClass::Other, rule), 0);
    EXPECT_EQ(deconv::detail::uniform_threshold(Threshold::MaxBorderedInputBytes), int64_t(64) << 20);
    EXPECT_THROW(deconv::detail::uniform_threshold(Threshold::FlatRowsCoutBelow), std::logic_error);
}

// Rows of the register file alone repeat the 32-register class on other hosts (ARM64 has 32
// registers); the rules of 16 registers are off there.
TEST(Thresholds, RegisterRowsOnOtherHosts) {
    for (Threshold row : {Threshold::ExactGroups, Threshold::OneTapChannelsFirst, Threshold::OneTileChannelBlock,
                          Threshold::InterleavedFewRegisters}) {
        EXPECT_EQ(deconv::detail::threshold(CpuClass::Other, row), deconv::detail::threshold(CpuClass::X86Many, row))
            << deconv::detail::threshold_row(CpuClass::Other, row).name;
        EXPECT_NE(deconv::detail::threshold(CpuClass::X86Few, row), deconv::detail::threshold(CpuClass::X86Many, row))
            << deconv::detail::threshold_row(CpuClass::Other, row).name;
    }
}

// Fractions are num/den rows, each den positive: the rules compare them exactly.
TEST(Thresholds, FractionsHaveDenominators) {
    for (CpuClass c : kClasses) {
        deconv::detail::for_each_threshold(c, [&](const ThresholdRow &r) {
            const std::string name = r.name;
            if (name.size() < 4 || name.compare(name.size() - 4, 4, "_num") != 0) return;
            const auto den = deconv::detail::find_threshold(c, name.substr(0, name.size() - 4) + "_den");
            ASSERT_TRUE(den.has_value()) << name;
            EXPECT_GT(den->value, 0) << name;
        });
    }
    // choose_zero_first's half and the few-tapped third, as the rules held them.
    EXPECT_EQ((double)deconv::detail::uniform_threshold(Threshold::ZeroFirstTappedNum) /
                  (double)deconv::detail::uniform_threshold(Threshold::ZeroFirstTappedDen),
              0.5);
    EXPECT_EQ((double)deconv::detail::uniform_threshold(Threshold::FewTappedOutputsNum) /
                  (double)deconv::detail::uniform_threshold(Threshold::FewTappedOutputsDen),
              1.0 / 3.0);
}

}  // namespace
