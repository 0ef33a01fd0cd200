// Where the interleaved depthwise tiles have their fast branch, written once: the pads_begin
// residue modulo the stride at which every phase's input address is a constant offset of one,
// and two taps per phase on axes 0 and 1 (kernel 2s), unrolled with the tile. The group kernel
// also unrolls one tap on axis 1 beside two on axis 0, so that kernel 2s - 1 (phases of one and
// two taps, packed to two along axis 0) takes it too. Both the channels-last group kernel
// (cpu_interleaved_groups_schedule.h) and the channels-first interleaved kernel's depthwise
// tiles (cpu_interleaved_schedule.h) specialize them. The dispatcher (runtime/dispatch/)
// runs the group kernel only there (on its general branch it ran 2-10x slower than the
// per-phase group kernels), and the channels-first one at stride 3 with two taps per phase only
// there. No Halide here: the runtime includes this header.
#pragma once

namespace deconv {
namespace tiles {

constexpr int interleaved_depthwise_pad_residue(int stride) { return stride == 2 ? 1 : 0; }
constexpr int kInterleavedDepthwiseTaps = 2;

}  // namespace tiles
}  // namespace deconv
