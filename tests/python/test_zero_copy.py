"""Tensors cross into deconv without copies, and results land where the caller says.

Inputs: deconv._deconv._view_info(t) reports the address, dtype, shape and element strides that
the kernels read. For every kind of view the Python side can hand over (contiguous, strided
slices with a storage offset, transposes, torch channels_last, broadcast zero strides, bf16,
tensors that require grad, numpy C/Fortran/sliced and read-only arrays, which numpy's DLPack
refuses and the buffer protocol serves) the address must be the framework's own data pointer and
the strides its own: anything else would be a copy.

Outputs: out= is written in place and returned (the object itself), for torch and numpy, dense
and strided; Plan.run(..., out=) and the spec functions likewise. The values are those of the
call without out= (same kernels, same data: bitwise equal).
"""

import numpy as np
import pytest
import torch

import deconv
from deconv._deconv import _view_info


def _addr(t):
    return t.data_ptr() if isinstance(t, torch.Tensor) else t.__array_interface__["data"][0]


def _strides(t):
    """Element strides; axes of extent 1 count as 1 (DLPack producers normalize those, and no
    element is ever reached through them)."""
    strides = t.stride() if isinstance(t, torch.Tensor) else [s // t.itemsize for s in t.strides]
    return [1 if n == 1 else s for n, s in zip(t.shape, strides)]


def _seen_strides(info):
    return [1 if n == 1 else s for n, s in zip(info["shape"], info["strides"])]


def _torch_views():
    g = torch.Generator().manual_seed(1)
    base = torch.randn(2, 6, 7, 8, generator=g)
    vol = torch.randn(2, 3, 4, 5, 6, generator=g)
    return {
        "contiguous": base,
        "slice_offset": base[1:, 2:5, 1::2, 3:],
        "transposed": base.transpose(2, 3),
        "permuted": base.permute(3, 2, 1, 0),
        "channels_last": base.contiguous(memory_format=torch.channels_last),
        "channels_last_3d": vol.contiguous(memory_format=torch.channels_last_3d),
        "expanded": torch.randn(1, 6, 1, 8, generator=g).expand(2, 6, 7, 8),
        "bf16_slice": base.to(torch.bfloat16)[:, ::2],
        "f16": base.half(),
        "i8": torch.randint(-5, 5, (2, 3, 4), dtype=torch.int8, generator=g),
        "u8_slice": torch.randint(0, 5, (2, 3, 9), dtype=torch.uint8, generator=g)[..., ::3],
        "i32": torch.randint(-5, 5, (2, 3, 4), dtype=torch.int32, generator=g),
        "f64": base.double(),
        "requires_grad": base.clone().requires_grad_(),
    }


def _numpy_views():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 6, 7, 8)).astype(np.float32)
    ro = a.copy()
    ro.flags.writeable = False
    ro_slice = ro[:, 1:, ::2]
    return {
        "contiguous": a,
        "slice_offset": a[1:, 2:5, 1::2, 3:],
        "fortran": np.asfortranarray(a),
        "transposed": a.transpose(0, 1, 3, 2),
        "read_only": ro,
        "read_only_slice": ro_slice,
        "broadcast": np.broadcast_to(a[:, :, :1], a.shape),
        "f16": a.astype(np.float16)[:, ::3],
        "i8": rng.integers(-5, 5, (2, 3, 4)).astype(np.int8),
        "u8": rng.integers(0, 5, (2, 3, 4)).astype(np.uint8),
        "i32": rng.integers(-5, 5, (2, 3, 4)).astype(np.int32)[:, ::-1][:, ::-1],  # a positive view
        "f64": a.astype(np.float64),
    }


_DTYPE = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
          torch.int8: "i8", torch.uint8: "u8", torch.int32: "i32"}


@pytest.mark.parametrize("name", list(_torch_views()))
def test_torch_views_are_read_in_place(name):
    t = _torch_views()[name]
    info = _view_info(t.detach() if t.requires_grad else t)
    assert info["data"] == t.data_ptr()
    assert info["shape"] == list(t.shape)
    assert _seen_strides(info) == _strides(t)
    assert info["dtype"] == _DTYPE[t.dtype]
    assert info["device"] == "cpu"


