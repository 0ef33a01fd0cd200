#!/usr/bin/env python3
"""End-to-end tests of the `deconv` command line.

Each test case runs the built binary in a fresh temporary directory and checks exit codes,
stdout, the one-line `error:` messages and the files it leaves. Numerical results are compared
with an independent numpy reference (a scatter loop over kernel taps, written from the
GroupConvolutionBackpropData-1 text, sharing nothing with the library's phase decomposition).

    cli_test.py --list                      names of the cases (one per line)
    cli_test.py --deconv BIN --data DIR CASE  run one case: exit 0 pass, 1 fail, 77 skip
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import traceback

CASES = {}
SKIP = 77


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Skip(Exception):
    pass


class Ctx:
    def __init__(self, deconv, data, suite, work):
        self.deconv = deconv
        self.data = data
        self.suite = suite
        self.work = work

    def path(self, name):
        return os.path.join(self.work, name)

    def datafile(self, name):
        return os.path.join(self.data, name)

    def run(self, *args, rc=0, timeout=600):
        p = subprocess.run([self.deconv] + [str(a) for a in args], cwd=self.work,
                           capture_output=True, text=True, timeout=timeout)
        if rc is not None and p.returncode != rc:
            raise AssertionError(
                f"deconv {' '.join(map(str, args))}: exit {p.returncode}, expected {rc}\n"
                f"stdout: {p.stdout}\nstderr: {p.stderr}")
        return p

    def run_kernel(self, *args):
        """Runs a command that needs kernels; raises Skip when this build lacks them."""
        p = self.run(*args, rc=None)
        if p.returncode != 0 and "in this build" in p.stderr:
            raise Skip(p.stderr.strip())
        if p.returncode != 0:
            raise AssertionError(f"deconv {' '.join(map(str, args))}: exit {p.returncode}\n"
                                 f"stdout: {p.stdout}\nstderr: {p.stderr}")
        return p

    def expect_error(self, args, rc, needles, absent=()):
        """The command fails with `rc`, one `error:` line naming every needle, and leaves none
        of the `absent` files (nor temporary files) behind."""
        p = self.run(*args, rc=rc)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        errors = [l for l in lines if l.startswith("error:")]
        others = [l for l in lines if not l.startswith("error:") and not l.startswith("note:")]
        if len(errors) != 1 or others:
            raise AssertionError(f"deconv {' '.join(map(str, args))}: expected one 'error:' line "
                                 f"on stderr, got:\n{p.stderr}")
        for n in needles:
            if n.lower() not in errors[0].lower():
                raise AssertionError(f"deconv {' '.join(map(str, args))}: error line does not name "
                                     f"'{n}':\n{errors[0]}")
        for f in absent:
            if os.path.exists(self.path(f)):
                raise AssertionError(f"deconv {' '.join(map(str, args))}: left {f} behind")
        leftovers = [f for f in os.listdir(self.work) if ".tmp-" in f]
        if leftovers:
            raise AssertionError(f"temporary files left behind: {leftovers}")
        if "Traceback" in p.stderr or "terminate" in p.stderr:
            raise AssertionError(f"crash output: {p.stderr}")
        return errors[0]


# ------------------------------------------------------------------------------------------
# numpy reference

def np_():
    import numpy
    return numpy


def reference(x, w, grouped, strides, pads_begin, dilations, out_spatial, acc):
    """Scatter form of the spec: y[n, g*Co+co, i*s - pb + k*d] += x[n, g*Ci+ci, i] * w[g, ci, co, k]."""
    np = np_()
    if not grouped:
        w = w[None]
    G, Ci, Co = w.shape[:3]
    K = w.shape[3:]
    D = len(K)
    N = x.shape[0]
    X = x.shape[2:]
    x = x.astype(acc)
    w = w.astype(acc)
    y = np.zeros((N, G * Co) + tuple(out_spatial), dtype=acc)
    for g in range(G):
        xg = x[:, g * Ci:(g + 1) * Ci]
        for k in np.ndindex(*K):
            dst, src = [], []
            for a in range(D):
                pos = np.arange(X[a]) * strides[a] - pads_begin[a] + k[a] * dilations[a]
                ok = (pos >= 0) & (pos < out_spatial[a])
                dst.append(pos[ok])
                src.append(np.nonzero(ok)[0])
            if any(len(v) == 0 for v in dst):
                continue
            xs = xg[(slice(None), slice(None)) + np.ix_(*src)]
            contrib = np.tensordot(xs, w[(g, slice(None), slice(None)) + k], axes=([1], [0]))
            contrib = np.moveaxis(contrib, -1, 1)
            y[(slice(None), slice(g * Co, (g + 1) * Co)) + np.ix_(*dst)] += contrib
    return y


def out_size(X, K, s, pb, pe, d, op):
    return [s[i] * (X[i] - 1) + (K[i] - 1) * d[i] + 1 - pb[i] - pe[i] + op[i] for i in range(len(X))]


def bf16_round(a):
    np = np_()
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def load(path):
    np = np_()
    return np.load(path, allow_pickle=False)


def check_close(got, want, atol, rtol, what):
    np = np_()
    if got.shape != want.shape:
        raise AssertionError(f"{what}: shape {got.shape}, expected {want.shape}")
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    lim = atol + rtol * np.abs(want.astype(np.float64))
    bad = diff > lim
    if bad.any():
        i = np.unravel_index(np.argmax(diff - lim), diff.shape)
        raise AssertionError(f"{what}: {int(bad.sum())} elements differ; worst at {i}: got "
                             f"{got[i]}, expected {want[i]}")


def attr_args(s, pb, pe, d, op):
    j = lambda v: ",".join(map(str, v))
    return ["--strides", j(s), "--pads-begin", j(pb), "--pads-end", j(pe), "--dilations", j(d),
            "--output-padding", j(op)]


def save(ctx, name, a):
    np_().save(ctx.path(name), a)
    return name


# A grouped layer per rank with every attribute away from its default.
LAYERS = {
    1: dict(x=(2, 6, 9), w=(3, 2, 4, 3), s=[3], pb=[1], pe=[2], d=[2], op=[1]),
    2: dict(x=(2, 6, 5, 7), w=(3, 2, 4, 3, 2), s=[2, 3], pb=[1, 0], pe=[0, 1], d=[1, 2], op=[1, 0]),
    3: dict(x=(1, 4, 4, 3, 5), w=(2, 2, 3, 2, 3, 2), s=[2, 1, 2], pb=[0, 1, 1], pe=[1, 0, 0],
            d=[1, 2, 1], op=[1, 0, 0]),
}

DTYPES = {
    # name: numpy dtype of the files, compute flag, accumulator, tolerance (atol factor, rtol)
    "f32": ("float32", None),
    "f16": ("float16", None),
    "f64": ("float64", None),
    "i8": ("int8", None),
    "u8": ("uint8", None),
    "i32": ("int32", None),
    "bf16": ("float32", "bf16"),
}


def random_inputs(dtype, xshape, wshape, seed):
    np = np_()
    rng = np.random.default_rng(seed)
    if dtype in ("f32", "f16", "f64", "bf16"):
        npt = DTYPES[dtype][0]
        return (rng.standard_normal(xshape).astype(npt), rng.standard_normal(wshape).astype(npt))
    if dtype == "i8":  # large enough to saturate some outputs
        return (rng.integers(-40, 41, xshape).astype(np.int8), rng.integers(-40, 41, wshape).astype(np.int8))
    if dtype == "u8":
        return (rng.integers(0, 12, xshape).astype(np.uint8), rng.integers(0, 12, wshape).astype(np.uint8))
    return (rng.integers(-1000, 1001, xshape).astype(np.int32), rng.integers(-1000, 1001, wshape).astype(np.int32))


def expected_output(dtype, x, w, grouped, s, pb, d, out_sp):
    """The reference in float64/int64, then stored as the library stores `dtype`."""
    np = np_()
    if dtype in ("i8", "u8", "i32"):
        y = reference(x, w, grouped, s, pb, d, out_sp, np.int64)
        info = np.iinfo(DTYPES[dtype][0])
        return np.clip(y, info.min, info.max).astype(DTYPES[dtype][0])
    if dtype == "bf16":
        y = reference(bf16_round(x), bf16_round(w), grouped, s, pb, d, out_sp, np.float64)
        return bf16_round(y.astype(np.float32))
    y = reference(x, w, grouped, s, pb, d, out_sp, np.float64)
    return y.astype(DTYPES[dtype][0])


def tolerance(dtype, y_ref):
    np = np_()
    scale = float(np.max(np.abs(y_ref.astype(np.float64)))) if y_ref.size else 1.0
    return {
        "f32": (1e-5 * scale, 1e-5),
        "f64": (1e-12 * scale, 1e-12),
        "f16": (1e-3 * scale, 2.0 ** -10),
        "bf16": (1e-3 * scale, 2.0 ** -7),
        "i8": (0, 0), "u8": (0, 0), "i32": (0, 0),
    }[dtype]


def roundtrip(ctx, dtype, rank, layout="ncx", grouped=True, seed=0):
    np = np_()
    L = LAYERS[rank]
    wshape = L["w"] if grouped else L["w"][1:]
    xshape = L["x"] if grouped else (L["x"][0], L["w"][1]) + L["x"][2:]
    x, w = random_inputs(dtype, xshape, wshape, seed + rank)
    K = wshape[3:] if grouped else wshape[2:]
    out_sp = out_size(xshape[2:], K, L["s"], L["pb"], L["pe"], L["d"], L["op"])
    xfile = x if layout == "ncx" else np.moveaxis(x, 1, -1)
    save(ctx, "x.npy", np.ascontiguousarray(xfile))
    save(ctx, "w.npy", w)
    args = ["run", "--input", "x.npy", "--filter", "w.npy", "--output", "y.npy", "--layout", layout]
    args += attr_args(L["s"], L["pb"], L["pe"], L["d"], L["op"])
    if DTYPES[dtype][1]:
        args += ["--dtype", DTYPES[dtype][1]]
    ctx.run_kernel(*args)
    y = load(ctx.path("y.npy"))
    if y.dtype != np.dtype(DTYPES[dtype][0]):
        raise AssertionError(f"Y has dtype {y.dtype}, expected {DTYPES[dtype][0]} (X's)")
    if layout == "nxc":
        y = np.moveaxis(y, -1, 1)
    want = expected_output(dtype, x, w, grouped, L["s"], L["pb"], L["d"], out_sp)
    if dtype == "bf16" and (y.view(np.uint32) & 0xFFFF).any():
        raise AssertionError("bf16 output holds values that are not bf16")
    atol, rtol = tolerance(dtype, want)
    check_close(y, want, atol, rtol, f"{dtype} rank {rank} {layout}")


# ------------------------------------------------------------------------------------------
# help and version

@case
def help_and_version(ctx):
    p = ctx.run("--help")
    for word in ("run", "infer-shape", "bench", "Exit codes"):
        assert word in p.stdout, f"--help lacks {word}"
    for cmd, words in (("run", ["--layout", "bf16", "channels-last kernels come later", "--random"]),
                       ("infer-shape", ["--desc", "dilation from 0", "--verbose"]),
                       ("bench", ["--suite", "--include-scale", "--threads", "--json", "oneDNN"])):
        p = ctx.run(cmd, "--help")
        for w in words:
            assert w in p.stdout, f"deconv {cmd} --help lacks '{w}'"
    p = ctx.run("--version")
    first = p.stdout.strip().split()
    assert first[0] == "deconv" and first[1].count(".") == 2, p.stdout


@case
def usage_errors(ctx):
    ctx.expect_error([], 1, ["command"])
    ctx.expect_error(["frobnicate"], 1, ["frobnicate"])
    ctx.expect_error(["run", "--bogus-flag"], 1, ["--bogus-flag"])
    ctx.expect_error(["bench", "--repeats", "many"], 1, ["many"])
    ctx.expect_error(["infer-shape"], 1, ["--input-shape"])


# ------------------------------------------------------------------------------------------
# infer-shape: the spec's IR examples, flags, descriptors

@case
def infer_shape_spec_examples(ctx):
    for f, want in (("gcbd_2d.xml", "1,8,447,447"), ("cbd_2d.xml", "1,10,447,447"),
                    ("gcbd_3d.xml", "1,8,447,447,447")):
        p = ctx.run("infer-shape", "--layer", ctx.datafile(f))
        assert p.stdout.strip() == want, f"{f}: {p.stdout!r}, expected {want}"


@case
def infer_shape_flags(ctx):
    common = ["--strides", "2,2", "--pads-begin", "1,1", "--pads-end", "1,1"]
    p = ctx.run("infer-shape", "--input-shape", "1,20,224,224", "--filter-shape", "4,5,2,3,3", *common)
    assert p.stdout.strip() == "1,8,447,447", p.stdout
    p = ctx.run("infer-shape", "--input-shape", "1,20,224,224", "--filter-shape", "20,10,3,3", *common)
    assert p.stdout.strip() == "1,10,447,447", p.stdout
    p = ctx.run("infer-shape", "--input-shape", "1,20,224,224,224", "--filter-shape", "4,5,2,3,3,3",
                "--strides", "2,2,2", "--pads-begin", "1,1,1", "--pads-end", "1,1,1")
    assert p.stdout.strip() == "1,8,447,447,447", p.stdout
    # Defaults: strides and dilations ones, pads zeros.
    p = ctx.run("infer-shape", "--input-shape", "2,3,10", "--filter-shape", "3,4,5")
    assert p.stdout.strip() == "2,4,14", p.stdout
    # output_shape with same_upper puts the odd pad at the beginning (spec formulas).
    p = ctx.run("infer-shape", "--input-shape", "1,20,224,224", "--filter-shape", "4,5,2,3,3",
                "--strides", "2,2", "--output-shape", "448,448", "--auto-pad", "same_upper", "--verbose")
    lines = p.stdout.splitlines()
    assert lines[0] == "1,8,448,448", p.stdout
    assert "pads_begin (effective): 1,1" in lines, p.stdout
    assert "pads_end (effective): 0,0" in lines, p.stdout
    p = ctx.run("infer-shape", "--input-shape", "1,20,224,224", "--filter-shape", "4,5,2,3,3",
                "--strides", "2,2", "--output-shape", "448,448", "--auto-pad", "same_lower", "--verbose")
    assert "pads_begin (effective): 0,0" in p.stdout.splitlines(), p.stdout
    assert "pads_end (effective): 1,1" in p.stdout.splitlines(), p.stdout


@case
def infer_shape_desc(ctx):
    table = [
        ("g4mb1ic20ih224oc8oh447kh3sh2ph1", "1,8,447,447"),       # the OpenVINO type_prop case
        ("g4_mb1_ic20ih224_oc8oh447_kh3sh2ph1", "1,8,447,447"),   # '_' separators
        ("g4mb1ic20ih224oc8kh3sh2ph1", "1,8,447,447"),            # o deduced
        ("g4ic20ih224oc8kh3sh2ph1", "2,8,447,447"),               # mb defaults to 2
        ("mb1ic20ih224oc10kh3sh2ph1", "1,10,447,447"),            # no g: ConvolutionBackpropData
        ("g4mb1ic20iw224oc8kw3sw2pw1", "1,8,447"),                # 1D
        ("g4mb1ic20id16oc8kd3sd2pd1", "1,8,31,31,31"),            # 3D, cubic from depth
        ("mb1ic4ih10oc4kh3dh1", "1,4,14,14"),                     # benchdnn d1 = dilation 2
        ("mb1ic4ih10iw6oc4kh3kw1", "1,4,12,6"),                   # non-square
        ('g2mb1ic4ih8oc4kh4sh2ph1n"up_x2"', "1,4,16,16"),         # named
        ("g4mb1ic20ih224oc8oh448kh3sh2ph1", "1,8,448,448"),       # right pad 0 from the o given
        ("g4mb1ic20ih224oc8oh449kh3sh2ph1", "1,8,449,449"),       # right pad -1: output_padding 1
    ]
    for desc, want in table:
        p = ctx.run("infer-shape", "--desc", desc)
        assert p.stdout.strip() == want, f"{desc}: {p.stdout.strip()}, expected {want}"
    p = ctx.run("infer-shape", "--desc", "mb1ic4ih10oc4kh3dh1", "--verbose")
    assert "dilations: 2,2" in p.stdout.splitlines(), p.stdout
    ctx.expect_error(["infer-shape", "--desc", "g4mb1ic20ih224oc8kh3sh0"], 1, ["sh"])
    ctx.expect_error(["infer-shape", "--desc", "g3mb1ic20ih224oc8kh3"], 1, ["ic=20", "g=3"])
    ctx.expect_error(["infer-shape", "--desc", "g4mb1ic20ih224oc8kh3zz9"], 1, ["zz9"])
    ctx.expect_error(["infer-shape", "--desc", "g4mb1ic20oc8"], 1, ["spatial"])


# ------------------------------------------------------------------------------------------
# IR models

def write_model_bin(ctx, values=(40, 40)):
    shutil.copy(ctx.datafile("model.xml"), ctx.path("model.xml"))
    with open(ctx.path("model.bin"), "wb") as f:
        f.write(b"\0" * 2400)
        f.write(struct.pack("<2q", *values))


@case
def ir_model_layer_name(ctx):
    write_model_bin(ctx)
    p = ctx.run("infer-shape", "--layer", "model.xml", "--layer-name", "up1")
    assert p.stdout.strip() == "1,6,20,20", p.stdout
    p = ctx.run("infer-shape", "--layer", "model.xml", "--layer-name", "up2", "--verbose")
    assert p.stdout.splitlines()[0] == "1,4,40,40", p.stdout
    assert "output_shape input: 40,40" in p.stdout, p.stdout
    assert p.stderr.strip() == "", p.stderr  # resolved from model.bin: no note
    # The output_shape Const alone decides when the output port is dynamic.
    text = open(ctx.path("model.xml")).read()
    dyn = text.replace("<dim>1</dim><dim>4</dim><dim>40</dim><dim>40</dim>",
                       "<dim>1</dim><dim>4</dim><dim>-1</dim><dim>-1</dim>")
    open(ctx.path("dyn.xml"), "w").write(dyn)
    shutil.copy(ctx.path("model.bin"), ctx.path("dyn.bin"))
    write = lambda vals: open(ctx.path("dyn.bin"), "r+b").write(b"\0" * 2400 + struct.pack("<2q", *vals))
    write((41, 39))
    p = ctx.run("infer-shape", "--layer", "dyn.xml", "--layer-name", "up2")
    assert p.stdout.strip() == "1,4,41,39", p.stdout
    # Without a .bin: the output port's dims stand in, with a note; with neither: an error.
    p = ctx.run("infer-shape", "--layer", ctx.datafile("model.xml"), "--layer-name", "up2")
    assert p.stdout.strip() == "1,4,40,40", p.stdout
    assert p.stderr.startswith("note:") and "not resolvable" in p.stderr, p.stderr
    os.remove(ctx.path("dyn.bin"))
    ctx.expect_error(["infer-shape", "--layer", "dyn.xml", "--layer-name", "up2"], 1,
                     ["output_shape", "dyn.bin", "--output-shape"])
    ctx.expect_error(["infer-shape", "--layer", "model.xml"], 1, ["up1", "up2", "--layer-name"])
    ctx.expect_error(["infer-shape", "--layer", "model.xml", "--layer-name", "nope"], 1, ["nope"])
    ctx.expect_error(["infer-shape", "--layer", "model.xml", "--layer-name", "input"], 1, ["Parameter"])


@case
def ir_model_run(ctx):
    """run --layer model.xml --layer-name on .npy data, compared with numpy (both layers)."""
    np = np_()
    write_model_bin(ctx)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, 10, 10)).astype(np.float32)
    w = rng.standard_normal((2, 4, 3, 3, 3)).astype(np.float32)
    save(ctx, "x.npy", x)
    save(ctx, "w.npy", w)
    ctx.run_kernel("run", "--layer", "model.xml", "--layer-name", "up1", "-x", "x.npy", "-w", "w.npy", "-o", "y1.npy")
    y1 = load(ctx.path("y1.npy"))
    want = reference(x, w, True, [2, 2], [1, 1], [1, 1], [20, 20], np.float64)
    check_close(y1, want, 1e-5 * np.abs(want).max(), 1e-5, "up1")
    w2 = rng.standard_normal((6, 4, 4, 4)).astype(np.float32)
    save(ctx, "w2.npy", w2)
    ctx.run_kernel("run", "--layer", "model.xml", "--layer-name", "up2", "-x", "y1.npy", "-w", "w2.npy", "-o", "y2.npy")
    y2 = load(ctx.path("y2.npy"))
    # same_upper with output_shape 40: total padding 2*19 + 4 - 40 = 2 -> pads 1, 1.
    want2 = reference(y1, w2, False, [2, 2], [1, 1], [1, 1], [40, 40], np.float64)
    check_close(y2, want2, 1e-5 * np.abs(want2).max(), 1e-5, "up2")


@case
def spec_examples_run(ctx):
    """The spec's 2D examples at full size, with --random data saved and checked with numpy."""
    np = np_()
    for f, grouped, co in (("gcbd_2d.xml", True, 8), ("cbd_2d.xml", False, 10)):
        ctx.run_kernel("run", "--layer", ctx.datafile(f), "--random", "--seed", "3", "-o", "y.npy",
                       "--save-input", "x.npy", "--save-filter", "w.npy")
        x, w, y = (load(ctx.path(n)) for n in ("x.npy", "w.npy", "y.npy"))
        assert y.shape == (1, co, 447, 447), y.shape
        assert x.min() >= -3 and x.max() <= 3 and np.all(x == np.round(x)), "random data not small integers"
        want = reference(x, w, grouped, [2, 2], [1, 1], [1, 1], [447, 447], np.float64)
        check_close(y, want, 0, 0, f)  # small integers: exact


