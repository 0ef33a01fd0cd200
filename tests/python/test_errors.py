"""Bad input is refused with the right exception class and a message that names the value, and
a call that raises has not written its out= (docs/python.md: "As in C++, a call that raises has
not written its output").

Classes: deconv.InvalidArgumentError (also ValueError) for what the ops do not allow,
UnsupportedError (NotImplementedError) for what this build or machine cannot run (CUDA here),
TooLargeError (MemoryError) for sizes that overflow. Every check fills out= with a sentinel
first and compares it bitwise afterwards.
"""

import re

import numpy as np
import pytest
import torch

import deconv

SENTINEL = -12345.0


def _layer(framework="numpy", dtype=np.float32):
    """x [1, 4, 4, 4], w [4, 3, 3, 3] (groups 1 or 2), y [1, 3, 6, 6] with stride 1."""
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, (1, 4, 4, 4)).astype(dtype)
    w = rng.integers(-3, 4, (4, 3, 3, 3)).astype(dtype)
    if framework == "torch":
        return torch.from_numpy(x), torch.from_numpy(w)
    return x, w


def _out(shape=(1, 3, 6, 6), framework="numpy", dtype=np.float32):
    o = np.full(shape, SENTINEL, dtype)
    return torch.from_numpy(o) if framework == "torch" else o


def expect_error(cls, fn, *names, out=None):
    """fn() raises `cls` (a deconv.Error) whose message contains every name (case-insensitive),
    and leaves `out` as it was. Failures are reported with pytest.fail, in one line each."""
    before = None if out is None else np.array(out, copy=True)
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the class is checked below)
        err = e
    else:
        pytest.fail(f"no error; expected {cls.__name__} naming {names}")
    message = str(err)
    if not isinstance(err, cls) or not isinstance(err, deconv.Error):
        pytest.fail(f"raised {type(err).__module__}.{type(err).__name__} ({message.splitlines()[0]}); expected "
                    f"{cls.__name__}, a deconv.Error")
    for name in names:
        if not re.search(re.escape(str(name)), message, re.IGNORECASE):
            pytest.fail(f"the message does not name {name!r}: {message}")
    if out is not None and not np.array_equal(np.array(out), before):
        pytest.fail(f"out= was written by a call that raised {type(err).__name__}: {message}")
    return message


def test_exception_classes():
    assert issubclass(deconv.InvalidArgumentError, (deconv.Error, ValueError))
    assert issubclass(deconv.InvalidArgumentError, ValueError)
    assert issubclass(deconv.UnsupportedError, deconv.Error) and issubclass(deconv.UnsupportedError,
                                                                            NotImplementedError)
    assert issubclass(deconv.TooLargeError, deconv.Error) and issubclass(deconv.TooLargeError, MemoryError)
    assert issubclass(deconv.KernelError, deconv.Error) and issubclass(deconv.KernelError, RuntimeError)


# ---------------------------------------------------------------- dtypes

@pytest.mark.parametrize("make,name", [
    (lambda a: a.astype(np.int16), "int16"),
    (lambda a: a.astype(np.int64), "int64"),
    (lambda a: a.astype(np.complex64), "complex64"),
    (lambda a: a.astype(np.uint16), "uint16"),
    (lambda a: torch.from_numpy(a.astype(np.int16)), "int16"),
    (lambda a: torch.from_numpy(a).to(torch.complex64), "complex64"),
    (lambda a: torch.from_numpy(a).to(torch.int64), "int64"),
    (lambda a: a.astype(">f4"), "big-endian"),
    (lambda a: a.astype(np.longdouble), "'g'"),  # the buffer protocol's name of long double
], ids=["np-int16", "np-int64", "np-complex64", "np-uint16", "torch-int16", "torch-complex64", "torch-int64",
        "big-endian", "longdouble"])
def test_unsupported_dtypes(make, name):
    x, w = _layer()
    framework = "torch" if isinstance(make(x), torch.Tensor) else "numpy"
    out = _out(framework=framework)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(make(x), make(w), out=out), name,
                 out=out)


