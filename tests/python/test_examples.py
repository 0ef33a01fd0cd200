"""examples/python/run_models.py: each real model (DCGAN, U-Net, HiFi-GAN, 3D U-Net) at its
--small sizes, in its own process, must match torch with deconv's kernels running (no fallback),
and a deliberately wrong deconv weight must make the runner fail."""

import os
import subprocess
import sys

import pytest

import deconv

SOURCE_DIR = os.environ.get("DECONV_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(SOURCE_DIR, "examples", "python")
SCRIPT = os.path.join(EXAMPLES, "run_models.py")

sys.path.insert(0, EXAMPLES)
import models  # noqa: E402

# Correctness only: one timed forward per side, no extra warm-up (the timings are not checked).
QUICK = ["--small", "--repeats", "1", "--warmup", "0"]


def run(*args):
    """run_models.py in a new interpreter with this one's environment (PYTHONPATH as given)."""
    return subprocess.run([sys.executable, SCRIPT, *args], env=dict(os.environ), capture_output=True,
                          text=True, timeout=300)


def needs(rank):
    if not deconv.has_kernel("GroupConvolutionBackpropData", rank, "f32"):
        pytest.skip(f"this build has no {rank}D f32 kernels")


@pytest.mark.parametrize("name", list(models.MODELS))
def test_model_matches_torch(name):
    needs(models.MODELS[name].rank)
    proc = run("--model", name, *QUICK)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{name}: match: relative error" in proc.stdout, proc.stdout
    assert "FAIL" not in proc.stdout and "fell back" not in proc.stdout, proc.stdout
    assert "all 1 models match" in proc.stdout, proc.stdout


def test_a_wrong_weight_fails():
    needs(2)
    proc = run("--model", "dcgan", "--perturb", "1e-3", *QUICK)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dcgan: MISMATCH" in proc.stdout and "exceeds" in proc.stdout, proc.stdout
