// Runs the spec's 2D GroupConvolutionBackpropData example layer through an installed deconv and
// checks a handful of outputs against a direct computation.
#include <deconv/deconv.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    using namespace deconv;
    const std::vector<int64_t> x_shape = {1, 20, 224, 224}, w_shape = {4, 5, 2, 3, 3};
    Attributes a;
    a.strides = {2, 2};
    a.pads_begin = {1, 1};
    a.pads_end = {1, 1};
    Plan plan = Plan::create(Op::GroupConvolutionBackpropData, DType::f32, x_shape, w_shape, a);
    const auto &y_shape = plan.shape().output_shape;

    std::vector<float> x(20 * 224 * 224), w(4 * 5 * 2 * 3 * 3), y(8 * 447 * 447);
    for (size_t i = 0; i < x.size(); i++) x[i] = float(int(i % 7) - 3);
    for (size_t i = 0; i < w.size(); i++) w[i] = float(int(i % 5) - 2);
    plan.run(x.data(), w.data(), y.data());

    // y[c, oy, ox] = sum over (ci, ky, kx) with iy*2 - 1 + ky = oy, ix*2 - 1 + kx = ox.
    int bad = 0;
    for (int t = 0; t < 64; t++) {
        const int c = t % 8, oy = (t * 37) % 447, ox = (t * 91) % 447, g = c / 2, co = c % 2;
        double want = 0;
        for (int ci = 0; ci < 5; ci++)
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++) {
                    const int uy = oy + 1 - ky, ux = ox + 1 - kx;
                    if (uy < 0 || ux < 0 || uy % 2 || ux % 2 || uy / 2 >= 224 || ux / 2 >= 224) continue;
                    want += x[((g * 5 + ci) * 224 + uy / 2) * 224 + ux / 2] *
                            w[((g * 5 + ci) * 2 + co) * 9 + ky * 3 + kx];
                }
        if (std::fabs(want - y[(c * 447 + oy) * 447 + ox]) > 1e-3) bad++;
    }
    std::printf("deconv %s (%s): [1,20,224,224] * [4,5,2,3,3] s2 p1 -> [%lld,%lld,%lld,%lld], %lld MACs, %s\n",
                version(), cpu_variant().c_str(), (long long)y_shape[0], (long long)y_shape[1],
                (long long)y_shape[2], (long long)y_shape[3], (long long)plan.macs(),
                bad ? "MISMATCH" : "64 sampled outputs match");
    return bad ? 1 : 0;
}