def test_bool_tensors():
    x, w = _layer()
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.conv_transpose2d(torch.from_numpy(x).bool(), torch.from_numpy(w).bool()), "bool")


@pytest.mark.parametrize("xd,wd,names", [
    (np.float32, np.float64, ["f64", "f32"]),
    (np.int8, np.uint8, ["u8", "i8"]),
    (np.float16, np.float32, ["f32", "f16"]),
    (np.int32, np.float32, ["f32", "i32"]),
])
def test_dtype_mismatch_between_input_and_weight(xd, wd, names):
    x, _ = _layer(dtype=xd)
    _, w = _layer(dtype=wd)
    out = _out(dtype=xd)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=out), *names, out=out)


def test_dtype_mismatch_bf16_f16_torch():
    x, w = _layer("torch")
    out = torch.full((1, 3, 6, 6), 7.0, dtype=torch.bfloat16)
    before = out.clone()
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.conv_transpose2d(x.bfloat16(), w.half(), out=out), "f16", "bf16")
    assert torch.equal(out, before)


def test_out_dtype_and_shape():
    x, w = _layer()
    out = _out(dtype=np.float64)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=out), "f64", out=out)
    out = _out(shape=(1, 3, 6, 5))
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=out), "[1, 3, 6, 5]",
                 "[1, 3, 6, 6]", out=out)
    out = _out(shape=(3, 6, 6))  # an unbatched out for batched input
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=out), "[3, 6, 6]",
                 out=out)


# ---------------------------------------------------------------- shapes and attributes

def test_wrong_ranks():
    x, w = _layer()
    out = _out()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x[0, 0], w, out=out), "rank",
                 "[4, 4]", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x[None], w), "rank")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w[..., 0], out=out),
                 "[4, 3, 3]", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose1d(x, w), "[4, 3, 3, 3]", "1D")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose3d(x, w), "[4, 3, 3, 3]")
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.Plan.conv_transpose([1, 4, 4, 4, 4, 4], [4, 3, 3, 3, 3, 3]), "[1, 4, 4, 4, 4, 4]")


def test_groups():
    x, w = _layer()
    out = _out()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, groups=3, out=out),
                 "groups=3", out=out)
    for bad in (0, -2, 2.0, True, "2"):
        expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, groups=bad, out=out),
                     f"groups is {bad!r}", out=out)
    # Input channels that do not match the weight's.
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x[:, :3], w[:, :], out=out),
                 "channels", "3", out=out)


@pytest.mark.parametrize("kwargs,names", [
    (dict(stride=0), ["strides[0] is 0"]),
    (dict(stride=(1, -1)), ["strides[1] is -1"]),
    (dict(padding=-1), ["pads_begin[0] is -1"]),
    (dict(padding=(0, 5)), ["pads_begin 5", "-4"]),  # the output would have -4 columns
    (dict(dilation=0), ["dilations[0] is 0"]),
    (dict(dilation=(1, -2)), ["dilations[1] is -2"]),
    (dict(output_padding=1), ["output_padding[0] is 1"]),  # not below max(stride 1, dilation 1)
    (dict(stride=2, output_padding=(0, 2)), ["output_padding[1] is 2"]),
    (dict(dilation=3, output_padding=3), ["output_padding[0] is 3"]),
    (dict(output_padding=-1), ["output_padding[0] is -1"]),
    (dict(stride=(1, 2, 3)), ["stride is (1, 2, 3)"]),
    (dict(padding=[]), ["padding is []"]),
    (dict(padding=0.5), ["padding is 0.5"]),
])
def test_bad_attributes(kwargs, names):
    x, w = _layer()
    out = _out()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=out, **kwargs), *names,
                 out=out)


