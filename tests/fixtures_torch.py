"""Session fixtures holding traces written by a real torch.profiler (APIs: the docstrings of
tests/torch_traces.py and tests/torch_processes.py).

Capture runs once per session in child processes (torch_traces ~10 s, torch_processes ~40 s on 2
cores: one process per capture); tests must not write into their logdirs.
"""

from __future__ import annotations

import pytest
import torch_processes as torch_processes_module
import torch_traces as torch_traces_module


@pytest.fixture(scope="session")
def torch_traces(tmp_path_factory: pytest.TempPathFactory) -> torch_traces_module.TorchTraces:
    """slow_loader, fast_loader, bf16 and no_step runs under one temp logdir."""
    return torch_traces_module.load_or_generate(tmp_path_factory.mktemp("torch_traces"))


@pytest.fixture(scope="session")
def torch_processes(tmp_path_factory: pytest.TempPathFactory) -> torch_processes_module.ProcessCaptures:
    """A series captured one process at a time and the ranks of two data-parallel jobs, in one logdir."""
    return torch_processes_module.processes(tmp_path_factory.mktemp("torch_processes"))
