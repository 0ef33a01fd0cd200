"""Shared helpers of the Python suites: dtype tables, an independent float64 reference and the
per-dtype error bound.

The reference never calls deconv: it computes every op with torch in float64 from the very
values the library reads (already rounded to the dtype under test), so for integer data of the
sizes used here it is exact, and for floats its own error (<= n_terms * 2^-53 * sum|x w|) is
negligible next to the bound it is compared with.

The spec ops are reduced to torch's conv_transpose (padding 0, the full scatter of every tap)
followed by a crop that starts at the resolved pad and zero-extends past the natural output,
with pads resolved per docs/semantics.md (written here from that text, not from the library):

* OpenVINO backprop ops: without output_shape, explicit pads or zero pads (other modes); with
  output_shape, total = s*(X-1) + (K-1)*d + 1 - Y + output_padding, same_upper puts the larger
  half at the beginning, every other mode at the end, negative totals clamp to zero.
* oneDNN ConvolutionBackwardData with a dst_shape: pads_begin as given (explicit), 0 (valid),
  floor(total/2) (same_lower), total - floor(total/2) (same_upper), clamped at zero; the end is
  cropped or zero-extended to dst_shape. Without: as the OpenVINO ops.
* GroupConvolution (forward): explicit Y = floor((X + pb + pe - (K-1)*d - 1)/s) + 1; same_*:
  Y = ceil(X/s), odd pad at the end (same_upper) or beginning (same_lower); valid: zero pads.
"""

import os
import sys

import numpy as np
import torch

REPO = os.environ.get("DECONV_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("DECONV_BUILD_DIR") or os.path.join(REPO, "build")

DTYPES = ["f32", "f64", "f16", "bf16", "i8", "u8", "i32"]
FLOATS = ("f32", "f64", "f16", "bf16")
TORCH = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
         "i8": torch.int8, "u8": torch.uint8, "i32": torch.int32}
NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "u8": np.uint8,
         "i32": np.int32}  # numpy has no bf16
INT_RANGE = {"i8": (-128, 127), "u8": (0, 255), "i32": (-2**31, 2**31 - 1)}
# (explicit mantissa bits, smallest normal exponent) of each float dtype.
FLOAT_FORMAT = {"f16": (10, -14), "bf16": (7, -126), "f32": (23, -126), "f64": (52, -1022)}
# Unit roundoff of the accumulator: f16 and bf16 widen to f32 and accumulate there.
ACC_EPS = {"f32": 2.0**-24, "f16": 2.0**-24, "bf16": 2.0**-24, "f64": 2.0**-53}


def dtype_of(t):
    """deconv's dtype name of a torch tensor or numpy array."""
    if isinstance(t, torch.Tensor):
        return {v: k for k, v in TORCH.items()}[t.dtype]
    return {np.dtype(v): k for k, v in NUMPY.items()}[t.dtype]


def to_f64(t):
    """A torch float64 copy of a torch tensor or numpy array (exact for every dtype here)."""
    if isinstance(t, torch.Tensor):
        return t.detach().to(torch.float64)
    return torch.from_numpy(np.ascontiguousarray(t).astype(np.float64))


def ulp(a, dtype):
    """Spacing of `dtype`'s floats at magnitude |a| (elementwise, a float64 tensor)."""
    mant, emin = FLOAT_FORMAT[dtype]
    _, e = torch.frexp(a.abs().clamp_min(2.0**-1074))  # |a| = m * 2^e, m in [0.5, 1)
    return torch.pow(2.0, (e - 1).clamp_min(emin).to(torch.float64) - mant)


def saturate(ref, dtype):
    lo, hi = INT_RANGE[dtype]
    return ref.clamp(lo, hi)