@case
def spec_3d_reduced_run(ctx):
    """The spec's 3D example: shape through infer-shape (above), run on 1x20x16x16x16."""
    np = np_()
    ctx.run_kernel("run", "--layer", ctx.datafile("gcbd_3d.xml"), "--random", "--input-shape", "1,20,16,16,16",
                   "-o", "y.npy", "--save-input", "x.npy", "--save-filter", "w.npy")
    x, w, y = (load(ctx.path(n)) for n in ("x.npy", "w.npy", "y.npy"))
    assert x.shape == (1, 20, 16, 16, 16) and w.shape == (4, 5, 2, 3, 3, 3)
    assert y.shape == (1, 8, 31, 31, 31), y.shape
    want = reference(x, w, True, [2, 2, 2], [1, 1, 1], [1, 1, 1], [31, 31, 31], np.float64)
    check_close(y, want, 0, 0, "3D")


@case
def random_is_seeded(ctx):
    args = ["run", "--desc", "g2mb1ic4ih6oc4kh3sh2", "--random", "--dtype", "f32"]
    ctx.run_kernel(*args, "--seed", "9", "-o", "a.npy")
    ctx.run_kernel(*args, "--seed", "9", "-o", "b.npy")
    ctx.run_kernel(*args, "--seed", "10", "-o", "c.npy")
    a, b, c = (open(ctx.path(n), "rb").read() for n in ("a.npy", "b.npy", "c.npy"))
    assert a == b, "same seed, different output"
    assert a != c, "different seeds, same output"
    p = ctx.run_kernel(*args)  # no --output: a summary on stdout
    assert p.stdout.startswith("output 1,4,13,13 f32"), p.stdout


