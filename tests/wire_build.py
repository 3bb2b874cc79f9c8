"""Whether the optional C walker (tb_plugin_advisor/readers/_wire.c) must be there in this test run."""

from __future__ import annotations

import shutil
import sysconfig

import pytest

from tb_plugin_advisor.readers.xplane import event_columns


def compiler_present() -> bool:
    command = (sysconfig.get_config_var("CC") or "cc").split()
    return bool(command) and shutil.which(command[0]) is not None


def require_compiled_walker() -> None:
    """Fail when a compiler was there but `pip install` did not build the walker; skip without one."""
    if event_columns._wire is not None:
        return
    if compiler_present():
        pytest.fail("the C walker (readers/_wire.c) was not built although a C compiler is present: "
                    "reinstall with `pip install -e .` and read the build warning")
    pytest.skip("no C compiler here: the package runs on the numpy decoder alone")
