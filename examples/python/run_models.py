#!/usr/bin/env python3
"""Runs real models (models.py) with torch's transposed convolutions and with deconv's, checks
that the outputs match and times the forward pass.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/run_models.py [--small] [--model NAME] [--repeats N]

For each model: build it in eval mode with a fixed seed (BatchNorm statistics from one
train-mode pass on the same input) and run torch's forward: the reference, in which every
ConvTranspose is torch.nn's. Then deep-copy it twice and swap the copies' ConvTransposes for
deconv's modules (deconv.torch.swap_conv_transpose): once as the modules come (the weight packed
into the kernels' layout on every call) and once with constant_weights=True (packed once), run
both under torch.inference_mode() and compare. Every swapped module must have run deconv's
kernels (deconv_last_reason == ""); a fallback to torch is a failure.

The match criterion is the relative norm error ||deconv - torch|| / ||torch|| < 1e-4 (f32), on
the first call and on the last timed one. Both sides compute each transposed convolution in f32
in a different summation order, so each layer's outputs differ by rounding: a sum of K products
carries a relative error of at most about sqrt(K) * 2^-24 ~ 4e-6 for the largest K here (4096),
and the printed per-layer errors (each deconv layer run on the torch layer's own input) are
1e-7 to 8e-7. The other layers are torch's on both sides and carry a relative perturbation
through at about its size (variance-preserving initialisations, BatchNorm calibrated; ReLU, tanh
and eval-mode BatchNorm are Lipschitz), so the outputs differ by 0.6e-6 to 1.4e-6. The bound
leaves a margin of ~70x over that, while a real defect (a tap, a pad, a stride or a group wrong)
gives O(1) relative error and a weight off by 1e-3 gives ~1e-3 (--perturb checks that it fails).

Timing: the median of --repeats forwards per side after warm-up, the sides (torch, deconv,
deconv with constant weights) in turn with the order rotated every repeat to cancel drift;
torch.set_num_threads and deconv.set_cpu_threads both get --threads (2). The transposed
convolutions alone are timed in the same runs with forward hooks (pre-hook to hook of each
ConvTranspose, summed per forward): the other layers are identical on all sides, so the whole
forward's difference is theirs plus noise. Exit status 1 when a model mismatches, fell back or
raised, else 0.
"""

import argparse
import copy
import math
import os
import platform
import statistics
import sys
import time
import traceback

import torch
import torch.nn as nn

import deconv
import deconv.torch as dt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402  (next to this script)

TOLERANCE = 1e-4
TORCH_CONVT = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
DECONV_CONVT = (dt.ConvTranspose1d, dt.ConvTranspose2d, dt.ConvTranspose3d)


def conv_transposes(model):
    """(name, module) of every transposed convolution, torch's or deconv's, in module order."""
    return [(name, m) for name, m in model.named_modules() if isinstance(m, TORCH_CONVT)]


def rel_error(a, b):
    """||a - b|| / ||b|| in f64 (NaN when either holds a NaN)."""
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def shape_text(shape):
    return "x".join(str(n) for n in shape)


class LayerTimer:
    """Seconds spent in each of `modules` (pre-hook to hook) during the last forward."""

    def __init__(self, modules):
        self.seconds = [0.0] * len(modules)
        self._start = [0.0] * len(modules)
        self._handles = []
        for i, m in enumerate(modules):
            self._handles.append(m.register_forward_pre_hook(self._pre(i)))
            self._handles.append(m.register_forward_hook(self._post(i)))

    def _pre(self, i):
        def hook(module, args):
            self._start[i] = time.perf_counter()
        return hook

    def _post(self, i):
        def hook(module, args, output):
            self.seconds[i] += time.perf_counter() - self._start[i]
        return hook

    def reset(self):
        self.seconds = [0.0] * len(self.seconds)

    def remove(self):
        for h in self._handles:
            h.remove()


class LayerChecker:
    """During one forward of the torch model, runs a copy of the matching deconv module on each
    torch ConvTranspose's own input and records the relative error of its output, and the
    shapes. Copies, made before any forward, so that the swapped model's first call stays cold."""

    def __init__(self, torch_layers, deconv_layers):
        self.errors = [math.nan] * len(torch_layers)
        self.input_shapes = [None] * len(torch_layers)
        self._handles = [m.register_forward_hook(self._hook(i, copy.deepcopy(d)))
                         for i, (m, d) in enumerate(zip(torch_layers, deconv_layers))]

    def _hook(self, i, deconv_layer):
        def hook(module, args, output):
            self.input_shapes[i] = list(args[0].shape)
            self.errors[i] = rel_error(deconv_layer(args[0]), output)
        return hook

    def remove(self):
        for h in self._handles:
            h.remove()


