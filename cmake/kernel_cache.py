#!/usr/bin/env python3
"""The content-addressed kernel cache: the launcher of the build's custom commands.

cmake/DeconvKernelCache.cmake puts this script in front of every custom command (CMake's
RULE_LAUNCH_CUSTOM). Commands that are not Halide generator runs (no `-o DIR` and `target=...`
arguments) are executed unchanged. A generator run is keyed by

  * the generator executable's bytes (its sources and the compiler that built it),
  * every argument but the output folder: kernel name, generator, targets, parameters,
  * the Halide and LLVM it runs on (versions, and the libraries' sizes and times),
  * the HL_* environment variables, which change what Halide emits;

a key found in the cache copies its files into the output folder; otherwise the generator runs
into a scratch folder, and its files are stored under the key, then copied. An entry is a folder
whose manifest lists every file with its size and SHA-256, written last and renamed into place
in one step: an entry whose files do not match its manifest (a disk error, an edit, a crash
mid-copy) is deleted and rebuilt, never used.

  kernel_cache.py --dir CACHE --toolchain ID [--max-mib N] -- COMMAND [ARGS...]
  kernel_cache.py --dir CACHE --stats | --prune [--max-mib N] | --clear

Environment: DECONV_KERNEL_CACHE_LOG=path appends one line per generator run ("hit", "miss" or
"corrupt", then the kernel name): how the build's tests check that a warm cache generates nothing.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FORMAT = "deconv-kernel-cache 1"
MANIFEST = "manifest.json"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def generator_call(argv):
    """(index of the output folder argument, kernel name) for a generator run, else None."""
    if not any(a.startswith("target=") for a in argv[1:]):
        return None
    out = None
    name = None
    for i, a in enumerate(argv[1:-1], start=1):
        if a == "-o":
            out = i + 1
        elif a in ("-n", "-f", "-r") and name is None:
            name = argv[i + 1]
    if out is None:
        return None
    return out, name or "?"


def cache_key(argv, out_index, toolchain):
    h = hashlib.sha256()
    h.update(FORMAT.encode())
    h.update(b"\0toolchain\0" + toolchain.encode())
    exe = shutil.which(argv[0]) or argv[0]
    h.update(b"\0exe\0" + sha256_file(exe).encode())
    for i, a in enumerate(argv[1:], start=1):
        h.update(b"\0arg\0" + (b"<out>" if i == out_index else a.encode()))
    for k in sorted(os.environ):
        if k.startswith("HL_"):
            h.update(b"\0env\0" + k.encode() + b"=" + os.environ[k].encode())
    return h.hexdigest()


def log(event, name):
    path = os.environ.get("DECONV_KERNEL_CACHE_LOG")
    if path:
        with open(path, "a") as f:
            f.write("%s %s\n" % (event, name))


def entry_files(entry):
    """The manifest's files if every one matches its size and hash, else None."""
    try:
        with open(os.path.join(entry, MANIFEST)) as f:
            manifest = json.load(f)
        if manifest.get("format") != FORMAT or not manifest.get("files"):
            return None
        for name, meta in manifest["files"].items():
            p = os.path.join(entry, name)
            if os.path.getsize(p) != meta["size"] or sha256_file(p) != meta["sha256"]:
                return None
        return sorted(manifest["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def copy_out(entry, files, out_dir):
    # Fresh files (copyfile, not copy2): their times are now, so the build sees them as newer than
    # the generator and does not run the step again.
    os.makedirs(out_dir, exist_ok=True)
    for name in files:
        dst = os.path.join(out_dir, name)
        tmp = dst + ".cache-tmp-%d" % os.getpid()
        shutil.copyfile(os.path.join(entry, name), tmp)
        os.replace(tmp, dst)


def store(cache, key, scratch, argv):
    files = {}
    for name in sorted(os.listdir(scratch)):
        p = os.path.join(scratch, name)
        if os.path.isfile(p):
            files[name] = {"size": os.path.getsize(p), "sha256": sha256_file(p)}
    with open(os.path.join(scratch, MANIFEST), "w") as f:
        json.dump({"format": FORMAT, "command": argv, "files": files, "stored": time.time()}, f, indent=1)
    entry = os.path.join(cache, key[:2], key)
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    try:
        os.rename(scratch, entry)  # atomic; fails if a parallel build stored the key first
        return entry, sorted(files)
    except OSError:
        return None, sorted(files)


def entries(cache):
    for d in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
        sub = os.path.join(cache, d)
        if len(d) != 2 or not os.path.isdir(sub):
            continue
        for key in os.listdir(sub):
            entry = os.path.join(sub, key)
            size = 0
            for root, _, names in os.walk(entry):
                size += sum(os.path.getsize(os.path.join(root, n)) for n in names)
            try:
                used = os.path.getmtime(os.path.join(entry, MANIFEST))
            except OSError:
                used = 0
            yield entry, size, used


def prune(cache, max_mib):
    """Deletes the least recently used entries until the cache holds at most max_mib."""
    all_entries = sorted(entries(cache), key=lambda e: e[2])
    total = sum(e[1] for e in all_entries)
    limit = max_mib << 20
    for entry, size, _ in all_entries:
        if total <= limit:
            break
        shutil.rmtree(entry, ignore_errors=True)
        total -= size
    return total


def run_cached(args, argv):
    call = generator_call(argv)
    if call is None or not args.dir:
        os.execvp(argv[0], argv)
    out_index, name = call
    out_dir = os.path.abspath(argv[out_index])
    cache = os.path.abspath(args.dir)
    key = cache_key(argv, out_index, args.toolchain)
    entry = os.path.join(cache, key[:2], key)
    if os.path.isdir(entry):
        files = entry_files(entry)
        if files is not None:
            copy_out(entry, files, out_dir)
            os.utime(os.path.join(entry, MANIFEST))  # recently used: pruned last
            log("hit", name)
            return 0
        shutil.rmtree(entry, ignore_errors=True)
        log("corrupt", name)
    os.makedirs(os.path.join(cache, "tmp"), exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=key[:16] + ".", dir=os.path.join(cache, "tmp"))
    try:
        run = list(argv)
        run[out_index] = scratch
        rc = subprocess.call(run)
        if rc != 0:
            return rc
        stored, files = store(cache, key, scratch, argv)
        copy_out(stored or scratch, files, out_dir)
        log("miss", name)
        if stored and int(key[:2], 16) < 8:  # about one store in 32 checks the cache's size
            prune(cache, args.max_mib)
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    if "--" in sys.argv:
        split = sys.argv.index("--")
        own, argv = sys.argv[1:split], sys.argv[split + 1:]
    else:
        own, argv = sys.argv[1:], []
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default="", help="the cache folder ('' runs every command uncached)")
    p.add_argument("--toolchain", default="", help="Halide and LLVM identity, part of every key")
    p.add_argument("--max-mib", type=int, default=4096, help="size the cache is pruned to")
    p.add_argument("--stats", action="store_true", help="print the entries and size")
    p.add_argument("--prune", action="store_true", help="prune to --max-mib now")
    p.add_argument("--clear", action="store_true", help="delete every entry")
    args = p.parse_args(own)
    if args.stats or args.prune or args.clear:
        if not args.dir:
            p.error("--stats, --prune and --clear need --dir")
        if args.clear:
            shutil.rmtree(args.dir, ignore_errors=True)
        if args.prune:
            prune(args.dir, args.max_mib)
        found = list(entries(args.dir))
        print("%s: %d kernels, %.1f MiB" % (args.dir, len(found), sum(e[1] for e in found) / 2**20))
        return 0
    if not argv:
        p.error("no command after --")
    return run_cached(args, argv)


if __name__ == "__main__":
    sys.exit(main())
