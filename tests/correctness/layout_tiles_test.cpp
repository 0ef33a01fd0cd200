// The register-tile branches of the channels-last kernels, each against the reference: bf16
// dot products, channel blocks, batch rows, one channel vector over two rows, groups at each
// position tile, dense groups on group-major copies, tap-less phases and rows of four-position
// tiles.
#include "layout_cases.h"

#include "../../facts/channels_last_tiles.h"
#include "../../facts/group_block_facts.h"

namespace {

using namespace layout_cases;

// ---------------------------------------------------------------- bf16 dot products

// bf16 layers with an even number of input channels per group run, on CPUs with AVX512-BF16, on
// the kernels that reduce input channel pairs with vdpbf16ps (filter packed in pairs). Every
// branch of their schedule: channel widths below 4 (scalar), 4-15 (4 lanes), 16-63 (one or two
// vectors) and 64 and more (the 4-vector tile) with tails, rows of 1 to 13 positions (the 5-position tile,
// 4 positions, single positions; with 64 channels or more, rows of 9 and 13 run whole tiles of 5
// and then 4 or 8 positions in a second call: runtime/cpu/phase_kernel_calls.cpp, exact_row_head), one to 17
// pairs, ranks 1-3, grouped and not, every API.
// (Elsewhere they run the f32-FMA kernels, which this then covers again.)
TEST(LayoutBf16Dot, EvenInputChannelsEveryTileAndTail) {
    if (!deconv_test::dtype_built(DType::bf16)) GTEST_SKIP();
    int ran = 0, failed = 0, i = 0;
    for (int64_t cout : {1, 3, 4, 9, 16, 40, 64, 70, 130})
        for (int64_t cin : {2, 4, 34})
            for (int64_t row : {1, 4, 5, 7, 9, 12, 13}) {
                const int rank = 1 + (i % 3);
                const uint64_t seed = deconv_test::sweep_seed(DType::bf16, rank, 3000 + i) ^ 0xBF16ull;
                i++;
                if (!deconv_test::rank_built(rank)) continue;
                deconv_ref::Problem p;
                p.grouped = i % 2 == 0;
                const int64_t G = p.grouped ? 2 : 1;
                p.input_shape = {i % 4 == 0 ? 2 : 1, G * cin};
                p.filter_shape = p.grouped ? std::vector<int64_t>{G, cin, cout} : std::vector<int64_t>{cin, cout};
                for (int a = 0; a < rank; a++) {
                    // Inner axis: kernel 3, stride 2, pads 1/0 (Y = 2X); outer axes: 2 inputs.
                    const bool inner = a == rank - 1;
                    const int64_t x = inner ? row : 2;
                    p.input_shape.push_back(x);
                    p.filter_shape.push_back(3);
                    p.strides.push_back(inner ? 2 : 1);
                    p.pads_begin.push_back(1);
                    p.pads_end.push_back(inner ? 0 : 1);
                }
                check_random_case(DType::bf16, seed, i % 3, p, ran, failed);
            }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last kernels with more output channels per group than a block run one call per block
// (the filter packed block by block): blocks of 64 with tails of 1 and 8 channels, every dtype;
// rows narrower than the position tile (3 inputs: phases 3 wide) take blocks of 192 instead (bf16
// pair kernels keep 128): one block of 129, tails of 8 and 64.
TEST(LayoutChannelBlocks, OutputChannelsAcrossBlocks) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(2)) continue;
        for (int64_t cout : {129, 200, 256})
        for (int64_t x : {7, 3}) {
            const uint64_t seed = deconv_test::sweep_seed(t, 2, 4000 + i++);
            deconv_ref::Problem p;
            p.grouped = true;
            p.input_shape = {1, 2 * 6, 3, x};
            p.filter_shape = {2, 6, cout, 2, 3};
            p.strides = {2, 2};
            p.pads_begin = {0, 1};
            p.pads_end = {0, 1};
            check_random_case(t, seed, i % 3, p, ran, failed);
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last blocks of 16-lane channel tiles (runtime/dispatch/layer_classes.cpp,
// channels_last_channel_block): one tile (64 channels) wherever a group holds two or more, small
// weights or not, 1-byte weights too; under two tiles, two tiles' worth of block whose weights
// per phase (block x input channels x taps) pass 768 KiB narrow to one tile. Checked on x86-64
// AVX-512 plans where nothing pins a knob, at both sides of the limit, at stride 2, and with tail
// blocks; each against the reference, every API.
TEST(LayoutChannelBlocks, TwoTilesOrLargeWeightsTakeOneTileBlocks) {
    struct Case {
        DType t;
        int64_t cin, cout, k, s;
        int64_t block;  // expected on AVX-512
    };
    const std::vector<Case> cases = {
        {DType::f32, 16, 128, 3, 1, 64},    // two tiles: one each, whatever the weights
        {DType::u8, 16, 200, 3, 1, 64},     // 1-byte weights, a tail of 8
        {DType::f32, 160, 130, 3, 1, 64},   // a tail of 2
        {DType::f32, 200, 100, 3, 1, 64},   // under two tiles: 128 x 200 x 9 x 4 B = 900 KiB
        {DType::f32, 160, 100, 3, 1, 128},  // 720 KiB: one block
        {DType::u8, 200, 100, 3, 1, 128},   // 225 KiB of 1-byte weights
        {DType::f32, 400, 72, 4, 2, 64},    // 2 x 2 taps per phase: 800 KiB; a tail of 8
    };
    int ran = 0, failed = 0, i = 0;
    for (const Case &c : cases) {
        i++;
        if (!deconv_test::dtype_built(c.t) || !deconv_test::rank_built(2)) continue;
        const AxisSpec axis{7, c.k, c.s, c.k / 2};
        const deconv_ref::Problem p = grouped_problem(1, 1, c.cin, c.cout, false, 2, axis, {5, c.k, c.s, c.k / 2});
#if defined(__x86_64__)
        const std::string how = deconv::Plan::create(deconv::Op::ConvolutionBackpropData, c.t,
                                                     nxc_shape(p.input_shape), p.filter_shape, nxc_attrs(p))
                                    .describe();
        // (u8 layers run as f64 where the build has f64 kernels: the 1-byte cases check the
        // rule in builds of u8 kernels, and the reference everywhere.)
        if (unpinned(how) && how.find("(avx512") != std::string::npos && how.find("as f64") == std::string::npos)
            EXPECT_NE(how.find("channel blocks of " + std::to_string(c.block) + ","), std::string::npos)
                << "case " << i << ": " << how;
#endif
        for (int api = 0; api < 3; api++)
            check_random_case(c.t, deconv_test::sweep_seed(c.t, 2, 4100 + 3 * i + api), api, p, ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Expects the plan of `p` in `format` to run channel blocks of `block`: x86-64 AVX-512 f32 plans
// on the channel-vectorized kernels where nothing pins a knob (a channels-first layer may stay on
// its own kernels).
void expect_channel_block(DType t, const deconv_ref::Problem &p, DataFormat format, int64_t block) {
#if defined(__x86_64__)
    if (t != DType::f32) return;
    const std::string how = plan_of(t, p, "", format);
    if (unpinned(how) && how.find("(avx512") != std::string::npos &&
        how.find("phase_conv_nxc_interior") != std::string::npos)
        EXPECT_NE(how.find("channel blocks of " + std::to_string(block) + ","), std::string::npos) << how;
#else
    (void)t, (void)p, (void)format, (void)block;
#endif
}

// Output channels the channel tiles cover only by shifting a tile back (24, 40, 72, 80, 96 per
// group; 112 where rows come in pairs, its rest of 48 on the three-vector tile of two rows; 48
// stays one block) run in blocks the tiles cover exactly (runtime/dispatch/layer_classes.cpp,
// exact_channel_blocks): checked on x86-64 AVX-512 f32 plans where nothing pins a knob; both
// layouts (channels-first on the twin), ranks 1-3, one and two groups, every built dtype, each
// against the reference.
TEST(LayoutChannelBlocks, ExactBlocksOfTheTiles) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {24, 40, 48, 72, 80, 96, 112})
                for (DataFormat format : {DataFormat::NXC, DataFormat::NCX}) {
                    i++;
                    const int64_t groups = 1 + i % 2;
                    const deconv_ref::Problem p =
                        grouped_problem(1, groups, 48, cout, true, rank, {9, 3, 1, 1}, {3, 3, 1, 1});
                    const bool one_block = cout == 48 || (cout == 112 && rank == 1);
                    expect_channel_block(t, p, format, one_block ? 128 : cout > 64 ? 64 : cout - 8);
                    check_random_case(t, deconv_test::sweep_seed(t, rank, 4200 + i), i % 3, p, ran, failed, "",
                                      format);
                }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Narrow rows (phase rows of 4 and 5 outputs, under the six-position tile) run in the channel
// blocks whose calls compute the fewest products on the four-position tiles
// (runtime/dispatch/layer_classes.cpp, narrow_row_channel_block): 56 channels as 32 + 24, 80 as 64 + 16;
// 112 stays one block (64 + 48 would run the slower three-vector tile); 144, two full tiles and
// more, in blocks of one (64 + 64 + 16), 256 likewise. Checked
// on x86-64 AVX-512 f32 plans where nothing pins a knob; ranks 2 and 3, both layouts
// (channels-first on the twin), one and two groups, every built dtype, each against the
// reference.
TEST(LayoutChannelBlocks, NarrowRowBlocksOfTheFewestProducts) {
    const struct {
        int64_t cout, block;
    } cases[] = {{56, 32}, {80, 64}, {112, 192}, {144, 64}, {256, 64}};
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 2; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (const auto &c : cases)
                for (DataFormat format : {DataFormat::NXC, DataFormat::NCX}) {
                    i++;
                    const int64_t groups = 1 + i % 2;
                    const deconv_ref::Problem p = grouped_problem(1, groups, 5 + i % 4, c.cout, groups > 1, rank,
                                                                  {4, 4, 2, 1}, {2 + i % 2, 4, 2, 1});
                    expect_channel_block(t, p, format, c.block);
                    check_random_case(t, deconv_test::sweep_seed(t, rank, 4300 + i), i % 3, p, ran, failed, "",
                                      format);
                }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last layers of narrow phase rows and 16 or more images run with the images as the
// next rank's innermost axis, one kernel call per tap window (runtime/cpu/batch_rows_executor.cpp,
// choose_batch_rows): ranks 1 and 2, pads past the input, a phase of no tap, groups, channel
// counts off the tiles (even: bf16's channel pairs, whose packing is blocked), every API. Rows of
// 20 images with 64 channels (17 with 130 in bf16) run whole position tiles, then a multiple of
// four positions in a second call (runtime/cpu/phase_kernel_calls.cpp, exact_row_head).
TEST(LayoutBatchRows, NarrowPhasesOfWideBatches) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank : {1, 2}) {
            if (!deconv_test::rank_built(rank) || !deconv_test::rank_built(rank + 1)) continue;
            for (auto [x, k, pb] : {std::tuple<int64_t, int64_t, int64_t>{4, 4, 1}, {3, 1, 0}, {2, 5, 3}})
                for (auto [n, groups, cout] :
                     {std::tuple<int64_t, int64_t, int64_t>{16, 1, 20}, {17, 3, 130}, {20, 1, 64}}) {
                    const uint64_t seed = deconv_test::sweep_seed(t, rank, 5000 + i++);
                    deconv_ref::Problem p;
                    p.grouped = true;
                    p.input_shape = {n, groups * 4};
                    p.filter_shape = {groups, 4, cout};
                    for (int a = 0; a < rank; a++) {
                        const bool inner = a == rank - 1;
                        p.input_shape.push_back(inner ? x : 2);
                        p.filter_shape.push_back(inner ? k : 3);
                        p.strides.push_back(2);
                        p.pads_begin.push_back(inner ? pb : 1);
                        p.pads_end.push_back(inner ? 1 : 0);
                    }
                    check_random_case(t, seed, i % 3, p, ran, failed);
                }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last rows of one channel vector of output channels per group (lanes to 2 x lanes - 1;
// on AVX-512 also 8-15 channels, in half vectors) tile q_tile positions of two rows: widths about
// the position tiles, heights 2 and 3 (the second row tile overlaps the first), ranks 2-3, every
// built dtype, on the layer's own kernels (route=channels_last: the rules may take the channels-
// first twin).
TEST(LayoutTiles, OneChannelVectorOverTwoRows) {
    int ran = 0, failed = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(53);
        for (int rank : {2, 3}) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {8, 12, 16, 31})
                for (int64_t width : {5, 7, 13})
                    for (int64_t height : {1, 2}) {
                        // Kernel 3, pad 1 before: outputs one wider than the input (6, 8, 14; 2, 3).
                        const deconv_ref::Problem p =
                            grouped_problem(1, 2, 3, cout, true, rank, {width, 3, 1, 1}, {height, 3, 1, 1});
                        check_random_case(t, seeds(), ran % 3, p, ran, failed, "route=channels_last");
                    }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last layers of 8 or more output channels per group run on their own kernels (under 8,
// on the channels-first twin), whose tiles of up to two cache lines run every group at each
// position tile (cpu_channels_last_schedule.h): many groups, so that both threads share the rows
// of every group; 4 channels (the twin), 8 and 12 (under a line on AVX-512), 16 and 24 (one line
// and a tail), 32 (two lines; AVX2: four vectors), ranks 1-3, batch 1-2, position tiles with a
// shifted last one, every built dtype. The plan names the channels-first twin exactly under 8
// channels.
TEST(LayoutTiles, GroupsAtEachPositionTile) {
    int ran = 0, failed = 0, routed = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(61);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {4, 8, 12, 16, 24, 32}) {
                const deconv_ref::Problem p =
                    grouped_problem(rank == 1 ? 2 : 1, 9, 5, cout, true, rank, {13, 3, 2, 1}, {5, 3, 2, 1});
                check_random_case(t, seeds(), ran % 3, p, ran, failed);
                // The layer's own kernels, whichever route the rules take.
                if (cout >= 8) check_random_case(t, seeds(), ran % 3, p, ran, failed, "route=channels_last");
                const std::string how = plan_of(t, p);
                if (how.find("route=") != std::string::npos || how.find("groups") != std::string::npos) continue;
                EXPECT_EQ(how.find("channels-first twin") != std::string::npos, cout < 8) << how;
                routed++;
            }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
    EXPECT_GT(routed, 0);
}

// Channels-last grouped layers of 4 or 8 output channels per group (a half or a quarter of a
// vector) run on the group-block kernels (cpu_group_blocks_schedule.h), two or four groups per
// vector, over a block-interleaved input copy: blocks of 2 and 4 groups of 1-16 input channels,
// rows of whole position tiles (7 on AVX-512, 5 on AVX2), narrower and wider ones with a shifted
// last tile, one row of the next axis (the one-row branch), strides 1-3 with pads and
// output_padding, batch 1 and 5 (images in slices, each copying its part), ranks 1-3, f32 and f16
// (as f32), checked against the reference through every API; the plan names the blocks wherever
// tiles::group_block gives them (x86-64, AVX-512 and AVX2) but on one-tap layers of 8 output
// channels and on the channel-dot kernels' layers (16 -> 4 under AVX2; channels_last_families.h),
// and group_blocks=off runs the same cases on the other kernels. Under SSE4.1 (4 lanes) no
// layer takes them.
TEST(LayoutTiles, GroupBlocksAgainstReference) {
    struct Grouping {
        int64_t groups, cin, cout;
    };
    int ran = 0, failed = 0, routed = 0, checked = 0, i = 0;
    for (DType t : {DType::f32, DType::f16}) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(71);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (const Grouping c : {Grouping{4, 8, 8}, Grouping{6, 4, 8}, Grouping{8, 4, 4}, Grouping{4, 16, 4},
                                     Grouping{8, 1, 4}, Grouping{4, 3, 8}, Grouping{12, 8, 4}, Grouping{3, 8, 8}})
                for (const char *pin : {"", "group_blocks=off"}) {
                    i++;
                    const AxisSpec rows[] = {{14, 3, 2, 1, 1}, {9, 2, 2, 0}, {5, 4, 2, 1}, {16, 3, 1, 1},
                                             {3, 3, 3, 0, 2}, {7, 1, 1, 0}, {11, 5, 2, 2}};
                    const AxisSpec inner = rows[i % 7];
                    // The next axis: one row of outputs (the one-row branch), or several.
                    const AxisSpec outer = i % 5 == 0 ? AxisSpec{1, 1, 1, 0} : AxisSpec{rank == 3 ? 3 : 5, 3, 2, 1};
                    const deconv_ref::Problem p =
                        grouped_problem(i % 4 == 0 ? 5 : 1, c.groups, c.cin, c.cout, true, rank, inner, outer);
                    check_random_case(t, seeds(), i % 3, p, ran, failed, pin);
#if defined(__x86_64__)
                    const std::string how = plan_of(t, p, pin);
                    const bool avx512 = how.find("(avx512") != std::string::npos;
                    if (*pin == 0 && unpinned(how) && (avx512 || how.find("(avx2") != std::string::npos)) {
                        const int b = deconv::tiles::group_block(avx512 ? 16 : 8, c.cout);
                        const bool one_tap = inner.k == inner.s && (rank == 1 || outer.k == outer.s);
                        const bool dots = how.find("_nxc_dots_") != std::string::npos;
                        const bool blocks = b > 0 && c.groups % b == 0 && !(one_tap && c.cout >= 8) && !dots;
                        EXPECT_EQ(how.find("group blocks of " + std::to_string(b)) != std::string::npos, blocks) << how;
                        routed += blocks;
                        checked++;
                    }
                    if (*pin != 0) EXPECT_EQ(how.find("group blocks"), std::string::npos) << how;
#endif
                }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
    if (checked > 0) EXPECT_GT(routed, 0);
}

// Channels-last grouped layers that copy their input may lay the copy out group-major
// (bordered_input.h), which the kernels' dense-group tiles read on AVX-512 and AVX2: groups of 8 input
// channels (tiles::kDenseGroupChannels) to 8, 9 and 12 output channels (the dense tiles), 16 (past
// them) and 5 -> 8 (the layout only, pinned), 2-4 groups and one (the caller's layout already
// dense), rows of each of the dense position tiles, strides 1 and 2, batch 1 and 5 (images in
// slices, each copying its part), ranks 1-3,
// f32, f16 and bf16; the rule's choice and both pins. A pinned copy shows in the f32 and f16
// plans, and the rule's in AVX-512 and AVX2 f32 plans exactly at 8 -> 8-15 channels, but where
// the group-block kernels take the layer (8 channels and an even number of groups on AVX-512).
TEST(LayoutTiles, DenseGroupsOnGroupMajorCopies) {
    struct Grouping {
        int64_t groups, cin, cout;
    };
    int ran = 0, failed = 0, routed = 0, i = 0;
    for (DType t : {DType::f32, DType::f16, DType::bf16}) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(67);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (const Grouping c : {Grouping{4, 8, 8}, Grouping{3, 8, 12}, Grouping{2, 8, 9}, Grouping{2, 8, 16},
                                     Grouping{3, 5, 8}, Grouping{1, 8, 8}})
                for (const char *pin : {"", "group_major=on", "group_major=off"}) {
                    i++;
                    // Rows of every dense tile: 16 (8 positions), 12 (6), 13 and 9 (7, the last
                    // shifted), and 5 and 4 (narrower than those: the general tiles, four
                    // positions), and 7 (the dense tile or, where it has none, four positions).
                    const AxisSpec rows[] = {{13, 3, 2, 1}, {9, 3, 1, 1}, {16, 3, 1, 1}, {12, 3, 1, 1},
                                             {5, 3, 1, 1},  {7, 3, 1, 1}, {4, 3, 1, 1}};
                    const AxisSpec inner = rows[i % 7];
                    const deconv_ref::Problem p = grouped_problem(i % 4 == 0 ? 5 : 1, c.groups, c.cin, c.cout, true,
                                                                  rank, inner, {rank == 3 ? 3 : 5, 3, 2, 1});
                    check_random_case(t, seeds(), i % 3, p, ran, failed, pin);
                    // (bf16 layers may run the input-channel-pair kernels, which read no such copy.)
                    if (c.groups >= 2 && t != DType::bf16 && std::string(pin) == "group_major=on")
                        routed += expect_plan_runs(t, p, "group-major input", pin);
#if defined(__x86_64__)
                    const std::string how = plan_of(t, p);
                    if (t == DType::f32 && *pin == 0 && unpinned(how) &&
                        (how.find("(avx512") != std::string::npos || how.find("(avx2") != std::string::npos)) {
                        const int lanes = how.find("(avx512") != std::string::npos ? 16 : 8;
                        const int b = deconv::tiles::group_block(lanes, c.cout);
                        const bool blocks = c.groups >= 2 && b > 0 && c.groups % b == 0;
                        const bool rule = c.groups >= 2 && c.cin == 8 && c.cout < 16 && !blocks;
                        EXPECT_EQ(how.find("group-major input") != std::string::npos, rule) << how;
                        routed++;
                    }
#endif
                }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
    if (deconv_test::speed_families_here()) EXPECT_GT(routed, 0);
}

// Layers whose kernel is below the stride have phases without taps, zeroed phase by phase or
// (zero_first) in one pass over each call's output before the other phases run: both ways and
// the rule's own choice, both layouts, ranks 1-3, two images of three groups (slices and slabs
// may split them), every built dtype. A pinned pass must show in the plan's description.
TEST(LayoutTiles, TapLessPhasesZeroedEitherWay) {
    int ran = 0, failed = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(59);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (DataFormat format : {DataFormat::NCX, DataFormat::NXC})
                for (const char *pin : {"", "zero_first=on", "zero_first=off"})
                    for (int64_t cout : {1, 5, 16}) {
                        // Kernel 1 at stride 3 innermost (two phases of three without taps), kernel
                        // 2 at stride 3 with output_padding 1 on the other axes.
                        const deconv_ref::Problem p =
                            grouped_problem(2, 3, 2, cout, true, rank, {7, 1, 3, 0, 2}, {3, 2, 3, 0, 1});
                        check_random_case(t, seeds(), ran % 3, p, ran, failed, pin, format);
                        if (std::string(pin) == "zero_first=on") expect_plan_runs(t, p, "zero first", pin, format);
                    }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last register tiles (facts/channels_last_tiles.h):
// rows a multiple of four positions whose six-position tiles would recompute more than a tenth of
// the row take tiles of four (16, 20, 32; 28 keeps six), as do rows they cover with a tenth fewer
// positions than the wider tiles (7; 6 on 16 registers); rows that five-position tiles cover with
// fewer positions take those on 32 registers (13, 9); rows split in two calls at the fewest
// positions computed (runtime/cpu/phase_kernel_calls.cpp, exact_row_head: 9, 11, 13, 21, 31 on 32
// registers); with 4 channel vectors and with their tails (70), and with 2 channel vectors (32,
// 40) beside them; heights 2, 3 and 5. Stride 1, kernel 3, pad 1 (each output row as wide as the
// input), ranks 1-3.
TEST(LayoutTiles, ShortRowsOfFourPositionTiles) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {64, 70, 32, 40})
                for (int64_t x : {16, 20, 32, 28, 13, 9, 7, 6, 11, 21, 31})
                    for (int64_t height : {2, 3, 5}) {
                        if ((rank == 1 && height != 2) || (rank == 3 && (height != 3 || x > 20))) continue;
                        if (x > 20 && height == 5) continue;
                        const uint64_t seed = deconv_test::sweep_seed(t, rank, 6000 + i++);
                        deconv_ref::Problem p;
                        p.grouped = true;
                        p.input_shape = {1, 3};
                        p.filter_shape = {1, 3, cout};
                        for (int a = 0; a < rank; a++) {
                            const bool inner = a == rank - 1;
                            p.input_shape.push_back(inner ? x : a == rank - 2 ? height : 2);
                            p.filter_shape.push_back(3);
                            p.strides.push_back(1);
                            p.pads_begin.push_back(1);
                            p.pads_end.push_back(1);
                        }
                        check_random_case(t, seed, i % 3, p, ran, failed);
                    }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channel tiles narrower than the full one (one vector: 12, 16, 20; two or three: 32, 40, 48 on
// 32 registers) on rows of four-position tiles: rows narrower than the wider tiles (4, 5) and rows
// those cover with a tenth fewer positions (7, 8), one row and two (rank 1 has one-row tiles
// only), against rows of 9 and 12 on the wider tiles. Stride 2, kernel 4, pad 1 (phases as wide
// as the input), ranks 1-3, every built dtype, grouped and not.
TEST(LayoutTiles, NarrowChannelTilesOfFourPositions) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {12, 16, 20, 32, 40, 48})
                for (int64_t x : {4, 5, 7, 8, 9, 12}) {
                    i++;
                    if (rank == 3 && x > 8) continue;
                    const int64_t groups = i % 3 == 0 ? 2 : 1;
                    const deconv_ref::Problem p =
                        grouped_problem(i % 4 == 0 ? 2 : 1, groups, 3 + i % 5, cout, groups > 1, rank, {x, 4, 2, 1},
                                        {1 + i % 3, 4, 2, 1});
                    check_random_case(t, deconv_test::sweep_seed(t, rank, 6500 + i), i % 3, p, ran, failed);
                }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// The tile a call takes (facts/channels_last_tiles.h): the list the channels-last
// schedule specializes its branches from, in its order, and the dispatcher's channel blocks and
// row splits read. 32 registers (4 x 16 lanes, six positions, fit tiles of five), 16 (2 x 8, five)
// and 4-lane vectors (2 x 4, five), ranks 1-2. (The 4-lane tile of four positions is square and
// holds 8 channels, which the full tile takes first: 6 channels run one position per step.)
TEST(LayoutTiles, ChannelTilesOfACall) {
    using namespace deconv::tiles;
    const struct {
        int vectors, lanes, q_tile, fit_q, rank;
        int64_t channels, width, height;
        int tile_channels, positions, rows;  // 0 channels: none (scalar)
    } calls[] = {
        {4, 16, 6, 5, 2, 64, 12, 2, 64, 6, 1},   {4, 16, 6, 5, 2, 200, 16, 2, 64, 4, 1},
        {4, 16, 6, 5, 2, 64, 13, 2, 64, 5, 1},   {4, 16, 6, 5, 2, 64, 4, 2, 64, 4, 1},
        {4, 16, 6, 5, 2, 56, 4, 2, 48, 4, 2},    {4, 16, 6, 5, 2, 48, 30, 3, 48, 4, 2},
        {4, 16, 6, 5, 1, 56, 30, 1, 32, 6, 1},   {4, 16, 6, 5, 2, 56, 4, 1, 32, 4, 1},
        {4, 16, 6, 5, 2, 40, 12, 2, 32, 6, 1},   {4, 16, 6, 5, 2, 40, 8, 2, 32, 4, 1},
        {4, 16, 6, 5, 2, 24, 5, 2, 16, 4, 2},    {4, 16, 6, 5, 2, 24, 12, 2, 16, 6, 2},
        {4, 16, 6, 5, 1, 24, 3, 1, 16, 1, 1},    {4, 16, 6, 5, 2, 12, 14, 2, 8, 6, 2},
        {4, 16, 6, 5, 2, 12, 5, 2, 4, 1, 1},     {4, 16, 6, 5, 2, 3, 14, 2, 0, 0, 0},
        {2, 8, 5, 0, 2, 16, 10, 2, 16, 5, 1},    {2, 8, 5, 0, 2, 16, 8, 2, 16, 4, 1},
        {2, 8, 5, 0, 2, 12, 10, 2, 8, 5, 2},     {2, 8, 5, 0, 1, 12, 4, 1, 8, 1, 1},
        {2, 8, 5, 0, 2, 6, 10, 2, 4, 1, 1},      {2, 4, 5, 0, 2, 8, 4, 2, 8, 4, 1},
        {2, 4, 5, 0, 2, 6, 4, 2, 4, 1, 1},
    };
    for (const auto &c : calls) {
        const ChannelTiles list = channels_last_tiles(c.vectors, c.lanes, c.q_tile, c.fit_q, c.rank);
        const ChannelTile *t = channels_last_tile(list, c.channels, c.width, c.height);
        const std::string what = std::to_string(c.channels) + " channels, rows of " + std::to_string(c.width) +
                                 " x " + std::to_string(c.height) + ", tiles " + std::to_string(c.vectors) + " x " +
                                 std::to_string(c.lanes) + " x " + std::to_string(c.q_tile) + ", rank " +
                                 std::to_string(c.rank);
        if (c.tile_channels == 0) {
            EXPECT_EQ(t, nullptr) << what;
            continue;
        }
        ASSERT_NE(t, nullptr) << what;
        EXPECT_EQ(tile_channels(*t), c.tile_channels) << what;
        EXPECT_EQ(t->positions, c.positions) << what;
        EXPECT_EQ(t->rows, c.rows) << what;
    }
}

// The positions a full channel tile computes per row (facts/channels_last_tiles.h),
// which both the schedule's branch conditions and the dispatcher's row splits read: on 32
// registers (six-position tiles, five-position fit tiles) and on 16 (five-position tiles, no fit
// tiles).
TEST(LayoutTiles, RowTilesComputeTheFewestPositions) {
    using namespace deconv::tiles;
    const struct {
        int64_t width;
        int q_tile, fit_q;
        int64_t computed;
    } rows[] = {
        {7, 6, 5, 8},   {9, 6, 5, 10},  {12, 6, 5, 12}, {13, 6, 5, 15}, {16, 6, 5, 16}, {20, 6, 5, 20},
        {28, 6, 5, 30}, {31, 6, 5, 35}, {32, 6, 5, 32}, {36, 6, 5, 36}, {3, 6, 5, 3},   {4, 6, 5, 4},
        {5, 6, 5, 5},   {6, 5, 0, 8},   {7, 5, 0, 8},   {11, 5, 0, 12}, {13, 5, 0, 15}, {36, 5, 0, 36},
        {31, 5, 0, 35}, {4, 5, 0, 4},   {9, 8, 5, 10},  {10, 5, 5, 10},
    };
    for (const auto &r : rows) {
        const bool many = r.fit_q > 0;
        const ChannelTiles list = channels_last_tiles(channels_last_vectors(many), many ? 16 : 8, r.q_tile, r.fit_q, 2);
        EXPECT_EQ(channels_last_row_computed(list, r.width), r.computed)
            << "row of " << r.width << ", tiles of " << r.q_tile << " and " << r.fit_q;
    }
}

// The blocked 1D kernel's blocks (facts/tile_facts.h), which its schedule and the
// dispatcher's count of parallel tasks read: the most tiles whose input rows fit the block's
// bytes (never fewer than one, never more than the cap), then even blocks of a row.
TEST(LayoutTiles, BlockedRowBlocksWithinTheirInputBytes) {
    using namespace deconv::tiles;
    const int bytes = kBlockedInputBytes, cap = blocked_tiles_per_block();
    // 32 positions of f32 per tile (AVX-512): 128 channels fill 512 KiB with 32 tiles.
    EXPECT_EQ(blocked_block_tiles<int64_t>(64, 32, 4, cap, bytes), 32);
    EXPECT_EQ(blocked_block_tiles<int64_t>(128, 32, 4, cap, bytes), 32);
    EXPECT_EQ(blocked_block_tiles<int64_t>(256, 32, 4, cap, bytes), 16);
    EXPECT_EQ(blocked_block_tiles<int64_t>(320, 32, 4, cap, bytes), 12);
    EXPECT_EQ(blocked_block_tiles<int64_t>(512, 32, 4, cap, bytes), 8);
    EXPECT_EQ(blocked_block_tiles<int64_t>(1 << 20, 32, 4, cap, bytes), 1);
    EXPECT_EQ(blocked_block_tiles<int64_t>(0, 32, 4, cap, bytes), 32);
    // 8 positions per tile (AVX2): 512 channels still take 32 tiles.
    EXPECT_EQ(blocked_block_tiles<int64_t>(512, 8, 4, cap, bytes), 32);
    EXPECT_EQ(blocked_block_tiles<int64_t>(1024, 8, 4, cap, bytes), 16);
    const struct {
        int64_t tiles, most, even;
    } rows[] = {{50, 16, 13}, {64, 16, 16}, {65, 16, 13}, {14, 12, 7}, {1, 32, 1}, {100, 32, 25}, {800, 32, 32}, {5, 1, 1}};
    for (const auto &r : rows) {
        const int64_t even = even_block_tiles<int64_t>(r.tiles, r.most);
        EXPECT_EQ(even, r.even) << r.tiles << " tiles in blocks of at most " << r.most;
        // As many blocks as blocks of `most` make, none larger than `most`.
        EXPECT_EQ((r.tiles + even - 1) / even, (r.tiles + r.most - 1) / r.most) << r.tiles << " tiles";
        EXPECT_LE(even, r.most);
    }
}

}  // namespace