# ------------------------------------------------------------------------------------------
# .npy round trips, every dtype, compared with numpy

def make_dtype_case(dtype):
    def fn(ctx):
        for rank in (1, 2, 3):
            roundtrip(ctx, dtype, rank)
    fn.__name__ = f"roundtrip_{dtype}"
    return case(fn)


for _dt in DTYPES:
    make_dtype_case(_dt)


@case
def roundtrip_cbd_and_nxc(ctx):
    roundtrip(ctx, "f32", 2, grouped=False)
    roundtrip(ctx, "f32", 1, layout="nxc")
    roundtrip(ctx, "f32", 2, layout="nxc")
    roundtrip(ctx, "f32", 3, layout="nxc")


@case
def dtype_conversion(ctx):
    """--dtype other than X's converts X and W, and Y comes back in X's dtype."""
    np = np_()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((2, 2, 3, 3, 3)).astype(np.float32)
    save(ctx, "x.npy", x)
    save(ctx, "w.npy", w)
    ctx.run_kernel("run", "-x", "x.npy", "-w", "w.npy", "-o", "y.npy", "--dtype", "f16", "--strides", "2,2")
    y = load(ctx.path("y.npy"))
    assert y.dtype == np.float32, y.dtype
    xh, wh = x.astype(np.float16), w.astype(np.float16)
    want = reference(xh, wh, True, [2, 2], [0, 0], [1, 1], [13, 13], np.float64).astype(np.float16)
    assert np.all(y == y.astype(np.float16).astype(np.float32)), "Y is not f16-valued"
    check_close(y, want.astype(np.float32), 1e-3 * float(np.abs(want).max()), 2.0 ** -10, "f32 file, f16 compute")
    # Integer files computed in f32 come back rounded and saturated.
    xi = rng.integers(-100, 101, (1, 4, 6, 6)).astype(np.int8)
    wi = rng.integers(-100, 101, (2, 2, 3, 3, 3)).astype(np.int8)
    save(ctx, "xi.npy", xi)
    save(ctx, "wi.npy", wi)
    ctx.run_kernel("run", "-x", "xi.npy", "-w", "wi.npy", "-o", "yi.npy", "--dtype", "f32", "--strides", "2,2")
    yi = load(ctx.path("yi.npy"))
    assert yi.dtype == np.int8
    want = np.clip(reference(xi, wi, True, [2, 2], [0, 0], [1, 1], [13, 13], np.int64), -128, 127)
    check_close(yi, want.astype(np.int8), 0, 0, "i8 file, f32 compute")


