"""Session fixtures holding profiles written by real TensorFlow (API: tests/tf_profiles.py docstring).

Generation runs once per session in a child process (~10-30 s on 2 cores); every test that needs a
real profile shares it, so tests must not write into `tf_profiles.logdir` (use `.copy_to(tmp_path)`).
"""

from __future__ import annotations

import pytest
import tf_profiles as tf_profiles_module


@pytest.fixture(scope="session")
def tf_profiles(tmp_path_factory: pytest.TempPathFactory) -> tf_profiles_module.TFProfiles:
    """keras_fit, loop_input_bound and loop_fixed runs under one temp logdir."""
    return tf_profiles_module.load_or_generate(tmp_path_factory.mktemp("tf_profiles"))
