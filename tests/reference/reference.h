// deconv_ref: an independent, naive reference for ConvolutionBackpropData-1,
// GroupConvolutionBackpropData-1 and (below, "the forward op") GroupConvolution-1, written
// straight from the opset-1 text. It shares no code with the library (it does not include
// deconv/deconv.h) and is deliberately slow and simple: a direct scatter loop (backprop) or
// gather loop (forward) in double precision.
//
// Padding rules of the backprop ops (the project's reading of the spec; the forward op's are
// with ForwardProblem below):
//   * auto_pad valid / same_upper / same_lower without output_shape: pads are 0.
//   * output_shape given: pads_begin/pads_end are ignored (whatever auto_pad is) and
//       total = s*(X-1) + (K-1)*d + 1 - output_shape + output_padding
//       auto_pad != same_upper: pb = floor(total/2), pe = total - pb
//       auto_pad == same_upper: pe = floor(total/2), pb = total - pe
//     then both are clamped to >= 0; the output has exactly output_shape spatially and
//     positions past the natural output are zero.
//   * otherwise (explicit): the given pads.
//   Y = s*(X-1) + (K-1)*d + 1 - pb - pe + output_padding   (or output_shape when given).
// Scatter: y = x*s - pb + k*d per axis;
//   out[n, g*C_OUT + co, y] += in[n, g*C_IN + ci, x] * w[g, ci, co, k]   when 0 <= y < Y.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace deconv_ref {

// ---------------------------------------------------------------- problem description

enum class AutoPad { Explicit, SameUpper, SameLower, Valid };
const char *auto_pad_str(AutoPad a);

struct Problem {
    // true: GroupConvolutionBackpropData, filter [G, C_IN, C_OUT, K...]
    // false: ConvolutionBackpropData, filter [C_IN, C_OUT, K...]
    bool grouped = true;
    std::vector<int64_t> input_shape;   // [N, G*C_IN, X...]
    std::vector<int64_t> filter_shape;
    // Empty vector = the spec default (1s for strides/dilations, 0s for the rest).
    std::vector<int64_t> strides, pads_begin, pads_end, dilations, output_padding;
    AutoPad auto_pad = AutoPad::Explicit;
    std::optional<std::vector<int64_t>> output_shape;  // spatial only
};

// A one-line description of a problem, for failure messages.
std::string describe(const Problem &p);

struct Resolved {
    int64_t rank = 0;  // D, the number of spatial axes
    int64_t n = 0, groups = 1, c_in = 0, c_out = 0;  // c_in / c_out per group
    std::vector<int64_t> in_spatial, kernel, out_spatial;
    std::vector<int64_t> strides, dilations, output_padding, pads_begin, pads_end;  // resolved
    std::vector<int64_t> output_shape;  // full: [N, G*C_OUT, Y...]
    // The pads before clamping at zero (what the literal formula gives).
    std::vector<int64_t> raw_pads_begin, raw_pads_end;
};

// Resolves defaults, pads and the output shape. Throws std::invalid_argument if the problem is
// malformed (the reference's own minimal checks: ranks, channels, positive sizes).
Resolved resolve(const Problem &p);

// The pad rules alone, for one axis (exposed for the shape tests).
struct AxisPads {
    int64_t begin, end;          // clamped at 0
    int64_t raw_begin, raw_end;  // before clamping
    int64_t out;                 // output extent
};
AxisPads resolve_axis(int64_t x, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                      int64_t output_padding, AutoPad auto_pad,
                      std::optional<int64_t> output_shape);

int64_t product(const std::vector<int64_t> &v);

struct Result {
    Resolved shape;
    std::vector<double> output;   // dense C order, shape.output_shape
    std::vector<double> abs_sum;  // per output element: sum of |in*w| over contributing terms
    std::vector<int32_t> terms;   // per output element: number of contributing terms
    int64_t macs = 0;             // total contributing (in-range) terms
};

// Direct scatter loop. input / filter are dense C order.
Result compute(const Problem &p, const std::vector<double> &input,
               const std::vector<double> &filter);

// One output element by a gather formula (independent of the scatter loop):
//   out[n, g*C_OUT+co, y] = sum over ci, k with (y + pb - k*d) divisible by s and
//                           x = (y + pb - k*d)/s in [0, X): in[n, g*C_IN+ci, x] * w[g, ci, co, k]
// `in_at` / `w_at` return the element at a flat dense C-order index. `out_index` is the full
// output index [n, c, y...]. abs_sum (optional) receives sum |terms|.
double gather_point(const Resolved &r, const std::vector<int64_t> &out_index,
                    const std::function<double(int64_t)> &in_at,
                    const std::function<double(int64_t)> &w_at, double *abs_sum = nullptr);

