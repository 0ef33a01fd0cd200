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

// Our filter [G, C_in, C_out, K...] (or [C_in, C_out, K...]) -> [G, C_out, C_in, K...] in `to`.
HostTensor weights_for_onednn(const HostTensor &w, bool grouped, deconv::DType to) {
    const size_t lead = grouped ? 1 : 0;
    const size_t g = grouped ? static_cast<size_t>(w.shape[0]) : 1;
    const size_t cin = static_cast<size_t>(w.shape[lead]);
    const size_t cout = static_cast<size_t>(w.shape[lead + 1]);
    size_t k = 1;
    for (size_t i = lead + 2; i < w.shape.size(); ++i) k *= static_cast<size_t>(w.shape[i]);
    Dims shape = w.shape;
    std::swap(shape[lead], shape[lead + 1]);
    HostTensor out = HostTensor::zeros(to, shape);
    for (size_t ig = 0; ig < g; ++ig)
        for (size_t ci = 0; ci < cin; ++ci)
            for (size_t co = 0; co < cout; ++co)
                for (size_t ik = 0; ik < k; ++ik) {
                    const size_t src = ((ig * cin + ci) * cout + co) * k + ik;
                    const size_t dst = ((ig * cout + co) * cin + ci) * k + ik;
                    store_element(out.data(), to, dst, load_element(w.data(), w.dtype, src));
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
                         int warmup, int repeats, double budget_s) {
    OnednnTiming result;
    const bool grouped = layer.op == deconv::Op::GroupConvolutionBackpropData;
    const size_t spatial = x.shape.size() - 2;
    const bool nxc = layer.layout == "nxc";
    try {
        dnnl::engine eng(dnnl::engine::kind::cpu, 0);
        dnnl::stream strm(eng);

        memory::dims src_dims(x.shape.begin(), x.shape.end());
        memory::dims dst_dims(shape.output_shape.begin(), shape.output_shape.end());
        Dims wshape = w.shape;
        std::swap(wshape[grouped ? 1 : 0], wshape[grouped ? 2 : 1]);
        memory::dims wei_dims(wshape.begin(), wshape.end());
        memory::dims strides, dilates, pad_l, pad_r;
        const size_t klead = grouped ? 3 : 2;
        for (size_t i = 0; i < spatial; ++i) {
            const int64_t s = shape.strides[i], d = shape.dilations[i];
            const int64_t xin = x.shape[2 + i], k = w.shape[klead + i];
            const int64_t y = shape.output_shape[2 + i];
            strides.push_back(s);
            dilates.push_back(d - 1);
            pad_l.push_back(shape.pads_begin[i]);
            pad_r.push_back((xin - 1) * s + (k - 1) * d + 1 - shape.pads_begin[i] - y);
        }

        std::vector<deconv::DType> candidates;
        const deconv::DType ours_t = x.dtype;
        if (ours_t == deconv::DType::bf16 || ours_t == deconv::DType::f16) candidates.push_back(ours_t);
        candidates.push_back(deconv::DType::f32);

        for (deconv::DType cand : candidates) {
            const memory::data_type dt = dnnl_type(cand);
            const memory::desc src_user_md(src_dims, dt, data_tag(spatial, false));
            const memory::desc dst_user_md(dst_dims, dt, data_tag(spatial, false));
            const memory::desc wei_user_md(wei_dims, dt, weights_tag(spatial, grouped));

            struct Built {
                Config cfg;
                dnnl::deconvolution_forward::primitive_desc pd;
            };
            std::vector<Built> built;
            std::string last_error;
            for (Config cfg : {Config{"any", true}, Config{"plain", false}}) {
                const memory::desc src_md(src_dims, dt, cfg.any ? tag::any : data_tag(spatial, nxc));
                const memory::desc dst_md(dst_dims, dt, cfg.any ? tag::any : data_tag(spatial, nxc));
                const memory::desc wei_md(wei_dims, dt, cfg.any ? tag::any : weights_tag(spatial, grouped));
                try {
                    dnnl::deconvolution_forward::desc desc(
                        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                        src_md, wei_md, dst_md, strides, dilates, pad_l, pad_r);
                    built.push_back({cfg, dnnl::deconvolution_forward::primitive_desc(desc, eng)});
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

            // User data in the chosen dtype, plain layouts.
            const HostTensor xs = convert(x, cand);
            const HostTensor ws = weights_for_onednn(w, grouped, cand);
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
                dnnl::deconvolution_forward prim(b.pd);
                std::unordered_map<int, memory> args{
                    {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}};
                const TimingStats st = time_runs([&] {
                    prim.execute(strm, args);
                    strm.wait();
                }, warmup, repeats, budget_s);
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
