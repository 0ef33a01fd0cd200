// Which family of channels-last kernels a layer runs (kernel_choice.cpp, set_cpu_kernels asks them in
// this order, the first that takes the layer winning): the group-vectorized depthwise kernels, the
// bf16 dot-product pairs, the channel dots of few output channels, the group blocks. Each answers
// from the layer, its policy, the CPU variant's lanes (p.tiles) and the kernels this build has.
#pragma once

#include "plan/plan_impl.h"

namespace deconv {
namespace detail {

// Whether this build has the bounded and interior channels-last kernels of layer `p` of the
// family that `flag` of KernelKey marks (groups, dots); for a channels-first layer, those its
// channels-last twin would run.
bool has_channels_last_pair(const Plan::Impl &p, bool KernelKey::*flag);
// Channels-last depthwise layers on the group-vectorized kernels (KernelKey::groups).
bool uses_groups(const Plan::Impl &p);
// bf16 channels-last layers on the vdpbf16ps input-channel-pair kernels (KernelKey::ci_pairs).
bool uses_bf16_dot(const Plan::Impl &p);
// Channels-last layers of the channel-dot class on the kernels that vectorize input channels
// (KernelKey::dots).
bool uses_channel_dots(const Plan::Impl &p);
// Groups per vector of the group-block kernels for the layer (KernelKey::group_block), 0 where
// they do not take it.
int uses_group_blocks(const Plan::Impl &p);
// Channels-first grouped layers that take the channels-last twin for its group-block kernels.
bool group_blocks_twin(const Plan::Impl &p);

}  // namespace detail
}  // namespace deconv
