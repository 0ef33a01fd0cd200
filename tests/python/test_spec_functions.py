"""The spec functions (group_convolution_backprop_data, convolution_backprop_data,
group_convolution, convolution_backward_data) against results computed elsewhere:

(a) OpenVINO's conformance vectors, tests/data/openvino/*.json under DECONV_SOURCE_DIR (the
    files the C++ conformance tests read; a missing or empty file fails this suite). Numeric
    vectors run in every dtype of their `dtypes_tested` that deconv has (integer dtypes only for
    integer data, u8 only for non-negative data, as tests/correctness/conformance_test.cpp
    does), NCX and, for f32, NXC. The float64 reference (reference.py) is first checked against
    the JSON's `expected` on the original values (1e-6 relative: the JSON prints 8 digits),
    then deconv against that reference on the values rounded to the dtype (reference.float_bound;
    integers exact after saturation). shape_inference.json's cases go through infer_shape:
    shapes and pads per docs/semantics.md (the spec formula, negative pads clamped to zero), and
    its error cases must raise deconv.Error.
(b) The C++ command line: seeded random layers of every op, NCX and NXC, every auto_pad, with
    and without output_shape / dst_shape, several dtypes, written to .npy files and run by
    `$DECONV_BUILD_DIR/tools/deconv run`. The data are small integers, so every sum is exact in
    every dtype and summation order: Python's result (the function, and deconv.Plan with the
    filter as it is and packed) must equal the command line's bit for bit, and both the float64
    reference rounded once to the dtype (saturated for integers).
"""

import json
import os
import subprocess

import numpy as np
import pytest
import torch

import deconv
import reference as R

DATA = os.path.join(R.REPO, "tests", "data", "openvino")
NUMERIC_FILES = ["convolution_backprop_data.json", "group_convolution_backprop_data.json",
                 "group_convolution.json"]
SHAPE_FILE = "shape_inference.json"
OPS = {"convolution_backprop_data.json": "ConvolutionBackpropData",
       "group_convolution_backprop_data.json": "GroupConvolutionBackpropData",
       "group_convolution.json": "GroupConvolution"}


def _load(name):
    path = os.path.join(DATA, name)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------- (a) numeric vectors

def _numeric_vectors():
    vectors = []
    for name in NUMERIC_FILES:
        data = _load(name)
        for case in (data or {}).get("cases", []):
            values = case["input"] + case["filter"]
            ints = all(float(v).is_integer() for v in values)
            negative = any(v < 0 for v in values)
            for dtype in case["dtypes_tested"]:
                if dtype not in R.DTYPES:  # i16, i64, u16, u32, u64: not deconv dtypes
                    continue
                if (dtype not in R.FLOATS and not ints) or (dtype == "u8" and negative):
                    continue
                for data_format in (["ncx", "nxc"] if dtype == "f32" else ["ncx"]):
                    vectors.append((name, case, dtype, data_format))
    return vectors


VECTORS = _numeric_vectors()


def _tensor(values, shape, dtype):
    """Values as a tensor of `dtype` (torch for bf16, numpy otherwise), and their float64 copy."""
    t = torch.tensor(values, dtype=torch.float64).reshape(shape)
    if dtype == "bf16":
        x = t.to(torch.bfloat16)
    else:
        x = t.numpy().astype(R.NUMPY[dtype])
    return x, R.to_f64(x)


def _spec_reference(op, x64, w64, attrs, output_shape):
    """The float64 reference of `op` on NCX data, with the JSON's attributes."""
    kw = dict(strides=attrs["strides"], pads_begin=attrs["pads_begin"], pads_end=attrs["pads_end"],
              dilations=attrs["dilations"], auto_pad=attrs["auto_pad"])
    if op == "GroupConvolution":
        return R.forward_ref(x64, w64, **kw)
    if op == "ConvolutionBackpropData":
        w64 = w64[None]
    ref, abs_sum, _ = R.backprop_ref(x64, w64, output_padding=attrs.get("output_padding"),
                                     output_shape=output_shape, **kw)
    return ref, abs_sum


