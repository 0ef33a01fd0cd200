#include "onednn_baseline.h"

#include <oneapi/dnnl/dnnl.hpp>

#if defined(DECONV_HAVE_OPENMP)
#include <omp.h>
#endif

#include <cmath>
#include <cstring>
#include <algorithm>
#include <memory>
#include <optional>
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

namespace {

bool integer(deconv::DType t) { return t == deconv::DType::u8 || t == deconv::DType::i8 || t == deconv::DType::i32; }

memory::data_type dnnl_exact_type(deconv::DType t) {
    switch (t) {
    case deconv::DType::f32: return memory::data_type::f32;
    case deconv::DType::bf16: return memory::data_type::bf16;
    case deconv::DType::f16: return memory::data_type::f16;
    case deconv::DType::u8: return memory::data_type::u8;
    case deconv::DType::i8: return memory::data_type::s8;
    case deconv::DType::i32: return memory::data_type::s32;
    case deconv::DType::f64: break;
    }
    throw dnnl::error(dnnl_unimplemented, "f64 has no oneDNN data type");
}

dnnl::algorithm dnnl_eltwise(deconv::Eltwise e) {
    using A = dnnl::algorithm;
    switch (e) {
    case deconv::Eltwise::relu: return A::eltwise_relu;
    case deconv::Eltwise::clip: return A::eltwise_clip;
    case deconv::Eltwise::linear: return A::eltwise_linear;
    case deconv::Eltwise::bounded_relu: return A::eltwise_bounded_relu;
    case deconv::Eltwise::tanh: return A::eltwise_tanh;
    case deconv::Eltwise::logistic: return A::eltwise_logistic;
    case deconv::Eltwise::abs: return A::eltwise_abs;
    case deconv::Eltwise::square: return A::eltwise_square;
    case deconv::Eltwise::elu: return A::eltwise_elu;
    case deconv::Eltwise::swish: return A::eltwise_swish;
    case deconv::Eltwise::gelu_tanh: return A::eltwise_gelu_tanh;
    case deconv::Eltwise::gelu_erf: return A::eltwise_gelu_erf;
    case deconv::Eltwise::hardswish: return A::eltwise_hardswish;
    }
    return A::eltwise_relu;
}

// The epilogue as oneDNN attributes: output scales, zero points (run-time or constant values),
// post-ops.
dnnl::primitive_attr make_attr(const deconv::Epilogue &e, bool runtime_zp) {
    dnnl::primitive_attr attr;
    if (e.scale_mode != deconv::ScaleMode::none)
        attr.set_output_scales(e.scale_mode == deconv::ScaleMode::per_channel ? 1 << 1 : 0, e.scales);
    if (e.src_zero_point != 0)
        attr.set_zero_points(DNNL_ARG_SRC, 0, {runtime_zp ? DNNL_RUNTIME_S32_VAL : e.src_zero_point});
    if (e.dst_zero_point != 0)
        attr.set_zero_points(DNNL_ARG_DST, 0, {runtime_zp ? DNNL_RUNTIME_S32_VAL : e.dst_zero_point});
    dnnl::post_ops ops;
    for (const deconv::PostOp &p : e.post_ops) {
        if (p.kind == deconv::PostOp::Kind::sum) {
            if (p.zero_point != 0) ops.append_sum(p.scale, p.zero_point);
            else ops.append_sum(p.scale);
        } else {
            ops.append_eltwise(1.f, dnnl_eltwise(p.alg), p.alpha, p.beta);
        }
    }
    if (!e.post_ops.empty()) attr.set_post_ops(ops);
    return attr;
}

// The "+pass" of a float layer with an epilogue: v = scale[c] * (v + bias[c]), then the eltwise
// post-ops, over oneDNN's output in place, in whatever layout it chose among ncx, nxc and one
// channel block (nChw16c and the like). Vectorisable loops, OpenMP threads as oneDNN's.
class EpiloguePass {
public:
    // ok() false (why()) for a layout or epilogue the pass does not do.
    EpiloguePass(const memory::desc &dst, const deconv::Epilogue &e, const std::vector<float> &bias) {
        const dnnl_memory_desc_t &d = dst.data;
        if (d.format_kind != dnnl_blocked || d.data_type != dnnl_f32) { fail("a non-blocked or non-f32 output"); return; }
        for (const deconv::PostOp &p : e.post_ops)
            if (p.kind == deconv::PostOp::Kind::sum) { fail("a sum post-op (it needs the earlier output kept)"); return; }
        ops_ = e.post_ops;
        const int nd = d.ndims;
        const dnnl_blocking_desc_t &b = d.format_desc.blocking;
        const int64_t n = d.dims[0], c = d.dims[1], cp = d.padded_dims[1];
        int64_t sp = 1;
        for (int i = 2; i < nd; ++i) {
            if (d.padded_dims[i] != d.dims[i]) { fail("padded spatial dims"); return; }
            sp *= d.dims[i];
        }
        // The spatial axes dense, outermost first, each step `inner` elements.
        auto spatial_dense = [&](int64_t inner) {
            int64_t want = inner;
            for (int i = nd - 1; i >= 2; --i) {
                if (b.strides[i] != want) return false;
                want *= d.dims[i];
            }
            return true;
        };
        if (b.inner_nblks == 0 && b.strides[1] == 1 && spatial_dense(c) && b.strides[0] == sp * c) {
            block_ = c, cblocks_ = 1;  // nxc
        } else if (b.inner_nblks == 0 && b.strides[1] == sp && spatial_dense(1) && b.strides[0] == sp * c) {
            block_ = 1, cblocks_ = c;  // ncx
        } else if (b.inner_nblks == 1 && b.inner_idxs[0] == 1 && cp % b.inner_blks[0] == 0 &&
                   spatial_dense(b.inner_blks[0]) && b.strides[1] == sp * b.inner_blks[0] &&
                   b.strides[0] == sp * cp) {
            block_ = b.inner_blks[0], cblocks_ = cp / block_;  // nCx16c
        } else {
            { fail("an output layout other than ncx, nxc or one channel block"); return; }
        }
        outer_ = n * cblocks_;
        pixels_ = sp;
        // Per channel of the padded channel axis: padding gets scale 0 and bias 0.
        scale_.assign(static_cast<size_t>(cblocks_ * block_), 0.f);
        bias_.assign(scale_.size(), 0.f);
        for (int64_t ch = 0; ch < c; ++ch) {
            scale_[ch] = e.scale_mode == deconv::ScaleMode::none ? 1.f
                         : e.scale_mode == deconv::ScaleMode::per_tensor ? e.scales.at(0)
                                                                          : e.scales.at(static_cast<size_t>(ch));
            bias_[ch] = bias.empty() ? 0.f : bias[static_cast<size_t>(ch)];
        }
        ok_ = true;
    }
    bool ok() const { return ok_; }
    const std::string &why() const { return why_; }