@pytest.mark.parametrize("name", list(_numpy_views()))
def test_numpy_views_are_read_in_place(name):
    a = _numpy_views()[name]
    info = _view_info(a)
    assert info["data"] == _addr(a)
    assert info["shape"] == list(a.shape)
    assert _seen_strides(info) == _strides(a)
    assert info["dtype"] == {"float32": "f32", "float16": "f16", "float64": "f64", "int8": "i8", "uint8": "u8",
                             "int32": "i32"}[a.dtype.name]


def test_writable_views_of_outputs():
    o = torch.empty(2, 3, 5, 5).contiguous(memory_format=torch.channels_last)
    info = _view_info(o, writable=True)
    assert info["data"] == o.data_ptr() and _seen_strides(info) == _strides(o)
    a = np.empty((4, 3, 5), np.float32)[::2]
    info = _view_info(a, writable=True)
    assert info["data"] == _addr(a) and _seen_strides(info) == _strides(a)


def test_requires_grad_input_runs_on_its_own_memory():
    x = torch.randn(1, 4, 5, 5, requires_grad=True)
    w = torch.randn(4, 2, 3, 3, requires_grad=True)
    y = deconv.conv_transpose2d(x, w, stride=2)
    assert not y.requires_grad
    with torch.no_grad():
        assert torch.allclose(y, torch.nn.functional.conv_transpose2d(x, w, stride=2), atol=1e-5)


def test_lazy_negative_view_is_not_read_as_its_memory():
    """A torch tensor with the negative bit set (torch._neg_view, as autograd produces) holds -x
    while its memory holds x: reading the memory in place must honour the bit, or refuse it."""
    g = torch.Generator().manual_seed(8)
    x = torch.randn(1, 2, 3, 3, generator=g)
    w = torch.randn(2, 2, 2, 2, generator=g)
    neg = torch._neg_view(x)
    assert neg.is_neg() and torch.equal(neg, -x)
    try:
        y = deconv.conv_transpose2d(neg, w)
    except deconv.Error:
        return  # refused: acceptable
    want = deconv.conv_transpose2d(-x, w)
    same = torch.equal(y, want)
    assert same, "deconv read the memory of a negative view (x) instead of its values (-x): " \
             f"max |diff| {float((y - want).abs().max()):.3g}"


# ---------------------------------------------------------------- outputs

def _layer(framework, unbatched=False):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 4, 5, 6, generator=g)
    w = torch.randn(4, 3, 3, 2, generator=g)
    if unbatched:
        x = x[0]
    if framework == "numpy":
        return x.numpy(), w.numpy()
    return x, w


def _outs(framework, shape):
    """out= tensors of `shape`: dense and strided ones."""
    if framework == "numpy":
        big = np.full([n * 2 for n in shape], -1.0, np.float32)
        return {"dense": np.full(shape, -1.0, np.float32),
                "strided": big[tuple(slice(0, None, 2) for _ in shape)],
                "fortran": np.asfortranarray(np.full(shape, -1.0, np.float32))}
    outs = {"dense": torch.full(shape, -1.0),
            "strided": torch.full([n * 2 for n in shape], -1.0)[tuple(slice(0, None, 2) for _ in shape)],
            "transposed": torch.full(shape[:-2] + shape[-2:][::-1], -1.0).transpose(-1, -2)}
    if len(shape) == 4:
        outs["channels_last"] = torch.full(shape, -1.0).contiguous(memory_format=torch.channels_last)
    return outs


@pytest.mark.parametrize("framework", ["torch", "numpy"])
@pytest.mark.parametrize("unbatched", [False, True], ids=["batched", "unbatched"])
def test_out_is_written_in_place_and_returned(framework, unbatched):
    x, w = _layer(framework, unbatched)
    expected = deconv.conv_transpose2d(x, w, stride=2, padding=1)
    assert isinstance(expected, torch.Tensor if framework == "torch" else np.ndarray)
    other_objects = []
    for kind, out in _outs(framework, list(expected.shape)).items():
        address = _addr(out)
        y = deconv.conv_transpose2d(x, w, stride=2, padding=1, out=out)
        assert _addr(out) == address and _addr(y) == address
        assert np.array_equal(np.asarray(out), np.asarray(expected)), f"{kind}: values in out="
        if y is not out:
            other_objects.append(kind)
    if other_objects:  # (pytest.fail: an `assert y is out` would print both tensors)
        pytest.fail(f"conv_transpose2d(..., out=out) on {'unbatched' if unbatched else 'batched'} {framework} "
                    f"input returned a view of out's memory, not out itself, for out= {other_objects}")