def _call(op, x, w, output_shape, data_format, attrs, out=None):
    kw = dict(strides=attrs["strides"], pads_begin=attrs["pads_begin"], pads_end=attrs["pads_end"],
              dilations=attrs["dilations"], auto_pad=attrs["auto_pad"], data_format=data_format, out=out)
    if op == "GroupConvolution":
        assert output_shape is None
        return deconv.group_convolution(x, w, **kw)
    fn = {"GroupConvolutionBackpropData": deconv.group_convolution_backprop_data,
          "ConvolutionBackpropData": deconv.convolution_backprop_data}[op]
    return fn(x, w, output_shape, output_padding=attrs.get("output_padding"), **kw)


@pytest.mark.parametrize("name,case,dtype,data_format", VECTORS,
                         ids=[f"{v[1]['name']}-{v[2]}-{v[3]}" for v in VECTORS])
def test_conformance_vector(name, case, dtype, data_format):
    op = OPS[name]
    rank = len(case["input_shape"]) - 2
    out_shape_input = case["output_shape_input"]
    x, x64 = _tensor(case["input"], case["input_shape"], dtype)
    w, w64 = _tensor(case["filter"], case["filter_shape"], dtype)
    expected = torch.tensor(case["expected"], dtype=torch.float64).reshape(case["expected_shape"])

    # The reference reads the vector as OpenVINO did (original values, f32 printed to 8 digits).
    orig_x = torch.tensor(case["input"], dtype=torch.float64).reshape(case["input_shape"])
    orig_w = torch.tensor(case["filter"], dtype=torch.float64).reshape(case["filter_shape"])
    ref_orig, abs_orig = _spec_reference(op, orig_x, orig_w, case, out_shape_input)
    assert list(ref_orig.shape) == case["expected_shape"]
    assert torch.all((ref_orig - expected).abs() <= 1e-6 * (abs_orig + expected.abs()) + 1e-7), \
        "the reference disagrees with the JSON"

    if data_format == "nxc":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    if rank not in deconv.built_ranks() or dtype not in deconv.built_dtypes():
        with pytest.raises(deconv.UnsupportedError):
            _call(op, x, w, out_shape_input, data_format, case)
        return
    y = _call(op, x, w, out_shape_input, data_format, case)
    got = R.to_f64(y)
    if data_format == "nxc":
        got = R.ncx(got)
    assert list(got.shape) == case["expected_shape"]

    ref, abs_sum = _spec_reference(op, x64, w64, case, out_shape_input)
    fs = case["filter_shape"]
    c_in, k = {"GroupConvolutionBackpropData": (fs[1], fs[3:]), "ConvolutionBackpropData": (fs[0], fs[2:]),
               "GroupConvolution": (fs[2], fs[3:])}[op]
    R.check_close(got, ref, abs_sum, c_in * int(np.prod(k)), dtype, what=case["name"])
    if dtype not in R.FLOATS:  # integers: the JSON's own values, saturated
        assert torch.equal(got, R.saturate(expected, dtype))


def test_conformance_files_present_and_counted():
    """Every vector file is there and non-empty, and every numeric vector reached a test."""
    assert os.path.isdir(DATA), f"conformance data folder missing: {DATA}"
    covered = {v[1]["name"] for v in VECTORS}
    total = 0
    for name in NUMERIC_FILES + [SHAPE_FILE]:
        data = _load(name)
        assert data is not None, f"conformance file missing: {os.path.join(DATA, name)}"
        assert len(data["cases"]) > 0, f"{name} has no cases"
        total += len(data["cases"])
        if name != SHAPE_FILE:
            missing = [c["name"] for c in data["cases"] if c["name"] not in covered]
            assert not missing, f"{name}: vectors that reached no test: {missing}"
    assert len(VECTORS) >= 37 and total >= 84
    assert len(SHAPE_CASES) + len(NOT_EXPRESSIBLE) == len(_load(SHAPE_FILE)["cases"])
    assert len(SHAPE_CASES) >= 40


# ---------------------------------------------------------------- (a) shape inference vectors

def _shape_cases():
    cases, skipped = [], []
    for case in (_load(SHAPE_FILE) or {}).get("cases", []):
        err = case["spec_error"]
        # A float-typed output_shape tensor, and a rank-2 output_shape whose flattened values are
        # a valid shape: the Python API takes a list of integers, so neither can be passed.
        if err == "output_shape not integer type" or (
                err == "output_shape input not rank 1"
                and len(case["output_shape_input"]) == len(case["input_shape"]) - 2):
            skipped.append(case)
        else:
            cases.append(case)
    return cases, skipped


