#!/usr/bin/env python3
"""Where a build's time went, from its .ninja_log: the kernel generator steps by family and rank.

  tools/build_times.py BUILD_DIR [--markdown] [--top N] [--json OUT]

Each generator step of the log (the Halide kernel libraries of generators/, one per kernel and
CPU variant) is attributed to its kernel family (the op of deconv_<op>_r<rank>_<dtype>), rank,
dtype and variant. The table gives, per family and rank, the steps, their summed and longest
seconds, and the code size of their objects (from the build folder). Then the other steps (the
generator programs, the dispatcher, the command line, the tests) by kind, the slowest steps, and
the totals: summed step time and the wall time from the first step's start to the last's end.

The log keeps the newest run of each output: after an incremental build it mixes runs. Time a
fresh build folder (and a cold kernel cache: -DDECONV_KERNEL_CACHE=OFF, or cmake/kernel_cache.py
--clear) for the table of docs/build-matrix.md.
"""

import argparse
import collections
import json
import os
import re
import sys

KERNEL = re.compile(r"^generators/(deconv_(?:cuda_|opencl_)?(.+?)_r(\d)_([a-z0-9]+?))(?:_(avx512|avx2|sse41|dotprod_fp16|neon))?\.h$")


def read_log(path):
    """Steps as (start_ms, end_ms, [outputs]), one per command (outputs of one command share times and hash)."""
    steps = collections.OrderedDict()
    with open(path) as f:
        header = f.readline()
        if not header.startswith("# ninja log v"):
            sys.exit("build_times: %s is not a .ninja_log" % path)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            start, end, _, output, cmd_hash = parts[:5]
            key = (int(start), int(end), cmd_hash)
            steps.setdefault(key, []).append(output)
    return [(k[0], k[1], outs) for k, outs in steps.items()]


def object_bytes(build, outputs):
    total = 0
    for o in outputs:
        if o.endswith(".o") or o.endswith(".a"):
            p = os.path.join(build, o)
            if os.path.exists(p):
                total += os.path.getsize(p)
    return total


