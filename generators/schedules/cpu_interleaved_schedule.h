// CPU schedule (x86-64 and ARM64) of the interleaved phase convolution
// (define_interleaved_phase_conv): every stride phase of the innermost axis in one register
// tile, stored as dense rows.
//
// The register tile is `s` phases x `vectors` native vectors of output groups q x `co_tile`
// output channels. Per step of the reduction over (ci, taps) it loads one input vector per phase
// and q-vector (dense: q is contiguous in the input) and broadcasts one weight per phase and
// channel. After the reduction the s phase vectors of each channel are stored at
// ph + s*q: the output's dim 1 has the constant stride s, so Halide merges those s strided stores
// into one interleaving shuffle and dense stores. Sizes follow the register count: s phases x 1
// vector x 16/s channels = 16 accumulators of 32 on AVX-512 and ARM64 (half that on AVX2/SSE,
// 16 registers).
// Branches as in cpu_schedule.h: full tile; few channels (positions only); scalar.
//
// The blocked variant (generator parameter blocked=true) serves layers with many output channels
// whose weights fit L2 (hifigan_up3, dcgan_l4, unet_up4, unet3d_up): 24 accumulators (2 vectors x
// 2 phases x 6 channels at stride 2), every channel tile run over a block of position tiles (1D)
// or rows (2D/3D) while the block's input sits in L2, and each channel tile's weights copied per
// block with constant offsets between its broadcasts.
#pragma once

#include "../phase_conv_algorithm.h"
#include "cpu_parallel.h"
#include "../../facts/interleaved_depthwise_facts.h"
#include "schedule_params.h"
#include "../../facts/tile_facts.h"

