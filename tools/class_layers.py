#!/usr/bin/env python3
"""Writes a suite of seeded random layers across the classes a deployment meets, in the format of
bench/layers.json, for `deconv bench --suite`: ranks 1-3, strides 1-4, kernels 1-7 (below,
equal to and above the stride), dilations, pads, output_padding, batches 1-4, dense, grouped,
depthwise and few-channel layers, both layouts.

The 25 layers of bench/layers.json are real ones; this suite is for finding classes that run far
behind oneDNN (a kernel that runs scalar, a rule fitted to other layers), which a geomean over a
few real layers hides. bench/class_layers.json is its output for seeds 7, 11 and 23:

    tools/class_layers.py --seeds 7 11 23 --count 40 > bench/class_layers.json
    deconv bench --suite bench/class_layers.json --threads 2 --repeats 5 --max-seconds 2
"""
import argparse
import json
import random


def layer(rng, seed, i):
    rank = rng.choice([1, 2, 2, 2, 3])
    s = rng.choice([1, 1, 2, 2, 2, 3, 4])
    k = rng.choice([1, 2, 3, 4, 5, 2 * s, s + 1])
    d = rng.choice([1, 1, 1, 2, 3]) if s == 1 else rng.choice([1, 1, 1, 1, 2])
    kind = rng.choice(["dense", "dense", "dense", "grouped", "dw", "few"])
    if kind == "dense":
        g, ci, co = 1, rng.choice([16, 32, 48, 64, 96, 128, 256]), rng.choice([8, 16, 24, 32, 64, 128])
    elif kind == "grouped":
        g, ci, co = rng.choice([2, 4, 8, 16]), rng.choice([4, 8, 16, 32]), rng.choice([4, 8, 16, 32])
    elif kind == "dw":
        g, ci, co = rng.choice([16, 32, 48, 96, 128]), 1, 1
    else:
        g, ci, co = rng.choice([1, 1, 2]), rng.choice([1, 3, 4, 8, 16, 64]), rng.choice([1, 2, 3, 4, 8])
    x = {1: [rng.choice([100, 400, 1000, 4000])], 2: [rng.choice([7, 14, 28, 32, 56, 64])] * 2,
         3: [rng.choice([8, 12, 16])] * 3}[rank]
    n = rng.choice([1, 1, 1, 2, 4])
    p = rng.randint(0, (k - 1) * d // 2) if k > 1 else 0
    op = [rng.choice([0, min(s - 1, 1)]) if s > 1 else 0] * rank
    lay = rng.choice(["ncx", "nxc"])
    return {"name": f"c{seed}_{i}_{kind}_{rank}d_s{s}k{k}d{d}_{lay}", "source": f"tools/class_layers.py seed {seed}",
            "N": n, "G": g, "C_in": ci, "C_out": co, "X": x, "K": [k] * rank, "strides": [s] * rank,
            "pads_begin": [p] * rank, "pads_end": [p] * rank, "dilations": [d] * rank, "output_padding": op,
            "dtype": "f32", "layout": lay}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[7, 11, 23])
    ap.add_argument("--count", type=int, default=40, help="layers per seed")
    a = ap.parse_args()
    layers = []
    for seed in a.seeds:
        rng = random.Random(seed)
        layers += [layer(rng, seed, i) for i in range(a.count)]
    about = ("Seeded random layers across classes (tools/class_layers.py --seeds " +
             " ".join(map(str, a.seeds)) + f" --count {a.count}): for finding classes far behind oneDNN.")
    print(json.dumps({"about": about, "layers": layers}, indent=1))


if __name__ == "__main__":
    main()