@pytest.mark.parametrize("call,names", [
    (lambda x, w, out: deconv.conv_transpose2d(x, w, stride=(1.5, 2), out=out), ["1.5"]),
    (lambda x, w, out: deconv.conv_transpose2d(x, w, padding=(0, 0.5), out=out), ["0.5"]),
    (lambda x, w, out: deconv.conv_transpose2d(x, w, stride="12", out=out), ["'12'"]),
    (lambda x, w, out: deconv.group_convolution_backprop_data(x, w.reshape(1, 4, 3, 3, 3), strides=[1.5, 1],
                                                              out=out), ["1.5"]),
    (lambda x, w, out: deconv.group_convolution_backprop_data(x, w.reshape(1, 4, 3, 3, 3), [6.5, 6.5],
                                                              out=out), ["6.5"]),
], ids=["stride-tuple", "padding-tuple", "stride-string", "spec-strides", "spec-output_shape"])
def test_non_integer_attributes(call, names):
    """A fractional stride, pad or shape, or a string, is refused (torch refuses them too), not
    truncated by int() or read digit by digit."""
    x, w = _layer()
    expect_error(deconv.InvalidArgumentError, lambda: call(x, w, None), *names)


def test_spec_attribute_errors():
    x, w = _layer()
    f = w.reshape(1, 4, 3, 3, 3)
    out = _out()
    gcbd = deconv.group_convolution_backprop_data
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, strides=2, out=out), "strides is 2", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, strides=[1, 1, 1], out=out), "[1, 1, 1]",
                 out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, pads_begin=[0, -1], out=out), "-1", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, auto_pad="same", out=out), "'same'", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, data_format="nchw", out=out), "'nchw'",
                 out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, [6], out=out), "output_shape", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, [0, 6], out=out), "output_shape", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, out=out, device="tpu"), "'tpu'", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, out=out, algorithm="fft"), "'fft'", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: gcbd(x, f, out=out, schedule="nonsense=1"), "'nonsense'",
                 out=out)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.convolution_backprop_data(x, f, out=out), "rank",
                 out=out)
    # oneDNN's attributes belong to ConvolutionBackwardData; output_shape and output_padding
    # are not the forward op's.
    P = deconv.Plan
    expect_error(deconv.InvalidArgumentError, lambda: P("GroupConvolutionBackpropData", "f32", [1, 4, 4, 4],
                                                        [1, 4, 3, 3, 3], groups=2), "groups")
    expect_error(deconv.InvalidArgumentError, lambda: P("GroupConvolutionBackpropData", "f32", [1, 4, 4, 4],
                                                        [1, 4, 3, 3, 3], weights_format="oix"), "weights_format")
    expect_error(deconv.InvalidArgumentError, lambda: P("GroupConvolution", "f32", [1, 4, 4, 4], [1, 3, 4, 3, 3],
                                                        [2, 2]), "[2, 2]")
    expect_error(deconv.InvalidArgumentError, lambda: P("GroupConvolution", "f32", [1, 4, 4, 4], [1, 3, 4, 3, 3],
                                                        output_padding=[1, 1]), "output_padding")
    expect_error(deconv.InvalidArgumentError, lambda: P("Deconvolution", "f32", [1, 4, 4, 4], [1, 4, 3, 3, 3]),
                 "'Deconvolution'")
    expect_error(deconv.InvalidArgumentError, lambda: P("GroupConvolutionBackpropData", "int16", [1, 4, 4, 4],
                                                        [1, 4, 3, 3, 3]), "'int16'")
    # oneDNN Graph's table: f32, bf16, f16 only.
    dd = np.zeros((1, 4, 4, 4), np.int8)
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.convolution_backward_data(dd, np.zeros((3, 3, 2, 4), np.int8)), "i8")
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.convolution_backward_data(dd.astype(np.float32), np.zeros((3, 3, 2, 4), np.float32),
                                                          weights_format="hwio"), "'hwio'")


def test_sizes_that_overflow():
    expect_error(deconv.TooLargeError, lambda: deconv.infer_shape(
        "GroupConvolutionBackpropData", [2**40, 2**30, 2**30, 2**30], [1, 2**30, 2**30, 3, 3]), "overflow")
    with pytest.raises(MemoryError):
        deconv.Plan("GroupConvolutionBackpropData", "f32", [1, 4, 2**31, 2**31], [1, 4, 2, 3, 3],
                    strides=[2**31, 2**31])


