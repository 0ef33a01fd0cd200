// Group blocks, written once: channels-last grouped layers whose output channels per group fill
// a fraction 1/b of a vector (b = 2 or 4: 8 or 4 f32 channels on AVX-512, 4 on AVX2) run on
// kernels whose vectors hold b groups' channels at once (cpu_group_blocks_schedule.h). Lane
// l = gi + b * co: the b groups of a block innermost, so that the input values one vector
// multiplies, channel ci of each group at one position, are b adjacent elements of a
// block-interleaved input copy ([.., ci, gi]: runtime/cpu/bordered_input.h), loaded by one
// broadcast of b elements (vbroadcastsd / vbroadcastf32x4) instead of one broadcast per group.
// The register tile: group_block_q_tile positions x group_block_rows rows of one vector each.
// No Halide here: the runtime includes this header.
#pragma once

namespace deconv {
namespace tiles {

constexpr int kGroupBlockMin = 2, kGroupBlockMax = 4;

// Groups per vector for `lanes` f32 lanes and `c_out` output channels per group; 0 where no
// block fits (a vector not a whole number of groups, or a block outside [2, 4]).
constexpr int group_block(int lanes, long long c_out) {
    if (c_out <= 0 || lanes % c_out != 0) return 0;
    const long long b = lanes / c_out;
    return b >= kGroupBlockMin && b <= kGroupBlockMax && (b & (b - 1)) == 0 ? (int)b : 0;
}

// 7 x 2 = 14 accumulators of 32 registers (rows of 7, 14, 28 and 56 positions are whole tiles),
// 5 x 2 = 10 of 16; one row where the rank has one spatial axis.
constexpr int group_block_q_tile(bool many) { return many ? 7 : 5; }
constexpr int group_block_rows(int rank) { return rank >= 2 ? 2 : 1; }

}  // namespace tiles
}  // namespace deconv
