#!/usr/bin/env python3
"""Writes the benchmark suite `deconv bench` runs in scripts/main.sh: the repository's
bench/layers.json, plus the layers of a second suite (../shared/bench/layers.json, where new
reference layers arrive) whose names the first lacks. A layer present in both keeps the
repository's entry (tests/data/sync_test.cpp fails where the two differ).

    scripts/merge_suite.py REPO.json EXTRA.json OUT.json

Prints one line saying which layers were added. Exit 1, with an `error:` line, when a file cannot
be read or has no "layers" array.
"""

import json
import sys


def layers(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"error: {path}: {e}")
    if not isinstance(doc, dict) or not isinstance(doc.get("layers"), list):
        sys.exit(f"error: {path}: no \"layers\" array")
    return doc, doc["layers"]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: merge_suite.py REPO.json EXTRA.json OUT.json")
    repo_path, extra_path, out_path = sys.argv[1:]
    doc, merged = layers(repo_path)
    have = {l.get("name") for l in merged}
    _, extra = layers(extra_path)
    added = [l for l in extra if l.get("name") not in have]
    doc["layers"] = merged + added
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    names = ", ".join(l.get("name", "?") for l in added) or "none"
    print(f"suite: {len(merged)} layers of {repo_path}; added from {extra_path}: {names}")


if __name__ == "__main__":
    main()