    void operator()(float *data) const {
        const int64_t chunk_pixels = std::max<int64_t>(1, 4096 / block_);
        const int64_t chunks = (pixels_ + chunk_pixels - 1) / chunk_pixels;
        const int64_t tasks = outer_ * chunks;
#if defined(DECONV_HAVE_OPENMP)
#pragma omp parallel for schedule(static)
#endif
        for (int64_t t = 0; t < tasks; ++t) {
            const int64_t o = t / chunks, p0 = (t % chunks) * chunk_pixels;
            const int64_t np = std::min(chunk_pixels, pixels_ - p0);
            float *p = data + (o * pixels_ + p0) * block_;
            const size_t cb = static_cast<size_t>((o % cblocks_) * block_);
            const float *sc = scale_.data() + cb, *bi = bias_.data() + cb;
            if (block_ == 1) {
                const float s = sc[0], b = bi[0];
                for (int64_t i = 0; i < np; ++i) p[i] = s * (p[i] + b);
            } else {
                for (int64_t i = 0; i < np; ++i) {
                    float *q = p + i * block_;
                    for (int64_t j = 0; j < block_; ++j) q[j] = sc[j] * (q[j] + bi[j]);
                }
            }
            const int64_t len = np * block_;
            for (const deconv::PostOp &op : ops_) eltwise(op, p, len);
        }
    }

private:
    void fail(const char *why) { why_ = why; }

    template <class F>
    static void sweep(float *p, int64_t n, F f) {
        for (int64_t i = 0; i < n; ++i) p[i] = f(p[i]);
    }

