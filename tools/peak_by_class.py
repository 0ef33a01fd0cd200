#!/usr/bin/env python3
"""Share of the measured FMA peak per class of layer, ours and oneDNN's, from `deconv bench --json`.

Give one or more runs of the same suite (rounds, alternating with anything else): each layer
keeps the best median of each library over them, and its FLOP rate is 2 * macs (the nominal
count) over that time, as a share of the peak that the run measured (`peak_gflops`: the FP32
FMA peak on the vectors of the run's CPU variant). Classes by channels per group (the filter's
[G, C_IN, C_OUT, K..]):

- dense: at least 64 input and 64 output channels per group, split by rank, and 16-bit ones
  apart (bf16 on `vdpbf16ps` does two products per f32 lane: past 100% of the f32 peak);
- mid: 16-63 channels per group on the narrower side;
- few channels: fewer than 16 on one side (not depthwise);
- depthwise: one input and one output channel per group.

Each class prints the geomean share of peak of ours and oneDNN's, our share of the roofline
(as `bench` counts it: the bytes too, at the run's `peak_gbps`; few-channel layers are bound by
memory), and the geomean of oneDNN's time over ours.

    build/tools/deconv bench --suite bench/layers.json --threads 2 --json > r1.json
    tools/peak_by_class.py r1.json r2.json
"""
import argparse
import json
import math
import sys


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def layer_class(layer):
    f = layer["filter_shape"]  # [G, C_IN, C_OUT, K..]
    cin, cout = f[1], f[2]
    rank = len(f) - 3
    if cin == 1 and cout == 1:
        return "depthwise"
    narrow = min(cin, cout)
    if narrow < 16:
        return "few channels (< 16 per group)"
    if narrow < 64:
        return "mid (16-63 per group)"
    if layer["dtype"] in ("f16", "bf16"):
        return "dense, 16-bit"
    return "dense %dD" % rank


ORDER = ["dense 1D", "dense 2D", "dense 3D", "dense, 16-bit", "mid (16-63 per group)",
         "few channels (< 16 per group)", "depthwise"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="deconv bench --json outputs of one suite")
    args = ap.parse_args()
    best = {}
    peaks, variants, gbps = [], set(), 41.0
    for path in args.runs:
        with open(path) as f:
            run = json.load(f)
        peaks.append(run["peak_gflops"])
        gbps = run.get("peak_gbps", gbps)
        variants.add(run.get("cpu_variant", "?"))
        for layer in run["layers"]:
            ours = layer.get("ms_median")
            if not ours:
                continue
            b = best.setdefault(layer["name"], {"layer": layer, "ours": ours, "onednn": None})
            b["ours"] = min(b["ours"], ours)
            dnn = (layer.get("onednn") or {}).get("ms_median")
            if dnn:
                b["onednn"] = dnn if b["onednn"] is None else min(b["onednn"], dnn)
    if not best:
        sys.exit("no timed layers in " + ", ".join(args.runs))
    # The best of the runs' peaks: a run's own reading drifts with the host, as its layers do.
    peak = max(peaks)
    classes = {}
    for name, b in best.items():
        layer = b["layer"]
        flop = 2.0 * layer["macs"]
        row = {
            "ours": flop / (b["ours"] * 1e6) / peak * 100,
            "onednn": flop / (b["onednn"] * 1e6) / peak * 100 if b["onednn"] else None,
            "roof": max(flop / (peak * 1e9), layer["bytes"] / (gbps * 1e9)) / (b["ours"] / 1e3) * 100,
            "ratio": b["onednn"] / b["ours"] if b["onednn"] else None,
        }
        classes.setdefault(layer_class(layer), []).append((name, row))
    print("%d layers; CPU variant %s; peak %.0f GFLOP/s (the best of %d runs' measurements)\n"
          % (len(best), "/".join(sorted(variants)), peak, len(peaks)))
    print("| class | layers | ours, % of FMA peak | oneDNN, % of FMA peak | ours, % of roofline | oneDNN / ours |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for c in ORDER:
        rows = classes.get(c)
        if not rows:
            continue
        names = ", ".join(n for n, _ in rows)
        print("| %s (%s) | %d | %.0f%% | %.0f%% | %.0f%% | %.2fx |" % (
            c, names, len(rows), geomean([r["ours"] for _, r in rows]),
            geomean([r["onednn"] for _, r in rows if r["onednn"]]),
            geomean([r["roof"] for _, r in rows]), geomean([r["ratio"] for _, r in rows if r["ratio"]])))



if __name__ == "__main__":
    main()
