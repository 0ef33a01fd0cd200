#!/usr/bin/env python3
"""Checks that runtime/'s rooms include only from rooms below them.

The rooms, lowest first (runtime/CMakeLists.txt, docs/architecture.md): a file may include headers
of its own room and of lower rooms, and the shared facts (facts/), never a higher room's or a
sibling's. Prints each upward include and exits 1 if there is any.

    tools/check_rooms.py [REPO_ROOT]
"""
import os
import re
import sys

# Rank of each room: a file includes only from rooms of a lower rank, or its own room.
ROOMS = {
    "layer": 0,     # shape inference, geometry, phase decomposition, names and messages
    "kernels": 1,   # the kernel registry, Halide's calls and runtime hooks, copies, threads
    "plan": 2,      # a plan's state (Plan::Impl) and its policy
    "cpu": 3,       # the CPU executors
    "gpu": 3,       # the GPU executors (CUDA and the backend interface)
    "dispatch": 4,  # what runs: the implementation list, its rules and thresholds
    "tuning": 5,    # the schedule database and the tuner
    "api": 6,       # the public API's definitions
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    runtime = os.path.join(root, "runtime")
    problems, files = [], 0
    for room in sorted(os.listdir(runtime)):
        path = os.path.join(runtime, room)
        if not os.path.isdir(path):
            continue
        if room not in ROOMS:
            problems.append(f"runtime/{room}/: a room this script does not rank (add it to ROOMS)")
            continue
        for name in sorted(os.listdir(path)):
            files += 1
            with open(os.path.join(path, name), encoding="utf-8") as f:
                text = f.read()
            for target in INCLUDE.findall(text):
                head = target.split("/")[0]
                if "/" not in target or head in ("facts", "deconv"):
                    continue  # own room, generated headers, the shared facts, the public API
                if head not in ROOMS:
                    problems.append(f"runtime/{room}/{name}: includes \"{target}\", outside every room")
                elif head != room and ROOMS[head] >= ROOMS[room]:
                    problems.append(f"runtime/{room}/{name}: includes \"{target}\" from room '{head}', "
                                    f"not below '{room}'")
    for p in problems:
        print(p)
    if files == 0:
        print(f"no files found under {runtime}")
        return 1
    print(f"{files} files in {len(ROOMS)} rooms: {len(problems)} upward includes")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