    static void eltwise(const deconv::PostOp &op, float *p, int64_t n) {
        const float a = op.alpha, b = op.beta;
        switch (op.alg) {
        case deconv::Eltwise::relu:
            if (a == 0) sweep(p, n, [](float v) { return v > 0 ? v : 0.f; });
            else sweep(p, n, [a](float v) { return v > 0 ? v : a * v; });
            break;
        case deconv::Eltwise::clip: sweep(p, n, [a, b](float v) { return std::min(std::max(v, a), b); }); break;
        case deconv::Eltwise::linear: sweep(p, n, [a, b](float v) { return a * v + b; }); break;
        case deconv::Eltwise::bounded_relu: sweep(p, n, [a](float v) { return std::min(std::max(v, 0.f), a); }); break;
        case deconv::Eltwise::tanh: sweep(p, n, [](float v) { return std::tanh(v); }); break;
        case deconv::Eltwise::logistic: sweep(p, n, [](float v) { return 1.f / (1.f + std::exp(-v)); }); break;
        case deconv::Eltwise::abs: sweep(p, n, [](float v) { return std::fabs(v); }); break;
        case deconv::Eltwise::square: sweep(p, n, [](float v) { return v * v; }); break;
        case deconv::Eltwise::elu: sweep(p, n, [a](float v) { return v > 0 ? v : a * (std::exp(v) - 1.f); }); break;
        case deconv::Eltwise::swish: sweep(p, n, [a](float v) { return v / (1.f + std::exp(-a * v)); }); break;
        case deconv::Eltwise::gelu_tanh:
            sweep(p, n, [](float v) {
                return 0.5f * v * (1.f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));
            });
            break;
        case deconv::Eltwise::gelu_erf:
            sweep(p, n, [](float v) { return 0.5f * v * (1.f + std::erf(v * 0.70710678f)); });
            break;
        case deconv::Eltwise::hardswish:
            sweep(p, n, [](float v) { return v * std::min(std::max(v + 3.f, 0.f), 6.f) / 6.f; });
            break;
        }
    }

    bool ok_ = false;
    std::string why_;
    std::vector<deconv::PostOp> ops_;
    int64_t outer_ = 0, pixels_ = 0, block_ = 1, cblocks_ = 1;
    std::vector<float> scale_, bias_;
};

}  // namespace

