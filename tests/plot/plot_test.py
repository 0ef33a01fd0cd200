#!/usr/bin/env python3
"""Tests of tools/plot_bench.py (CTest label: plot).

    plot_test.py SCRIPT CASE     CASE: writes_pngs | refuses_malformed

writes_pngs runs the script on data/bench_2026-11-26_zen4.json (a `deconv bench --json` file
written by hand, in bench.cpp's format, from four layers of a table the main job printed,
plus a skipped layer) and checks that both charts are non-empty PNG files.
refuses_malformed gives it broken files and checks exit status 2 and one `error:` line naming
the file and the problem.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "data", "bench_2026-11-26_zen4.json")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(script, bench, out):
    return subprocess.run([sys.executable, script, bench, "--out", out],
                          capture_output=True, text=True, timeout=120)


def writes_pngs(script, tmp):
    out = os.path.join(tmp, "charts")  # not there yet: the script makes it
    r = run(script, SAMPLE, out)
    assert r.returncode == 0, "exit %d\n%s" % (r.returncode, r.stderr)
    for name in ("roofline.png", "speedup.png"):
        path = os.path.join(out, name)
        assert os.path.isfile(path), "%s was not written" % path
        with open(path, "rb") as f:
            data = f.read()
        assert data.startswith(PNG_MAGIC), "%s is not a PNG" % path
        # A chart with axes, points and text is tens of KiB; an empty figure is a few.
        assert len(data) > 10000, "%s holds only %d bytes" % (path, len(data))
    assert "4 layers" in r.stdout, r.stdout  # the skipped layer is left out


def refuses_malformed(script, tmp):
    with open(SAMPLE, encoding="utf-8") as f:
        good = json.load(f)

    def variant(edit):
        doc = json.loads(json.dumps(good))
        edit(doc)
        return json.dumps(doc)

    def drop_macs(doc):
        del doc["layers"][0]["macs"]

    def text_peak(doc):
        doc["peak_gflops"] = "fast"

    def no_timings(doc):
        for layer in doc["layers"]:
            layer.pop("ms_median", None)

    def bad_onednn(doc):
        doc["layers"][1]["onednn"]["ms_median"] = -1

    cases = [
        ("truncated.json", '{"layers": [', "not JSON"),
        ("list.json", "[1, 2]", "top level"),
        ("no_layers.json", '{"peak_gflops": 1, "peak_gbps": 1}', "'layers'"),
        ("no_macs.json", variant(drop_macs), "layer ov_spec_1d: 'macs' is missing"),
        ("text_peak.json", variant(text_peak), "'peak_gflops'"),
        ("no_timings.json", variant(no_timings), "no layer with timings"),
        ("bad_onednn.json", variant(bad_onednn), "not positive"),
        ("missing.json", None, "cannot read"),
    ]
    for name, text, problem in cases:
        path = os.path.join(tmp, name)
        if text is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(tmp, "out_" + name)
        r = run(script, path, out)
        assert r.returncode == 2, "%s: exit %d, want 2\n%s" % (name, r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), "%s: stderr %r" % (name, r.stderr)
        assert path in lines[0] and problem in lines[0], "%s: %r lacks %r" % (name, lines[0], problem)
        assert not os.path.exists(out), "%s: wrote %s although the file was refused" % (name, out)


def main():
    script, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        {"writes_pngs": writes_pngs, "refuses_malformed": refuses_malformed}[case](script, tmp)
    print("Success!")


if __name__ == "__main__":
    main()