// ---------------------------------------------------------------- the forward op
//
// GroupConvolution-1 (OpenVINO), written from the opset-1 text:
//   data [N, G*C_IN, X1..XD], filter [G, C_OUT, C_IN, K1..KD] -> output [N, G*C_OUT, Y1..YD]
//   out[n, g*C_OUT + co, y] = sum over ci, k of in[n, g*C_IN + ci, y*s + k*d - pb] * w[g, co, ci, k]
//   (input positions outside [0, X) read as zero).
// Pads and output extent per axis:
//   explicit:   the given pads (>= 0); Y = floor((X + pb + pe - d*(K-1) - 1) / s) + 1.
//   valid:      pads 0 (the given ones ignored); Y by the explicit formula.
//   same_upper: Y = ceil(X / s), total = max(0, (Y-1)*s + d*(K-1) + 1 - X),
//               pb = floor(total/2), pe = total - pb (the odd pad at the end).
//   same_lower: same Y and total, pe = floor(total/2), pb = total - pe (the odd pad at the
//               beginning).
//   Y < 1 is an error (std::invalid_argument from the reference).
// There is no output_padding and no output_shape input.
struct ForwardProblem {
    std::vector<int64_t> input_shape;   // [N, G*C_IN, X...]
    std::vector<int64_t> filter_shape;  // [G, C_OUT, C_IN, K...]
    // Empty vector = the spec default (1s for strides/dilations, 0s for pads).
    std::vector<int64_t> strides, pads_begin, pads_end, dilations;
    AutoPad auto_pad = AutoPad::Explicit;
};

std::string describe(const ForwardProblem &p);

// One axis of the forward shape rules. Throws std::invalid_argument when Y < 1.
struct ForwardAxis {
    int64_t begin, end;  // effective pads (>= 0)
    int64_t out;         // output extent Y
};
ForwardAxis resolve_forward_axis(int64_t x, int64_t k, int64_t s, int64_t d, int64_t pb,
                                 int64_t pe, AutoPad auto_pad);

// Resolves the forward problem into the same Resolved record as the backprop ops: c_in / c_out
// are per group (C_IN = filter dim 2, C_OUT = filter dim 1), output_padding is all zeros and
// raw_pads_* equal the (never negative) pads.
Resolved resolve_forward(const ForwardProblem &p);

// Direct gather loop in double precision: for every output element, the sum over ci and the
// taps whose input position is inside the data. abs_sum / terms / macs as for compute().
Result compute_forward(const ForwardProblem &p, const std::vector<double> &input,
                       const std::vector<double> &filter);

// ---------------------------------------------------------------- element types

enum class DT { f32, f16, bf16, f64, i8, u8, i32 };
const char *dt_name(DT t);
size_t dt_size(DT t);
bool dt_is_float(DT t);
// Largest / smallest finite value (integers: the range used for saturation).
double dt_max(DT t);
double dt_lowest(DT t);
// Unit roundoff of the format (half the distance from 1 to the next value); 0 for integers.
double dt_unit_roundoff(DT t);

// Round-to-nearest-even rounding of a double to the value set of a format (computed directly
// from the double, with no intermediate float rounding). Overflow gives +-inf.
double round_to_f32(double x);
double round_to_f16(double x);
double round_to_bf16(double x);

// Bit conversions, round to nearest even. NaN maps to a quiet NaN of the same sign.
uint16_t f32_to_f16_bits(float x);
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float x);
float bf16_bits_to_f32(uint16_t h);

// The value a store of the exact value `x` into dtype `t` gives: floats round to nearest even,
// integers round half to even to an integer and then saturate to the type's range.
double round_to_dtype(DT t, double x);

// Half the spacing of the format's values at magnitude |x| (at least half the smallest
// subnormal spacing). 0.5 for integers is meaningless; returns 0 there.
double half_ulp(DT t, double x);

// Element access in raw buffers of dtype t (store rounds via round_to_dtype).
double load(DT t, const void *base, int64_t index);
void store(DT t, void *base, int64_t index, double value);

}  // namespace deconv_ref
