// The register tiles of the CPU schedules, written once. The schedules read them for the Halide
// target they compile, the dispatcher (runtime/kernel_traits.h) for the CPU variant that runs, so
// that its row splits and tile multiples always match the kernels. No Halide here: the runtime
// includes this header.
#pragma once

#include <algorithm>

namespace deconv {
namespace tiles {

// The register file: 32 vector registers on AVX-512 and ARM64 ("many"), 16 on AVX2 and SSE4.1.
// `vector_bits`: 512 on AVX-512, 256 on AVX2, 128 on SSE4.1 and NEON.
constexpr bool many_registers(bool avx512, bool arm) { return avx512 || arm; }
constexpr int lanes(int vector_bits, int element_bits) { return vector_bits / element_bits; }

// Channel-vectorized (channels-last) schedule, cpu_channels_last_schedule.h: `vectors` channel
// vectors x `q_tile` output positions of the innermost axis (4 x 6 = 24 accumulators of 32; 2 x 5
// of 16). Rows narrower than q_tile, and the last tiles of rows split exactly, take its
// four-position branch, which needs the full tile's channels.
constexpr int channels_last_vectors(bool many) { return many ? 4 : 2; }
constexpr int channels_last_q_tile(bool many) { return many ? 6 : 5; }
constexpr int kChannelsLastShortTile = 4;
// With 32 registers its full tiles also come five positions wide (4 x 5 = 20 accumulators), for
// rows that such tiles cover with fewer positions computed than six-position ones: rows of 7, 9,
// 13 or 19 (10, 10, 15, 20 positions against 12, 12, 18, 24). (128 -> 128 channels, 8^3 and 12^3,
// kernel 4 stride 2, rows of 9 and 13: 1.18-1.19x.) AVX2's tiles are five wide already.
constexpr int channels_last_fit_q_tile(bool many) { return many ? 5 : 0; }
// The quantized dot-product schedule (cpu_quant_dots_schedule.h): the channels-last tile of input
// quads, and four positions wide on i16 pairs (`group` 2), whose multiply-adds need a temporary
// register each; then, for rows narrower than that, the full channels over each of
// kQuantDotsShortTiles below it. The dispatcher cuts rows into pieces these tiles cover exactly.
constexpr int quant_dots_q_tile(bool many, int group) { return group == 2 ? 4 : channels_last_q_tile(many); }
constexpr int kQuantDotsShortTiles[] = {4, 2, 1};
// Its tiles of one 8-lane vector of channels (8-15 output channels per group: half a vector on
// AVX-512, one on AVX2) have a branch for groups of kDenseGroupChannels input channels whose
// positions lie that many elements apart: every input read of a tile row is a constant offset
// from one address, where the general branch spends an address computation per read. The
// dispatcher lays grouped layers' input copies out group-major (runtime/cpu/bordered_input.h) so that
// they take it. f32 accumulators only (f32, f16, bf16).
constexpr int kDenseGroupChannels = 8;
constexpr int kDenseGroupLanes = 8;
// Whether a target's kernels have the branch (8 lanes or more), and whether a layer of `c_out`
// output channels per group runs it there (one 8-lane vector).
constexpr bool dense_group_target(int lanes) { return lanes >= kDenseGroupLanes; }
constexpr bool dense_group_tile(int lanes, long long c_out) {
    return dense_group_target(lanes) && c_out >= kDenseGroupLanes && c_out < 2 * kDenseGroupLanes;
}
// Its position tiles (one or two rows of them): on rows of a multiple of one of
// dense_group_exact_q_tiles (and not of kDenseGroupQTile) that one, else kDenseGroupQTile. A
// tile costs about its positions whatever the row, so the fewest positions computed win. With
// every input read at a constant offset, these tiles, wider than the general q_tile, spill no
// address registers. (32 groups of 8 -> 8 channels, kernel 3 stride 2, Zen 4, against the general
// tiles: rows of 7-40 1.03-1.6x faster on AVX-512, one thread; 1.04-1.34x under AVX2, two
// threads. 14 positions spilled on AVX-512.) The input channels' loop is unrolled with 32
// registers only: on AVX2 the unrolled tiles ran 1.1-1.25x slower than the rolled ones.
// (AVX2 has no exact tiles: its 6-position branch stored the accumulators' initial zeros, the
// Halide 14 defect of cpu_schedule.h's square tiles, in another shape.)
constexpr int kDenseGroupQTile = 7;
struct DenseGroupExactTiles {
    int count;
    int q[2];
};
constexpr DenseGroupExactTiles dense_group_exact_q_tiles(bool many) {
    return many ? DenseGroupExactTiles{2, {8, 6}} : DenseGroupExactTiles{0, {0, 0}};
}
constexpr bool dense_group_unrolled_channels(bool many) { return many; }

// Tap-row schedule (cpu_tap_rows_schedule.h): the channels-last register tiles, over bands of
// this many output rows, each band's accumulator in memory while every tap row passes over it.
constexpr int kTapRowsBandRows = 4;

// Group-vectorized schedule of channels-last depthwise layers, cpu_groups_schedule.h: `vectors`
// group vectors x `q_tile` output positions (4 x 4 = 16 accumulators of 32, 2 x 4 of 16: each
// multiply-add also loads its input vector).
constexpr int groups_vectors(bool many) { return many ? 4 : 2; }
constexpr int groups_q_tile() { return 4; }
// Its exact tiles, tried first where the default tiles are not: groups that are a whole number
// of three or two vectors take that many vectors (no group computed twice by a shifted last
// tile), and one vector of groups takes eight positions. A tap loop of one or two iterations
// then holds 8-15 multiply-adds, where the one-vector tile that 48 and 96 groups ran held four
// (48 groups, 56x56, kernel 3 stride 2: 1.23x; 96 groups, kernel 5 stride 2: 1.5x; Zen 5).
// q_tile 0: no such tile (AVX2's two-vector tile is its default one). Six positions on 16
// registers: eight would square the tile of 8 lanes (cpu_schedule.h).
constexpr int groups_three_vector_q_tile(bool many) { return many ? 5 : 4; }
constexpr int groups_two_vector_q_tile(bool many) { return many ? 6 : 0; }
constexpr int groups_one_vector_q_tile(bool many) { return many ? 8 : 6; }

// Position-vectorized (channels-first) schedule, cpu_schedule.h: `vectors` position vectors x
// `co_tile` output channels.
constexpr int positions_vectors() { return 2; }
constexpr int positions_co_tile(bool many) { return many ? 8 : 4; }
// Its narrowest vectorized branch: rows of at least this many positions run 4-lane vectors (or
// the native 4 lanes of SSE4.1 and NEON); narrower ones run scalar.
constexpr int kPositionsShortTile = 4;
// Its depthwise tiles (one input channel per group) on dense output rows (stride-1 phases): this
// many position vectors, one accumulator each, where a row holds them. Each multiply-add waits on
// its accumulator's last, so two vectors ran at the FMA latency's bound (128 groups of 112x112,
// kernel 5 stride 1, 2 threads, Sapphire Rapids: 2.6 ms on two vectors, 1.7 on four).
constexpr int kDepthwiseDenseVectors = 4;

// Interleaved schedule, cpu_interleaved_schedule.h. Plain: s phases x `vectors` (1) position
// vectors x accumulators / s channels. Blocked: `blocked_vectors` position vectors x s phases x
// channels, blocked_accumulators in all; a row's groups are tiled by blocked_vectors vectors.
constexpr int interleaved_vectors() { return 1; }
constexpr int interleaved_accumulators(bool many) { return many ? 16 : 8; }
// Its tiles of two and three output channels may hold more: their weight broadcasts serve every
// position vector of a phase, so s phases x 2 vectors x 3 channels need only the two input
// vectors of one phase and a broadcast beside them (15 of 16 registers).
constexpr int interleaved_few_channel_accumulators(bool many) { return many ? 16 : 12; }
constexpr int blocked_vectors(bool many) { return many ? 2 : 1; }
constexpr int blocked_accumulators(bool many) { return many ? 24 : 12; }
// Its blocks: every channel tile runs over a block while the block's input (the input channels'
// rows of its positions) sits in L2. 2D/3D blocks are whole rows of axis 1, as many as keep that
// input within kBlockedInputBytes (half of a 1 MiB L2; the default of the generator parameter
// l2_input_kib). A 1D block, one parallel task, is blocked_block_tiles position tiles of a row.
constexpr int kBlockedInputBytes = 512 * 1024;
constexpr int blocked_tiles_per_block() { return 32; }  // the most: generator parameter q_block
// The most tiles up to `max_tiles` whose input (`in_channels` rows of q_tile positions of
// `elem_bytes`) stays within `input_bytes`, and at least one. A template over the channel
// count's type: a Halide Expr in the schedule, an integer in the dispatcher. (256 -> 128
// channels, kernel 4 stride 2, 12800 positions, 2 threads, Sapphire Rapids: blocks of 32 tiles,
// 1 MiB of input, ran 1.3-1.7x slower than this rule's 16.)
template <typename T>
T blocked_block_tiles(const T &in_channels, int q_tile, int elem_bytes, int max_tiles, int input_bytes) {
    using std::max;
    using std::min;
    return max(T(1), min(T(max_tiles), T(input_bytes) / max(in_channels * T(q_tile * elem_bytes), T(1))));
}
// A row of `tiles` in blocks of at most `most` tiles: as many blocks as those make, of even
// sizes, so that no thread's last task is a sliver while another runs a whole block (50 tiles in
// blocks of 16: 13, 13, 13, 11 rather than 16, 16, 16, 2; two threads then finish together).
// (Clamped to [1, most], which it always is, so that Halide's bounds inference knows the blocks'
// sign and size: unclamped, it read the input far outside the row.)
template <typename T>
T even_block_tiles(const T &tiles, const T &most) {
    using std::max;
    using std::min;
    const T blocks = max((tiles + most - 1) / most, T(1));
    return max(T(1), min(most, (tiles + blocks - 1) / blocks));
}

// CUDA schedule, gpu_schedule.h. Blocks of gpu_threads_x threads along the thread axis times
// gpu_threads_y. Threads along positions hold gpu_co_tile output channels times gpu_row_tile rows
// (the second spatial axis) where a launch has at least gpu_big_tile_outputs() outputs, else
// gpu_small_co_tile x gpu_small_row_tile: centernet_up3's 1M outputs per phase in tiles of 32 made
// 256 blocks on a GPU of 132 multiprocessors (11% occupancy achieved, H200). Threads along
// channels hold gpu_q_tile positions.
constexpr int gpu_threads_x() { return 32; }
constexpr int gpu_threads_y() { return 4; }
constexpr int gpu_co_tile() { return 8; }
constexpr int gpu_row_tile() { return 4; }
constexpr int gpu_small_co_tile() { return 4; }
constexpr int gpu_small_row_tile() { return 2; }
constexpr int gpu_big_tile_outputs() { return 1 << 22; }
constexpr int gpu_q_tile() { return 4; }
// Channels-last layers with fewer output channels per group than this put threads along
// positions, as channels-first ones do: with one channel (depthwise) a warp along channels ran 1
// lane in 32 (centernet_dla_dw_nxc at 0.22x of cuDNN on an H200).
constexpr int gpu_channel_threads_min() { return 16; }
// Channels-first phases narrower than this, with a warp of output channels or more per group,
// put threads along output channels instead of positions: a 4-wide phase (dcgan_l2) left 28 of
// a warp's 32 lanes idle.
constexpr int gpu_narrow_width() { return 24; }

}  // namespace tiles
}  // namespace deconv
