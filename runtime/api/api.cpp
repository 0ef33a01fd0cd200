// The one-shot entry points: a plan built and run once.
#include "deconv/deconv.h"

namespace deconv {

namespace {

void run_once(Op op, const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output,
              const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape, const ExecOptions &exec) {
    if (filter.dtype != input.dtype) {
        throw Error(ErrorKind::InvalidArgument, std::string("filter dtype ") + dtype_name(filter.dtype) +
                                                    " does not match data dtype " + dtype_name(input.dtype));
    }
    if (output.dtype != input.dtype) {
        throw Error(ErrorKind::InvalidArgument, std::string("output dtype ") + dtype_name(output.dtype) +
                                                    " does not match data dtype " + dtype_name(input.dtype));
    }
    Plan::create(op, input.dtype, input.shape, filter.shape, attrs, output_shape, exec).run(input, filter, output);
}

}  // namespace

void group_convolution_backprop_data(const ConstTensorView &input, const ConstTensorView &filter,
                                     const TensorView &output, const Attributes &attrs,
                                     const std::optional<std::vector<int64_t>> &output_shape, const ExecOptions &exec) {
    run_once(Op::GroupConvolutionBackpropData, input, filter, output, attrs, output_shape, exec);
}

void convolution_backprop_data(const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output,
                               const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape, const ExecOptions &exec) {
    run_once(Op::ConvolutionBackpropData, input, filter, output, attrs, output_shape, exec);
}

void group_convolution(const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output,
                       const Attributes &attrs, const ExecOptions &exec) {
    run_once(Op::GroupConvolution, input, filter, output, attrs, std::nullopt, exec);
}

void convolution_backward_data(const ConstTensorView &diff_dst, const ConstTensorView &weights,
                               const TensorView &diff_src, const Attributes &attrs,
                               const std::optional<std::vector<int64_t>> &dst_shape, const ExecOptions &exec) {
    run_once(Op::ConvolutionBackwardData, diff_dst, weights, diff_src, attrs, dst_shape, exec);
}

const char *version() { return DECONV_VERSION; }

}  // namespace deconv
