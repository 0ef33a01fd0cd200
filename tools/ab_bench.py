#!/usr/bin/env python3
"""Two builds of deconv timed against each other and against oneDNN, in alternating rounds.

Hosts drift 1.1-1.7x between runs, so one run per build says little. This runs `deconv bench
--json` of build A, then of build B, for --rounds rounds (the order alternating), keeps each
side's best median per layer, and prints one Markdown table: each layer's time on A and B, B's
speed over A's (A ms / B ms), and oneDNN's best time over B's; then the geomean and the
time-weighted ratio (sum of A's times over sum of B's) of each column. Unchanged layers are the
control: their A/B ratio is the noise.

    tools/ab_bench.py --a /work/base/build --b build --rounds 3 -- --suite bench/layers.json --threads 2
    DECONV_CPU_VARIANT=avx2 ONEDNN_MAX_CPU_ISA=AVX2 tools/ab_bench.py --a OLD --b NEW -- --threads 2

Arguments after `--` go to every `deconv bench` run (both builds the same).
"""
import argparse
import json
import math
import subprocess
import sys


def run(build, extra):
    cmd = [build.rstrip("/") + "/tools/deconv", "bench", "--json"] + extra
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="build folder of A (before)")
    ap.add_argument("--b", required=True, help="build folder of B (after)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--save-b", metavar="FILE", help="write B's last run (bench --json) here, for tools/plot_bench.py")
    ap.add_argument("bench_args", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    extra = [x for x in o.bench_args if x != "--"]
    if o.rounds < 1:
        ap.error("--rounds must be at least 1")
    best = {"a": {}, "b": {}, "onednn": {}}
    order, machine = [], None
    for r in range(o.rounds):
        for side in (("a", "b") if r % 2 == 0 else ("b", "a")):
            doc = run(getattr(o, side), extra)
            if side == "b" and o.save_b:
                with open(o.save_b, "w") as f:
                    json.dump(doc, f, indent=1)
            machine = machine or doc
            for layer in doc["layers"]:
                name = layer["name"]
                if name not in order:
                    order.append(name)
                ms = layer.get("ms_median")
                if ms:
                    best[side][name] = min(ms, best[side].get(name, math.inf))
                d = (layer.get("onednn") or {}).get("ms_median")
                if d:
                    best["onednn"][name] = min(d, best["onednn"].get(name, math.inf))
            print("round %d: %s done" % (r + 1, side), file=sys.stderr)
    print("%d rounds, alternating; cpu variant %s, %s threads; best median of each side (ms)\n"
          % (o.rounds, machine.get("cpu_variant"), machine.get("threads")))
    print("| layer | A ms | B ms | A / B | oneDNN ms | oneDNN / B |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    ab, db, sum_a, sum_b, sum_d, sum_bd = [], [], 0.0, 0.0, 0.0, 0.0
    for name in order:
        a, b, d = best["a"].get(name), best["b"].get(name), best["onednn"].get(name)
        if not (a and b):
            print("| %s | %s | %s | | | |" % (name, a or "-", b or "-"))
            continue
        ab.append(a / b)
        sum_a, sum_b = sum_a + a, sum_b + b
        cell = "| | "
        if d:
            db.append(d / b)
            sum_d, sum_bd = sum_d + d, sum_bd + b
            cell = "| %.3f | %.2fx |" % (d, d / b)
        print("| %s | %.3f | %.3f | %.3f %s" % (name, a, b, a / b, cell))
    print("| **geomean (%d layers)** | | | **%.3f** | | **%.2fx** |" % (len(ab), geomean(ab), geomean(db)))
    if sum_b and sum_bd:
        print("| time-weighted | %.2f | %.2f | %.3f | | %.2fx |" % (sum_a, sum_b, sum_a / sum_b, sum_d / sum_bd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
