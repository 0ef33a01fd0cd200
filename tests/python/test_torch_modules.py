"""deconv.torch: the torch.nn.ConvTranspose1d/2d/3d drop-ins and swap_conv_transpose.

Each deconv module is built with the torch.nn module's constructor arguments and state_dict.
Under torch.no_grad() (and inference_mode) it must run on deconv (deconv_last_reason == "")
and agree with torch's own module, both checked against torch's conv_transpose in float64 on
the same parameters with reference.float_bound (f32: 2 (n + 1) 2^-24 sum|x w| for any
summation order, plus one rounding for the bias; bf16: the same plus half an ulp on store and
a full ulp for the bias add). Where a gradient is needed the module falls back to torch,
saying why, or raises deconv.UnsupportedError with deconv_fallback = False. By default the
weight is packed on every call, so every update is seen; with deconv_constant_weights = True it
is packed once per weight version (in-place updates and load_state_dict repack; writes through
weight.data need deconv_repack()).
"""

import numpy as np
import pytest
import torch

import deconv
import deconv.torch as dt
import reference as R

NN = {1: torch.nn.ConvTranspose1d, 2: torch.nn.ConvTranspose2d, 3: torch.nn.ConvTranspose3d}
DT = {1: dt.ConvTranspose1d, 2: dt.ConvTranspose2d, 3: dt.ConvTranspose3d}

CONFIGS = [  # rank, in, out, kernel, stride, padding, output_padding, groups, dilation, bias
    (1, 4, 6, 3, 2, 1, 1, 1, 1, True),
    (1, 6, 6, 5, 3, 2, 0, 6, 1, False),
    (1, 4, 2, 2, 1, 0, 1, 2, 2, True),
    (2, 4, 6, 3, 2, 1, 1, 2, 1, True),
    (2, 3, 5, (2, 3), (2, 1), (0, 1), (1, 0), 1, 1, False),
    (2, 8, 8, 3, 1, 1, 0, 8, 2, True),
    (2, 4, 4, 4, 2, 1, 0, 1, (1, 2), False),
    (3, 4, 4, 3, 2, 1, 1, 2, 1, True),
    (3, 2, 3, (1, 2, 3), (2, 2, 1), 0, 0, 1, 1, False),
]


def _pair(rank, seed, cfg, dtype=torch.float32):
    rank, cin, cout, k, s, p, op, g, d, bias = cfg
    torch.manual_seed(seed)
    ref = NN[rank](cin, cout, k, stride=s, padding=p, output_padding=op, groups=g, dilation=d, bias=bias)
    mod = DT[rank](cin, cout, k, stride=s, padding=p, output_padding=op, groups=g, dilation=d, bias=bias)
    mod.load_state_dict(ref.state_dict())
    return ref.to(dtype), mod.to(dtype)


def _input(cfg, batch, spatial, dtype=torch.float32, seed=0):
    rank, cin = cfg[0], cfg[1]
    g = torch.Generator().manual_seed(seed)
    shape = ([batch] if batch else []) + [cin] + [spatial] * rank
    return torch.randn(shape, generator=g).to(dtype)


def _check(y, module, x, output_size=None, what=""):
    """`y` against torch's conv_transpose in float64 with `module`'s parameters."""
    rank = len(module.kernel_size)
    op = module._output_padding(x if x.dim() == rank + 2 else x[None], output_size, module.stride, module.padding,
                                module.kernel_size, rank, module.dilation)
    ref, abs_sum = R.conv_transpose_ref(x, module.weight, module.stride, module.padding, op, module.groups,
                                        module.dilation)
    n_terms = module.in_channels // module.groups * int(np.prod(module.kernel_size))
    bias = None if module.bias is None else R.to_f64(module.bias)
    R.check_close(y, ref, abs_sum, n_terms, R.dtype_of(y), bias, channel_axis=0 if x.dim() == rank + 1 else 1,
                  what=what)


@pytest.mark.parametrize("cfg", CONFIGS, ids=[f"r{c[0]}-g{c[7]}-{'bias' if c[9] else 'nobias'}-{i}"
                                              for i, c in enumerate(CONFIGS)])
