// Generator registration of the forward kernels (GroupConvolution-1), specialised per rank,
// dtype and data layout by generator parameters, scheduled per target class like the backprop
// kernels. The algorithm is in group_conv_algorithm.h. The kernel matrix builds it with
// vectorize=channels for both layouts (generators/CMakeLists.txt).
#include "group_conv_algorithm.h"
#include "kernel_generator.h"

namespace deconv {
namespace gen {

class GroupConvGenerator : public ConvKernelGenerator<GroupConvGenerator> {
public:
    // Stride and dilation of each axis, innermost first; always three of each.
    Input<int32_t> stride_0{"stride_0", 1, 1, 1 << 20};
    Input<int32_t> stride_1{"stride_1", 1, 1, 1 << 20};
    Input<int32_t> stride_2{"stride_2", 1, 1, 1 << 20};
    Input<int32_t> dilation_0{"dilation_0", 1, 1, 1 << 20};
    Input<int32_t> dilation_1{"dilation_1", 1, 1, 1 << 20};
    Input<int32_t> dilation_2{"dilation_2", 1, 1, 1 << 20};

    void configure() { add_buffers(); }

    void generate() {
        std::vector<Expr> s = {stride_0, stride_1, stride_2}, d = {dilation_0, dilation_1, dilation_2};
        s.resize(rank);
        d.resize(rank);
        ConvStages p = define_group_conv(logical_input_of(true), logical_filter_of(), *filter, data_layout(), channel_major(), rank,
                                         s, d, storage(), pairs(), store_bias());
        // Vectorizing output positions needs unit stride for dense input loads: specialise it
        // (other strides gather). Vectorizing channels reads the input by broadcasts, any stride.
        std::vector<Expr> variants;
        if (!p.channel_major) variants = {stride_0 == 1};
        // Every read is bounds-tested, so the CPU kernels take the bounded kernels' branch list
        // (the main register tiles): the forward op is the backprop ops' definition, and its
        // kernels cost the build more than any backprop family with the whole list.
        finish(p, variants, false, true);
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::GroupConvGenerator, deconv_group_conv)