# ---------------------------------------------------------------- tensors

def test_negative_strides():
    x, w = _layer()
    out = _out()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x[:, :, ::-1], w, out=out),
                 "negative", "-4", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w[:, ::-1], out=out),
                 "negative", "strides[2]", out=out)
    big = _out()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=big[..., ::-1]),
                 "negative", out=big)


def test_overlapping_outputs():
    x, w = _layer()
    # A broadcast numpy array is read-only: refused as such.
    b = np.broadcast_to(np.full((1, 3, 6, 1), SENTINEL, np.float32), (1, 3, 6, 6))
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=b), "out", "read-only",
                 out=b)
    # Writable, but with a zero stride: the output's elements would overlap.
    base = np.full(64, SENTINEL, np.float32)
    z = np.lib.stride_tricks.as_strided(base, (1, 3, 6, 6), (0, 4, 4, 4))
    before = base.copy()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=z), "overlap")
    assert np.array_equal(base, before)
    # Nonzero strides that still overlap (rows of 6 elements 3 apart).
    o = np.lib.stride_tricks.as_strided(base, (1, 3, 6, 6), (4, 4 * 9, 4 * 3, 4))
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=o), "overlap")
    assert np.array_equal(base, before)
    t = torch.full((1, 3, 6, 1), SENTINEL).expand(1, 3, 6, 6)
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), out=t), "overlap")
    assert bool((t == SENTINEL).all())


def test_read_only_out():
    x, w = _layer()
    out = _out()
    out.flags.writeable = False
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=out), "out", "read-only",
                 out=out)


def test_strides_not_a_multiple_of_the_element():
    rec = np.zeros((1, 4, 4, 4), dtype=[("a", np.float32), ("b", np.int8)])
    x = rec["a"]  # 5-byte strides
    _, w = _layer()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w), "5 bytes")


@pytest.mark.parametrize("bad,name", [([[1.0]], "list"), (object(), "object"), (None, "NoneType"),
                                      ("abc", "str"), (3.0, "float")])
def test_objects_that_are_not_tensors(bad, name):
    x, w = _layer()
    out = _out()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(bad, w, out=out), "input", name,
                 out=out)
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, bad, out=out), "weight", name,
                 out=out)
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.group_convolution_backprop_data(x, bad, out=out), "filter", name, out=out)
    if bad is not None:  # (out=None asks for a new output)
        plan = deconv.Plan.conv_transpose([1, 4, 4, 4], [4, 3, 3, 3])
        expect_error(deconv.InvalidArgumentError, lambda: plan.run(x, w, out=bad), "out")


def test_meta_device_tensors():
    """A tensor on torch's 'meta' device (no memory): refused, naming the device."""
    x, w = _layer("torch")
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.conv_transpose2d(x.to("meta"), w.to("meta")), "meta")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w.to("meta")), "meta")
    out = torch.empty(1, 3, 6, 6, device="meta")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, out=out), "meta")


def test_cuda_request():
    x, w = _layer()
    if deconv.cuda_available():  # a machine with a GPU: the request is served
        plan = deconv.Plan.conv_transpose([1, 4, 4, 4], [4, 3, 3, 3], device="cuda")
        assert plan.device == "cuda"
        assert np.array_equal(plan.run(x, w), deconv.conv_transpose2d(x, w))
        return
    reason = deconv.cuda_unavailable_reason()
    assert reason
    out = _out()
    expect_error(deconv.UnsupportedError, lambda: deconv.conv_transpose2d(x, w, device="cuda", out=out), "CUDA",
                 reason, out=out)
    expect_error(deconv.UnsupportedError,
                 lambda: deconv.Plan.conv_transpose([1, 4, 4, 4], [4, 3, 3, 3], device="cuda"), "CUDA")
    # With allow_cpu_fallback the layer runs on the CPU and says why.
    plan = deconv.Plan.conv_transpose([1, 4, 4, 4], [4, 3, 3, 3], device="cuda", allow_cpu_fallback=True)
    assert plan.device == "cpu" and reason in plan.fallback_reason
    y = deconv.conv_transpose2d(x, w, device="cuda", allow_cpu_fallback=True)
    assert np.array_equal(y, deconv.conv_transpose2d(x, w))