def float_bound(dtype, ref, abs_sum, n_terms, bias=None):
    """Largest |result - ref| the library's arithmetic allows for one output element:

    * the accumulation: every recursive or blocked summation order of n products, each rounded
      once (f32) or exact (f16/bf16 products fit an f32 significand), stays within
      (n + 1) * u * sum|x w|; the factor 2 covers any order and fused multiply-adds (the bound
      docs/semantics.md states for the direct kernels), u = 2^-24 for the f32 accumulator,
      2^-53 for f64, plus the float64 reference's own error;
    * f16/bf16: one rounding to nearest on store, half an ulp of the stored type at the value;
    * a bias, added after the kernel in the output's dtype: one more rounding of the sum (a
      full ulp for f16/bf16, whose add may round twice, through f32).
    """
    u = ACC_EPS[dtype]
    err = 2 * (n_terms + 1) * u * abs_sum + (n_terms + 1) * 2.0**-53 * abs_sum
    if dtype in ("f16", "bf16"):
        err = err + 0.5 * ulp(ref.abs() + err, dtype)
    if bias is not None:
        total = (ref + bias).abs() + err
        err = err + (ulp(total, dtype) if dtype in ("f16", "bf16") else 0.5 * ulp(total, dtype))
    return err


def check_close(got, ref, abs_sum, n_terms, dtype, bias=None, channel_axis=1, what=""):
    """Asserts the library's result `got` (any framework) against the float64 `ref`: exact after
    saturation for integer dtypes, within float_bound() for floats."""
    g = to_f64(got)
    assert tuple(g.shape) == tuple(ref.shape), f"{what}: shape {tuple(g.shape)}, expected {tuple(ref.shape)}"
    if dtype not in FLOATS:
        want = saturate(ref, dtype)
        bad = (g != want)
        if bad.any():
            i = int(bad.flatten().nonzero()[0])
            raise AssertionError(f"{what}: {int(bad.sum())} of {g.numel()} elements differ; first at flat "
                                 f"{i}: got {g.flatten()[i].item()}, expected {want.flatten()[i].item()} "
                                 f"(exact sum {ref.flatten()[i].item()})")
        return
    if bias is not None:
        shape = [1] * ref.dim()
        shape[channel_axis] = -1
        bias = bias.reshape(shape).expand_as(ref)
        ref_b = ref + bias
    else:
        ref_b = ref
    tol = float_bound(dtype, ref, abs_sum, n_terms, bias)
    diff = (g - ref_b).abs()
    bad = ~(diff <= tol)  # NaN fails too
    if bad.any():
        i = int(bad.flatten().nonzero()[0])
        ratio = (diff / tol.clamp_min(1e-300)).max().item()
        raise AssertionError(f"{what}: {int(bad.sum())} of {g.numel()} elements outside the bound; first at "
                             f"flat {i}: got {g.flatten()[i].item()!r}, expected {ref_b.flatten()[i].item()!r}, "
                             f"bound {tol.flatten()[i].item():.3g}; worst |err|/bound {ratio:.3g}")


# ---------------------------------------------------------------- torch-style reference

_CONVT = {1: torch.nn.functional.conv_transpose1d, 2: torch.nn.functional.conv_transpose2d,
          3: torch.nn.functional.conv_transpose3d}
_CONV = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}


def conv_transpose_ref(x, w, stride, padding, output_padding, groups, dilation):
    """(exact-ish result, sum |x||w|) in float64 of torch's conv_transpose; `x` may be unbatched."""
    rank = w.dim() - 2
    x64, w64 = to_f64(x), to_f64(w)
    unbatched = x64.dim() == rank + 1
    if unbatched:
        x64 = x64[None]
    args = dict(stride=stride, padding=padding, output_padding=output_padding, groups=groups, dilation=dilation)
    y = _CONVT[rank](x64, w64, **args)
    a = _CONVT[rank](x64.abs(), w64.abs(), **args)
    return (y[0], a[0]) if unbatched else (y, a)


# ---------------------------------------------------------------- spec reference (NCX)

def _floor_half(t):
    return t // 2  # Python's floor division: floor(total / 2) for negative totals as well


def _crop(full, starts, sizes):
    """full[..., start_i : start_i + size_i] per spatial axis, zero past its end (start >= 0)."""
    out = torch.zeros(list(full.shape[:2]) + list(sizes), dtype=full.dtype)
    src = [slice(None), slice(None)]
    dst = [slice(None), slice(None)]
    for i, (b, n) in enumerate(zip(starts, sizes)):
        length = full.shape[2 + i]
        take = max(0, min(n, length - b))
        src.append(slice(b, b + take))
        dst.append(slice(0, take))
    out[tuple(dst)] = full[tuple(src)]
    return out


