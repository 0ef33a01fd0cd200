// Resolves a layer for the OpenCL test kernels (see opencl_plan.h).
#include "opencl_plan.h"

#include "gpu/cuda_executor.h"
#include "opencl_backend.h"

#include <string>

namespace deconv_ocl {

OpenClPlan make_opencl_plan(deconv::Op op, deconv::DType dtype, const std::vector<int64_t> &input_shape,
                            const std::vector<int64_t> &filter_shape, const deconv::Attributes &attrs,
                            const std::optional<std::vector<int64_t>> &output_shape) {
    namespace detail = deconv::detail;
    OpenClPlan plan;
    std::shared_ptr<deconv::Plan::Impl> impl =
        detail::resolve_layer(op, dtype, input_shape, filter_shape, attrs, output_shape);
    const detail::OpGeometry &geo = impl->geo;

    plan.kernel = find_opencl_kernel(detail::cuda_kernel_key(geo, dtype));
    if (!plan.kernel) {
        throw deconv::Error(deconv::ErrorKind::Unsupported,
                            std::string("no OpenCL test kernel for ") + deconv::op_name(op) + " " +
                                std::to_string(geo.rank) + "D " + deconv::dtype_name(dtype) + " " +
                                deconv::data_format_name(geo.data_format) + " (DECONV_OPENCL_TEST_KERNELS)");
    }
    const std::string grid = detail::cuda_launch_problem(geo, impl->out_spatial);
    if (!grid.empty()) throw deconv::Error(deconv::ErrorKind::TooLarge, grid);
    impl->device = deconv::Device::CUDA;
    impl->channel_major = geo.data_format == deconv::DataFormat::NXC;
    impl->kernel = impl->interior_kernel = plan.kernel;
    if (!geo.forward) {
        for (int i = 0; i < geo.rank; i++) {
            impl->phases.push_back(detail::decompose_axis(impl->info.strides[i], impl->info.dilations[i], geo.kernel[i],
                                                          geo.in_spatial[i], impl->out_spatial[i],
                                                          impl->info.pads_begin[i]));
        }
    }
    plan.impl = std::move(impl);
    return plan;
}

}  // namespace deconv_ocl
