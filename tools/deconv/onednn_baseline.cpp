#include "onednn_baseline.h"

#include <oneapi/dnnl/dnnl.hpp>

#if defined(DECONV_HAVE_OPENMP)
#include <omp.h>
#endif

#include <cmath>
#include <cstring>
#include <algorithm>
#include <memory>
#include <unordered_map>

namespace deconv_cli {

namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

memory::format_tag data_tag(size_t spatial, bool channels_last) {
    switch (spatial) {
    case 1: return channels_last ? tag::nwc : tag::ncw;
    case 2: return channels_last ? tag::nhwc : tag::nchw;
    default: return channels_last ? tag::ndhwc : tag::ncdhw;
    }
}

memory::format_tag weights_tag(size_t spatial, bool grouped) {
    switch (spatial) {
    case 1: return grouped ? tag::goiw : tag::oiw;
    case 2: return grouped ? tag::goihw : tag::oihw;
    default: return grouped ? tag::goidhw : tag::oidhw;
    }
}

memory::data_type dnnl_type(deconv::DType t) {
    switch (t) {
    case deconv::DType::bf16: return memory::data_type::bf16;
    case deconv::DType::f16: return memory::data_type::f16;
    default: return memory::data_type::f32;
    }
}

// Our filter, whatever the op's layout, as oneDNN's weights [G, C_out, C_in, K...] (goi*) or
// [C_out, C_in, K...] (oi*, ConvolutionBackpropData) in `to`. C_in and C_out are the channels
// per group of the op's input and output, so this is the deconvolution's weights for the
// transposed ops and the convolution's for the forward GroupConvolution.
HostTensor weights_for_onednn(const LayerSpec &layer, const LayerGeometry &g, const HostTensor &w,
                              deconv::DType to) {
    const size_t groups = static_cast<size_t>(g.groups), cin = static_cast<size_t>(g.c_in),
                 cout = static_cast<size_t>(g.c_out);
    size_t k = 1;
    for (int64_t v : g.kernel) k *= static_cast<size_t>(v);
    const bool xio = layer.op == deconv::Op::ConvolutionBackwardData &&
                     layer.attrs.weights_format.value_or(deconv::WeightsFormat::XIO) ==
                         deconv::WeightsFormat::XIO;
    // Our flat index of (group, input channel, output channel, kernel position).
    auto ours = [&](size_t ig, size_t ci, size_t co, size_t ik) -> size_t {
        switch (layer.op) {
        case deconv::Op::GroupConvolution: return ((ig * cout + co) * cin + ci) * k + ik;
        case deconv::Op::ConvolutionBackwardData:
            if (xio) return (ik * cout + co) * (groups * cin) + ig * cin + ci;
            return ((ig * cin + ci) * cout + co) * k + ik;  // OIX: OC = g*C_in + ci
        default: return ((ig * cin + ci) * cout + co) * k + ik;  // [G,] C_in, C_out, K
        }
    };
    Dims shape;
    if (layer.op != deconv::Op::ConvolutionBackpropData) shape.push_back(g.groups);
    shape.push_back(g.c_out);
    shape.push_back(g.c_in);
    shape.insert(shape.end(), g.kernel.begin(), g.kernel.end());
    HostTensor out = HostTensor::zeros(to, shape);
    for (size_t ig = 0; ig < groups; ++ig)
        for (size_t co = 0; co < cout; ++co)
            for (size_t ci = 0; ci < cin; ++ci)
                for (size_t ik = 0; ik < k; ++ik) {
                    const size_t dst = ((ig * cout + co) * cin + ci) * k + ik;
                    store_element(out.data(), to, dst, load_element(w.data(), w.dtype, ours(ig, ci, co, ik)));
                }
    return out;
}

struct Config {
    const char *name;
    bool any;
};

}  // namespace

bool onednn_available() { return true; }

