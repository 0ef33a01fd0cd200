// The seeded randomized sweep: deterministic random problems (fixed seeds, see make_case in
// check.h) compared to the naive reference, sharded by dtype and spatial rank so that a
// failure names its shard and CTest can run the shards in parallel.
#include "check.h"

#include <chrono>
#include <ostream>

namespace {

using deconv::DType;
using deconv_test::GenCase;

constexpr int kCasesPerShard = 110;  // 7 dtypes x 3 ranks x 110 = 2310 cases

using deconv_test::Shard;

class Sweep : public ::testing::TestWithParam<Shard> {};

TEST_P(Sweep, MatchesReference) {
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << deconv_test::dt_str(t) << " not built";
    if (!deconv_test::rank_built(rank)) GTEST_SKIP() << "rank " << rank << " not built";
    int failed = 0, grouped = 0, with_os = 0, plan = 0, views = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCasesPerShard; i++) {
        const GenCase c = deconv_test::make_case(t, rank, i);
        grouped += c.p.grouped;
        with_os += c.p.output_shape.has_value();
        plan += c.api == 1;
        views += c.api == 2;
        const auto r = deconv_test::run_and_check(c);
        if (!r) {
            if (++failed <= 10) ADD_FAILURE() << "sweep case #" << i << ": " << r.message();
        }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(failed, 0) << failed << " of " << kCasesPerShard << " cases failed";
    RecordProperty("cases", kCasesPerShard);
    std::printf("[ shard    ] %s rank %d: %d cases (%d grouped, %d with output_shape, %d via Plan, "
                "%d strided), %.2f s\n",
                deconv_test::dt_str(t), rank, kCasesPerShard, grouped, with_os, plan, views, secs);
}

INSTANTIATE_TEST_SUITE_P(Shards, Sweep, ::testing::ValuesIn(deconv_test::shards_of()),
                         deconv_test::shard_name);

// The sweep's generator really covers what it claims (independent of the library).
TEST(SweepCoverage, GeneratorCoversTheSpace) {
    int depthwise = 0, op_ge_stride = 0, neg_total = 0, defaults = 0, big_group = 0;
    int modes_with_os[4] = {0, 0, 0, 0};
    int batch3 = 0, stride4 = 0, dil3 = 0, k5 = 0, total = 0, asym = 0;
    for (DType t : deconv_test::all_dtypes())
        for (int rank = 1; rank <= 3; rank++)
            for (int i = 0; i < kCasesPerShard; i++) {
                const GenCase c = deconv_test::make_case(t, rank, i);
                const auto &p = c.p;
                const auto r = deconv_ref::resolve(p);
                total++;
                if (p.grouped && r.c_in == 1 && r.c_out == 1 && r.groups >= 3) depthwise++;
                if (r.groups == 4) big_group++;
                if (p.output_shape) modes_with_os[static_cast<int>(p.auto_pad)]++;
                if (p.strides.empty()) defaults++;
                if (r.n == 3) batch3++;
                for (int a = 0; a < rank; a++) {
                    if (r.output_padding[a] >= r.strides[a] && r.output_padding[a] > 0) op_ge_stride++;
                    if (r.raw_pads_begin[a] < 0 || r.raw_pads_end[a] < 0) neg_total++;
                    if (r.strides[a] == 4) stride4++;
                    if (r.dilations[a] == 3) dil3++;
                    if (r.kernel[a] == 5) k5++;
                    if (r.pads_begin[a] != r.pads_end[a]) asym++;
                }
            }
    EXPECT_GE(total, 2100);
    EXPECT_GT(depthwise, 100);
    EXPECT_GT(big_group, 50);
    EXPECT_GT(op_ge_stride, 100);
    EXPECT_GT(neg_total, 50);
    EXPECT_GT(defaults, 50);
    EXPECT_GT(batch3, 100);
    EXPECT_GT(stride4, 100);
    EXPECT_GT(dil3, 100);
    EXPECT_GT(k5, 100);
    EXPECT_GT(asym, 300);
    for (int m = 0; m < 4; m++) EXPECT_GT(modes_with_os[m], 20) << "auto_pad mode " << m;
}

}  // namespace