def test_module_matches_torch(cfg):
    ref, mod = _pair(cfg[0], 11, cfg)
    for batch in (2, None):  # None: unbatched [C, X..]
        x = _input(cfg, batch, 5)
        with torch.no_grad():
            want = ref(x)
            got = mod(x)
        assert mod.deconv_last_reason == "", mod.deconv_last_reason
        assert got.shape == want.shape and got.dtype == torch.float32
        _check(got, mod, x, what=f"deconv, batch {batch}")
        _check(want, ref, x, what=f"torch, batch {batch}")
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_output_size_argument(rank):
    cfg = (rank, 4, 4, 3, 3, 1, 0, 2, 1, True)
    ref, mod = _pair(rank, 12, cfg)
    x = _input(cfg, 1, 4)
    natural = [(4 - 1) * 3 - 2 + 3] * rank
    for extra in (0, 1, 2):  # stride 3: output_padding 0..2 reach these sizes
        size = [n + extra for n in natural]
        with torch.no_grad():
            want = ref(x, output_size=size)
            got = mod(x, output_size=size)
        assert mod.deconv_last_reason == ""
        assert list(got.shape[2:]) == size == list(want.shape[2:])
        _check(got, mod, x, output_size=size)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    with torch.no_grad(), pytest.raises(ValueError):
        mod(x, output_size=[n + 3 for n in natural])  # beyond what output_padding reaches (torch's error)


def test_inference_mode_and_bf16():
    cfg = CONFIGS[3]
    ref, mod = _pair(2, 13, cfg, torch.bfloat16)
    x = _input(cfg, 2, 6, torch.bfloat16)
    with torch.inference_mode():
        y = mod(x)
    assert mod.deconv_last_reason == "" and y.dtype == torch.bfloat16
    _check(y, mod, x, what="bf16")


def test_swap_conv_transpose():
    torch.manual_seed(14)
    model = torch.nn.Sequential(
        torch.nn.ConvTranspose1d(4, 4, 3, stride=2),
        torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Sequential(torch.nn.Identity())),
    )
    model2 = torch.nn.ModuleDict({
        "up": torch.nn.Sequential(torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
                                  torch.nn.ReLU(), torch.nn.ConvTranspose2d(6, 2, 2, stride=2, groups=2)),
        "vol": torch.nn.ConvTranspose3d(2, 2, 2, stride=2, bias=False),
        "conv": torch.nn.Conv2d(2, 2, 1),
    })
    x1 = torch.randn(2, 4, 7)
    x2 = torch.randn(1, 4, 5, 5)
    x3 = torch.randn(1, 2, 3, 3, 3)
    with torch.no_grad():
        want = (model(x1), model2["up"](x2), model2["vol"](x3))
    params = [p for p in list(model.parameters()) + list(model2.parameters())]

    m, count = dt.swap_conv_transpose(model)
    assert m is model and count == 1
    m2, count2 = dt.swap_conv_transpose(model2)
    assert m2 is model2 and count2 == 3
    assert type(model[0]) is dt.ConvTranspose1d
    assert type(model2["up"][0]) is dt.ConvTranspose2d and type(model2["up"][2]) is dt.ConvTranspose2d
    assert type(model2["vol"]) is dt.ConvTranspose3d and type(model2["conv"]) is torch.nn.Conv2d
    assert all(a is b for a, b in zip(params, list(model.parameters()) + list(model2.parameters()))), \
        "the swapped modules must share the parameters"
    with torch.no_grad():
        got = (model(x1), model2["up"](x2), model2["vol"](x3))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    assert model2["up"][2].deconv_last_reason == ""
    # A bare module is swapped itself; a model without any is left alone.
    bare = torch.nn.ConvTranspose2d(2, 2, 3)
    new, n = dt.swap_conv_transpose(bare)
    assert n == 1 and type(new) is dt.ConvTranspose2d and new.weight is bare.weight
    plain = torch.nn.Sequential(torch.nn.Linear(2, 2))
    assert dt.swap_conv_transpose(plain) == (plain, 0)
    # Swapping twice changes nothing more.
    assert dt.swap_conv_transpose(model2)[1] == 0


def test_weight_updates_are_picked_up():
    cfg = CONFIGS[3]
    ref, mod = _pair(2, 15, cfg)
    x = _input(cfg, 2, 5)
    with torch.no_grad():
        first = mod(x)
        mod.weight.add_(0.5)  # in place: same storage, new version
        ref.weight.add_(0.5)
        second = mod(x)
        torch.testing.assert_close(second, ref(x), rtol=1e-4, atol=1e-5)
        assert not torch.allclose(first, second)
        _check(second, mod, x, what="after weight.add_")
        # load_state_dict copies in place as well.
        torch.manual_seed(16)
        other = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        mod.load_state_dict(other.state_dict())
        torch.testing.assert_close(mod(x), other(x), rtol=1e-4, atol=1e-5)
        # A new Parameter object (same shape) is seen as well.
        mod.weight = torch.nn.Parameter(torch.randn_like(mod.weight))
        ref.weight = torch.nn.Parameter(mod.weight.detach().clone())
        ref.bias = torch.nn.Parameter(mod.bias.detach().clone())
        torch.testing.assert_close(mod(x), ref(x), rtol=1e-4, atol=1e-5)
        # Bias updates, added after the kernel, too.
        mod.bias.add_(1.0)
        ref.bias.add_(1.0)
        torch.testing.assert_close(mod(x), ref(x), rtol=1e-4, atol=1e-5)
    assert mod.deconv_last_reason == ""


