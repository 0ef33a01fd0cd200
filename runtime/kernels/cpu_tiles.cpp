#include "kernels/cpu_tiles.h"

#include "facts/tile_facts.h"

namespace deconv {
namespace detail {

CpuRegisters cpu_registers(const std::string &variant) {
    if (variant == "avx512") return {true, 512};
    if (variant == "avx2") return {false, 256};
    if (variant == "sse41") return {false, 128};
    return {tiles::many_registers(false, true), 128};  // ARM64: dotprod_fp16, neon
}

int accumulator_bits(DType t) {
    switch (t) {
    case DType::f64:
    case DType::i32: return 64;
    default: return 32;
    }
}

KernelTiles kernel_tiles(const CpuRegisters &regs, DType dtype, const KernelEntry *channels_kernel,
                         const KernelEntry *interleaved) {
    KernelTiles t;
    t.lanes = tiles::lanes(regs.vector_bits, accumulator_bits(dtype));
    t.short_positions = tiles::kPositionsShortTile;
    if (channels_kernel) {
        const ScheduleKnobs &k = channels_kernel->knobs;
        t.row_positions = k.q_tile > 0 ? k.q_tile : tiles::channels_last_q_tile(regs.many);
        t.short_positions = tiles::kChannelsLastShortTile;
        t.fit_positions = tiles::channels_last_fit_q_tile(regs.many);
        const int vectors = k.vectors > 0 ? k.vectors : tiles::channels_last_vectors(regs.many);
        t.four_position_channels = vectors * t.lanes;
        t.channel_tiles = tiles::channels_last_tiles(vectors, (int)t.lanes, (int)t.row_positions, (int)t.fit_positions,
                                                     channels_kernel->key.rank);
    }
    if (interleaved) {
        const int vectors = interleaved->knobs.vectors > 0 ? interleaved->knobs.vectors : tiles::interleaved_vectors();
        t.interleaved_groups = vectors * t.lanes;
    }
    t.blocked_groups = tiles::blocked_vectors(regs.many) * t.lanes;
    return t;
}

int64_t blocked_task_groups(const KernelTiles &t, int64_t c_in) {
    const int acc_bytes = accumulator_bits(DType::f32) / 8;
    return t.blocked_groups * tiles::blocked_block_tiles<int64_t>(c_in, (int)t.blocked_groups, acc_bytes,
                                                                   tiles::blocked_tiles_per_block(),
                                                                   tiles::kBlockedInputBytes);
}

}  // namespace detail
}  // namespace deconv
