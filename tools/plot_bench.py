#!/usr/bin/env python3
"""Charts of a `deconv bench --json` result.

    python3 tools/plot_bench.py BENCH.json --out DIR

writes
  DIR/roofline.png  GFLOP/s against arithmetic intensity (FLOP per byte of input, filter and
                    output), ours and oneDNN per layer, under the file's compute ceiling
                    (peak_gflops) and bandwidth ceiling (peak_gbps);
  DIR/speedup.png   oneDNN's median time over ours per layer, with a line at 1.0.

The intensity is the one `deconv bench` uses for its roofline column: 2 * macs over the bytes
of the three tensors, each read or written once. The compute ceiling is measured by the bench
run when the file says "peak_gflops_measured": true; the bandwidth ceiling is never measured by
the run (it is `--peak-gbps`, default 41 GB/s), and the chart says so.

Exit status: 0 written; 2 the bench file is missing or malformed (one line `error: FILE: ...`);
1 anything else (no matplotlib, an unwritable DIR). Needs Debian's python3-matplotlib
(scripts/setup.sh installs it).
"""

import argparse
import json
import math
import os
import sys


class BadFile(Exception):
    """The bench file cannot be read or does not have the shape `deconv bench --json` writes."""


def fail(code, message):
    print("error: " + message, file=sys.stderr)
    sys.exit(code)


def number(obj, key, where, positive=True):
    v = obj.get(key)
    # bool is an int in Python; a JSON true is no number here.
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise BadFile("%s: '%s' is %s, not a number" % (where, key, "missing" if v is None else json.dumps(v)))
    if positive and v <= 0:
        raise BadFile("%s: '%s' is %s, not positive" % (where, key, json.dumps(v)))
    return float(v)