def classify(outputs):
    for o in outputs:
        m = KERNEL.match(o)
        if m:
            name, op, rank, dtype, variant = m.groups()
            device = "cuda" if "_cuda_" in name else "opencl" if "_opencl_" in name else "cpu"
            return {"kind": "kernel", "name": name, "op": op, "rank": int(rank), "dtype": dtype,
                    "variant": variant or "-", "device": device}
    first = outputs[0]
    if first.startswith("generators/CMakeFiles") or re.match(r"generators/deconv_\w*generators$", first):
        return {"kind": "generator programs"}
    if ".runtime" in first:
        return {"kind": "Halide runtime"}
    if first.startswith("generators/") and first.endswith(".ll"):
        return {"kind": "bf16 dot-product kernels (generator)"}
    if re.match(r"generators/deconv_\w+_bf16(_avx512)?\.o$", first):
        return {"kind": "bf16 dot-product kernels (llc)"}
    if first.startswith("generators/") and first.endswith(".a"):
        return {"kind": "kernel archives"}
    if first.startswith("runtime/"):
        return {"kind": "dispatcher (runtime/)"}
    if first.startswith("tools/"):
        return {"kind": "command line (tools/)"}
    if first.startswith("tests/"):
        return {"kind": "tests"}
    return {"kind": "other"}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", help="a build folder with a .ninja_log")
    p.add_argument("--markdown", action="store_true", help="tables as Markdown")
    p.add_argument("--top", type=int, default=10, help="how many of the slowest steps to list")
    p.add_argument("--json", help="also write every step's record here")
    p.add_argument("--cmake-table", help="write the step costs the configure step's estimate reads "
                   "(cmake/build_step_seconds.cmake)")
    p.add_argument("--machine", default="", help="the CPU the build ran on, for --cmake-table")
    p.add_argument("--cxx-from", help="for --cmake-table: another build folder whose log gives the generator "
                   "programs', dispatcher's and command line's times (a newer build of those)")
    a = p.parse_args()
    steps = read_log(os.path.join(a.build, ".ninja_log"))
    if not steps:
        sys.exit("build_times: %s/.ninja_log has no steps" % a.build)
    records = []
    for start, end, outs in steps:
        r = classify(outs)
        r["seconds"] = (end - start) / 1000.0
        r["bytes"] = object_bytes(a.build, outs) if r["kind"] == "kernel" else 0
        r["outputs"] = outs
        records.append(r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)

    kernels = [r for r in records if r["kind"] == "kernel"]
    if a.cmake_table:
        cxx = records
        if a.cxx_from:
            cxx = [dict(classify(outs), seconds=(end - start) / 1000.0)
                   for start, end, outs in read_log(os.path.join(a.cxx_from, ".ninja_log"))]
            cxx += [r for r in records if r["kind"] == "tests"]
        write_cmake_table(a.cmake_table, cxx, kernels, a.machine or cpu_model())
    fam = collections.OrderedDict()
    for r in sorted(kernels, key=lambda r: (r["device"], r["op"], r["rank"])):
        fam.setdefault((r["device"], r["op"], r["rank"]), []).append(r)
    rows = []
    for (device, op, rank), rs in fam.items():
        secs = [r["seconds"] for r in rs]
        rows.append([op if device == "cpu" else "%s (%s)" % (op, device), str(rank), str(len(rs)), "%.0f" % sum(secs),
                     "%.1f" % max(secs), "%.0f" % (sum(r["bytes"] for r in rs) / 1024.0)])
    rows.sort(key=lambda r: -float(r[3]))
    table("kernel steps by family and rank", ["family", "rank", "steps", "seconds", "longest", "KiB"], rows, a.markdown)

    kinds = collections.OrderedDict()
    for r in records:
        kinds.setdefault(r["kind"], []).append(r["seconds"])
    total = sum(r["seconds"] for r in records)
    rows = [[k, str(len(v)), "%.0f" % sum(v), "%.0f%%" % (100.0 * sum(v) / total if total else 0)]
            for k, v in sorted(kinds.items(), key=lambda kv: -sum(kv[1]))]
    table("all steps by kind", ["kind", "steps", "seconds", "share"], rows, a.markdown)

    slow = sorted(records, key=lambda r: -r["seconds"])[:a.top]
    rows = [["%.1f" % r["seconds"], r.get("name", r["kind"]) + ("_" + r["variant"] if r.get("variant", "-") != "-" else "")]
            for r in slow]
    table("slowest steps", ["seconds", "step"], rows, a.markdown)

    wall = (max(s[1] for s in steps) - min(s[0] for s in steps)) / 1000.0
    over = sum(1 for r in kernels if r["seconds"] > 60)
    print("\n%d steps, %.0f step-seconds (kernels %.0f), %.0f s from the first step's start to the last's end; "
          "%d kernel steps over 60 s, the longest %.1f s" %
          (len(records), total, sum(r["seconds"] for r in kernels), wall, over,
           max([r["seconds"] for r in kernels] or [0])))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def write_cmake_table(path, records, kernels, machine):
    """Mean milliseconds per kernel step by op.rank.variant and op.rank, and the C++ parts' sums
    (from `records`)."""
    def mean_ms(values):
        return int(round(1000.0 * sum(values) / len(values)))

    by = collections.OrderedDict()
    for r in kernels:
        variant = "gpu" if r["device"] != "cpu" else ("" if r["variant"] == "-" else r["variant"])
        by.setdefault("%s.%d.%s" % (r["op"], r["rank"], variant), []).append(r["seconds"])
        by.setdefault("%s.%d" % (r["op"], r["rank"]), []).append(r["seconds"])
    kinds = collections.defaultdict(float)
    for r in records:
        kinds[r["kind"]] += r["seconds"]
    programs = kinds["generator programs"] + kinds["dispatcher (runtime/)"] + kinds["Halide runtime"] + kinds["other"]
    lines = ["# Generated by tools/build_times.py --cmake-table from a build's .ninja_log: the mean",
             "# milliseconds of each kind of build step, which cmake/DeconvBuildEstimate.cmake sums into the",
             "# configure step's estimate. Kernel steps by op.rank.variant (gpu: CUDA and OpenCL) and",
             "# op.rank; then the C++ parts in all.",
             "set(DECONV_STEP_MACHINE \"%s\")" % machine.replace('"', "'"),
             "set(DECONV_STEP_MS_kernel %d)" % mean_ms([r["seconds"] for r in kernels] or [30]),
             "set(DECONV_STEP_MS_programs %d)" % int(1000 * programs),
             "set(DECONV_STEP_MS_cli %d)" % int(1000 * kinds["command line (tools/)"]),
             "set(DECONV_STEP_MS_tests %d)" % int(1000 * kinds["tests"])]
    for key, values in sorted(by.items()):
        lines.append("set(DECONV_STEP_MS_%s %d)" % (key, mean_ms(values)))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def table(title, header, rows, markdown):
    print("\n" + title + ":")
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("| " + " | ".join("---" if i == 0 else "---:" for i in range(len(header))) + " |")
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