std::string onednn_version() {
    const dnnl_version_t *v = dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

bool onednn_set_threads(int threads) {
#if defined(DECONV_HAVE_OPENMP)
    if (threads > 0) omp_set_num_threads(threads);
    return true;
#else
    (void)threads;
    return false;
#endif
}

OnednnTiming onednn_time(const LayerSpec &layer, const deconv::ShapeInfo &shape,
                         const HostTensor &x, const HostTensor &w, const HostTensor *ours,
                         const TimingOptions &timing) {
    OnednnTiming result;
    const LayerGeometry g = layer_geometry(layer);
    const bool grouped = layer.op != deconv::Op::ConvolutionBackpropData;
    const bool forward = layer.op == deconv::Op::GroupConvolution;
    const size_t spatial = g.spatial.size();
    // Our data and output are in the layer's data format: oneDNN takes them as they are, with
    // the nwc/nhwc/ndhwc tags for nxc (its dims are always logical N, C, spatial).
    const bool nxc = shape.data_format == deconv::DataFormat::NXC;
    try {
        dnnl::engine eng(dnnl::engine::kind::cpu, 0);
        dnnl::stream strm(eng);

        const Dims x_ncx = nxc ? nxc_to_ncx(x.shape) : x.shape;
        const Dims y_ncx = nxc ? nxc_to_ncx(shape.output_shape) : shape.output_shape;
        memory::dims src_dims(x_ncx.begin(), x_ncx.end());
        memory::dims dst_dims(y_ncx.begin(), y_ncx.end());
        memory::dims wei_dims;
        if (grouped) wei_dims.push_back(g.groups);
        wei_dims.push_back(g.c_out);
        wei_dims.push_back(g.c_in);
        wei_dims.insert(wei_dims.end(), g.kernel.begin(), g.kernel.end());
        memory::dims strides, dilates, pad_l, pad_r;
        for (size_t i = 0; i < spatial; ++i) {
            const int64_t s = shape.strides[i], d = shape.dilations[i];
            const int64_t xin = x_ncx[2 + i], k = g.kernel[i];
            const int64_t y = y_ncx[2 + i];
            strides.push_back(s);
            dilates.push_back(d - 1);
            pad_l.push_back(shape.pads_begin[i]);
            // Deconvolution: Y = (X-1)s + (K-1)d + 1 - pl - pr; convolution: the same with X
            // and Y exchanged.
            pad_r.push_back(forward ? (y - 1) * s + (k - 1) * d + 1 - shape.pads_begin[i] - xin
                                    : (xin - 1) * s + (k - 1) * d + 1 - shape.pads_begin[i] - y);
        }

        std::vector<deconv::DType> candidates;
        const deconv::DType ours_t = x.dtype;
        if (ours_t == deconv::DType::bf16 || ours_t == deconv::DType::f16) candidates.push_back(ours_t);
        candidates.push_back(deconv::DType::f32);

        for (deconv::DType cand : candidates) {
            const memory::data_type dt = dnnl_type(cand);
            const memory::desc src_user_md(src_dims, dt, data_tag(spatial, nxc));
            const memory::desc dst_user_md(dst_dims, dt, data_tag(spatial, nxc));
            const memory::desc wei_user_md(wei_dims, dt, weights_tag(spatial, grouped));

            struct Built {
                Config cfg;
                dnnl::primitive_desc_base pd;
            };
            std::vector<Built> built;
            std::string last_error;
            for (Config cfg : {Config{"any", true}, Config{"plain", false}}) {
                const memory::desc src_md(src_dims, dt, cfg.any ? tag::any : data_tag(spatial, nxc));
                const memory::desc dst_md(dst_dims, dt, cfg.any ? tag::any : data_tag(spatial, nxc));
                const memory::desc wei_md(wei_dims, dt, cfg.any ? tag::any : weights_tag(spatial, grouped));
                try {
                    if (forward) {
                        dnnl::convolution_forward::desc desc(
                            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                            src_md, wei_md, dst_md, strides, dilates, pad_l, pad_r);
                        built.push_back({cfg, dnnl::convolution_forward::primitive_desc(desc, eng)});
                    } else {
                        dnnl::deconvolution_forward::desc desc(
                            dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                            src_md, wei_md, dst_md, strides, dilates, pad_l, pad_r);
                        built.push_back({cfg, dnnl::deconvolution_forward::primitive_desc(desc, eng)});
                    }
                } catch (const dnnl::error &e) {
                    last_error = e.what();
                }
            }
            if (built.empty()) {
                if (cand != deconv::DType::f32) {
                    result.dtype_note = std::string(deconv::dtype_name(cand)) +
                                        " not accepted by oneDNN here; ran f32";
                    continue;
                }
                result.error = "oneDNN rejected the layer: " + last_error;
                return result;
            }

            // User data in the chosen dtype, in our layouts.
            const HostTensor xs = convert(x, cand);
            const HostTensor ws = weights_for_onednn(layer, g, w, cand);
            memory src_user(src_user_md, eng, const_cast<void *>(xs.data()));
            memory wei_user(wei_user_md, eng, const_cast<void *>(ws.data()));
            HostTensor ys = HostTensor::zeros(cand, shape.output_shape);
            memory dst_user(dst_user_md, eng, ys.data());
            // A reference implementation (ref:any) next to an optimised one would only be
            // slower, and can take minutes per run: it is not timed then.
            auto is_ref = [](const Built &b) { return std::string(b.pd.impl_info_str()).rfind("ref", 0) == 0; };
            const bool some_fast = std::any_of(built.begin(), built.end(), [&](const Built &b) { return !is_ref(b); });
            for (Built &b : built) {
                (b.cfg.any ? result.any_impl : result.plain_impl) = b.pd.impl_info_str();
                if (some_fast && is_ref(b)) {
                    result.not_timed = std::string(b.cfg.name) + " (oneDNN's reference implementation " +
                                       b.pd.impl_info_str() + ")";
                    continue;
                }
                auto bring = [&](const memory::desc &want, memory &user) {
                    if (want == user.get_desc()) return user;
                    memory m(want, eng);
                    dnnl::reorder(user, m).execute(strm, user, m);
                    return m;
                };
                memory src_m = bring(b.pd.src_desc(), src_user);
                memory wei_m = bring(b.pd.weights_desc(), wei_user);
                memory dst_m(b.pd.dst_desc(), eng);
                strm.wait();
                dnnl::primitive prim(b.pd.get());
                std::unordered_map<int, memory> args{
                    {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}};
                const TimingStats st = time_runs([&] {
                    prim.execute(strm, args);
                    strm.wait();
                }, timing);
                (b.cfg.any ? result.any_ms : result.plain_ms) = st.median_ms;
                const bool better = !result.ok || st.median_ms < result.stats.median_ms;
                if (better) {
                    result.ok = true;
                    result.stats = st;
                    result.format = b.cfg.name;
                    result.impl = b.pd.impl_info_str();
                    result.dtype = deconv::dtype_name(cand);
                }
                if (ours) {
                    dnnl::reorder(dst_m, dst_user).execute(strm, dst_m, dst_user);
                    strm.wait();
                    double diff = 0, mag = 0;
                    const size_t n = ys.elements();
                    for (size_t i = 0; i < n; ++i) {
                        const double a = load_element(ours->data(), ours->dtype, i);
                        const double b2 = load_element(ys.data(), ys.dtype, i);
                        diff = std::max(diff, std::fabs(a - b2));
                        mag = std::max(mag, std::fabs(a));
                    }
                    result.max_abs_diff = std::max(result.max_abs_diff, diff);
                    result.max_abs_ours = mag;
                }
            }
            return result;
        }
        result.error = "no dtype accepted";
    } catch (const dnnl::error &e) {
        result.ok = false;
        result.error = std::string("oneDNN error: ") + e.what();
    }
    return result;
}

}  // namespace deconv_cli
