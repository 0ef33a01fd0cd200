#!/usr/bin/env python3
"""PyTorch (cuDNN) on the GPU as the baseline of `deconv bench --target cuda`.

Times torch.nn.functional.conv_transpose{1,2,3}d on every layer of a layers.json suite, with the
same shapes, attributes and dtype, tensors already on the GPU, and (given --ours, the JSON of
`deconv bench --target cuda --json`) prints both side by side with the ratio torch/ours.

OpenVINO's pads may differ at the two ends and output_padding may exceed pads_end; PyTorch takes
one symmetric padding, so those layers run with padding 0 and the result is cropped (and padded
with zeros where output_padding reaches past the full output), which the timing includes.

Usage: torch_cuda_baseline.py --suite layers.json [--ours ours.json] [--repeats 20] [--json out.json]
"""
import argparse
import json
import math
import statistics

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def layer_fn(layer):
    rank = len(layer["X"])
    dt = DTYPES[layer.get("dtype", "f32")]
    n, g, ci, co = layer["N"], layer["G"], layer["C_in"], layer["C_out"]
    s, d = layer["strides"], layer["dilations"]
    pb, pe = layer["pads_begin"], layer["pads_end"]
    op = layer.get("output_padding", [0] * rank)
    x = torch.randn([n, g * ci] + layer["X"], device="cuda").to(dt)
    w = torch.randn([g * ci, co] + layer["K"], device="cuda").to(dt)
    if layer.get("layout") == "nxc" and rank in (2, 3):
        fmt = torch.channels_last if rank == 2 else torch.channels_last_3d
        x, w = x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt)
    full = [(layer["X"][i] - 1) * s[i] + (layer["K"][i] - 1) * d[i] + 1 for i in range(rank)]
    out = [full[i] - pb[i] - pe[i] + op[i] for i in range(rank)]
    symmetric = pb == pe and all(op[i] < max(s[i], d[i]) for i in range(rank))
    conv = CONV_T[rank]
    if symmetric:
        return (lambda: conv(x, w, stride=s, padding=pb, output_padding=op, groups=g, dilation=d)), out
    def cropped():
        y = conv(x, w, stride=s, padding=0, groups=g, dilation=d)
        extra = [max(0, pb[i] + out[i] - full[i]) for i in range(rank)]
        if any(extra):
            pad = []
            for e in reversed(extra):
                pad += [0, e]
            y = F.pad(y, pad)
        index = [slice(None), slice(None)] + [slice(pb[i], pb[i] + out[i]) for i in range(rank)]
        return y[tuple(index)]
    return cropped, out


def time_ms(fn, warmup, repeats):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples), min(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True)
    ap.add_argument("--ours", help="JSON of `deconv bench --target cuda --json`")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--include-scale", action="store_true")
    ap.add_argument("--json", help="write the rows here too")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithm per shape
    torch.backends.cudnn.allow_tf32 = False  # f32 layers in f32, as ours (TF32 keeps 10 mantissa bits)
    layers = json.load(open(args.suite))["layers"]
    ours = {}
    if args.ours:
        ours = {l["name"]: l for l in json.load(open(args.ours))["layers"]}
    rows = []
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  cuDNN {torch.backends.cudnn.version()}")
    print(f"{'layer':22} {'dtype':5} {'torch ms':>10} {'ours ms':>10} {'torch/ours':>10}")
    for layer in layers:
        if layer.get("scale") and not args.include_scale:
            continue
        fn, _ = layer_fn(layer)
        med, mn = time_ms(fn, args.warmup, args.repeats)
        mine = ours.get(layer["name"], {}).get("ms_median")
        ratio = med / mine if mine else None
        rows.append({"name": layer["name"], "dtype": layer.get("dtype", "f32"), "torch_ms_median": med,
                     "torch_ms_min": mn, "ours_ms_median": mine, "torch_over_ours": ratio})
        print(f"{layer['name']:22} {layer.get('dtype', 'f32'):5} {med:10.4f} "
              f"{(f'{mine:10.4f}' if mine else '         -')} {(f'{ratio:9.3f}x' if ratio else '         -')}")
    ratios = [r["torch_over_ours"] for r in rows if r["torch_over_ours"]]
    if ratios:
        print(f"geomean torch/ours: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}x over {len(ratios)} layers")
    if args.json:
        json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows},
                  open(args.json, "w"), indent=2)


if __name__ == "__main__":
    main()