# ---------------------------------------------------------------- bias

def test_bias_errors():
    xi, wi = _layer(dtype=np.int8)
    expect_error(deconv.UnsupportedError, lambda: deconv.conv_transpose2d(xi, wi, np.zeros(3, np.int8)), "i8")
    x, w = _layer()
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, np.zeros(4, np.float32)),
                 "[4]", "3 channels")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.conv_transpose2d(x, w, [1.0, 2.0, 3.0]), "bias",
                 "list")
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.conv_transpose2d(x[0], w, np.zeros((1, 3), np.float32)), "[1, 3]")


@pytest.mark.parametrize("case", ["integer", "wrong-shape", "not-a-tensor", "meta"])
def test_bias_errors_leave_out_untouched(case):
    """The bias is checked only after the kernel has run: a bad one must still be refused before
    out= is written, and with a deconv.Error."""
    if case == "integer":
        x, w = _layer(dtype=np.int8)
        out = np.full((1, 3, 6, 6), -99, np.int8)
        expect_error(deconv.UnsupportedError, lambda: deconv.conv_transpose2d(x, w, np.zeros(3, np.int8), out=out),
                     "i8", out=out)
        return
    x, w = _layer("torch")
    out = _out(framework="torch")
    bias, cls, name = {"wrong-shape": (torch.zeros(4), deconv.InvalidArgumentError, "[4]"),
                       "not-a-tensor": ("bias", deconv.InvalidArgumentError, "str"),
                       "meta": (torch.zeros(3, device="meta"), deconv.InvalidArgumentError, "meta")}[case]
    expect_error(cls, lambda: deconv.conv_transpose2d(x, w, bias, out=out), name, out=out)


# ---------------------------------------------------------------- plans

def test_plan_run_errors():
    x, w = _layer()
    plan = deconv.Plan.conv_transpose([1, 4, 4, 4], [4, 3, 3, 3], "f32")
    out = _out()
    expect_error(deconv.InvalidArgumentError, lambda: plan.run(x[:, :, :3], w, out=out), "[1, 4, 3, 4]", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: plan.run(x.astype(np.float64), w.astype(np.float64),
                                                               out=out), "f64", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: plan.run(x, w[:, :2], out=out), "filter", out=out)
    expect_error(deconv.InvalidArgumentError, lambda: plan.run(x, w, out=out[..., :5]), "[1, 3, 6, 5]", out=out)
    other = deconv.Plan.conv_transpose([1, 4, 4, 4], [4, 3, 3, 3], "f32")
    expect_error(deconv.InvalidArgumentError, lambda: plan.run(x, other.pack_filter(w), out=out), "another plan",
                 out=out)
    expect_error(deconv.InvalidArgumentError, lambda: plan.pack_filter(w.astype(np.float64)), "f64")
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.Plan.conv_transpose([1, 4, 4, 4], [4, 3, 3, 3], "f32", groups=3), "groups=3")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.Plan.conv_transpose([4, 4, 4], [4, 3, 3, 3]),
                 "[4, 3, 3, 3]", "1D")


# ---------------------------------------------------------------- the rest of the API

def test_other_functions(tmp_path):
    missing = str(tmp_path / "missing.json")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.load_schedules(missing), missing)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.load_schedules(str(bad)), str(bad), "JSON")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.set_cpu_threads(-1), "-1")
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.has_kernel("GroupConvolutionBackpropData", 2, "int16"), "'int16'")
    expect_error(deconv.InvalidArgumentError, lambda: deconv.built_dtypes("tpu"), "'tpu'")
    expect_error(deconv.InvalidArgumentError,
                 lambda: deconv.infer_shape("GroupConvolutionBackpropData", [1, 4, 4, 4], [1, 4, 3, 3, 3],
                                            strides=[0, 1]), "strides[0] is 0")