SHAPE_CASES, NOT_EXPRESSIBLE = _shape_cases()


def _attrs(case):
    return dict(strides=case["strides"], pads_begin=case["pads_begin"], pads_end=case["pads_end"],
                dilations=case["dilations"], output_padding=case["output_padding"], auto_pad=case["auto_pad"])


@pytest.mark.parametrize("case", SHAPE_CASES, ids=[c["name"] for c in SHAPE_CASES])
def test_shape_inference_vector(case):
    op, err = case["op"], case["spec_error"]
    attrs = _attrs(case)
    if op == "GroupConvolution":
        assert attrs.pop("output_padding") is None
    if err in ("non-numeric element type", "data/filters element types differ"):
        # Element types live on the tensors: a run with them must be refused, naming a dtype.
        types = {"boolean": np.bool_, "i64": np.int64, "f16": np.float16, "f32": np.float32}
        et = case["element_types"]
        x = np.zeros(case["input_shape"], types[et["data"]])
        w = np.zeros(case["filter_shape"], types[et["filters"]])
        with pytest.raises(deconv.InvalidArgumentError, match="dtype|bool|int64|buffer format"):
            _call(op, x, w, case["output_shape_input"], None, attrs)
        return
    if err is not None:
        with pytest.raises(deconv.Error, match="(?i)rank|channel|output_shape|output shape|group"):
            deconv.infer_shape(op, case["input_shape"], case["filter_shape"],
                               output_shape=case["output_shape_input"], **attrs)
        return
    expected = case["expected_shape"] or case["spec_expected_shape"]
    if case["expected_shape"]:
        assert case["expected_shape"] == case["spec_expected_shape"]
    info = deconv.infer_shape(op, case["input_shape"], case["filter_shape"],
                              output_shape=case["output_shape_input"], **attrs)
    assert list(info.output_shape) == expected
    assert list(info.pads_begin) == [max(0, p) for p in case["spec_pads_begin"]]
    assert list(info.pads_end) == [max(0, p) for p in case["spec_pads_end"]]
    assert info.groups == (case["filter_shape"][0] if op != "ConvolutionBackpropData" else 1)
    if len(case["input_shape"]) - 2 in deconv.built_ranks() and "f32" in deconv.built_dtypes():
        plan = deconv.Plan(op, "f32", case["input_shape"], case["filter_shape"], case["output_shape_input"],
                           **attrs)
        assert plan.output_shape == expected
        assert list(plan.shape.pads_begin) == list(info.pads_begin)


# ---------------------------------------------------------------- (b) the command line

CLI = os.path.join(R.BUILD, "tools", "deconv")
BACKPROP_MODES = [("explicit", False), ("same_upper", True), ("same_lower", True), ("valid", False),
                  ("explicit", True), ("same_upper", False)]
FORWARD_MODES = [("explicit", False), ("same_upper", False), ("same_lower", False), ("valid", False)]
CLI_OPS = {"group_convolution_backprop_data": (BACKPROP_MODES, ["f32", "f16", "i8", "bf16", "f64", "u8"]),
           "convolution_backprop_data": (BACKPROP_MODES, ["f32", "i32", "f16", "bf16", "u8", "f64"]),
           "group_convolution": (FORWARD_MODES, ["f32", "f16", "i8", "bf16"]),
           "convolution_backward_data": (BACKPROP_MODES, ["f32", "f16", "bf16"])}


def _cli_layers():
    rng = np.random.default_rng(777)
    layers = []
    for op, (modes, dtypes) in CLI_OPS.items():
        for fmt in ("ncx", "nxc"):
            for j, (auto_pad, with_shape) in enumerate(modes):
                rank = 1 + (j + (fmt == "nxc")) % 3
                groups = 1 if op == "convolution_backprop_data" else int(rng.integers(1, 4))
                ci, co = int(rng.integers(1, 4)), int(rng.integers(1, 4))
                k = [int(v) for v in rng.integers(1, 4, rank)]
                s = [int(v) for v in rng.integers(1, 4, rank)]
                d = [int(v) for v in rng.integers(1, 3, rank)]
                x = [int(v) for v in rng.integers(1, 5, rank)]
                if op == "group_convolution":  # the input covers the dilated kernel
                    x = [xi + (ki - 1) * di for xi, ki, di in zip(x, k, d)]
                pb = [int(v) for v in rng.integers(0, 2, rank)]
                pe = [int(v) for v in rng.integers(0, 2, rank)]
                opad = [int(rng.integers(0, si)) for si in s] if op != "group_convolution" else None
                shape = None
                if with_shape:
                    span = [si * (xi - 1) + (ki - 1) * di + 1 for si, xi, ki, di in zip(s, x, k, d)]
                    shape = [max(1, v + int(rng.integers(-2, 3))) for v in span]
                layers.append(dict(op=op, fmt=fmt, auto_pad=auto_pad, rank=rank, groups=groups, ci=ci, co=co,
                                   k=k, s=s, d=d, x=x, pb=pb, pe=pe, opad=opad, shape=shape,
                                   dtype=dtypes[j % len(dtypes)], n=int(rng.integers(1, 3)),
                                   weights_format=["xio", "oix"][j % 2], defaults=bool(j % 3 == 2)))
    return layers


