#!/usr/bin/env python3
"""Checks a `deconv run` result against the numpy reference of the command-line tests
(tests/cli/cli_test.py: a scatter loop over the kernel taps written from the op's text, sharing
nothing with the library).

    scripts/check_example.py X.npy W.npy Y.npy [--strides 2,2] [--pads-begin 1,1] [--dilations 1,1]

The defaults are the spec's 2D GroupConvolutionBackpropData example. W one rank above X is a
grouped filter [G, C_IN, C_OUT, K...], else [C_IN, C_OUT, K...]. `deconv run --random` fills X
and W with small integers, so every sum is exact in f32 and Y must equal the reference exactly.
Exit 0 on a match, 1 on a mismatch (printing the worst element), 2 on unusable arguments.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cli"))
import cli_test  # noqa: E402  (the reference lives with the tests)


def ints(text):
    return [int(v) for v in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("x")
    ap.add_argument("w")
    ap.add_argument("y")
    ap.add_argument("--strides", type=ints, default=[2, 2])
    ap.add_argument("--pads-begin", type=ints, default=[1, 1])
    ap.add_argument("--dilations", type=ints, default=[1, 1])
    a = ap.parse_args()
    np = cli_test.np_()
    x, w, y = (cli_test.load(p) for p in (a.x, a.w, a.y))
    rank = x.ndim - 2
    for name, v in (("--strides", a.strides), ("--pads-begin", a.pads_begin), ("--dilations", a.dilations)):
        if len(v) != rank:
            ap.error(f"{name} {','.join(map(str, v))}: {len(v)} values for a rank-{rank} layer")
    want = cli_test.reference(x, w, w.ndim == x.ndim + 1, a.strides, a.pads_begin, a.dilations,
                              list(y.shape[2:]), np.float64)
    try:
        cli_test.check_close(y, want, 0, 0, os.path.basename(a.y))
    except AssertionError as e:
        print(f"MISMATCH: {e}")
        return 1
    print(f"{os.path.basename(a.y)} {list(y.shape)} equals the numpy reference exactly "
          f"({y.size} elements)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
