"""Session fixture holding traces written by a real torch.profiler (API: tests/torch_traces.py docstring).

Capture runs once per session in a child process (~10 s on 2 cores); tests must not write into
`torch_traces.logdir`.
"""

from __future__ import annotations

import pytest
import torch_traces as torch_traces_module


@pytest.fixture(scope="session")
def torch_traces(tmp_path_factory: pytest.TempPathFactory) -> torch_traces_module.TorchTraces:
    """slow_loader, fast_loader, bf16 and no_step runs under one temp logdir."""
    return torch_traces_module.load_or_generate(tmp_path_factory.mktemp("torch_traces"))
