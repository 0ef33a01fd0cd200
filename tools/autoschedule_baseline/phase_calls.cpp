#include "phase_calls.h"

#include "layer/phase_decomposition.h"  // runtime/: the phases the runtime itself runs

#include <stdexcept>

namespace deconv_asb {

namespace {

// C-order strides of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (int i = (int)shape.size() - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
    return s;
}

halide_dimension_t dim(int64_t min, int64_t extent, int64_t stride) {
    return halide_dimension_t((int32_t)min, (int32_t)extent, (int32_t)stride);
}

}  // namespace

std::vector<PhaseCall> layer_phase_calls(const SuiteLayer &layer, const std::vector<int64_t> &out_spatial,
                                         const std::vector<int64_t> &pads_begin, float *x, float *w, float *y) {
    using deconv::detail::AxisPhase;
    const int rank = layer.rank();
    std::vector<int64_t> y_shape = {layer.n, layer.g * layer.c_out};
    y_shape.insert(y_shape.end(), out_spatial.begin(), out_spatial.end());
    const std::vector<int64_t> xs = dense_strides(layer.input_shape()), ws = dense_strides(layer.filter_shape()),
                               ys = dense_strides(y_shape);

    std::vector<std::vector<AxisPhase>> axes;
    for (int i = 0; i < rank; i++)
        axes.push_back(deconv::detail::decompose_axis(layer.strides[i], layer.dilations[i], layer.k[i], layer.x[i],
                                                      out_spatial[i], pads_begin[i]));

    std::vector<PhaseCall> calls;
    std::vector<size_t> at(rank, 0);
    for (;;) {
        PhaseCall c;
        std::vector<halide_dimension_t> in_d(rank + 3), w_d(rank + 3), out_d(rank + 3);
        int64_t w_off = 0, out_off = 0;
        c.in_step.resize(rank);
        for (int i = 0; i < rank; i++) {
            const AxisPhase &a = axes[i][at[i]];
            if (a.tap_count == 0) throw std::runtime_error("layer '" + layer.name + "' has a phase without taps");
            const int h = rank - 1 - i;
            c.shape.out_count.push_back(a.out_count);
            c.shape.tap_count.push_back(a.tap_count);
            c.shape.in_offset.push_back(a.in_offset);
            c.in_step[h] = (int32_t)a.in_step;
            in_d[h] = dim(-a.in_offset, layer.x[i], xs[2 + i]);
            w_d[h] = dim(0, a.tap_count, a.tap_step * ws[3 + i]);
            out_d[h] = dim(0, a.out_count, layer.strides[i] * ys[2 + i]);
            w_off += a.tap_first * ws[3 + i];
            out_off += a.out_first * ys[2 + i];
        }
        // Interior exactly when the runtime calls it so (cpu_executor.cpp): the lowest and the
        // highest input index any output of the phase reads lie inside the input.
        bool interior = true;
        for (int i = 0; i < rank; i++) {
            const AxisPhase &a = axes[i][at[i]];
            interior = interior && a.in_offset - (a.tap_count - 1) * a.in_step >= 0 &&
                       a.out_count - 1 + a.in_offset < layer.x[i];
        }
        c.shape.bounded = !interior;
        // Channels: data [N, G*C] split into (c, g); filter [G, C_in, C_out]: co, ci, g.
        in_d[rank] = dim(0, layer.c_in, xs[1]);
        in_d[rank + 1] = dim(0, layer.g, layer.c_in * xs[1]);
        in_d[rank + 2] = dim(0, layer.n, xs[0]);
        w_d[rank] = dim(0, layer.c_out, ws[2]);
        w_d[rank + 1] = dim(0, layer.c_in, ws[1]);
        w_d[rank + 2] = dim(0, layer.g, ws[0]);
        out_d[rank] = dim(0, layer.c_out, ys[1]);
        out_d[rank + 1] = dim(0, layer.g, layer.c_out * ys[1]);
        out_d[rank + 2] = dim(0, layer.n, ys[0]);
        // A buffer's host pointer addresses its element at the dims' mins: the input's is x.
        c.input = Halide::Buffer<float>(x, rank + 3, in_d.data());
        c.filter = Halide::Buffer<float>(w + w_off, rank + 3, w_d.data());
        c.output = Halide::Buffer<float>(y + out_off, rank + 3, out_d.data());
        calls.push_back(c);

        int i = rank - 1;
        for (; i >= 0; i--) {
            if (++at[i] < axes[i].size()) break;
            at[i] = 0;
        }
        if (i < 0) break;
    }
    return calls;
}

}  // namespace deconv_asb