@case
def bf16_rounds_to_nearest_even(ctx):
    """--dtype bf16 rounds X to nearest even before computing: a 1x1 identity filter shows it."""
    np = np_()
    vals = np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -9, -(1 + 3 * 2.0 ** -8), 3.0], dtype=np.float32)
    save(ctx, "x.npy", vals.reshape(1, 1, 5))
    save(ctx, "w.npy", np.ones((1, 1, 1), dtype=np.float32))
    ctx.run_kernel("run", "-x", "x.npy", "-w", "w.npy", "-o", "y.npy", "--dtype", "bf16")
    y = load(ctx.path("y.npy")).reshape(-1)
    want = np.array([1.0, 1 + 2.0 ** -6, 1.0, -(1 + 2.0 ** -6), 3.0], dtype=np.float32)
    assert np.array_equal(y, want), f"{y} != {want}"


# ------------------------------------------------------------------------------------------
# bad input: exit code, one error line naming the value, no output file

def good_npys(ctx):
    np = np_()
    save(ctx, "x.npy", np.ones((1, 4, 5, 5), dtype=np.float32))
    save(ctx, "w.npy", np.ones((2, 2, 3, 3, 3), dtype=np.float32))


def npy_bytes(descr, shape, data, fortran=False):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")")
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + data


