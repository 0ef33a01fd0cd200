// Cases for the test of scripts/ctest_batched.py (ctest_batched_test.py): they pass in a plain
// run, and fail, crash, skip, vanish or disturb each other when the test asks them to through the
// environment, so that the runner's verdicts can be checked against known outcomes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

bool asked(const char *name) {
    const char *v = std::getenv(name);
    return v && std::string(v) == "1";
}

bool state_left_behind = false;  // set by LeavesStateBehind, read by a later case of the process

TEST(BatchProbe, Passes) { SUCCEED(); }

TEST(BatchProbe, FailsOnRequest) { EXPECT_FALSE(asked("BATCH_PROBE_FAIL")); }

TEST(BatchProbe, CrashesOnRequest) {
    if (asked("BATCH_PROBE_CRASH")) std::abort();
}

TEST(BatchProbe, SkipsOnRequest) {
    if (asked("BATCH_PROBE_SKIP")) GTEST_SKIP() << "asked to skip";
}

// Its CTest registrations' environments: BATCH_PROBE_ONE=1 in both, and BATCH_PROBE_TWO=2 (an
// ENVIRONMENT_MODIFICATION) in the batch_probe_two. repeat alone. Each run appends the value of
// BATCH_PROBE_TWO it saw to the file BATCH_PROBE_LOG names, for the test to count.
TEST(BatchProbe, SeesItsRegistrationsEnvironment) {
    const char *one = std::getenv("BATCH_PROBE_ONE");
    const char *two = std::getenv("BATCH_PROBE_TWO");
    ASSERT_NE(one, nullptr);
    EXPECT_STREQ(one, "1");
    if (two) EXPECT_STREQ(two, "2");
    if (const char *log = std::getenv("BATCH_PROBE_LOG")) {
        std::ofstream(log, std::ios::app) << "two=" << (two ? two : "") << "\n";
    }
}

TEST(BatchProbe, LeavesStateBehind) { state_left_behind = true; }

TEST(BatchProbe, SeesStateLeftBehind) {
    if (asked("BATCH_PROBE_STATE")) EXPECT_FALSE(state_left_behind) << "LeavesStateBehind ran in this process";
}

}  // namespace

// BATCH_PROBE_HIDE=1: the binary runs no BatchProbe.Passes however it is asked, as a case that
// is gone since ctest listed it; GoogleTest then exits 0 having run fewer cases than named.
int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (asked("BATCH_PROBE_HIDE")) {
        std::string &filter = ::testing::GTEST_FLAG(filter);
        filter += filter.find('-') == std::string::npos ? "-BatchProbe.Passes" : ":BatchProbe.Passes";
    }
    return RUN_ALL_TESTS();
}
