// Resolves a layer for the OpenCL test kernels (see opencl_plan.h).
#include "opencl_plan.h"

#include "cuda_executor.h"
#include "opencl_backend.h"

#include <string>

namespace deconv_ocl {

OpenClPlan make_opencl_plan(deconv::Op op, deconv::DType dtype, const std::vector<int64_t> &input_shape,
                            const std::vector<int64_t> &filter_shape, const deconv::Attributes &attrs,
                            const std::optional<std::vector<int64_t>> &output_shape) {
    namespace detail = deconv::detail;
    OpenClPlan plan;
    auto impl = std::make_shared<deconv::Plan::Impl>();
    impl->op = op;
    impl->dtype = dtype;
    impl->input_shape = input_shape;
    impl->filter_shape = filter_shape;
    impl->geo = detail::op_geometry(op, input_shape, filter_shape, attrs);
    impl->info = detail::infer_shape(op, impl->geo, input_shape, filter_shape, attrs, output_shape);
    const detail::OpGeometry &geo = impl->geo;
    const std::vector<int64_t> out_ncx = detail::to_ncx(impl->info.output_shape, geo.data_format);
    impl->out_spatial.assign(out_ncx.begin() + 2, out_ncx.end());

    plan.kernel = find_opencl_kernel(detail::cuda_kernel_key(geo, dtype));
    if (!plan.kernel) {
        throw deconv::Error(deconv::ErrorKind::Unsupported,
                            std::string("no OpenCL test kernel for ") + deconv::op_name(op) + " " +
                                std::to_string(geo.rank) + "D " + deconv::dtype_name(dtype) + " " +
                                deconv::data_format_name(geo.data_format) + " (DECONV_OPENCL_TEST_KERNELS)");
    }
    const std::string grid = detail::cuda_grid_problem(geo, impl->out_spatial);
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
