"""Randomized sweep of deconv.conv_transpose1d/2d/3d against torch.nn.functional.conv_transpose.

1,155 seeded cases (CASES, counted by test_case_count_and_coverage): ranks 1-3, every dtype
(f32, f64, f16, bf16, i8, u8, i32), groups 1 / a few / depthwise-like (groups == C_in),
dilations, strides above the kernel size, padding, output_padding (torch's rule: below
max(stride, dilation)), batch 1-3 and unbatched input, bias, and tensors that are contiguous,
strided slices, transposed, torch channels_last, numpy (C order, slices, Fortran order), with
the result in a new tensor or in out= (dense or a strided slice of a sentinel-filled buffer),
through the functions or through Plan.conv_transpose (run with the weight, or packed once;
its output_shape, dtype and macs checked too).

The reference is torch's conv_transpose in float64 on the very values deconv reads (already
rounded to the dtype). Tolerances (reference.float_bound, per output element, A = sum |x w|
over its n terms, n = C_in/groups * prod(K)):
  f32, f64:  2 (n + 1) u A, u = 2^-24 / 2^-53: any summation order of n rounded products;
  f16, bf16: the same with the f32 accumulator (u = 2^-24; their products are exact in f32),
             plus half an ulp of the stored type: the one rounding on store;
  bias:      one more rounding, in the output's dtype (a full ulp for f16/bf16: a 16-bit add
             may round twice, through f32);
  integers:  exact. Data are integers whose products and sums float64 holds exactly (i8/u8 up
             to their full range, i32 up to 2^20), so the reference is the exact sum, which the
             library saturates to the dtype (i8/u8 accumulate in i32, i32 in i64).
"""

import numpy as np
import pytest
import torch

import deconv
import reference as R

N_PER_DTYPE = 165
SEED = 20240611
MAX_OUTPUT = 4000  # output elements per case


def _axes(rng, rank, lo, hi):
    return [int(v) for v in rng.integers(lo, hi + 1, size=rank)]


