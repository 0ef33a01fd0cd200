#!/usr/bin/env python3
"""The kernel cache (cmake/kernel_cache.py) on a stand-in generator: a script that writes its
kernel files into the -o folder and counts its runs. Checks that a second identical step copies
instead of generating, that any change of key (arguments, generator binary, toolchain, HL_*
variables) generates again, that corrupt or partial entries are rebuilt and never used, that a
failing generator stores nothing, and that other commands run unchanged.

  kernel_cache_test.py CMAKE_SOURCE_DIR
"""

import os
import shutil
import subprocess
import sys
import tempfile

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
LAUNCHER = os.path.abspath(os.path.join(SRC, "cmake", "kernel_cache.py"))

GENERATOR = r"""#!/usr/bin/env python3
# A stand-in Halide generator: -n NAME -o DIR target=... k=v...; writes NAME.h and NAME.o.
import os, sys
args = sys.argv[1:]
out = args[args.index("-o") + 1]
name = args[args.index("-n") + 1]
with open(os.environ["FAKE_GEN_COUNT"], "a") as f:
    f.write(name + "\n")
if "fail=1" in args:
    sys.exit(3)
body = " ".join(a for a in args if "=" in a) + " %VERSION%"
for ext in (".h", ".o"):
    with open(os.path.join(out, name + ext), "w") as f:
        f.write(name + ext + ": " + body + "\n")
"""

failures = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def main():
    work = tempfile.mkdtemp()
    try:
        run_all(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


def run_all(work):
    cache = os.path.join(work, "cache")
    gen = os.path.join(work, "gen")
    count = os.path.join(work, "count")
    log = os.path.join(work, "log")

    def write_generator(version):
        with open(gen, "w") as f:
            f.write(GENERATOR.replace("%VERSION%", version))
        os.chmod(gen, 0o755)

    def runs():
        return len(open(count).read().split()) if os.path.exists(count) else 0

    def events():
        return open(log).read().split("\n")[-2].split()[0] if os.path.exists(log) else ""

    env = dict(os.environ, FAKE_GEN_COUNT=count, DECONV_KERNEL_CACHE_LOG=log)
    for k in list(env):
        if k.startswith("HL_"):
            del env[k]

    def step(out, *params, toolchain="tc1", extra_env=None):
        os.makedirs(out, exist_ok=True)
        e = dict(env, **(extra_env or {}))
        cmd = [sys.executable, LAUNCHER, "--dir", cache, "--toolchain", toolchain, "--", gen, "-n", "k",
               "-o", out, "target=x86-64-linux-avx2"] + list(params)
        return subprocess.run(cmd, env=e, cwd=work).returncode

    write_generator("v1")
    out1, out2 = os.path.join(work, "b1"), os.path.join(work, "b2")
    check("a first step generates", step(out1, "rank=2") == 0 and runs() == 1 and events() == "miss")
    first = open(os.path.join(out1, "k.o")).read()
    check("a second build folder copies it", step(out2, "rank=2") == 0 and runs() == 1 and events() == "hit")
    check("the copy is the generated file", open(os.path.join(out2, "k.o")).read() == first)
    check("the copy is newer than the generator (the build does not rerun the step)",
          os.path.getmtime(os.path.join(out2, "k.o")) >= os.path.getmtime(gen))
    check("other parameters generate", step(out2, "rank=3") == 0 and runs() == 2 and events() == "miss")
    check("another toolchain generates", step(out2, "rank=2", toolchain="tc2") == 0 and runs() == 3)
    check("an HL_ variable generates", step(out2, "rank=2", extra_env={"HL_LLVM_ARGS": "-x"}) == 0 and runs() == 4)
    write_generator("v2")
    check("a changed generator binary generates", step(out2, "rank=2") == 0 and runs() == 5)
    check("its output is its own", "v2" in open(os.path.join(out2, "k.o")).read())

    # Corrupt entries: a changed byte, a missing file, a missing manifest.
    def entry_files(name):
        found = []
        for root, _, names in os.walk(cache):
            if os.path.relpath(root, cache).split(os.sep)[0] != "tmp":  # the scratch folders
                found += [os.path.join(root, n) for n in names if n == name]
        return found

    for what, damage in (("an entry with a changed byte", lambda p: open(p, "a").write("x")),
                         ("an entry with a missing file", os.remove)):
        for p in entry_files("k.o"):
            damage(p)
        before = runs()
        ok = step(out2, "rank=2") == 0 and runs() == before + 1 and open(log).read().split("\n")[-3:-1] == [
            "corrupt k", "miss k"]
        check(what + " is rebuilt, not used", ok and "v2" in open(os.path.join(out2, "k.o")).read())
        check(what + ": the rebuilt entry is used next", step(out1, "rank=2") == 0 and runs() == before + 1)
    for p in entry_files("manifest.json"):
        os.remove(p)
    before = runs()
    check("an entry without its manifest (a partial store) is rebuilt",
          step(out2, "rank=2") == 0 and runs() == before + 1)

    before = runs()
    check("a failing generator fails the step", step(out2, "fail=1") == 3)
    check("and stores nothing", step(out2, "fail=1") == 3 and runs() == before + 2)

    marker = os.path.join(work, "passthrough")
    rc = subprocess.run([sys.executable, LAUNCHER, "--dir", cache, "--", "touch", marker], env=env).returncode
    check("other commands run unchanged", rc == 0 and os.path.exists(marker))
    rc = subprocess.run([sys.executable, LAUNCHER, "--dir", "", "--toolchain", "tc1", "--", gen, "-n", "k", "-o",
                         out2, "target=x86-64-linux-avx2", "rank=2"], env=env).returncode
    check("an empty --dir runs the generator uncached", rc == 0)
    stats = subprocess.run([sys.executable, LAUNCHER, "--dir", cache, "--prune", "--max-mib", "0"],
                           capture_output=True, text=True, env=env)
    check("--prune to 0 MiB empties it", stats.returncode == 0 and ": 0 kernels" in stats.stdout)


if __name__ == "__main__":
    sys.exit(main())
