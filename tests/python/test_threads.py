"""deconv from several Python threads at once, and without the GIL.

* Four threads run, each on its own tensors and all at the same time (a barrier starts them
  together), a shared Plan (with the filter as it is and packed once, shared), a plan of their
  own and conv_transpose2d, in f32, bf16, f16 and i8; every result must equal, bit for bit, the
  result of the same call made before on one thread (same kernels, same data: the same bits).
* The GIL is released while a kernel runs: a pure-Python thread increments a counter, sleeping
  100 us between increments (each sleep releases the GIL), while the main thread runs a layer of
  a few ms on one kernel thread (so that a core stays free), from numpy arrays into a
  preallocated out= (a path with no other GIL release), again and again for up to 3 s: on a
  loaded 2-core host the counter thread may wait longer than one run (2.5 ms on Zen 4) for a
  core, so one run, or five, cannot tell. The
  switch interval is raised to 30 s for the test, so the interpreter never takes the GIL from
  the main thread by itself: the counter can move during the call only if deconv released it.
  A pure-Python busy loop of the same length is the control: there the counter must not move.
"""

import sys
import threading
import time

import numpy as np
import torch

import deconv

THREADS = 4
ITERATIONS = 12


def _tensors(seed, dtype):
    g = torch.Generator().manual_seed(seed)
    if dtype in (torch.int8,):
        x = torch.randint(-8, 8, (2, 8, 9, 10), generator=g, dtype=dtype)
        w = torch.randint(-8, 8, (8, 3, 3, 4), generator=g, dtype=dtype)
    else:
        x = torch.randn(2, 8, 9, 10, generator=g).to(dtype)
        w = torch.randn(8, 3, 3, 4, generator=g).to(dtype)
    return x, w


ARGS = dict(stride=2, padding=1, output_padding=1, groups=2)


def test_concurrent_calls_match_single_threaded():
    dtypes = [torch.float32, torch.bfloat16, torch.float16, torch.int8]
    shared = deconv.Plan.conv_transpose([2, 8, 9, 10], [8, 3, 3, 4], torch.float32, **ARGS)
    w_shared = _tensors(99, torch.float32)[1]
    packed = shared.pack_filter(w_shared)
    jobs = []
    for t in range(THREADS):
        x, w = _tensors(t, dtypes[t % len(dtypes)])
        xf = _tensors(100 + t, torch.float32)[0]
        own = deconv.Plan.conv_transpose(list(x.shape), list(w.shape), x.dtype, **ARGS)
        # What each call gives on one thread, before any concurrency.
        expected = (shared.run(xf, w_shared), shared.run(xf, packed), own.run(x, w),
                    deconv.conv_transpose2d(x, w, **ARGS))
        jobs.append((x, w, xf, own, expected))

    barrier = threading.Barrier(THREADS)
    errors, mismatches = [], []

    def work(t):
        x, w, xf, own, expected = jobs[t]
        try:
            barrier.wait()
            out = torch.empty_like(expected[0])
            for i in range(ITERATIONS):
                got = (shared.run(xf, w_shared), shared.run(xf, packed, out=out), own.run(x, w),
                       deconv.conv_transpose2d(x, w, **ARGS))
                for k, (g, e) in enumerate(zip(got, expected)):
                    if not torch.equal(g, e):
                        mismatches.append((t, i, k))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append((t, repr(e)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "a thread hung"
    assert not errors, errors
    assert not mismatches, f"(thread, iteration, call) that differ from the single-threaded result: {mismatches}"


def test_gil_is_released_while_a_kernel_runs():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 64, 44, 44)).astype(np.float32)
    w = rng.standard_normal((64, 64, 4, 4)).astype(np.float32)
    plan = deconv.Plan.conv_transpose(list(x.shape), list(w.shape), "f32", stride=2)
    packed = plan.pack_filter(w)
    out = np.empty(plan.output_shape, np.float32)
    threads = deconv.cpu_threads()
    deconv.set_cpu_threads(1)  # the kernel on the calling thread: a core stays free for the counter
    t0 = time.perf_counter()
    plan.run(x, packed, out=out)  # warm up; and its length for the control loop
    seconds = max(0.02, time.perf_counter() - t0)

    state = {"count": 0, "stop": False}

    def count():
        while not state["stop"]:
            state["count"] += 1
            time.sleep(0.0001)

    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    counter = threading.Thread(target=count, daemon=True)
    try:
        counter.start()
        while state["count"] < 3:  # the counter runs
            time.sleep(0.001)
        # Control: pure Python holds the GIL; the counter cannot move.
        before = state["count"]
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        control = state["count"] - before
        during = []
        give_up = time.perf_counter() + 3.0
        while time.perf_counter() < give_up:
            before = state["count"]
            plan.run(x, packed, out=out)
            during.append(state["count"] - before)
            if during[-1] > 0:
                break
    finally:
        state["stop"] = True
        sys.setswitchinterval(old)
        deconv.set_cpu_threads(threads)
        counter.join(timeout=10)
    assert control == 0, f"the control loop let the counter move ({control}): the test cannot tell"
    assert max(during) > 0, f"the counter did not move during {len(during)} runs (3 s): " \
                            "Plan.run holds the GIL while its kernel runs"