def test_plan_run_returns_out():
    x, w = _layer("torch")
    plan = deconv.Plan.conv_transpose(list(x.shape), list(w.shape), torch.float32, stride=2, padding=1)
    expected = plan.run(x, w)
    assert list(expected.shape) == plan.output_shape
    packed = plan.pack_filter(w)
    for kind, out in _outs("torch", plan.output_shape).items():
        assert plan.run(x, w, out=out) is out
        assert torch.equal(out, expected), kind
        out.fill_(-1)
        assert plan.run(x, packed, out=out) is out
        assert torch.equal(out, expected), kind
    xn, wn = x.numpy(), w.numpy()
    on = np.empty(plan.output_shape, np.float32)
    assert plan.run(xn, wn, out=on) is on
    assert np.array_equal(on, expected.numpy())
    y = plan.run(xn, plan.pack_filter(wn))
    assert isinstance(y, np.ndarray) and np.array_equal(y, on)


def test_spec_functions_return_out():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 6, 5, 5)).astype(np.float32)
    f = rng.standard_normal((2, 3, 2, 3, 3)).astype(np.float32)
    y = deconv.group_convolution_backprop_data(x, f, strides=[2, 2])
    out = np.empty_like(y)
    assert deconv.group_convolution_backprop_data(x, f, strides=[2, 2], out=out) is out
    assert np.array_equal(out, y)
    # NXC, torch channels-last memory handed over as an [N, X.., C] view.
    xt = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)
    nxc = xt.permute(0, 2, 3, 1)
    assert nxc.is_contiguous() and _view_info(nxc)["data"] == xt.data_ptr()
    out_nxc = torch.empty(1, y.shape[2], y.shape[3], 4)
    r = deconv.group_convolution_backprop_data(nxc, torch.from_numpy(f), strides=[2, 2], data_format="nxc",
                                               out=out_nxc)
    assert r is out_nxc
    assert np.array_equal(out_nxc.permute(0, 3, 1, 2).numpy(), y)
    # The forward op and oneDNN's.
    gf = rng.standard_normal((2, 4, 3, 3, 3)).astype(np.float32)
    y = deconv.group_convolution(x, gf)
    out = np.empty_like(y)
    assert deconv.group_convolution(x, gf, out=out) is out and np.array_equal(out, y)
    w = rng.standard_normal((3, 3, 2, 6)).astype(np.float32)  # XIO [K.., IC/G, OC]
    dd = np.ascontiguousarray(x.transpose(0, 2, 3, 1))  # NXC diff_dst, OC = 6
    y = deconv.convolution_backward_data(dd, w, groups=1)
    out = np.empty_like(y)
    assert deconv.convolution_backward_data(dd, w, out=out) is out and np.array_equal(out, y)


@pytest.mark.parametrize("unbatched", [False, True], ids=["batched", "unbatched"])
def test_buffer_protocol_objects(unbatched):
    """memoryview (the buffer protocol without DLPack) as input, weight and out=: read in place,
    results as numpy's; PyTorch's unbatched form [C, X..] is accepted for every input kind."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    if unbatched:
        x = x[0]
    expected = deconv.conv_transpose2d(x, w)
    mv = memoryview(x)
    assert _view_info(mv)["data"] == _addr(x)
    o = np.zeros(expected.shape, np.float32)
    try:
        y = deconv.conv_transpose2d(mv, memoryview(w))
        deconv.conv_transpose2d(x, w, out=memoryview(o))
    except TypeError as e:  # not a deconv.Error: the Python layer indexed the object itself
        pytest.fail(f"{'unbatched' if unbatched else 'batched'} memoryview input/out: TypeError({e})")
    assert isinstance(y, np.ndarray) and np.array_equal(y, expected)
    assert np.array_equal(o, expected)


def test_mixed_frameworks_follow_the_input():
    x, w = _layer("torch")
    y = deconv.conv_transpose2d(x.numpy(), w)
    assert isinstance(y, np.ndarray)
    z = deconv.conv_transpose2d(x, w.numpy())
    assert isinstance(z, torch.Tensor)
    assert np.array_equal(y, z.numpy())
