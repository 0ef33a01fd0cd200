#!/usr/bin/env python3
"""Runs the CTest tests a ctest selection names, GoogleTest cases batched into shared processes.

    scripts/ctest_batched.py [--jobs N] [--batch K] [--timeout S] -- <ctest arguments>

Each GoogleTest case is a CTest test of its own (one process per case: gtest_discover_tests).
Under qemu-user and under ASan a process costs 0.2-0.3 s to start, which was most of CI's ARM64
and ASan test time. This runner asks ctest which tests the arguments select
(--show-only=json-v1), groups the GoogleTest cases that share a command, environment and working
folder, and runs up to K of them per process (--gtest_filter=a:b:...), N processes at a time.
Other tests (scripts, CLI runs) run one per process as CTest would run them.

A batch passes when it exits 0 and GoogleTest reports every case of it passed or skipped: a case
that matched nothing fails, as CTest's FAIL_REGULAR_EXPRESSION makes it fail. When a batch
fails, each of its cases runs again alone, so the summary names the failing cases, and a crash
names its case.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

FILTER = "--gtest_filter="


def selected_tests(ctest_args):
    out = subprocess.run(["ctest", "--show-only=json-v1", *ctest_args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["tests"]


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def environment(props):
    """The process environment CTest would give the test (ENVIRONMENT, then its modifications)."""
    env = dict(os.environ)
    for item in props.get("ENVIRONMENT", []):
        key, _, value = item.partition("=")
        env[key] = value
    for item in props.get("ENVIRONMENT_MODIFICATION", []):
        key, _, rest = item.partition("=")
        op, _, value = rest.partition(":")
        if op == "set":
            env[key] = value
        elif op == "unset":
            env.pop(key, None)
        elif op == "reset":
            env.pop(key, None)
            if key in os.environ:
                env[key] = os.environ[key]
        elif op in ("string_append", "string_prepend"):
            old = env.get(key, "")
            env[key] = old + value if op == "string_append" else value + old
        elif op in ("path_list_append", "path_list_prepend"):
            parts = [p for p in env.get(key, "").split(os.pathsep) if p]
            parts = parts + [value] if op == "path_list_append" else [value] + parts
            env[key] = os.pathsep.join(parts)
        else:
            sys.exit(f"ctest_batched: test {key!r} has ENVIRONMENT_MODIFICATION op {op!r}, "
                     "which this runner does not know")
    return env


# The test properties this runner honours; any other makes it stop rather than run a test unlike
# CTest would.
KNOWN = {"FAIL_REGULAR_EXPRESSION", "SKIP_REGULAR_EXPRESSION", "PASS_REGULAR_EXPRESSION",
         "SKIP_RETURN_CODE", "WILL_FAIL", "LABELS", "WORKING_DIRECTORY", "ENVIRONMENT",
         "ENVIRONMENT_MODIFICATION", "TIMEOUT"}


class Unit:
    """One process to run: a command, and the names of the CTest tests it covers. cases holds the
    GoogleTest cases of a batch; None for a test run as CTest runs it (props: its verdict)."""

    def __init__(self, command, names, cases, env, cwd, timeout, props=None):
        self.command, self.names, self.cases = command, names, cases
        self.env, self.cwd, self.timeout, self.props = env, cwd, timeout, props or {}


def plan(tests, batch, timeout):
    groups, units = {}, []
    for test in tests:
        props = properties(test)
        unknown = set(props) - KNOWN
        if unknown:
            sys.exit(f"ctest_batched: test {test['name']} has properties this runner does not "
                     f"honour: {', '.join(sorted(unknown))}")
        command = test["command"]
        cwd = props.get("WORKING_DIRECTORY")
        env_key = (tuple(props.get("ENVIRONMENT", [])),
                   tuple(props.get("ENVIRONMENT_MODIFICATION", [])))
        filters = [a for a in command if a.startswith(FILTER)]
        gtest = (len(filters) == 1 and "*" not in filters[0] and ":" not in filters[0]
                 and not set(props) & {"PASS_REGULAR_EXPRESSION", "SKIP_RETURN_CODE",
                                       "WILL_FAIL", "TIMEOUT"})
        if not gtest:
            units.append(Unit(command, [test["name"]], None, environment(props), cwd,
                              float(props.get("TIMEOUT", timeout)), props))
            continue
        rest = tuple(a for a in command if not a.startswith(FILTER))
        groups.setdefault((rest, env_key, cwd), []).append(
            (test["name"], filters[0][len(FILTER):], props))
    for (rest, _, cwd), members in groups.items():
        env = environment(members[0][2])
        # A case named twice (two CTest tests of one command and environment) would run once in
        # a batch: each repeat goes to a later batch.
        rounds = []
        for member in members:
            free = next((r for r in rounds if member[1] not in r), None)
            if free is None:
                rounds.append(free := {})
            free[member[1]] = member
        chunks = [c for r in rounds for c in
                  (list(r.values())[i:i + batch] for i in range(0, len(r), batch))]
        for chunk in chunks:
            command = list(rest) + [FILTER + ":".join(case for _, case, _ in chunk)]
            units.append(Unit(command, [n for n, _, _ in chunk], [c for _, c, _ in chunk], env,
                              cwd, timeout))
    return units


def ctest_verdict(props, code, output):
    """Whether CTest would count a test of these properties passed (or skipped)."""
    if code is None:
        return False
    if code == props.get("SKIP_RETURN_CODE") or any(
            re.search(r, output) for r in props.get("SKIP_REGULAR_EXPRESSION", [])):
        return True
    if "PASS_REGULAR_EXPRESSION" in props:
        ok = any(re.search(r, output) for r in props["PASS_REGULAR_EXPRESSION"])
    else:
        ok = code == 0
    if any(re.search(r, output) for r in props.get("FAIL_REGULAR_EXPRESSION", [])):
        ok = False
    return ok != (str(props.get("WILL_FAIL", "")).upper() in ("1", "ON", "TRUE", "YES"))


def run(unit):
    try:
        proc = subprocess.run(unit.command, env=unit.env, cwd=unit.cwd, capture_output=True,
                              text=True, errors="replace", timeout=unit.timeout)
        output, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        output, code = output + f"\nctest_batched: timed out after {unit.timeout:.0f} s", None
    ok = code == 0
    if unit.cases is None:
        ok = ctest_verdict(unit.props, code, output)
    elif ok:
        passed = re.search(r"^\[  PASSED  \] (\d+) tests?", output, re.M)
        skipped = re.search(r"^\[  SKIPPED \] (\d+) tests?", output, re.M)
        count = (int(passed.group(1)) if passed else 0) + (int(skipped.group(1)) if skipped else 0)
        ok = count == len(unit.cases)
        if not ok:
            output += (f"\nctest_batched: {len(unit.cases)} cases asked for, GoogleTest ran "
                       f"{count}")
    return unit, ok, output


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--batch", type=int, default=64, help="cases per process")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per process")
    parser.add_argument("ctest_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    ctest_args = args.ctest_args[1:] if args.ctest_args[:1] == ["--"] else args.ctest_args
    if args.jobs < 1 or args.batch < 1:
        sys.exit("ctest_batched: --jobs and --batch must be at least 1")

    start = time.time()
    tests = selected_tests(ctest_args)
    if not tests:
        sys.exit(f"ctest_batched: ctest {' '.join(ctest_args)} selects no tests")
    units = plan(tests, args.batch, args.timeout)
    # The biggest batches first, so that the last ones to start are short.
    units.sort(key=lambda u: -len(u.names))
    failed = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        retry, batch_logs = [], []
        for unit, ok, output in pool.map(run, units):
            if ok:
                continue
            if len(unit.names) == 1:
                failed.append((unit.names[0], output))
            else:
                batch_logs.append((unit.names, output))
                retry += [Unit(unit.command[:-1] + [FILTER + case], [name], [case], unit.env,
                               unit.cwd, unit.timeout)
                          for name, case in zip(unit.names, unit.cases)]
        for unit, ok, output in pool.map(run, retry):
            if not ok:
                failed.append((unit.names[0], output))

    for name, output in failed:
        print(f"---------------- {name} failed\n{output[-6000:]}", flush=True)
    total = len(tests)
    print(f"ctest_batched: {total - len(failed)} of {total} tests passed in {len(units)} processes "
          f"({time.time() - start:.0f} s)")
    if failed:
        print("ctest_batched: failed: " + " ".join(n for n, _ in failed))
        sys.exit(1)
    if retry:
        # Each case passes alone but not in its batch: the cases disturb each other in one
        # process (state a case leaves behind), which is a defect of its own.
        for names, output in batch_logs:
            print(f"---------------- batch of {' '.join(names)}\n{output[-6000:]}")
        print(f"ctest_batched: a batch of {len(retry)} cases failed, yet each passed alone")
        sys.exit(1)


if __name__ == "__main__":
    main()