@case
def error_missing_file(ctx):
    good_npys(ctx)
    ctx.expect_error(["run", "-x", "nothere.npy", "-w", "w.npy", "-o", "y.npy"], 2, ["nothere.npy"], ["y.npy"])
    ctx.expect_error(["run", "-x", "x.npy", "-w", "nothere.npy", "-o", "y.npy"], 2, ["nothere.npy"], ["y.npy"])
    ctx.expect_error(["infer-shape", "--layer", "nothere.xml"], 2, ["nothere.xml"])
    ctx.expect_error(["bench", "--suite", "nothere.json"], 2, ["nothere.json"])
    ctx.expect_error(["run", "-x", "x.npy", "-w", "w.npy", "-o", "no/such/dir/y.npy"], 2, ["no/such/dir/y.npy"])
    ctx.expect_error(["run", "-x", "x.npy", "-w", "w.npy"], 1, ["--output"])


@case
def error_bad_npy(ctx):
    np = np_()
    good_npys(ctx)
    data = np.ones(100, dtype=np.float32).tobytes()
    cases = [
        ("truncated.npy", npy_bytes("<f4", (1, 4, 5, 5), data[:-12]), ["truncated.npy", "truncated"]),
        ("fortran.npy", npy_bytes("<f4", (1, 4, 5, 5), data, fortran=True), ["fortran.npy", "Fortran"]),
        ("bigendian.npy", npy_bytes(">f4", (1, 4, 5, 5), data), ["bigendian.npy", "big-endian", ">f4"]),
        ("object.npy", npy_bytes("|O", (1, 4, 5, 5), data), ["object.npy", "object"]),
        ("complex.npy", npy_bytes("<c8", (1, 4, 5, 5), data * 2), ["complex.npy", "<c8"]),
        ("int64.npy", npy_bytes("<i8", (1, 4, 5, 5), data * 2), ["int64.npy", "<i8"]),
        ("garbage.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': <f4}\n", ["garbage.npy", "header"]),
        ("notnpy.npy", b"hello, this is text\n" * 5, ["notnpy.npy", "magic"]),
        ("empty.npy", b"", ["empty.npy"]),
        ("cut_header.npy", npy_bytes("<f4", (1, 4, 5, 5), data)[:30], ["cut_header.npy", "truncated"]),
        ("trailing.npy", npy_bytes("<f4", (1, 4, 5, 5), data + b"xxxx"), ["trailing.npy", "bytes after"]),
    ]
    for name, content, needles in cases:
        with open(ctx.path(name), "wb") as f:
            f.write(content)
        ctx.expect_error(["run", "-x", name, "-w", "w.npy", "-o", "y.npy"], 2, needles, ["y.npy"])
    # A pickled object array written by numpy itself.
    np.save(ctx.path("pickled.npy"), np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    ctx.expect_error(["run", "-x", "pickled.npy", "-w", "w.npy", "-o", "y.npy"], 2, ["pickled.npy", "object"], ["y.npy"])
    # Fortran order written by numpy itself.
    np.save(ctx.path("fortran2.npy"), np.asfortranarray(np.ones((1, 4, 5, 5), dtype=np.float32)))
    ctx.expect_error(["run", "-x", "fortran2.npy", "-w", "w.npy", "-o", "y.npy"], 2, ["fortran2.npy", "Fortran"], ["y.npy"])
    # A failing run leaves an existing output file as it was.
    with open(ctx.path("y.npy"), "wb") as f:
        f.write(b"precious")
    ctx.expect_error(["run", "-x", "truncated.npy", "-w", "w.npy", "-o", "y.npy"], 2, ["truncated"])
    assert open(ctx.path("y.npy"), "rb").read() == b"precious", "output overwritten on error"


@case
def error_wrong_shapes(ctx):
    np = np_()
    good_npys(ctx)
    save(ctx, "x7.npy", np.ones((1, 7, 5, 5), dtype=np.float32))
    ctx.expect_error(["run", "-x", "x7.npy", "-w", "w.npy", "-o", "y.npy"], 1, ["7"], ["y.npy"])
    save(ctx, "w5.npy", np.ones((2, 2, 3, 3, 3, 3), dtype=np.float32))
    ctx.expect_error(["run", "-x", "x.npy", "-w", "w5.npy", "-o", "y.npy"], 1, ["filter"], ["y.npy"])
    save(ctx, "x2.npy", np.ones((4, 5), dtype=np.float32))
    ctx.expect_error(["run", "-x", "x2.npy", "-w", "w.npy", "-o", "y.npy"], 1, ["rank"], ["y.npy"])
    save(ctx, "wi.npy", np.ones((2, 2, 3, 3, 3), dtype=np.int32))
    ctx.expect_error(["run", "-x", "x.npy", "-w", "wi.npy", "-o", "y.npy"], 1, ["i32", "f32", "--dtype"], ["y.npy"])
    ctx.expect_error(["run", "-x", "x.npy", "-w", "w.npy", "-o", "y.npy", "--strides", "2,2,2"], 1, ["strides"], ["y.npy"])
    ctx.expect_error(["run", "-x", "x.npy", "-w", "w.npy", "-o", "y.npy", "--input-shape", "1,4,6,6"], 1,
                     ["1,4,6,6", "x.npy"], ["y.npy"])
    ctx.expect_error(["infer-shape", "--input-shape", "1,20,224,224", "--filter-shape", "4,5,2,3"], 1, ["filter"])
    ctx.expect_error(["infer-shape", "--input-shape", "1,20,-3,224", "--filter-shape", "4,5,2,3,3"], 1, ["-3"])
    ctx.expect_error(["infer-shape", "--input-shape", "1,20,a,224", "--filter-shape", "4,5,2,3,3"], 1, ["'a'"])


@case
def error_bad_attributes(ctx):
    good_npys(ctx)
    run = ["run", "-x", "x.npy", "-w", "w.npy", "-o", "y.npy"]
    ctx.expect_error(run + ["--strides", "0,2"], 1, ["strides"], ["y.npy"])
    ctx.expect_error(run + ["--strides", "2,x"], 1, ["--strides", "'x'"], ["y.npy"])
    ctx.expect_error(run + ["--dilations", "0,1"], 1, ["dilations"], ["y.npy"])
    ctx.expect_error(run + ["--pads-begin", "-1,0"], 1, ["pads_begin"], ["y.npy"])
    ctx.expect_error(run + ["--auto-pad", "sideways"], 1, ["sideways"], ["y.npy"])
    ctx.expect_error(run + ["--dtype", "f8"], 1, ["f8"], ["y.npy"])
    ctx.expect_error(run + ["--layout", "nchw"], 1, ["nchw"], ["y.npy"])
    ctx.expect_error(run + ["--target", "cuda"], 1, ["--target cuda", "not built with CUDA kernels"], ["y.npy"])
    ctx.expect_error(run + ["--target", "tpu"], 1, ["tpu"], ["y.npy"])
    ctx.expect_error(run + ["--output-shape", "9"], 1, ["output_shape"], ["y.npy"])
    ctx.expect_error(run + ["--output-padding", "1,1,1"], 1, ["output_padding"], ["y.npy"])
    ctx.expect_error(["infer-shape", "--input-shape", "1,20,224,224", "--filter-shape", "4,5,2,3,3",
                      "--strides", "0,2"], 1, ["strides"])
    # IR attributes.
    text = open(ctx.datafile("gcbd_2d.xml")).read()
    bad = {
        "bad_strides.xml": (text.replace('strides="2,2"', 'strides="2,two"'), 1, ["2,two"]),
        "zero_stride.xml": (text.replace('strides="2,2"', 'strides="0,2"'), 1, ["strides"]),
        "bad_autopad.xml": (text.replace('strides="2,2"', 'strides="2,2" auto_pad="diagonal"'), 1, ["diagonal"]),
        "bad_dim.xml": (text.replace("<dim>224</dim>", "<dim>lots</dim>", 1), 1, ["lots"]),
        "wrong_type.xml": (text.replace('type="GroupConvolutionBackpropData"', 'type="Convolution"'), 1, ["Convolution"]),
        "mismatch.xml": (text.replace("<dim>447</dim>", "<dim>446</dim>", 1), 1, ["446", "447"]),
        "broken.xml": (text[: len(text) // 2], 2, ["broken.xml", "XML"]),
        "one_port.xml": (text.replace("<port id=\"1\">", "<nope>").replace("</port>\n    </input>", "</nope>\n    </input>"), 1, ["input port"]),
    }
    for name, (content, rc, needles) in bad.items():
        open(ctx.path(name), "w").write(content)
        ctx.expect_error(["infer-shape", "--layer", name], rc, needles)
        ctx.expect_error(["run", "--layer", name, "--random", "-o", "y.npy"], rc, needles, ["y.npy"])


@case
def error_absurd_sizes(ctx):
    ctx.expect_error(["run", "--random", "--input-shape", "1,20,100000,100000", "--filter-shape", "4,5,2,3,3",
                      "-o", "y.npy"], 1, ["1,20,100000,100000", "GiB"], ["y.npy"])
    ctx.expect_error(["run", "--random", "--input-shape", "1,20,9223372036854775807,2", "--filter-shape",
                      "4,5,2,3,3", "-o", "y.npy"], 1, ["overflow"], ["y.npy"])
    ctx.expect_error(["run", "--random", "--input-shape", "1,20,99999999999999999999,2", "--filter-shape",
                      "4,5,2,3,3", "-o", "y.npy"], 1, ["99999999999999999999"], ["y.npy"])
    ctx.expect_error(["infer-shape", "--input-shape", "1,20,4611686018427387904,2", "--filter-shape", "4,5,2,3,3",
                      "--strides", "4,1"], 1, ["overflow"])
    # A .npy whose header claims an absurd shape.
    with open(ctx.path("huge.npy"), "wb") as f:
        f.write(npy_bytes("<f4", (1, 20, 1000000, 1000000), b"\0" * 64))
    np = np_()
    save(ctx, "w.npy", np.ones((4, 5, 2, 3, 3), dtype=np.float32))
    ctx.expect_error(["run", "-x", "huge.npy", "-w", "w.npy", "-o", "y.npy"], 2, ["huge.npy", "truncated"], ["y.npy"])
    with open(ctx.path("overflow.npy"), "wb") as f:
        f.write(npy_bytes("<f4", (2 ** 40, 2 ** 40, 2 ** 20), b""))
    ctx.expect_error(["run", "-x", "overflow.npy", "-w", "w.npy", "-o", "y.npy"], 2, ["overflow.npy"], ["y.npy"])


@case
def error_bad_suite(ctx):
    open(ctx.path("broken.json"), "w").write('{"layers": [ {"name": "a", ')
    ctx.expect_error(["bench", "--suite", "broken.json"], 2, ["broken.json", "JSON"])
    layer = {"name": "l1", "N": 1, "G": 2, "C_in": 2, "C_out": 2, "X": [6, 6], "K": [3, 3], "strides": [2, 2]}
    for field, value, needles in (("X", "six", ["'X'", "six"]), ("G", 0, ["'G'"]), ("dtype", "f12", ["f12"]),
                                  ("layout", "chw", ["chw"]), ("strides", [0, 2], ["strides"])):
        bad = dict(layer)
        bad[field] = value
        json.dump({"layers": [layer, bad]}, open(ctx.path("bad.json"), "w"))
        ctx.expect_error(["bench", "--suite", "bad.json", "--repeats", "1", "--no-onednn"], 1, needles)
    json.dump({"layers": [layer]}, open(ctx.path("ok.json"), "w"))
    ctx.expect_error(["bench", "--suite", "ok.json", "--only", "zz"], 1, ["zz"])
    ctx.expect_error(["bench", "--suite", "ok.json", "--repeats", "0"], 1, ["--repeats"])


# ------------------------------------------------------------------------------------------
# bench

@case
def bench_single_and_suite(ctx):
    p = ctx.run_kernel("bench", "--desc", "g2mb1ic8ih12oc8kh3sh2ph1", "--repeats", "3", "--warmup", "1", "--json")
    j = json.loads(p.stdout)
    assert len(j["layers"]) == 1 and j["cpu_variant"], j
    l = j["layers"][0]
    assert l["output_shape"] == [1, 8, 23, 23], l
    assert l["ms_median"] > 0 and l["gflops"] > 0 and 0 < l["roofline_pct"], l
    assert l["macs"] == 1 * 8 * 4 * 12 * 12 * 9, l["macs"]
    if j["onednn_version"]:
        d = l["onednn"]
        assert d["ms_median"] > 0 and d["dtype"] == "f32", d
        assert d["max_abs_diff"] <= 1e-3, f"oneDNN and deconv disagree: {d}"
    layers = [
        {"name": "small", "N": 1, "G": 2, "C_in": 4, "C_out": 4, "X": [8, 8], "K": [3, 3], "strides": [2, 2],
         "pads_begin": [1, 1], "pads_end": [1, 1], "dtype": "f32", "layout": "ncx"},
        {"name": "small_nxc", "N": 1, "G": 1, "C_in": 8, "C_out": 4, "X": [6, 6], "K": [2, 2], "strides": [2, 2],
         "dtype": "f32", "layout": "nxc"},
        {"name": "small_1d", "N": 2, "G": 1, "C_in": 4, "C_out": 2, "X": [30], "K": [4], "strides": [2],
         "pads_begin": [1], "pads_end": [1], "dilations": [2], "output_padding": [1]},
        {"name": "big_one", "N": 1, "G": 1, "C_in": 4, "C_out": 4, "X": [16, 16, 16], "K": [3, 3, 3], "scale": True},
    ]
    json.dump({"layers": layers}, open(ctx.path("suite.json"), "w"))
    p = ctx.run_kernel("bench", "--suite", "suite.json", "--repeats", "2", "--warmup", "0", "--threads", "1")
    assert "geomean" in p.stdout and "small_nxc" in p.stdout and "big_one" not in p.stdout.split("notes:")[0].split("\n", 2)[2], p.stdout
    assert "--include-scale" in p.stdout, p.stdout
    p = ctx.run_kernel("bench", "--suite", "suite.json", "--repeats", "2", "--warmup", "0", "--include-scale", "--json")
    j = json.loads(p.stdout)
    names = [l["name"] for l in j["layers"]]
    assert names == ["small", "small_nxc", "small_1d", "big_one"], names
    if j["onednn_version"]:
        for l in j["layers"]:
            assert "onednn" in l and l["onednn"].get("max_abs_diff", 1) <= 1e-3, l
    assert j["geomean"]["gflops"] > 0
    # An IR model as the suite: every deconvolution layer.
    write_model_bin(ctx)
    p = ctx.run_kernel("bench", "--suite", "model.xml", "--repeats", "1", "--warmup", "0", "--json", "--no-onednn")
    j = json.loads(p.stdout)
    assert [l["name"] for l in j["layers"]] == ["up1", "up2"], j


@case
def bench_shared_suite_parses(ctx):
    """The real suite file loads and validates (one small layer timed)."""
    if not ctx.suite or not os.path.exists(ctx.suite):
        raise Skip("shared/bench/layers.json not found")
    p = ctx.run_kernel("bench", "--suite", ctx.suite, "--only", "ov_spec_1d", "--repeats", "1", "--warmup", "0", "--json")
    j = json.loads(p.stdout)
    assert [l["name"] for l in j["layers"]] == ["ov_spec_1d"], j
    assert j["layers"][0]["output_shape"] == [1, 8, 447], j


# ------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--deconv")
    ap.add_argument("--data")
    ap.add_argument("--suite", default="")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    if a.case not in CASES:
        print(f"unknown case {a.case}", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix=f"deconv_cli_{a.case}_")
    try:
        CASES[a.case](Ctx(os.path.abspath(a.deconv), os.path.abspath(a.data), a.suite, work))
    except Skip as e:
        print(f"[SKIP] {a.case}: {e}")
        return SKIP
    except Exception:
        traceback.print_exc()
        print(f"FAILED {a.case} (work dir kept: {work})")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("Success!")
    return 0


if __name__ == "__main__":
    sys.exit(main())