class BackgroundLoad:
    """The CPU time other processes took while the timed runs ran, in cores on average (from
    /proc/stat's busy time less this process's own; None where /proc/stat is missing)."""

    def __init__(self):
        self._start = (self._busy(), self._own(), time.perf_counter())

    @staticmethod
    def _busy():
        try:
            with open("/proc/stat") as f:
                fields = [int(v) for v in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle, iowait
        return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")  # guest time is in user already

    @staticmethod
    def _own():
        t = os.times()
        return t.user + t.system

    def cores(self):
        busy, own, start = self._start
        now = self._busy()
        if busy is None or now is None:
            return None
        return max(0.0, (now - busy) - (self._own() - own)) / (time.perf_counter() - start)


def worst(errors):
    """The largest error, NaN when any is NaN."""
    return math.nan if any(math.isnan(e) for e in errors) else max(errors)


def fallbacks(layers):
    """The swapped modules whose last forward did not run deconv, with the reason."""
    bad = []
    for name, m in layers:
        reason = getattr(m, "deconv_last_reason", None)
        if reason is None:
            bad.append(f"{name}: never ran")
        elif reason:
            bad.append(f"{name}: {reason}")
    return bad


# The deconv sides: swap_conv_transpose's constant_weights. False (the modules' default) packs
# the weight into the kernels' layout on every call; True packs it once per weight version.
DECONV_SIDES = {"deconv": False, "deconv-const": True}
SIDES = ("torch",) + tuple(DECONV_SIDES)


def run_model(spec, args):
    """Checks and times one model; returns a result dict (ok False on a mismatch or fallback)."""
    print(f"== {spec.name}: {spec.title}", flush=True)
    torch.manual_seed(args.seed)
    model = spec.build()
    inputs = spec.inputs(args.small, torch.Generator().manual_seed(args.seed + 1))
    models.calibrate_batchnorm(model, inputs)  # eval mode; a no-op without BatchNorm

    nets = {"torch": model}
    layers = {"torch": conv_transposes(model)}
    problems = []
    # The reference must be torch's own: no deconv module in it, and every ConvTranspose swapped.
    if any(isinstance(m, DECONV_CONVT) for m in model.modules()):
        problems.append("the reference model holds deconv modules")
    for side, constant in DECONV_SIDES.items():
        nets[side], count = dt.swap_conv_transpose(copy.deepcopy(model), constant_weights=constant)
        layers[side] = conv_transposes(nets[side])
        if count != len(layers["torch"]) or count == 0:
            problems.append(f"{side}: swapped {count} modules, but the model has {len(layers['torch'])} "
                            "ConvTransposes")
        if not all(isinstance(m, DECONV_CONVT) for _, m in layers[side]):
            problems.append(f"{side}: a ConvTranspose of the swapped model is still torch's")
        elif any(m.deconv_constant_weights != constant for _, m in layers[side]):
            problems.append(f"{side}: deconv_constant_weights is not {constant}")
        if [n for n, _ in layers[side]] != [n for n, _ in layers["torch"]]:
            problems.append(f"{side}: the swapped model's ConvTransposes are not the reference's")
        if args.perturb:  # testing the check: the deconv model's first ConvTranspose made wrong
            with torch.no_grad():
                layers[side][0][1].weight.mul_(1 + args.perturb)

    result = {"spec": spec, "count": count, "input": list(inputs[0].shape), "problems": problems,
              "layers": layers["torch"], "first_call_ms": {}, "error": {}}
    checker = LayerChecker([m for _, m in layers["torch"]], [m for _, m in layers["deconv"]])
    timers = {side: LayerTimer([m for _, m in layers[side]]) for side in SIDES}
    outputs = {}
    errors = {side: [] for side in DECONV_SIDES}
    with torch.inference_mode():
        # Correctness: the first calls (deconv builds its plans, and packs the weights, here).
        ref_out = nets["torch"](*inputs)
        checker.remove()
        for side in DECONV_SIDES:
            timers[side].reset()
            out = nets[side](*inputs)
            result["first_call_ms"][side] = sum(timers[side].seconds) * 1e3  # the ConvTransposes'
            problems += [f"{side} fell back to torch: {b}" for b in fallbacks(layers[side])]
            errors[side].append(rel_error(out, ref_out))
            if side == "deconv":
                result["max_abs"] = (out.double() - ref_out.double()).abs().max().item()
        result["output"] = list(ref_out.shape)
        result["ref_max"] = ref_out.abs().max().item()
        result["layer_errors"] = checker.errors
        result["layer_inputs"] = checker.input_shapes

        # Timing: warm-up, then the sides in turn, the order rotated every repeat.
        for _ in range(args.warmup):
            for side in SIDES:
                nets[side](*inputs)
        total = {side: [] for side in SIDES}
        per_layer = {side: [] for side in SIDES}
        background = BackgroundLoad()
        for r in range(args.repeats):
            for side in SIDES[r % len(SIDES):] + SIDES[:r % len(SIDES)]:
                timers[side].reset()
                start = time.perf_counter()
                outputs[side] = nets[side](*inputs)
                total[side].append(time.perf_counter() - start)
                per_layer[side].append(list(timers[side].seconds))
        result["background"] = background.cores()
        for timer in timers.values():
            timer.remove()
        # The last timed outputs: cached plans (and packed weights).
        for side in DECONV_SIDES:
            errors[side].append(rel_error(outputs[side], ref_out))
            problems += [f"{side} fell back to torch: {b}" for b in fallbacks(layers[side])]

    for side in DECONV_SIDES:
        result["error"][side] = worst(errors[side])
        if not result["error"][side] < TOLERANCE:  # NaN fails too
            problems.append(f"{side}: relative error {result['error'][side]:.3g} exceeds {TOLERANCE:g}")
    for side in SIDES:
        result[f"{side}_ms"] = statistics.median(total[side]) * 1e3
        result[f"{side}_convt_ms"] = statistics.median(sum(run) for run in per_layer[side]) * 1e3
        result[f"{side}_layer_ms"] = [statistics.median(run[i] for run in per_layer[side]) * 1e3
                                      for i in range(len(layers["torch"]))]
    result["ok"] = not problems

    verdict = "match" if result["ok"] else "MISMATCH"
    error = worst(list(result["error"].values()))
    print(f"{spec.name}: {verdict}: relative error {error:.3g} (tolerance {TOLERANCE:g}), "
          f"max abs error {result['max_abs']:.3g} (max |output| {result['ref_max']:.3g}), "
          f"worst layer {worst(result['layer_errors']):.3g}; {count} ConvTranspose swapped; the ConvTransposes' "
          f"first call (plans, packing) {result['first_call_ms']['deconv']:.1f} ms, "
          f"{result['first_call_ms']['deconv-const']:.1f} ms with constant weights", flush=True)
    for p in problems:
        print(f"{spec.name}: FAIL: {p}", flush=True)
    if args.layers:
        print_layers(result)
    if result["background"] is not None:
        print(f"{spec.name}: other processes used {result['background']:.2f} cores on average during the "
              "timed runs", flush=True)
    print(f"{spec.name}: forward: torch {result['torch_ms']:.1f} ms, deconv {result['deconv_ms']:.1f} ms, "
          f"deconv constant weights {result['deconv-const_ms']:.1f} ms; ConvTranspose layers: torch "
          f"{result['torch_convt_ms']:.1f} ms, deconv {result['deconv_convt_ms']:.1f} ms, deconv constant "
          f"weights {result['deconv-const_convt_ms']:.1f} ms", flush=True)
    return result


def print_layers(result):
    print("| layer | input | kernel / stride / padding | torch ms | deconv ms | deconv const. ms | rel. error | "
          "deconv plan |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for i, (name, m) in enumerate(result["layers"]):
        shape = result["layer_inputs"][i]
        plan = deconv.Plan.conv_transpose(shape, list(m.weight.shape), m.weight.dtype, m.stride, m.padding,
                                          m.output_padding, m.groups, m.dilation)
        geometry = f"{shape_text(m.kernel_size)} / {shape_text(m.stride)} / {shape_text(m.padding)}"
        print(f"| {name} | {shape_text(shape)} | {geometry} | {result['torch_layer_ms'][i]:.2f} | "
              f"{result['deconv_layer_ms'][i]:.2f} | {result['deconv-const_layer_ms'][i]:.2f} | "
              f"{result['layer_errors'][i]:.2g} | {plan.describe()} |")


def unbuilt(spec):
    """Why this build cannot run the model's transposed convolutions ("" when it can)."""
    if not deconv.has_kernel("GroupConvolutionBackpropData", spec.rank, "f32"):
        return f"this build has no {spec.rank}D f32 kernels (DECONV_RANKS / DECONV_DTYPES)"
    return ""


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", choices=list(models.MODELS),
                        help="run this model (repeatable); default: all")
    parser.add_argument("--small", action="store_true", help="tiny batch and spatial sizes (CI)")
    parser.add_argument("--repeats", type=int, default=None, help="timed forwards per side (default 5, 3 with --small)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed forwards per side after the first (default 1)")
    parser.add_argument("--threads", type=int, default=2, help="torch and deconv CPU threads (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layers", action="store_true",
                        help="also print each ConvTranspose: shape, times, error, plan")
    parser.add_argument("--perturb", type=float, default=0.0, metavar="REL",
                        help="testing: scale the deconv model's first ConvTranspose weight by 1+REL, which must fail")
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.small else 5
    if args.repeats < 1 or args.warmup < 0 or args.threads < 1:
        parser.error("--repeats and --threads must be at least 1, --warmup at least 0")

    torch.set_num_threads(args.threads)
    deconv.set_cpu_threads(args.threads)
    print(f"# CPU: {cpu_name()}; deconv {deconv.__version__} ({deconv.cpu_variant()}), torch {torch.__version__}; "
          f"threads: torch {torch.get_num_threads()}, deconv {deconv.cpu_threads()}; "
          f"load average {os.getloadavg()[0]:.2f}; {'small' if args.small else 'full'} sizes, "
          f"median of {args.repeats}", flush=True)

    results, crashed = [], []
    for name in args.model or list(models.MODELS):
        spec = models.MODELS[name]
        missing = unbuilt(spec)
        if missing:
            print(f"{name}: skipped: {missing}", flush=True)
            continue
        try:
            results.append(run_model(spec, args))
        except Exception:  # a model that raised fails; the others still run
            traceback.print_exc()
            print(f"{name}: FAIL: raised {sys.exc_info()[0].__name__}", flush=True)
            crashed.append(name)
    if not results and not crashed:
        print("no model ran", flush=True)
        return 0

    print()
    print("Whole forward pass, median ms:")
    print()
    print("| model | input shape | ConvT swapped | torch | deconv | speed-up | deconv, constant weights | speed-up | "
          "background load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        load = "n/a" if r["background"] is None else f"{r['background']:.2f} cores"
        print(f"| {r['spec'].name} | {shape_text(r['input'])}{r['spec'].shape_note} | {r['count']} | "
              f"{r['torch_ms']:.1f} | {r['deconv_ms']:.1f} | {r['torch_ms'] / r['deconv_ms']:.2f}x | "
              f"{r['deconv-const_ms']:.1f} | {r['torch_ms'] / r['deconv-const_ms']:.2f}x | {load} |")
    print()
    print("The transposed convolution layers alone (summed per forward, same runs), median ms:")
    print()
    print("| model | torch | share of torch's forward | deconv | speed-up | deconv, constant weights | speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['spec'].name} | {r['torch_convt_ms']:.1f} | {100 * r['torch_convt_ms'] / r['torch_ms']:.0f}% | "
              f"{r['deconv_convt_ms']:.1f} | {r['torch_convt_ms'] / r['deconv_convt_ms']:.2f}x | "
              f"{r['deconv-const_convt_ms']:.1f} | {r['torch_convt_ms'] / r['deconv-const_convt_ms']:.2f}x |")
    print()
    print("| model | output shape | rel. error | rel. error, constant weights | max abs error | max abs output | "
          "worst layer rel. error | match |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(f"| {r['spec'].name} | {shape_text(r['output'])} | {r['error']['deconv']:.2g} | "
              f"{r['error']['deconv-const']:.2g} | {r['max_abs']:.2g} | {r['ref_max']:.3g} | "
              f"{worst(r['layer_errors']):.2g} | {'yes' if r['ok'] else 'NO'} |")
    print(f"\n# load average at the end {os.getloadavg()[0]:.2f}")
    failed = [r["spec"].name for r in results if not r["ok"]] + crashed
    if failed:
        print(f"FAILED: {', '.join(failed)}", flush=True)
        return 1
    print(f"all {len(results)} models match", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