OnednnTiming onednn_time(const LayerSpec &layer, const deconv::ShapeInfo &shape,
                         const HostTensor &x, const HostTensor &w, const HostTensor *ours,
                         const TimingOptions &timing, const OnednnEpilogue *epi) {
    OnednnTiming result;
    const LayerGeometry g = layer_geometry(layer);
    const bool grouped = layer.op != deconv::Op::ConvolutionBackpropData;
    const bool forward = layer.op == deconv::Op::GroupConvolution;
    const size_t spatial = g.spatial.size();
    // Our data and output are in the layer's data format: oneDNN takes them as they are, with
    // the nwc/nhwc/ndhwc tags for nxc (its dims are always logical N, C, spatial).
    const bool nxc = shape.data_format == deconv::DataFormat::NXC;
    const bool quantized = epi && integer(epi->types.src);
    const bool with_epilogue = epi && !epi->epilogue.empty();
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
        const int64_t channels = dst_dims[1];

        // The dtypes oneDNN may run in, tried in order: quantized layers in theirs exactly;
        // bf16/f16 in that dtype, else f32; anything else in f32.
        struct Types {
            deconv::DType src, wei, dst;
        };
        std::vector<Types> candidates;
        if (quantized) {
            candidates.push_back({epi->types.src, deconv::DType::i8, epi->types.dst});
        } else {
            const deconv::DType ours_t = x.dtype;
            if (ours_t == deconv::DType::bf16 || ours_t == deconv::DType::f16)
                candidates.push_back({ours_t, ours_t, ours_t});
            candidates.push_back({deconv::DType::f32, deconv::DType::f32, deconv::DType::f32});
        }

        // The bias as oneDNN takes it: s32 or f32 for quantized layers, f32 for float ones.
        const bool with_bias = epi && epi->epilogue.bias && epi->bias;
        HostTensor bias_user;
        if (with_bias) {
            const deconv::DType bt = quantized && *epi->epilogue.bias == deconv::DType::i32 ? deconv::DType::i32
                                                                                          : deconv::DType::f32;
            bias_user = convert(*epi->bias, bt);
        }
        std::vector<float> bias_f32;
        if (with_bias) {
            const HostTensor b = convert(*epi->bias, deconv::DType::f32);
            bias_f32.assign(static_cast<const float *>(b.data()), static_cast<const float *>(b.data()) + b.elements());
        }

        for (const Types &cand : candidates) {
            const memory::data_type st = quantized ? dnnl_exact_type(cand.src) : dnnl_type(cand.src);
            const memory::data_type wt = quantized ? dnnl_exact_type(cand.wei) : dnnl_type(cand.wei);
            const memory::data_type dt = quantized ? dnnl_exact_type(cand.dst) : dnnl_type(cand.dst);
            const memory::desc src_user_md(src_dims, st, data_tag(spatial, nxc));
            const memory::desc dst_user_md(dst_dims, dt, data_tag(spatial, nxc));
            const memory::desc wei_user_md(wei_dims, wt, weights_tag(spatial, grouped));
            const memory::desc bias_md =
                with_bias ? memory::desc({channels}, dnnl_exact_type(bias_user.dtype), tag::x) : memory::desc();

            struct Built {
                Config cfg;
                bool fused;  // the epilogue in oneDNN's attributes (else "+pass", or none)
                bool runtime_zp;
                dnnl::primitive_desc_base pd;
            };
            std::vector<Built> built;
            std::string last_error;
            // One primitive descriptor: the layer, with the epilogue as attributes or without it.
            auto make_pd = [&](const memory::desc &src_md, const memory::desc &wei_md, const memory::desc &dst_md,
                               bool fused, bool runtime_zp) -> dnnl::primitive_desc_base {
                const dnnl::primitive_attr attr = fused ? make_attr(epi->epilogue, runtime_zp) : dnnl::primitive_attr();
                const bool b = fused && with_bias;
                if (forward) {
                    auto desc = b ? dnnl::convolution_forward::desc(
                                        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                                        wei_md, bias_md, dst_md, strides, dilates, pad_l, pad_r)
                                  : dnnl::convolution_forward::desc(
                                        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                                        wei_md, dst_md, strides, dilates, pad_l, pad_r);
                    return dnnl::convolution_forward::primitive_desc(desc, attr, eng);
                }
                auto desc = b ? dnnl::deconvolution_forward::desc(
                                    dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_md,
                                    wei_md, bias_md, dst_md, strides, dilates, pad_l, pad_r)
                              : dnnl::deconvolution_forward::desc(
                                    dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_md,
                                    wei_md, dst_md, strides, dilates, pad_l, pad_r);
                return dnnl::deconvolution_forward::primitive_desc(desc, attr, eng);
            };
            const bool has_zp = epi && (epi->epilogue.src_zero_point != 0 || epi->epilogue.dst_zero_point != 0);
            const bool try_pass = with_epilogue && !quantized && cand.dst == deconv::DType::f32;
            for (Config cfg : {Config{"any", true}, Config{"plain", false}}) {
                const memory::desc src_md(src_dims, st, cfg.any ? tag::any : data_tag(spatial, nxc));
                const memory::desc dst_md(dst_dims, dt, cfg.any ? tag::any : data_tag(spatial, nxc));
                // Quantized: weights always any (explicit layouts get oneDNN's reference kernel).
                const memory::desc wei_md(wei_dims, wt,
                                          cfg.any || quantized ? tag::any : weights_tag(spatial, grouped));
                if (!with_epilogue) {
                    try {
                        built.push_back({cfg, false, false, make_pd(src_md, wei_md, dst_md, false, false)});
                    } catch (const dnnl::error &e) {
                        last_error = e.what();
                    }
                    continue;
                }
                // Fused: run-time zero points first (what oneDNN's optimised int8 kernels take),
                // then constant ones.
                bool fused_ok = false;
                for (bool runtime_zp : {true, false}) {
                    if (!runtime_zp && !has_zp) break;
                    try {
                        built.push_back({cfg, true, runtime_zp && has_zp, make_pd(src_md, wei_md, dst_md, true, runtime_zp)});
                        fused_ok = true;
                        break;
                    } catch (const dnnl::error &e) {
                        last_error = e.what();
                    }
                }
                (void)fused_ok;
                if (try_pass) {
                    try {
                        built.push_back({cfg, false, false, make_pd(src_md, wei_md, dst_md, false, false)});
                    } catch (const dnnl::error &e) {
                        last_error = e.what();
                    }
                }
            }
            if (built.empty()) {
                if (&cand != &candidates.back()) {
                    result.dtype_note = std::string(deconv::dtype_name(cand.src)) +
                                        " not accepted by oneDNN here; ran f32";
                    continue;
                }
                result.error = "oneDNN rejected the layer: " + last_error;
                return result;
            }

            // User data in the chosen dtypes, in our layouts.
            const HostTensor xs = convert(x, cand.src);
            const HostTensor ws = weights_for_onednn(layer, g, w, cand.wei);
            memory src_user(src_user_md, eng, const_cast<void *>(xs.data()));
            memory wei_user(wei_user_md, eng, const_cast<void *>(ws.data()));
            HostTensor ys = HostTensor::zeros(cand.dst, shape.output_shape);
            memory dst_user(dst_user_md, eng, ys.data());
            // The output's earlier contents (a sum post-op), as our run had them.
            HostTensor y0;
            std::optional<memory> dst_init_user;
            if (epi && epi->dst_init) {
                y0 = convert(*epi->dst_init, cand.dst);
                dst_init_user.emplace(dst_user_md, eng, y0.data());
            }
            std::optional<memory> bias_m;
            if (with_bias) bias_m.emplace(bias_md, eng, bias_user.data());
            int32_t zp_src = epi ? epi->epilogue.src_zero_point : 0, zp_dst = epi ? epi->epilogue.dst_zero_point : 0;
            memory zp_src_m({{1}, memory::data_type::s32, tag::x}, eng, &zp_src);
            memory zp_dst_m({{1}, memory::data_type::s32, tag::x}, eng, &zp_dst);

            // A reference implementation (ref:any) next to an optimised one would only be
            // slower, and can take minutes per run: it is not timed then.
            auto is_ref = [](const Built &b) { return std::string(b.pd.impl_info_str()).rfind("ref", 0) == 0; };
            const bool some_fast = std::any_of(built.begin(), built.end(), [&](const Built &b) { return !is_ref(b); });
            for (Built &b : built) {
                const bool pass = with_epilogue && !b.fused;
                const std::string name = std::string(b.cfg.name) + (pass ? "+pass" : "");
                if (!pass) (b.cfg.any ? result.any_impl : result.plain_impl) = b.pd.impl_info_str();
                if (some_fast && is_ref(b)) {
                    result.not_timed = name + " (oneDNN's reference implementation " + b.pd.impl_info_str() + ")";
                    continue;
                }
                auto bring = [&](const memory::desc &want, memory &user) {
                    if (want == user.get_desc()) return user;
                    memory m(want, eng);
                    dnnl::reorder(user, m).execute(strm, user, m);
                    return m;
                };
                std::optional<EpiloguePass> pass_fn;
                if (pass) {
                    pass_fn.emplace(b.pd.dst_desc(), epi->epilogue, bias_f32);
                    if (!pass_fn->ok()) {
                        result.pass_note = name + ": " + pass_fn->why();
                        continue;
                    }
                }
                memory src_m = bring(b.pd.src_desc(), src_user);
                memory wei_m = bring(b.pd.weights_desc(), wei_user);
                memory dst_m(b.pd.dst_desc(), eng);
                if (dst_init_user) dnnl::reorder(*dst_init_user, dst_m).execute(strm, *dst_init_user, dst_m);
                strm.wait();
                dnnl::primitive prim(b.pd.get());
                std::unordered_map<int, memory> args{
                    {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}};
                if (b.fused && with_bias) args.insert({DNNL_ARG_BIAS, *bias_m});
                if (b.fused && b.runtime_zp) {
                    if (zp_src) args.insert({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_src_m});
                    if (zp_dst) args.insert({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zp_dst_m});
                }
                float *dst_data = static_cast<float *>(dst_m.get_data_handle());
                auto run_once = [&] {
                    prim.execute(strm, args);
                    strm.wait();
                    if (pass_fn) (*pass_fn)(dst_data);
                };
                const TimingStats st = time_runs(run_once, timing);
                if (!pass) (b.cfg.any ? result.any_ms : result.plain_ms) = st.median_ms;
                if (with_epilogue && !quantized) {
                    double &best = b.fused ? result.fused_ms : result.pass_ms;
                    if (best < 0 || st.median_ms < best) {
                        best = st.median_ms;
                        (b.fused ? result.fused_impl : result.pass_impl) = name + " " + b.pd.impl_info_str();
                    }
                }
                const bool better = !result.ok || st.median_ms < result.stats.median_ms;
                if (better) {
                    result.ok = true;
                    result.stats = st;
                    result.format = name;
                    result.impl = b.pd.impl_info_str();
                    result.dtype = quantized ? deconv::data_types_name({cand.src, cand.wei, cand.dst})
                                             : deconv::dtype_name(cand.src);
                    result.runtime_zero_points = b.runtime_zp;
                }
                if (ours) {
                    // The compared run starts from the output's earlier contents, as ours did.
                    if (dst_init_user) {
                        dnnl::reorder(*dst_init_user, dst_m).execute(strm, *dst_init_user, dst_m);
                        strm.wait();
                        run_once();
                    }
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
            if (!result.ok && result.error.empty()) result.error = "no configuration was timed: " + result.pass_note;
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