def load(path):
    """The bench file's machine facts and its timed layers, or BadFile."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BadFile("cannot read it: %s" % (e.strerror or e))
    except UnicodeDecodeError:
        raise BadFile("not UTF-8 text")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadFile("not JSON: %s at line %d column %d" % (e.msg, e.lineno, e.colno))
    if not isinstance(doc, dict):
        raise BadFile("the top level is a JSON %s, not the object `deconv bench --json` writes"
                      % type(doc).__name__)
    layers = doc.get("layers")
    if not isinstance(layers, list):
        raise BadFile("no 'layers' array (is this `deconv bench --json` output?)")
    peak_gflops = number(doc, "peak_gflops", "top level")
    peak_gbps = number(doc, "peak_gbps", "top level")
    rows = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, dict):
            raise BadFile("layers[%d] is not an object" % i)
        name = layer.get("name")
        if not isinstance(name, str) or not name:
            raise BadFile("layers[%d]: 'name' is missing or not a string" % i)
        where = "layer %s" % name
        # Layers the bench did not time (skipped for memory, no kernel) carry no ms_median.
        if "ms_median" not in layer:
            continue
        ms = number(layer, "ms_median", where)
        macs = number(layer, "macs", where)
        nbytes = number(layer, "bytes", where)
        row = {"name": name, "dtype": layer.get("dtype", "?"), "ms": ms,
               "flops": 2.0 * macs, "intensity": 2.0 * macs / nbytes, "dnn_ms": None}
        dnn = layer.get("onednn")
        if dnn is not None and not isinstance(dnn, dict):
            raise BadFile("%s: 'onednn' is not an object" % where)
        if dnn and "ms_median" in dnn:  # {"error": ...} when oneDNN did not run it
            row["dnn_ms"] = number(dnn, "ms_median", where + ", onednn")
        rows.append(row)
    if not rows:
        raise BadFile("no layer with timings (every layer has no 'ms_median')")
    return doc, rows, peak_gflops, peak_gbps


def machine_line(doc):
    parts = ["%s" % doc["cpu"]] if doc.get("cpu") else []
    parts.append("target %s" % doc.get("target", "?"))
    if doc.get("cpu_variant"):
        parts.append("variant %s" % doc["cpu_variant"])
    if doc.get("threads"):
        parts.append("%s threads" % doc["threads"])
    if doc.get("onednn_version"):
        parts.append("oneDNN %s" % doc["onednn_version"])
    parts.append("deconv %s" % doc.get("deconv_version", "?"))
    return ", ".join(parts)


def gflops(flops, ms):
    return flops / (ms * 1e-3) / 1e9


def roofline(plt, doc, rows, peak_gflops, peak_gbps, path):
    fig, ax = plt.subplots(figsize=(10, 6.5))
    xs = [r["intensity"] for r in rows]
    lo, hi = min(xs) / 2.0, max(xs) * 2.0
    ridge = peak_gflops / peak_gbps
    lo, hi = min(lo, ridge / 4.0), max(hi, ridge * 4.0)
    compute_label = ("compute %.0f GFLOP/s (FP32 FMA peak measured by the run)" % peak_gflops
                     if doc.get("peak_gflops_measured") is True else
                     "compute %.0f GFLOP/s (--peak-gflops, not measured by the run)" % peak_gflops)
    bandwidth_label = "bandwidth %.0f GB/s (--peak-gbps, not measured by the run)" % peak_gbps
    ax.plot([lo, ridge], [peak_gbps * lo, peak_gflops], color="0.35", linestyle="--", label=bandwidth_label)
    ax.plot([ridge, hi], [peak_gflops, peak_gflops], color="0.35", label=compute_label)
    for r in rows:
        ours = gflops(r["flops"], r["ms"])
        if r["dnn_ms"] is not None:
            dnn = gflops(r["flops"], r["dnn_ms"])
            ax.plot([r["intensity"]] * 2, [ours, dnn], color="0.8", linewidth=0.8, zorder=1)
        ax.annotate(r["name"], (r["intensity"], ours), xytext=(4, 2), textcoords="offset points",
                    fontsize=6.5, color="tab:blue")
    ax.scatter(xs, [gflops(r["flops"], r["ms"]) for r in rows], color="tab:blue", zorder=3,
               label="deconv")
    with_dnn = [r for r in rows if r["dnn_ms"] is not None]
    if with_dnn:
        ax.scatter([r["intensity"] for r in with_dnn], [gflops(r["flops"], r["dnn_ms"]) for r in with_dnn],
                   facecolors="none", edgecolors="tab:red", zorder=2, label="oneDNN (same run)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of input + filter + output)")
    ax.set_ylabel("GFLOP/s (2 x nominal MACs / median time)")
    ax.set_title("Roofline: %s\n%s" % (os.path.basename(doc.get("source", "")) or "bench", machine_line(doc)),
                 fontsize=10)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def speedup(plt, ticker, doc, rows, path):
    with_dnn = [r for r in rows if r["dnn_ms"] is not None]
    fig, ax = plt.subplots(figsize=(8, 0.28 * max(len(with_dnn), 8) + 1.6))
    if not with_dnn:
        ax.text(0.5, 0.5, "no oneDNN timings in this file", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
    else:
        ratios = [r["dnn_ms"] / r["ms"] for r in with_dnn]
        names = ["%s (%s)" % (r["name"], r["dtype"]) for r in with_dnn]
        ys = list(range(len(with_dnn)))[::-1]
        colors = ["tab:green" if x >= 1.0 else "tab:red" for x in ratios]
        # Bars grow from 1.0 either way, so a layer's bar length is its distance from parity.
        ax.barh(ys, [x - 1.0 for x in ratios], left=1.0, color=colors, height=0.7)
        ax.axvline(1.0, color="black", linewidth=1)
        for y, x in zip(ys, ratios):
            ax.text(max(x, 1.0), y, " %.2fx" % x, va="center", fontsize=7)
        ax.set_yticks(ys)
        ax.set_yticklabels(names, fontsize=7)
        ax.set_xscale("log")
        left, right = min(min(ratios), 1.0) / 1.5, max(max(ratios), 1.0) * 1.6
        ax.set_xlim(left, right)
        ax.set_xticks([t for t in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32) if left <= t <= right])
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: "%gx" % v))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        ax.set_xlabel("oneDNN median time / ours (> 1: ours is faster)")
        ax.set_title("Speed-up against oneDNN, geomean %.2fx over these %d layers\n%s" % (geo, len(ratios), machine_line(doc)), fontsize=10)
        ax.grid(True, axis="x", which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one `error:` line and exit 2, as the deconv command line does
        self.print_usage(sys.stderr)
        fail(2, message)


def main():
    ap = Parser(description="Roofline and speed-up charts of a `deconv bench --json` file.")
    ap.add_argument("bench", metavar="BENCH.json", help="output of `deconv bench --json`")
    ap.add_argument("--out", metavar="DIR", required=True,
                    help="folder for roofline.png and speedup.png (created if missing)")
    args = ap.parse_args()
    try:
        doc, rows, peak_gflops, peak_gbps = load(args.bench)
    except BadFile as e:
        fail(2, "%s: %s" % (args.bench, e))
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot as plt
        import matplotlib.ticker as ticker
    except ImportError:
        # A python3 ahead of Debian's on PATH (pyenv, a venv) may lack the package Debian's has.
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.access(system, os.X_OK):
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        fail(1, "matplotlib is not installed for %s (Debian: apt-get install python3-matplotlib; "
                "scripts/setup.sh installs it)" % sys.executable)
    try:
        os.makedirs(args.out, exist_ok=True)
        roof_png = os.path.join(args.out, "roofline.png")
        speed_png = os.path.join(args.out, "speedup.png")
        roofline(plt, doc, rows, peak_gflops, peak_gbps, roof_png)
        speedup(plt, ticker, doc, rows, speed_png)
    except OSError as e:
        fail(1, "%s: %s" % (e.filename or args.out, e.strerror or e))
    print("wrote %s and %s (%d layers)" % (roof_png, speed_png, len(rows)))


if __name__ == "__main__":
    main()