CLI_LAYERS = _cli_layers()


def _layer_id(L):
    return f"{L['op']}-{L['fmt']}-r{L['rank']}-{L['dtype']}-{L['auto_pad']}{'-shape' if L['shape'] else ''}"


def _csv(v):
    return ",".join(str(int(i)) for i in v)


def _layer_tensors(L, rng):
    """(data values NCX, filter values in the op's layout), small integers as float64 numpy."""
    g, ci, co, k = L["groups"], L["ci"], L["co"], L["k"]
    lo = 0 if L["dtype"] == "u8" else -3
    if L["op"] == "group_convolution_backprop_data":
        fshape = [g, ci, co] + k
    elif L["op"] == "convolution_backprop_data":
        fshape = [ci, co] + k
    elif L["op"] == "group_convolution":
        fshape = [g, co, ci] + k
    else:  # oneDNN: OC = g*ci channels of diff_dst, IC = g*co of diff_src
        fshape = [g * ci, co] + k if L["weights_format"] == "oix" else k + [co, g * ci]
    c = ci * (1 if L["op"] == "convolution_backprop_data" else g)
    x = rng.integers(lo, 4, [L["n"], c] + L["x"]).astype(np.float64)
    w = rng.integers(lo, 4, fshape).astype(np.float64)
    return x, w