def backprop_ref(x, w, *, strides=None, pads_begin=None, pads_end=None, dilations=None, output_padding=None,
                 auto_pad="explicit", output_shape=None, onednn=False):
    """GroupConvolutionBackpropData in float64 on NCX data: x [N, G*Ci, X..], w [G, Ci, Co, K..]
    (float64 torch tensors). Returns (result, sum|x w|, pads_begin used)."""
    rank = x.dim() - 2
    G, Ci, Co = w.shape[:3]
    K = list(w.shape[3:])
    X = list(x.shape[2:])
    s = strides or [1] * rank
    d = dilations or [1] * rank
    op = output_padding or [0] * rank
    pb_given = pads_begin or [0] * rank
    pe_given = pads_end or [0] * rank
    span = [s[i] * (X[i] - 1) + (K[i] - 1) * d[i] + 1 for i in range(rank)]
    starts, sizes = [], []
    for i in range(rank):
        if output_shape is not None:
            total = span[i] - output_shape[i] + op[i]
            if onednn:
                begin = {"explicit": pb_given[i], "valid": 0, "same_lower": _floor_half(total),
                         "same_upper": total - _floor_half(total)}[auto_pad]
            else:
                begin = total - _floor_half(total) if auto_pad == "same_upper" else _floor_half(total)
            starts.append(max(0, begin))
            sizes.append(output_shape[i])
        else:
            pb, pe = (pb_given[i], pe_given[i]) if auto_pad == "explicit" else (0, 0)
            starts.append(pb)
            sizes.append(span[i] - pb - pe + op[i])
    wt = w.reshape([G * Ci, Co] + K)
    full = _CONVT[rank](x, wt, stride=s, groups=G, dilation=d)
    full_abs = _CONVT[rank](x.abs(), wt.abs(), stride=s, groups=G, dilation=d)
    return _crop(full, starts, sizes), _crop(full_abs, starts, sizes), starts


def forward_ref(x, w, *, strides=None, pads_begin=None, pads_end=None, dilations=None, auto_pad="explicit"):
    """GroupConvolution-1 in float64 on NCX data: x [N, G*Ci, X..], w [G, Co, Ci, K..]."""
    rank = x.dim() - 2
    G, Co, Ci = w.shape[:3]
    K = list(w.shape[3:])
    X = list(x.shape[2:])
    s = strides or [1] * rank
    d = dilations or [1] * rank
    per_axis = []
    for i in range(rank):
        eff = (K[i] - 1) * d[i] + 1
        if auto_pad == "explicit":
            pb, pe = (pads_begin or [0] * rank)[i], (pads_end or [0] * rank)[i]
        elif auto_pad == "valid":
            pb = pe = 0
        else:
            y = -(-X[i] // s[i])
            total = max(0, (y - 1) * s[i] + eff - X[i])
            small = total // 2
            pb, pe = (small, total - small) if auto_pad == "same_upper" else (total - small, small)
        per_axis.append((pb, pe))
    pads = [p for pair in reversed(per_axis) for p in pair]  # F.pad: last axis first
    wt = w.reshape([G * Co, Ci] + K)
    xp = torch.nn.functional.pad(x, pads)
    return (_CONV[rank](xp, wt, stride=s, groups=G, dilation=d),
            _CONV[rank](xp.abs(), wt.abs(), stride=s, groups=G, dilation=d))


def ncx(t):
    """NXC -> NCX (a view)."""
    return t.movedim(-1, 1)


def nxc(t):
    """NCX -> NXC (a view)."""
    return t.movedim(1, -1)


def round_to(ref, dtype):
    """The float64 values `ref` stored in `dtype` (nearest even; saturated for integers)."""
    if dtype in FLOATS:
        return ref.to(TORCH[dtype]).to(torch.float64)
    return saturate(ref, dtype)


def import_deconv():
    """deconv, from PYTHONPATH or else from the build folder."""
    try:
        import deconv
    except ImportError:
        sys.path.insert(0, os.path.join(BUILD, "python"))
        import deconv
    return deconv

