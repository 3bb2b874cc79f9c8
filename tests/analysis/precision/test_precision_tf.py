"""Precision of real TensorFlow CPU profiles: Keras with mixed_bfloat16 vs float32, written here.

On CPU the only dtype evidence is `MemoryAllocation` events, which TensorFlow records when its host
allocator is BFC (TF_CPU_ALLOCATOR_USE_BFC=true); the default-allocator profile (the shared Keras
fixture) must say so instead of guessing. TensorFlow runs in a child process: pytest never imports it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tb_plugin_advisor.analysis.precision.device import analyze_precision
from tb_plugin_advisor.readers.xplane.reader import read_xplane

pytestmark = pytest.mark.needs_tensorflow  # runs TensorFlow itself (in a child process)

CHILD = r"""
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

out = sys.argv[1]
x = np.random.default_rng(0).random((192, 32, 32, 3), dtype=np.float32)
y = np.random.default_rng(1).integers(0, 10, 192)
for policy in ("mixed_bfloat16", "float32"):
    keras.mixed_precision.set_global_policy(policy)
    model = keras.Sequential([
        keras.Input((32, 32, 3)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)  # trace and warm up outside the profile
    tf.profiler.experimental.start(os.path.join(out, policy))
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    tf.profiler.experimental.stop()
"""


@pytest.fixture(scope="module")
def cpu_runs(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("precision_tf")
    env = dict(os.environ, TF_CPU_ALLOCATOR_USE_BFC="true", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-c", CHILD, str(out)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = {}
    for policy in ("mixed_bfloat16", "float32"):
        (path,) = sorted(Path(out, policy).rglob("*.xplane.pb"))
        runs[policy] = analyze_precision(read_xplane(str(path)))
    return runs


def test_mixed_bfloat16_on_cpu_is_seen_as_bf16_dominant(cpu_runs):
    result = cpu_runs["mixed_bfloat16"]
    assert result.basis == "host"
    assert result.verdict == "active", result.summary
    assert result.matrix_low_precision_pct >= 80.0
    assert result.precision_pct["bf16"] > 10.0
    assert result.summary.startswith("bf16/fp16 dominant on the host")
    assert any("typed MemoryAllocation events" in e for e in result.evidence)


def test_float32_on_cpu_has_no_bf16(cpu_runs):
    result = cpu_runs["float32"]
    assert result.basis == "host"
    assert result.verdict == "not_active", result.summary
    assert result.precision_pct["bf16"] == 0.0
    assert result.precision_pct["fp32"] > 50.0
    names = [name for name, _ in result.top_fp32_ops]  # familiar names, also with oneDNN on
    assert any(name.endswith((":Conv2D", ":Conv2DBackpropFilter", ":Conv2DBackpropInput", ":MatMul",
                              ":_FusedMatMul", ":_FusedConv2D")) for name in names), names


def test_default_allocator_profile_says_dtypes_are_missing(tf_profiles):
    """Without the BFC variable only oneDNN's mklcpu allocator records dtypes (DESIGN §5): with oneDNN
    off the answer must be "unknown", with it on the float32 Keras run must read as fp32 — through the
    `_Mkl…` op names, shown as the familiar ops."""
    result = analyze_precision(read_xplane(str(tf_profiles.xplane("keras_fit"))))
    typed = tf_profiles.facts["keras_fit"]["memory_allocation_data_types"]
    if not tf_profiles.onednn:
        assert not typed, typed
        assert result.verdict == "unknown"
        assert any("TF_CPU_ALLOCATOR_USE_BFC=true" in e for e in result.evidence)
        return
    assert typed, "oneDNN on but no typed MemoryAllocation events"
    assert result.verdict == "not_active", result.summary
    # How much op time the allocator's events type varies with the CPU (49.8 % fp32 on a Xeon with
    # AMX, over 50 % on an EPYC); what is typed must be float32.
    shares = result.precision_pct
    known = 100.0 - shares["unknown"]
    assert known > 25.0, shares
    assert shares["fp32"] >= 0.95 * known, shares
    assert result.matrix_low_precision_pct == 0.0
    assert result.onednn_ops, "oneDNN ops not recognised"
    assert all(not name.rsplit(":", 1)[1].startswith("_Mkl") for name, _ in result.top_fp32_ops)
