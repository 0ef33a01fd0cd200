#!/usr/bin/env python3
"""The Python package's per-call overhead on a tiny layer: each Python way of running it against
back-to-back C++ Plan::run calls on the same tensors, in alternating rounds (the host drifts
between runs), medians of the rounds' per-call times.

    PYTHONPATH=build/python /usr/bin/python3 tools/python_overhead.py [--rounds 7] [--calls 2000]
"""

import argparse
import statistics
import time

import numpy as np

import deconv


def per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1,
                        help="deconv's CPU threads (1: the call path alone, no thread pool wake-up)")
    args = parser.parse_args()
    deconv.set_cpu_threads(args.threads)

    # A layer of a few hundred MACs: the time is the call's, not the kernel's.
    input_shape, weight_shape = [1, 4, 4, 4], [4, 4, 2, 2]
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(input_shape, dtype=np.float32)
    w_np = rng.standard_normal(weight_shape, dtype=np.float32)
    plan = deconv.Plan.conv_transpose(input_shape, weight_shape, "f32", stride=2)
    y_np = np.empty(plan.output_shape, np.float32)
    packed = plan.pack_filter(w_np)
    ways = {
        "C++ Plan::run (baseline)": lambda n: plan._plan._time_cpp_runs(x_np, w_np, y_np, n, 1),
        "Plan.run(x, w, out=y), numpy": lambda n: per_call(lambda: plan.run(x_np, w_np, out=y_np), n),
        "Plan.run(x, packed, out=y), numpy": lambda n: per_call(lambda: plan.run(x_np, packed, out=y_np), n),
        "Plan.run(x, w), numpy, new output": lambda n: per_call(lambda: plan.run(x_np, w_np), n),
        "conv_transpose2d(x, w, stride=2, out=y), numpy": lambda n: per_call(
            lambda: deconv.conv_transpose2d(x_np, w_np, stride=2, out=y_np), n),
    }
    try:
        import torch
        import deconv.torch as dt
        torch.set_num_threads(args.threads)
        x_t, w_t = torch.from_numpy(x_np), torch.from_numpy(w_np)
        y_t = torch.empty(plan.output_shape)
        module = dt.ConvTranspose2d(4, 4, 2, stride=2, bias=False)
        module.weight.data.copy_(w_t)

        def module_call():
            with torch.no_grad():
                module(x_t)
        ways["Plan.run(x, w, out=y), torch"] = lambda n: per_call(lambda: plan.run(x_t, w_t, out=y_t), n)
        ways["deconv.torch.ConvTranspose2d(x), no_grad"] = lambda n: per_call(module_call, n)
        ways["torch.nn.functional.conv_transpose2d (torch's own)"] = lambda n: per_call(
            lambda: torch.nn.functional.conv_transpose2d(x_t, w_t, stride=2), n)
    except ImportError:
        pass

    samples = {name: [] for name in ways}
    for name, fn in ways.items():
        fn(args.calls // 10)  # warm-up: plans, caches, the thread pool
    for _ in range(args.rounds):
        for name, fn in ways.items():
            samples[name].append(fn(args.calls))
    base = statistics.median(samples["C++ Plan::run (baseline)"])
    print(f"deconv {deconv.__version__} ({deconv.cpu_variant()}), {args.threads} thread(s), layer "
          f"{input_shape} * {weight_shape} s2, {args.rounds} alternating rounds of {args.calls} calls")
    print("| call | us per call | over C++ |")
    print("| --- | ---: | ---: |")
    for name, values in samples.items():
        med = statistics.median(values)
        print(f"| {name} | {med * 1e6:.2f} | {(med - base) * 1e6:+.2f} us |")


if __name__ == "__main__":
    main()