def test_weight_update_through_data_is_picked_up():
    """`weight.data.<op>_()` (common in initialisation and weight-loading code) writes the same
    storage without bumping the Parameter's version counter: a cache keyed on (data_ptr,
    _version) keeps the old packed weight, and the module returns stale results."""
    cfg = CONFIGS[3]
    ref, mod = _pair(2, 19, cfg)
    x = _input(cfg, 2, 5)
    with torch.no_grad():
        mod(x)
        mod.weight.data.mul_(2.0)
        ref.weight.data.mul_(2.0)
        got, want = mod(x), ref(x)
    same = torch.allclose(got, want, rtol=1e-4, atol=1e-5)
    assert same, \
        "after weight.data.mul_(2) the deconv module still computes with the old weight " \
        f"(max |diff| {float((got - want).abs().max()):.3g})"


def test_constant_weights_pack_once_per_version():
    cfg = CONFIGS[3]
    ref, mod = _pair(2, 23, cfg)
    mod.deconv_constant_weights = True
    x = _input(cfg, 2, 5)
    with torch.no_grad():
        torch.testing.assert_close(mod(x), ref(x), rtol=1e-4, atol=1e-5)
        assert len(mod._deconv_state()["packed"]) == 1
        mod(x)
        assert len(mod._deconv_state()["packed"]) == 1  # reused, not packed again
        mod.weight.add_(0.25)  # a new version: repacked
        ref.weight.add_(0.25)
        torch.testing.assert_close(mod(x), ref(x), rtol=1e-4, atol=1e-5)
        mod.weight.data.mul_(2.0)  # no new version: the packed weight is stale until deconv_repack()
        ref.weight.data.mul_(2.0)
        assert not torch.allclose(mod(x), ref(x), rtol=1e-4, atol=1e-5)
        mod.deconv_repack()
        torch.testing.assert_close(mod(x), ref(x), rtol=1e-4, atol=1e-5)
    model, count = dt.swap_conv_transpose(torch.nn.Sequential(torch.nn.ConvTranspose2d(2, 2, 3)),
                                          constant_weights=True)
    assert count == 1 and model[0].deconv_constant_weights


def test_copies_and_pickles_after_running():
    """A module that has run (plans and packed weights cached) deep-copies and pickles like
    torch's, and its copy computes the same; weights made under inference_mode (no version
    counter) run with constant weights."""
    import copy
    import io
    cfg = CONFIGS[3]
    ref, mod = _pair(2, 29, cfg)
    mod.deconv_constant_weights = True
    x = _input(cfg, 2, 5)
    with torch.no_grad():
        y = mod(x)
        twin = copy.deepcopy(mod)
        torch.testing.assert_close(twin(x), y, rtol=0, atol=0)
    buffer = io.BytesIO()
    torch.save(mod, buffer)
    with torch.inference_mode():
        made = dt.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        made.load_state_dict(ref.state_dict())
        made.deconv_constant_weights = True
        torch.testing.assert_close(made(x), ref(x), rtol=1e-4, atol=1e-5)
        assert made.deconv_last_reason == ""


def test_autograd_falls_back_to_torch():
    cfg = CONFIGS[0]
    ref, mod = _pair(1, 17, cfg)
    x = _input(cfg, 2, 6).requires_grad_()
    y = mod(x)  # grad enabled, parameters and input require grad
    assert mod.deconv_last_reason and "autograd" in mod.deconv_last_reason
    assert y.requires_grad
    y.sum().backward()
    assert x.grad is not None and mod.weight.grad is not None
    torch.testing.assert_close(y, ref(x))
    # Only the parameters require grad: still a graph to build.
    x2 = _input(cfg, 2, 6)
    mod(x2)
    assert mod.deconv_last_reason
    # Nothing requires grad: deconv serves the call even with grad mode on.
    for p in mod.parameters():
        p.requires_grad_(False)
    y3 = mod(x2)
    assert mod.deconv_last_reason == "" and not y3.requires_grad


def test_fallback_disabled_raises():
    cfg = CONFIGS[3]
    _, mod = _pair(2, 18, cfg)
    mod.deconv_fallback = False
    x = _input(cfg, 1, 4)
    with pytest.raises(deconv.UnsupportedError, match="autograd"):
        mod(x)
    with pytest.raises(NotImplementedError):  # also a NotImplementedError
        mod(x.requires_grad_())
    with torch.no_grad():
        mod(x.detach())  # served: no error
    assert mod.deconv_last_reason == ""


def test_padding_mode_other_than_zeros():
    mod = dt.ConvTranspose2d(2, 2, 3)
    mod.padding_mode = "reflect"
    with torch.no_grad(), pytest.raises(ValueError, match="zeros"):
        mod(torch.randn(1, 2, 4, 4))