namespace deconv {
namespace gen {

inline void schedule_cpu_interleaved(InterleavedStages &p, Halide::OutputImageParam out_param, int stride,
                                     const Halide::Expr &pad_begin, const Halide::Target &target,
                                     const Halide::Type &acc_t, ScheduleParams sp, bool blocked) {
    using namespace Halide;
    const bool many_regs = tiles::many_registers(target.has_feature(Target::AVX512), target.arch == Target::ARM);
    const int accumulators = tiles::interleaved_accumulators(many_regs);
    const int few_channel_accumulators = tiles::interleaved_few_channel_accumulators(many_regs);
    if (sp.vectors <= 0) sp.vectors = tiles::interleaved_vectors();
    if (sp.co_tile <= 0) sp.co_tile = std::max(1, accumulators / stride);
    const int rank = (int)p.q.size();
    // The few-channel tiles below (RGB and two-channel tiles, pad-residue copies of the depthwise
    // ones) were tuned on f32 accumulators (f32, f16, bf16 layers); 64-bit and integer
    // accumulators keep the general branches: with them, LLVM took 3 minutes per SSE4.1 variant
    // of the 2D i32 kernel (Int(64) accumulators), 5 seconds without.
    const bool few_channel_tiles = acc_t == Halide::Float(32);
    const int lanes = target.natural_vector_size(acc_t);
    const int qt = lanes * sp.vectors;

    Expr width = out_param.dim(1).extent();  // groups q along axis 0
    Expr channels = out_param.dim(rank + 1).extent();

    struct Branch {
        Expr cond;
        int q_tile, co_tile, vec;
        bool unroll_j = false;   // two taps along axis 0 (kernel = 2 x stride): unrolled
        bool taps_inner = false;  // one input channel (depthwise): the taps innermost
        bool unroll_outer = false;  // and two taps along axis 1 too (rank >= 2): unrolled
        bool exact = false;  // the position tiles divide the row: no shifted last tile
        bool unroll_ci = false;  // the one input channel's loop unrolled too
    };
    std::vector<Branch> branches;
    const Expr two_taps = p.r[0].extent() == 2, one_channel = p.r[rank].extent() == 1;
    if (blocked) {
        // 24 accumulators of 32 (12 of 16 on AVX2/SSE): at stride 2 on AVX-512 and ARM64, 2
        // vectors x 6 channels (hifigan_up3: 4.7 ms against 5.9 with 1 vector x 8 channels, a
        // third fewer loads per FMA). The dispatcher sends only layers with 16 or more channels
        // and 32 or more groups per row (prefers_blocked_interleave in runtime/api/plan.cpp): no
        // narrower tiles. Two taps along axis 0 unrolled as below.
        const int vecs = tiles::blocked_vectors(many_regs), q_tile = vecs * lanes;
        int co = std::max(1, tiles::blocked_accumulators(many_regs) / (stride * vecs));
        if (co == q_tile) co--;  // no square tiles (see below)
        const Expr cond = channels >= co && width >= q_tile;
        Branch u{cond && two_taps, q_tile, co, lanes};
        u.unroll_j = true;
        branches = {u, {cond, q_tile, co, lanes}};
    } else {
        branches = {
            {channels >= sp.co_tile && width >= qt, qt, sp.co_tile, lanes},
            {channels >= sp.co_tile && width >= lanes, lanes, sp.co_tile, lanes},
        };
        // RGB outputs (dcgan_l5): 3 channels per tile, s x 3 accumulators where they fit (s = 2;
        // at s = 8 they would be 24). One channel per tile ran 1.3x slower on dcgan_l5. Two vectors
        // of positions where the row holds them (12 accumulators: each weight broadcast serves two
        // FMAs): dcgan_l5 6.0-6.2 -> 3.7-3.9 ms (2 threads, Zen 4 VM, runs minutes apart); on AVX2,
        // within interleaved_few_channel_accumulators, 7.0 -> 4.0 ms.
        if (3 * stride <= accumulators && sp.co_tile > 3) {
            if (6 * stride <= few_channel_accumulators && few_channel_tiles) {
                branches.push_back({channels >= 3 && width >= 2 * lanes, 2 * lanes, 3, lanes});
            }
            branches.push_back({channels >= 3 && width >= lanes, lanes, 3, lanes});
        }
        // Two channels (the spec's examples: ov_spec_1d/2d): with one channel per tile, s x 1
        // accumulators left the FMAs waiting on their latency. Two channels, and two vectors of
        // positions where the row holds them and the registers allow (2 threads, Zen 4 VM,
        // alternating runs: ov_spec_2d 0.80 -> 0.365 ms, ov_spec_1d 3.6 -> 2.35 us).
        if (2 * stride <= accumulators && sp.co_tile > 2 && few_channel_tiles) {
            if (4 * stride <= few_channel_accumulators) {
                branches.push_back({channels >= 2 && width >= 2 * lanes, 2 * lanes, 2, lanes});
            }
            branches.push_back({channels >= 2 && width >= lanes, lanes, 2, lanes});
        }
        // Few channels (depthwise): one vector of positions, one channel. (Two vectors per tile made
        // Halide 14 store the tile one lane at a time: 48 vextractps per tile at s = 2, as at s = 8.)
        branches.push_back({width >= lanes, lanes, 1, lanes});
        // Rows of 8-15 groups on AVX-512 with fewer channels than a tile (small depthwise planes, 14
        // -> 27 outputs at stride 2): half vectors rather than quarter ones (256 groups of 14x14,
        // kernel 3 stride 2 pad 1: 0.072 -> 0.051 ms, 2 threads, Zen 4). The depthwise
        // specializations below include them with the full vectors. (Ahead of the four-position
        // tile of a whole channel tile, they ran 16 -> 8 channels at 7x7, kernel 4 stride 2, 2.4x
        // slower.)
        const int half = lanes / 2;
        if (lanes > 4) {
            branches.push_back({channels >= sp.co_tile && width >= 4, 4, sp.co_tile, 4});
            if (half >= 8 && few_channel_tiles) branches.push_back({width >= half, half, 1, half});
            branches.push_back({width >= 4, 4, 1, 4});
        }
        // No square tiles (cpu_schedule.h: Halide 14 drops such a branch's reduction).
        std::vector<Branch> distinct;
        for (Branch b : branches) {
            if (b.co_tile > 1 && b.co_tile == b.q_tile) {
                b.co_tile *= 2;
                b.cond = channels >= b.co_tile && width >= b.q_tile;
            }
            // One vector per tile (vectors = 1) makes the first two branches the same: keep one.
            bool seen = false;
            for (const Branch &d : distinct) seen = seen || (d.q_tile == b.q_tile && d.co_tile == b.co_tile);
            if (!seen) distinct.push_back(b);
        }
        // Every layer of the suite on this kernel has two taps per phase along axis 0 (kernel 4 at
        // stride 2, 16 at 8, 3 at 2 padded to 2): unrolled, they leave no loop of two iterations
        // around each pair of FMAs. Depthwise layers (one input channel) have no channel loop to
        // speak of: their taps go innermost. Each is a specialization ahead of the general branch.
        // Depthwise tiles read one input vector per phase and tap, at q + floor((ph + pad_begin) /
        // s) - j: with pad_begin a run-time value that is a different address per phase (8 per tap
        // at stride 8), which LLVM kept on the stack and reloaded before every FMA (fcn8s_upscore8:
        // 32 input loads and 32 address reloads per 32 FMAs). The dispatcher passes pad_begin
        // modulo the stride (moving the input's origin by the rest), and the full-vector depthwise
        // tiles specialize the common residue: 0 at stride 8 (kernel 16, pad 0), 1 at stride 2
        // (kernel 4, pad 1), where every phase's address is a constant offset from one.
        // (2 threads, Zen 4 VM: fcn8s_upscore8 1.1-1.3 -> 0.67-0.8 ms, centernet_dla_dw
        // 0.107-0.112 -> 0.080. The same for the tiles with many channels, whose input loads
        // serve every channel of the tile, gained 2% on dcgan_l5 and nothing elsewhere.)
        const int common_pad = tiles::interleaved_depthwise_pad_residue(stride);
        const auto at_common_pad = [&](Branch c) {
            c.cond = c.cond && pad_begin == common_pad;
            return c;
        };
        branches.clear();
        const Expr one_tap = p.r[0].extent() == 1;
        const auto common_pad_tile = [&](const Branch &b) {
            return (b.q_tile == lanes || b.q_tile == half) && few_channel_tiles;
        };
        for (const Branch &b : distinct) {
            if (b.co_tile == 1 && rank >= 2) {
                // Depthwise at kernel = stride (one tap per phase): a product per output, no
                // reduction loop left.
                Branch o = b;
                o.cond = b.cond && one_tap && one_channel && p.r[1].extent() == 1;
                o.unroll_j = o.taps_inner = o.unroll_outer = o.unroll_ci = true;
                Branch e = o;
                e.cond = o.cond && width % b.q_tile == 0;
                e.exact = true;
                branches.push_back(e);
                branches.push_back(o);
            }
            if (b.co_tile == 1) {
                Branch d = b;
                d.cond = b.cond && two_taps && one_channel;
                d.unroll_j = d.taps_inner = true;
                if (rank >= 2) {
                    // Depthwise 2D/3D upsampling (kernel 2s x 2s): all four taps of a tile unrolled.
                    Branch d2 = d;
                    d2.cond = d.cond && p.r[1].extent() == 2;
                    d2.unroll_outer = true;
                    // Rows a whole number of tiles long (centernet_dla_dw: 64 groups): every
                    // tile starts at a multiple of its width, so addresses step by a constant.
                    // The shifted last tile of the other branches (ShiftInwards) puts a min()
                    // into every tile's start, and LLVM recomputed each load's address from it:
                    // 20 scalar instructions per 8 FMAs.
                    Branch e = d2;
                    e.cond = d2.cond && width % b.q_tile == 0;
                    e.exact = true;
                    for (const Branch &c : {e, d2}) {
                        if (common_pad_tile(b)) branches.push_back(at_common_pad(c));
                        branches.push_back(c);
                    }
                }
                if (common_pad_tile(b)) branches.push_back(at_common_pad(d));
                branches.push_back(d);
            }
            // Tiles past the plain budget (AVX2's 12 of 16) unroll no taps: two taps' input
            // vectors beside their accumulators spilled one of them to the stack per FMA pair.
            if (b.co_tile * stride * (b.q_tile / b.vec) <= accumulators) {
                Branch u = b;
                u.cond = b.cond && two_taps;
                u.unroll_j = true;
                branches.push_back(u);
            }
            branches.push_back(b);
        }
    }

    // Loops innermost first: [qi, ph, coi], tile, q1 .. q_{D-1} (the rows of a task), coo, task,
    // g, n: `tile` runs the position tiles of a row (the accumulators are computed at it), coo
    // the channel tiles. Tasks of the outermost row axis (1D: the channel tiles), groups and
    // batch in parallel, as in cpu_schedule.h.
    // Blocked: 1D [qi, ph, coi], tile, coo, qblk, g, n: blocks of position tiles whose input
    // fits sp.l2_input_bytes (at most sp.q_block tiles; tiles::blocked_block_tiles), of even
    // sizes (tiles::even_block_tiles), in tasks. 2D/3D [qi, ph, coi], tile, rin, coo, rblk, q2,
    // g, n: blocks of rows of axis 1 whose input fits sp.l2_input_bytes, in tasks (3D: tasks of
    // q2).
    Var tile("tile"), qo("qo"), qblk("qblk"), rblk("rblk"), rin("rin"), qi("qi"), coo("coo"), coi("coi");
    const Expr groups = out_param.dim(rank + 2).extent(), batch = out_param.dim(rank + 3).extent();
    // Blocked 2D/3D: rows of axis 1 per block, the block's input (channels x row) within
    // sp.l2_input_bytes.
    const Expr rows = rank >= 2 ? out_param.dim(2).extent() : Expr(1);
    const Expr rows_per_block =
        clamp(sp.l2_input_bytes / max(p.r[rank].extent() * width * acc_t.bytes(), 1), 1, max(rows, 1));
    auto outer = [&](Stage s, int q_tile, int co_tile, bool exact) {
        s.split(p.q[0], blocked && rank == 1 ? qo : tile, qi, q_tile,
                exact ? TailStrategy::RoundUp : TailStrategy::ShiftInwards);
        s.split(p.co, coo, coi, co_tile, TailStrategy::ShiftInwards);
        std::vector<VarOrRVar> order = {qi, p.ph, coi, tile};
        const Expr row_tiles = max((width + q_tile - 1) / q_tile, 1);
        const Expr block_tiles = tiles::even_block_tiles(
            row_tiles,
            tiles::blocked_block_tiles(p.r[rank].extent(), q_tile, acc_t.bytes(), sp.q_block, sp.l2_input_bytes));
        if (blocked && rank == 1) {
            s.split(qo, qblk, tile, block_tiles, TailStrategy::GuardWithIf);
            order.insert(order.end(), {coo, qblk});
        } else if (blocked) {
            s.split(p.q[1], rblk, rin, rows_per_block, TailStrategy::GuardWithIf);
            order.insert(order.end(), {rin, coo, rblk});
            for (int i = 2; i < rank; i++) order.push_back(p.q[i]);
        } else {
            order.push_back(coo);
            for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        }
        order.push_back(p.g);
        order.push_back(p.n);
        s.reorder(order);
        if (blocked && rank == 1) {
            parallel_row_tasks(s, qblk, (row_tiles + block_tiles - 1) / block_tiles, groups, batch);
        } else if (blocked && rank == 2) {
            parallel_row_tasks(s, rblk, (rows + rows_per_block - 1) / rows_per_block, groups, batch);
        } else if (blocked) {  // 3D: tasks of q2, the blocks of q1 rows inside
            parallel_row_tasks(s, p.q[rank - 1], out_param.dim(rank).extent(), groups, batch);
        } else if (rank >= 2) {
            // The channel tiles outside the rows of a task: the weight copy (below) once per
            // task and channel tile.
            const RowTasks t = parallel_row_tasks(s, p.q[rank - 1], out_param.dim(rank).extent(), groups, batch);
            s.reorder(t.in_task, coo, t.task);
        } else {
            s.parallel(coo);
        }
        s.parallel(p.g).parallel(p.n);
        s.unroll(p.ph);
    };
    for (const Branch &b : branches) {
        Stage s = p.out.specialize(b.cond);
        outer(s, b.q_tile, b.co_tile, b.exact);
        if (b.q_tile > b.vec) {
            // Each vector's phases adjacent (ph inside qu): Halide merges their strided stores
            // into one interleaving shuffle; with qu inside ph it stored lane by lane.
            Var qu("qu"), qv("qv");
            s.split(qi, qu, qv, b.vec).reorder(qv, p.ph, qu).vectorize(qv).unroll(qu);
        } else {
            s.vectorize(qi, b.vec);
        }
        if (b.co_tile > 1) s.unroll(coi);
    }
    outer(p.out, 1, 1, false);

    // The weights of a channel tile copied per block (per task of rows, per row in 1D) with the
    // tile's channels innermost, then its phases and taps: inside the copy every broadcast of a
    // reduction step is a constant offset from one address. Read from the packed filter, whose
    // phase and tap strides are run-time values, each broadcast took its own general register
    // and the tile spilled them (hifigan_up3, grouped32_up).
    {
        Func w = p.filter.in(p.acc);
        const std::vector<Var> wa = w.args();  // j, ph, k_1 .. k_{D-1}, co, ci, g
        std::vector<VarOrRVar> co_first = {wa[rank + 1], wa[1], wa[0]};
        for (int i = 2; i < (int)wa.size(); i++)
            if (i != rank + 1) co_first.push_back(wa[i]);
        std::vector<Var> storage;
        for (const VarOrRVar &v : co_first) storage.push_back(v.var);
        w.compute_at(p.out, coo).reorder_storage(storage).reorder(co_first);
    }

    // Each phase's accumulators as whole vectors of q: stored in the algorithm's order (phase
    // innermost) the tile was de-interleaved and re-interleaved around every FMA (four vpermt2ps
    // per two FMAs on a depthwise tile); so, only the final store interleaves.
    p.acc.compute_at(p.out, tile).store_in(MemoryType::Register).reorder_storage(p.q[0], p.ph);
    std::vector<VarOrRVar> order = {p.q[0], p.ph, p.co, p.r[rank]};
    for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
    for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
    order.push_back(p.g);
    order.push_back(p.n);
    Stage u = p.acc.update();
    u.reorder(order);
    for (const Branch &b : branches) {
        Stage a = p.acc.specialize(b.cond);
        Stage au = u.specialize(b.cond);
        if (b.taps_inner) {
            std::vector<VarOrRVar> taps_first = {p.q[0], p.ph, p.co, p.r[0], p.r[rank]};
            for (int i = 1; i < rank; i++) taps_first.push_back(p.r[i]);
            for (int i = 1; i < rank; i++) taps_first.push_back(p.q[i]);
            taps_first.push_back(p.g);
            taps_first.push_back(p.n);
            au.reorder(taps_first);
        }
        for (Stage st : {a, au}) {
            st.vectorize(p.q[0], b.vec);
            if (b.q_tile > b.vec) st.unroll(p.q[0]);
            st.unroll(p.ph);
            if (b.co_tile > 1) st.unroll(p.co);
        }
        if (sp.unroll_taps || b.unroll_j) au.unroll(p.r[0]);
        if (b.unroll_outer) au.unroll(p.r[1]);
        if (b.unroll_ci) au.unroll(p.r[rank]);
    }
    p.acc.unroll(p.ph);
    u.unroll(p.ph);
}

}  // namespace gen
}  // namespace deconv