def _as_filter(L, w64):
    """The reference's [G, C_IN, C_OUT, K..] (backprop) / [G, C_OUT, C_IN, K..] (forward) filter."""
    rank, g = L["rank"], L["groups"]
    if L["op"] == "convolution_backprop_data":
        return w64[None]
    if L["op"] != "convolution_backward_data":
        return w64
    if L["weights_format"] == "xio":  # [K.., IC/G, OC] -> OIX [OC, IC/G, K..]
        w64 = w64.permute([rank + 1, rank] + list(range(rank)))
    return w64.reshape([g, w64.shape[0] // g, w64.shape[1]] + list(w64.shape[2:]))


def _save(path, a, dtype):
    """.npy for the command line: bf16 travels as float32 (its values are bf16 already)."""
    np.save(path, np.ascontiguousarray(a.astype(np.float32 if dtype == "bf16" else R.NUMPY[dtype])))


@pytest.mark.parametrize("L", CLI_LAYERS, ids=[_layer_id(L) for L in CLI_LAYERS])
def test_python_matches_command_line(L, tmp_path):
    assert os.access(CLI, os.X_OK), f"the command line is not built: {CLI}"
    rng = np.random.default_rng([777, CLI_LAYERS.index(L)])
    dtype, op, fmt = L["dtype"], L["op"], L["fmt"]
    x, w = _layer_tensors(L, rng)
    x_l = np.moveaxis(x, 1, -1) if fmt == "nxc" else x  # the data in its layout
    _save(tmp_path / "x.npy", x_l, dtype)
    _save(tmp_path / "w.npy", w, dtype)

    attrs, flags = {}, ["--op", op, "-x", "x.npy", "-w", "w.npy", "-o", "y.npy", "--data-format", fmt]
    if dtype == "bf16":
        flags += ["--dtype", "bf16"]
    for key, flag, value in (("strides", "--strides", L["s"]), ("dilations", "--dilations", L["d"]),
                             ("pads_begin", "--pads-begin", L["pb"]), ("pads_end", "--pads-end", L["pe"]),
                             ("output_padding", "--output-padding", L["opad"])):
        if value is None or (L["defaults"] and key in ("dilations", "output_padding")):
            continue  # the spec's default on both sides
        attrs[key] = value
        flags += [flag, _csv(value)]
    attrs["auto_pad"] = L["auto_pad"]
    flags += ["--auto-pad", L["auto_pad"]]

    # The output shape input: spatial for OpenVINO, the full diff_src shape for oneDNN.
    shape = L["shape"]
    if op == "convolution_backward_data":
        flags += ["--groups", str(L["groups"]), "--weights-format", L["weights_format"]]
        if shape is not None:
            ic = L["groups"] * L["co"]
            shape = [L["n"]] + shape + [ic] if fmt == "nxc" else [L["n"], ic] + shape
    if shape is not None:
        flags += ["--output-shape", _csv(shape)]

    def tensor(a):
        return torch.from_numpy(a).to(torch.bfloat16) if dtype == "bf16" else np.ascontiguousarray(
            a.astype(R.NUMPY[dtype]))

    fn = getattr(deconv, op)
    kwargs = dict(attrs, data_format=fmt)
    if op == "convolution_backward_data":
        kwargs.update(groups=L["groups"], weights_format=L["weights_format"])
        args = (tensor(x_l), tensor(w), shape)
    elif op == "group_convolution":
        args = (tensor(x_l), tensor(w))
    else:
        args = (tensor(x_l), tensor(w), shape)
    p = subprocess.run([CLI, "run"] + flags, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    if L["rank"] not in deconv.built_ranks() or dtype not in deconv.built_dtypes():  # a reduced build
        with pytest.raises(deconv.UnsupportedError):
            fn(*args, **kwargs)
        assert p.returncode != 0 and "in this build" in p.stderr, p.stderr
        return
    y = fn(*args, **kwargs)
    assert isinstance(y, torch.Tensor) == (dtype == "bf16")
    # The same layer as a Plan: run with the filter and with it packed, the same bits.
    plan = deconv.Plan(op, R.TORCH[dtype], list(x_l.shape), list(w.shape),
                       None if op == "group_convolution" else shape, **kwargs)
    assert plan.output_shape == list(y.shape)
    for filt in (args[1], plan.pack_filter(args[1])):
        assert torch.equal(R.to_f64(plan.run(args[0], filt)), R.to_f64(y)), "Plan.run differs from the function"
    assert p.returncode == 0, f"deconv run {' '.join(flags)}: {p.stderr}"
    y_cli = np.load(tmp_path / "y.npy")
    got = R.to_f64(y)
    assert list(got.shape) == list(y_cli.shape)
    assert torch.equal(got, torch.from_numpy(y_cli.astype(np.float64))), "Python and the command line differ"

    # Both against the float64 reference, rounded once to the dtype (the sums are exact).
    x64, w64 = torch.from_numpy(x), _as_filter(L, torch.from_numpy(w))
    kw = dict(strides=attrs.get("strides"), pads_begin=attrs.get("pads_begin"), pads_end=attrs.get("pads_end"),
              dilations=attrs.get("dilations"), auto_pad=L["auto_pad"])
    if op == "group_convolution":
        ref, _ = R.forward_ref(x64, w64, **kw)
    else:
        spatial = None
        if shape is not None:
            spatial = shape[1:-1] if (op == "convolution_backward_data" and fmt == "nxc") else \
                shape[2:] if op == "convolution_backward_data" else shape
        ref, _, _ = R.backprop_ref(x64, w64, output_padding=attrs.get("output_padding"), output_shape=spatial,
                                   onednn=op == "convolution_backward_data", **kw)
    if fmt == "nxc":
        ref = R.nxc(ref)
    assert torch.equal(got, R.round_to(ref, dtype)), "deconv differs from the reference"


def test_command_line_layers_cover_the_ops():
    for op in CLI_OPS:
        for fmt in ("ncx", "nxc"):
            modes = {L["auto_pad"] for L in CLI_LAYERS if L["op"] == op and L["fmt"] == fmt}
            assert modes == {"explicit", "same_upper", "same_lower", "valid"}, (op, fmt)
            if op != "group_convolution":
                assert any(L["shape"] for L in CLI_LAYERS if L["op"] == op and L["fmt"] == fmt)
    assert {L["rank"] for L in CLI_LAYERS} == {1, 2, 3}
    assert len(CLI_LAYERS) == 44