def _make_case(rng, index, dtype, rank):
    """One case description (plain values, so that ids and failures print it)."""
    while True:
        kind = rng.choice(["one", "few", "depthwise"], p=[0.45, 0.35, 0.2])
        if kind == "one":
            groups, cin_pg = 1, int(rng.integers(1, 5))
        elif kind == "few":
            groups, cin_pg = int(rng.integers(2, 4)), int(rng.integers(1, 3))
        else:  # groups == C_in
            groups, cin_pg = int(rng.integers(2, 6)), 1
        cout_pg = int(rng.integers(1, 4))
        kmax, xmax = {1: (5, 9), 2: (4, 6), 3: (3, 4)}[rank]
        k = _axes(rng, rank, 1, kmax)
        if rng.random() < 0.3:  # strides above the kernel size
            s = [ki + int(rng.integers(1, 3)) for ki in k]
        else:
            s = _axes(rng, rank, 1, 3)
        d = _axes(rng, rank, 1, 3) if rng.random() < 0.4 else [1] * rank
        x = _axes(rng, rank, 1, xmax)
        op = [int(rng.integers(0, max(si, di))) if rng.random() < 0.5 else 0 for si, di in zip(s, d)]
        pad = []
        for i in range(rank):
            most = ((x[i] - 1) * s[i] + d[i] * (k[i] - 1) + op[i]) // 2  # output stays >= 1
            pad.append(int(rng.integers(0, most + 1)) if rng.random() < 0.5 else 0)
        unbatched = rng.random() < 0.15
        batch = 1 if unbatched else int(rng.integers(1, 4))
        out_sp = [(x[i] - 1) * s[i] - 2 * pad[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(rank)]
        assert min(out_sp) >= 1
        if batch * groups * cout_pg * int(np.prod(out_sp)) <= MAX_OUTPUT:
            break
    layouts = ["contiguous", "slice", "permuted"]
    if dtype != "bf16":
        layouts += ["numpy", "numpy_slice", "numpy_fortran"]
    if not unbatched:
        layouts.append("channels_last")
    layout = str(rng.choice(layouts))
    w_layout = str(rng.choice(["contiguous", "slice", "permuted"], p=[0.6, 0.2, 0.2]))
    bias = dtype in R.FLOATS and rng.random() < 0.4
    out = str(rng.choice(["new", "out", "out_strided"], p=[0.7, 0.15, 0.15]))
    magnitude = str(rng.choice(["small", "large"])) if dtype not in R.FLOATS else "normal"
    scalar_args = rng.random() < 0.3 and len(set(s)) == 1
    api = "function" if unbatched else str(rng.choice(["function", "plan", "plan_packed"], p=[0.7, 0.15, 0.15]))
    bias = bias and api == "function"  # (plans take no bias)
    return dict(index=index, dtype=dtype, rank=rank, batch=batch, unbatched=unbatched, groups=groups,
                cin_pg=cin_pg, cout_pg=cout_pg, x=x, k=k, stride=s, padding=pad, output_padding=op,
                dilation=d, bias=bias, layout=layout, w_layout=w_layout, out=out, magnitude=magnitude,
                scalar_args=scalar_args, out_spatial=out_sp, api=api)


def _cases():
    rng = np.random.default_rng(SEED)
    cases = []
    for dtype in R.DTYPES:
        for j in range(N_PER_DTYPE):
            cases.append(_make_case(rng, len(cases), dtype, 1 + j % 3))
    return cases


CASES = _cases()


def _case_id(c):
    return (f"{c['index']:04d}-r{c['rank']}-{c['dtype']}-g{c['groups']}-{c['layout']}"
            f"{'-unbatched' if c['unbatched'] else ''}{'-bias' if c['bias'] else ''}-{c['out']}-{c['api']}")


# ---------------------------------------------------------------- tensors in the case's layout

def _values(rng, c, shape):
    dtype = c["dtype"]
    if dtype in R.FLOATS:
        return rng.standard_normal(shape)
    lo, hi = {("i8", "small"): (-8, 8), ("i8", "large"): (-128, 127),
              ("u8", "small"): (0, 15), ("u8", "large"): (0, 255),
              ("i32", "small"): (-100, 100), ("i32", "large"): (-2**20, 2**20)}[(dtype, c["magnitude"])]
    return rng.integers(lo, hi + 1, size=shape).astype(np.float64)


def _realize(vals, dtype, layout):
    """`vals` (float64 numpy, already representable) as a tensor of `dtype` laid out per `layout`."""
    if layout.startswith("numpy"):
        a = vals.astype(R.NUMPY[dtype])
        if layout == "numpy_fortran":
            return np.asfortranarray(a)
        if layout == "numpy_slice":
            big = np.zeros([n * 2 + 1 for n in a.shape], dtype=a.dtype)
            view = big[tuple(slice(1, 1 + 2 * n, 2) for n in a.shape)]
            view[...] = a
            return view
        return np.ascontiguousarray(a)
    t = torch.from_numpy(vals).to(R.TORCH[dtype])
    if layout == "slice":
        big = torch.zeros([n * 2 + 1 for n in t.shape], dtype=t.dtype)
        view = big[tuple(slice(1, 1 + 2 * n, 2) for n in t.shape)]
        view.copy_(t)
        return view
    if layout == "permuted":
        order = list(range(t.dim()))[::-1]
        return t.permute(order).contiguous().permute(order)
    if layout == "channels_last":
        if t.dim() == 4:
            return t.contiguous(memory_format=torch.channels_last)
        if t.dim() == 5:
            return t.contiguous(memory_format=torch.channels_last_3d)
        return t.movedim(1, -1).contiguous().movedim(-1, 1)
    return t.contiguous()


def _representable(vals, dtype):
    """The float64 values after a round trip through `dtype` (what deconv will read)."""
    if dtype in R.FLOATS:
        return torch.from_numpy(vals).to(R.TORCH[dtype]).to(torch.float64).numpy()
    return vals


def _sentinel(dtype):
    return {"i8": -77, "u8": 177, "i32": -7777777}.get(dtype, -1234.5)


def _make_out(c, shape, numpy_side):
    """(out tensor, the buffer that holds it) filled with a sentinel."""
    dtype, fill = c["dtype"], _sentinel(c["dtype"])
    if c["out"] == "out":
        if numpy_side:
            buf = np.full(shape, fill, dtype=R.NUMPY[dtype])
        else:
            buf = torch.full(shape, fill, dtype=R.TORCH[dtype])
        return buf, buf
    big_shape = [n + 1 for n in shape[:-1]] + [shape[-1] * 2]  # a dense box is never handed over
    if numpy_side:
        buf = np.full(big_shape, fill, dtype=R.NUMPY[dtype])
    else:
        buf = torch.full(big_shape, fill, dtype=R.TORCH[dtype])
    view = buf[tuple(slice(1, 1 + n) for n in shape[:-1]) + (slice(0, 2 * shape[-1], 2),)]
    return view, buf


@pytest.mark.parametrize("c", CASES, ids=_case_id)
def test_conv_transpose_matches_torch(c):
    rng = np.random.default_rng([SEED, c["index"]])
    dtype, rank, groups = c["dtype"], c["rank"], c["groups"]
    cin, cout = groups * c["cin_pg"], groups * c["cout_pg"]
    x_shape = ([] if c["unbatched"] else [c["batch"]]) + [cin] + c["x"]
    w_shape = [cin, c["cout_pg"]] + c["k"]
    xv = _representable(_values(rng, c, x_shape), dtype)
    wv = _representable(_values(rng, c, w_shape), dtype)
    numpy_side = c["layout"].startswith("numpy")
    x = _realize(xv, dtype, c["layout"])
    w_layout = c["w_layout"]
    if numpy_side:
        w_layout = {"contiguous": "numpy", "slice": "numpy_slice", "permuted": "numpy_fortran"}[w_layout]
    w = _realize(wv, dtype, w_layout)
    bias = None
    if c["bias"]:
        bv = _representable(rng.standard_normal(cout), dtype)
        bias = bv.astype(R.NUMPY[dtype]) if numpy_side else torch.from_numpy(bv).to(R.TORCH[dtype])

    args = {}
    for name in ("stride", "padding", "output_padding", "dilation"):
        v = c[name]
        args[name] = v[0] if c["scalar_args"] and len(set(v)) == 1 else tuple(v)
    out_shape = ([] if c["unbatched"] else [c["batch"]]) + [cout] + c["out_spatial"]
    out = buf = None
    if c["out"] != "new":
        out, buf = _make_out(c, out_shape, numpy_side)
        buf_before = R.to_f64(buf).clone()

    fn = {1: deconv.conv_transpose1d, 2: deconv.conv_transpose2d, 3: deconv.conv_transpose3d}[rank]
    if rank not in deconv.built_ranks() or dtype not in deconv.built_dtypes():
        with pytest.raises(deconv.UnsupportedError):
            fn(x, w, bias, groups=groups, out=out, **args)
        return
    if c["api"] == "function":
        y = fn(x, w, bias, groups=groups, out=out, **args)
    else:  # Plan.conv_transpose, run with the weight as it is or packed once
        plan = deconv.Plan.conv_transpose(x_shape, w_shape, R.TORCH[dtype] if not numpy_side else R.NUMPY[dtype],
                                          groups=groups, **args)
        assert plan.output_shape == out_shape and plan.dtype == dtype and plan.device == "cpu"
        assert plan.input_shape == x_shape and plan.filter_shape == w_shape
        assert "GroupConvolutionBackpropData" in plan.describe()
        # The multiply-accumulates performed: one per (output, term) pair that exists, i.e. the
        # sum of conv_transpose(ones, ones).
        ones = R.conv_transpose_ref(torch.ones(x_shape, dtype=torch.float64), torch.ones(w_shape, dtype=torch.float64),
                                    c["stride"], c["padding"], c["output_padding"], groups, c["dilation"])[0]
        assert plan.macs == int(ones.sum())
        y = plan.run(x, plan.pack_filter(w) if c["api"] == "plan_packed" else w, out=out)
    # The framework and dtype of the input, and out= when given.
    if numpy_side:
        assert isinstance(y, np.ndarray) and y.dtype == np.dtype(R.NUMPY[dtype])
    else:
        assert isinstance(y, torch.Tensor) and y.dtype == R.TORCH[dtype]
    assert list(y.shape) == out_shape
    if out is not None:
        if c["unbatched"]:  # identity for unbatched out= is test_zero_copy's business
            addr = y.data_ptr() if isinstance(y, torch.Tensor) else y.__array_interface__["data"][0]
            want = out.data_ptr() if isinstance(out, torch.Tensor) else out.__array_interface__["data"][0]
            assert addr == want
        else:
            assert y is out
        # Nothing outside the view was written.
        after = R.to_f64(buf)
        mask = torch.ones(after.shape, dtype=torch.bool)
        if c["out"] == "out_strided":
            mask[tuple(slice(1, 1 + n) for n in out_shape[:-1]) + (slice(0, 2 * out_shape[-1], 2),)] = False
        else:
            mask[...] = False
        assert torch.equal(after[mask], buf_before[mask]), "out= written outside its view"

    ref, abs_sum = R.conv_transpose_ref(torch.from_numpy(xv), torch.from_numpy(wv), c["stride"], c["padding"],
                                        c["output_padding"], groups, c["dilation"])
    n_terms = c["cin_pg"] * int(np.prod(c["k"]))
    R.check_close(y, ref, abs_sum, n_terms, dtype, None if bias is None else R.to_f64(bias),
                  channel_axis=0 if c["unbatched"] else 1, what=_case_id(c))


def test_case_count_and_coverage():
    """The sweep has the cases it claims, and the generator reached every feature."""
    assert len(CASES) >= 1000
    count = lambda pred: sum(1 for c in CASES if pred(c))  # noqa: E731
    for dtype in R.DTYPES:
        for rank in (1, 2, 3):
            assert count(lambda c: c["dtype"] == dtype and c["rank"] == rank) >= 40, (dtype, rank)
    for dtype in R.FLOATS:
        assert count(lambda c: c["dtype"] == dtype and c["bias"]) >= 20, dtype
    for dtype in ("i8", "u8", "i32"):
        assert count(lambda c: c["dtype"] == dtype and c["magnitude"] == "large") >= 20, dtype
    for rank in (1, 2, 3):
        r = lambda pred: count(lambda c: c["rank"] == rank and pred(c))  # noqa: E731
        assert r(lambda c: c["groups"] > 1 and c["cin_pg"] == 1) >= 20  # depthwise-like
        assert r(lambda c: c["groups"] > 1 and c["cin_pg"] > 1) >= 20
        assert r(lambda c: max(c["dilation"]) > 1) >= 20
        assert r(lambda c: max(c["output_padding"]) > 0) >= 20
        assert r(lambda c: any(si > ki for si, ki in zip(c["stride"], c["k"]))) >= 20
        assert r(lambda c: max(c["padding"]) > 0) >= 20
        assert r(lambda c: c["unbatched"]) >= 20
        assert r(lambda c: c["batch"] == 3) >= 20
        for layout in ("contiguous", "slice", "permuted", "channels_last", "numpy", "numpy_slice", "numpy_fortran"):
            assert r(lambda c: c["layout"] == layout) >= 10, (rank, layout)
        for out in ("out", "out_strided"):
            assert r(lambda c: c["out"] == out) >= 20, (rank, out)
        assert r(lambda c: c["w_layout"] != "contiguous") >= 40
        for api in ("plan", "plan_packed"):
            assert r(lambda c: c["api"] == api) >= 20, (rank, api)
