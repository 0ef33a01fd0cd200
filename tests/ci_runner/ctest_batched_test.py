#!/usr/bin/env python3
"""Checks scripts/ctest_batched.py against the probe's known outcomes (batch_probe_test.cpp).

    ctest_batched_test.py --runner scripts/ctest_batched.py --build <build folder>

Each check runs the runner over the probe's CTest tests (batch_probe. and batch_probe_two.) with
the probe asked, through the environment, to pass, fail, crash, skip or leave state behind, and
compares the exit status, the count of passed tests and the failing names with what CTest itself
would report. Exits 1 naming the first check that does not hold.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SELECT = "^batch_probe(_two)?\\."


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", required=True)
    parser.add_argument("--build", required=True)
    args = parser.parse_args()

    listed = json.loads(subprocess.run(["ctest", "--test-dir", args.build, "--show-only=json-v1",
                                        "-R", SELECT], check=True, capture_output=True,
                                       text=True).stdout)["tests"]
    names = sorted(t["name"] for t in listed)
    if len(names) != 14:
        sys.exit(f"expected the probe's 7 cases twice, ctest lists {len(names)}: {names}")

    def run(env_extra, *extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("BATCH_PROBE_")}
        env.update(env_extra)
        proc = subprocess.run([sys.executable, args.runner, "--jobs", "2", *extra, "--",
                               "--test-dir", args.build, "-R", SELECT],
                              env=env, capture_output=True, text=True)
        return proc.returncode, proc.stdout + proc.stderr

    def failed_names(output):
        m = re.search(r"^ctest_batched: failed: (.*)$", output, re.M)
        return sorted(m.group(1).split()) if m else []

    def both_registrations(case):  # the CTest names of one probe case, sorted
        return [f"batch_probe.BatchProbe.{case}", f"batch_probe_two.BatchProbe.{case}"]

    def check(what, cond, output):
        if not cond:
            print(output)
            sys.exit(f"ctest_batched_test: {what}")
        print(f"ok: {what}")

    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "two.log")
        rc, out = run({"BATCH_PROBE_LOG": log})
        check("a passing run exits 0 with every test passed, in one process per environment",
              rc == 0 and "14 of 14 tests passed in 2 processes" in out, out)
        seen = sorted(open(log).read().split())
        check("each registration ran with its own environment (ENVIRONMENT and its modification)",
              seen == ["two=", "two=2"], f"{out}\nlog: {seen}")

    rc, out = run({"BATCH_PROBE_FAIL": "1"})
    check("a failing case fails the run and is named, once per registration",
          rc == 1 and "12 of 14 tests passed" in out and
          failed_names(out) == both_registrations("FailsOnRequest"), out)

    rc, out = run({"BATCH_PROBE_CRASH": "1"})
    check("a crash fails the run and names the crashing case, not its batch",
          rc == 1 and failed_names(out) == both_registrations("CrashesOnRequest"), out)

    rc, out = run({"BATCH_PROBE_SKIP": "1"})
    check("skipped cases count as CTest counts them (not failures)",
          rc == 0 and "14 of 14 tests passed" in out, out)

    rc, out = run({"BATCH_PROBE_HIDE": "1"})
    check("a case that the binary no longer runs (exit 0, fewer cases run) fails and is named",
          rc == 1 and failed_names(out) == both_registrations("Passes"), out)

    rc, out = run({"BATCH_PROBE_STATE": "1"})
    check("cases that pass alone but not in one process fail the run",
          rc == 1 and "yet each passed alone" in out, out)

    rc, out = run({"BATCH_PROBE_STATE": "1"}, "--batch", "1")
    check("one case per process is CTest's own isolation",
          rc == 0 and "14 of 14 tests passed in 14 processes" in out, out)

    rc, out = subprocess.run([sys.executable, args.runner, "--", "--test-dir", args.build, "-R",
                              "^no_such_test$"], capture_output=True, text=True).returncode, ""
    check("a selection of no tests fails", rc != 0, out)


if __name__ == "__main__":
    main()
